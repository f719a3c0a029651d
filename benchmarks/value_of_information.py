"""Where the value of information lies: the oracle's ceiling split into the hands and the stock's order.

The benchmark's ceiling, the oracle (``oracle:ab_depth=0,rollouts=256,noise=0.6``), sees two things
no fair agent does: the other hands and the order of the stock. Inference from the other players'
moves can at best recover the first. On a suite's deals this script plays, each against the best
fair search (``fsearch``, the suite's game) on the same duplicate deals (``scopa eval``):

* ``oracle-all``: the ceiling itself (every hand and the stock's order);
* ``oracle-hands``: the same oracle with ``see=hands`` (every hand, the stock drawn anew in each rollout);
* ``fsearch-inference``: the fair search with ``inference=true`` (worlds weighted by how likely the
  others' moves were in each).

From their margins over ``fsearch`` it derives the share of the ceiling a perfect reader of the
opponents could reach (``oracle-hands / oracle-all``) and the share of that which inference recovers
today (``fsearch-inference / oracle-hands``). Each report is kept in ``--out-dir`` and not played
again. ::

    python benchmarks/value_of_information.py --suite standard-2p-v1 --pairs 200 \\
        --record benchmarks/results/value_of_information.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from strength_per_ms import kept_eval  # noqa: E402

from agents.suites import load_suite  # noqa: E402
from scopa_env.bench.results import load_average, result_record  # noqa: E402
from scopa_env.engine.game import Game  # noqa: E402

REFERENCE = "fsearch"
CEILING = "oracle:ab_depth=0,rollouts=256,noise=0.6"
SPECS = {
    "oracle-all": CEILING,
    "oracle-hands": CEILING + ",see=hands",
    "fsearch-inference": "fsearch:inference=true",
}
TITLE = "The value of information"
ABOUT = (
    "The oracle's margin over the best fair search split into what seeing the other hands gives and what "
    "only the stock's order gives, beside what fsearch's inference recovers today "
    '(benchmarks/value_of_information.py; docs/benchmark.md, "The oracle ceiling").'
)


def play(name: str, spec: str, suite, pairs: int, args: argparse.Namespace) -> tuple[dict, str, bool]:
    """The report of ``spec`` against the reference on the suite's first ``pairs`` deals, its path, and
    whether it was played now (a kept report is taken back)."""
    path = Path(args.out_dir) / suite.name / f"{name}.json"
    game = ["--rules", suite.rules.name, "--players", str(suite.num_players), "--workers", str(args.workers)]
    report, played = kept_eval(path, [spec, args.reference, *game], pairs, suite.seed)
    return report, str(path), played


def margin(report: dict) -> dict:
    m = report["agents"][0]["margin_per_hand"]
    return {"mean": m["mean"], "lo": m["lo"], "hi": m["hi"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", help="suites (default standard-2p-v1 and scopone-scientifico-v1)")
    parser.add_argument(
        "--pairs", type=int, default=200, help="the suite's first N deals (default 200, its quick tier)"
    )
    parser.add_argument("--reference", default=REFERENCE)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out-dir", default="docs/data/value_of_information")
    parser.add_argument("--record", help="write the table as a result record (JSON)")
    args = parser.parse_args(argv)
    load_start = load_average()
    rows, played = [], False
    for item in args.suite or ["standard-2p-v1", "scopone-scientifico-v1"]:
        suite_name, _, count = item.partition(":")
        suite = load_suite(suite_name)
        pairs = int(count) if count else args.pairs
        margins, paths = {}, {}
        for name, spec in SPECS.items():
            if name == "oracle-hands" and not Game(suite.num_players, suite.rules, seed=0).stock:
                # every card is dealt at once: nothing is in the stock, and the two oracles are one agent
                # (tests/test_oracle.py), so the full oracle's games stand for both
                margins[name] = margins["oracle-all"]
                rows.append(
                    {
                        "suite": suite.name,
                        "agent": spec,
                        "data": paths["oracle-all"],
                        "share": "",
                        "note": "no stock: as above",
                    }
                )
                continue
            report, paths[name], now = play(name, spec, suite, pairs, args)
            played |= now
            margins[name] = margin(report)
            rows.append({"suite": suite.name, "agent": spec, "data": paths[name], "share": "", "note": ""})
        full, hands, inference = (margins[k]["mean"] for k in SPECS)
        rows[-2]["share"] = f"{hands / full:.0%} of the ceiling" if full > 0 else ""
        rows[-1]["share"] = f"{inference / hands:.0%} of the hands' share" if hands > 0 else ""
        print(
            f"{suite.name}: ceiling {full:+.3f}, seeing the hands {hands:+.3f}, inference {inference:+.3f}",
            flush=True,
        )
    if args.record:
        command = " ".join(
            ["python", "benchmarks/value_of_information.py", *(argv if argv is not None else sys.argv[1:])]
        )
        record = result_record(
            command,
            rows,
            what=(
                f"each spec against {args.reference} on the suite's first deals (the deals column; its quick tier "
                "is 200), both seatings, whole games, 95% CIs clustered by deal (Python harness: the oracle needs the whole game)"
            ),
            columns=[
                ("suite", "suite"),
                ("agent", "agent"),
                ("deals", "duplicate deals"),
                ("margin", f"points per hand vs {args.reference} [95% CI]"),
                ("win_rate", "game win rate [95% CI]"),
                ("share", "share"),
                ("note", "note"),
            ],
            load={"start": load_start, "end": load_average()} if played else None,
            load_note=None if played else "not recorded: every report was kept from an earlier run of this command",
            machine="this project's shared 2-core CPU machine",
        )
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        Path(args.record).write_text(json.dumps({"title": TITLE, "about": ABOUT, "records": [record]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
