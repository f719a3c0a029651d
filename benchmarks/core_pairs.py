"""Two checkouts of the compiled core compared in interleaved pairs of fresh processes.

    python benchmarks/core_pairs.py BEFORE_ROOT AFTER_ROOT [--pairs 6] [--seconds 1.5]

Each root is a repository root (its ``scopa_env`` is imported from there, its ahead-of-time
extensions built). Every pair runs, in fresh processes and in this order, ``before`` then
``after`` of each measurement:

* ``random_play``: compiled random play, whole standard 2-player games
  (:func:`scopa_env.fast.batch.playout`), moves per CPU-second;
* ``batch_step``: the "select" batch step of a 4,096-game ``BatchedScopa`` with random legal
  actions, observations and masks written, steps per CPU-second; on the row loop the batch
  takes (the ahead-of-time one where it is built) and on the JIT's (``batch_step_jit``);
* ``cold_start``: CPU seconds of a fresh process on an empty ``NUMBA_CACHE_DIR`` that imports,
  resets and steps a standard batch (the install-time build's row loop where it is built).

The speed processes load their kernels from a numba cache per root, filled before the first
pair, so no pair measures a compile. Rates are per CPU-second of the measuring process, the
figure a busy machine disturbs least; each pair's ``after / before`` ratio is printed with the
load average, and the whole run is written to ``benchmarks/results/core_split_pairs.json``
(``--out``) with the command, both commits, the date and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from scopa_env.bench.results import result_record, write_record

RESULTS = Path(__file__).resolve().parent / "results" / "core_split_pairs.json"
SPEED = """
import sys, time
import numpy as np
from scopa_env.fast import core
from scopa_env.fast.batch import BatchedScopa, playout

seconds = float(sys.argv[1])


def timed(step):
    step()  # load from the cache outside the timing
    count, c0 = 0, time.process_time()
    while time.process_time() - c0 < seconds:
        count += step()
    return count / (time.process_time() - c0)


seed = [0]


def play():
    seed[0] += 1
    return playout(64, 2, seed=seed[0])[0]


def batch_step(jit):
    b = BatchedScopa(4096, 2, action_mode="select")
    if jit:
        b._rows = core.batch_rows
    b.reset(np.arange(4096))
    noise = np.random.default_rng(0).random((16, 4096, 41)).astype(np.float32)
    k = [0]

    def step():
        b.step((noise[k[0] & 15] * b.action_mask).argmax(1))
        k[0] += 1
        return 4096

    return step


print(timed(play), timed(batch_step(False)), timed(batch_step(True)))
"""
COLD = """
import numpy as np
from scopa_env.fast import BatchedScopa
b = BatchedScopa(4, 2, action_mode="select")
b.reset(np.arange(4))
b.step(b.action_mask.argmax(1))
"""
SPEEDS = ("random_play", "batch_step", "batch_step_jit")


def _run(root: Path, code: str, cache: str, *args: str) -> tuple[str, float]:
    """``(stdout, CPU seconds)`` of a fresh process importing ``root``'s package."""
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=cache)
    env.pop("SCOPA_AOT", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=root, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise RuntimeError(f"a process of {root.name} failed:\n{out.stderr[-3000:]}")
    return out.stdout, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _commit(root: Path) -> str:
    """The full commit of ``root``'s checkout, with ``+changes`` where its tracked files differ from it."""
    out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True
    )
    return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=1.5, help="CPU seconds of each speed measurement")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    roots = {"before": args.before.resolve(), "after": args.after.resolve()}
    load_before = _load()
    print(f"load average {load_before}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        caches = {side: str(Path(tmp) / side) for side in roots}
        for side, root in roots.items():  # fill each root's numba cache: no pair measures a compile
            _run(root, SPEED, caches[side], "0.05")
        pairs = []
        for k in range(args.pairs):
            pair = {"load": _load()}
            for side, root in roots.items():
                out, _ = _run(root, SPEED, caches[side], str(args.seconds))
                pair[side] = dict(zip(SPEEDS, map(float, out.split()), strict=True))
            for side, root in roots.items():
                with tempfile.TemporaryDirectory() as empty:
                    pair[side]["cold_start"] = _run(root, COLD, empty)[1]
            pair["ratio"] = {m: pair["after"][m] / pair["before"][m] for m in pair["before"]}
            pairs.append(pair)
            ratios = "  ".join(f"{m} {r:.3f}" for m, r in pair["ratio"].items())
            cold = f"cold start {pair['before']['cold_start']:.2f} -> {pair['after']['cold_start']:.2f} CPU-s"
            print(f"pair {k + 1}: after/before {ratios}  ({cold}; load {pair['load'][0]})", flush=True)
    metrics = list(pairs[0]["ratio"])
    summary = {
        m: {
            "median_ratio": statistics.median(p["ratio"][m] for p in pairs),
            "min_ratio": min(p["ratio"][m] for p in pairs),
            "max_ratio": max(p["ratio"][m] for p in pairs),
            "median_before": statistics.median(p["before"][m] for p in pairs),
            "median_after": statistics.median(p["after"][m] for p in pairs),
        }
        for m in metrics
    }
    units = {
        "random_play": "moves per CPU-second",
        "batch_step": "steps per CPU-second, N=4096, select, the batch's row loop",
        "batch_step_jit": "steps per CPU-second, N=4096, select, the JIT's row loop",
        "cold_start": "CPU seconds, fresh process, empty numba cache",
    }
    commits = {side: _commit(root) for side, root in roots.items()}
    load_after = _load()
    result = result_record(
        "python benchmarks/core_pairs.py BEFORE AFTER " + f"--pairs {args.pairs} --seconds {args.seconds}",
        [
            {
                "measurement": m,
                "unit": units[m],
                "median_before": s["median_before"],
                "median_after": s["median_after"],
                "median_ratio": s["median_ratio"],
                "range": f"{s['min_ratio']:.3f} to {s['max_ratio']:.3f}",
            }
            for m, s in summary.items()
        ],
        what=f"the compiled core after/before a change, {args.pairs} interleaved pairs of fresh processes",
        commit=commits["after"].removesuffix("+changes"),
        load={"start": load_before[0], "end": load_after[0]},
        id="core-pairs",
        title="Compiled core, interleaved pairs",
        load_note="1-minute load average at the start and at the end; each pair's load is in `pairs`",
        machine=f"{os.cpu_count()} CPU cores",
        commits=commits,
        summary=summary,
        pairs=pairs,
    )
    for m, s in summary.items():
        print(f"{m}: median after/before {s['median_ratio']:.3f} ({s['min_ratio']:.3f}..{s['max_ratio']:.3f})")
    print(f"load average after {load_after}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_record(result, args.out)
    return result


if __name__ == "__main__":
    main()
