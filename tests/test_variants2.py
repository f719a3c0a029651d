"""Rule variants II (issue 4): scoring extras, declarations and the big combination games.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt and
``wikipedia`` is wikipedia-scopa.txt. Each table row quotes the sentence it checks;
the random-game suite at the end plays every issue-4 preset and option at every player
count it allows, in the engine and in both env modes. (tests/test_variants.py also
plays every registered preset, these included, against its generic invariants.)
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from scopa_env import scopa_v0
from scopa_env.engine.actions import move_enumeration
from scopa_env.engine.cards import RANK_MASK, SUIT_MASK, card_id, mask_of, parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import PRIMIERA_SCALES, Move, Rules, get_rules, legal_moves
from scopa_env.engine.scoring import (
    best_declaration,
    declaration,
    declaring_pairs,
    score_hand,
    secured_points,
    table_bonus_scope,
    wild_rank_choices,
)


def cards(text: str) -> list[int]:
    return parse_cards(text)


def score(rules: str | Rules, pile0: str, pile1: str, scope=(0, 0), scope_points=None) -> list[dict]:
    p0 = cards(pile0)
    p1 = [c for c in cards(pile1) if c not in p0]
    return score_hand([p0, p1], list(scope), rules, scope_points)


COINS_ALL = "Ad 2d 3d 4d 5d 6d 7d Jd Qd Kd"
WILD_OPTION = "standard,hand_bonus_points=3/10,bonus_wildcard=true"
"""Cirulla's hand bonuses and wildcard on the standard captures ("move" mode fits: N = 39,761)."""

# --- scoring extras, table-driven -------------------------------------------------------------

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


# --- Libyan options ------------------------------------------------------------------------------


