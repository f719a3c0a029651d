"""Cirulla: its captures (the Ace that takes the table, the 15s), tables thrown in and dealt again
by the next dealer, the hand bonuses declared at the holder's first turn, the dealer's table
bonus, la piccola and la grande, all the diamonds winning the game, and the seven of cups as a
wildcard that keeps its declared rank for capturing.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from variant_helpers import COINS_ALL, WILD_OPTION, bazzica_deal, cards, play_named, score, two_player_game

from scopa_env import scopa_v0
from scopa_env.engine.cards import card_id, mask_of
from scopa_env.engine.game import Game
from scopa_env.engine.observation import ObservationLayout, write_observation
from scopa_env.engine.rules import Move, get_rules, legal_moves
from scopa_env.engine.scoring import declaration, declaring_pairs, score_hand, table_bonus_scope, wild_rank_choices


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


# --- Cirulla's wildcard keeps its declared rank for capturing -------------------------------------


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


def test_render_shows_the_declared_wildcard():
    from scopa_env.engine.render import render_game

    game = wild_deal()
    game.play(Move(cards("Qs")[0], itself=True))
    assert "wildcard: 7c captures as a Q this hand (declared)" in render_game(game), render_game(game)
    assert "wildcard" not in render_game(wild_deal())
