"""Deal pairs per second of the Python harness: this machine's processes against a local Ray's workers.

::

    python benchmarks/eval_ray.py                         # heuristic vs greedy, 1500 deals per mode
    python benchmarks/eval_ray.py --deals 300 --agents search greedy --out runs/eval_ray.json

Plays the same deals of two agents (every deal in both seatings: a deal pair) in four modes:
``--workers 1`` and ``--workers 2`` (:func:`agents.matches.run_deals` in this machine's processes), and
``--ray`` on a local Ray of 1 and of 2 CPUs (:mod:`agents.ray_deals`). Each Ray is started, and its
workers warmed up on a few deals, before its timed run: the start is its own column, not in the
rate. Every mode must give the same report (the script stops if one does not). The cheap default
agents show the harness's overhead at its largest: a chunk of 8 deals is a few hundredths of a
second of play. The script prints the rates and their ratio to one process, and writes a result
record (``benchmarks/results/eval_ray.json`` by default; ``python benchmarks/render_results.py``
shows it in docs/results.md).

Needs Ray's core (``pip install "ray>=2.60,<3"``, in the ``all`` extra).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from agents.matches import Match, run_deals
from agents.ray_deals import RAY_MISSING, RayCluster, ray_available
from agents.stats import summarize
from scopa_env.bench.results import load_average, result_record

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "eval_ray.json"
WARM_UP_DEALS = 8
TIMING = ("wall_seconds", "game_seconds", "seconds_per_1000_hands")
COLUMNS = [
    ("mode", "mode"),
    ("pairs_per_second", "deal pairs/s"),
    ("ratio", "ratio to one process"),
    ("seconds", "timed seconds"),
    ("start_seconds", "Ray start, s"),
]


def measure(match: Match, deals: int, workers: int, cluster: RayCluster | None) -> tuple[float, dict]:
    """``(seconds, report without its clocks)`` of one run of ``deals`` deals."""
    start = time.perf_counter()
    run = run_deals(match, deals, workers, progress=False, cluster=cluster)
    seconds = time.perf_counter() - start
    report = summarize(match, run)
    return seconds, {k: v for k, v in report.items() if k not in TIMING}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs=2, default=["heuristic", "greedy"], metavar="AGENT")
    parser.add_argument("--deals", type=int, default=1500, help="deal pairs per mode (default 1500)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"result file (default {OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    if not ray_available():
        print(f"eval_ray: error: {RAY_MISSING}", file=sys.stderr)
        return 2
    import ray

    command = shlex.join(["python", "benchmarks/eval_ray.py", *(argv if argv is not None else sys.argv[1:])])
    match = Match(tuple(args.agents))
    load_start = load_average()
    rows, reports = [], []
    for workers in (1, 2):
        seconds, report = measure(match, args.deals, workers, None)
        rows.append({"mode": f"{workers} process{'es' if workers > 1 else ''}", "workers": workers, "seconds": seconds})
        reports.append(report)
        print(f"{rows[-1]['mode']:16s} {args.deals / seconds:8.1f} deal pairs/s", flush=True)
    for cpus in (1, 2):
        if ray.is_initialized():
            ray.shutdown()
        started = time.perf_counter()
        with RayCluster("", num_cpus=cpus) as cluster:
            run_deals(match, WARM_UP_DEALS * cpus, progress=False, cluster=cluster)
            start_seconds = time.perf_counter() - started
            seconds, report = measure(match, args.deals, 1, cluster)
        mode = f"Ray, {cpus} CPU{'s' if cpus > 1 else ''}"
        rows.append({"mode": mode, "workers": cpus, "seconds": seconds, "start_seconds": round(start_seconds, 1)})
        reports.append(report)
        print(f"{mode:16s} {args.deals / seconds:8.1f} deal pairs/s (start {start_seconds:.1f} s)", flush=True)
    if any(r != reports[0] for r in reports):
        print("eval_ray: error: the modes played different games", file=sys.stderr)
        return 1
    base = rows[0]["seconds"]
    for row in rows:
        row["pairs_per_second"] = round(args.deals / row["seconds"], 1)
        row["ratio"] = round(base / row["seconds"], 3)  # the same deals in every mode
        row["seconds"] = round(row["seconds"], 1)
    record = result_record(
        command,
        rows,
        what=f"deal pairs per second of {args.agents[0]} vs {args.agents[1]} on the Python harness (standard rules, "
        f"2 players, {args.deals} deals per mode, every deal in both seatings): this machine's processes "
        "(--workers) or a local Ray's workers (--ray); every mode played the same games",
        columns=COLUMNS,
        load={"start": load_start, "end": load_average()},
        title="Evaluations on Ray: deal pairs per second",
        machine="this project's shared 2-core CPU machine",
        load_note="other jobs shared the machine" if load_start and max(load_start) > 2 else None,
        agents=list(args.agents),
        deals=args.deals,
    )
    data = {
        "title": "Evaluations on Ray",
        "about": "Deal pairs per second of `scopa eval`'s Python harness in this machine's processes (`--workers N`) "
        'and on a local Ray (`--ray`, agents/ray_deals.py; docs/benchmark.md, "Running on a Ray cluster"), '
        "measured by `benchmarks/eval_ray.py`.",
        "records": [record],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
