"""The observer of ``python_scopa``: one player's strings and tensors (OpenSpiel's ``PyObserver``).

The tensors are the kit's observation vector (:func:`~scopa_env.engine.observation.write_observation`,
laid out by :class:`~scopa_env.engine.observation.ObservationLayout`) and, for the information
state, this hand's plays in order; the strings are the position's (:meth:`Position.info_text
<scopa_env.openspiel.position.Position.info_text>`, :meth:`Position.observation_text
<scopa_env.openspiel.position.Position.observation_text>`).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from scopa_env.engine.cards import cards_of
from scopa_env.engine.observation import write_observation
from scopa_env.openspiel.setup import Setup
from scopa_env.openspiel.state import ScopaState


class ScopaObserver:
    """Strings and tensors of one player's point of view (OpenSpiel's ``PyObserver``).

    Two kinds, as OpenSpiel asks for them: ``perfect_recall=False`` (the observation) and
    ``perfect_recall=True`` (the information state), both with the player's own cards.
    """

    def __init__(self, setup: Setup, iig_obs_type) -> None:
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                "python_scopa observes one player's cards and the public cards only "
                "(private_info=SINGLE_PLAYER, public_info=True)"
            )
        self.setup = setup
        self.perfect_recall = iig_obs_type.perfect_recall
        size = setup.layout.size
        pieces = [("observation", size, (size,))]
        if self.perfect_recall:
            plies = setup.plies_per_hand
            cards = setup.num_cards
            pieces.append(("plays", plies * 2 * cards, (plies, 2, cards)))
        self.tensor = np.zeros(sum(width for _, width, _ in pieces), np.float32)
        self.dict = {}
        offset = 0
        for name, width, shape in pieces:
            self.dict[name] = self.tensor[offset : offset + width].reshape(shape)
            offset += width

    def set_from(self, state: ScopaState, player: int) -> None:
        self.tensor.fill(0.0)
        pos = state.position
        game = pos.game
        if game is None:
            return  # a deal in progress: nobody acts
        mine = player == game.current
        write_observation(
            game,
            player,
            self.setup.layout,
            self.dict["observation"],
            select_card=pos.pending if mine else None,
            select_captured=pos.selected if mine else 0,
        )
        if self.perfect_recall:
            plays = self.dict["plays"]
            for ply, (_, card, captured) in enumerate(game.history):
                plays[ply, 0, card] = 1.0
                for c in cards_of(captured):
                    plays[ply, 1, c] = 1.0

    def string_from(self, state: ScopaState, player: int) -> str:
        pos = state.position
        return pos.info_text(player) if self.perfect_recall else pos.observation_text(player)
