"""An audit of the presets against the rule texts (``shared/rules-sources/``): each case quotes
the sentence it checks, and failed before the preset or document was mended.

* ``french_52`` scores the primiera as wikipedia's own example counts it: the sum over the suits
  a side has ("no cards of the fourth suit (sum=63)"), not pagat's all-four-suits rule;
* ``booklet_scientifico`` with 4 players is each for themselves, teams the option, as the
  booklet's basic game and its ``booklet`` preset;
* ``docs/rules.md`` lists what is left out of the texts instead of "nothing".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scopa_env.engine.cards import mask_of, parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import get_rules
from scopa_env.engine.scoring import primiera_value, score_hand

ROOT = Path(__file__).resolve().parent.parent
RULES_DOC = ROOT / "docs" / "rules.md"
F52 = get_rules("french_52")


def c52(text: str) -> int:
    """Bitmask of cards in 52-card notation (``"7d 7h"``)."""
    return mask_of(parse_cards(text, 13))


# --- 1. french_52: the primiera of a side short of a suit ---------------------------------

THREE_SEVENS = c52("7d 7h 7s")
"""wikipedia: "three sevens (3x21) and no cards of the fourth suit (sum=63)"."""
SEVEN_AND_THREE_ACES = c52("7c Ad Ah As")
"""wikipedia: "one seven (21) and three aces (3x16), for their sum would be 69"."""
FOUR_TWOS = c52("2d 2h 2s 2c")
"""A full set worth less than 63: 4 x 12 = 48."""


def test_french_52_primiera_counts_the_suits_a_side_has():
    """wikipedia-scopa.txt, "Scoring" (the 52-card section gives no scoring of its own): "If one
    player has three sevens (3x21) and no cards of the fourth suit (sum=63), their opponent can win
    the "prime" with one seven (21) and three aces (3x16), for their sum would be 69." The example
    counts the three-suit primiera by its sum, 63."""
    assert not F52.primiera_all_suits, "french_52 follows pagat's all-four-suits rule, not wikipedia's example"
    assert primiera_value(THREE_SEVENS, F52) == 63, 'wikipedia: "no cards of the fourth suit (sum=63)"'
    assert primiera_value(SEVEN_AND_THREE_ACES, F52) == 69, 'wikipedia: "their sum would be 69"'
    piles = [THREE_SEVENS, SEVEN_AND_THREE_ACES] + [0] * 6
    score = score_hand(piles, [0] * 8, F52)
    assert [row["primiera"] for row in score] == [0, 1, 0, 0, 0, 0, 0, 0], 'wikipedia: "their opponent can win"'


def test_french_52_three_suit_primiera_beats_a_lower_full_set():
    """wikipedia: "(sum=63)": the 63 is a primiera like any other, so it beats a full set of 48
    (four Twos), where pagat's rule ("a player or team that does not have at least one card in each
    suit cannot score for prime") would give the point to the Twos."""
    piles = [THREE_SEVENS, FOUR_TWOS] + [0] * 6
    score = score_hand(piles, [0] * 8, F52)
    assert score[0]["primiera_value"] == 63 and score[1]["primiera_value"] == 48
    assert score[0]["primiera"] == 1 and score[1]["primiera"] == 0, "the three Sevens (63) beat four Twos (48)"


def test_french_52_compiled_core_counts_the_same_sum():
    """The compiled core plays the field in the 52-card deck (``french=True`` next to it) and sums
    the same way, pictures (ids 40..51) included: wikipedia "(sum=63)"."""
    from scopa_env.fast import check_supported, layout
    from scopa_env.fast.batch import compiled_rules
    from scopa_env.fast.core.scoring import _primiera_sum

    check_supported(F52, 8)
    P, F, _, _ = compiled_rules(F52, 8)
    for pile in (THREE_SEVENS, SEVEN_AND_THREE_ACES, FOUR_TWOS, c52("Kd Qh 7s"), c52("Jc")):
        got = _primiera_sum(pile, F, P[layout.P_PRIME_ALL_SUITS] != 0, P[layout.P_FRENCH] != 0)
        assert got == primiera_value(pile, F52), f"pile {pile:#x}: core {got}, engine {primiera_value(pile, F52)}"


