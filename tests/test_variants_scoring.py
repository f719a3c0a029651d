"""Hand scoring in the variant presets and scoring options: the categories a preset changes (the
sevens' majority, ties, the primiera scales), the scoring extras (re bello, the seven of cups,
le palle del cane, Napola, scalette, piva), the Libyan scope values and coin reset, the items
that win the game outright, Hurrikan's double game and the targets of the point-rich games.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from variant_helpers import COINS_ALL, cards, game_holding, play_named, score, two_player_game

from scopa_env import scopa_v0
from scopa_env.engine.cards import card_id
from scopa_env.engine.game import Game
from scopa_env.engine.rules import PRIMIERA_SCALES, get_rules
from scopa_env.engine.scoring import score_hand

# --- the categories each preset scores ------------------------------------------------------------


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
        game = game_holding("hurrikan", "Ad 5s", "3c", scores=[15, 4 * seed], seed=seed)
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


# --- scoring extras, table-driven -----------------------------------------------------------------


EXTRA_CASES = [
    # (rules, pile0, pile1, key, points per side, source quote)
    (
        "sbarazzina",
        "Kd",
        "Kc",
        "re_bello",
        [1, 0],
        'pagat: "an extra point to the player or team that wins the King of coins"',
    ),
    ("standard,re_bello=true", "Kc", "Kd", "re_bello", [0, 1], 'wikipedia: "the King of coins also counts as a point"'),
    (
        "standard,seven_of_cups=true",
        "7c 7d",
        "7s",
        "seven_of_cups",
        [1, 0],
        'wikipedia: "a point is awarded for the seven of cups in addition to the seven of coins"',
    ),
    (
        "standard,seven_of_cups=true",
        "7c 7d",
        "7s",
        "settebello",
        [1, 0],
        'wikipedia: "in addition to the seven of coins" (the settebello still scores)',
    ),
    (
        "standard,palle_del_cane=true",
        "7d 7c 7s 7b",
        "Kd",
        "palle_del_cane",
        [1, 0],
        'wikipedia: "if a player gets all four sevens in a hand ... an additional point Le palle del cane"',
    ),
    ("standard,palle_del_cane=true", "7d 7c 7s", "7b", "palle_del_cane", [0, 0], "wikipedia: all four sevens"),
    ("napola", "Ad 2d 3d", "4d", "napola", [3, 0], 'pagat: "the smallest Napola A-2-3 scores 3 points"'),
    ("napola", "Ad 2d", "3d", "napola", [0, 0], 'pagat: "a sequence of at least three consecutive coins"'),
    ("napola", "2d 3d 4d 5d", "Ad", "napola", [0, 0], 'pagat: "consecutive coins/diamonds beginning with the Ace"'),
    (
        "napola",
        "Ad 2d 3d 4d 5d 7d",
        "6d",
        "napola",
        [5, 0],
        'pagat: "One point is scored for each card in the sequence"',
    ),
    (
        "napola",
        "Ad 2d 3d 4d 5d 6d 7d Jd",
        "Kd",
        "napola",
        [6, 0],
        'pagat: "Some play that the maximum Napola is A-2-3-4-5-6 for 6 points"',
    ),
    (
        "napola_9",
        "Ad 2d 3d 4d 5d 6d 7d Jd Qd",
        "Kd",
        "napola",
        [9, 0],
        'pagat: "up to 9 points for a sequence of 9 up to the Queen/Horse"',
    ),
    (
        "napola_wikipedia",
        "Ad 2d 3d 4d 5d Jd",
        "6d",
        "napola",
        [6, 0],
        'wikipedia: "captures the ace, two, three, four, and five, and eight of coins, that team is awarded 6"',
    ),
    (
        "napola_wikipedia",
        "2d 3d 4d 5d Jd",
        "Ad",
        "napola",
        [0, 0],
        'wikipedia: "capturing the ace, two, and three of coins"',
    ),
    (
        "scalette",
        "Ad 2d 3d",
        "Kd",
        "scaletta_bassa",
        [3, 0],
        'pagat: "A Scaletta bassa ... (A-2-3 of coins/diamonds) and it scores 3 points"',
    ),
    (
        "scalette",
        "Ad 2d 3d 4d 5d 6d 7d Jd Qd",
        "Kd",
        "scaletta_bassa",
        [9, 0],
        'pagat: "as far as the Horse/Queen (for 9 points)"',
    ),
    (
        "scalette",
        "Kd Qd Jd",
        "Ad",
        "scaletta_alta",
        [5, 0],
        'pagat: "King-Horse/Queen-Jack of coins/diamonds, which is worth 5 points"',
    ),
    (
        "scalette",
        "Kd Qd Jd 7d 6d",
        "Ad",
        "scaletta_alta",
        [7, 0],
        'pagat: "scoring an extra point for each additional card"',
    ),
    (
        "scalette",
        "2d 3d 4d 5d 6d 7d Jd Qd Kd",
        "Ad",
        "scaletta_alta",
        [11, 0],
        'pagat: "as far as the 2 (for 11 points)"',
    ),
    ("scalette", "Kd Qd 7d", "Jd", "scaletta_alta", [0, 0], "pagat: the alta needs King-Horse/Queen-Jack"),
    ("piva", "2b", "2d", "piva", [-5, 0], 'pagat: "the 2 of clubs scores minus 5 points for the player who takes it"'),
    # the primiera scales
    (
        "standard,primiera_values=face",
        "Ad Ac As Ab",
        "7d 2c 2s 2b",
        "primiera",
        [1, 0],
        'pagat: "some count 2-7 as face value, Aces as 5 1/2 and picture cards as 1/2" (22 > 13)',
    ),
    (
        "standard,primiera_values=no_figures",
        "Kd Kc Ks Kb",
        "Jd Jc Js 2b",
        "primiera",
        [0, 1],
        'wikipedia: "count 0 points for each face card" (0 < 12)',
    ),
    ("standard", "Kd Kc Ks Kb", "Jd Jc Js 2b", "primiera", [0, 1], "pagat: the standard scale gives 40 vs 42"),
    (
        "standard,primiera_by_counts=true",
        "7d 7c 6s",
        "7s 7b Ad Ac As",
        "primiera",
        [1, 0],
        'wikipedia: "the most sevens, or the person with the most sixes if there is a tie"',
    ),
    (
        "standard,primiera_by_counts=true",
        "7d 7c 6s Ad",
        "7s 7b 6d Ac Ab",
        "primiera",
        [0, 1],
        'wikipedia: "down to aces, and so on"',
    ),
    (
        "standard,primiera_by_counts=true",
        "7d 7c",
        "7s 7b",
        "primiera",
        [0, 0],
        "wikipedia: a full tie scores nobody (as every tie in Scopa)",
    ),
]


@pytest.mark.parametrize("rules, pile0, pile1, key, points, quote", EXTRA_CASES)
def test_scoring_extras(rules, pile0, pile1, key, points, quote):
    rows = score(rules, pile0, pile1)
    assert [row[key] for row in rows] == points, f"{rules}: {pile0} vs {pile1} -> {key} ({quote})"
    for row in rows:
        points_keys = [k for k in row if not k.startswith("num_") and k not in ("total", "primiera_value")]
        assert row["total"] == sum(row[k] for k in points_keys), f"total is the sum of the point keys: {row}"


def test_extras_only_where_enabled():
    """The standard game's dicts are unchanged; each extra key appears only under its rules."""
    assert set(score("standard", "Kd", "Kc")[0]) == {
        "cards", "coins", "settebello", "primiera", "scope", "total",
        "num_cards", "num_coins", "primiera_value", "num_scope",
    }  # fmt: skip
    assert "re_bello" in score("sbarazzina", "Kd", "Kc")[0] and "napola" not in score("sbarazzina", "Kd", "Kc")[0]


