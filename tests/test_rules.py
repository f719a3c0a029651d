"""Capture rules of the standard game, case by case from the rule texts, plus properties."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scopa_env.engine.cards import RANK_OF, parse_card, parse_cards
from scopa_env.engine.rules import STANDARD, Move, Rules, get_rules, legal_moves


def captures(hand: str, table: str, rules=None) -> dict[str, set[frozenset[str]]]:
    """Legal moves as {played card: {captured sets in notation}} (empty set = trail)."""
    out: dict[str, set[frozenset[str]]] = {}
    from scopa_env.engine.cards import format_card

    for m in legal_moves(parse_cards(hand), parse_cards(table), rules):
        out.setdefault(format_card(m.card), set()).add(frozenset(format_card(c) for c in m.captured))
    return out


def sets(*groups: str) -> set[frozenset[str]]:
    return {frozenset(g.split()) for g in groups}


TRAIL = frozenset()

# pagat-scopa.txt: "Example. The face up cards on the table are A, 3, 4, 5, 7."
PAGAT_TABLE = "Ad 3c 4s 5b 7c"


@pytest.mark.parametrize(
    "played, expected, quote",
    [
        ("3s", sets("3c"), "If the next player plays a 3, it captures the 3 from the table."),
        # pagat names only 4+5, but A+3+5 also makes 9 and is legal.
        ("Qs", sets("4s 5b", "Ad 3c 5b"), "If the next player plays a Horse (9), it captures the 4 and the 5"),
        ("6s", sets("Ad 5b"), "If the next player plays a 6 it captures the Ace and the 5 from the table."),
        ("5s", sets("5b"), "If the next player plays a 5 it just captures the 5 from the table"),
        ("Js", sets("5b 3c", "4s 3c Ad", "7c Ad"), "they can capture either 5+3 or 4+3+A or 7+A."),
    ],
)
def test_pagat_worked_example(played, expected, quote):
    got = captures(played, PAGAT_TABLE)[played]
    assert got == expected, f"pagat: {quote!r}; got {got}"


def test_wikipedia_example_three_options():
    # wikipedia-scopa.txt: hand "2 of coins, 5 of swords, and 7 of clubs"; table "ace of coins,
    # 5 of cups, and 6 of swords": place the 2; 5 takes the 5 of cups; 7 takes the 6 and the ace.
    got = captures("2d 5s 7b", "Ad 5c 6s")
    assert got == {"2d": {TRAIL}, "5s": sets("5c"), "7b": sets("6s Ad")}, got


def test_a_card_that_can_capture_cannot_be_trailed():
    # wikipedia-scopa.txt: "if a 2 and a 4 are on the table and a player holds a 6, the player
    # must either take that trick or play a different card from their hand."
    got = captures("6d Kc", "2s 4b")
    assert got["6d"] == sets("2s 4b"), "the 6 must capture 2+4"
    assert got["Kc"] == {TRAIL}, "any hand card may be chosen: the King trails"


def test_single_card_beats_a_set():
    # wikipedia-scopa.txt: "if the cards on the table are 1, 3, 4, and 8 ... and the player plays
    # another Knave, the player is not allowed to capture the 1, 3, and 4".
    assert captures("Jd", "Ac 3s 4b Jc")["Jd"] == sets("Jc")
    # pagat-scopa.txt: "If the played card matches both a single card and the sum of a set of
    # cards, the single card must be captured, not the set."
    assert captures("7d", "3c 4s 7b")["7d"] == sets("7b")


def test_choice_among_several_single_matches():
    # pagat-scopa.txt: "If there are several matching cards the player must choose just one".
    assert captures("5d", "5c 5s 2b 3b")["5d"] == sets("5c", "5s")


def test_booklet_king_examples():
    # booklet: "By playing a King here, you can capture 2 cards that, when added together, have
    # the same value as the King. You can therefore capture the 7 and 3 (7 + 3 = 10)."
    assert captures("Kd", "2c 7s 3b")["Kd"] == sets("7s 3b")
    # booklet: "here, you cannot capture the 7 and 3 with your King ... you only capture the
    # King in the center of the table."
    assert captures("Kd", "7s 3b Kc")["Kd"] == sets("Kc")


def test_booklet_place_the_ace():
    # booklet: "You choose to place the 1, since it does not let you capture any other cards."
    assert captures("Ad", "2c 7s 3b")["Ad"] == {TRAIL}


def test_empty_table_every_card_trails():
    # booklet: "If there are no other cards in the center of the table, you must place a card."
    assert captures("Ad 7d Kd", "") == {"Ad": {TRAIL}, "7d": {TRAIL}, "Kd": {TRAIL}}


def test_legal_moves_accepts_masks_and_preset_names():
    by_ids = legal_moves([parse_card("Js")], parse_cards(PAGAT_TABLE))
    by_mask = legal_moves(1 << parse_card("Js"), sum(1 << c for c in parse_cards(PAGAT_TABLE)), "standard")
    assert by_ids == by_mask and len(by_ids) == 3


def test_move_value_semantics():
    m = Move(6, [16, 30])
    assert m == Move(6, frozenset({30, 16})) and hash(m) == hash(Move(6, (16, 30)))
    assert m.captured == frozenset({16, 30}) and not m.is_trail
    assert Move(6).is_trail
    with pytest.raises(ValueError, match="cannot capture the card it plays"):
        Move(6, [6])


def test_cards_in_hand_and_table_at_once_is_an_error():
    with pytest.raises(ValueError, match="both in hand and on the table"):
        legal_moves([1, 2], [2, 3])


# --- the rules object ---------------------------------------------------------


def test_standard_rules_defaults():
    r = Rules()
    assert r == STANDARD == get_rules("standard") == get_rules(None)
    assert (r.hand_size, r.table_size, r.target, r.kings_redeal) == (3, 4, 11, True)
    assert r.player_counts == (2, 3, 4, 6)
    assert len(r.deck) == 40


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"target": 0}, "target"),
        ({"hand_size": "3"}, "hand_size"),
        ({"player_counts": (5,)}, "player_counts"),
        ({"primiera_values": (1, 2)}, "primiera_values"),
        ({"kings_redeal": 1}, "kings_redeal"),
        ({"ranks": (1, 1, 2)}, "ranks"),
    ],
)
def test_invalid_rules_name_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        STANDARD.replace(**changes)


def test_unknown_field_and_preset_are_reported():
    with pytest.raises(ValueError, match="unknown Rules field"):
        STANDARD.replace(tagret=21)
    with pytest.raises(ValueError, match="known presets: .*standard"):
        get_rules("scopa_marziana")


def test_rules_are_frozen():
    with pytest.raises(AttributeError):
        STANDARD.target = 21  # type: ignore[misc]


# --- properties ---------------------------------------------------------------


def brute_force(hand: list[int], table: list[int]) -> set[tuple[int, frozenset[int]]]:
    """The standard capture rule, written as directly as possible from pagat's three bullets."""
    out = set()
    for c in hand:
        r = RANK_OF[c]
        singles = [t for t in table if RANK_OF[t] == r]
        if singles:
            options = [frozenset([t]) for t in singles]
        else:
            options = [
                frozenset(sub)
                for k in range(2, len(table) + 1)
                for sub in itertools.combinations(table, k)
                if sum(RANK_OF[t] for t in sub) == r
            ]
        out.update((c, o) for o in options) if options else out.add((c, frozenset()))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 39), min_size=1, max_size=15, unique=True), st.integers(1, 3))
def test_legal_moves_equal_brute_force(cards, hand_size):
    hand, table = cards[:hand_size], cards[hand_size:]
    got = {(m.card, m.captured) for m in legal_moves(hand, table)}
    assert got == brute_force(hand, table), f"hand={hand} table={table}"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 39), min_size=1, max_size=12, unique=True), st.integers(1, 3))
def test_every_move_is_consistent(cards, hand_size):
    hand, table = cards[:hand_size], cards[hand_size:]
    moves = legal_moves(hand, table)
    assert {m.card for m in moves} == set(hand), "every hand card can be played"
    for m in moves:
        assert m.captured <= set(table), f"{m} captures a card not on the table"
        if m.captured:
            assert sum(RANK_OF[c] for c in m.captured) == RANK_OF[m.card], f"{m} does not sum to its value"
        else:
            assert all(mm.is_trail for mm in moves if mm.card == m.card), f"{m}: a card that can capture trailed"
