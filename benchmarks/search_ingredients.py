"""What each ingredient of the compiled search adds: one table, every variant on the same deals.

Each variant is an ``fsearch`` spec (:mod:`agents.fast_search`) played against the same
opponent on the same duplicate deals (one master seed: deal ``i`` shuffles the same way for
every variant), whole games to 11, standard 2-player rules unless ``--rules``/``--players``
say otherwise. For each variant it prints the hand-point margin per hand with its 95% CI
clustered by deal, the game win rate, and the CPU milliseconds per decision (mean and p99)
over positions of heuristic self-play (only decisions with more than one legal move).

Run (the docs/agents.md table)::

    python benchmarks/search_ingredients.py --opponent greedy --deals 500 --workers 2 --json runs/ingredients_greedy.json

``--variants`` replaces the default list (``NAME=SPEC`` or just ``SPEC``); ``--table A.json B.json``
prints one table from earlier outputs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from agents.matches import Match, run_deals
from agents.registry import make_agent
from agents.report import write_json
from agents.stats import summarize
from scopa_env.engine.game import Game
from scopa_env.engine.rules import get_rules

VARIANTS = {
    "16 worlds, greedy rollouts": "fsearch:worlds=16,exact_cards=0",
    "64 worlds": "fsearch:worlds=64,exact_cards=0",
    "256 worlds": "fsearch:worlds=256,exact_cards=0",
    "64 worlds + exact last round (6 cards)": "fsearch:worlds=64,exact_cards=6",
    "64 worlds + exact from 12 cards": "fsearch:worlds=64,exact_cards=12",
    "64 worlds + heuristic rollouts": "fsearch:worlds=64,exact_cards=0,rollout=heuristic",
    "64 worlds + 1 ply alpha-beta": "fsearch:worlds=64,exact_cards=0,ab_depth=1",
    "64 worlds + inference": "fsearch:worlds=64,exact_cards=0,inference=true",
}
"""Ingredients one at a time over the 64-world base, and the world count alone."""


def time_moves(spec: str, num_players: int, rules, num_positions: int, seed: int = 0) -> dict:
    """CPU milliseconds per decision of ``spec`` over positions of heuristic self-play."""
    agent = make_agent(spec, seed=seed)
    pilot = make_agent("heuristic", seed=seed)
    warm = Game(num_players, rules, seed=10**6, auto_next_hand=False)
    agent.act(warm.view())  # the compile or cache load is not a decision
    times: list[float] = []
    game_seed = seed
    while len(times) < num_positions:
        game = Game(num_players, rules, seed=game_seed, auto_next_hand=False)
        game_seed += 1
        while not game.hand_over and len(times) < num_positions:
            view = game.view()
            if len(view.legal_pairs()) > 1:
                start = time.process_time()
                agent.act(view)
                times.append(1000 * (time.process_time() - start))
            game.play(pilot.act(view))
    times.sort()
    return {
        "positions": len(times),
        "cpu_mean_ms": statistics.fmean(times),
        "cpu_p99_ms": times[min(len(times) - 1, int(0.99 * len(times)))],
    }


def markdown_table(rows: list[dict]) -> str:
    lines = [
        "| variant | spec | opponent | deals | margin / hand [95% CI] | win rate [95% CI] | ms / move (p99) |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        rep, t = row["report"], row["timing"]
        a = rep["agents"][0]
        m, w = a["margin_per_hand"], a["win_rate"]
        lines.append(
            f"| {row['name']} | `{row['spec']}` | {rep['config']['agents'][1]} | {rep['deals']:,} "
            f"| {m['mean']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}] "
            f"| {100 * w['mean']:.1f}% [{100 * w['lo']:.1f}, {100 * w['hi']:.1f}] "
            f"| {t['cpu_mean_ms']:.2f} ({t['cpu_p99_ms']:.1f}) |"
        )
    return "\n".join(lines)


def _variants(items: list[str] | None) -> dict[str, str]:
    if not items:
        return dict(VARIANTS)
    out = {}
    for item in items:
        name, eq, spec = item.partition("=")
        if eq and not name.startswith("fsearch") and ":" not in name:
            out[name] = spec
        else:
            out[item] = item
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opponent", default="greedy", help="agent spec of the common opponent (default greedy)")
    parser.add_argument("--deals", type=int, default=500, help="duplicate deals per variant (default 500)")
    parser.add_argument("--variants", nargs="+", help="NAME=SPEC or SPEC items (default: the ingredient list)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timing-positions", type=int, default=300)
    parser.add_argument("--json", metavar="PATH", help="write the reports and timings as JSON")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--table", nargs="+", metavar="JSON", help="only print the table from earlier --json outputs")
    args = parser.parse_args(argv)
    if args.table:
        rows = [row for path in args.table for row in json.loads(Path(path).read_text())["rows"]]
        print(markdown_table(rows))
        return 0
    rules = get_rules(args.rules)
    out: dict = {"command": " ".join(["python", "benchmarks/search_ingredients.py", *(argv or sys.argv[1:])])}
    out["rows"] = rows = []
    for name, spec in _variants(args.variants).items():
        timing = time_moves(spec, args.players, rules, args.timing_positions, args.seed)
        match = Match((spec, args.opponent), args.players, rules, args.seed)
        run = run_deals(match, args.deals, args.workers, progress=not args.no_progress, desc=name)
        report = summarize(match, run)
        rows.append({"name": name, "spec": spec, "timing": timing, "report": report})
        a = report["agents"][0]["margin_per_hand"]
        print(
            f"{name}: {report['deals']} deals, margin {a['mean']:+.3f} [{a['lo']:+.3f}, {a['hi']:+.3f}], "
            f"{timing['cpu_mean_ms']:.2f} ms/move, wall {report['wall_seconds']:.0f} s",
            flush=True,
        )
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            write_json(out, args.json)
        if run.interrupted:
            break
    print()
    print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
