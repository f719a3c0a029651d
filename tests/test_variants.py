"""Rule variants (issue 3): every preset against the rule text it follows.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt.
Each table row quotes the sentence it checks; the random-game suite at the end plays
every preset at every player count it allows, in the engine and in both env modes,
against a brute-force reading of the capture rules.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from scopa_app.cli import main as cli_main
from scopa_env import scopa_v0
from scopa_env.engine.actions import MAX_MOVE_ACTIONS, TAKE_ALL, move_enumeration
from scopa_env.engine.cards import RANK_MASK, RANK_OF, SUIT_MASK, card_id, cards_of, format_cards, mask_of, parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.observation import ObservationLayout, write_observation
from scopa_env.engine.rules import PRESETS, STANDARD, Move, Rules, get_rules, legal_moves, move_of
from scopa_env.engine.scoring import declaring_pairs, score_hand

VARIANTS = sorted(name for name in PRESETS if name != "standard")


def moves(hand: str, table: str, rules: str | Rules) -> set[str]:
    return {str(m) for m in legal_moves(parse_cards(hand), parse_cards(table), rules)}


def cards(text: str) -> list[int]:
    return parse_cards(text)


# --- legal moves, table-driven ------------------------------------------------------------

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


# --- scope with the Ace ---------------------------------------------------------------------


def two_player_game(rules: str, mine: str, table: str, **kwargs) -> Game:
    """Seat 0 to move in the last round of a hand, holding ``mine`` plus filler."""
    r = get_rules(rules)
    my_cards, table_cards = cards(mine), cards(table)
    rest = [c for c in r.deck if c not in my_cards and c not in table_cards]
    opp = rest[: len(my_cards)]
    piles = [[], rest[len(my_cards) :]]
    return Game.from_deal([my_cards, opp], table_cards, [], dealer=1, rules=r, piles=piles, **kwargs)


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
    game = two_player_game(preset, "Ad 3d", table)
    ace = cards("Ad")[0]
    game.play(Move(ace, cards(table)))
    assert game.table == 0, "the Ace took the table"
    assert game.scope[0] == scopa, f"{preset}: table [{table}] taken by an Ace scores {game.scope[0]} ({quote})"


def test_ace_takes_itself_goes_to_the_pile():
    """pagat: "The played Ace is captured by the player and the table remains empty"."""
    game = two_player_game("scopa_d_assi_options", "Ad 3d", "")
    ace = cards("Ad")[0]
    game.play(Move(ace, itself=True))
    assert game.table == 0 and game.piles[0] >> ace & 1, "the Ace is in the player's pile, the table empty"
    assert game.scope[0] == 0 and game.last_capturer == 0, "taking itself is a capture but no scopa"


def test_render_shows_an_ace_taking_itself():
    """pagat: "if an Ace is played to the empty table it 'takes itself'": the text view says so."""
    from scopa_env.engine.render import render_game

    game = two_player_game("scopa_d_assi_options", "Ad 3d", "")
    game.play(Move(cards("Ad")[0], itself=True))
    text = render_game(game)
    assert "last play: player_0 Ad takes itself" in text and "Ad takes Ad" not in text, text


@pytest.mark.parametrize(
    "preset, table, redeal, quote",
    [
        (
            "scopa_d_assi_options",
            "Ac 5c 7s 9b",
            True,
            'pagat: "if one or more Aces appear in the face-up cards ... redealt"',
        ),
        ("scopa_d_assi", "Ac 5c 7s 9b", False, 'pagat: the Ace redeal is an option ("Some play that")'),
        ("standard", "Kc Ks Kb 9b", True, 'pagat: "If the four face up cards include three or four Kings"'),
        ("standard,kings_redeal=off", "Kc Ks Kb 9b", False, "option: the Kings-redeal rule off"),
        ("chkobba", "5c 5s 5b 9b", True, 'pagat: "If there are three or four equal valued cards in the initial table"'),
        ("chkobba", "5c 5s 6b 6c", False, "pagat chkobba: two pairs are not three equal cards"),
        ("hurrikan", "Kc Ks Kb 9b", False, 'pagat: "There is no mention of throwing in the cards when there are three'),
        ("hurrikan_italian", "Kc Ks Kb 9b", True, "the Kings-redeal option of hurrikan"),
        ("booklet", "Kc Ks Kb 9b", True, 'booklet: "If you reveal 3 Kings in the center of the table during setup"'),
    ],
)
def test_redeal_rules(preset, table, redeal, quote):
    game = Game(4 if preset == "booklet_team" else 2, preset, seed=0)
    assert game.needs_redeal(mask_of(cards(table))) is redeal, f"{preset}: [{table}] ({quote})"


def test_redeals_happen_when_dealing():
    """Dealt tables never hold what the rules throw in."""
    for preset in ("scopa_d_assi_options", "chkobba", "standard"):
        for seed in range(30):
            game = Game(2, preset, seed=seed)
            if game.deciding:
                game.play_pair(*game.legal_pairs()[seed % 2])
            assert not game.needs_redeal(game.table), f"{preset} seed {seed}: dealt [{format_cards(game.table)}]"
    game = Game(2, "scopa_d_assi_options", seed=3)
    assert not game.table & RANK_MASK[1], "no Ace face up after dealing"


# --- deals -------------------------------------------------------------------------------------


def deal_sizes(game: Game) -> list[int]:
    """Cards per player in each deal of the hand, by random play until the hand ends."""
    rnd = random.Random(0)
    sizes = [game.hands[game.current].bit_count()]
    while not game.hand_over:
        before = game._cards_in_hands
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if not game.hand_over and game._cards_in_hands > before:
            sizes.append(game.hands[game.current].bit_count())
    return sizes


@pytest.mark.parametrize(
    "preset, n, table, schedule, quote",
    [
        ("scopone", 4, 4, [9], 'pagat: "all the cards dealt at the start ... players begin with 9 or 10 cards"'),
        ("scopone_scientifico", 4, 0, [10], 'wikipedia: "Scopone a 10 carte, the players are dealt ten cards each"'),
        ("scopa_d_assi_9", 4, 4, [9], 'pagat: "played by four players in partnerships who are dealt 9 or 10 cards"'),
        ("scopa_d_assi_10", 4, 0, [10], 'pagat: "dealt 9 or 10 cards each rather than just three"'),
        ("scopa_corse", 2, 4, [3, 3, 3, 3, 4], "pagat Corse, read to fit 36 cards (docs/rules.md)"),
        ("scopa_corse", 4, 4, [3, 3, 2], 'pagat: "With four players the second deal is 3 cards each and the third 2"'),
        ("hurrikan", 2, 4, [6, 6, 6], 'pagat: "six cards rather than three are dealt ... three sub-deals"'),
        ("hurrikan", 4, 4, [9], 'pagat: "a four-player partnership version which is played like Scopone"'),
        ("hurrikan_10", 4, 0, [10], 'pagat: "(with either 9-card or 10-card hands)"'),
        ("booklet_scientifico", 2, 0, [20], 'booklet: "deal all the cards equally among players"'),
        ("booklet_scientifico", 4, 0, [10], 'booklet: "You can also use this variant with Team Play"'),
        ("standard", 3, 4, [3] * 4, 'pagat: "It is possible, though less satisfactory, for three to play"'),
        (
            "standard",
            6,
            4,
            [3] * 2,
            'pagat: "The game can also be played by 4 or 6 people divided into two equal teams"',
        ),
    ],
)
def test_deal_schedules(preset, n, table, schedule, quote):
    game = Game(n, preset, seed=1, auto_next_hand=False)
    assert game.table.bit_count() == table, f"{preset}: {table} cards on the table ({quote})"
    assert deal_sizes(game) == schedule, f"{preset} with {n} players deals {schedule} ({quote})"


def test_scientifico_first_player_trails():
    """booklet: "The player to the right of the dealer plays first; they must place a card"."""
    for preset in ("scopone_scientifico", "booklet_scientifico", "scopa_d_assi_10"):
        game = Game(4, preset, seed=5)
        assert game.table == 0 and all(m == 0 for _, m in game.legal_pairs()), f"{preset}: first play is a trail"


def test_corse_deck_has_no_twos():
    """pagat: "Scopa is often played with 36 cards, each suit consisting of Ace, 3, 4, 5, 6, 7, Jack, Queen, King"."""
    rules = get_rules("scopa_corse")
    assert len(rules.deck) == 36 and not any(RANK_OF[c] == 2 for c in rules.deck), "36 cards without the Twos"
    assert rules.target == 21, 'pagat: "Games are usually played to 21 points"'


# --- chkobba's first card ---------------------------------------------------------------------


@pytest.mark.parametrize("keep", [True, False])
def test_chkobba_first_card(keep):
    """pagat: the cutter "draws one card ... and may either keep it as the first card of their hand or
    place it face up on the table as the first card of the layout"."""
    game = Game(2, "chkobba", seed=11)
    assert game.deciding and game.current == 0, "the player after the dealer decides first"
    card = game.hands[0].bit_length() - 1
    assert game.hands[0] == 1 << card and game.table == 0 and len(game.stock) == 39, "one card drawn"
    assert game.legal_pairs() == [(card, 0), (card, 1 << card)], "put it on the table, or keep it"
    assert game.view(0).legal_pairs() == game.legal_pairs() and game.view(1).legal_pairs() == []
    game.play(Move(card, itself=True) if keep else Move(card))
    assert not game.deciding, "the deal is complete"
    assert [h.bit_count() for h in game.hands] == [3, 3] and game.table.bit_count() == 4, "3 each, 4 face up"
    if game.redeals == 0:
        where = game.hands[0] if keep else game.table
        assert where >> card & 1, "the drawn card went where the player chose"
    assert game.current == 0 and game.history == [], "the decision is not a play; seat 0 leads"


