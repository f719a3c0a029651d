"""Who plays the other seats: weighted mixtures, a curriculum and a self-play pool.

* **Mixture**: ``{"heuristic": 0.7, "greedy": 0.3}``; each opponent seat draws an agent
  spec (anything :func:`agents.registry.make_agent` accepts, checkpoints included) with
  these weights, once per episode.
* **Curriculum**: :class:`Curriculum` holds stages (e.g. random, then greedy, then
  heuristic) and moves to the next one when the learner's evaluated game win rate against
  the current stage reaches a threshold; the trainer then calls
  :meth:`OpponentSampler.set_weights` in every env (``VecEnv.env_method``).
* **Self-play pool**: past checkpoints of the learner, added with
  :meth:`OpponentSampler.add_checkpoint`; with probability ``pool_fraction`` a seat is
  played by one of the last ``pool_size`` checkpoints (uniformly) instead of the mixture.

All draws come from the generator the env passes in, and each drawn agent is reseeded
from it, so a seeded env replays the same opponents.

A cheating agent (the ``oracle``, which sees every card) is never an opponent: the learner would
train against play it can never meet, and the harness hands views only. :func:`normalize_weights`
refuses it by spec and :meth:`OpponentSampler.agent` by the agent built
(:func:`agents.registry.check_fair`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agents.base import Agent

CHECKPOINT_PREFIXES = ("ppo", "dqn")
TRAINING_ROLE = "a training opponent (the learner only ever sees views)"
"""What a cheating agent cannot be, in the refusals of this module and the training configs."""
_CHECKPOINT_AGENTS: dict[str, Agent] = {}
"""Loaded checkpoint agents of this process (they hold no per-game state)."""


def normalize_weights(weights: str | list[str] | dict[str, float]) -> dict[str, float]:
    """``"greedy"`` / ``["random", "greedy"]`` / ``{"greedy": 2}`` -> ``{spec: weight}`` (checked)."""
    if isinstance(weights, str):
        weights = {weights: 1.0}
    elif isinstance(weights, (list, tuple)):
        weights = dict.fromkeys(weights, 1.0)
    if not isinstance(weights, dict) or not weights:
        raise ValueError(f"opponents must be an agent spec, a list of specs or a {{spec: weight}} map, got {weights!r}")
    out = {}
    for spec, w in weights.items():
        if not isinstance(spec, str) or isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise ValueError(f"bad opponent weight {spec!r}: {w!r} (need a spec and a weight >= 0)")
        out[spec] = float(w)
    if sum(out.values()) <= 0:
        raise ValueError(f"opponent weights sum to zero: {out}")
    check_fair_specs(out, TRAINING_ROLE)
    return out


def check_fair_specs(specs, role: str = TRAINING_ROLE) -> None:
    """Refuse a cheating agent (the ``oracle``) among ``specs`` with one line naming it and ``role``."""
    from agents.registry import check_fair

    for spec in specs:
        if isinstance(spec, str):
            check_fair(spec, role)


class OpponentSampler:
    """Draws the agent of each opponent seat, per episode. See the module docstring.

    Args:
        weights: the mixture (see :func:`normalize_weights`).
        pool_fraction: probability that a seat is played by a self-play checkpoint (once
            the pool is not empty).
        pool_size: how many of the latest checkpoints the pool keeps.
    """

    def __init__(
        self, weights: str | list[str] | dict[str, float] = "random", pool_fraction: float = 0.0, pool_size: int = 5
    ) -> None:
        if not 0.0 <= pool_fraction <= 1.0:
            raise ValueError(f"pool_fraction must be in [0, 1], got {pool_fraction!r}")
        self.set_weights(weights)
        self.pool_fraction = pool_fraction
        self.pool_size = pool_size
        self.pool: list[str] = []
        self._agents: dict[str, Agent] = {}

    def set_weights(self, weights: str | list[str] | dict[str, float]) -> None:
        self.weights = normalize_weights(weights)
        self._specs = list(self.weights)
        p = np.array(list(self.weights.values()))
        self._p = p / p.sum()

    def add_checkpoint(self, spec: str) -> None:
        """Add a checkpoint agent spec (``ppo:PATH`` / ``dqn:PATH``) to the self-play pool."""
        self.pool.append(spec)
        del self.pool[: -self.pool_size]

    def agent(self, spec: str) -> Agent:
        """The (cached) agent of a spec; checkpoints are loaded once per process."""
        if spec not in self._agents:
            from agents.registry import check_fair, make_agent

            check_fair(spec, TRAINING_ROLE)
            agent = make_agent(spec)
            agent.spec = spec
            check_fair(agent, TRAINING_ROLE)
            self._agents[spec] = agent
        return self._agents[spec]

    def sample(self, rng: np.random.Generator) -> Agent:
        if self.pool and self.pool_fraction > 0 and rng.random() < self.pool_fraction:
            spec = self.pool[int(rng.integers(len(self.pool)))]
        elif len(self._specs) == 1:
            spec = self._specs[0]
        else:
            spec = self._specs[int(rng.choice(len(self._specs), p=self._p))]
        agent = self.agent(spec)
        agent.reset(seed=int(rng.integers(2**31)))
        return agent


@dataclass
class Curriculum:
    """Opponent stages, advanced when the evaluated game win rate reaches ``threshold``.

    Args:
        stages: agent specs in order, e.g. ``["random", "greedy", "heuristic"]``.
        threshold: game win rate against the current stage that moves to the next one.
        stage: the current stage index (saved with checkpoints, so resuming keeps it).
    """

    stages: list[str]
    threshold: float = 0.6
    stage: int = 0
    history: list[tuple[int, int]] = field(default_factory=list)
    """``(timestep, stage)`` of every switch."""

    @property
    def current(self) -> str:
        return self.stages[self.stage]

    def update(self, win_rate: float, timestep: int) -> bool:
        """Advance when ``win_rate`` against the current stage reaches the threshold; True if it did."""
        if win_rate >= self.threshold and self.stage + 1 < len(self.stages):
            self.stage += 1
            self.history.append((timestep, self.stage))
            return True
        return False
