"""Fit an endgame network (:mod:`train.dmc.endgame`) to the exact values of the last round.

    python -m train.dmc.endgame_fit zoo:standard-2p runs/endgame_net --games 300000 --epochs 10

``--games`` hands of the standard 2-player game are played by ``heuristic`` on the compiled core
(seed ``--seed``), or by ``--driver``, another compiled baseline or a network (``dmc:PATH``,
``zoo:NAME``: the labels then fall on the positions that network reaches, DAgger's idea). At every last-round position with a choice (the stock empty: the other hand is
known by counting) the compiled search values every legal move exactly, minimax to the end of the
hand in hand points; exact labels cost little (a million moves in about a minute), so they are not
reused across runs. A fresh MLP (``--width`` units, ``--depth`` hidden layers) reads each move's
afterstate and one-ply replies and fits, per position, every move's value less the position's mean
(the ranking), plus ``--level`` times the values themselves. The start's trunk and head are kept as
they are: OUT is the start's checkpoint with the ``endgame.*`` arrays and ``meta.json``'s
``endgame`` entry added, playable as ``dmc:OUT``.

``--init SPEC`` starts the MLP from the endgame network of another checkpoint (``dmc:PATH`` or
``zoo:NAME``, for example ``zoo:standard-2p-v2``) instead of fresh weights, so a fit can go on over
sessions on fresh hands from a committed network; its layers set the width and depth, and the new
entry counts its moves and CPU-hours too.

After each epoch the fit prints its loss and the regret of its moves on ``--val-games`` hands of
another seed (``--seed + 1``); ``OUT/endgame_fit.json`` keeps them with the run's CPU time. The
probe of record is ``benchmarks/endgame_regret.py`` (its own seed, 7), and the play test ``scopa
eval --fast dmc:OUT fsearch --games 2000 --seed 4242`` (issue 48).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from train.dmc.endgame import ENDGAME_VERSION, PREFIX, endgame_features

CHUNK = 20_000
"""Hands played at once (the search's work space grows with the rows)."""


def collect(games: int, seed: int, progress: bool = True, driver="heuristic") -> dict[str, np.ndarray]:
    """The last-round positions with a choice of ``games`` hands played by ``driver`` (a compiled
    baseline's name or a network's batch policy, every seat): every legal move's endgame row, exact
    value and position index."""
    from tqdm import tqdm

    from agents.compiled import side_moves
    from agents.registry import make_agent
    from scopa_env.fast import BatchedScopa
    from scopa_env.fast.search import exact_games, search_values
    from train.dmc.agent import flatten_legal

    C = make_agent("fsearch").C
    parts: list[tuple] = []
    positions = 0
    bar = tqdm(total=games, desc="exact positions", unit="hand", disable=not progress)
    for start in range(0, games, CHUNK):
        n = min(CHUNK, games - start)
        batch = BatchedScopa(n, 2, "standard", action_mode="move", episode="hand")
        batch.reset(np.arange(n, dtype=np.int64) + seed * 1_000_003 + start)
        features = endgame_features(batch.rules, 2)
        rng = np.random.default_rng([seed, start])
        open_ = np.ones(n, bool)
        while open_.any():
            here = open_ & (batch.legal_count > 1) & exact_games(batch, C)
            if here.any():
                g = np.flatnonzero(here)
                values = search_values(batch, g, rng.integers(0, 2**62, g.size), C)
                rows, cols, ids = flatten_legal(batch.legal_ids[g], batch.legal_count[g])
                obs = batch.obs[g]
                if not features.last_round(obs, np.arange(g.size)).all():
                    raise RuntimeError("an exactly solved position with cards in the stock: exact_cards is too large")
                parts.append((features(obs, rows, ids), values[rows, cols].astype(np.float32), rows + positions))
                positions += g.size
            batch.step(side_moves(batch, driver, open_, rng, threads=1))
            open_ &= ~batch.hand_ended
        bar.update(n)
    bar.close()
    x, y, rows = (np.concatenate([p[i] for p in parts]) for i in range(3))
    return {"x": x, "y": y, "rows": rows}


def regret(q: np.ndarray, y: np.ndarray, rows: np.ndarray) -> tuple[float, float]:
    """Mean regret per position of the highest-scored move (ties: the first) and the share of exact bests."""
    n = int(rows.max()) + 1
    best = np.full(n, -np.inf)
    np.maximum.at(best, rows, y)
    order = np.lexsort((-q, rows))
    first = order[np.r_[True, rows[order][1:] != rows[order][:-1]]]
    loss = best[rows[first]] - y[first]
    return float(loss.mean()), float((loss <= 1e-9).mean())


def build(size: int, width: int, depth: int):
    import torch

    layers: list = []
    for _ in range(depth):
        layers += [torch.nn.Linear(size, width), torch.nn.ReLU()]
        size = width
    return torch.nn.Sequential(*layers, torch.nn.Linear(size, 1))


def fit(
    train: dict, val: dict, args, progress: bool = True, init: dict[str, np.ndarray] | None = None
) -> tuple[dict[str, np.ndarray], list[dict]]:
    """The fitted network's arrays (``endgame.{i}.weight/bias``) and the per-epoch log; ``init``: the
    ``endgame.*`` arrays to start from (fresh weights without)."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(args.seed)
    x, y, rows = torch.from_numpy(train["x"]), torch.from_numpy(train["y"]), train["rows"]
    n = int(rows[-1]) + 1
    starts = np.searchsorted(rows, np.arange(n))
    ends = np.searchsorted(rows, np.arange(n), side="right")
    net = build(x.shape[1], args.width, args.depth)
    if init is not None:
        linears = [m for m in net if isinstance(m, torch.nn.Linear)]
        with torch.no_grad():
            for i, layer in enumerate(linears):
                layer.weight.copy_(torch.from_numpy(init[f"{PREFIX}.{i}.weight"]))
                layer.bias.copy_(torch.from_numpy(init[f"{PREFIX}.{i}.bias"]))
    batch = min(args.batch, n)
    steps = args.epochs * (n // batch)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, args.lr, total_steps=steps)
    vx = torch.from_numpy(val["x"])
    rng = np.random.default_rng(args.seed)
    log = []
    for epoch in range(1, args.epochs + 1):
        perm = rng.permutation(n)
        losses = []
        for k in tqdm(range(0, n - batch + 1, batch), desc=f"epoch {epoch}", disable=not progress, leave=False):
            pos = perm[k : k + batch]
            lens = ends[pos] - starts[pos]
            idx = torch.from_numpy(
                np.repeat(starts[pos] - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(lens.sum())
            )
            local = torch.from_numpy(np.repeat(np.arange(len(pos)), lens))
            count = torch.from_numpy(lens.astype(np.float32))
            q, t = net(x[idx])[:, 0], y[idx]
            q_mean = torch.zeros(len(pos)).index_add(0, local, q) / count
            t_mean = torch.zeros(len(pos)).index_add(0, local, t) / count
            loss = ((q - q_mean[local] - (t - t_mean[local])) ** 2).mean() + args.level * ((q - t) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
        with torch.no_grad():
            vq = torch.cat([net(vx[k : k + 65536])[:, 0] for k in range(0, len(vx), 65536)]).numpy()
        r, share = regret(vq, val["y"], val["rows"])
        log.append({"epoch": epoch, "loss": float(np.mean(losses)), "val_regret": r, "val_best": share})
        print(
            f"epoch {epoch}: loss {log[-1]['loss']:.4f}, validation regret {r:.4f} ({share:.1%} exact best)", flush=True
        )
    arrays = {}
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    for i, layer in enumerate(linears):
        arrays[f"{PREFIX}.{i}.weight"] = layer.weight.detach().numpy().astype(np.float32)
        arrays[f"{PREFIX}.{i}.bias"] = layer.bias.detach().numpy().astype(np.float32)
    return arrays, log


def write(start: Path, out: Path, arrays: dict[str, np.ndarray], entry: dict) -> None:
    """The start's checkpoint with the endgame arrays and ``meta.json``'s ``endgame`` entry added."""
    from train.dmc.agent import META_FILE, WEIGHTS_FILE, load_dmc_weights

    weights, meta = load_dmc_weights(start)
    if PREFIX in meta:
        raise ValueError(f"{start} already has an endgame network")
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / WEIGHTS_FILE, **weights, **arrays)
    (out / META_FILE).write_text(json.dumps({**meta, PREFIX: entry}, indent=2) + "\n")
    card = start / "card.json"
    if card.is_file():  # the start's model card describes the start, not this network
        shutil.copy(card, out / "start_card.json")


def resolve(spec: str, role: str) -> tuple[Path, dict[str, np.ndarray], dict]:
    """The checkpoint folder, weights and meta of a ``dmc:PATH`` or ``zoo:NAME`` network of the standard
    2-player game.

    Raises:
        SystemExit: anything else, in one line naming ``role``.
    """
    from train.dmc.agent import find_dmc_checkpoint, load_dmc_weights

    prefix, _, name = spec.partition(":")
    if prefix not in ("dmc", "zoo") or not name:
        raise SystemExit(f"error: {role} must be a dmc:PATH or zoo:NAME network, got {spec!r}")
    try:
        if prefix == "zoo":
            from train.zoo import checked_path

            name = str(checked_path(name))
        path = find_dmc_checkpoint(name)
        weights, meta = load_dmc_weights(path)
    except (ValueError, OSError) as exc:
        raise SystemExit(f"error: {spec}: {exc}") from None
    if meta["rules"] != "standard" or int(meta["num_players"]) != 2:
        raise SystemExit(f"error: {spec} is not a network of the standard 2-player game")
    return path, weights, meta


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("start", help="the DMC network of the standard 2-player game to add it to (dmc:PATH or zoo:NAME)")
    p.add_argument("out", type=Path, help="the new checkpoint's folder")
    p.add_argument("--games", type=int, default=300_000, help="hands played for the labels (default 300,000)")
    p.add_argument("--val-games", type=int, default=4000, help="hands of the validation positions (default 4,000)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--init", help="start from this checkpoint's endgame network (dmc:PATH or zoo:NAME)")
    p.add_argument(
        "--driver",
        default="heuristic",
        help="who plays the labelled hands: random, greedy, heuristic (default) or a network (dmc:PATH, "
        "zoo:NAME), so that the labels fall on the positions that network reaches",
    )
    p.add_argument("--width", type=int, help="units per hidden layer (default 512, or --init's)")
    p.add_argument("--depth", type=int, help="hidden layers (default 3, or --init's)")
    p.add_argument("--lr", type=float, default=1e-3, help="the one-cycle schedule's peak")
    p.add_argument("--batch", type=int, default=512, help="positions per step")
    p.add_argument("--level", type=float, default=0.05, help="weight of the values themselves beside the ranking")
    p.add_argument("--seed", type=int, default=11, help="the hands' seed (the probe's is 7, the evaluations' 4242)")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    args = p.parse_args(argv)
    init_arrays, init_entry = None, None
    if args.init is not None:
        _, init_weights, init_meta = resolve(args.init, "--init")
        init_entry = init_meta.get(PREFIX)
        if init_entry is None:
            raise SystemExit(f"error: --init {args.init} has no endgame network")
        arch = init_entry["arch"]
        if (args.width not in (None, arch[0]) or args.depth not in (None, len(arch))) or len(set(arch)) != 1:
            raise SystemExit(
                f"error: --init {args.init}'s endgame network is {arch} wide; leave out --width and --depth"
            )
        init_arrays = {k: v for k, v in init_weights.items() if k.startswith(PREFIX + ".")}
        args.width, args.depth = arch[0], len(arch)
    args.width = 512 if args.width is None else args.width
    args.depth = 3 if args.depth is None else args.depth
    if min(args.games, args.val_games, args.epochs, args.width, args.depth, args.batch, args.threads) < 1:
        raise SystemExit(
            "error: --games, --val-games, --epochs, --width, --depth, --batch and --threads must be positive"
        )
    if args.lr <= 0 or args.level < 0:
        raise SystemExit("error: --lr must be positive and --level at least 0")
    if args.out.exists() and any(args.out.iterdir()):
        raise SystemExit(f"error: {args.out} exists and is not empty")
    start, _, meta = resolve(args.start, "start")
    driver = args.driver
    if driver.partition(":")[0] in ("dmc", "zoo"):
        from train.dmc.agent import load_dmc_batch_policy

        driver = load_dmc_batch_policy(resolve(driver, "--driver")[0])[0]
    else:
        from agents.compiled import COMPILED_BASELINES

        if driver not in COMPILED_BASELINES:
            choices = ", ".join(COMPILED_BASELINES)
            raise SystemExit(f"error: --driver must be {choices}, dmc:PATH or zoo:NAME, got {driver!r}")
    if PREFIX in meta:
        raise SystemExit(f"error: {args.start} already has an endgame network")
    import torch

    torch.set_num_threads(args.threads)
    print("the compiled core compiles on first use: the first minute can be slow", flush=True)
    t0, c0 = time.time(), time.process_time()
    train = collect(args.games, args.seed, driver=driver)
    val = collect(args.val_games, args.seed + 1, progress=False, driver=driver)
    positions = int(train["rows"][-1]) + 1
    print(f"{positions:,} positions, {len(train['y']):,} exactly valued moves in {time.time() - t0:.0f} s", flush=True)
    arrays, log = fit(train, val, args, init=init_arrays)
    fit_hours = (time.process_time() - c0) / 3600
    # a fit from --init costs that network's fit too
    cpu_hours = fit_hours + (float(init_entry["cpu_hours"]) if init_entry else 0.0)
    entry = {
        "version": ENDGAME_VERSION,
        "arch": [args.width] * args.depth,
        "games": args.games,
        "seed": args.seed,
        "moves": len(train["y"]) + (int(init_entry["moves"]) if init_entry else 0),
        "cpu_hours": round(cpu_hours, 4),
    }
    if init_entry:
        entry["init"] = {"spec": args.init, **{k: init_entry[k] for k in ("games", "seed", "moves", "cpu_hours")}}
    write(start, args.out, arrays, entry)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    report = {"config": config, "start": str(args.start), "epochs": log, "cpu_hours": cpu_hours}
    report["fit_cpu_hours"] = fit_hours
    (args.out / "endgame_fit.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out} ({cpu_hours:.2f} CPU-hours); play it as dmc:{args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