def test_chkobba_decision_in_both_env_modes():
    """The decision is an action: move mode has the (card, {card}) "keep" id, select mode names the card twice."""
    for mode in ("move", "select"):
        env = scopa_v0.raw_env(rules="chkobba", action_mode=mode)
        env.reset(seed=2)
        card = env.game.hands[0].bit_length() - 1
        mask = env.observe("player_0")["action_mask"]
        if mode == "move":
            ids = set(np.flatnonzero(mask))
            assert ids == {env.encode_action(Move(card)), env.encode_action(Move(card, itself=True))}, "two choices"
            env.step(env.encode_action(Move(card, itself=True)))
        else:
            assert list(np.flatnonzero(mask)) == [card], "first name the drawn card"
            env.step(card)
            assert sorted(np.flatnonzero(env.observe("player_0")["action_mask"])) == [card, 40], "again or CONFIRM"
            env.step(card)
        assert not env.game.deciding and env.game.hands[0].bit_count() == 3, f"{mode}: kept, deal completed"


def test_chkobba_determinize_during_decision():
    game = Game(4, "chkobba", seed=3)
    world = game.view(0).determinize(np.random.default_rng(0))
    assert world.deciding and world.legal_pairs() == game.legal_pairs(), "a determinized world keeps the decision"


# --- scoring -------------------------------------------------------------------------------------

