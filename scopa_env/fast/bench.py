"""Speed of the compiled core (rows of ``scopa bench``; also ``python -m scopa_env.fast.bench``).

* compiled random play: whole standard games of uniformly random legal moves, full
  scoring, one thread (:func:`scopa_env.fast.batch.playout`);
* the Python engine's random play in the same run (:func:`scopa_env.bench.bench_engine`)
  and the ratio;
* the batched step API called from Python, batch 1,024, "select" mode, observations and
  masks written every step; the actions are random legal ones picked with numpy, and
  their cost is included;
* the same in "move" mode (legal move ids instead of masks) and one learner against
  compiled greedy, heuristic and mixed (half greedy, half heuristic) opponents;
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

from scopa_env.fast.batch import BatchedScopa, playout

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


def _batch_steps(action_mode: str, opponent: str | dict[str, float] | None):
    def run(budget: float) -> tuple[int, float, float]:
        b = BatchedScopa(BATCH, 2, action_mode=action_mode, opponent=opponent)
        b.reset(np.arange(BATCH))
        rng = np.random.default_rng(0)
        noise = rng.random((16, BATCH, 41)).astype(np.float32)
        uniform = rng.random((16, BATCH))
        rows = np.arange(BATCH)
        steps = k = 0
        w0, c0 = time.perf_counter(), time.process_time()
        while time.perf_counter() - w0 < budget:
            if action_mode == "select":
                actions = (noise[k & 15] * b.action_mask).argmax(1)
            else:
                actions = b.legal_ids[rows, (uniform[k & 15] * b.legal_count).astype(np.int64)]
            b.step(actions)
            steps += BATCH
            k += 1
        return steps, time.perf_counter() - w0, time.process_time() - c0

    return run


def cold_start() -> list[tuple[float, float]]:
    """``(wall, cpu)`` seconds to import, compile and step in a fresh process with an empty
    numba cache, then in a second fresh process on that cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
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


def estimate_fast_seconds(seconds: float) -> float:
    """Wall time of :func:`bench_rows`: random play, the engine, each batch case, the cold starts."""
    return seconds * (2 + len(BATCH_CASES)) + COLD_START_SECONDS


def bench_rows(seconds: float = 3.0, progress=None) -> list[tuple[str, float, str]]:
    """The compiled core's benchmark rows ``(name, value, unit)`` for ``scopa bench``
    (``progress(label)`` is called before each step)."""
    from scopa_env.bench import bench_engine

    say = progress or (lambda label: None)
    rows: list[tuple[str, float, str]] = []
    say("compiled core, random play (compiles first when the cache is empty)")
    wall, cpu = _best(_random_play, seconds)
    rows.append(("fast: random play, standard, 2 players, 1 thread", wall, "moves/s"))
    rows.append(("fast: random play, standard, 2 players, 1 thread /cpu", cpu, "moves/s"))
    say("Python engine, random play, 2 players (for the ratio)")
    engine = max(bench_engine(seconds / ROUNDS, num_players=2, seed=r)["moves_per_s"] for r in range(ROUNDS))
    rows.append(("python engine: random play, 2 players (same run)", engine, "moves/s"))
    rows.append(("fast / python engine, random play", wall / engine, "ratio"))
    for mode, opponent, label in BATCH_CASES:
        say(f"compiled core, {label}")
        wall, cpu = _best(_batch_steps(mode, opponent), seconds)
        rows.append((f"fast: {label}", wall, "steps/s"))
        rows.append((f"fast: {label} /cpu", cpu, "steps/s"))
    say("compiled core, cold start in a fresh process with an empty cache, then a second process")
    (cold, cold_cpu), (warm, warm_cpu) = cold_start()
    rows.append(("fast: cold start (empty numba cache): import + compile + step", cold * 1000, "ms"))
    rows.append(("fast: cold start (empty numba cache) /cpu (whole process)", cold_cpu * 1000, "ms"))
    rows.append(("fast: second process (cache reused): import + load + step", warm * 1000, "ms"))
    rows.append(("fast: second process (cache reused) /cpu (whole process)", warm_cpu * 1000, "ms"))
    return rows


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    for name, value, unit in bench_rows(seconds):
        print(f"{name:70s} {value:>14,.3f} {unit}" if unit == "ratio" else f"{name:70s} {value:>14,.0f} {unit}")


if __name__ == "__main__":
    main()
