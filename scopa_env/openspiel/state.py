"""The OpenSpiel state of ``python_scopa``: :class:`ScopaState`, a ``pyspiel.State`` over a position.

The transitions, chance outcomes, returns and strings are the :class:`~scopa_env.openspiel.position.Position`'s
(plain Python); this shell gives them OpenSpiel's names, and resamples the hidden cards for
ISMCTS-style search (:mod:`scopa_env.openspiel.resample`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyspiel

from scopa_env.engine.game import Game
from scopa_env.openspiel.position import Position
from scopa_env.openspiel.resample import resampled_position


class ScopaState(pyspiel.State):
    """The OpenSpiel state: a shell over a :class:`Position`."""

    def __init__(self, game: pyspiel.Game, position: Position | None = None) -> None:
        super().__init__(game)
        self._pos = position if position is not None else Position.initial(game.setup)

    @property
    def position(self) -> Position:
        """The position (read it; change it only through ``apply_action``)."""
        return self._pos

    @property
    def engine(self) -> Game | None:
        """The engine's game of the hand being played (``None`` while it is dealt). Read only."""
        return self._pos.game

    def current_player(self) -> int:
        return self._pos.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        return self._pos.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._pos.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self._pos.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return self._pos.action_text(player, int(action))

    def is_terminal(self) -> bool:
        return self._pos.over

    def returns(self) -> list[float]:
        pos = self._pos
        return pos.returns[:] if pos.over else [0.0] * pos.setup.num_players

    def __str__(self) -> str:
        return str(self._pos)

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float] | None = None):
        """A state ``player_id`` cannot tell from this one: the cards it cannot see dealt again.

        Args:
            player_id: the seat whose information is kept.
            probability_sampler: OpenSpiel's sampler (a callable returning a float in [0, 1));
                called once, to seed the deal. ``None`` uses fresh entropy.

        Raises:
            ValueError: at a chance node (a deal in progress) or at the end.
        """
        pos = self._pos
        if pos.game is None or pos.over:
            raise ValueError("resample_from_infostate needs a decision node (not a deal in progress or the end)")
        seed = None if probability_sampler is None else int(probability_sampler() * 2**53)
        return self.get_game().state_at(resampled_position(pos, player_id, np.random.default_rng(seed)))