def test_face_scale_is_exact():
    """pagat: "Aces as 5 1/2 and picture cards as 1/2" are kept as written (0.5 steps)."""
    rows = score("standard,primiera_values=face", "Ad Kc Ks 7b", "2d")
    assert rows[0]["primiera_value"] == 5.5 + 0.5 + 0.5 + 7
    assert get_rules("standard,primiera_values=face").primiera_values == PRIMIERA_SCALES["face"]
    assert get_rules("standard,primiera_values=5.5/2/3/4/5/6/7/0.5/0.5/0.5").primiera_values == PRIMIERA_SCALES["face"]


# --- Libyan options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, worth, quote",
    [
        ("points", 1, "pagat: a scopa scores 1 point"),
        ("card", 7, "wikipedia: \"if the 'winning card' is worth 7, the scopa is worth 7\""),
        ("cards", 3, 'wikipedia: "if a scopa numbers 5 cards ... equals 5; if a scopa is but 2 cards, only 2"'),
    ],
)
def test_libyan_scopa_value(value, worth, quote):
    game = two_player_game(f"standard,scopa_value={value}", "7d 2b", "Kc Ks", "3c 4s")
    game.play(play_named(game, "7d takes 3c 4s"))
    assert game.scope == [1, 0] and game.scope_points == [worth, 0], quote
    while not game.hand_over:
        game.play(game.legal_moves()[0])
    assert game.hand_result.hand_score[0]["scope"] == worth and game.hand_result.hand_score[0]["num_scope"] == 1
    world = game.view(0)
    assert world.scope_points == (worth, 0), "the view carries the scope's worth"


