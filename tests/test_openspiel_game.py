"""The OpenSpiel game ``python_scopa`` (the package scopa_env/openspiel/): its parameters and facts,
OpenSpiel's own random-simulation test (serialization and cloning included), the deal as chance
nodes (every deal equally likely, tables thrown in, Chkobba's first card, Cirulla's redeal and
table bonus), the returns, and the 40-card games unchanged by the 52-card deck.

Skipped without the ``openspiel`` extra.
"""

from __future__ import annotations

import hashlib
import itertools
import math

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from openspiel_helpers import DECLARING, F52, F52_MOVE, load, play_until, thrown_in_table  # noqa: E402

import scopa_env.openspiel.game as og  # noqa: E402
from scopa_env.engine.actions import confirm_action, move_enumeration  # noqa: E402
from scopa_env.engine.cards import RANK_MASK, RANK_OF, RE, card_id, format_card, format_cards  # noqa: E402
from scopa_env.engine.rules import get_rules  # noqa: E402

# --- the game's parameters ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        ({"rules": "no_such_preset"}, "unknown rules preset"),
        ({"rules": "small", "players": 3}, "num_players"),
        ({"action_mode": "cards"}, "action_mode must be one of"),
        ({"episode": "match"}, "episode must be one of"),
        ({"reward": "money"}, "reward must be one of"),
        ({"max_hands": 0}, "max_hands must be an int >= 1"),
        ({"rules": "french_52", "players": 4, "action_mode": "select"}, r"num_players in \(8,\)"),
    ],
)
def test_bad_parameters_give_one_line_errors(params, message):
    with pytest.raises(Exception, match=message) as info:
        og.parse_params(params)
    assert "\n" not in str(info.value), "one line"
    with pytest.raises(Exception, match=message):
        load(**params)


@pytest.mark.parametrize("rules", ["chkobba", "scopa_bazzica", "sbarazzina", "piva", "cirulla"])
def test_every_preset_is_accepted(rules):
    """The rules whose deal is more than a shuffle (first card, declarations, table bonus, redeals) play."""
    og.check_bridge_rules(get_rules(rules))
    assert og.parse_params({"rules": rules}).rules.name == rules


def test_unknown_parameter_is_refused():
    with pytest.raises(ValueError, match="unknown python_scopa parameter"):
        og.parse_params({"seats": 2})


def test_game_facts_follow_the_parameters():
    game = load(rules="standard")
    assert game.num_distinct_actions() == 16_200, "docs/rules.md: N = 16,200 move ids for the standard rules"
    assert game.max_chance_outcomes() == 40
    assert game.max_game_length() == 36, "36 plays in a 2-player hand"
    assert load(action_mode="select").num_distinct_actions() == 41
    small = load(rules="small")
    assert small.num_players() == 2 and small.num_distinct_actions() == 56
    assert small.observation_tensor_size() == 376
    assert small.information_state_tensor_size() == 376 + 8 * 2 * 40, "observation + 8 plays of (card, captured)"
    assert load(episode="game", max_hands=10).max_game_length() == 360
    f52 = load(**F52)
    assert f52.num_players() == 8 and f52.num_distinct_actions() == 53, "52 cards and CONFIRM"
    assert f52.max_chance_outcomes() == 52
    assert f52.observation_tensor_size() == 1144, "21 planes of 52 cards and the rest (docs/rules.md)"
    assert f52.information_state_tensor_size() == 1144 + 48 * 2 * 52, "48 plays of (card, captured), 52 wide"
    assert load(**F52_MOVE).num_distinct_actions() == 72_752, "one id per (card, captured set) of the 52-card deck"


