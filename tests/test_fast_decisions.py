"""The compiled core's moves that are not plain card plays: Chkobba's first card, the
chiamarsi fuori claim, the Scopa Bazzica declarations and Cirulla's (its hand bonuses, the
wildcard's chosen rank, the dealer's table bonus, its redeals), as the Python engine plays them.

The differential runner of ``tests/test_fast.py`` (the AEC env and the core side by side,
every step compared) counts here what the games went through, so that each rule case is
shown to have happened, not only to have matched: both first-card decisions and a deal
thrown in after one; sound claims, false claims and hands played to their end;
declarations made, passed and scored; Cirulla's bonuses, with and without the wildcard,
the wildcard captured as its declared rank, the dealer's bonus and the redeals by the next
dealer. The compiled players decide as the Python agents
do (greedy, heuristic) and never claim, like them; the vector envs and playouts run these
presets.
"""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest
from test_fast import engine_game, run_differential

from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from scopa_env.engine.cards import cards_of
from scopa_env.engine.rules import PRESETS, WILDCARD, get_rules, legal_pairs
from scopa_env.engine.scoring import declaration, table_bonus_scope, wild_rank_choices
from scopa_env.fast import BatchedScopa, check_supported, core, playout
from scopa_env.fast.core.decisions import _declaration, _hand_bonus, _table_bonus_scope, _wild_choices

TOL = 1e-9  # agents.greedy.pick_best's tie tolerance


@pytest.mark.parametrize("n", [2, 4])
def test_chkobba_first_card_is_kept_or_tabled_and_a_bad_table_is_dealt_again(n):
    """pagat, Chkobba: the dealer's opponent "draws one card form the pack, looks at it and may
    either keep it as the first card of their hand or place it face up on the table as the first
    card of the layout"; "If there are three or four equal valued cards in the initial table
    layout the cards are gathered up, shuffled and dealt again" (a new first card to decide on)."""
    for mode, seed in (("move", 11), ("select", 12)):
        stats = collections.Counter()
        run_differential("chkobba", n, mode, "game", "points", 16, seed=seed + n, stats=stats)
        for event in ("keep", "table", "decision_redeal", "hand_end"):
            assert stats[event] > 0, f"chkobba n={n} {mode}: no {event} in {dict(stats)}"


@pytest.mark.parametrize("keep", [True, False])
def test_chkobba_deal_is_completed_around_the_decision(keep):
    """pagat, Chkobba: "if the first player took the drawn card as a hand card, the dealer will
    give two more cards to the first player, three to each other player and deal four face up to
    the table. If the drawn card was placed in the table layout, the dealer will give three cards
    to each player and three more to the table.\""""
    batch = BatchedScopa(8, 4, "chkobba", action_mode="move")
    batch.reset(np.arange(8))
    before = [batch.state(i) for i in range(8)]
    for st in before:
        assert st["deciding"] and st["table"] == 0, "a Chkobba hand opens with the first-card decision"
        assert [h.bit_count() for h in st["hands"]] == [1, 0, 0, 0], "only seat 0 (after the dealer) holds a card"
    drawn = [st["hands"][0].bit_length() - 1 for st in before]
    batch.step([batch.moves.ids([(c, 1 << c if keep else 0)], 0)[0] for c in drawn])
    for i, st in enumerate(before):
        after = batch.state(i)
        if after["deciding"]:  # thrown in (three equal cards on the table): decided again
            continue
        assert [h.bit_count() for h in after["hands"]] == [3, 3, 3, 3], f"game {i}: hands {after['hands']}"
        assert after["table"].bit_count() == 4, f"game {i}: table {cards_of(after['table'])}"
        where = after["hands"][0] if keep else after["table"]
        assert where >> drawn[i] & 1, f"game {i}: the drawn card is not where the decision put it"
        dealt = st["stock"][: 3 * 4 + 4 - 1]  # the deal order after the drawn card
        assert sorted(cards_of((after["table"] | sum(after["hands"])) & ~(1 << drawn[i]))) == sorted(dealt)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_chiamarsi_fuori_claims_end_the_game(n):
    """pagat: "Some allow a player or team to end the play in the middle of a hand by claiming to
    have enough points to reach the game target ... If the claimer turns out not to have enough
    points to win, they automatically lose the game." Sound and false claims both happen (and
    hands end normally between them); every step matches the engine, the claim's points too."""
    for mode, seed in (("move", 21), ("select", 22)):
        stats = collections.Counter()
        run_differential("chiamarsi_fuori", n, mode, "game", "points", 16, seed=seed + n, stats=stats)
        for event in ("claim", "false_claim", "hand_end"):
            assert stats[event] > 0, f"chiamarsi_fuori n={n} {mode}: no {event} in {dict(stats)}"


