"""Baseline results for the README: who beats whom, by how much, and how fast.

Plays the standard 2-player game on duplicate deals (each deal twice, seats swapped) for
the pairings greedy-random, heuristic-greedy, search-heuristic and search-greedy, then
prints a markdown table (hand-point margin per hand and game win rate, each with a 95%
CI, and CPU seconds per 1,000 hands in one process) and writes the reports as JSON. It also
times the search agent's default budget per move.

Run (the README numbers)::

    python benchmarks/baselines.py --deals 10000 --workers 2 --json runs/baselines.json

Options ``--pairings`` and ``--search-deals`` run a subset or fewer deals for the slow
search pairings; ``--table A.json B.json`` prints one table from earlier JSON outputs.
Ctrl-C keeps the deals finished so far (the table says how many).
"""

from __future__ import annotations

import argparse
import json
import platform
import signal
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from agents.matches import Match, run_deals
from agents.registry import make_agent
from agents.report import write_json
from agents.stats import summarize
from scopa_env.engine.game import Game

PAIRINGS = {
    "greedy-random": ("greedy", "random"),
    "heuristic-greedy": ("heuristic", "greedy"),
    "search-heuristic": ("search", "heuristic"),
    "search-greedy": ("search", "greedy"),
}
SLOW = {"search-heuristic", "search-greedy"}
PUBLISHED_EXPERT_MARGIN = 0.60
"""Best published margin of an expert Scopa bot over a greedy one, points per hand (from the issue)."""


def time_search_moves(num_positions: int = 300, seed: int = 0) -> dict:
    """Milliseconds per decision of the default search agent over positions from heuristic self-play.

    Reports CPU time of this process (``cpu_*``: what the agent costs, whatever else runs on
    the machine) and wall-clock time (``wall_*``: equal to it on an idle machine).
    """
    agent = make_agent("search", seed=seed)
    pilot = make_agent("heuristic", seed=seed)
    cpu: list[float] = []
    wall: list[float] = []
    game_seed = seed
    while len(cpu) < num_positions:
        game = Game(2, seed=game_seed, auto_next_hand=False)
        game_seed += 1
        while not game.hand_over and len(cpu) < num_positions:
            view = game.view()
            if len(view.legal_pairs()) > 1:
                start_cpu, start_wall = time.process_time(), time.perf_counter()
                agent.act(view)
                cpu.append(1000 * (time.process_time() - start_cpu))
                wall.append(1000 * (time.perf_counter() - start_wall))
            game.play(pilot.act(view))
    out: dict = {"positions": len(cpu)}
    for name, times in (("cpu", sorted(cpu)), ("wall", sorted(wall))):
        out[f"{name}_mean_ms"] = statistics.fmean(times)
        out[f"{name}_p50_ms"] = times[len(times) // 2]
        out[f"{name}_p99_ms"] = times[min(len(times) - 1, int(0.99 * len(times)))]
        out[f"{name}_max_ms"] = times[-1]
    return out


def markdown_table(reports: list[dict]) -> str:
    lines = [
        "| pairing (first agent's view) | duplicate deals | hands | margin / hand [95% CI] | win rate [95% CI] "
        "| CPU s / 1,000 hands |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for rep in reports:
        a = rep["agents"][0]
        m, w = a["margin_per_hand"], a["win_rate"]
        lines.append(
            f"| {' vs '.join(rep['config']['agents'])} | {rep['deals']:,} | {rep['hands']:,} "
            f"| {m['mean']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}] "
            f"| {100 * w['mean']:.1f}% [{100 * w['lo']:.1f}, {100 * w['hi']:.1f}] "
            f"| {rep['seconds_per_1000_hands']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=10_000, help="duplicate deals per pairing (default 10000)")
    parser.add_argument(
        "--search-deals", type=int, default=None, help="deals for the search pairings (default --deals)"
    )
    parser.add_argument("--pairings", nargs="+", choices=list(PAIRINGS), default=list(PAIRINGS))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="write all reports and the move timing as JSON")
    parser.add_argument("--timing-positions", type=int, default=300, help="positions for the per-move timing (0: skip)")
    parser.add_argument(
        "--max-minutes", type=float, default=None, help="stop each pairing after this long (keeps what finished)"
    )
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--table", nargs="+", metavar="JSON", help="only print the table from earlier --json outputs")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background

    if args.table:
        reports, timing = [], None
        for path in args.table:
            data = json.loads(Path(path).read_text())
            reports += data["reports"]
            timing = data.get("search_timing") or timing
        print(markdown_table(reports))
        _print_timing(timing)
        return 0

    out: dict = {
        "command": " ".join(["python", "benchmarks/baselines.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": f"{platform.processor() or platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}",
        "reports": [],
        "search_timing": None,
    }

    def save() -> None:
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            write_json(out, args.json)

    if args.timing_positions > 0 and any(p in SLOW for p in args.pairings):
        out["search_timing"] = time_search_moves(args.timing_positions, args.seed)
        _print_timing(out["search_timing"])
        save()
    for name in args.pairings:
        deals = args.search_deals if (name in SLOW and args.search_deals) else args.deals
        match = Match(PAIRINGS[name], 2, seed=args.seed)
        limit = None if args.max_minutes is None else 60 * args.max_minutes
        run = run_deals(match, deals, args.workers, progress=not args.no_progress, desc=name, time_limit=limit)
        report = summarize(match, run)
        out["reports"].append(report)
        save()
        a = report["agents"][0]
        print(
            f"{name}: {report['deals']} deals, margin {a['margin_per_hand']['mean']:+.3f} "
            f"[{a['margin_per_hand']['lo']:+.3f}, {a['margin_per_hand']['hi']:+.3f}], "
            f"{report['seconds_per_1000_hands']:.1f} s/1000 hands, wall {report['wall_seconds']:.0f} s",
            flush=True,
        )
        if run.interrupted and limit is None:
            print("interrupted: later pairings skipped", flush=True)
            break
    print()
    print(markdown_table(out["reports"]))
    print(f"\nPublished expert-over-greedy margin to beat: +{PUBLISHED_EXPERT_MARGIN:.2f} points per hand.")
    return 0


def _print_timing(timing: dict | None) -> None:
    if not timing:
        return
    for name in ("cpu", "wall"):
        if f"{name}_mean_ms" in timing:
            print(
                f"search agent, default budget, {name} time per move: mean {timing[f'{name}_mean_ms']:.1f} ms, "
                f"median {timing[f'{name}_p50_ms']:.1f} ms, p99 {timing[f'{name}_p99_ms']:.1f} ms, "
                f"max {timing[f'{name}_max_ms']:.1f} ms over {timing['positions']} positions",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