# --- OpenSpiel's own checks -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"action_mode": "select"},
        {"rules": "small", "episode": "game", "reward": "game", "max_hands": 5},
        {"players": 4, "action_mode": "select"},
        {"players": 3, "rules": "scopa_d_assi", "reward": "game"},
        {"rules": "chiamarsi_fuori", "episode": "game", "max_hands": 3},
        F52,
        {**F52, "episode": "game", "reward": "game", "max_hands": 3},
        F52_MOVE,
    ],
)
def test_openspiel_random_simulation(params):
    """OpenSpiel's random-simulation test: legal actions, chance, returns, cloning and serialization."""
    pyspiel.random_sim_test(load(**params), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("action_mode", ["move", "select"])
@pytest.mark.parametrize("rules", DECLARING)
def test_openspiel_random_simulation_with_declarations(rules, action_mode):
    pyspiel.random_sim_test(load(rules=rules, action_mode=action_mode), num_sims=3, serialize=True, verbose=False)


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "cirulla", "players": 4, "episode": "game", "max_hands": 3, "action_mode": "select"},
        {"rules": "cirulla", "players": 3, "reward": "game"},
        {"rules": "sbarazzina", "players": 3, "episode": "game", "max_hands": 2},
    ],
)
def test_openspiel_random_simulation_with_declarations_more_players(params):
    pyspiel.random_sim_test(load(**params), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "chkobba"},
        {"rules": "chkobba", "action_mode": "select"},
        {"rules": "chkobba", "players": 4, "episode": "game", "max_hands": 3},
        {"rules": "chkobba", "players": 4, "action_mode": "select", "reward": "game"},
    ],
)
def test_openspiel_random_simulation_chkobba(params):
    pyspiel.random_sim_test(load(**params), num_sims=3, serialize=True, verbose=False)


def test_clone_is_independent_and_serialization_round_trips():
    game = load()
    state = play_until(game.new_initial_state(), np.random.default_rng(3), 5)
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert len(clone.history()) == len(state.history()) + 1
    assert state.information_state_string(0) != clone.information_state_string(0), "the clone moved on alone"
    again = game.deserialize_state(state.serialize())
    assert again.history() == state.history()
    assert again.information_state_string(1) == state.information_state_string(1)


# --- the deal -------------------------------------------------------------------------------------


def test_every_deal_of_the_small_preset_is_equally_likely():
    """Cards come in ascending order per hand, so each deal is one chance path; all 2,520 weigh the same."""
    game = load(rules="small")
    leaves: list[float] = []

    def walk(state, p: float) -> None:
        if not state.is_chance_node():
            leaves.append(p)
            return
        outcomes = state.chance_outcomes()
        assert math.isclose(sum(q for _, q in outcomes), 1.0), "chance outcomes sum to 1"
        assert [a for a, _ in outcomes] == sorted(a for a, _ in outcomes)
        for a, q in outcomes:
            walk(state.child(a), p * q)

    walk(game.new_initial_state(), 1.0)
    assert len(leaves) == math.comb(8, 2) * math.comb(6, 2) * math.comb(4, 2), "2 cards to p0, p1, p0, p1"
    assert np.allclose(leaves, 1 / len(leaves))


def test_thrown_in_tables_are_never_dealt():
    """pagat: "If the four face up cards include three or four Kings" the cards are dealt again.

    The table is dealt with the distribution that leaves: P(the Ace of coins is on the table)
    is counted here over all kept tables, independently of the game's weights.
    """
    deck = get_rules("standard").deck
    kings = RANK_MASK[RE]
    kept = [t for t in itertools.combinations(deck, 4) if sum((1 << c) & kings != 0 for c in t) < 3]
    expected = sum(1 for t in kept if t[0] == 0) / len(kept)
    state = load().new_initial_state()
    outcomes = dict(state.chance_outcomes())
    assert math.isclose(outcomes[0], expected), "first (lowest) table card"
    for king in (card_id(0, RE), card_id(1, RE)):
        state.apply_action(king)
    assert card_id(2, RE) not in dict(state.chance_outcomes()), "a third King would throw the table in"


def test_french_52_deal_is_every_card_with_three_kings_thrown_in():
    """wikipedia: "4 cards are placed face-up on the table"; the deal is thrown in when three Kings
    (the 13s) are face up, as in the standard game (the reading of docs/rules.md)."""
    rules = get_rules("french_52")
    state = load(**F52).new_initial_state()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(49)), "the lowest of 4 ascending table cards: 0..48"
    assert math.isclose(sum(p for _, p in outcomes), 1.0)
    kings = [c for c in rules.deck if RANK_OF[c] == 13]
    assert len(kings) == 4 and min(kings) >= 40
    for king in kings[:2]:
        state.apply_action(king)
    assert kings[2] not in dict(state.chance_outcomes()), "a third King would throw the table in"
    state.apply_action(kings[2] - 1)  # a Queen
    assert kings[3] not in dict(state.chance_outcomes()), "two Kings and a Queen: the last King would throw it in"
    state.apply_action(kings[3] - 1)  # the last Queen
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert state.engine.table.bit_count() == 4 and sum(h.bit_count() for h in state.engine.hands) == 24
    assert len(state.engine.stock) == 24