def test_libyan_view_determinizes_scope_points():
    game = two_player_game("standard,scopa_value=cards", "7d 2b", "Kc Ks", "3c 4s")
    game.play(play_named(game, "7d takes 3c 4s"))
    world = game.view().determinize(np.random.default_rng(0))
    assert world.scope_points == game.scope_points == [3, 0]


@pytest.mark.parametrize(
    "rules, coins0, reset, quote",
    [
        ("standard,coins_reset=10", 10, True, 'wikipedia: "a sweep of Diamonds ... will reset the opponent to zero"'),
        ("standard,coins_reset=10", 9, False, "wikipedia: a sweep of Diamonds is all of them"),
        ("standard,coins_reset=8", 8, True, 'wikipedia: "(sometimes eight are enough)"'),
        ("standard,coins_reset=8", 7, False, "wikipedia: eight are enough, seven are not"),
    ],
)
def test_libyan_coins_reset(rules, coins0, reset, quote):
    rules = get_rules(rules)
    coins = [card_id(0, r) for r in range(1, 11)]
    others = [c for c in rules.deck if c not in coins and c not in cards("Kc Ks")]
    pile0 = coins[:coins0] + others[:10]
    pile1 = coins[coins0:] + others[10:]
    game = Game.from_deal([cards("Kc"), cards("Ks")], [], [], dealer=1, rules=rules, piles=[pile0, pile1],
                          scores=[3, 9], auto_next_hand=False)  # fmt: skip
    while not game.hand_over:
        game.play(game.legal_moves()[0])
    events = game.hand_result.events
    gained = [row["total"] for row in game.hand_result.hand_score]
    if reset:
        assert ("coins_reset", 0) in events and game.scores == [3 + gained[0], 0], quote
    else:
        assert not events and game.scores == [3 + gained[0], 9 + gained[1]], quote


# --- game-winning items ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules, event, quote",
    [
        ("napola_9", "napoleone", 'pagat: "a sequence of 10 (the whole suit) is a Napoleone ... which wins the game outright"'),
        ("scalette", "scala", 'pagat: "A player who takes all the coins/diamonds has a Scala ... and wins the whole game"'),
        ("napola_wikipedia,all_coins_wins=true", "all_coins", 'wikipedia: "a team that manages to capture all 10 coins ... wins the game immediately"'),
        ("napola", None, "pagat: the 6-point reading has no Napoleone"),
    ],
)  # fmt: skip
def test_whole_coin_suit_wins(rules, event, quote):
    rules = get_rules(rules)
    coins = cards(COINS_ALL)
    others = [c for c in rules.deck if c not in coins and c not in cards("Kc Ks")]
    game = Game.from_deal([cards("Kc"), cards("Ks")], [], [], dealer=1, rules=rules,
                          piles=[coins + others[:5], others[5:]], scores=[0, 20], auto_next_hand=False)  # fmt: skip
    while not game.hand_over:
        game.play(game.legal_moves()[0])
    if event is None:
        assert game.hand_result.events == () and game.win_reason != "napoleone", quote
    else:
        assert game.hand_result.events == ((event, 0),), quote
        assert game.winner == 0 and game.win_reason == event and game.done, f"{quote}: side 0 wins at {game.scores}"


def test_piva_negative_scores():
    """pagat: "A player's total score can thus be negative"."""
    rules = get_rules("piva")
    rest = [c for c in rules.deck if c not in cards("Kc Ks 2b")]
    game = Game.from_deal([cards("Kc"), cards("Ks")], [], [], dealer=1, rules=rules,
                          piles=[rest[:20], rest[20:] + cards("2b")], auto_next_hand=False)  # fmt: skip
    while not game.hand_over:
        game.play(game.legal_moves()[0])
    assert game.hand_result.hand_score[1]["piva"] == -5 and game.scores[1] < 0, game.scores
    env = scopa_v0.raw_env(rules="piva")
    assert env.observation_space("player_0")["observation"].low[env.layout["scores"]][0] == -np.inf


# --- targets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [21, 31, 41])
@pytest.mark.parametrize("preset", ["napola", "scalette", "sbarazzina"])
def test_targets(preset, target):
    """pagat: "the target to win the game is usually set at 21, 31 or 41 rather than 11"."""
    rules = get_rules(f"{preset},target={target}")
    game = Game(2, rules, seed=target)
    rnd = random.Random(target)
    while game.winner is None:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    assert game.win_reason != "target" or game.scores[game.winner] >= target, game.scores