def test_claim_on_the_first_move_is_false_and_scores_the_certain_points():
    """pagat: "The prime can be claimed if the claimer can demonstrate that they will win the prime
    even if the opponent takes all the cards that are not yet captured": with nothing captured no
    majority is certain, so a claim on the first move scores nothing and loses."""
    batch = BatchedScopa(4, 2, "chiamarsi_fuori", action_mode="move", reward="game")
    batch.reset(np.arange(4))
    claims = []
    for i in range(4):
        hand = batch.state(i)["hands"][0]
        card = hand.bit_length() - 1
        claims.append(batch.moves.ids([(card, 1 << card)], batch.state(i)["table"])[0])
        assert batch.legal_actions(i)[-1] == claims[-1], "the claim is offered, last (as the env lists it)"
    batch.step(claims)
    assert batch.terminated.all() and batch.hand_ended.all()
    assert (batch.claim == core.CLAIM_FALSE).all(), f"claim codes {batch.claim.tolist()}"
    assert batch.winner.tolist() == [1] * 4, "a false claim loses the game for the claimer's side"
    assert batch.rewards.tolist() == [[-1.0, 1.0]] * 4
    for i in range(4):
        rows = batch.hand_score_dicts(i)
        assert [r["total"] for r in rows] == [0, 0], f"game {i}: certain points {rows}"
        assert "num_sevens" not in rows[0] and "cards" in rows[0]


@pytest.mark.parametrize("rules_name,n", [("scopa_bazzica", 2), ("sbarazzina", 2), ("sbarazzina", 4), ("piva", 2)])
def test_bazzica_declarations_are_made_passed_and_scored(rules_name, n):
    """pagat, Scopa Bazzica: "a bazzica or a bazzicotto must be declared immediately after a
    three-card deal, before the next card is played, and the cards must be shown. If both
    players declare a bazzica or bazzicotto only the better one scores." Every step matches the
    engine (the shown cards in the observation, the points in the score and the rewards)."""
    for mode, seed in (("move", 31), ("select", 32)):
        stats = collections.Counter()
        run_differential(rules_name, n, mode, "game", "points", 8, seed=seed + n, stats=stats)
        for event in ("declare", "pass", "declaration_scored", "hand_end"):
            assert stats[event] > 0, f"{rules_name} n={n} {mode}: no {event} in {dict(stats)}"


@pytest.mark.parametrize("rules_name", ["scopa_bazzica", "sbarazzina"])
def test_compiled_declaration_matches_the_engines_on_every_three_card_hand(rules_name):
    """pagat: "Bazzica: any three cards which add up to 9 or less, counting 2 to 7 as face value,
    Ace as 1 and pictures as 10"; "Bazzicotto: three cards of the same rank"; "Any bazzicotto
    beats any bazzica"; lower totals, and lower bazzicotti, are better. The compiled
    ``_declaration`` (core/decisions.py) gives every hand the engine's points and the same order of strength."""
    from scopa_env.fast.batch import compiled_rules

    rules = get_rules(rules_name)
    P = compiled_rules(rules, 2)[0]
    ranked = {}
    for cards in itertools.combinations(rules.deck, 3):
        hand = sum(1 << c for c in cards)
        strength, points = _declaration(hand, P)
        found = declaration(hand, rules)
        assert (strength >= 0) == (found is not None), f"{cards}: core {strength}, engine {found}"
        if found is not None:
            assert points == found.points, f"{cards}: core {points} points, engine {found.points}"
            ranked.setdefault(found.strength, set()).add(strength)
    assert all(len(core_strengths) == 1 for core_strengths in ranked.values()), "one core strength per engine one"
    in_order = [ranked[k].pop() for k in sorted(ranked)]  # the engine's order, best first
    assert in_order == sorted(set(in_order)), f"the core orders declarations otherwise: {in_order}"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_cirulla_bonuses_wildcard_and_redeals(n):
    """Wikipedia, Cirulla: "If two or more aces are dealt to the table, the cards are collected,
    re-shuffled, and dealt again by the next dealer"; "a 'three-point bonus' ... three cards whose
    values add up to strictly less than 10", "a 'ten-point bonus' ... three cards of the same
    rank", "declared before the player holding them has played their first card ... reveal their
    hand"; the dealer's "'One-scopa bonus'" (table of 15) and "'Two-scopa bonus'" (30); the Seven
    "counts as a wildcard ... The [Seven] will then keep its declared rank ... for the rest of the
    hand for the purposes of card capturing". Every step matches the engine ("select" mode: the
    preset has more moves than "move" mode holds)."""
    stats = collections.Counter()
    run_differential("cirulla", n, "select", "game", "points", 8, seed=40 + n, stats=stats)
    run_differential("cirulla", n, "select", "hand", "game", 16, seed=50 + n, stats=stats)
    for event in ("declare", "pass", "bonus_3", "bonus_3_wild", "table_bonus", "redeal", "hand_end"):
        assert stats[event] > 0, f"cirulla n={n}: no {event} in {dict(stats)}"


