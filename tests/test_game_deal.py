"""``Game.from_order``: the engine's deal of a deck order the caller drew (the OpenSpiel game's chance nodes).

A game dealt from an order is the game the constructor deals when its shuffle leaves the deck in
that order: same hands, table, stock and, where the rules have them, the same table bonus,
declarations queue, thrown-in table and first-card decision.
"""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.engine.cards import RANK_MASK, card_id, cards_of
from scopa_env.engine.game import Game
from scopa_env.engine.rules import get_rules

PRESETS = [
    ("standard", 2),
    ("standard", 4),
    ("scopone", 4),
    ("cirulla", 2),
    ("scopa_bazzica", 2),
    ("sbarazzina", 3),
    ("chkobba", 2),
    ("french_52", 8),
]
"""Rules whose deal is a plain shuffle, has a table bonus and declarations, a first card, 52 cards."""


def shuffled_order(rules, seed: int) -> list[int]:
    """The deck as the constructor's first shuffle with ``seed`` leaves it, top card first."""
    deck = list(rules.deck)
    return [deck[i] for i in np.random.default_rng(seed).permutation(len(deck)).tolist()]


def state_of(game: Game) -> tuple:
    return (
        game.dealer,
        game.current,
        game.hands,
        game.table,
        game.stock,
        game.piles,
        game.scope,
        game.deciding,
        game.declare_queue,
        game.table_bonus,
        game.redeals,
    )


@pytest.mark.parametrize("preset, players", PRESETS)
def test_from_order_deals_as_the_shuffle_does(preset, players):
    """pagat-scopa.txt: "The dealer then deals the cards one at a time until each player has three
    cards. The next four cards are placed separately face up on the table." The constructor's game
    and the game dealt from its first shuffle's order are the same (seeds whose table is kept)."""
    rules = get_rules(preset)
    compared = 0
    for seed in range(40):
        shuffled = Game(players, rules, seed=seed, dealer=1)
        if shuffled.redeals:
            continue
        dealt = Game.from_order(shuffled_order(rules, seed), players, rules, dealer=1, seed=seed)
        assert state_of(dealt) == state_of(shuffled), f"{preset} seed {seed}"
        compared += 1
    assert compared >= 20


def test_from_order_plays_chkobbas_first_card_decision():
    """pagat (Chkobba): the player after the dealer "draws one card form the pack, looks at it and may
    either keep it as the first card of their hand or place it face up on the table". The order's top
    card is the drawn one; the decision (``play_pair``) deals the rest from the order."""
    rules = get_rules("chkobba")
    for seed in range(10):
        order = shuffled_order(rules, seed)
        for keep in (True, False):
            game = Game.from_order(order, 2, rules, dealer=1, seed=0)
            assert game.deciding and cards_of(game.hands[0]) == [order[0]], "the first card, drawn for seat 0"
            game.play_pair(order[0], 1 << order[0] if keep else 0)
            if game.redeals:
                continue
            assert (game.hands[0] >> order[0] & 1) == keep and (game.table >> order[0] & 1) != keep
            assert game.hands[0] & ~(1 << order[0]) == sum(1 << c for c in order[1 : 3 - keep + 1])
            assert [h.bit_count() for h in game.hands] == [3, 3] and game.table.bit_count() == 4


@pytest.mark.parametrize("preset, next_dealer", [("standard", False), ("cirulla", True)])
def test_from_order_throws_the_table_in(preset, next_dealer):
    """pagat-scopa.txt: "If the four face up cards include three or four Kings" the cards are dealt
    again; wikipedia-scopa.txt (Cirulla): "If two or more aces are dealt to the table, the cards are
    collected, re-shuffled, and dealt again by the next dealer." The game is left before the next
    deal: the redeal counted, no cards in hand, the seat to deal again named."""
    rules = get_rules(preset)
    rank = 1 if preset == "cirulla" else rules.king
    thrown = [card_id(suit, rank) for suit in range(3)]
    rest = [c for c in rules.deck if c not in thrown]
    order = rest[:6] + thrown + rest[6:7] + rest[7:]
    assert (sum(1 << c for c in order[6:10]) & RANK_MASK[rank]).bit_count() == 3
    game = Game.from_order(order, 2, rules, dealer=1)
    assert game.redeals == 1 and game.hands == [0, 0]
    assert game.dealer == (0 if next_dealer else 1), "Cirulla: the next dealer; else the same"


@pytest.mark.parametrize(
    "order, message",
    [
        (list(range(39)), "missing"),
        ([0, *range(39)], "more than once"),
        ([*range(39), 45], "not in the 'standard' deck"),
    ],
)
def test_from_order_refuses_an_order_that_is_not_the_deck(order, message):
    with pytest.raises(ValueError, match=message):
        Game.from_order(order, 2, "standard")
