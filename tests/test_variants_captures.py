"""Capture rules of the variant presets, case by case from the rule texts: the Ace that takes the
whole table (and whether that is a scopa), the Ace that takes itself, the captures adding up to
15, optional captures and the fewest cards; and the Ace's take-all as one "move" action.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from variant_helpers import cards, game_holding

from scopa_env import scopa_v0
from scopa_env.engine.actions import TAKE_ALL, move_enumeration
from scopa_env.engine.cards import parse_cards
from scopa_env.engine.rules import STANDARD, Move, Rules, get_rules, legal_moves


def moves(hand: str, table: str, rules: str | Rules) -> set[str]:
    return {str(m) for m in legal_moves(parse_cards(hand), parse_cards(table), rules)}


CAPTURE_CASES = [
    # (preset, hand, table, expected moves, source quote)
    (
        "asso_pigliatutto",
        "Ad",
        "5c 7s Kb",
        {"Ad takes 5c 7s Kb"},
        'pagat: "playing an Ace takes all the table cards ... provided that there is no Ace on the table"',
    ),
    (
        "asso_pigliatutto",
        "Ad",
        "Ac 5c 7s",
        {"Ad takes Ac"},
        'pagat: "If there is an Ace in the table layout, then playing an Ace takes only the Ace"',
    ),
    (
        "asso_pigliatutto",
        "Ad",
        "",
        {"Ad trails"},
        'pagat: "If the table is empty ... an Ace played remains on the table (it can\'t take itself)"',
    ),
    (
        "asso_pigliatutto",
        "5d",
        "2c 3c 5s",
        {"5d takes 5s"},
        'pagat: "in addition to the normal rules of capture" (a single card still beats a set)',
    ),
    (
        "scopa_d_assi",
        "Ad",
        "4c 9s",
        {"Ad takes 4c Qs"},
        'wikipedia: "playing an Ace captures all cards currently on the table"',
    ),
    (
        "scopa_d_assi",
        "Ad",
        "",
        {"Ad trails"},
        'pagat: the Ace taking itself is only an option ("Some play that ...")',
    ),
    (
        "scopa_d_assi_options",
        "Ad",
        "",
        {"Ad takes itself"},
        "pagat: \"Some play that if an Ace is played to the empty table it 'takes itself'\"",
    ),
    (
        "scopa_di_quindici_1",
        "4d",
        "Ac 3c 4s 7b",
        {"4d takes 4s 7b", "4d takes Ac 3c 7b"},
        'pagat: "if the table cards are A, 3, 4, 7 and you play a 4, it captures either the 4 and the 7 or the A, 3 and 7"',
    ),
    (
        "scopa_di_quindici_1",
        "5d",
        "5c Kb",
        {"5d takes Kb"},
        'pagat: "a card cannot capture a card or set of cards whose value is equal to the played card"',
    ),
    (
        "escoba",
        "5d",
        "5c",
        {"5d trails"},
        'pagat: "It is only possible to capture cards that together with the played card total 15"',
    ),
    (
        "scopa_a_quindici",
        "2d",
        "Ac 3c 5c 7c",
        {"2d takes Ac 5c 7c"},
        'wikipedia: "If the table is A, 3, 5, 7, playing a 2 would take itself plus the A, 5 and 7"',
    ),
    (
        "scopa_di_quindici_2",
        "Kd",
        "3c 5c 7c Ks",
        {"Kd takes 5c", "Kd takes Ks", "Kd takes 3c 7c"},
        'pagat: "A played card can capture either a card or set of cards of equal value, or a set which ... adds up to 15"',
    ),
    (
        "scopa_di_quindici_2_fewest",
        "Kd",
        "3c 5c 7c Ks",
        {"Kd takes 5c", "Kd takes Ks"},
        'pagat: "the played card must capture as few cards as possible"',
    ),
    (
        "scopa_di_quindici_3",
        "Kd",
        "3c 5c 7c Ks",
        {"Kd takes 5c", "Kd takes Ks", "Kd takes 3c 7c"},
        'pagat: "with 3, 5, 7, King on the table a played King can take either the 5 or the King or the 3+7"',
    ),
    (
        "scopa_di_quindici_3",
        "Ad",
        "4c Ks",
        {"Ad takes 4c Ks"},
        'pagat: "in addition an Ace takes all the cards on the table (as in Asso Pigliatutto)"',
    ),
    (
        "scopa_di_quindici_3",
        "Ad",
        "Ac 4c Ks 3s",
        {"Ad takes Ac", "Ad takes 4c Ks", "Ad takes Ac 3s Ks"},
        'pagat: "no restriction on which cards to take" (the Ace on the table blocks the take-all, 15s stay)',
    ),
    (
        "scopa_corse",
        "5d",
        "5c",
        {"5d trails", "5d takes 5c"},
        'pagat: "It is legal to play a card and leave it on the table without capturing even if its value matches"',
    ),
    (
        "scopa_corse",
        "7d",
        "3c 4c 7s",
        {"7d trails", "7d takes 7s"},
        'pagat: "The play and scoring are the same as in basic Scopa except that capturing is not compulsory"',
    ),
    (
        "chkobba",
        "7d",
        "3c 4c 7s",
        {"7d takes 7s"},
        'pagat: "Capturing is compulsory. If a card is played that matches both ... a single card must be captured"',
    ),
    (
        "booklet",
        "Kd",
        "2c 7c 3s",
        {"Kd takes 7c 3s"},
        'booklet: "By playing a King here, you can capture 2 cards ... You can therefore capture the 7 and 3"',
    ),
    (
        "booklet",
        "Kd",
        "7c 3s Kc",
        {"Kd takes Kc"},
        'booklet: "you cannot capture the 7 and 3 with your King, since you have to capture the fewest cards possible"',
    ),
    (
        "booklet",
        "6d",
        "Ac 5c 2s 4s",
        {"6d takes Ac 5c", "6d takes 2s 4s"},
        'booklet: "If there are multiple combinations possible with the same number of cards, you choose"',
    ),
    (
        "booklet",
        "7d",
        "Ac 2c 4s",
        {"7d trails"},
        'booklet: "You can now capture 1 or 2 cards from the center of the table"',
    ),
    (
        "booklet_capture_more",
        "7d",
        "Ac 2c 4s",
        {"7d takes Ac 2c 4s"},
        'booklet: "it is also possible to capture more than 2 cards at a time (often 3, but sometimes more)"',
    ),
    (
        "booklet",
        "6d",
        "Ac 2c 3c 4s",
        {"6d takes 2c 4s"},
        'booklet: "you must always capture the fewest cards possible" (2+4, not A+2+3)',
    ),
]


def test_fifteen_readings_agree():
    """pagat's first version ("It is only possible to capture cards that together with the played card total 15 ...
    very similar to the Spanish game Escoba") and wikipedia ("it takes any set of cards including itself that add to
    15") are one rule: the three presets differ only in name."""
    first = get_rules("scopa_di_quindici_1")
    for name in ("escoba", "scopa_a_quindici"):
        assert get_rules(name).replace(name=first.name) == first, f"{name} is version 1 under another name"


