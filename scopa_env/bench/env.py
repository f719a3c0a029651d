"""Speed benchmarks (``scopa bench``): numbers and ratios, never timed tests.

* engine: random legal play through :class:`~scopa_env.engine.game.Game` (legal moves,
  a uniform choice, the move), whole games back to back, hand scoring included;
* env: the same random play through ``scopa_v0.env()`` with PettingZoo's standard
  wrappers, driven by the usual ``agent_iter`` / ``last`` / ``step`` loop that picks a
  random legal action from the observation's mask;
* floor: that loop on a do-nothing AEC env (:class:`NullEnv`) with the same wrappers and
  the same observation and mask shapes, which returns the same preallocated arrays on every
  ``observe``: the cost of the API itself. ``env / floor`` is the
  share of the API's speed the Scopa env keeps.

Each also comes as a ``/cpu`` row, counted in the process's CPU time: on a machine that
other jobs load, the rate one whole core gives, the figure to compare between runs.

:func:`run_all` takes a ``progress`` callback (called with each step's label before it
runs) and an ``on_row`` callback (called with each row as soon as it is measured), and
:func:`estimate_seconds` says how long it will take, so ``scopa bench`` can tell the user
before the minutes it runs and print every row as it finishes.

Shared machines swing absolute rates by 3x, so every row also carries ``vs_ref``: its
ratio to a fixed pure-Python reference loop (:func:`reference_rate`, code that no change
to the kit makes faster) measured just before and just after the step that made the row.
Rates are divided by the reference rate; times (unit ``ms``) are multiplied by it (the
time in reference-loop units); rows that are already ratios of two same-run rates have
no ``vs_ref`` (NaN). Rows whose name ends in ``/cpu`` use the reference's CPU-time rate.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from scopa_env.aec import scopa_v0
from scopa_env.engine.game import Game
from scopa_env.engine.modes import ACTION_MODES
from scopa_env.fast.observers import observers_for

HAND_MOVES = 36


class Row(NamedTuple):
    """One benchmark result."""

    name: str
    value: float
    unit: str
    vs_ref: float = float("nan")
    """``value`` against the reference loop measured in the same run (see the module docstring)."""


REFERENCE_SECONDS = 0.5
"""The most a reference measurement takes (it is measured twice per step)."""


def reference_rate(seconds: float = REFERENCE_SECONDS) -> tuple[float, float]:
    """``(wall, cpu)`` iterations per second of a fixed pure-Python loop (dict and list
    work, like the engine's), the yardstick every row is divided by."""
    table = {k: k * 7 % 13 for k in range(64)}
    count = 0
    w0, c0 = time.perf_counter(), time.process_time()
    while True:
        acc = 0
        for k in range(64):
            acc += table[k] & (k | 3)
        count += 64
        if time.perf_counter() - w0 > seconds:
            break
    return count / (time.perf_counter() - w0), count / max(time.process_time() - c0, 1e-9)


def with_reference(row: tuple, ref: tuple[float, float]) -> Row:
    """``row`` ``(name, value, unit)`` with its ``vs_ref`` against the reference rates ``ref``."""
    name, value, unit = row[:3]
    rate = ref[1] if name.endswith("/cpu") else ref[0]
    if unit == "ratio":
        vs = float("nan")
    elif unit == "ms":
        vs = value / 1000 * rate
    else:
        vs = value / rate
    return Row(name, value, unit, vs)


def _rates(what: str, count: int, start: float, cpu_start: float) -> dict:
    """Seconds since ``start`` and ``count`` per wall-clock and per CPU second (``<what>_per_s[_cpu]``)."""
    elapsed = time.perf_counter() - start
    cpu = max(time.process_time() - cpu_start, 1e-9)
    return {"seconds": elapsed, f"{what}_per_s": count / elapsed, f"{what}_per_s_cpu": count / cpu}


def bench_engine(seconds: float = 3.0, num_players: int = 2, rules=None, seed: int = 0) -> dict:
    """Moves per second of random legal play through the Python engine."""
    rnd = random.Random(seed)
    moves = games = 0
    game = Game(num_players, rules, seed=seed)
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(256):
            if game.winner is not None:
                games += 1
                game = Game(num_players, rules, seed=seed + games)
            pairs = game.legal_pairs()
            card, mask = pairs[rnd.randrange(len(pairs))]
            game.play_pair(card, mask)
        moves += 256
        if time.perf_counter() > deadline:
            break
    return {"moves": moves, "games": games, **_rates("moves", moves, start, cpu)}


def _aec_loop(env: AECEnv, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = episodes = 0
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
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
    return {"steps": steps, "episodes": episodes, **_rates("steps", steps, start, cpu)}


class NullEnv(AECEnv):
    """A do-nothing AEC env with Scopa's spaces: three legal actions, fixed episode length.

    It does nothing per step that the API does not make it do: :meth:`observe` returns the same
    dict of the same two arrays every time (an all-zero observation, a mask with the first three
    ids legal), made once in ``__init__``, so no step allocates an observation or a mask. An
    earlier floor allocated both on every call, which made it slower and the env's ``env / floor``
    ratio kinder than the API's own cost warrants. The real env must return new arrays (its users
    may keep an observation); the floor need not, which is the point of a floor.
    """

    metadata = {"render_modes": [], "name": "null_v0", "is_parallelizable": False}

    def __init__(self, like: AECEnv, episode_steps: int) -> None:
        super().__init__()
        self.possible_agents = list(like.possible_agents)
        self.observation_spaces = {a: like.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: like.action_space(a) for a in self.possible_agents}
        space = self.observation_spaces[self.possible_agents[0]]
        mask = np.zeros(space["action_mask"].shape[0], dtype=np.int8)
        mask[:3] = 1
        self._observation = {
            "observation": np.zeros(space["observation"].shape[0], dtype=np.float32),
            "action_mask": mask,
        }
        self._episode_steps = episode_steps

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._t = 0
        self.agent_selection = self.agents[0]

    def observe(self, agent):
        return self._observation  # made once: a do-nothing env allocates nothing per step

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._t += 1
        if self._t >= self._episode_steps:
            self.terminations = dict.fromkeys(self.agents, True)
        i = self.agents.index(agent)
        self.agent_selection = self.agents[(i + 1) % len(self.agents)]
        self._accumulate_rewards()


def _wrapped(e: AECEnv) -> AECEnv:
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def bench_env(
    seconds: float = 3.0, num_players: int = 2, action_mode: str = "move", seed: int = 0, rounds: int = 3
) -> dict:
    """Steps per second of the wrapped env and of the do-nothing floor, and their ratio.

    The two loops alternate for ``rounds`` rounds and the best round of each counts,
    so a busy machine slows both alike. The ``_cpu`` entries count the process's CPU
    time instead of the wall clock (best rounds by CPU rate).
    """
    real = scopa_v0.env(num_players=num_players, action_mode=action_mode, episode="hand")
    first = _aec_loop(real, seconds / rounds, seed)
    steps_per_hand = first["steps"] / max(first["episodes"], 1)
    floor = _wrapped(NullEnv(real.unwrapped, max(1, round(steps_per_hand))))
    env_runs, floor_runs = [first], []
    for r in range(rounds):
        floor_runs.append(_aec_loop(floor, seconds / rounds, seed))
        if r:
            env_runs.append(_aec_loop(real, seconds / rounds, seed + r))
    env_wall, env_cpu = (max(run[k] for run in env_runs) for k in ("steps_per_s", "steps_per_s_cpu"))
    floor_wall, floor_cpu = (max(run[k] for run in floor_runs) for k in ("steps_per_s", "steps_per_s_cpu"))
    return {
        "env_steps_per_s": env_wall,
        "floor_steps_per_s": floor_wall,
        "ratio": env_wall / floor_wall,
        "env_steps_per_s_cpu": env_cpu,
        "floor_steps_per_s_cpu": floor_cpu,
        "ratio_cpu": env_cpu / floor_cpu,
    }


PLAYER_COUNTS = (2, 4)
ENV_ROUNDS = 3


def reference_seconds(seconds: float) -> float:
    """One reference measurement: a sixth of a step's ``seconds``, at most :data:`REFERENCE_SECONDS`."""
    return min(REFERENCE_SECONDS, seconds / 6)


def estimate_seconds(seconds: float, steps: int = 0) -> float:
    """Wall time of :func:`run_all` with ``steps`` more steps from extras (their own time
    not included): each engine row takes ``seconds``, each env mode twice that (the env's
    first round, then alternating rounds of floor and env), and every step two reference
    measurements."""
    own = len(PLAYER_COUNTS) + len(ACTION_MODES)
    return seconds * (len(PLAYER_COUNTS) + 2 * len(ACTION_MODES)) + 2 * reference_seconds(seconds) * (own + steps)


def run_all(
    seconds: float = 3.0,
    extra: list[Callable[..., Iterable[tuple]]] | None = None,
    progress: Callable[[str], None] | None = None,
    on_row: Callable[[Row], None] | None = None,
) -> list[Row]:
    """Every benchmark as :class:`Row` s.

    Args:
        seconds: time per measurement.
        extra: more row makers, called as ``fn(seconds, progress=progress)``; they return
            (or yield, to be shown as they come) ``(name, value, unit)`` rows and call
            ``progress`` before each step.
        progress: called with a label before each step.
        on_row: called with each row as soon as it is measured.
    """
    say = progress or (lambda label: None)
    ref_seconds = reference_seconds(seconds)
    rows: list[Row] = []
    # The reference is measured when a step starts (progress) and when its first row comes.
    state: dict = {"before": None, "ref": None}

    def step(label: str) -> None:
        say(label)
        state["before"], state["ref"] = reference_rate(ref_seconds), None

    def emit(row: tuple) -> None:
        if state["ref"] is None:
            after = reference_rate(ref_seconds)
            before = state["before"] or after
            state["ref"] = ((before[0] + after[0]) / 2, (before[1] + after[1]) / 2)
        out = with_reference(row, state["ref"])
        rows.append(out)
        if on_row is not None:
            on_row(out)

    for n in PLAYER_COUNTS:
        step(f"Python engine, random play, {n} players")
        r = bench_engine(seconds, num_players=n)
        emit((f"engine random play, {n} players", r["moves_per_s"], "moves/s"))
        if "moves_per_s_cpu" in r:  # stand-ins (tests) may give the wall rate only
            emit((f"engine random play, {n} players /cpu", r["moves_per_s_cpu"], "moves/s"))
    observer = "compiled" if observers_for(scopa_v0.raw_env().layout).ahead_of_time else "Python"
    capture = "compiled" if scopa_v0.raw_env(action_mode="select").turns.compiled else "Python"
    for mode in ACTION_MODES:
        paths = f"observations: {observer}" + (f"; a named card's capture: {capture}" if mode == "select" else "")
        step(f"AEC env and the do-nothing floor, {mode} mode ({paths})")
        r = bench_env(seconds, action_mode=mode, rounds=ENV_ROUNDS)
        emit((f"AEC env + wrappers, {mode} mode", r["env_steps_per_s"], "steps/s"))
        emit((f"do-nothing AEC floor, {mode} mode", r["floor_steps_per_s"], "steps/s"))
        emit((f"env / floor, {mode} mode", r["ratio"], "ratio"))
        if "ratio_cpu" in r:
            emit((f"AEC env + wrappers, {mode} mode /cpu", r["env_steps_per_s_cpu"], "steps/s"))
            emit((f"do-nothing AEC floor, {mode} mode /cpu", r["floor_steps_per_s_cpu"], "steps/s"))
            emit((f"env / floor, {mode} mode /cpu", r["ratio_cpu"], "ratio"))
    for fn in extra or []:
        for row in fn(seconds, progress=step):
            emit(row)
    return rows
