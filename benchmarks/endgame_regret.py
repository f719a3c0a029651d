"""How well networks play the last cards: their regret against the exact solve, position by position.

    python benchmarks/endgame_regret.py zoo:standard-2p dmc:runs/dmc_standard_endgame/latest \\
        --games 4000 --seed 7 [--driver heuristic] [--json runs/endgame_regret.json]

``--games`` hands of the standard 2-player game are played by ``--driver`` (a compiled baseline, so
every agent is scored on the same positions) on the compiled core. At every position of those hands
that the compiled search solves exactly (at most ``exact_cards`` = 6 cards left to play: the last
round, where the other hand is known by counting) and where the mover has a choice, the search values
every legal move exactly (minimax to the end of the hand, in hand points), and each agent names the
move it would play there. An agent's regret at a position is the best move's value minus the value
of its move; the table gives the mean regret per position and per hand, the share of positions where
its move is an exact best, and a 95% interval on the mean by a bootstrap over the hands (the
positions of one hand are not independent). The probe of ``label_exact_only``
(``configs/dmc_standard_endgame.yaml``, docs/training.md "Exact labels of the last cards").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def regrets(specs: list[str], games: int, seed: int, driver: str, rules: str, players: int) -> dict:
    """Per agent: the regret of every exact position with a choice, and the hand each came from."""
    from agents.compiled import side_moves
    from agents.registry import make_agent
    from scopa_env.fast import BatchedScopa
    from scopa_env.fast.search import exact_games, search_values
    from train.fast_eval import GameMismatch, fast_side

    sides = {}
    for spec in specs:
        try:
            sides[spec] = fast_side(spec, seed, rules, players)[0]
        except GameMismatch as exc:
            raise SystemExit(f"error: {exc}") from None
        except (ValueError, OSError) as exc:
            raise SystemExit(f"error: {spec}: {exc}") from None
    C = make_agent("fsearch").C
    batch = BatchedScopa(games, players, rules, action_mode="move", episode="hand")
    batch.reset(np.arange(games, dtype=np.int64) + seed * 1_000_003)
    rng = np.random.default_rng(seed)
    open_ = np.ones(games, bool)  # hands not over yet (a finished game starts another: not scored)
    out = {spec: [] for spec in specs}
    hands: list[np.ndarray] = []
    left: list[np.ndarray] = []  # cards left in the two hands at each position
    planes = batch.setup.layout.slices
    while open_.any():
        here = open_ & exact_games(batch, C) & (batch.legal_count > 1)
        if here.any():
            g = np.flatnonzero(here)
            values = search_values(batch, g, rng.integers(0, 2**62, g.size), C)
            width = batch.legal_ids.shape[1]
            valid = np.arange(width)[None, :] < batch.legal_count[g][:, None]
            best = np.where(valid, values, -np.inf).max(axis=1)
            hands.append(g)
            obs = batch.obs[g]  # in the last round the unseen cards are the other hand
            left.append((obs[:, planes["hand"]].sum(axis=1) + obs[:, planes["unseen"]].sum(axis=1)).round().astype(int))
            for spec, side in sides.items():
                ids = side_moves(batch, side, here, rng, threads=1)[g]
                col = np.argmax(batch.legal_ids[g] == ids[:, None], axis=1)
                out[spec].append(best - values[np.arange(g.size), col])
        batch.step(side_moves(batch, driver, open_, rng, threads=1))
        open_ &= ~batch.hand_ended
    hand_of = np.concatenate(hands) if hands else np.zeros(0, np.int64)
    left_of = np.concatenate(left) if left else np.zeros(0, np.int64)
    return {
        "hand": hand_of,
        "left": left_of,
        **{spec: np.concatenate(r) if r else np.zeros(0) for spec, r in out.items()},
    }


def by_cards_left(regret: np.ndarray, left: np.ndarray) -> dict:
    """Positions, mean regret and the share of exact-best moves by the cards left in the two hands."""
    out = {}
    for n in sorted(set(left.tolist())):
        r = regret[left == n]
        out[str(n)] = {"positions": int(r.size), "regret": float(r.mean()), "best_share": float((r <= 1e-9).mean())}
    return out


def summary(regret: np.ndarray, hand: np.ndarray, games: int, boot: int, seed: int) -> dict:
    """Mean regret per position and per hand, the share of exact-best moves, and a bootstrap CI over hands."""
    per_hand = np.bincount(hand, weights=regret, minlength=games)
    count = np.bincount(hand, minlength=games)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, games, (boot, games))
    means = per_hand[draws].sum(axis=1) / np.maximum(count[draws].sum(axis=1), 1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {
        "positions": int(regret.size),
        "regret": float(regret.mean()),
        "regret_lo": float(lo),
        "regret_hi": float(hi),
        "regret_per_hand": float(per_hand.mean()),
        "best_share": float((regret <= 1e-9).mean()),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("agents", nargs="+", help="dmc:, zoo: or netsearch: networks, compiled baselines, fsearch specs")
    p.add_argument("--games", type=int, default=4000, help="hands played by the driver (default 4000)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--driver", default="heuristic", help="the compiled baseline that plays the hands")
    p.add_argument("--boot", type=int, default=1000, help="bootstrap draws over the hands")
    p.add_argument("--json", type=Path, help="write the table here")
    args = p.parse_args(argv)
    if args.games < 1 or args.boot < 1:
        raise SystemExit("error: --games and --boot must be positive")
    from agents.compiled import COMPILED_BASELINES

    if args.driver not in COMPILED_BASELINES:
        raise SystemExit(f"error: --driver must be one of {', '.join(COMPILED_BASELINES)}, got {args.driver!r}")
    print("the compiled core compiles on first use: the first minute can be slow", flush=True)
    data = regrets(args.agents, args.games, args.seed, args.driver, "standard", 2)
    rows = [
        {
            "agent": s,
            **summary(data[s], data["hand"], args.games, args.boot, args.seed),
            "by_cards_left": by_cards_left(data[s], data["left"]),
        }
        for s in args.agents
    ]
    print(f"{'agent':50} {'positions':>9} {'regret/position [95% CI]':>30} {'per hand':>9} {'best':>6}")
    for r in rows:
        ci = f"{r['regret']:.4f} [{r['regret_lo']:.4f}, {r['regret_hi']:.4f}]"
        print(f"{r['agent']:50} {r['positions']:>9} {ci:>30} {r['regret_per_hand']:>9.4f} {r['best_share']:>6.1%}")
    lefts = sorted({n for r in rows for n in r["by_cards_left"]}, key=int)
    print("regret per position by the cards left in the two hands:")
    print(f"{'agent':50} " + " ".join(f"{n + ' left':>9}" for n in lefts))
    for r in rows:
        cells = [r["by_cards_left"].get(n, {}).get("regret") for n in lefts]
        print(f"{r['agent']:50} " + " ".join(f"{c:>9.4f}" if c is not None else f"{'':>9}" for c in cells))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        config = {"games": args.games, "seed": args.seed, "driver": args.driver, "rules": "standard", "players": 2}
        args.json.write_text(json.dumps({"config": config, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
