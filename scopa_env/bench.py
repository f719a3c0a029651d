"""Speed benchmarks (``scopa bench``): numbers and ratios, never timed tests.

* engine: random legal play through :class:`~scopa_env.game.Game` (legal moves,
  a uniform choice, the move), whole games back to back, hand scoring included;
* env: the same random play through ``scopa_v0.env()`` with PettingZoo's standard
  wrappers, driven by the usual ``agent_iter`` / ``last`` / ``step`` loop that picks a
  random legal action from the observation's mask;
* floor: that loop on a do-nothing AEC env with the same wrappers and the same
  observation and mask shapes: the cost of the API itself. ``env / floor`` is the
  share of the API's speed the Scopa env keeps.

:func:`run_all` takes a ``progress`` callback (called with each step's label before it
runs) and :func:`estimate_seconds` says how long it will take, so ``scopa bench`` can tell
the user before the minutes it runs.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from scopa_env import scopa_v0
from scopa_env.game import Game

HAND_MOVES = 36


def bench_engine(seconds: float = 3.0, num_players: int = 2, rules=None, seed: int = 0) -> dict:
    """Moves per second of random legal play through the Python engine."""
    rnd = random.Random(seed)
    moves = games = 0
    game = Game(num_players, rules, seed=seed)
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
    elapsed = time.perf_counter() - start
    return {"moves": moves, "games": games, "seconds": elapsed, "moves_per_s": moves / elapsed}


def _aec_loop(env: AECEnv, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = episodes = 0
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
    elapsed = time.perf_counter() - start
    return {"steps": steps, "episodes": episodes, "seconds": elapsed, "steps_per_s": steps / elapsed}


class NullEnv(AECEnv):
    """A do-nothing AEC env with Scopa's spaces: three legal actions, fixed episode length."""

    metadata = {"render_modes": [], "name": "null_v0", "is_parallelizable": False}

    def __init__(self, like: AECEnv, episode_steps: int) -> None:
        super().__init__()
        self.possible_agents = list(like.possible_agents)
        self.observation_spaces = {a: like.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: like.action_space(a) for a in self.possible_agents}
        space = self.observation_spaces[self.possible_agents[0]]
        self._obs_size = space["observation"].shape[0]
        self._mask_size = space["action_mask"].shape[0]
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
        mask = np.zeros(self._mask_size, dtype=np.int8)
        mask[:3] = 1
        return {"observation": np.zeros(self._obs_size, dtype=np.float32), "action_mask": mask}

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
    so a busy machine slows both alike.
    """
    real = scopa_v0.env(num_players=num_players, action_mode=action_mode, episode="hand")
    first = _aec_loop(real, seconds / rounds, seed)
    steps_per_hand = first["steps"] / max(first["episodes"], 1)
    floor = _wrapped(NullEnv(real.unwrapped, max(1, round(steps_per_hand))))
    env_best = first["steps_per_s"]
    floor_best = 0.0
    for r in range(rounds):
        floor_best = max(floor_best, _aec_loop(floor, seconds / rounds, seed)["steps_per_s"])
        if r:
            env_best = max(env_best, _aec_loop(real, seconds / rounds, seed + r)["steps_per_s"])
    return {"env_steps_per_s": env_best, "floor_steps_per_s": floor_best, "ratio": env_best / floor_best}


PLAYER_COUNTS = (2, 4)
ACTION_MODES = ("move", "select")
ENV_ROUNDS = 3


def estimate_seconds(seconds: float) -> float:
    """Wall time of :func:`run_all` without extras: each engine row takes ``seconds``, each
    env mode twice that (the env's first round, then alternating rounds of floor and env)."""
    return seconds * (len(PLAYER_COUNTS) + 2 * len(ACTION_MODES))


def run_all(
    seconds: float = 3.0,
    extra: list[Callable[..., list[tuple[str, float, str]]]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list:
    """Every benchmark as ``(name, value, unit)`` rows.

    Args:
        seconds: time per measurement.
        extra: more row makers, called as ``fn(seconds, progress=progress)``.
        progress: called with a label before each step.
    """
    say = progress or (lambda label: None)
    rows: list[tuple[str, float, str]] = []
    for n in PLAYER_COUNTS:
        say(f"Python engine, random play, {n} players")
        r = bench_engine(seconds, num_players=n)
        rows.append((f"engine random play, {n} players", r["moves_per_s"], "moves/s"))
    for mode in ACTION_MODES:
        say(f"AEC env and the do-nothing floor, {mode} mode")
        r = bench_env(seconds, action_mode=mode, rounds=ENV_ROUNDS)
        rows.append((f"AEC env + wrappers, {mode} mode", r["env_steps_per_s"], "steps/s"))
        rows.append((f"do-nothing AEC floor, {mode} mode", r["floor_steps_per_s"], "steps/s"))
        rows.append((f"env / floor, {mode} mode", r["ratio"], "ratio"))
    for fn in extra or []:
        rows.extend(fn(seconds, progress=progress))
    return rows
