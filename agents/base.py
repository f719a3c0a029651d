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
from scopa_env.engine.rules import Move, Rules, get_rules


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


class TrainedAgent(Agent):
    """An agent whose weights were trained for one game: it sets ``num_players`` and ``rules`` and
    says through :meth:`mismatch` why it cannot play another (the check ``scopa play``, ``scopa eval``
    and the web app make before a game)."""

    num_players: int
    rules: Rules

    def mismatch(self, num_players: int, rules) -> str | None:
        """Why this agent cannot play ``num_players`` under ``rules`` (``None`` when it can)."""
        rules = get_rules(rules)
        if num_players == self.num_players and rules == self.rules:
            return None
        return (
            f"{self.name} was trained for {self.num_players} players with rules {self.rules.name!r}, "
            f"not {num_players} players with {rules.name!r}"
        )
