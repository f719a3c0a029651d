"""``scopa leaderboard``: an agent's row on a frozen benchmark suite, the subcommand :mod:`scopa_app.cli` adds.

::

    scopa leaderboard AGENT [--suite standard-2p-v1] [--quick] [--workers N] [--ray [ADDRESS]] [--engine auto]
                            [--json PATH]
    scopa leaderboard --list

AGENT is an agent spec (``heuristic``, ``fsearch:worlds=64``), a checkpoint (``dmc:PATH``,
``zoo:standard-2p``) or a class of the user's own, ``module:Class``, importable from the current
folder or an installed package and implementing :class:`agents.base.Agent`. It plays every
reference of the suite's ladder on the suite's deals (:mod:`agents.leaderboard`) and prints
its row: the rating on the suite's scale with its 95% interval, the margin and game win rate
against each reference, and the per-hand rates. Each reference is played on the compiled core
where both agents have a compiled form (``--engine auto``, :func:`agents.leaderboard.plan_pair`),
else on the Python harness; the row says which. Bad input (an unknown suite, an agent for
another game or player count, a class that is not an agent) is one line on stderr and exit
status 2, before any game; forfeits print no row (exit status 1). The ``oracle``, which sees every
card, is refused the same way: it is no ranked agent but each suite's unranked ceiling row, which
``benchmarks/leaderboard.py`` measures into the published record.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from agents.leaderboard import (
    ENGINES,
    PER_HAND,
    check_agents,
    estimate_cpu_seconds,
    rate_agent,
    resolve_agent,
    tier_deals,
)
from agents.ray_deals import check_ray, ray_cluster
from agents.suites import load_suite, names
from scopa_app.args import add_ray_argument

EXIT_BAD_INPUT = 2
EXIT_FORFEITS = 1
DEFAULT_SUITE = "standard-2p-v1"


def add_leaderboard_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``scopa leaderboard`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "leaderboard",
        help="rate an agent on a frozen benchmark suite against its reference ladder",
        description="Play an agent against every reference agent of a frozen, versioned benchmark suite "
        "(its deals fixed by the suite) and print its leaderboard row: a rating with a 95% interval on the "
        "suite's published scale, the margin in points per hand and the game win rate against each reference "
        "(95% intervals clustered by deal), and the per-hand rates of primiera, settebello, coins, cards and "
        "scope. docs/benchmark.md explains the suites.",
    )
    p.add_argument("agent", nargs="?", metavar="AGENT", help="an agent spec, a checkpoint spec or module:Class")
    p.add_argument("--suite", default=DEFAULT_SUITE, help=f"the suite (default {DEFAULT_SUITE}; --list shows them)")
    p.add_argument(
        "--quick", action="store_true", help="the quick tier (the first 50 to 200 deal pairs) instead of all 10,000"
    )
    p.add_argument("--deals", type=int, help="only the tier's first DEALS deals: a trial, not a published row")
    p.add_argument(
        "--workers", type=int, default=1, help="processes (threads on the compiled core); the row does not depend on it"
    )
    add_ray_argument(p)
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="auto: each pair on the compiled core where both agents have a compiled form, else on the Python "
        "harness; compiled: refuse a pair the core cannot play; python: every pair on the harness",
    )
    p.add_argument("--json", metavar="PATH", help="write the report (the row, its timing) as JSON")
    p.add_argument("--list", action="store_true", help="list the suites and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run_leaderboard)
    return p


def _fail(message: str) -> int:
    print(f"scopa leaderboard: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def list_suites() -> None:
    for name in names():
        s = load_suite(name)
        scale = "rated" if s.rated else "ladder not rated yet"
        print(
            f"{name:24s} {s.rules.name:20s} {s.num_players} players, {s.num_sides} sides, "
            f"{s.tiers['quick']}/{s.tiers['full']} deals; {scale}: {', '.join(s.ladder_specs)}"
        )


def run_leaderboard(args: argparse.Namespace) -> int:
    """Run ``scopa leaderboard``; returns the exit status."""
    if args.list:
        list_suites()
        return 0
    if not args.agent:
        return _fail("name the AGENT to rate (or --list the suites)")
    if args.workers < 1:
        return _fail(f"--workers must be at least 1, got {args.workers}")
    tier = "quick" if args.quick else "full"
    try:
        check_ray(args.ray)
        suite = load_suite(args.suite)
        deals = tier_deals(suite, tier, args.deals)
        spec = resolve_agent(args.agent)
        check_agents(suite, spec)
        print(
            f"{spec} on {suite.name} ({suite.title}), {tier} tier: {deals} deals x {suite.num_sides} rotations "
            f"against {len(suite.ladder)} references",
            file=sys.stderr,
            flush=True,
        )
        if tier == "full" and args.deals is None:
            print(full_tier_warning(suite, deals, args.workers), file=sys.stderr, flush=True)
        load_start = os.getloadavg()
        with ray_cluster(args.ray, args.workers) as cluster:
            report = rate_agent(
                suite,
                spec,
                tier,
                args.deals,
                args.workers,
                progress=not args.no_progress,
                engine=args.engine,
                cluster=cluster,
            )
    except (ValueError, OSError, ImportError) as exc:
        text = str(exc).strip()
        return _fail(text.splitlines()[0] if text else type(exc).__name__)
    report["timing"]["load_average"] = {
        "start": [round(x, 2) for x in load_start],
        "end": [round(x, 2) for x in os.getloadavg()],
    }
    report["timing"]["date"] = time.strftime("%Y-%m-%d")
    if report["forfeits"]:
        f = report["forfeits"][0]
        print(
            f"scopa leaderboard: error: {len(report['forfeits'])} games were forfeited; first: deal {f['deal']} "
            f"rotation {f['rotation']}: {f['agent']} {f['error']}; no row is reported",
            file=sys.stderr,
        )
        return EXIT_FORFEITS
    if report["interrupted"]:
        print("interrupted: no row (every reference must be played)", file=sys.stderr)
        return 130
    print(render_row(report))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
    return 0


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} CPU-hours" if seconds >= 5400 else f"{seconds / 60:.0f} CPU-minutes"


def full_tier_warning(suite, deals: int, workers: int) -> str:
    """What a run of the full tier costs, said before its first game, and the quick tier instead."""
    games = deals * suite.num_sides * len(suite.ladder)
    cost = estimate_cpu_seconds(suite, deals)
    wall = f" (about {cost / 3600 / workers:.1f} hours on {workers} workers)" if workers > 1 and cost >= 5400 else ""
    quick = suite.deals("quick")
    return (
        f"the full tier is {games:,} games: about {_hours(cost)}{wall} for an agent deciding in a millisecond, "
        f"more for a slower one; --quick plays its first {quick} deals (about "
        f"{_hours(estimate_cpu_seconds(suite, quick))})"
    )


def _ci(ci: dict, pct: bool = False) -> str:
    if ci["mean"] is None:
        return "-"
    if pct:
        lo, hi = ("-" if ci[k] is None else f"{100 * ci[k]:.1f}" for k in ("lo", "hi"))
        return f"{100 * ci['mean']:5.1f}% [{lo}, {hi}]"
    lo, hi = ("-" if ci[k] is None else f"{ci[k]:+.3f}" for k in ("lo", "hi"))
    return f"{ci['mean']:+.3f} [{lo}, {hi}]"


def render_row(report: dict) -> str:
    """The row as text: the rating, a line per reference, the per-hand rates and the time it took."""
    row, timing = report["row"], report["timing"]
    lines = [f"{row['agent']} on {row['suite']} ({row['tier']} tier, {row['deals']} deals)"]
    if row["trial"]:
        lines[0] += ": a trial on part of the tier, not a leaderboard row"
    if row["rating"] is None:
        lines.append(
            f"rating: - (the ladder of {row['suite']} has no published ratings yet: benchmarks/leaderboard.py)"
        )
    else:
        r = row["rating"]
        lines.append(f"rating: {r['mean']:.0f} [{r['lo']:.0f}, {r['hi']:.0f}] ({row['scale']}; 95% interval)")
    lines.append(
        f"{'reference':22s} {'rating':>7s}  {'points per hand [95% CI]':26s} {'game win rate [95% CI]':22s} engine"
    )
    for e in row["references"]:
        rating = "-" if e["reference_rating"] is None else f"{e['reference_rating']:.0f}"
        lines.append(
            f"{e['reference']:22s} {rating:>7s}  {_ci(e['margin_per_hand']):26s} {_ci(e['win_rate'], pct=True):22s} "
            f"{e.get('engine', '-')}"
        )
    if row["per_hand"]:
        rates = ", ".join(f"{k} {row['per_hand'][k]:.3f}" for k in PER_HAND)
        lines.append(f"per hand (won, scope made): {rates}")
    load = timing.get("load_average", {})
    lines.append(
        f"took {timing['wall_seconds']:.0f} s wall, {timing['cpu_seconds']:.0f} CPU-s on {timing['workers']} "
        f"worker(s); load average {load.get('start', ['?'])[0]} -> {load.get('end', ['?'])[0]}"
    )
    return "\n".join(lines)
