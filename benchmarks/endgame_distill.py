"""Fit a network to the exact values of the last round, offline, and keep the rest of its play (a probe).

    python benchmarks/endgame_distill.py zoo:standard-2p runs/endgame_distill \\
        --games 150000 --mid-share 0.125 --retain 1.0 --lr 3e-4 --epochs 6 --seed 11

``--games`` hands of the standard 2-player game are played by ``heuristic`` on the compiled core. Every
position the compiled search solves exactly (the last round: at most ``exact_cards`` = 6 cards left,
where the other hand is known by counting) with a choice is labelled with the exact value of every
legal move; a ``--mid-share`` of the other positions with a choice is kept with the starting network's
own scores of their moves. The network, from its starting weights, then fits for each exact position
every move's gap to the exact best (``Q(s, best) - Q(s, a)`` on ``V(best) - V(a)``, the DMC learner's
difference loss) and, with weight ``--retain``, its starting scores on the kept positions (so that
what it learns of the last round does not unlearn the rest of the game). Every two epochs the network
is written as a DMC checkpoint ``OUT/epoch_<k>/`` (the start's ``meta.json``), to be measured with
``benchmarks/endgame_regret.py`` and ``scopa eval --fast``. A probe of issue 48's lever (docs/
training-experiments.md, "The standard game, with exact labels of the last round"), not a recipe.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

CHUNK = 20_000
"""Hands searched at once (the search's work space grows with the rows)."""


def collect(games: int, seed: int, mid_share: float) -> dict[str, np.ndarray]:
    """Positions of ``games`` heuristic-played hands: observations, move features, the exact values of
    every move (NaN for a kept position the search does not solve) and each move's position."""
    from agents.compiled import side_moves
    from agents.registry import make_agent
    from scopa_env.fast import BatchedScopa
    from scopa_env.fast.features import heuristic_move_scores
    from scopa_env.fast.search import exact_games, search_values
    from train.dmc.agent import flatten_legal, move_features

    C = make_agent("fsearch").C
    parts: list[tuple] = []
    positions = 0
    for start in range(0, games, CHUNK):
        n = min(CHUNK, games - start)
        batch = BatchedScopa(n, 2, "standard", action_mode="move", episode="hand")
        batch.reset(np.arange(n, dtype=np.int64) + seed * 1_000_003 + start)
        features = move_features(batch.rules, 2, True)
        rng = np.random.default_rng([seed, start])
        open_ = np.ones(n, bool)
        while open_.any():
            exact = exact_games(batch, C)
            here = open_ & (batch.legal_count > 1) & (exact | (rng.random(n) < mid_share))
            if here.any():
                g = np.flatnonzero(here)
                values = np.full((g.size, batch.legal_ids.shape[1]), np.nan)
                e = exact[g]
                if e.any():
                    values[e] = search_values(batch, g[e], rng.integers(0, 2**62, int(e.sum())), C)
                obs = batch.obs[g].copy()
                rows, cols, ids = flatten_legal(batch.legal_ids[g], batch.legal_count[g])
                h = heuristic_move_scores(batch)[g][rows, cols]
                parts.append((obs, rows + positions, features(obs, rows, ids, h), values[rows, cols]))
                positions += g.size
            batch.step(side_moves(batch, "heuristic", open_, rng, threads=1))
            open_ &= ~batch.hand_ended
    obs, rows, feats, values = (np.concatenate([p[i] for p in parts]) for i in range(4))
    return {"obs": obs, "rows": rows, "feats": feats, "values": values.astype(np.float32)}


def fit(start: str, data: dict, out: Path, retain: float, lr: float, epochs: int, seed: int) -> list[dict]:
    """Fit the start network's weights (see the module's doc); a checkpoint every two epochs."""
    import torch

    from train.dmc.actors import build_network, numpy_weights
    from train.dmc.agent import find_dmc_checkpoint, load_dmc_weights

    folder = find_dmc_checkpoint(start)
    weights, meta = load_dmc_weights(start)
    torch.manual_seed(seed)
    obs, rows = torch.from_numpy(data["obs"]), torch.from_numpy(data["rows"])
    feats, values = torch.from_numpy(data["feats"]), torch.from_numpy(data["values"])
    n = len(obs)
    net = build_network(obs.shape[1], feats.shape[1], list(meta["trunk"]), list(meta["net_arch"]))
    net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    with torch.no_grad():  # the start's scores of every move (the retained positions' targets)
        q0 = torch.cat(
            [
                net(obs[rows[k : k + CHUNK]], torch.arange(len(rows[k : k + CHUNK])), feats[k : k + CHUNK])
                for k in range(0, len(rows), CHUNK)
            ]
        )
    exact = ~torch.isnan(values)
    level = torch.where(exact, values, torch.full_like(values, -1e9))
    best = torch.full((n,), -1e9).scatter_reduce(0, rows, level, "amax")
    gap = torch.where(exact, best[rows] - values, torch.zeros_like(values))
    starts = np.searchsorted(data["rows"], np.arange(n))
    ends = np.searchsorted(data["rows"], np.arange(n), side="right")
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    log = []
    for epoch in range(1, epochs + 1):
        losses = []
        perm = rng.permutation(n)
        for k in range(0, n, 512):
            pos = np.sort(perm[k : k + 512])
            lens = ends[pos] - starts[pos]
            idx = torch.from_numpy(
                np.repeat(starts[pos] - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(lens.sum())
            )
            local = torch.from_numpy(np.repeat(np.arange(len(pos)), lens))
            q = net(obs[pos], local, feats[idx])
            e, g = exact[idx], gap[idx]
            is_best = e & (g <= 1e-9)
            ones = torch.zeros(len(pos)).index_add(0, local[is_best], torch.ones(int(is_best.sum())))
            q_best = torch.zeros(len(pos)).index_add(0, local[is_best], q[is_best]) / ones.clamp(min=1)
            other = e & ~is_best
            loss = ((q_best[local] - q - g) ** 2)[other].mean() if other.any() else q.sum() * 0
            if retain > 0 and (~e).any():
                loss = loss + retain * ((q - q0[idx]) ** 2)[~e].mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        log.append({"epoch": epoch, "loss": float(np.mean(losses))})
        print(f"epoch {epoch}: loss {log[-1]['loss']:.3f}", flush=True)
        if epoch % 2 == 0 or epoch == epochs:
            target = out / f"epoch_{epoch}"
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(folder / "meta.json", target / "meta.json")
            np.savez(target / "weights.npz", **numpy_weights(net))
    return log


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("start", help="the DMC network to start from (dmc:PATH or zoo:NAME of the standard 2-player game)")
    p.add_argument("out", type=Path, help="a folder for the checkpoints")
    p.add_argument("--games", type=int, default=150_000, help="hands played for the data (default 150,000)")
    p.add_argument("--mid-share", type=float, default=0.125, help="share of the other positions kept (default 0.125)")
    p.add_argument("--retain", type=float, default=1.0, help="weight of the start's scores on kept positions")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument(
        "--seed", type=int, default=11, help="the hands' seed (the probe's is 7, the evaluations' 99 and 4242)"
    )
    args = p.parse_args(argv)
    if args.games < 1 or args.epochs < 1 or not 0 <= args.mid_share <= 1 or args.retain < 0 or args.lr <= 0:
        raise SystemExit("error: --games and --epochs must be positive, --mid-share in [0, 1], --retain >= 0, --lr > 0")
    prefix, _, name = args.start.partition(":")
    if prefix not in ("dmc", "zoo") or not name:
        raise SystemExit(f"error: start must be a dmc:PATH or zoo:NAME network, got {args.start!r}")
    if prefix == "zoo":
        from train.zoo import checked_path

        try:
            name = str(checked_path(name))
        except ValueError as exc:
            raise SystemExit(f"error: {exc}") from None
    from train.dmc.agent import load_dmc_weights

    try:
        _, meta = load_dmc_weights(name)
    except (ValueError, OSError) as exc:
        raise SystemExit(f"error: {args.start}: {exc}") from None
    if meta["rules"] != "standard" or int(meta["num_players"]) != 2 or not meta.get("heuristic_features"):
        raise SystemExit(f"error: {args.start} is not a standard 2-player network with the heuristic's features")
    print("the compiled core compiles on first use: the first minute can be slow", flush=True)
    t = time.time()
    data = collect(args.games, args.seed, args.mid_share)
    exact = int((~np.isnan(data["values"])).sum())
    print(f"{len(data['obs']):,} positions ({exact:,} exactly valued moves) in {time.time() - t:.0f} s", flush=True)
    log = fit(name, data, args.out, args.retain, args.lr, args.epochs, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    (args.out / "distill.json").write_text(json.dumps({"config": config, "epochs": log}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