@pytest.mark.parametrize("rules_name", ["cirulla,capture_sum=0", "standard,hand_bonus_points=3/10,bonus_wildcard=true"])
def test_cirulla_bonuses_in_move_mode(rules_name):
    """Cirulla's bonuses in "move" mode (without the fifteens, so that the moves fit its ids; and
    on the standard game): a wildcard declaration names its rank by the coin of that rank, and
    any move of the Seven of cups taking the whole table has its compact take-all id
    (MoveEnumeration.is_take_all)."""
    stats = collections.Counter()
    for n, seed in ((2, 61), (3, 62), (4, 63)):
        run_differential(rules_name, n, "move", "game", "points", 8, seed=seed, stats=stats)
    for event in ("declare", "pass", "bonus_3", "bonus_3_wild", "bonus_10", "wild_captured", "hand_end"):
        assert stats[event] > 0, f"{rules_name}: no {event} in {dict(stats)}"
    if rules_name.startswith("cirulla"):
        assert stats["table_bonus"] > 0 and stats["redeal"] > 0, f"no dealer bonus or redeal in {dict(stats)}"
    if get_rules(rules_name).ace_takes_all:
        assert stats["wild_take_all"] > 0, f"the Seven of cups never took the whole table: {dict(stats)}"


def test_cirulla_rare_bonuses_occur():
    """The rarer cases over more games: the ten-point bonus, with the wildcard as the pair's rank
    ("a player holding [a pair and the Seven] may declare that the [Seven] is a queen, thus
    qualifying them for the ten-point bonus"), and the declared wildcard captured as that rank."""
    stats = collections.Counter()
    for n, seed in ((2, 71), (4, 72)):
        run_differential("cirulla", n, "select", "game", "points", 32, seed=seed, stats=stats)
    for event in ("bonus_10", "bonus_10_wild", "wild_captured"):
        assert stats[event] > 0, f"no {event} in {dict(stats)}"


def test_compiled_hand_bonus_matches_the_engines_on_every_three_card_hand():
    """Wikipedia, Cirulla: "three cards whose values add up to strictly less than 10", "three
    cards of the same rank", "only the ten-point bonus is normally awarded" for a hand that is
    both, and the Seven of cups as a wildcard "only as long as doing so allows them to score".
    ``_hand_bonus`` (core/decisions.py) gives every hand the engine's bonus, points and wildcard rank, and
    ``_wild_choices`` the ranks the player may name (scoring.wild_rank_choices)."""
    from scopa_env.fast.batch import compiled_rules

    rules = get_rules("cirulla")
    P = compiled_rules(rules, 2)[0]
    cases = collections.Counter()
    for cards in itertools.combinations(rules.deck, 3):
        hand = sum(1 << c for c in cards)
        strength, points, wild = _hand_bonus(hand, P)
        found = declaration(hand, rules)
        assert (strength >= 0) == (found is not None), f"{cards}: core {strength}, engine {found}"
        choices = _wild_choices(hand, P)
        assert [r for r in range(1, 11) if choices >> r & 1] == list(wild_rank_choices(hand, rules)), cards
        if found is not None:
            assert (points, wild) == (found.points, found.wild_rank), f"{cards}: core {(points, wild)}, {found}"
            assert strength == (core.BONUS_THREE_OF_A_KIND if found.name == "bonus_10" else core.BONUS_TOTAL)
            cases[found.name, bool(found.wild_rank)] += 1
    assert len(cases) == 4, f"every bonus, with and without the wildcard: {dict(cases)}"


