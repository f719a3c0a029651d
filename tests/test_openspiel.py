"""The OpenSpiel game ``python_scopa`` (scopa_env/openspiel_game.py) and the ``openspiel:`` agents.

Skipped without the ``openspiel`` extra. The deal is chance; information states must not
change when only cards a player cannot see change; OpenSpiel's own random-simulation test
(serialization and cloning included) must pass; the small preset's tree, exported for
OpenSpiel's C++ solvers, must be the same game.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from agents.evaluate import Match, run_deals, summarize  # noqa: E402
from agents.openspiel_bot import ISMCTSAgent  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from scopa_env import openspiel_game as og  # noqa: E402
from scopa_env.cards import RANK_MASK, RE, card_id  # noqa: E402
from scopa_env.game import Game  # noqa: E402
from scopa_env.rules import get_rules  # noqa: E402

TINY = "small,table_size=4"
"""The small preset with 4 table cards: one deal of 2 cards each, about 20,000 nodes (seconds to walk)."""


def load(**params):
    return pyspiel.load_game(og.GAME_NAME, params)


def sample(state, rng: np.random.Generator) -> int:
    """A chance outcome by its probability, or a uniformly random legal action."""
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        return outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


def play_until(state, rng, decisions: int):
    """Play randomly until ``decisions`` decision nodes have passed (or the end); returns the state."""
    while not state.is_terminal() and decisions > 0:
        if not state.is_chance_node():
            decisions -= 1
        state.apply_action(sample(state, rng))
    while state.is_chance_node():
        state.apply_action(sample(state, rng))
    return state


# --- the game's parameters ------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        ({"rules": "chkobba"}, "first_card_choice"),
        ({"rules": "cirulla"}, "declarations"),
        ({"rules": "no_such_preset"}, "unknown rules preset"),
        ({"rules": "small", "players": 3}, "num_players"),
        ({"action_mode": "cards"}, "action_mode must be one of"),
        ({"episode": "match"}, "episode must be one of"),
        ({"reward": "money"}, "reward must be one of"),
        ({"max_hands": 0}, "max_hands must be an int >= 1"),
    ],
)
def test_bad_parameters_give_one_line_errors(params, message):
    with pytest.raises(Exception, match=message) as info:
        og.parse_params(params)
    assert "\n" not in str(info.value), "one line"
    with pytest.raises(Exception, match=message):
        load(**params)


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


# --- OpenSpiel's own checks ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"action_mode": "select"},
        {"rules": "small", "episode": "game", "reward": "game", "max_hands": 5},
        {"players": 4, "action_mode": "select"},
        {"players": 3, "rules": "scopa_d_assi", "reward": "game"},
        {"rules": "chiamarsi_fuori", "episode": "game", "max_hands": 3},
    ],
)
def test_openspiel_random_simulation(params):
    """OpenSpiel's random-simulation test: legal actions, chance, returns, cloning and serialization."""
    pyspiel.random_sim_test(load(**params), num_sims=2, serialize=True, verbose=False)


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


# --- the deal -----------------------------------------------------------------------------------


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


# --- hidden information stays hidden --------------------------------------------------------------


def swap_hidden(state, a: int, b: int):
    """The same history with cards ``a`` and ``b`` exchanged in the current hand's deal (slots re-sorted)."""
    pos = state.position
    start = pos.hand_start
    slot_actions, k = [], start
    for _, size in pos.slots:
        cards = [{a: b, b: a}.get(c, c) for c in pos.history[k : k + size]]
        slot_actions += sorted(cards)
        k += size
    history = pos.history[:start] + slot_actions + pos.history[k:]
    other = state.get_game().new_initial_state()
    for action in history:
        other.apply_action(action)
    return other


@pytest.mark.parametrize("action_mode", ["move", "select"])
def test_strings_and_tensors_do_not_see_hidden_cards(action_mode):
    """Swap a card of p1's hand with a card still in the stock: p0 sees no difference, p1 does."""
    game = load(action_mode=action_mode)
    rng = np.random.default_rng(11)
    for decisions in (0, 3, 8, 15):
        state = play_until(game.new_initial_state(), rng, decisions)
        engine = state.engine
        hidden_hand, stock = engine.hands[1], engine.stock
        if not hidden_hand or not stock:
            continue
        a = int(hidden_hand & -hidden_hand).bit_length() - 1
        other = swap_hidden(state, a, stock[0])
        assert other.engine.hands[1] != engine.hands[1], "the swap changed p1's hand"
        assert other.information_state_string(0) == state.information_state_string(0)
        assert other.information_state_tensor(0) == state.information_state_tensor(0)
        assert other.observation_string(0) == state.observation_string(0)
        assert other.observation_tensor(0) == state.observation_tensor(0)
        assert other.information_state_string(1) != state.information_state_string(1), "p1 sees its own cards"
        assert other.observation_tensor(1) != state.observation_tensor(1)


def test_information_state_has_perfect_recall():
    """Each of a player's information states extends its previous one: nothing seen is forgotten.

    (The kit's observation, built for learners, forgets the order of plays; this string must not.)
    """
    game = load(rules="small", episode="game", max_hands=3)
    state = game.new_initial_state()
    rng = np.random.default_rng(4)
    seen: dict[int, str] = {}
    while not state.is_terminal():
        if not state.is_chance_node():
            for p in range(2):
                text = state.information_state_string(p)
                assert text.startswith(seen.get(p, "")), f"p{p} forgot something:\n{seen.get(p)}\n{text}"
                seen[p] = text
        state.apply_action(sample(state, rng))
    assert seen[0].count("hand ") >= 2, "several hands were recalled"


