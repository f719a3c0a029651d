"""Algorithms and bots on the OpenSpiel game ``python_scopa``: the small preset's tree exported for
OpenSpiel's C++ solvers (the same game; CFR lowers its exploitability), OpenSpiel's ISMCTS on the
52-card game, and the kit's ``openspiel:`` agents.

Skipped without the ``openspiel`` extra.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from openspiel_helpers import F52, F52_MOVE, load, play_until  # noqa: E402

import scopa_env.openspiel.game as og  # noqa: E402
from agents.evaluate import Match, run_deals, summarize  # noqa: E402
from agents.openspiel_bot import ISMCTSAgent  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from scopa_env.engine.game import Game  # noqa: E402
from scopa_env.engine.rules import get_rules  # noqa: E402

TINY = "small,table_size=4"
"""The small preset with 4 table cards: one deal of 2 cards each, about 20,000 nodes (seconds to walk)."""


# --- the tree for OpenSpiel's C++ solvers ---------------------------------------------------------


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


# --- OpenSpiel bots as agents ---------------------------------------------------------------------


def test_ismcts_agent_plays_the_52_card_game():
    """``openspiel:ismcts`` plays "move" mode, so it plays french_52 too (72,752 ids): a legal move."""
    agent = make_agent("openspiel:ismcts:simulations=4", seed=0)
    game = Game(8, "french_52", seed=4)
    for _ in range(5):
        view = game.view()
        move = agent.act(view)
        assert (move.card, move.mask) in view.legal_pairs(), f"{move} is not legal"
        game.play_pair(move.card, move.mask)


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


@pytest.mark.parametrize("params", [F52, F52_MOVE], ids=["select", "move"])
def test_ismcts_runs_on_french_52(params):
    """OpenSpiel's ISMCTS (Python) searches an 8-player 52-card position with resampled worlds."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(**params)
    state = play_until(game.new_initial_state(), np.random.default_rng(3), 2)
    random_state = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, random_state), 2.0, 8, random_state=random_state)
    bot.set_resampler(lambda s, player: s.resample_from_infostate(player, random_state.uniform))
    assert bot.step(state) in state.legal_actions()
