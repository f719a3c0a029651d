"""The AEC env's ``env / floor`` ratio in short interleaved rounds, optionally against an older env.

    python benchmarks/env_floor_rounds.py [--before REV] [--rounds 40] [--seconds 0.1]
        [--modes select,move] [--loops bench,issue]
    python benchmarks/env_floor_rounds.py --parts [--rounds 40] [--seconds 0.1] [--modes move]

Each round runs every loop for ``--seconds`` of CPU time on the do-nothing floor
(:class:`scopa_env.bench.env.NullEnv` with PettingZoo's standard wrappers), then on the env
(``scopa_v0.env``, 2 players, one hand per episode, a reset per hand) and, with ``--before``, on
the env of ``scopa_env/aec/scopa_v0.py`` at git revision ``REV`` with its engine adapter
``scopa_env/aec/turns.py`` of the same revision (both loaded from ``git show`` into this process,
so both envs share one engine, one set of observers and one compiled core), the two envs in
alternating order. A round's ratio is its env rate over its floor rate; the median of the rounds' ratios is
printed with their quartiles, and ``paired``, the median of each round's after / before. Rounds
this short, interleaved, let a machine that other jobs load slow every side alike.

Two loops: ``bench`` (``scopa bench``'s: a random legal id from ``np.flatnonzero`` of the mask)
and ``issue`` (the usual PettingZoo loop: ``env.action_space(agent).sample(mask)``).

``--parts`` says where the gap between the env and the floor lies: the issue's loop with a clock
read around each of its calls (``reset``, the ``agent_iter`` step, ``last``, ``sample``, ``step``,
the step that ends a hand apart), interleaved rounds of the floor and the env, and per call the
median over rounds of its microseconds per step (wall clock, the clock reads included alike on
both sides), the env's less the floor's, and that difference's share of the whole gap.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from scopa_env.aec import scopa_v0
from scopa_env.bench.env import NullEnv, _wrapped

ROOT = Path(__file__).resolve().parent.parent


def bench_loop(env, seconds: float, seed: int, rng: np.random.Generator) -> float:
    """Steps per CPU second of ``scopa bench``'s loop: a random legal id from the mask's nonzeros."""
    steps = episodes = 0
    start = time.process_time()
    while time.process_time() < start + seconds:
        env.reset(seed=seed + episodes)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        episodes += 1
    return steps / (time.process_time() - start)


def issue_loop(env, seconds: float, seed: int, rng: np.random.Generator) -> float:
    """Steps per CPU second of the usual PettingZoo loop: ``action_space(agent).sample(mask)``."""
    steps = episodes = 0
    start = time.process_time()
    while time.process_time() < start + seconds:
        env.reset(seed=seed + episodes)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                action = env.action_space(agent).sample(obs["action_mask"])
                steps += 1
            env.step(action)
        episodes += 1
    return steps / (time.process_time() - start)


LOOPS = {"bench": bench_loop, "issue": issue_loop}

PARTS = ("reset", "agent_iter", "last", "sample", "step", "hand_end")
"""The calls of the issue's loop that ``--parts`` times (``hand_end``: the step that ends a hand)."""


def issue_parts(env, seconds: float, seed: int) -> dict[str, float]:
    """The issue's loop for ``seconds`` of wall clock, each call timed: per part of :data:`PARTS` and
    ``total``, microseconds per (non-done) step."""
    clock = time.perf_counter
    spent = dict.fromkeys(PARTS, 0.0)
    steps = episodes = 0
    start = clock()
    while clock() < start + seconds:
        t = clock()
        env.reset(seed=seed + episodes)
        spent["reset"] += clock() - t
        agents = iter(env.agent_iter())
        while True:
            t = clock()
            agent = next(agents, None)
            t_iter = clock()
            spent["agent_iter"] += t_iter - t
            if agent is None:
                break
            obs, _, term, trunc, _ = env.last()
            t_last = clock()
            spent["last"] += t_last - t_iter
            if term or trunc:
                action = None
            else:
                action = env.action_space(agent).sample(obs["action_mask"])
                steps += 1
            t_sample = clock()
            spent["sample"] += t_sample - t_last
            env.step(action)
            elapsed = clock() - t_sample  # before the lookup below, which is not the step's
            spent["hand_end" if action is not None and env.terminations[agent] else "step"] += elapsed
        episodes += 1
    total = clock() - start
    out = {part: value / steps * 1e6 for part, value in spent.items()}
    out["total"] = total / steps * 1e6
    return out


def measure_parts(mode: str, rounds: int, seconds: float) -> dict[str, dict[str, float]]:
    """Per part (and ``total``), the median over interleaved rounds of the floor's and the env's
    microseconds per step."""
    env = scopa_v0.env(num_players=2, action_mode=mode, episode="hand")
    floor = _wrapped(NullEnv(env.unwrapped, max(1, round(steps_per_hand(env)))))
    found: dict[str, dict[str, list[float]]] = {"floor": {}, "env": {}}
    for r in range(rounds):
        sides = ("floor", "env") if r % 2 else ("env", "floor")
        for side in sides:
            for part, value in issue_parts(floor if side == "floor" else env, seconds, r * 1000).items():
                found[side].setdefault(part, []).append(value)
    return {side: {part: statistics.median(v) for part, v in parts.items()} for side, parts in found.items()}


