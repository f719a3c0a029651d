"""The ``random`` baseline: a uniformly random legal move."""

from __future__ import annotations

from agents.base import Agent
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move


class RandomAgent(Agent):
    """Plays a legal move drawn uniformly from ``view.legal_moves()`` with ``self.rng``."""

    name = "random"

    def act(self, view: PlayerView) -> Move:
        moves = view.legal_moves()
        if not moves:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        return moves[int(self.rng.integers(len(moves)))]
