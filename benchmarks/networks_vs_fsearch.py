"""Networks alone against the compiled search, game by game, with their cost per decision.

Issue 48, item 1 asks for a network that beats ``fsearch`` on its own in the games where the
network is already close to it (Scopone scientifico, Scopone, the 52-card game for 8 players),
at most 1 ms per move. Each ``--row GAME PLAYERS AGENT PAIRS`` plays ``AGENT`` against
``fsearch`` (256 worlds, its defaults) on ``PAIRS`` held-out duplicate deal pairs
(``scopa eval --fast AGENT fsearch --rules GAME --players PLAYERS --games PAIRS --seed S``:
whole games, every seat rotation of every deal, 95% intervals clustered by deal) and measures
the agent's CPU ms per decision on positions of heuristic self-play of that game, ``fsearch``
taking turns with it on each position so that a change of load falls on both. ::

    python benchmarks/networks_vs_fsearch.py \\
        --row scopone_scientifico 4 zoo:scopone-scientifico-v2 1000 \\
        --record benchmarks/results/networks_vs_fsearch.json

Each report is kept in ``--out-dir`` (``<game>-<players>p-<agent>.json``); a row whose report is
there with the same deals and seed is not played again, so a stopped run resumes.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, as the budget says
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from net_search_cost import ms_per_decision, positions  # noqa: E402
from strength_per_ms import kept_eval, slug  # noqa: E402

from scopa_env.bench.results import load_average, result_record  # noqa: E402

REFERENCE = "fsearch"
TITLE = "Networks alone against the compiled search"
ABOUT = (
    "Issue 48, item 1: a network alone against fsearch (256 worlds) on held-out duplicate deals, in the games "
    "where the network is closest to it, beside its CPU ms per decision (benchmarks/networks_vs_fsearch.py; "
    'docs/training.md, "Longer runs in the team games").'
)
BUDGET_MS = 1.0
"""The item's budget for the network alone: CPU ms per move."""


def row_of(game: str, players: int, spec: str, pairs: int, args: argparse.Namespace) -> dict:
    """Play (or take back) one row's evaluation and time the agent beside the reference."""
    path = Path(args.out_dir) / f"{game}-{players}p-{slug(spec)}.json"
    eval_args = ["--fast", spec, args.reference, "--rules", game, "--players", str(players)]
    report, _ = kept_eval(path, eval_args, pairs, args.seed)
    views = [view for view, _ in positions(args.timing_positions, args.seed, game, players)]
    ms_ref, ms = ms_per_decision([args.reference, spec], views, args.seed)
    m = report["agents"][0]["margin_per_hand"]
    w = report["agents"][0]["win_rate"]
    return {
        "game": f"{game}, {players} players",
        "agent": spec,
        "ms": ms,
        "ratio_ms": ms / ms_ref,
        "within_budget": ms <= BUDGET_MS,
        "margin": m["mean"],
        "margin_lo": m["lo"],
        "margin_hi": m["hi"],
        "margin_text": f"{m['mean']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]",
        "win_text": f"{100 * w['mean']:.1f} [{100 * w['lo']:.1f}, {100 * w['hi']:.1f}]%",
        "deals": report["deals"],
        "data": str(path),
        "command": "scopa eval "
        + " ".join([*eval_args, "--games", str(pairs), "--seed", str(args.seed), "--json", str(path)]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--row",
        nargs=4,
        action="append",
        required=True,
        metavar=("GAME", "PLAYERS", "AGENT", "PAIRS"),
        help="a rules preset, its player count, an agent spec and the deal pairs to play (repeatable)",
    )
    parser.add_argument("--reference", default=REFERENCE, help=f"the opponent (default {REFERENCE})")
    parser.add_argument("--seed", type=int, default=4242, help="the deals' seed (no training run uses it)")
    parser.add_argument("--timing-positions", type=int, default=200)
    parser.add_argument("--out-dir", default="docs/data/networks_vs_fsearch", help="one report per row, kept")
    parser.add_argument("--record", help="write the table as a result record (JSON)")
    parser.add_argument("--title", default=TITLE, help="the record file's title (another file, another title)")
    parser.add_argument("--about", default=ABOUT, help="the record file's paragraph")
    parser.add_argument(
        "--agent-kind", default="a network alone", help="what the rows' agents are, in the record's 'what'"
    )
    args = parser.parse_args(argv)
    rows_in = []
    for game, players, spec, pairs in args.row:
        if not players.isdigit() or not pairs.isdigit() or int(pairs) < 1:
            parser.error(f"--row {game} {players} {spec} {pairs}: PLAYERS and PAIRS must be positive integers")
        rows_in.append((game, int(players), spec, int(pairs)))
    load_start = load_average()
    rows = []
    for game, players, spec, pairs in rows_in:
        rows.append(row_of(game, players, spec, pairs, args))
        r = rows[-1]
        print(f"{r['game']}: {spec} {r['margin_text']} vs {args.reference}, {r['ms']:.2f} ms per decision", flush=True)
    if args.record:
        command = shlex.join(
            ["python", "benchmarks/networks_vs_fsearch.py", *(argv if argv is not None else sys.argv[1:])]
        )
        record = result_record(
            command,
            rows,
            what=(
                f"{args.agent_kind} against {args.reference} on held-out duplicate deal pairs (seed {args.seed}, "
                "compiled core, whole games, 95% CIs clustered by deal), and its CPU ms per decision on "
                f"{args.timing_positions} positions of heuristic self-play of the game, taking turns with {args.reference}"
            ),
            columns=[
                ("game", "game"),
                ("agent", "agent"),
                ("deals", "deal pairs"),
                ("margin_text", f"points per hand vs {args.reference} [95% CI]"),
                ("win_text", "game win rate [95% CI]"),
                ("ms", "CPU ms per decision"),
                ("ratio_ms", f"ratio to {args.reference}'s ms"),
            ],
            load={"start": load_start, "end": load_average()},
            machine="this project's shared 2-core CPU machine",
        )
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        Path(args.record).write_text(
            json.dumps({"title": args.title, "about": args.about, "records": [record]}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