SEVENS = "7d 7c 7s"


@pytest.mark.parametrize(
    "preset, pile0, pile1, key, points, quote",
    [
        ("booklet", "7d 7c 6s", "7s 6d", "seven_majority", [1, 0], 'booklet: "the most 7-value cards"'),
        (
            "booklet",
            "7d 7c 6s",
            "7s 7b 6d 6c",
            "seven_majority",
            [0, 1],
            'booklet: "In case of tie, the tied player who captured the most 6-value cards gains this point"',
        ),
        (
            "booklet",
            "7d 7c 6s",
            "7s 7b 6d",
            "seven_majority",
            [0, 0],
            'booklet: "If there is still a tie, no one gains this point"',
        ),
        (
            "chkobba",
            "7d 7c 6s 6b",
            "7s 7b 6d 6c",
            "seven_majority",
            [0, 0],
            'pagat barmila: "the point is not awarded"',
        ),
        ("chkobba", "7c", "Kd", "settebello", [0, 0], 'pagat: "the player or team with the Seven of diamonds scores"'),
        ("chkobba", "7d", "Kd", "settebello", [1, 0], 'pagat: "the player or team with the Seven of diamonds scores"'),
        ("hurrikan", "7c", "7d", "settebello", [1, 0], 'pagat: "There is a point for the seven of hearts"'),
        (
            "hurrikan",
            "Ac 2c 3c 4c 5c 6c",
            "7c 8c 9c Kc Ad",
            "coins",
            [1, 0],
            'pagat: "a point for taking the majority of hearts (6 or more)"',
        ),
        (
            "hurrikan",
            "Qd Qc Qs Qb",
            "Jd Jc Js Jb",
            "primiera",
            [1, 0],
            'pagat: "the Queen and Jack are worth 9 and 8 respectively rather than 10 each"',
        ),
        ("standard", "Qd Qc Qs Qb", "Jd Jc Js Jb", "primiera", [0, 0], 'pagat: "King, Horse/Queen, Jack 10"'),
        (
            "booklet_primiera",
            "7d 7c 7s",
            "Ad 2c 2s 2b",
            "primiera",
            [1, 0],
            'booklet primiera table: "None | 0" (a missing suit counts 0: 63 beats 52)',
        ),
        (
            "standard",
            "7d 7c 7s",
            "Ad 2c 2s 2b",
            "primiera",
            [0, 1],
            'pagat: "a player or team that does not have at least one card in each suit cannot score for prime"',
        ),
        (
            "booklet_primiera",
            "7d",
            "6c",
            "primiera",
            [1, 0],
            'booklet primiera table: "None | 0" (21 + 0 + 0 + 0 beats 18)',
        ),
    ],
)
def test_scoring_categories(preset, pile0, pile1, key, points, quote):
    p0, p1 = cards(pile0), cards(pile1)
    p1 = [c for c in p1 if c not in p0]
    rows = score_hand([p0, p1], [0, 0], preset)
    assert [row[key] for row in rows] == points, f"{preset}: {pile0} vs {pile1} -> {key} ({quote})"
    if get_rules(preset).prime_rule == "sevens":
        assert all(row["primiera"] == 0 for row in rows), "the seven-majority point replaces the primiera"