def test_compiled_table_bonus_and_wildcard_captures_match_the_engine():
    """Wikipedia, Cirulla: a starting table adding up "to 15" is one scopa for the dealer, "to
    30" two, the Seven of cups counting as any card there; a declared wildcard "will then keep its
    declared rank ... for the rest of the hand for the purposes of card capturing". On random
    tables the core's dealer bonus and its legal moves under every declared rank are the engine's."""
    from scopa_env.fast.batch import compiled_rules

    rules = get_rules("cirulla")
    P = compiled_rules(rules, 2)[0]
    rng = np.random.default_rng(5)
    size = int(P[core.P_SCRATCH])
    sub_mask, sub_sum = np.zeros(int(P[core.P_SUB_CAP]) + 1, np.int64), np.zeros(int(P[core.P_SUB_CAP]) + 1, np.int64)
    lc, lm = np.zeros(size, np.int64), np.zeros(size, np.int64)
    scopes = collections.Counter()
    for _ in range(3000):
        cards = rng.permutation(40)[:7]
        if rng.random() < 0.5 and WILDCARD not in cards[:7]:
            cards[rng.integers(7)] = WILDCARD
        table = sum(1 << int(c) for c in cards[:4])
        hand = sum(1 << int(c) for c in cards[4:])
        scope = _table_bonus_scope(table, P)
        assert scope == table_bonus_scope(table, rules), f"table {cards_of(table)}: core {scope}"
        scopes[scope, bool(table >> WILDCARD & 1)] += 1
        for wild in (0, 1, 4, 9, 10):
            count = core.wild_pairs(hand, table, P, wild, sub_mask, sub_sum, lc, lm)
            found = list(zip(lc[:count].tolist(), lm[:count].tolist()))
            assert found == legal_pairs(hand, table, rules, wild), f"hand {hand:#x} table {table:#x} wild {wild}"
    assert all(scopes[k, w] for k in (1, 2) for w in (False, True)), f"every table bonus occurred: {dict(scopes)}"


@pytest.mark.parametrize(
    "rules_name,n",
    [
        ("chkobba", 2),
        ("chkobba", 4),
        ("chiamarsi_fuori", 2),
        ("scopa_bazzica", 2),
        ("sbarazzina", 3),
        ("cirulla", 2),
        ("cirulla", 3),
        ("cirulla,capture_sum=0", 4),
    ],
)
def test_compiled_players_decide_like_the_python_agents(rules_name, n):
    """The compiled greedy and heuristic players pick one of the Python agents' best moves at
    every position, the first-card decision and the declarations (Cirulla's wildcard rank among
    them) included, and never claim (the Python agents choose from ``legal_pairs()``, which
    leaves the claim out). Cirulla has no "move" mode: its games are stepped in "select" mode."""
    rules = get_rules(rules_name)
    rows = 8
    mode = "select" if rules_name == "cirulla" else "move"
    batch = BatchedScopa(rows, n, rules, action_mode=mode, legal_width=256)
    batch.reset(np.arange(rows) + 100 * n)
    agents = {"greedy": GreedyAgent(seed=0), "heuristic": HeuristicAgent(seed=0)}
    rng = np.random.default_rng(n)
    decisions = done = 0
    while done < 12:
        picks = {kind: batch.choose(kind) for kind in agents}
        actions = np.empty(rows, np.int64)
        for i in range(rows):
            st = batch.state(i)
            view = engine_game(st, rules).view()
            pairs = view.legal_pairs()
            decisions += st["deciding"] or bool(st["declare_queue"])
            for kind, agent in agents.items():
                scores = [agent.score(view, c, m) for c, m in pairs] if kind == "greedy" else agent.scores(view, pairs)
                best = {p for p, s in zip(pairs, scores) if s >= max(scores) - TOL}
                assert picks[kind][i] in best, f"{kind} {batch.describe(i)}: {picks[kind][i]} not in {best}"
            if mode == "select":
                legal = batch.legal_actions(i)
            else:
                legal = [a for a in batch.legal_actions(i) if batch.moves.pair(a, st["table"]) in pairs]  # no claims
            actions[i] = legal[rng.integers(len(legal))]
        batch.step(actions)
        done += int(batch.terminated.sum())
    assert decisions > 0 or not (rules.first_card_choice or rules.declarations), "no decision was checked"