@pytest.mark.parametrize("preset, hand, table, expected, quote", CAPTURE_CASES)
def test_capture_rules(preset, hand, table, expected, quote):
    got = moves(hand, table, preset)
    assert got == expected, f"{preset}: {hand} on [{table}] -> {sorted(got)}; expected {sorted(expected)} ({quote})"


# --- scope with the Ace ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset, table, scopa, quote",
    [
        (
            "asso_pigliatutto",
            "5c 7s",
            1,
            'pagat: "playing an Ace takes all the table cards and scores a point for a sweep"',
        ),
        (
            "asso_pigliatutto",
            "Ac",
            1,
            'pagat: "If there is an Ace alone on the table, a played Ace takes it and scores a sweep"',
        ),
        ("scopa_d_assi", "5c 7s", 0, 'pagat: "taking all the cards with an Ace does not count as a sweep"'),
        (
            "scopa_di_quindici_3",
            "5c 7s",
            1,
            'pagat: "an Ace takes all the cards on the table ... and this scores a point"',
        ),
    ],
)
def test_ace_take_all_scopa(preset, table, scopa, quote):
    game = game_holding(preset, "Ad 3d", table)
    ace = cards("Ad")[0]
    game.play(Move(ace, cards(table)))
    assert game.table == 0, "the Ace took the table"
    assert game.scope[0] == scopa, f"{preset}: table [{table}] taken by an Ace scores {game.scope[0]} ({quote})"


def test_ace_takes_itself_goes_to_the_pile():
    """pagat: "The played Ace is captured by the player and the table remains empty"."""
    game = game_holding("scopa_d_assi_options", "Ad 3d", "")
    ace = cards("Ad")[0]
    game.play(Move(ace, itself=True))
    assert game.table == 0 and game.piles[0] >> ace & 1, "the Ace is in the player's pile, the table empty"
    assert game.scope[0] == 0 and game.last_capturer == 0, "taking itself is a capture but no scopa"


def test_render_shows_an_ace_taking_itself():
    """pagat: "if an Ace is played to the empty table it 'takes itself'": the text view says so."""
    from scopa_env.engine.render import render_game

    game = game_holding("scopa_d_assi_options", "Ad 3d", "")
    game.play(Move(cards("Ad")[0], itself=True))
    text = render_game(game)
    assert "last play: player_0 Ad takes itself" in text and "Ad takes Ad" not in text, text


# --- the take-all as one action -------------------------------------------------------------------


def test_take_all_compact_action():
    """An Ace's take-all is one id whose move is "this Ace takes the whole table"."""
    env = scopa_v0.raw_env(rules="asso_pigliatutto", action_mode="move")
    mine, table = cards("Ad 3d"), cards("5c 7s Kb")
    rest = [c for c in STANDARD.deck if c not in mine + table]
    env.reset(options={"deal": {"hands": [mine, rest[:2]], "table": table, "stock": [], "dealer": 1,
                                "piles": [[], rest[2:]]}})  # fmt: skip
    take_all = move_enumeration(env.rules).index[(mine[0], TAKE_ALL)]
    ids = set(np.flatnonzero(env.observe("player_0")["action_mask"]))
    assert take_all in ids and env.decode_action(take_all) == Move(mine[0], table), "decoded against the table"
    assert env.encode_action(Move(mine[0], table)) == take_all
    env.step(take_all)
    assert env.game.table == 0 and env.game.scope[0] == 1, "took everything, a scopa"