@pytest.mark.parametrize("params", [{}, {"action_mode": "select"}, {"players": 4}])
def test_resample_from_infostate_keeps_what_the_player_knows(params):
    game = load(**params)
    rng = np.random.default_rng(5)
    state = play_until(game.new_initial_state(), rng, 6)
    p = state.current_player()
    draws = np.random.default_rng(9)
    hands = set()
    for _ in range(8):
        other = state.resample_from_infostate(p, draws.random)
        assert other.information_state_string(p) == state.information_state_string(p)
        assert other.information_state_tensor(p) == state.information_state_tensor(p)
        assert other.legal_actions() == state.legal_actions()
        hands.add((tuple(other.engine.hands), tuple(other.engine.stock)))
    assert len(hands) > 1, "the hidden cards are dealt again"
    same = [state.resample_from_infostate(p, np.random.default_rng(1).random).history() for _ in range(2)]
    assert same[0] == same[1], "a seeded sampler gives the same world"


def test_state_from_view_is_the_same_information_state():
    game = load()
    state = play_until(game.new_initial_state(), np.random.default_rng(2), 9)
    p = state.current_player()
    rebuilt = og.state_from_view(game, state.engine.view(p), np.random.default_rng(0))
    assert rebuilt.information_state_string(p) == state.information_state_string(p)
    with pytest.raises(ValueError, match="the view is of"):
        og.state_from_view(load(rules="small"), state.engine.view(p), np.random.default_rng(0))


# --- returns ----------------------------------------------------------------------------------------


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


# --- the tree for OpenSpiel's C++ solvers -------------------------------------------------------------


def walk_uniform(pos) -> tuple[int, float]:
    """Leaves below ``pos`` and player 0's expected return under uniformly random play, by walking positions."""
    if pos.over:
        return 1, pos.returns[0]
    if pos.game is None:
        branches = pos.chance_outcomes()
    else:
        legal = pos.legal_actions()
        branches = [(a, 1 / len(legal)) for a in legal]
    leaves, value = 0, 0.0
    for a, p in branches:
        child = pos.copy()
        child.apply(a)
        n, v = walk_uniform(child)
        leaves, value = leaves + n, value + p * v
    return leaves, value


def test_efg_export_is_the_same_game():
    game = load(rules=TINY)
    tree = og.export_efg(game)
    copy = pyspiel.load_efg_game(tree.text)
    assert copy.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    leaves, value = walk_uniform(og.Position.initial(game.setup))
    assert tree.terminal_nodes == leaves
    uniform = pyspiel.UniformRandomPolicy(copy)
    assert math.isclose(pyspiel.expected_returns(copy.new_initial_state(), uniform, -1, True)[0], value, abs_tol=1e-9)
    assert sum(len(i) for i in tree.infosets) == tree.decision_nodes, "every card is seen: perfect information"
    state = play_until(game.new_initial_state(), np.random.default_rng(0), 1)
    mirror = tree.efg_state(copy, state.history())
    assert mirror.current_player() == state.current_player()
    assert sorted(int(mirror.action_to_string(a)) for a in mirror.legal_actions()) == state.legal_actions()
    with pytest.raises(ValueError, match="more than 1,000 nodes"):
        og.export_efg(game, node_limit=1000)


def test_cfr_on_the_exported_tree_lowers_exploitability():
    copy = pyspiel.load_efg_game(og.export_efg(load(rules=TINY)).text)
    solver = pyspiel.CFRSolver(copy)
    uniform = pyspiel.exploitability(copy, pyspiel.UniformRandomPolicy(copy))
    solver.evaluate_and_update_policy()
    first = pyspiel.exploitability(copy, solver.average_policy())
    for _ in range(30):
        solver.evaluate_and_update_policy()
    later = pyspiel.exploitability(copy, solver.average_policy())
    assert math.isclose(first, uniform), "one iteration of CFR averages to the uniform policy"
    assert later < first / 10, (uniform, first, later)


# --- OpenSpiel bots as agents ----------------------------------------------------------------------


def test_openspiel_agents_by_name():
    agent = make_agent("openspiel:ismcts:simulations=7,uct_c=1.5", seed=0)
    assert isinstance(agent, ISMCTSAgent) and agent.simulations == 7 and agent.uct_c == 1.5
    for spec, message in (
        ("openspiel:alphazero", "unknown OpenSpiel bot 'alphazero'"),
        ("openspiel:ismcts:simulations=0", "simulations must be an int >= 1"),
        ("openspiel:ismcts:final=best", "final must be one of"),
        ("openspiel:ismcts:speed=3", "bad options"),
        ("openspiel:", "needs an argument"),
    ):
        with pytest.raises(ValueError, match=message) as info:
            make_agent(spec)
        assert "\n" not in str(info.value)


def test_ismcts_agent_plays_legal_seeded_moves():
    game = Game(2, "standard", seed=4, auto_next_hand=False)
    moves = []
    for _ in range(2):
        agent = make_agent("openspiel:ismcts:simulations=20", seed=123)
        g = game.clone()
        played = []
        for _ in range(6):
            move = agent.act(g.view())
            assert (move.card, move.mask) in g.legal_pairs()
            g.play(move)
            played.append(move)
        moves.append(played)
        assert len(agent.seconds_per_move) == 6
    assert moves[0] == moves[1], "the same seed plays the same moves"


def test_ismcts_agent_in_the_evaluation_harness():
    match = Match(("openspiel:ismcts:simulations=5", "random"), 2, get_rules("small,target=3"), seed=0)
    report = summarize(match, run_deals(match, 2, progress=False))
    assert report["games"] == 4 and not report["forfeits"]


def test_missing_openspiel_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pyspiel", None)  # import pyspiel now fails
    with pytest.raises(ValueError, match=r"pip install -e '\.\[openspiel\]'") as info:
        make_agent("openspiel:ismcts")
    assert "\n" not in str(info.value)
