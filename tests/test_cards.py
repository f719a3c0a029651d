"""Card ids, values, names and notation (issue: "Cards (public, documented, fixed)")."""

import pytest

from scopa_env.engine.cards import (
    ALL_CARDS_MASK,
    BATONS,
    COINS,
    CUPS,
    NUM_CARDS,
    PRIMIERA_BY_RANK,
    RE_BELLO,
    SETTEBELLO,
    SWORDS,
    card_id,
    card_name,
    cards_of,
    format_card,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)


@pytest.mark.parametrize(
    "suit, rank, expected",
    [
        (COINS, 1, 0),
        (COINS, 7, 6),  # the settebello
        (CUPS, 7, 16),
        (SWORDS, 1, 20),
        (BATONS, 10, 39),
    ],
)
def test_card_id_is_suit_times_ten_plus_rank_minus_one(suit, rank, expected):
    assert card_id(suit, rank) == expected, f"card_id({suit}, {rank})"
    assert suit_of(expected) == suit and rank_of(expected) == rank


def test_settebello_and_re_bello():
    assert SETTEBELLO == 6, "the settebello (seven of coins) is id 6"
    assert RE_BELLO == 9, "the King of coins is id 9"


def test_primiera_values():
    # pagat-scopa.txt: "Seven 21, Six 18, Ace 16, Five 15, Four 14, Three 13, Two 12, King, Horse/Queen, Jack 10"
    expected = {7: 21, 6: 18, 1: 16, 5: 15, 4: 14, 3: 13, 2: 12, 8: 10, 9: 10, 10: 10}
    for rank, value in expected.items():
        assert PRIMIERA_BY_RANK[rank] == value, f"primiera value of rank {rank}"


def test_notation_round_trips_for_every_card():
    for card in range(NUM_CARDS):
        text = format_card(card)
        assert parse_card(text) == card, f"{card} -> {text!r} -> back"
    everything = list(range(NUM_CARDS))
    assert parse_cards(format_cards(everything)) == everything


@pytest.mark.parametrize(
    "text, expected", [("7d", 6), ("Kb", 39), ("Ac", 10), ("10♣", 39), ("Cc", 18), ("Js", 27), ("7♦", 6)]
)
def test_parse_accepts_aliases(text, expected):
    assert parse_card(text) == expected, text


@pytest.mark.parametrize("text", ["", "7", "7x", "Zd", "11d"])
def test_parse_rejects_bad_text_with_a_reason(text):
    with pytest.raises(ValueError, match="cannot parse card"):
        parse_card(text)


def test_names_in_three_styles():
    assert card_name(6, "italian") == "Sette di denari"
    assert card_name(6, "english") == "Seven of coins"
    assert card_name(6, "french") == "Seven of diamonds"
    assert card_name(18, "italian") == "Cavallo di coppe"
    assert card_name(18, "french") == "Queen of hearts"
    with pytest.raises(ValueError, match="style"):
        card_name(6, "klingon")


def test_masks():
    assert cards_of(mask_of([39, 0, 6])) == [0, 6, 39]
    assert mask_of(range(NUM_CARDS)) == ALL_CARDS_MASK
    with pytest.raises(ValueError, match="twice"):
        mask_of([3, 3])
    with pytest.raises(ValueError, match="not a card id"):
        mask_of([52])  # ids 40..51 are the 52-card deck's Jacks, Queens and Kings (tests/test_french52.py)