def two_player_game(rules: str | Rules, mine: str, theirs: str, table: str, **kwargs) -> Game:
    """A last-deal position: player_0 holds ``mine`` and leads, player_1 holds ``theirs``, the rest is in piles."""
    rules = get_rules(rules)
    m, t, tb = cards(mine), cards(theirs), cards(table)
    rest = [c for c in rules.deck if c not in m + t + tb]
    piles = kwargs.pop("piles", [rest[: len(rest) // 2], rest[len(rest) // 2 :]])
    return Game.from_deal([m, t], tb, [], dealer=1, rules=rules, piles=piles, auto_next_hand=False, **kwargs)


def play_named(game: Game, text: str):
    """The legal move printed as ``text``."""
    by_name = {str(m): m for m in game.legal_moves()}
    assert text in by_name, f"{text} not in {sorted(by_name)}"
    return by_name[text]


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


# --- Scopa Bazzica declarations -------------------------------------------------------------------

DECLARATION_CASES = [
    # (rules, hand, expected (name, points) or None, source quote)
    ("scopa_bazzica", "Ad Ac 2s", ("bazzica", 3), 'pagat: "Bazzica: any three cards which add up to 9 or less ... Scores 3 points"'),
    ("scopa_bazzica", "Ad 2c 6s", ("bazzica", 3), 'pagat: "A+2+6" is a bazzica (total 9)'),
    ("scopa_bazzica", "Ad 2c 7s", None, 'pagat: "add up to 9 or less" (10 is too much)'),
    ("scopa_bazzica", "Ad 2c Js", None, 'pagat: "pictures as 10"'),
    ("scopa_bazzica", "Kd Kc Ks", ("bazzicotto", 10), 'pagat: "Bazzicotto: three cards of the same rank. Scores 10 points"'),
    ("scopa_bazzica", "Ad Ac As", ("bazzicotto", 10), 'pagat: "A+A+A is best" (a bazzicotto, not a bazzica)'),
    ("sbarazzina", "Ad 2c 3s", ("bazzica", 2), 'pagat: "A bazzica scores 2 points if the three cards are all of different ranks"'),
    ("sbarazzina", "Ad Ac 3s", ("bazzica", 3), 'pagat: "or 3 points if they include a pair"'),
    ("sbarazzina", "5d 5c 5s", ("bazzicotto", 7), 'pagat: "Three of a kind of any rank scores 7 points"'),
    ("standard", "Ad Ac As", None, "pagat: only Scopa Bazzica and Sbarazzina declare"),
]  # fmt: skip


@pytest.mark.parametrize("rules, hand, expected, quote", DECLARATION_CASES)
def test_declarations(rules, hand, expected, quote):
    found = declaration(mask_of(cards(hand)), get_rules(rules))
    assert (None if found is None else (found.name, found.points)) == expected, f"{rules}: {hand} ({quote})"


@pytest.mark.parametrize(
    "hand0, hand1, winner, quote",
    [
        ("Kd Kc Ks", "Ad Ac 2s", 0, 'pagat: "Any bazzicotto beats any bazzica"'),
        ("Ad 2c 6s", "2d Ac As", 1, 'pagat: "the one with the lower total card value is better. The best is 2+A+A"'),
        ("Ad 2c 6s", "2d 3c 4s", None, 'pagat: "equal in value (for example A+2+6 against 2+3+4) then neither player scores"'),
        ("Kd Kc Ks", "Ad Ac As", 1, 'pagat: "the one with the lower cards is better (A+A+A is best, K+K+K is worst)"'),
        ("Kd Kc Ks", None, 0, "pagat: a lone declaration scores"),
    ],
)  # fmt: skip
def test_only_the_better_declaration_scores(hand0, hand1, winner, quote):
    hands = [(0, mask_of(cards(hand0)))] + ([(1, mask_of(cards(hand1)))] if hand1 else [])
    assert best_declaration(hands, get_rules("scopa_bazzica")) == winner, quote


def bazzica_deal(hand0: str, hand1: str, rules: str = "scopa_bazzica", **kwargs) -> Game:
    """A fresh hand (dealer 1, 4 on the table) with ``hand0``/``hand1`` dealt and their declarations open
    (Cirulla's: player_0's alone, at its first turn; player_1 decides at its own)."""
    rules = get_rules(rules)
    h0, h1 = cards(hand0), cards(hand1)
    rest = [c for c in rules.deck if c not in h0 + h1 and c not in cards("Kb")]
    table = rest[-3:] + cards("Kb")
    stock = rest[:-3]
    queue = [s for s, h in ((0, h0), (1, h1)) if declaration(mask_of(h), rules) is not None]
    if rules.declare_at_turn:
        queue = [s for s in queue if s == 0]
    queue = kwargs.pop("declare_queue_override", queue)
    return Game.from_deal(
        [h0, h1], table, stock, dealer=1, rules=rules, declare_queue=queue, auto_next_hand=False, **kwargs
    )


def test_declaring_is_a_move_before_the_first_card():
    """pagat: "must be declared immediately after a three-card deal, before the next card is played, and the
    cards must be shown"."""
    game = bazzica_deal("Ad Ac 2s", "Kd Kc Ks", scores=[4, 5])
    hi0 = cards("2s")[0]
    assert game.deciding and game.current == 0 and game.legal_moves() == [Move(hi0), Move(hi0, itself=True)]
    game.play(Move(hi0, itself=True))  # player_0 declares a bazzica
    assert game.revealed[0] == mask_of(cards("Ad Ac 2s")) and game.current == 1 and game.deciding
    assert game.view(1).revealed[0] == game.revealed[0], "the shown hand is in every view"
    assert not game.view(1).unseen & game.revealed[0], "shown cards are no longer unseen"
    hi1 = cards("Ks")[0]
    game.play(Move(hi1, itself=True))  # player_1 declares a bazzicotto, which beats it
    assert not game.deciding and game.current == 0 and game.scores == [4, 15], "the bazzicotto scores 10 at once"
    assert [d["points"] for d in game.declarations] == [0, 10]
    game.play(game.legal_moves()[0])
    assert game.revealed[0].bit_count() == 2, "a played card is no longer in the revealed hand"


def test_passing_and_non_qualifying_hands():
    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks", scores=[0, 0])
    assert game.declare_queue == [0], "only a qualifying hand decides"
    game.play(Move(cards("2s")[0]))  # pass
    assert not game.deciding and game.scores == [0, 0] and game.revealed == [0, 0] and game.declarations == []


def test_declared_points_in_hand_result():
    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks", scores=[0, 0])
    game.play(Move(cards("2s")[0], itself=True))
    rnd = random.Random(0)
    while not game.hand_over:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    declared = game.hand_result.declared
    assert declared[0]["bazzica"] == 3, declared
    assert game.scores == [r["total"] + sum(d.values()) for r, d in zip(game.hand_result.hand_score, declared)]


def test_determinize_keeps_revealed_cards():
    game = bazzica_deal("Ad Ac 2s", "Kd Kc Ks")
    game.play(Move(cards("2s")[0], itself=True))
    view = game.view(1)
    for seed in range(5):
        world = view.determinize(np.random.default_rng(seed))
        assert world.hands[0] == game.hands[0], "the shown hand stays with its owner"
        assert (
            world.legal_pairs() == game.legal_pairs() and world.declare_queue == [1] and world.pending == game.pending
        )


@pytest.mark.parametrize("mode", ["move", "select"])
def test_declaration_actions_and_observation(mode):
    env = scopa_v0.raw_env(rules="scopa_bazzica", action_mode=mode)
    h0, h1 = cards("Ad Ac 2s"), cards("Kd Kc Ks")
    rules = env.rules
    rest = [c for c in rules.deck if c not in h0 + h1]
    env.reset(options={"deal": {"hands": [h0, h1], "table": rest[-4:], "stock": rest[:-4], "dealer": 1,
                                "declare_queue": [0, 1]}})  # fmt: skip
    assert env.layout.size == 376 + 41 and env.layout["revealed"].stop - env.layout["revealed"].start == 40
    obs = env.observe("player_0")
    assert obs["observation"][env.layout["declaring"]][0] == 1.0
    ids = list(np.flatnonzero(obs["action_mask"]))
    hi = cards("2s")[0]
    if mode == "move":
        assert ids == sorted([env.encode_action(Move(hi)), env.encode_action(Move(hi, itself=True))])
        env.step(env.encode_action(Move(hi, itself=True)))
    else:
        assert ids == [hi]
        env.step(hi)
        assert list(np.flatnonzero(env.observe("player_0")["action_mask"])) == [hi, 40], "again (declare) or CONFIRM"
        env.step(hi)
    seen_by_1 = env.observe("player_1")["observation"]
    assert set(np.flatnonzero(seen_by_1[env.layout["revealed"]])) == set(h0), "player_1 sees player_0's hand"
    assert not set(np.flatnonzero(seen_by_1[env.layout["unseen"]])) & set(h0)
    assert not np.flatnonzero(env.observe("player_0")["observation"][env.layout["revealed"]]).size, "nothing shown yet"


def test_standard_layouts_unchanged():
    assert scopa_v0.raw_env().layout.size == 376 and scopa_v0.raw_env(rules="napola").layout.size == 376
    assert scopa_v0.raw_env(num_players=4, rules="sbarazzina").layout.size == ObservationLayout(4).size + 3 * 40 + 1


# --- Cirulla ---------------------------------------------------------------------------------------


def capture_sets(hand: str, table: str, rules: str) -> set[frozenset[int]]:
    """The sets the (single) hand card may capture (frozenset of card ids; empty = trail)."""
    return {frozenset(m.captured) for m in legal_moves(cards(hand), cards(table), rules)}


def sets(*texts: str) -> set[frozenset[int]]:
    return {frozenset(cards(t)) for t in texts}


@pytest.mark.parametrize(
    "hand, table, expected, exact, quote",
    [
        ("Jd", "Jc 5s 3b", sets("Jc", "5s 3b"), True, 'wikipedia: "with \'J 5 3\' on the table, a player holding a \'J\' would be free to either capture the \'J\', or the \'5\' and \'3\'"'),
        ("Jd", "Ac 6s 7b", sets("7b", "Ac 6s"), False, 'wikipedia: "with \'A 6 7\' on the table, a player holding a \'J\' could choose to either capture the \'7\' ... or the \'A\' and the \'6\'"'),
        ("Ad", "5c 7s Kb", sets("5c 7s Kb"), True, 'wikipedia: "Playing an ace allows a player to capture all cards on the table"'),
        ("Ad", "Ac 4s Kb", sets("Ac", "4s Kb"), True, 'wikipedia: "playing the ace can only capture the ace already on the table (or be used to perform a \'fifteen-capture\')"'),
    ],
)  # fmt: skip
def test_cirulla_captures(hand, table, expected, exact, quote):
    got = capture_sets(hand, table, "cirulla")
    assert (got == expected) if exact else expected <= got, f"{hand} on {table}: {got} ({quote})"


def test_cirulla_ace_capture_is_a_scopa():
    """wikipedia: "Playing an ace allows a player to capture all cards on the table, and counts as a scopa"."""
    game = two_player_game("cirulla", "Ad 2b", "Kc Ks", "5c 7s Jb")
    game.play(play_named(game, "Ad takes 5c 7s Jb"))
    assert game.table == 0 and game.scope == [1, 0]


@pytest.mark.parametrize(
    "table, redeal, quote",
    [
        ("Ad Ac 5s 7b", True, 'wikipedia: "If two or more aces are dealt to the table, the cards are collected, re-shuffled"'),
        ("Ad 4c 5s 7b", False, "wikipedia: two or more aces"),
        ("Kd Kc Ks 7b", False, "wikipedia: Cirulla names no Kings redeal"),
    ],
)  # fmt: skip
def test_cirulla_redeal(table, redeal, quote):
    assert Game(2, "cirulla", seed=0).needs_redeal(mask_of(cards(table))) is redeal, quote


def test_cirulla_redeal_by_the_next_dealer():
    """wikipedia: "... re-shuffled, and dealt again by the next dealer"."""
    seen = 0
    for seed in range(60):
        game = Game(2, "cirulla", seed=seed, dealer=1)
        assert game.dealer == (1 + game.redeals) % 2, f"seed {seed}: {game.redeals} redeals, dealer {game.dealer}"
        seen += game.redeals
    assert seen, "some deal was thrown in"


@pytest.mark.parametrize(
    "hand, expected, quote",
    [
        ("7d Ac As", "bonus_3", 'wikipedia: "three cards whose values add up to strictly less than 10 (e.g. \'7 A A\', \'A 3 4\', etc.)"'),
        ("Ad 3c 4s", "bonus_3", 'wikipedia: "\'A 3 4\'"'),
        ("Ad 4c 5s", None, 'wikipedia: "strictly less than 10"'),
        ("Kd Kc Ks", "bonus_10", 'wikipedia: "A \'ten-point bonus\' ... three cards of the same rank"'),
        ("3d 3c 3s", "bonus_10", 'wikipedia: "for a hand that qualifies for both bonuses (e.g. ... three threes), only the ten-point bonus"'),
        ("7c Qd Qs", "bonus_10", 'wikipedia: "a player holding [7 of hearts, Q, Q] may declare that the [7] is a queen"'),
        ("7c 5d 3s", "bonus_3", "wikipedia: the wildcard may play any card that scores a bonus (an Ace: 1 + 5 + 3 = 9)"),
        ("7c 5d 4s", None, 'wikipedia: "not allowed to take advantage of the [7] as a wildcard since ... this will not allow the player to score a bonus"'),
        ("7d Qd Qs", None, "wikipedia: only the seven of hearts is the wildcard"),
    ],
)  # fmt: skip
def test_cirulla_hand_bonuses(hand, expected, quote):
    found = declaration(mask_of(cards(hand)), get_rules("cirulla"))
    assert (None if found is None else found.name) == expected, f"{hand}: {found} ({quote})"
    if found is not None:
        assert found.points == {"bonus_3": 3, "bonus_10": 10}[found.name]


@pytest.mark.parametrize(
    "table, scope, quote",
    [
        ("5c 4s 3b 3d", 1, 'wikipedia: "If the four cards dealt by the dealer to the table ... add up to 15, the dealer captures them and marks a scopa"'),
        ("Kc Ks Qb Ad", 2, 'wikipedia: "If the four cards dealt to the table at the start add up to 30, the dealer captures them and scores two scope"'),
        ("Kc 2s 2b 7c", 1, "wikipedia: the seven of hearts counts as a wildcard for the dealer bonuses (as an Ace: 15)"),
        ("Kc Ks 2b 7c", 2, "wikipedia: the wildcard as a Jack makes 30"),
        ("Kc Ks 2b 7d", 0, "wikipedia: 29 is no bonus"),
    ],
)  # fmt: skip
def test_cirulla_dealer_bonus(table, scope, quote):
    assert table_bonus_scope(mask_of(cards(table)), get_rules("cirulla")) == scope, quote


def test_cirulla_dealer_bonus_in_play():
    """The dealer takes the table and marks the scope before anyone plays."""
    found = 0
    for seed in range(400):
        game = Game(2, "cirulla", seed=seed, auto_next_hand=False)
        side = game.side_of[game.dealer]
        if game.table_bonus[side]:
            found += 1
            assert game.table == 0 and game.scope[side] == game.table_bonus[side] and game.piles[side].bit_count() == 4
            assert game.last_capturer == game.dealer
    assert found, "some initial table made a dealer bonus"


def test_cirulla_every_declaration_scores():
    """wikipedia: hand bonuses are "awarded to players who hold" them (no comparison between players)."""
    game = bazzica_deal("Ad Ac 2s", "Kd Kc Ks", rules="cirulla", scores=[0, 0])
    game.play(Move(cards("2s")[0], itself=True))
    game.play(game.legal_moves()[0])  # player_0's first card; then player_1's first turn
    game.play(Move(cards("Ks")[0], itself=True))
    assert game.scores == [3, 10] and game.revealed[1] == mask_of(cards("Kd Kc Ks"))
    assert game.revealed[0] == game.hands[0] and game.revealed[0].bit_count() == 2


AT_FIRST_CARD = (
    'wikipedia, Cirulla: "Such bonuses must be declared before the player holding them has played their first card"'
)


def cirulla_order(hand0: str, hand1: str, table: str, rules: str = "cirulla") -> list[int]:
    """A deck order dealing ``hand0``/``hand1`` (dealer 1, one card at a time) and then ``table``."""
    h0, h1, tb = cards(hand0), cards(hand1), cards(table)
    rest = [c for c in get_rules(rules).deck if c not in h0 + h1 + tb]
    return [c for pair in zip(h0, h1) for c in pair] + tb + rest


def test_cirulla_declares_at_the_players_first_turn():
    """AT_FIRST_CARD: the decision comes at the holder's own first turn of the deal, after the earlier
    players' cards of the round, which the deciding player sees (pagat's bazzica: "immediately after a
    three-card deal, before the next card is played", so every seat decides before the first card)."""
    order = cirulla_order("Ad Ac 2s", "Kd Kc Ks", "7b Jb Qb 5b")
    bazzica = Game.from_order(order, 2, "scopa_bazzica", auto_next_hand=False)
    assert bazzica.declare_queue == [0, 1], "bazzica: both seats decide right after the deal"
    game = Game.from_order(order, 2, "cirulla", auto_next_hand=False)
    assert game.hands == [mask_of(cards("Ad Ac 2s")), mask_of(cards("Kd Kc Ks"))]
    assert game.declare_queue == [0] and game.view(1).declare_queue == (0,), AT_FIRST_CARD
    game.play(Move(cards("2s")[0], itself=True))  # player_0 declares its three-point bonus ...
    assert game.scores == [3, 0] and game.current == 0 and not game.deciding, "... it scores; player_0 plays on"
    two, jack, five = cards("2s Jb 5b")
    game.play(Move(two, [jack, five]))  # 2 + 8 + 5 = 15
    view = game.view(1)
    assert game.current == 1 and view.declaring and game.declare_queue == [1], AT_FIRST_CARD
    assert view.history == ((0, two, (1 << jack) | (1 << five)),), "player_1 decides having seen player_0's card"
    assert view.table == mask_of(cards("7b Qb")) and view.revealed[0] == mask_of(cards("Ad Ac"))
    hi = cards("Ks")[0]
    assert view.legal_pairs() == [(hi, 0), (hi, 1 << hi)]
    game.play(Move(hi))  # player_1 passes ...
    assert game.current == 1 and not game.deciding and game.scores == [3, 0], "... and plays its first card"
    assert all(game.hands[1] >> c & 1 for c, _ in game.legal_pairs()) and len(game.legal_pairs()) > 2
    game.play(game.legal_moves()[0])
    assert not game.deciding and game.current == 0, "a later turn of the deal offers no declaration"


def test_cirulla_bonuses_need_every_deal_of_three_cards():
    """wikipedia, Cirulla: "Each player is dealt three cards": a three-card hand is then a first turn of
    its deal; a four-card deal would offer the bonus on its second turn."""
    schedule = {2: (3, 3, 3, 3, 2, 4)}
    with pytest.raises(ValueError, match="every deal must be of three cards"):
        Game(2, get_rules("cirulla").replace(name="cirulla_4", deal_schedules=schedule))
    Game(2, get_rules("scopa_bazzica").replace(name="bazzica_4", deal_schedules=schedule))  # after the 3-card deals


@pytest.mark.parametrize(
    "pile0, key, points, quote",
    [
        ("Ad 2d 3d", "piccola", 3, 'wikipedia: "Three points are awarded for capturing [A 2 3 of diamonds] ... la piccola"'),
        ("Ad 2d 3d 4d 5d 6d 7d", "piccola", 6, 'wikipedia: "all the way up to [A-6] which is worth six points"'),
        ("Jd Qd Kd", "grande", 5, 'wikipedia: "Five points are awarded for capturing [J Q K of diamonds] ... la grande"'),
        ("Qd Kd", "grande", 0, "wikipedia: la grande is J-Q-K"),
    ],
)  # fmt: skip
def test_cirulla_piccola_grande(pile0, key, points, quote):
    assert score("cirulla", pile0, "5c")[0][key] == points, quote


def test_cirulla_all_diamonds_wins():
    """wikipedia: "if a player or team manages to capture all diamonds in one round, they win the game immediately"."""
    rules = get_rules("cirulla")
    coins = cards(COINS_ALL)
    others = [c for c in rules.deck if c not in coins and c not in cards("Kc Ks")]
    game = Game.from_deal([cards("Kc"), cards("Ks")], [], [], dealer=1, rules=rules,
                          piles=[coins + others[:5], others[5:]], scores=[0, 40], auto_next_hand=False)  # fmt: skip
    while not game.hand_over:
        game.play(game.legal_moves()[0])
    assert game.winner == 0 and game.win_reason == "all_coins"


def test_cirulla_env_select_mode():
    """Cirulla's fifteens and wildcard make "move" mode wide (271,737 ids); "select" mode declares in two actions."""
    assert scopa_v0.raw_env(rules="cirulla", action_mode="move").action_space("player_0").n == 271_737
    env = scopa_v0.raw_env(rules="cirulla", action_mode="select")
    h0, h1 = cards("Ad Ac 2s"), cards("Kd Kc Ks")
    rest = [c for c in env.rules.deck if c not in h0 + h1]
    tb = cards("7b Jb Qb 5b")
    stock = [c for c in rest if c not in tb]
    env.reset(options={"deal": {"hands": [h0, h1], "table": tb, "stock": stock, "dealer": 1,
                                "declare_queue": [0]}})  # fmt: skip
    hi = cards("2s")[0]
    assert list(np.flatnonzero(env.observe("player_0")["action_mask"])) == [hi]
    env.step(hi)
    env.step(40)  # CONFIRM: pass
    assert env.game.current == 0 and env.game.revealed[0] == 0 and not env.game.deciding
    assert env.observe("player_1")["observation"][env.layout["declaring"]][0] == 0.0, AT_FIRST_CARD
    env.step(hi)  # player_0's first card: the 2 takes Jb 5b (its only capture)
    assert env.game.current == 1 and env.game.history == [(0, hi, mask_of(cards("Jb 5b")))]
    assert env.observe("player_1")["observation"][env.layout["declaring"]][0] == 1.0


# --- Cirulla's wildcard keeps its declared rank for capturing --------------------------------------

KEEPS_RANK = (
    'wikipedia: "The [seven of hearts] will then keep its declared rank (in this example a queen, which has a '
    "value of nine) for the rest of the hand for the purposes of card capturing (and could therefore capture a "
    "'6' since 9 + 6 = 15)\""
)
WILD_QUEEN = 9

WILD_CAPTURE_CASES = [
    # (hand, table, wild_rank, captures (empty set = trail), quote)
    ("7c", "6d", WILD_QUEEN, sets("6d"), KEEPS_RANK),
    ("7c", "6d", 0, {frozenset()}, "wikipedia: undeclared, the seven of hearts is a Seven (7 + 6 = 13)"),
    ("7c", "Qd 2s", WILD_QUEEN, sets("Qd"), 'wikipedia: it keeps "its declared rank (in this example a queen ...)" (an equal capture)'),
    ("7c", "Qd 2s", 0, {frozenset()}, "wikipedia: undeclared it is a Seven (no 7 and no 8 to make 15 on the table)"),
    ("6s", "7c", WILD_QUEEN, sets("7c"), "wikipedia: on the table it is captured as the declared queen (6 + 9 = 15) "
     '("for the purposes of card capturing")'),
    ("Qs", "7c Ad", WILD_QUEEN, sets("7c"), 'wikipedia: "for the purposes of card capturing" a Queen takes it as a Queen'),
    ("Jd", "7c 6s", WILD_QUEEN, {frozenset()}, "wikipedia: as a queen it no longer makes 15 with a Jack (8 + 9 = 17)"),
    ("Jd", "7c 6s", 0, sets("7c"), "wikipedia: an undeclared Seven makes 15 with a Jack (8 + 7)"),
    ("7c", "4s 3s Kb", 1, sets("4s 3s Kb", "4s Kb"), 'wikipedia: declared an Ace (three-point bonus), "Playing an ace allows a '
     'player to capture all cards on the table"'),
    ("Ad", "7c 4s Kb", 1, sets("7c", "4s Kb"), 'wikipedia: declared an Ace it is an ace on the table: "unless an ace is '
     'already on the table – in which case playing the ace can only capture the ace already on the table (or ... '
     "'fifteen-capture')\""),
]  # fmt: skip


@pytest.mark.parametrize("hand, table, wild_rank, expected, quote", WILD_CAPTURE_CASES)
def test_cirulla_wildcard_captures_as_declared(hand, table, wild_rank, expected, quote):
    got = {frozenset(m.captured) for m in legal_moves(cards(hand), cards(table), "cirulla", wild_rank=wild_rank)}
    assert got == expected, f"{hand} on {table}, wildcard declared {wild_rank}: {got} ({quote})"


@pytest.mark.parametrize(
    "hand, name, wild_rank, quote",
    [
        ("7c Qd Qs", "bonus_10", WILD_QUEEN, 'wikipedia: "a player holding [7 Q Q] may declare that the [7] is a queen"'),
        ("7c Ad As", "bonus_10", 1, "wikipedia: the wildcard as an Ace makes three of a kind (better than 7+1+1 = 9)"),
        ("7c 5d 3s", "bonus_3", 1, "total under 10: the lowest rank it may be declared as (the player chooses)"),
        ("7c 7d 7s", "bonus_10", 0, 'wikipedia: a wildcard "only as long as doing so allows them to score": three '
         "Sevens need none"),
        ("Qc Qd Qs", "bonus_10", 0, "wikipedia: no wildcard in the hand"),
    ],
)  # fmt: skip
def test_cirulla_declared_rank(hand, name, wild_rank, quote):
    found = declaration(mask_of(cards(hand)), get_rules("cirulla"))
    assert (found.name, found.wild_rank) == (name, wild_rank), f"{hand}: {found} ({quote})"


def test_heuristic_plays_the_declared_wildcard_rank():
    """The heuristic's reply model reads the wildcard as its declared rank (KEEPS_RANK): a Queen
    trailed onto an empty table is a scopa for a wildcard declared a Queen, for no plain Seven."""
    from agents.heuristic import HeuristicAgent

    def position(wild_rank: int) -> Game:
        # player_0 trails onto an empty table; player_1 holds the wildcard and a Two; the other Queens are in piles.
        return two_player_game("cirulla", "Qd 3s", "7c 2s", "", wild_rank=wild_rank)

    def trail_scores(wild_rank: int) -> dict[str, float]:
        view = position(wild_rank).view()
        pairs = view.legal_pairs()
        names = {cards("Qd")[0]: "Qd", cards("3s")[0]: "3s"}
        return {names[card]: s for (card, _), s in zip(pairs, HeuristicAgent(seed=0).scores(view, pairs))}

    plain, declared = trail_scores(0), trail_scores(WILD_QUEEN)
    assert declared["3s"] == plain["3s"], "no rank of the Three changed"
    assert declared["Qd"] < plain["Qd"] - 1.0, (plain, declared)
    assert HeuristicAgent(seed=0).act(position(WILD_QUEEN).view()) == Move(cards("3s")[0])


def wild_deal(rules: str = "cirulla", table: str = "6d 2b 3b 4b") -> Game:
    """player_0 holds 7c Qd Qs (a ten-point bonus with the wildcard as a Queen) and decides first."""
    rules = get_rules(rules)
    h0, h1 = cards("7c Qd Qs"), cards("Kd 5c 2s")
    tb = cards(table)
    stock = [c for c in rules.deck if c not in h0 + h1 + tb]
    return Game.from_deal([h0, h1], tb, stock, dealer=1, rules=rules, declare_queue=[0], auto_next_hand=False)


def test_cirulla_wildcard_rank_in_play():
    """wikipedia: the wildcard keeps its declared rank "for the rest of the hand ... but will then revert"."""
    game = wild_deal()
    hi = cards("Qs")[0]
    game.play(Move(hi, itself=True))  # declare: the 7 of cups is a Queen
    seven, six = cards("7c 6d")
    assert game.wild_rank == WILD_QUEEN and game.view(1).wild_rank == WILD_QUEEN, "the declared rank is public"
    assert game.scores == [10, 0] and game.declarations[0]["name"] == "bonus_10"
    assert (seven, 1 << six) in game.legal_pairs(), KEEPS_RANK
    world = game.view(1).determinize(np.random.default_rng(0))
    assert world.wild_rank == WILD_QUEEN and world.hands[0] == game.hands[0], "determinize keeps the declared rank"
    game.play(Move(seven, [six]))
    assert game.piles[0] == mask_of(cards("7c 6d"))
    rnd = random.Random(0)
    while not game.hand_over:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    assert game.hand_result.hand_score == score_hand(game.hand_result.piles, game.hand_result.scope, game.rules), (
        "at the hand end it reverts to the seven of hearts (scored as a Seven)"
    )
    game.next_hand()
    assert game.wild_rank == 0, "a new hand: the wildcard is a Seven again"


def test_cirulla_wildcard_on_the_table():
    """wikipedia: "for the purposes of card capturing" read both ways: on the table the declared wildcard is
    captured as its declared rank (docs/rules.md)."""
    game = two_player_game("cirulla", "6s Jd", "Kc Ks", "7c 5b", wild_rank=WILD_QUEEN)
    moves = {str(m) for m in game.legal_moves()}
    assert "6s takes 7c" in moves and "Jd takes 7c" not in moves, f"6 + 9 = 15, 8 + 9 = 17: {moves}"
    assert game.view(1).wild_rank == WILD_QUEEN
    with pytest.raises(ValueError, match="no wildcard"):
        two_player_game("standard", "6s Jd", "Kc Ks", "7c 5b", wild_rank=WILD_QUEEN)
    with pytest.raises(ValueError, match="wild_rank must be 0"):
        two_player_game("cirulla", "6s Jd", "Kc Ks", "7c 5b", wild_rank=11)


def test_cirulla_wildcard_passed_keeps_seven():
    game = wild_deal()
    game.play(Move(cards("Qs")[0]))  # pass: no declaration, no wildcard
    assert game.wild_rank == 0 and (cards("7c")[0], 1 << cards("6d")[0]) not in game.legal_pairs()


CHOOSES_RANK = (
    'wikipedia: the wildcard counts "as long as doing so allows them to score"; it "will then keep its declared '
    'rank": for the total under 10 the player declares the rank'
)


def choice_deal(rules: str = "cirulla", table: str = "6d 2b 3b 4b") -> Game:
    """player_0 holds 7c As 2b: 7 + 1 + 2 = 10, a total under 10 only with the wildcard as 1..6."""
    rules = get_rules(rules)
    h0, h1 = cards("7c As 2s"), cards("Kd 5c Ks")
    tb = cards(table)
    stock = [c for c in rules.deck if c not in h0 + h1 + tb]
    return Game.from_deal([h0, h1], tb, stock, dealer=1, rules=rules, declare_queue=[0], auto_next_hand=False)


def test_cirulla_wildcard_rank_choices():
    seven = cards("7c")[0]
    rules = get_rules("cirulla")
    assert wild_rank_choices(mask_of(cards("7c As 2s")), rules) == (1, 2, 3, 4, 5, 6), CHOOSES_RANK
    assert wild_rank_choices(mask_of(cards("7c 5d 3s")), rules) == (1,), "5 + 3 + r < 10: only an Ace"
    assert wild_rank_choices(mask_of(cards("7c Qd Qs")), rules) == (), "three of a kind: the rank is the pair's"
    assert wild_rank_choices(mask_of(cards("7c Ad 2s")), rules) == (1, 2, 3, 4, 5, 6)
    assert wild_rank_choices(mask_of(cards("7c 6d 2s")), rules) == (1,)
    assert wild_rank_choices(mask_of(cards("7d Ad As")), rules) == (), "no wildcard in the hand"
    pairs = declaring_pairs(mask_of(cards("7c As 2s")), rules)
    assert pairs == [(seven, 0)] + [(seven, 1 << card_id(0, r)) for r in range(1, 7)], "pass, then one move per rank"
    hi = max(cards("7c Qd Qs"))
    assert declaring_pairs(mask_of(cards("7c Qd Qs")), rules) == [(hi, 0), (hi, 1 << hi)], "no choice: declare / pass"


@pytest.mark.parametrize("rank", [1, 4, 6])
def test_cirulla_declared_rank_is_the_players_choice(rank):
    game = choice_deal()
    seven = cards("7c")[0]
    assert game.legal_pairs() == declaring_pairs(game.hands[0], game.rules)
    assert game.view(0).legal_pairs() == game.legal_pairs(), "the view offers the same choice"
    game.play_pair(seven, 1 << card_id(0, rank))
    assert game.wild_rank == rank and game.view(1).wild_rank == rank, CHOOSES_RANK
    assert game.scores == [3, 0] and game.declarations[0]["name"] == "bonus_3"
    assert game.revealed[0] == mask_of(cards("7c As 2s")), "the declared hand is shown"
    # With 6d 2b 3b 4b on the table the wildcard captures as the chosen rank: the 6d as a Six,
    # the 4b as a Four, the whole table as an Ace (the Ace-capture).
    six, four = cards("6d 4b")
    pairs = game.legal_pairs()
    assert ((seven, 1 << six) in pairs) == (rank == 6), f"declared {rank}: {pairs}"
    assert ((seven, 1 << four) in pairs) == (rank == 4), f"declared {rank}: {pairs}"
    assert ((seven, game.table) in pairs) == (rank == 1), f"declared {rank}: {pairs}"


def test_cirulla_passing_a_choice_keeps_the_seven():
    game = choice_deal()
    game.play_pair(cards("7c")[0], 0)
    assert game.wild_rank == 0 and game.scores == [0, 0] and not game.declarations


@pytest.mark.parametrize("mode", ["move", "select"])
def test_wildcard_rank_choice_in_the_env(mode):
    """Both action modes: the mask offers pass and one declaration per rank; the chosen rank is public."""
    rules = WILD_OPTION if mode == "move" else "cirulla"
    env = scopa_v0.raw_env(rules=rules, action_mode=mode)
    h0, h1 = cards("7c As 2s"), cards("Kd 5c Ks")
    tb = cards("6d 2b 3b 4b")
    stock = [c for c in env.rules.deck if c not in h0 + h1 + tb]
    env.reset(options={"deal": {"hands": [h0, h1], "table": tb, "stock": stock, "dealer": 1, "declare_queue": [0]}})
    seven, five_coins = cards("7c")[0], card_id(0, 5)
    ids = list(np.flatnonzero(env.observe("player_0")["action_mask"]))
    if mode == "move":
        offered = {(m.card, m.mask) for m in (env.decode_action(i) for i in ids)}
        assert offered == set(declaring_pairs(mask_of(h0), env.rules)), CHOOSES_RANK
        env.step(env.encode_action(Move(seven, [five_coins])))
    else:
        assert ids == [seven], "name the Seven of cups first"
        env.step(seven)
        ids = list(np.flatnonzero(env.observe("player_0")["action_mask"]))
        assert ids == [card_id(0, r) for r in range(1, 7)] + [40], "then the coin of the rank, or CONFIRM (pass)"
        env.step(five_coins)
    assert env.game.wild_rank == 5, CHOOSES_RANK
    layout = env.layout
    for seat in (0, 1):
        obs = env.observe(f"player_{seat}")["observation"]
        assert list(np.flatnonzero(obs[layout["wild_rank"]])) == [4], "the declared rank is public"


@pytest.mark.parametrize("mode", ["move", "select"])
def test_wildcard_rank_in_the_env(mode):
    """Both action modes offer the wildcard's captures as its declared rank; the observation shows the rank."""
    rules, target = ("cirulla", "6d") if mode == "select" else (WILD_OPTION, "Qc")  # 9 + 6 = 15, 9 = 9
    env = scopa_v0.raw_env(rules=rules, action_mode=mode)
    h0, h1 = cards("7c Qd Qs"), cards("Kd 5c 2s")
    tb = cards(f"{target} 2b 3b 4b")
    stock = [c for c in env.rules.deck if c not in h0 + h1 + tb]
    env.reset(options={"deal": {"hands": [h0, h1], "table": tb, "stock": stock, "dealer": 1, "declare_queue": [0]}})
    hi, seven, six = cards(f"Qs 7c {target}")
    if mode == "move":
        env.step(env.encode_action(Move(hi, itself=True)))
    else:
        env.step(hi)
        env.step(hi)
    layout = env.layout
    assert layout["wild_rank"].stop - layout["wild_rank"].start == 10
    for seat in (0, 1):
        obs = env.observe(f"player_{seat}")["observation"]
        assert list(np.flatnonzero(obs[layout["wild_rank"]])) == [WILD_QUEEN - 1], "the declared rank is public"
    ids = list(np.flatnonzero(env.observe("player_0")["action_mask"]))
    if mode == "move":
        assert env.encode_action(Move(seven, [six])) in ids, KEEPS_RANK
        env.step(env.encode_action(Move(seven, [six])))
    else:
        assert seven in ids
        env.step(seven)
        env.step(six)  # the 7 has several captures: name the 6 ...
        if not env.game.history:  # ... and CONFIRM the 6 alone (9 = 6 + 3 is another capture)
            env.step(40)
    assert env.game.piles[0] >> seven & 1 and env.game.piles[0] >> six & 1, f"the wildcard took the {target} as a Queen"


def test_wildcard_observation_hides_hidden_cards():
    """Permuting the hidden cards (determinize) leaves every seat's observation with the wildcard unchanged."""
    from scopa_env.engine.observation import write_observation

    game = wild_deal()
    game.play(Move(cards("Qs")[0], itself=True))
    layout = ObservationLayout.for_rules(2, game.rules)
    for seed in range(5):
        for seat in (0, 1):
            world = game.view(seat).determinize(np.random.default_rng(seed))
            a = write_observation(game, seat, layout, np.empty(layout.size, np.float32))
            b = write_observation(world, seat, layout, np.empty(layout.size, np.float32))
            assert np.array_equal(a, b), f"seed {seed}, seat {seat}: the observation depends on hidden cards"


def test_standard_and_bazzica_layouts_have_no_wild_rank():
    assert "wild_rank" not in ObservationLayout.for_rules(2, get_rules("scopa_bazzica")).slices
    assert ObservationLayout.for_rules(2, get_rules("cirulla")).size == 417 + 10
    with pytest.raises(ValueError, match="needs declarations=True"):
        ObservationLayout(2, wildcard=True)


# --- chiamarsi fuori ------------------------------------------------------------------------------

FUORI = "standard,claim_out=true,player_counts=2/4/6"


def secured(pile0: str, pile1: str, rules: str = FUORI, scope_points=(0, 0)) -> list[dict]:
    rules = get_rules(rules)
    p0, p1 = mask_of(cards(pile0)), mask_of([c for c in cards(pile1) if c not in cards(pile0)])
    return secured_points([p0, p1], list(scope_points), rules, rules.deck_mask & ~(p0 | p1))


def first(n: int, exclude: str = "") -> str:
    """``n`` cards of cups, swords and batons (no coins), as text, for padding piles."""
    from scopa_env.engine.cards import format_cards

    skip = set(cards(exclude))
    return format_cards([c for c in range(10, 40) if c not in skip][:n])


@pytest.mark.parametrize(
    "pile0, pile1, key, points, quote",
    [
        (first(21), "", "cards", 1, 'pagat: "In a two player game a player needs 21 cards to claim the point for cards"'),
        (first(20), "", "cards", 0, 'pagat: "needs 21 cards"'),
        ("Ad 2d 3d 4d 5d 6d", "", "coins", 1, 'pagat: "and 6 coins/diamonds to claim the point for that suit"'),
        ("Ad 2d 3d 4d 5d", "", "coins", 0, 'pagat: "6 coins/diamonds"'),
        ("7d", "", "settebello", 1, "pagat: the settebello, once taken, is certain"),
        ("7d 7c 7s 7b", "", "primiera", 1, 'pagat: "they will win the prime even if the opponent takes all the cards that are not yet captured"'),
        ("7d 7c 6s 6b", "", "primiera", 0, "pagat: the opponent could still take 7s 7b (84 > 78)"),
        ("7d 7c 6s 6b", "7s 7b", "primiera", 0, "pagat: the opponent already holds a better prime in reach"),
    ],
)  # fmt: skip
def test_claim_certain_points(pile0, pile1, key, points, quote):
    assert secured(pile0, pile1)[0][key] == points, f"{pile0} vs {pile1}: {key} ({quote})"


def test_claim_scope_and_extras_are_certain():
    rows = secured("Kd", "", "sbarazzina,claim_out=true,player_counts=2/4/6", scope_points=(2, 0))
    assert rows[0]["scope"] == 2 and rows[0]["re_bello"] == 1 and rows[0]["total"] == 3


def claim_game(scores, pile0: str):
    rules = get_rules(FUORI)
    mine, theirs = cards("Kc 4s"), cards("Ks 5b")
    p0 = [c for c in cards(pile0) if c not in mine + theirs]
    rest = [c for c in rules.deck if c not in mine + theirs + p0]
    return Game.from_deal([mine, theirs], rest[:2], [], dealer=1, rules=rules, piles=[p0, rest[2:]], scores=scores,
                          auto_next_hand=False)  # fmt: skip


@pytest.mark.parametrize(
    "scores, pile0, winner, reason, quote",
    [
        ([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d", 0, "claim", 'pagat: "claiming to have enough points to reach the game target of 11"'),
        ([8, 3], "7d Ad", 1, "false_claim", 'pagat: "If the claimer turns out not to have enough points to win, they automatically lose the game"'),
    ],
)  # fmt: skip
def test_claim_ends_the_game(scores, pile0, winner, reason, quote):
    game = claim_game(scores, pile0)
    claim = game.claim_pair()
    hi = max(cards("Kc 4s"))
    assert claim == (hi, 1 << hi) and claim not in game.legal_pairs() and claim in game.action_pairs()
    assert game.view().claim_is_sound() is (reason == "claim")
    game.play(Move(hi, itself=True))
    assert game.done and game.winner == winner and game.win_reason == reason, quote
    assert game.hand_result.events == ((reason, 0),) and game.hand_over


@pytest.mark.parametrize("mode", ["move", "select"])
def test_claim_action_in_the_env(mode):
    env = scopa_v0.raw_env(rules=FUORI, action_mode=mode)
    game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
    env.reset()
    env.game = game
    env._legal_ids = None
    hi = max(cards("Kc 4s"))
    ids = list(np.flatnonzero(env.observe("player_0")["action_mask"]))
    if mode == "move":
        claim_id = env.encode_action(Move(hi, itself=True))
        assert claim_id in ids and len(ids) == len(game.legal_pairs()) + 1
        env.step(claim_id)
    else:
        env.step(hi)
        assert hi in list(np.flatnonzero(env.observe("player_0")["action_mask"])), "name it again to claim"
        env.step(hi)
    assert all(env.terminations.values()) and env.rewards["player_0"] == 1.0 and env.rewards["player_1"] == -1.0
    assert env.infos["player_0"]["win_reason"] == "claim"


def test_claims_only_on_card_turns():
    game = Game(2, FUORI, seed=0)
    assert game.claim_pair() is not None and game.view(1).claim_pair() is None, "only the player to move claims"
    assert Game(2, "standard", seed=0).claim_pair() is None


# --- options, impossible combinations ------------------------------------------------------------


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


IMPOSSIBLE = [
    (lambda: get_rules("napola").replace(scalette=True), "is equivalent to a Napola"),
    (lambda: get_rules("standard,napola=pagat_7"), "napola must be one of"),
    (lambda: get_rules("standard,scopa_value=double"), "scopa_value must be one of"),
    (lambda: get_rules("standard,coins_reset=4"), "coins_reset must be 0"),
    (lambda: get_rules("hurrikan,seven_of_cups=true"), "already the settebello"),
    (lambda: get_rules("scopa_corse,piva=true"), "piva needs the Twos"),
    (lambda: get_rules("booklet,primiera_by_counts=true"), 'prime_rule="sevens" replaces'),
    (lambda: get_rules("standard,primiera_values=silly"), "bad value"),
    (lambda: get_rules("chkobba").replace(bazzica_points=(3, 3, 10)), "first_card_choice"),
    (lambda: get_rules("scopa_bazzica").replace(hand_bonus_points=(3, 10)), "two declaration systems"),
    (lambda: get_rules("standard,bonus_wildcard=true"), "bonus_wildcard is a wildcard for the hand and dealer"),
    (lambda: get_rules("cirulla,napola=pagat_6"), "piccola_grande scores the run"),
    (lambda: get_rules("scopone_scientifico,table_bonus=true"), "table_bonus needs cards dealt to the table"),
    (lambda: get_rules("standard,claim_out=true"), "claim_out needs two sides"),
    (lambda: get_rules("scopa_d_assi_options,claim_out=true,player_counts=2"), "share the self-mask"),
    (lambda: get_rules("hurrikan").replace(bazzica_points=(3, 3, 10)), "three-card deals"),
    (lambda: get_rules("standard,bazzica_points=3/10"), "bazzica_points must be"),
    (
        lambda: bazzica_deal("Ad 5c Ks", "2d 3c 4s", declare_queue_override=[0, 1]),
        "nothing to declare",
    ),  # fmt: skip
]


@pytest.mark.parametrize("make, message", IMPOSSIBLE)
def test_impossible_combinations(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- move-mode sizes, the compiled core ----------------------------------------------------------

DOCUMENTED_N = {
    "napola": 16_200,
    "napola_9": 16_200,
    "napola_wikipedia": 16_200,
    "scopone_milanese": 16_204,
    "scalette": 16_200,
    "scalette_d_assi": 16_204,
    "sbarazzina": 16_244,
    "piva": 16_244,
    "scopa_bazzica": 16_240,
    "cirulla": 271_737,
    "chiamarsi_fuori": 16_240,
}


@pytest.mark.parametrize("preset, n", sorted(DOCUMENTED_N.items()))
def test_move_mode_size(preset, n):
    """docs/rules.md: N per preset (Cirulla's wildcard with the fifteens: 271,737)."""
    assert len(move_enumeration(get_rules(preset))) == n, f"{preset}: documented N = {n}"


def test_move_mode_size_with_the_wildcard():
    """docs/rules.md: the wildcard may capture and be captured as any rank it is declared as (N = 39,761)."""
    assert len(move_enumeration(get_rules(WILD_OPTION))) == 39_761
    assert len(move_enumeration(get_rules("standard,hand_bonus_points=3/10"))) == 16_240


COMPILED_OPTIONS = [
    "standard,re_bello=true",
    "standard,seven_of_cups=true",
    "standard,palle_del_cane=true",
    "standard,primiera_values=face",
    "standard,primiera_by_counts=true",
    "standard,coins_reset=8",
    "standard,scopa_value=card",
    "standard,scopa_value=cards",
    "standard,all_coins_wins=true",
]
"""Pure scoring options: the compiled core plays them (tests/test_fast.py checks it plays them alike)."""

CORE_DECISION_RULES = [
    FUORI,
    WILD_OPTION,
    "chiamarsi_fuori",
    "cirulla",
    "piva",
    "sbarazzina",
    "scopa_bazzica",
    "chkobba",
]
"""Rules with a claim, declarations, Cirulla's wildcard or Chkobba's first card: decisions the compiled core
models (tests/test_fast_decisions.py checks it plays them as the engine does; tests/test_fast.py that a
field outside its whitelist is refused)."""

OPTION_STRINGS = COMPILED_OPTIONS + [FUORI, WILD_OPTION]
"""Every issue-4 option string, for the random-game suite below."""


@pytest.mark.parametrize("rules", COMPILED_OPTIONS + ["napola", "napola_9", "napola_wikipedia", "scalette"])
def test_fast_core_plays_the_scoring_extras(rules):
    from scopa_env.fast import check_supported

    check_supported(get_rules(rules))  # raises NotImplementedError if not


@pytest.mark.parametrize("rules", CORE_DECISION_RULES)
def test_fast_core_plays_the_decisions(rules):
    from scopa_env.fast import check_supported

    check_supported(get_rules(rules))  # raises NotImplementedError if not


# --- random games: invariants in every issue-4 preset and option ------------------------------------

SUITE = sorted(DOCUMENTED_N) + OPTION_STRINGS + ["standard,scopa_value=card,coins_reset=6,piva=true"]
SUITE_COUNTS = [(name, n) for name in SUITE for n in get_rules(name).player_counts]


def check_cards_accounted(game: Game) -> None:
    parts = list(game.hands) + [game.table, mask_of(game.stock)] + list(game.piles)
    union = 0
    for p in parts:
        union |= p
    assert sum(p.bit_count() for p in parts) == len(game.rules.deck) and union == game.rules.deck_mask, repr(game)


def check_hand_end(game: Game, before: list[int]) -> None:
    rules = game.rules
    result = game.hand_result
    piles = [mask_of(p) for p in result.piles]
    assert sum(p.bit_count() for p in piles) == len(rules.deck), "every card in a pile at the hand end"
    for row in result.hand_score:
        keys = [k for k in row if not k.startswith("num_") and k not in ("total", "primiera_value", "double_game")]
        assert row["total"] == sum(row[k] for k in keys), row
    libyan = rules.scopa_value != "points"
    again = score_hand(result.piles, result.scope, rules, result.scope_points if libyan else None)
    assert again == result.hand_score, "the hand score is a function of the piles and scope"
    after = [b + row["total"] for b, row in zip(before, result.hand_score)]
    for name, side in result.events:
        if name == "coins_reset":
            after = [v if s == side else 0 for s, v in enumerate(after)]
        else:
            assert game.winner == side and game.win_reason == name, "a game-winning item ends the game"
    assert after == game.scores, f"{after} != {game.scores}"
    coins = [(p & SUIT_MASK[rules.bonus_suit]).bit_count() for p in piles]
    if rules.napola and result.events == ():
        for row, p in zip(result.hand_score, piles):
            has = p & 0b111 == 0b111
            assert (row["napola"] > 0) == has, f"napola iff A-2-3 of coins: {row}"
    assert sum(coins) == 10


def play_checked(game: Game, rnd: random.Random, hands: int) -> None:
    rng = np.random.default_rng(0)
    step = 0
    while game.winner is None and game.hand_number < hands:
        check_cards_accounted(game)
        before = list(game.scores)
        pairs = game.legal_pairs()
        step += 1
        if step % 5 == 0:
            world = game.view().determinize(rng)
            assert world.legal_pairs() == pairs, "a determinized world has the same legal moves"
        closing = game.deciding and len(game.declare_queue) == 1
        made = len(game.declarations)
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if closing:
            new = game.declarations[made:]
            assert sum(d["points"] > 0 for d in new) <= 1, "only the best declaration scores"
            gained = [0] * game.num_sides
            for d in new:
                gained[d["side"]] += d["points"]
            assert game.scores == [b + g for b, g in zip(before, gained)], "declarations score at once"
        if game.hand_result is not None:
            check_hand_end(game, before)


@pytest.mark.parametrize("preset, n", SUITE_COUNTS)
def test_random_games_engine(preset, n):
    game = Game(n, preset, seed=n)
    play_checked(game, random.Random(n), hands=3)
    assert game.hand_number >= 1


@pytest.mark.parametrize("preset", SUITE)
def test_random_games_env(preset):
    """Both env modes: the mask is exactly the legal moves; every hand-end info carries the extras by name."""
    rules = get_rules(preset)
    n = rules.player_counts[0]
    for mode in ("move", "select") if DOCUMENTED_N.get(preset, 1) else ("select",):
        env = scopa_v0.raw_env(num_players=n, rules=preset, action_mode=mode, episode="hand")
        env.reset(seed=5)
        rng = np.random.default_rng(5)
        info = {}
        for _agent in env.agent_iter(max_iter=3000):
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            assert env.observation_space(_agent)["observation"].contains(obs["observation"]), "obs in its space"
            ids = np.flatnonzero(obs["action_mask"])
            if mode == "move" and env._pending_card is None:
                decoded = {(m.card, m.mask) for m in (env.decode_action(i) for i in ids)}
                assert decoded == set(env.game.action_pairs()), f"{preset}/{mode}: mask != legal moves"
            env.step(int(rng.choice(ids)))
        assert "hand_score" in info and ("events" in info) == rules.needs_events, f"{preset}/{mode}: hand-end info"
        assert ("declared" in info) == rules.declarations and ("table_bonus" in info) == rules.table_bonus
        row = info["hand_score"][0]
        for field, key in (("re_bello", "re_bello"), ("seven_of_cups", "seven_of_cups"), ("piva", "piva")):
            assert (key in row) == bool(getattr(rules, field)), f"{key} reported by name under {preset}"


def test_standard_observation_unchanged():
    env = scopa_v0.raw_env(rules="scalette_d_assi")
    assert env.layout.size == 376 and env.num_actions == 16_204
    assert scopa_v0.raw_env().num_actions == 16_200


def test_seven_cups_card_is_16():
    assert card_id(1, 7) == 16 and RANK_MASK[7] >> 16 & 1


# --- the terminal and web UIs show declarations ----------------------------------------------------


def test_declaration_in_the_terminal():
    from agents.random_agent import RandomAgent
    from scopa_app.play import TerminalGame

    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks")
    answers = iter(["1", "2", "q"])
    out: list[str] = []
    TerminalGame(
        game, {1: RandomAgent(seed=0)}, {1: "random"}, input_fn=lambda _: next(answers), output_fn=out.append
    ).run()
    text = "\n".join(out)
    assert "Your hand can be declared" in text and "1) pass (do not declare)  2) declare your hand" in text, text
    assert "You declares" in text or "declares" in text, text
    assert game.declarations and game.declarations[0]["points"] == 3 and game.scores[0] == 3


def test_declaration_in_the_web_ui():
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    pytest.importorskip("httpx", reason="the web extra is not installed")
    from fastapi.testclient import TestClient

    from scopa_app.web.server import SESSION_COOKIE, create_app, run_agents

    app = create_app(default_opponent="random", allow_client_seeds=True)
    with TestClient(app) as client:
        client.get("/")
        gid = client.post("/api/games", json={"opponent": "random", "rules": "scopa_bazzica", "seed": 1}).json()[
            "game_id"
        ]
        wg = app.state.store.get(client.cookies.get(SESSION_COOKIE), gid)
        wg.game = bazzica_deal("Ad Ac 2s", "Kd Kc Ks")
        state = client.get(f"/api/games/{gid}").json()
        hi = cards("2s")[0]
        assert state["declaring"] and state["legal"] == [{"card": hi, "captured": []}, {"card": hi, "captured": [hi]}]
        r = client.post(f"/api/games/{gid}/move", json={"card": hi, "captured": [hi], "version": state["version"]})
        assert r.status_code == 200, r.text
        run_agents(wg)
        state = client.get(f"/api/games/{gid}").json()
        decisions = [e for e in wg.events if e.get("decision") in ("declare", "pass")]
        assert decisions[0]["decision"] == "declare" and decisions[0]["shown"] == sorted(cards("Ad Ac 2s")), decisions
        assert not state["declaring"]
        if wg.game.revealed[1]:
            assert state["revealed"]["1"] == sorted(cards("Kd Kc Ks")), "an agent's declared hand is shown"


def test_render_shows_extras_and_declarations():
    from scopa_env.engine.render import render_hand_result

    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks", rules="sbarazzina")
    game.play(Move(cards("2s")[0], itself=True))
    rnd = random.Random(0)
    while not game.hand_over:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    text = render_hand_result(game.hand_result)
    assert "re_bello" in text and "bazzica" in text and "(declared)" in text, text


@pytest.mark.parametrize("name", ["greedy", "heuristic", "search"])
def test_baseline_agents_declare_and_never_claim(name):
    """docs/rules.md: the baseline agents declare a hand that scores and never call chiamarsi fuori."""
    from agents.registry import make_agent

    for seed in range(3):
        game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks")
        assert make_agent(name, seed=seed).act(game.view()).is_self, f"{name} declares its bazzica"
    game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
    move = make_agent(name, seed=0).act(game.view())
    assert (move.card, move.mask) in game.legal_pairs(), f"{name} plays a card, it does not claim"


def test_claim_in_the_terminal():
    from agents.random_agent import RandomAgent
    from scopa_app.play import TerminalGame

    game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
    answers = iter(["claim"])
    out: list[str] = []
    code = TerminalGame(
        game, {1: RandomAgent(seed=0)}, {1: "random"}, input_fn=lambda _: next(answers), output_fn=out.append
    ).run()
    text = "\n".join(out)
    assert code == 0 and "chiamarsi fuori: claim" in text and game.winner == 0, text


def test_claim_in_the_web_ui():
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    pytest.importorskip("httpx", reason="the web extra is not installed")
    from fastapi.testclient import TestClient

    from scopa_app.web.server import SESSION_COOKIE, create_app

    app = create_app(default_opponent="random", allow_client_seeds=True)
    with TestClient(app) as client:
        client.get("/")
        gid = client.post("/api/games", json={"opponent": "random", "rules": FUORI, "seed": 1}).json()["game_id"]
        wg = app.state.store.get(client.cookies.get(SESSION_COOKIE), gid)
        wg.game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
        state = client.get(f"/api/games/{gid}").json()
        claim = state["claim"]
        hi = max(cards("Kc 4s"))
        assert claim == {"card": hi, "captured": [hi]}
        r = client.post(f"/api/games/{gid}/move", json={**claim, "version": state["version"]})
        assert r.status_code == 200, r.text
        state = r.json()
        assert state["winner"] == 0 and state["events"][0]["decision"] == "claim" and state["claim"] is None


def test_render_shows_the_declared_wildcard():
    from scopa_env.engine.render import render_game

    game = wild_deal()
    game.play(Move(cards("Qs")[0], itself=True))
    assert "wildcard: 7c captures as a Q this hand (declared)" in render_game(game), render_game(game)
    assert "wildcard" not in render_game(wild_deal())
