"""The agent interface shared by evaluation, training opponents and human play.

An agent sees one seat's :class:`~scopa_env.engine.game.PlayerView` (its information set:
own hand, table, every capture so far, scores, stock size, what each player played)
and returns a legal :class:`~scopa_env.engine.rules.Move`. It never sees other hands or the
stock order, so its decision cannot depend on them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move


class Agent(ABC):
    """Base class of every agent.

    Args:
        seed: seeds the agent's own generator (tie-breaks, sampling). Agents draw
            randomness from ``self.rng`` only.
    """

    name: str = "agent"
    weights_sha256: str | None = None
    """SHA-256 of the weights file the agent plays, where it is a checked checkpoint (a ``zoo:``
    agent); a suite's ladder pins its trained references by it (:mod:`agents.suites`)."""

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; reseeds the generator when ``seed`` is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, view: PlayerView) -> Move:
        """Choose a legal move for ``view.seat`` (it is that seat's turn)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