def test_chkobba_ties_score_nothing():
    """pagat: "If the players or teams have 20 cards each the point is not awarded" ... "5 diamonds each"."""
    deck = list(get_rules("chkobba").deck)
    diamonds = [c for c in deck if c < 10]
    others = [c for c in deck if c >= 10]
    pile0 = diamonds[:5] + others[:15]
    pile1 = diamonds[5:] + others[15:]
    rows = score_hand([pile0, pile1], [0, 0], "chkobba")
    assert [r["cards"] for r in rows] == [0, 0] and [r["coins"] for r in rows] == [0, 0], "20-20 and 5-5: no points"


def test_standard_hand_score_keys_unchanged():
    rows = score_hand([[0, 1], [2]], [0, 0])
    keys = {"cards", "coins", "settebello", "primiera", "scope", "total"}
    keys |= {"num_cards", "num_coins", "primiera_value", "num_scope"}
    assert set(rows[0]) == keys, "the standard game's dict keys stay as they were"


def test_hurrikan_double_game():
    """pagat: "If the loser has fewer than 8 points the winner wins a double game"."""
    seen = set()
    for seed in range(6):
        game = two_player_game("hurrikan", "Ad 5s", "3c", scores=[15, 4 * seed], seed=seed)
        rnd = random.Random(seed)
        while not game.hand_over:
            pairs = game.legal_pairs()
            game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if game.winner is not None:
            loser = 1 - game.winner
            assert game.double_game is (game.scores[loser] < 8), f"scores {game.scores}"
            rows = game.hand_result.hand_score
            assert [r["double_game"] for r in rows][game.winner] == int(game.double_game), rows
            seen.add(game.double_game)
    assert seen == {True, False}, "both a double and a single game happened"


# --- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [11, 16, 21, 31, 41, 51])
@pytest.mark.parametrize("preset", ["standard", "chkobba", "scopa_corse", "booklet"])
def test_targets(preset, target):
    rules = get_rules(f"{preset},target={target}")
    assert rules.target == target and rules.name == f"{preset},target={target}"
    game = Game(2, rules, seed=target)
    rnd = random.Random(target)
    while game.winner is None:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    top = game.scores[game.winner]
    assert top >= target and all(v < top for s, v in enumerate(game.scores) if s != game.winner), game.scores


def test_cappotto_option():
    """wikipedia: "if a player is winning 7 points to 0 then the game can be considered over"."""
    game = Game(2, "chkobba,cappotto=true", seed=0)
    for scores, winner in (([7, 0], 0), ([0, 8], 1), ([7, 1], None), ([6, 0], None)):
        game.scores = scores
        assert game._game_winner() == winner, f"cappotto at {scores}"
    game = Game(2, "chkobba", seed=0)
    game.scores = [7, 0]
    assert game._game_winner() is None, "without cappotto 7-0 plays on"


def test_option_strings():
    assert get_rules("standard,player_counts=2/3").player_counts == (2, 3)
    assert get_rules("scopa_corse,player_counts=2").schedule(2) == (3, 3, 3, 3, 4), "a variant's own player counts"
    assert get_rules("scopone,kings_redeal=off").kings_redeal is False
    with pytest.raises(ValueError, match="bad rules option"):
        get_rules("standard,colour=red")
    with pytest.raises(ValueError, match="bad value"):
        get_rules("standard,target=many")


IMPOSSIBLE = [
    (lambda: Game(3, "scopone"), "allow num_players in"),
    (lambda: get_rules("scopone").replace(player_counts=(3,)), "hand_size=9 to 3 players"),
    (
        lambda: get_rules("scopa_corse").replace(deal_schedules={2: (3, 3, 3, 3, 4, 4), 4: (3, 3, 2)}),
        "36-card deck",
    ),
    (lambda: STANDARD.replace(ranks=(1, 3, 4, 5, 6, 7, 8, 9, 10)), "cannot be dealt"),
    (lambda: get_rules("chkobba").replace(table_size=0, hand_size=10, player_counts=(4,)), "first_card_choice"),
    (lambda: STANDARD.replace(capture_equal=False), "no card could ever capture"),
    (lambda: get_rules("booklet_scientifico").replace(player_counts=(2, 3, 4)), "cannot be dealt"),
    (lambda: get_rules("scopa_corse").replace(aces_redeal=True, ranks=(3, 4, 5, 6, 7, 8, 9, 10)), "Aces"),
    (lambda: STANDARD.replace(prime_rule="most_kings"), "prime_rule"),
    (lambda: STANDARD.replace(partnerships=(3,)), "partnerships"),
    (lambda: get_rules("chiamarsi_fuori,partnerships=6"), "claim_out needs two sides"),
    (lambda: get_rules("booklet,partnerships=2"), "partnerships"),
]