def print_parts(mode: str, medians: dict[str, dict[str, float]]) -> None:
    """The table of :func:`measure_parts`: each part's floor and env microseconds a step, the
    difference and its share of the whole gap."""
    floor, env = medians["floor"], medians["env"]
    gap = env["total"] - floor["total"]
    print(f"{mode}: env / floor {floor['total'] / env['total']:.3f} (medians of the rounds' totals)")
    print(f"  {'part':10s} {'floor us':>9s} {'env us':>9s} {'env-floor':>10s} {'of the gap':>10s}")
    for part in (*PARTS, "total"):
        diff = env[part] - floor[part]
        share = f"{diff / gap:10.0%}" if gap > 0 else f"{'':10s}"
        print(f"  {part:10s} {floor[part]:9.2f} {env[part]:9.2f} {diff:10.2f} {share}", flush=True)


def env_module_at(rev: str):
    """``scopa_env/aec/scopa_v0.py`` at git revision ``rev``, loaded as a module of its own, on the
    engine adapter of the same revision (``scopa_env/aec/turns.py``, where ``rev`` has one)."""
    folder = Path(tempfile.mkdtemp())
    text = _file_at(rev, "scopa_env/aec/scopa_v0.py")
    turns = _file_at(rev, "scopa_env/aec/turns.py", missing_ok=True)
    if turns is not None:
        _load(folder, "scopa_v0_before_turns", turns)
        text = text.replace("from scopa_env.aec.turns import", "from scopa_v0_before_turns import")
    return _load(folder, "scopa_v0_before", text)


def _file_at(rev: str, path: str, missing_ok: bool = False) -> str | None:
    """The text of ``path`` at git revision ``rev`` (None where it has none and ``missing_ok``)."""
    shown = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
    if shown.returncode and missing_ok:
        return None
    shown.check_returncode()
    return shown.stdout


def _load(folder: Path, name: str, text: str):
    """``text`` written into ``folder`` and imported as the module ``name``."""
    path = folder / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def steps_per_hand(env, hands: int = 20) -> float:
    """Mean steps of a hand of random legal play (the floor's episode length)."""
    rng = np.random.default_rng(0)
    steps = 0
    for seed in range(hands):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    return steps / hands


def measure(mode: str, loop: str, modules: dict, rounds: int, seconds: float) -> dict:
    """Per env (``modules``' keys), the rounds' ratios to the floor; with two envs, ``paired``."""
    envs = {name: module.env(num_players=2, action_mode=mode, episode="hand") for name, module in modules.items()}
    first = next(iter(envs.values()))
    floor = _wrapped(NullEnv(first.unwrapped, max(1, round(steps_per_hand(first)))))
    run = LOOPS[loop]
    rng = np.random.default_rng(1)
    ratios: dict[str, list[float]] = {name: [] for name in envs}
    paired: list[float] = []
    for r in range(rounds):
        base = run(floor, seconds, r * 1000, rng)
        order = list(envs) if r % 2 else list(reversed(envs))
        rates = {name: run(envs[name], seconds, r * 1000, rng) for name in order}
        for name, rate in rates.items():
            ratios[name].append(rate / base)
        if len(rates) == 2:
            before, after = (rates[name] for name in envs)
            paired.append(after / before)
    out = {"ratios": ratios}
    if paired:
        out["paired"] = statistics.median(paired)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="git revision of the env to compare with (same process)")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=0.1, help="CPU seconds of each loop per round")
    parser.add_argument("--modes", default="select,move", help="action modes to measure, comma-separated")
    parser.add_argument("--loops", default="bench,issue", help="loops to measure, comma-separated")
    parser.add_argument("--parts", action="store_true", help="time each call of the issue's loop instead")
    args = parser.parse_args()
    if args.parts and args.before:
        parser.error("--parts measures this revision's env only: leave out --before")
    modules = {"before": env_module_at(args.before), "after": scopa_v0} if args.before else {"env": scopa_v0}
    with open("/proc/loadavg") as f:
        print("load average:", f.read().split()[0])
    for mode in args.modes.split(","):
        if args.parts:
            print_parts(mode, measure_parts(mode, args.rounds, args.seconds))
            continue
        for loop in args.loops.split(","):
            found = measure(mode, loop, modules, args.rounds, args.seconds)
            parts = [
                f"{name} {statistics.median(v):.3f} (quartiles {np.quantile(v, 0.25):.3f}-{np.quantile(v, 0.75):.3f})"
                for name, v in found["ratios"].items()
            ]
            if "paired" in found:
                parts.append(f"paired after / before {found['paired']:.3f}")
            print(f"{mode:6s} {loop:5s} " + "; ".join(parts), flush=True)
    with open("/proc/loadavg") as f:
        print("load average:", f.read().split()[0])


if __name__ == "__main__":
    main()
