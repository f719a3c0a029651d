"""Speed of the compiled core (rows of ``scopa bench``; also ``python -m scopa_env.bench.fast``).

* compiled random play: whole standard games of uniformly random legal moves, full
  scoring, one thread (:func:`scopa_env.fast.batch.playout`);
* the Python engine's random play in the same run (:func:`scopa_env.bench.env.bench_engine`)
  and the ratio;
* the batched step API called from Python, batch 1,024, "select" mode, observations and
  masks written every step; the actions are random legal ones picked with numpy, and
  their cost is included;
* the same in "move" mode (legal move ids instead of masks) and one learner against
  compiled greedy, heuristic and mixed (half greedy, half heuristic) opponents;
* scaling: the "select" batch step, N=4,096, on 1, 2 and every core
  (``BatchedScopa(threads=k)``), each rate and its ratio to one thread, measured in
  alternating rounds so that a busy machine slows every count alike;
* cold start: a fresh process with an empty numba cache imports, compiles and steps;
  then a second fresh process on that cache (it must load, not compile).

The machine is shared, so every rate is the best of several short rounds, reported on
the wall clock and on this process's CPU time (rows ending in ``/cpu``: the rate one core
gives when the process gets a whole one; far above the wall-clock row, they say the
machine was busy).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from scopa_env.fast import aot, core
from scopa_env.fast.batch import BatchedScopa, max_threads, playout

BATCH = 1024
ROUNDS = 3

_COLD_START = """
import time
t = time.perf_counter()
import numpy as np
from scopa_env.fast import BatchedScopa
b = BatchedScopa(4, 2, action_mode="select")
b.reset(np.arange(4))
b.step(b.action_mask.argmax(1))
print(time.perf_counter() - t)
"""


def _best(fn, seconds: float) -> tuple[float, float]:
    """Best (wall, cpu) rate of ``fn(budget) -> (count, wall, cpu)`` over ``ROUNDS`` rounds."""
    wall = cpu = 0.0
    for _ in range(ROUNDS):
        count, w, c = fn(seconds / ROUNDS)
        wall = max(wall, count / w)
        cpu = max(cpu, count / max(c, 1e-9))
    return wall, cpu


def _random_play(budget: float) -> tuple[int, float, float]:
    playout(20, 2, seed=0)  # compile / load outside the timing
    moves, games = 0, 64
    w0, c0 = time.perf_counter(), time.process_time()
    seed = 1
    while time.perf_counter() - w0 < budget:
        m, _ = playout(games, 2, seed=seed)
        moves += m
        seed += 1
    return moves, time.perf_counter() - w0, time.process_time() - c0


def _batch_steps(
    action_mode: str, opponent: str | dict[str, float] | None, batch: int = BATCH, threads: int = 1, jit: bool = False
):
    """A timed loop of batch steps; ``jit``: on the JIT's row loop even where an ahead-of-time
    one would take the batch (:mod:`scopa_env.fast.aot`)."""

    def run(budget: float) -> tuple[int, float, float]:
        b = BatchedScopa(batch, 2, action_mode=action_mode, opponent=opponent, threads=threads)
        if jit:
            b._rows = core.batch_rows
        b.reset(np.arange(batch))
        rng = np.random.default_rng(0)
        noise = rng.random((16, batch, 41)).astype(np.float32)
        uniform = rng.random((16, batch))
        rows = np.arange(batch)
        steps = k = 0
        w0, c0 = time.perf_counter(), time.process_time()
        while time.perf_counter() - w0 < budget:
            if action_mode == "select":
                actions = (noise[k & 15] * b.action_mask).argmax(1)
            else:
                actions = b.legal_ids[rows, (uniform[k & 15] * b.legal_count).astype(np.int64)]
            b.step(actions)
            steps += batch
            k += 1
        return steps, time.perf_counter() - w0, time.process_time() - c0

    return run


def cold_start(jit_only: bool = False) -> list[tuple[float, float]]:
    """``(wall, cpu)`` seconds to import, compile and step in a fresh process with an empty
    numba cache, then in a second fresh process on that cache; with ``jit_only`` the
    ahead-of-time loops are switched off (``SCOPA_AOT=0``, :mod:`scopa_env.fast.aot`)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, **{aot.ENV_SWITCH: "0" if jit_only else "1"})
        times = []
        for _ in range(2):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run([sys.executable, "-c", _COLD_START], env=env, capture_output=True, text=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if out.returncode:
                raise RuntimeError(f"cold-start subprocess failed:\n{out.stderr}")
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            times.append((float(out.stdout.split()[-1]), cpu))
    return times


BATCH_CASES = (
    ("select", None, "batch step, select, obs + masks, N=1024"),
    ("move", None, "batch step, move ids, obs, N=1024"),
    ("select", "greedy", "learner vs greedy step, select, N=1024"),
    ("select", "heuristic", "learner vs heuristic step, select, N=1024"),
    ("select", {"greedy": 0.5, "heuristic": 0.5}, "learner vs greedy+heuristic mix, select, N=1024"),
)
COLD_START_SECONDS = 20.0
"""A typical cold start plus the second process, for :func:`estimate_fast_seconds`."""
SCALING_BATCH = 4096


def scaling_threads() -> list[int]:
    """Thread counts of the scaling rows: 1, 2 and every core (those this machine has)."""
    return sorted({k for k in (1, 2, max_threads()) if k <= max_threads()})


def scaling(seconds: float) -> dict[int, float]:
    """Wall-clock steps/s of the "select" batch step, N=:data:`SCALING_BATCH`, per thread
    count, the counts alternating round by round (best round of each); all on the JIT's row
    loop, the one several threads run (one thread would otherwise take the ahead-of-time one)."""
    counts = scaling_threads()
    for k in counts:  # compile / load outside the timing
        _batch_steps("select", None, SCALING_BATCH, k, jit=True)(0.0)
    best = dict.fromkeys(counts, 0.0)
    for _ in range(ROUNDS):
        for k in counts:
            steps, wall, _ = _batch_steps("select", None, SCALING_BATCH, k, jit=True)(seconds / ROUNDS / len(counts))
            best[k] = max(best[k], steps / wall)
    return best


STEPS = 4 + len(BATCH_CASES)
"""Steps of :func:`bench_rows` (calls of ``progress``)."""


def estimate_fast_seconds(seconds: float) -> float:
    """Wall time of :func:`bench_rows`: random play, the engine, each batch case, the
    scaling rounds, the cold starts, and the reference measurements around each step."""
    from scopa_env.bench.env import reference_seconds

    return seconds * (3 + len(BATCH_CASES)) + COLD_START_SECONDS + 2 * reference_seconds(seconds) * STEPS


def bench_rows(seconds: float = 3.0, progress=None):
    """The compiled core's benchmark rows ``(name, value, unit)`` for ``scopa bench``, yielded
    as each is measured (``progress(label)`` is called before each step)."""
    from scopa_env.bench.env import bench_engine

    say = progress or (lambda label: None)
    say("compiled core, random play (compiles first when the cache is empty)")
    wall, cpu = _best(_random_play, seconds)
    yield ("fast: random play, standard, 2 players, 1 thread", wall, "moves/s")
    yield ("fast: random play, standard, 2 players, 1 thread /cpu", cpu, "moves/s")
    say("Python engine, random play, 2 players (for the ratio)")
    engine = max(bench_engine(seconds / ROUNDS, num_players=2, seed=r)["moves_per_s"] for r in range(ROUNDS))
    yield ("python engine: random play, 2 players (same run)", engine, "moves/s")
    yield ("fast / python engine, random play", wall / engine, "ratio")
    for mode, opponent, label in BATCH_CASES:
        say(f"compiled core, {label}")
        wall, cpu = _best(_batch_steps(mode, opponent), seconds)
        yield (f"fast: {label}", wall, "steps/s")
        yield (f"fast: {label} /cpu", cpu, "steps/s")
    say(f"compiled core, scaling: batch step on {', '.join(map(str, scaling_threads()))} threads")
    rates = scaling(seconds)
    for k, rate in rates.items():
        yield (f"fast: batch step, select, N={SCALING_BATCH}, {k} thread{'s' if k > 1 else ''}", rate, "steps/s")
    for k, rate in rates.items():
        if k > 1:
            yield (f"fast: scaling, {k} threads / 1 thread, N={SCALING_BATCH}", rate / rates[1], "ratio")
    built = "built" if aot.load("plain") is not None else "not built"
    say(f"compiled core, cold start in a fresh process with an empty cache (ahead-of-time loops {built})")
    (cold, cold_cpu), _ = cold_start()
    yield (f"fast: cold start (empty numba cache, ahead-of-time loops {built}): import + step", cold * 1000, "ms")
    yield (f"fast: cold start (empty numba cache, ahead-of-time loops {built}) /cpu", cold_cpu * 1000, "ms")
    say("compiled core, the same on the JIT alone (SCOPA_AOT=0), then a second process")
    (cold, cold_cpu), (warm, warm_cpu) = cold_start(jit_only=True)
    yield ("fast: cold start, JIT only (empty numba cache): import + compile + step", cold * 1000, "ms")
    yield ("fast: cold start, JIT only (empty numba cache) /cpu (whole process)", cold_cpu * 1000, "ms")
    yield ("fast: second process (cache reused): import + load + step", warm * 1000, "ms")
    yield ("fast: second process (cache reused) /cpu (whole process)", warm_cpu * 1000, "ms")


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m scopa_env.bench.fast", description="The compiled core's rows of `scopa bench`."
    )
    parser.add_argument("seconds", nargs="?", type=float, default=3.0, help="seconds per measurement (default 3)")
    seconds = parser.parse_args(argv).seconds
    for name, value, unit in bench_rows(seconds):
        print(
            f"{name:70s} {value:>14,.3f} {unit}" if unit == "ratio" else f"{name:70s} {value:>14,.0f} {unit}",
            flush=True,
        )


if __name__ == "__main__":
    main()