# --- sides ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset, n, sides, quote",
    [
        ("standard", 4, (0, 1, 0, 1), 'pagat: "played by 4 or 6 people divided into two equal teams"'),
        ("standard", 6, (0, 1, 0, 1, 0, 1), 'pagat: "played by 4 or 6 people divided into two equal teams"'),
        ("standard", 3, (0, 1, 2), 'pagat: "It is possible, though less satisfactory, for three to play"'),
        ("booklet", 4, (0, 1, 2, 3), 'booklet: "for 2 to 4 players"; teams are its TEAM PLAY variant'),
        ("booklet_primiera", 4, (0, 1, 2, 3), 'booklet: "for 2 to 4 players"'),
        ("booklet_team", 4, (0, 1, 0, 1), 'booklet: "two teams of 2 players"'),
        ("booklet_scientifico", 4, (0, 1, 2, 3), 'booklet: "for 2 to 4 players" (its basic game)'),
        (
            "booklet_scientifico,partnerships=4",
            4,
            (0, 1, 0, 1),
            'booklet: "You can also use this variant with Team Play"',
        ),
        ("standard,partnerships=none", 4, (0, 1, 2, 3), "an option: 4 each for themselves"),
    ],
)
def test_sides_are_a_rule(preset, n, sides, quote):
    game = Game(n, preset, seed=0)
    assert game.side_of == sides and game.num_sides == max(sides) + 1, f"{preset}, {n} players ({quote})"
    env = scopa_v0.raw_env(num_players=n, rules=preset)
    env.reset(seed=0)
    assert env.layout.num_sides == game.num_sides, f"{preset}: the observation has one scope/score entry per side"


def test_four_each_for_themselves_play_to_the_end():
    """booklet, 4 players each for themselves: four piles, four scores, one winner seat."""
    game = Game(4, "booklet", seed=3)
    rnd = random.Random(3)
    while game.winner is None:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if game.hand_result is not None:
            assert len(game.hand_result.hand_score) == 4, "one score row per player"
    assert len(game.scores) == 4 and game.scores[game.winner] == max(game.scores), game.scores
    assert sorted(game.scores).count(max(game.scores)) == 1, "the winner has strictly more than every other side"