# --- 2. booklet_scientifico: each for themselves, teams the option ---------------------------


@pytest.mark.parametrize(
    "preset, sides, quote",
    [
        ("booklet_scientifico", (0, 1, 2, 3), 'booklet: "for 2 to 4 players" (the basic game, each for themselves)'),
        ("booklet_scientifico,partnerships=4", (0, 1, 0, 1), 'booklet: "You can also use this variant with Team Play"'),
        ("booklet", (0, 1, 2, 3), 'booklet: "for 2 to 4 players"; TEAM PLAY is a variant'),
    ],
)
def test_booklet_scientifico_teams_are_the_option(preset, sides, quote):
    """booklet, IL SCOPONE SCIENTIFICO: "deal all the cards equally among players"; "You can also
    use this variant with Team Play", an option as TEAM PLAY is for the basic game."""
    rules = get_rules(preset)
    game = Game(4, rules, seed=0)
    assert game.side_of == sides, f"{preset}: sides {game.side_of} ({quote})"
    if preset.startswith("booklet_scientifico"):
        assert [bin(h).count("1") for h in game.hands] == [10] * 4 and game.table == 0, (
            'booklet: "deal all the cards equally among players (do not reveal any in the center of the table)"'
        )
    if "partnerships" not in preset:
        assert rules.partnerships == get_rules("booklet").partnerships, "the default sides differ from booklet's"


# --- 3. docs/rules.md says what is left out --------------------------------------------------


def _left_out() -> str:
    text = RULES_DOC.read_text()
    match = re.search(r"^## Left out\b.*?(?=^## |\Z)", text, re.M | re.S)
    assert match, "docs/rules.md has no '## Left out' section"
    return match.group(0)


@pytest.mark.parametrize(
    "what, quote",
    [
        ("series", 'wikipedia: "It is recommended to play multiple games so that each player has the opportunity'),
        ("first dealer", 'pagat: "The first dealer can be chosen by any convenient method'),
        ("variations", 'wikipedia: "only the ten-point bonus is normally awarded, although variations'),
    ],
)
def test_rules_doc_lists_what_is_left_out(what, quote):
    """docs/rules.md's "Left out" names the pieces of the texts the kit does not play, each with its
    quote: the 52-card game's series of games (wikipedia: "It is recommended to play multiple games
    so that each player has the opportunity to deal"), the table manners (choosing the first dealer)
    and the variations named without rules."""
    section = " ".join(_left_out().split())
    assert not section.lower().startswith("## left out nothing"), "the section still says nothing is left out"
    assert what in section.lower(), f"docs/rules.md's Left out does not name the {what!r} ({quote})"
    assert quote.split('"', 1)[1] in section, f"docs/rules.md's Left out does not quote {quote}"


def test_cirulla_declaration_timing_is_built_not_left_out():
    """wikipedia, Cirulla: "Such bonuses must be declared before the player holding them has played
    their first card": the engines take the declaration at that player's first turn of the deal
    (``tests/test_variants_cirulla.py``), so "Left out" no longer lists it and the ``cirulla`` section gives
    the reading."""
    assert "before the player holding them" not in " ".join(_left_out().split()), "Left out lists the timing"
    text = " ".join(RULES_DOC.read_text().split())
    cirulla = text[text.index("### `cirulla`") : text.index("### Chiamarsi fuori")]
    assert "first turn of the deal" in cirulla and "declare_at_turn" in cirulla, "the cirulla section lacks the reading"
    assert get_rules("cirulla").declare_at_turn and not get_rules("scopa_bazzica").declare_at_turn