def test_cirulla_thrown_in_table_is_dealt_again_by_the_next_dealer():
    """wikipedia (Cirulla): "If two or more aces are dealt to the table, the cards are collected,
    re-shuffled, and dealt again by the next dealer." A thrown-in table is chance nodes of its own,
    public, and followed by a new deal of the whole deck by the next dealer."""
    game = load(rules="cirulla")
    state = game.new_initial_state()
    outcomes = dict(state.chance_outcomes())
    assert math.isclose(outcomes[0], 4 / 40), "the lowest of 4 table cards is the Ace of coins: 4 in 40"
    assert state.position.dealer == 1
    table = thrown_in_table(get_rules("cirulla"))
    for card in table:
        state.apply_action(card)
    assert state.is_chance_node() and state.position.dealer == 0, "the next dealer deals"
    assert dict(state.chance_outcomes()) == pytest.approx(outcomes), "the whole deck again"
    state = play_until(state, np.random.default_rng(0), 0)
    text = state.information_state_string(1)
    assert text.startswith(f"p1\nhand 1 dealer 1 table {format_cards(table)} thrown in, dealer 0 scores")
    assert state.engine.dealer == 0 and state.current_player() in (0, 1)


def test_cirulla_table_of_fifteen_goes_to_the_dealer():
    """wikipedia (Cirulla): "If the four cards dealt by the dealer to the table at the start of a round
    add up to 15, the dealer captures them and marks a scopa." """
    state = load(rules="cirulla").new_initial_state()
    table = sorted([card_id(0, 2), card_id(1, 3), card_id(2, 4), card_id(0, 6)])  # 2 + 3 + 4 + 6 = 15
    for card in table:
        state.apply_action(card)
    state = play_until(state, np.random.default_rng(0), 0)
    engine = state.engine
    assert engine.table == 0 and engine.piles[1] == sum(1 << c for c in table) and engine.scope == [0, 1]
    assert f"table {format_cards(table)} | table bonus 0/1" in state.information_state_string(0)


def test_chkobba_first_card_is_chance_then_a_decision():
    """pagat (Chkobba): the player after the dealer "draws one card form the pack, looks at it and may
    either keep it as the first card of their hand or place it face up on the table". The card is a
    chance node (each card 1/40), the decision is the player's (keep: the self-mask move), the drawn
    card is seen by its holder only until it is tabled."""
    rules = get_rules("chkobba")
    moves = move_enumeration(rules)
    state = load(rules="chkobba").new_initial_state()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 40 and all(math.isclose(p, 1 / 40) for _, p in outcomes)
    card = card_id(2, 7)
    state.apply_action(card)
    assert state.current_player() == 0, "the player after the dealer (seat 1) decides"
    assert state.legal_actions() == sorted(moves.ids([(card, 0), (card, 1 << card)], 0))
    assert format_card(card) in state.information_state_string(0)
    assert format_card(card) not in state.information_state_string(1), "the drawn card is the holder's"
    kept, tabled = state.child(moves.index[(card, 1 << card)]), state.child(moves.index[(card, 0)])
    assert kept.information_state_string(1).startswith(state.information_state_string(1) + " | p0:keeps | dealing")
    assert f"p0:tables {format_card(card)} | dealing" in tabled.information_state_string(1), "tabled: public"
    kept, tabled = play_until(kept, np.random.default_rng(0), 0), play_until(tabled, np.random.default_rng(0), 0)
    assert kept.engine.hands[0] >> card & 1 and kept.engine.table.bit_count() == 4
    assert tabled.engine.table >> card & 1 and tabled.engine.hands[0].bit_count() == 3
    select = load(rules="chkobba", action_mode="select").new_initial_state()
    select.apply_action(card)
    assert select.legal_actions() == [card]
    select.apply_action(card)
    assert select.legal_actions() == [card, confirm_action(rules)], "name it again (keep) or CONFIRM (table)"