@pytest.mark.parametrize("make, message", IMPOSSIBLE)
def test_impossible_combinations(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- move-mode enumeration ------------------------------------------------------------------

DOCUMENTED_N = {
    "standard": 16_200,
    "scopone": 16_200,
    "scopone_scientifico": 16_200,
    "asso_pigliatutto": 16_204,
    "scopa_d_assi": 16_204,
    "scopa_d_assi_options": 16_208,
    "scopa_corse": 4_852,
    "chkobba": 16_240,
    "hurrikan": 16_200,
    "booklet": 1_560,
    "booklet_capture_more": 6_056,
    "scopa_di_quindici_1": 84_488,
    "escoba": 84_488,
    "scopa_a_quindici": 84_488,
    "scopa_di_quindici_2": 100_648,
    "scopa_di_quindici_2_fewest": 100_648,
    "scopa_di_quindici_3": 100_652,
}


@pytest.mark.parametrize("preset, n", sorted(DOCUMENTED_N.items()))
def test_move_mode_size(preset, n):
    """docs/rules.md: N per preset, every one in "move" mode (the fifteens too: up to 100,652)."""
    rules = get_rules(preset)
    assert n <= MAX_MOVE_ACTIONS and len(move_enumeration(rules)) == n, f"{preset}: documented N = {n}"
    space = scopa_v0.raw_env(rules.player_counts[0], rules=preset, action_mode="move").action_space("player_0")
    assert space.n == n, f"{preset}: Discrete(N) in move mode"


def test_move_mode_refuses_an_enumeration_over_its_cap(monkeypatch):
    """Rules whose enumeration would pass MAX_MOVE_ACTIONS get a one-line error pointing to "select"."""
    import scopa_env.engine.actions as actions

    monkeypatch.setattr(actions, "MAX_MOVE_ACTIONS", 16_199)
    with pytest.raises(ValueError, match=r"'standard' allow 16,200 distinct moves, more than the 16,199 .*'select'"):
        actions.MoveEnumeration(get_rules("standard"))


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


# --- random games: invariants in every preset and player count --------------------------------


WILDCARD = card_id(1, 7)
"""Cirulla's wildcard, the Seven of cups (card 16)."""


def value_of(card: int, wild_rank: int = 0) -> int:
    """A card's capture value: Cirulla's declared wildcard keeps its declared rank."""
    return wild_rank if wild_rank and card == WILDCARD else RANK_OF[card]


def table_subsets(tcards: list[int], limit: int, wild_rank: int = 0) -> list[tuple[int, int, int]]:
    """(mask, sum, size) of every non-empty set of table cards whose values add up to at most ``limit``."""
    subsets = []

    def walk(i, total, mask, size):
        if size:
            subsets.append((mask, total, size))
        for j in range(i, len(tcards)):
            v = total + value_of(tcards[j], wild_rank)
            if v <= limit:
                walk(j + 1, v, mask | 1 << tcards[j], size + 1)

    walk(0, 0, 0, 0)
    return subsets


def brute_force_pairs(hand: int, table: int, rules: Rules, wild_rank: int = 0) -> list[tuple[int, int]]:
    """The capture rules read straight off the texts, by enumerating table subsets."""
    tcards = cards_of(table)
    aces_on_table = any(value_of(c, wild_rank) == 1 for c in tcards)
    out = []
    for card in cards_of(hand):
        rank = value_of(card, wild_rank)
        if not tcards:
            out.append((card, 1 << card) if rules.ace_takes_itself and rank == 1 else (card, 0))
            continue
        subsets = table_subsets(tcards, max(rank, rules.capture_sum - rank), wild_rank)
        singles = [m for m, t, k in subsets if k == 1 and t == rank] if rules.capture_equal else []
        sets = [m for m, t, k in subsets if k >= 2 and t == rank] if rules.capture_equal else []
        if singles and rules.single_card_priority:
            sets = []
        fifteens = [m for m, t, k in subsets if t + rank == rules.capture_sum] if rules.capture_sum else []
        take_all = [table] if rules.ace_takes_all and rank == 1 and not aces_on_table else []
        options = set(singles + sets + fifteens + take_all)
        if rules.max_capture_cards:
            options = {m for m in options if m.bit_count() <= rules.max_capture_cards}
        if rules.fewest_cards and options:
            options = {m for m in options if m.bit_count() == min(o.bit_count() for o in options)}
        if not options or rules.capture_optional:
            out.append((card, 0))
        out += [(card, m) for m in sorted(options)]
    return out


def expected_score(piles: list[int], scope: list[int], rules: Rules) -> list[dict]:
    """Hand points recomputed from the piles with the rule texts' words."""

    def most(values):
        return [int(v == max(values) and values.count(v) == 1) for v in values]

    bonus = SUIT_MASK[rules.bonus_suit]
    out = [{} for _ in piles]
    for key, values in (
        ("cards", [p.bit_count() for p in piles]),
        ("coins", [(p & bonus).bit_count() for p in piles]),
    ):
        for row, point in zip(out, most(values)):
            row[key] = point
    for row, p, k in zip(out, piles, scope):
        row["settebello"] = p >> card_id(rules.bonus_suit, 7) & 1
        row["scope"] = k * rules.scopa_points
    if rules.prime_rule == "sevens":
        for row, point in zip(
            out, most([((p & RANK_MASK[7]).bit_count(), (p & RANK_MASK[6]).bit_count()) for p in piles])
        ):
            row["seven_majority"] = point
    elif not rules.primiera_by_counts:
        # pagat: "the sum of the values of the best card of each suit"; a side lacking a
        # suit cannot score it (pagat) or adds 0 for that suit (booklet: "None | 0").
        values = []
        for p in piles:
            bests = [
                max((rules.primiera_values[RANK_OF[c] - 1] for c in cards_of(p & SUIT_MASK[s])), default=None)
                for s in range(4)
            ]
            if None in bests and rules.primiera_all_suits:
                values.append(0)
            else:
                values.append(sum(b for b in bests if b is not None))
        for row, point, v in zip(out, most(values), values):
            row["primiera"] = point if v > 0 else 0
    return out


def check_cards_accounted(game: Game) -> None:
    parts = list(game.hands) + [game.table, mask_of(game.stock)] + list(game.piles)
    total = sum(p.bit_count() for p in parts)
    union = 0
    for p in parts:
        union |= p
    assert total == len(game.rules.deck) and union == game.rules.deck_mask, f"cards lost or doubled: {game!r}"


def play_checked(game: Game, rnd: random.Random, hands: int) -> None:
    rules = game.rules
    rng = np.random.default_rng(0)
    step = 0
    while game.winner is None and game.hand_number < hands:
        check_cards_accounted(game)
        before = list(game.scores)
        pairs = game.legal_pairs()
        step += 1
        if step % 7 == 0:
            world = game.view().determinize(rng)
            check_cards_accounted(world)
            assert world.legal_pairs() == pairs, "a determinized world has the same legal moves"
        card = game.hands[game.current].bit_length() - 1
        if game.declare_queue:
            hand = game.hands[game.current]
            assert pairs == declaring_pairs(hand, rules), "declare / pass (Cirulla: declare the wildcard as a rank)"
            assert pairs[0][1] == 0 and len(pairs) >= 2, "pass first, then one or more declarations"
            assert game.claim_pair() is None, "no claim during a decision"
        elif game.deciding:
            assert pairs == [(card, 0), (card, 1 << card)], "the first-card decision, or declare / pass"
            assert game.claim_pair() is None, "no claim during a decision"
        else:
            want = brute_force_pairs(game.hands[game.current], game.table, rules, game.wild_rank)
            assert pairs == want, f"{rules.name}: {pairs} != brute force {want} in {game!r}"
            claim = game.claim_pair()
            assert claim == ((card, 1 << card) if rules.claim_out else None), "the claim: the highest card, itself"
            assert claim not in pairs, "the claim is not a card play (legal_pairs)"
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if game.hand_result is not None:
            result = game.hand_result
            piles = [mask_of(p) for p in result.piles]
            assert sum(p.bit_count() for p in piles) == len(rules.deck), "every card in a pile at the hand end"
            for row, want in zip(result.hand_score, expected_score(piles, result.scope, rules)):
                for key, value in want.items():
                    assert row[key] == value, f"{rules.name}: {key} {row[key]} != {value} ({result})"
                points = [k for k in row if not k.startswith("num_") and k not in ("total", "primiera_value")]
                assert row["total"] == sum(row[k] for k in points if k != "double_game"), row
            rescored = score_hand(result.piles, result.scope, rules)
            for row, again in zip(result.hand_score, rescored):
                assert {k: v for k, v in row.items() if k != "double_game"} == {
                    k: v for k, v in again.items() if k != "double_game"
                }, "the hand score is a function of the piles and scope"
            assert [b + row["total"] for b, row in zip(before, result.hand_score)] == game.scores
    if game.winner is None:
        check_cards_accounted(game)


PRESET_COUNTS = [(name, n) for name in sorted(PRESETS) for n in PRESETS[name].player_counts]


@pytest.mark.parametrize("preset, n", PRESET_COUNTS)
def test_random_games_engine(preset, n):
    rnd = random.Random(n)
    game = Game(n, preset, seed=n)
    play_checked(game, rnd, hands=2)
    assert game.hand_number >= 1 or game.winner is not None


@pytest.mark.parametrize("preset, n", PRESET_COUNTS)
def test_hidden_cards_stay_hidden(preset, n):
    """Permute the cards the observer cannot see (other hands but revealed cards, the stock order)
    at several points of a random game: the observation stays the same."""
    rules = get_rules(preset)
    layout = ObservationLayout.for_rules(n, rules)
    game = Game(n, rules, seed=n)
    rnd = random.Random(n)
    rng = np.random.default_rng(n)
    checked = 0
    for step in range(60):
        if game.winner is not None:
            break
        if step % 5 == 0:
            seat = game.current
            revealed = list(game.revealed) if rules.declarations else [0] * n
            others = [s for s in range(n) if s != seat]
            hidden = [c for s in others for c in cards_of(game.hands[s] & ~revealed[s])] + list(game.stock)
            shuffled = [int(c) for c in rng.permutation(hidden)]
            world = game.clone()
            pos = 0
            for s in others:
                k = (game.hands[s] & ~revealed[s]).bit_count()
                world.hands[s] = revealed[s] | mask_of(shuffled[pos : pos + k])
                pos += k
            world.stock = shuffled[pos:]
            a = write_observation(game, seat, layout, np.empty(layout.size, np.float32))
            b = write_observation(world, seat, layout, np.empty(layout.size, np.float32))
            assert np.array_equal(a, b), f"{preset}, {n} players, step {step}: the observation shows hidden cards"
            assert world.action_pairs() == game.action_pairs(), f"{preset}: the legal moves depend on hidden cards"
            checked += 1
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    assert checked > 0


@pytest.mark.parametrize("preset, n", PRESET_COUNTS)
def test_random_games_env(preset, n):
    """Both env modes: the mask is exactly the legal moves; episodes end with every card scored."""
    rules = get_rules(preset)
    assert len(move_enumeration(rules)) <= MAX_MOVE_ACTIONS, f"{preset}: every preset has a move mode"
    for mode in ("select", "move"):
        env = scopa_v0.raw_env(num_players=n, rules=preset, action_mode=mode, episode="hand")
        env.reset(seed=7)
        rng = np.random.default_rng(7)
        steps = 0
        for _agent in env.agent_iter(max_iter=2000):
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            ids = np.flatnonzero(obs["action_mask"])
            game = env.game
            # The env's actions: the card plays, the decisions (Chkobba's first card, declare /
            # pass) and, under claim_out, the claim of chiamarsi fuori.
            expected = set(game.legal_pairs())
            claim = game.claim_pair()
            if claim is not None:
                assert claim not in expected and not game.deciding, f"{preset}: the claim is an extra action"
                expected.add(claim)
            if game.declare_queue:
                want = set(declaring_pairs(game.hands[game.current], rules))
                assert expected == want, f"{preset}: a declaration is pass or declare (the wildcard's rank)"
            elif game.deciding:
                card = game.hands[game.current].bit_length() - 1
                assert expected == {(card, 0), (card, 1 << card)}, f"{preset}: a decision is self-mask or not"
            assert expected == set(game.action_pairs()), f"{preset}: action_pairs = legal_pairs + claim"
            if env._pending_card is None:
                if mode == "move":
                    decoded = {(m.card, m.mask) for m in (env.decode_action(i) for i in ids)}
                    assert decoded == expected, f"{preset}/{mode}: mask != legal moves (+ claim)"
                else:
                    assert set(ids) == {c for c, _ in expected}, f"{preset}/{mode}: mask != cards of the legal moves"
            if claim is not None and rng.random() < 0.97:  # claim now and then, not at once
                ids = [i for i in ids if mode == "select" or env.decode_action(i) != move_of(*claim)]
            env.step(int(rng.choice(ids)))
            steps += 1
        assert env.game.hand_result is not None and steps > 0, f"{preset}/{mode}: the hand ended"
        if not env.game.hand_over:
            check_cards_accounted(env.game)


@pytest.mark.parametrize(
    "preset, n, mode",
    [
        ("chkobba", 2, "move"),
        ("chkobba", 4, "select"),
        ("asso_pigliatutto", 2, "move"),
        ("scopa_d_assi_options", 3, "select"),
        ("scopa_corse", 4, "move"),
        ("hurrikan", 2, "select"),
        ("booklet", 3, "move"),
        ("scopa_di_quindici_3", 2, "select"),
    ],
)
def test_whole_env_games(preset, n, mode):
    """Whole games through the wrapped env: +1 to the winning side, -1 to the others."""
    env = scopa_v0.env(num_players=n, rules=preset, action_mode=mode)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_iter=20_000):
        obs, reward, term, trunc, _ = env.last()
        returns[agent] += reward
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    game = env.unwrapped.game
    assert game.winner is not None, f"{preset}: the game reached its target {game.rules.target}"
    for i, agent in enumerate(env.possible_agents):
        assert returns[agent] == (1.0 if game.side_of[i] == game.winner else -1.0), f"{preset}: {agent}"


