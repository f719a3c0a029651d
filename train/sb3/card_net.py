"""A card-wise policy network for "select" mode (``policy_net: cards``).

The flat MLP sees the observation as 376 unrelated numbers and must learn the worth of
each of the 40 cards separately (52 with the 52-card deck of ``french_52``: every width
below is the deck's, read off the action space, 41 or 53 actions). This network reads the observation the way it is laid
out (:mod:`scopa_env.engine.observation`): every card-wide plane (hand, table, piles, played,
unseen, the pending selection, revealed hands) gives each card a column of flags, and
each card also carries its rank and suit (one-hot). One shared MLP embeds every card
from its column (so what it learns about a Seven of coins in a pile carries over to the
Seven of coins on the table or in hand), the embeddings are summed with the remaining
entries (scope, scores, counts, seats, phase) into a state vector, and

* the logit of "select card ``c``" (actions 0-39, or 0-51) is a small MLP of card ``c``'s
  embedding and the state vector (a pointer network: the same weights score every card),
* the logit of "confirm" (action 40, or 52) and the value are read from the state vector.

It is an SB3 policy (:class:`CardPolicy`, a ``MaskableActorCriticPolicy`` through
:class:`train.sb3.masked_policy.MaskedPolicy`'s cheaper rollout step), so MaskablePPO trains,
saves, loads and masks it as usual.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from scopa_env.engine.cards import FRENCH_RANKS, NUM_CARDS, NUM_SUITS, RANK_OF, SUIT_OF
from scopa_env.engine.observation import ObservationLayout
from train.sb3.masked_policy import MaskedPolicy

PLANE_FIELDS = ("hand", "table", "own_pile", "other_piles", "played", "unseen", "select_card", "select_captured")
"""Card-wide fields of the observation (``revealed`` too when the rules have declarations)."""


def card_layout(layout: ObservationLayout) -> dict[str, list[int]]:
    """Indices of the card planes (``planes[k * 40 + c]``: plane ``k``, card ``c``; ``k * 52 + c`` with
    the 52-card deck) and of the other entries."""
    planes: list[int] = []
    for name in (*PLANE_FIELDS, "revealed"):
        if name in layout.slices:
            planes.extend(range(layout[name].start, layout[name].stop))
    taken = set(planes)
    return {"planes": planes, "globals": [i for i in range(layout.size) if i not in taken]}


def num_ranks(num_cards: int) -> int:
    """Ranks per suit of a deck of ``num_cards`` card ids (10, or 13 for the 52-card deck)."""
    if num_cards not in (NUM_CARDS, NUM_SUITS * FRENCH_RANKS):
        raise ValueError(f"a deck has 40 or 52 card ids, got {num_cards}")
    return num_cards // NUM_SUITS


def card_identity(num_cards: int = NUM_CARDS) -> torch.Tensor:
    """``(40, 14)``: rank one-hot (10) and suit one-hot (4) of every card id; ``(52, 17)`` for
    the 52-card deck (13 ranks)."""
    ranks = num_ranks(num_cards)
    ident = np.zeros((num_cards, ranks + NUM_SUITS), np.float32)
    for c in range(num_cards):
        ident[c, RANK_OF[c] - 1] = 1.0
        ident[c, ranks + SUIT_OF[c]] = 1.0
    return torch.as_tensor(ident)


class CardSetExtractor(BaseFeaturesExtractor):
    """Features ``[state (trunk), card embeddings (num_cards * embed)]`` (see the module docstring)."""

    def __init__(
        self,
        observation_space: spaces.Box,
        planes: list[int],
        globals_: list[int],
        embed: int,
        trunk: int,
        num_cards: int = NUM_CARDS,
    ):
        super().__init__(observation_space, features_dim=trunk + num_cards * embed)
        ranks = num_ranks(num_cards)
        if len(planes) % num_cards:
            raise ValueError(f"card planes must be whole {num_cards}-card planes, got {len(planes)} entries")
        self.register_buffer("planes", torch.as_tensor(planes, dtype=torch.long), persistent=False)
        self.register_buffer("globals_", torch.as_tensor(globals_, dtype=torch.long), persistent=False)
        self.register_buffer("identity", card_identity(num_cards), persistent=False)
        self.num_cards = num_cards
        self.num_planes = len(planes) // num_cards
        self.embed_dim = embed
        self.card_mlp = nn.Sequential(
            nn.Linear(self.num_planes + ranks + NUM_SUITS, embed), nn.ReLU(), nn.Linear(embed, embed), nn.ReLU()
        )
        self.trunk = nn.Sequential(
            nn.Linear(embed + len(globals_), trunk), nn.ReLU(), nn.Linear(trunk, trunk), nn.ReLU()
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        b = obs.shape[0]
        cols = obs[:, self.planes].view(b, self.num_planes, self.num_cards).transpose(1, 2)  # (B, cards, P)
        x = torch.cat([cols, self.identity.expand(b, -1, -1)], dim=2)
        h = self.card_mlp(x)  # (B, cards, embed)
        state = self.trunk(torch.cat([h.sum(dim=1), obs[:, self.globals_]], dim=1))
        return torch.cat([state, h.reshape(b, -1)], dim=1)


class CardLogits(nn.Module):
    """Logits of the 41 "select" actions (53 with the 52-card deck) from ``[state, card embeddings]``."""

    def __init__(self, trunk: int, embed: int, hidden: int = 64, num_cards: int = NUM_CARDS) -> None:
        super().__init__()
        self.trunk_dim, self.embed_dim, self.num_cards = trunk, embed, num_cards
        self.card_part = nn.Linear(embed, hidden)
        self.state_part = nn.Linear(trunk, hidden)
        self.out = nn.Linear(hidden, 1)
        self.confirm = nn.Linear(trunk, 1)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        state = latent[:, : self.trunk_dim]
        h = latent[:, self.trunk_dim :].view(latent.shape[0], self.num_cards, self.embed_dim)
        z = torch.relu(self.card_part(h) + self.state_part(state).unsqueeze(1))
        return torch.cat([self.out(z).squeeze(2), self.confirm(state)], dim=1)


class StateValue(nn.Module):
    """The value from the state part of the features."""

    def __init__(self, trunk: int) -> None:
        super().__init__()
        self.trunk_dim = trunk
        self.net = nn.Sequential(nn.Linear(trunk, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return self.net(latent[:, : self.trunk_dim])


class CardPolicy(MaskedPolicy):
    """MaskablePPO policy with the card-wise network (see the module docstring).

    Args:
        observation_space, action_space, lr_schedule: as for any SB3 policy.
        planes, globals_: observation indices, from :func:`card_layout`.
        embed: width of a card's embedding.
        trunk: width of the state vector.
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        action_space: spaces.Discrete,
        lr_schedule,
        planes: list[int],
        globals_: list[int],
        embed: int = 64,
        trunk: int = 256,
        **kwargs: Any,
    ) -> None:
        num_cards = int(action_space.n) - 1
        if num_cards not in (NUM_CARDS, NUM_SUITS * FRENCH_RANKS):
            raise ValueError(
                f'the card-wise policy is for "select" mode (41 actions, or 53 with the 52-card deck), '
                f"got {action_space.n} actions"
            )
        self.num_cards = num_cards
        self.card_args = {"planes": list(planes), "globals_": list(globals_), "embed": embed, "trunk": trunk}
        kwargs.pop("net_arch", None)
        super().__init__(
            observation_space,
            action_space,
            lr_schedule,
            net_arch=[],
            features_extractor_class=CardSetExtractor,
            features_extractor_kwargs={**self.card_args, "num_cards": num_cards},
            **kwargs,
        )

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        trunk, embed = self.card_args["trunk"], self.card_args["embed"]
        self.action_net = CardLogits(trunk, embed, num_cards=self.num_cards)
        self.value_net = StateValue(trunk)
        nn.init.orthogonal_(self.action_net.out.weight, gain=0.01)
        nn.init.orthogonal_(self.action_net.confirm.weight, gain=0.01)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        for key in ("net_arch", "features_extractor_class", "features_extractor_kwargs"):
            data.pop(key, None)
        return {**data, **self.card_args}


def card_policy_kwargs(num_players: int, rules, embed: int = 64, trunk: int = 256) -> dict[str, Any]:
    """``policy_kwargs`` of :class:`CardPolicy` for a player count and rules."""
    from scopa_env.engine.rules import get_rules

    lay = card_layout(ObservationLayout.for_rules(num_players, get_rules(rules)))
    return {"planes": lay["planes"], "globals_": lay["globals"], "embed": embed, "trunk": trunk}