def test_chkobba_thrown_in_table_asks_the_first_card_again():
    """pagat (Chkobba): "If there are three or four equal valued cards in the initial table layout the
    cards are gathered up, shuffled and dealt again." The table is chance nodes; a thrown-in table is
    followed by a new first card for the same dealer, and a new decision."""
    rules = get_rules("chkobba")
    moves = move_enumeration(rules)
    state = load(rules="chkobba").new_initial_state()
    card = card_id(0, 5)
    state.apply_action(card)
    state.apply_action(moves.index[(card, 0)])  # tabled
    for c in (card_id(1, 5), card_id(2, 5), card_id(3, 2)):  # three Fives with the tabled one
        assert c in dict(state.chance_outcomes())
        state.apply_action(c)
    assert state.is_chance_node() and state.position.first is None, "a new first card"
    assert len(state.chance_outcomes()) == 40 and state.position.dealer == 1
    state.apply_action(card_id(0, 1))
    assert state.current_player() == 0
    text = state.information_state_string(1)
    assert "p0:tables 5d | table 5d 5c 2s 5s thrown in, dealer 1" in text.replace(
        format_cards([card_id(0, 5), card_id(1, 5), card_id(3, 2), card_id(2, 5)]), "5d 5c 2s 5s"
    )


# --- returns --------------------------------------------------------------------------------------


def test_hand_returns_are_the_engine_hand_margin():
    game = load(rules="small")
    for seed in range(5):
        state = play_until(game.new_initial_state(), np.random.default_rng(seed), 10**6)
        totals = [row["total"] for row in state.engine.hand_result.hand_score]
        assert state.returns() == [totals[0] - totals[1], totals[1] - totals[0]]


def test_game_returns_name_the_winner():
    game = load(rules="small", episode="game", reward="game", max_hands=200)
    state = play_until(game.new_initial_state(), np.random.default_rng(1), 10**6)
    winner = state.engine.winner
    assert winner is not None and state.returns()[winner] == 1.0 and sum(state.returns()) == 0.0
    assert state.information_state_string(0).count("hand ") == state.engine.hand_number, "earlier hands recalled"


# --- the 40-card games are unchanged by the 52-card deck ------------------------------------------


FINGERPRINT_CASES = {
    "standard move": ({}, "72956937a374bfcf"),
    "standard select": ({"action_mode": "select"}, "2a662aac7810253d"),
    "small game episode": ({"rules": "small", "episode": "game", "reward": "game", "max_hands": 5}, "95e600a3b9409fc9"),
    "4 players select": ({"players": 4, "action_mode": "select"}, "bb4cba97ee0fc1c0"),
    "scopa_d_assi 3 players": ({"players": 3, "rules": "scopa_d_assi", "reward": "game"}, "e3f30dfa9781167e"),
    "6 players select": ({"players": 6, "action_mode": "select"}, "c12cf35f7c6d7147"),
}
"""Fingerprints of 40-card games computed by the bridge before it played the 52-card deck. The two
"select" ones were recomputed once when the information-state string stopped showing a "select"
choice in progress to the other players (the card is seen when played; the observation never showed
it): with the old string they are f490e76630e18c1e and 5e22f73bb382e64b."""


def fingerprint(game, seeds=(0, 1)) -> str:
    """A hash of the game's facts and of two seeded random games: every chance outcome and
    probability, legal actions and their strings, both tensors and strings of the player to
    move and the next seat, the returns and the final state's text."""
    h = hashlib.sha256()

    def put(x) -> None:
        h.update(repr(x).encode())

    put(
        (
            game.num_distinct_actions(),
            game.max_chance_outcomes(),
            game.num_players(),
            game.max_game_length(),
            game.min_utility(),
            game.max_utility(),
            game.observation_tensor_size(),
            game.information_state_tensor_size(),
        )
    )
    for seed in seeds:
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                put(outcomes)
                action = outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
            else:
                p = state.current_player()
                legal = state.legal_actions()
                put((p, legal, [state.action_to_string(p, a) for a in legal]))
                for q in (p, (p + 1) % game.num_players()):
                    put(np.asarray(state.observation_tensor(q), np.float32).tobytes())
                    put(np.asarray(state.information_state_tensor(q), np.float32).tobytes())
                    put((state.observation_string(q), state.information_state_string(q)))
                action = legal[int(rng.integers(len(legal)))]
            state.apply_action(action)
        put(state.returns())
        put(str(state))
    return h.hexdigest()[:16]


@pytest.mark.parametrize("case", list(FINGERPRINT_CASES))
def test_40_card_games_are_unchanged_by_the_52_card_deck(case):
    """Same action ids, chance outcomes, tensors, strings and returns as before the 52-card deck."""
    params, recorded = FINGERPRINT_CASES[case]
    assert fingerprint(load(**params)) == recorded