def test_full_games_every_preset():
    """A few whole games in each preset, to the target (scores only grow, a winner emerges)."""
    for name in sorted(PRESETS):
        rules = PRESETS[name]
        game = Game(rules.player_counts[0], rules, seed=42)
        rnd = random.Random(42)
        while game.winner is None:
            pairs = game.legal_pairs()
            game.play_pair(*pairs[rnd.randrange(len(pairs))])
        # A game ends at the target, or earlier by cappotto or by an outright win the rules name (e.g.
        # Cirulla's all_coins_wins, Wikipedia: "a team that manages to capture all 10 coins in a single
        # round wins the game immediately"), which the hand's events then show.
        outright = game.win_reason not in (None, "target") and (game.win_reason, game.winner) in game.hand_result.events
        assert max(game.scores) >= rules.target or rules.cappotto or outright, (
            f"{name}: {game.scores} ({game.win_reason})"
        )


@pytest.mark.parametrize("preset", ["chkobba", "scopa_corse", "hurrikan", "booklet", "scopa_di_quindici_3"])
def test_cli_play_random(preset, capsys):
    """`scopa play-random --rules NAME` plays any registered preset."""
    assert cli_main(["play-random", "--rules", preset, "--seed", "1", "--hand", "--quiet"]) == 0
    assert "Hand 1 result" in capsys.readouterr().out