@pytest.mark.parametrize(("rules_name", "n"), [("cirulla", 2), ("cirulla", 3), ("scopa_bazzica", 2), ("sbarazzina", 4)])
def test_the_heuristic_declares_every_declaration_it_may_make(rules_name, n):
    """wikipedia-scopa.txt, Cirulla: "A 'three-point bonus' ... is awarded to players who hold
    three cards whose values add up to strictly less than 10"; "A 'ten-point bonus' ... is awarded
    to players that hold three cards of the same rank"; "Such bonuses must be declared before the
    player holding them has played their first card ... and the player making the announcement
    must reveal their hand". The bonus is points for cards already held, paid for only by showing
    them: at every declaration decision the Python heuristic and the compiled one declare (the
    move's captured mask is not 0), whichever way to declare they pick (Cirulla's wildcard rank).
    Before the fix both scored pass and declare as two card plays and passed on some bonuses."""
    rules = get_rules(rules_name)
    rows = 16
    mode = "select" if rules_name == "cirulla" else "move"
    batch = BatchedScopa(rows, n, rules, action_mode=mode, legal_width=256)
    batch.reset(np.arange(rows) + 1000 * n)
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(n)
    decisions = done = 0
    while decisions < 40 and done < 200:
        picks = batch.choose("heuristic")
        actions = np.empty(rows, np.int64)
        for i in range(rows):
            st = batch.state(i)
            if st["declare_queue"]:
                decisions += 1
                view = engine_game(st, rules).view()
                assert view.declaring
                passes = [(c, m) for c, m in view.legal_pairs() if not m]
                assert len(passes) == 1, f"{batch.describe(i)}: one way to pass, got {passes}"
                move = agent.act(view)
                assert move.captured, f"Python heuristic passed on a declaration: {batch.describe(i)}"
                assert picks[i][1] != 0, f"compiled heuristic passed on a declaration: {batch.describe(i)}"
            legal = batch.legal_actions(i)
            actions[i] = legal[rng.integers(len(legal))]
        batch.step(actions)
        done += int(batch.terminated.sum())
    assert decisions >= 40, f"only {decisions} declaration decisions were reached"


@pytest.mark.parametrize("rules_name", ["chkobba", "chiamarsi_fuori", "sbarazzina", "cirulla"])
def test_vector_envs_and_playouts_play_the_decisions(rules_name):
    """``vec_env: fast`` trains on these presets: the learner's mask offers the decision (and
    the claim), compiled opponents take theirs inside ``step``, episodes end and reset."""
    from scopa_env.fast.vec_env import ScopaSB3VecEnv, ScopaVectorEnv

    rules = get_rules(rules_name)
    check_supported(rules)
    env = ScopaVectorEnv(8, 2, rules_name, opponent={"greedy": 0.5, "heuristic": 0.5}, learner_seat="random")
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(400):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, rewards, terminated, _, _ = env.step(actions)
        ends += int(terminated.sum())
        assert env.observation_space.contains(obs), "observation outside the space"
    assert ends > 0, f"{rules_name}: no episode ended in 400 steps"
    mode = "select" if rules_name == "cirulla" else "move"  # Cirulla's moves do not fit "move" mode
    sb3 = ScopaSB3VecEnv(4, 2, rules_name, opponent="heuristic", action_mode=mode)
    sb3.reset()
    masks = sb3.action_masks()
    sb3.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    moves, wins = playout(20, 2, rules_name, players=("heuristic", "greedy"), seed=3)
    assert wins.sum() == 20 and moves > 0, f"{rules_name}: playout {moves} moves, wins {wins.tolist()}"


def test_the_core_plays_every_preset():
    """No preset is refused any more, at any player count it allows (Cirulla was the last preset,
    the booklet's 4 players each for themselves the last count); the batched search still refuses
    the decision presets, naming the field, rather than mislabel them."""
    from scopa_env.fast.search import check_searchable

    refused = {}
    for name, rules in sorted(PRESETS.items()):
        if rules.ranks_per_suit != 10:  # the 52-card deck: refused naming ranks_per_suit (tests/test_french52.py)
            continue
        for n in rules.player_counts:
            try:
                check_supported(rules, n)
            except NotImplementedError as exc:
                refused[f"{name} n={n}"] = str(exc)
    assert refused == {}, refused
    with pytest.raises(NotImplementedError, match="hand_bonus_points"):
        check_searchable(get_rules("cirulla"))
