"""Search that uses the learned network (train/dmc/net_search.py): netsearch:CHECKPOINT agents."""

from __future__ import annotations

import numpy as np
import pytest
from test_agents import positions, reshuffle_hidden

import train  # noqa: F401  (registers the netsearch: prefix)
from agents.registry import make_agent
from scopa_env.fast import BatchedScopa
from train.dmc.net_search import NetSearchBatchPolicy, blend, parse_spec
from train.zoo import load_zoo_agent

SPEC = "netsearch:zoo:standard-2p,worlds=16"


def test_spec_parsing_and_errors():
    assert parse_spec("zoo:standard-2p,weight=0.25,worlds=8") == ("zoo:standard-2p", 0.25, {"worlds": 8})
    assert parse_spec("runs/x/best") == ("runs/x/best", 0.5, {})
    for argument, message in (
        ("zoo:standard-2p,weight=1.5", "weight must be a number in [0, 1]"),
        (",worlds=3", "name a DMC checkpoint"),
        ("zoo:standard-2p,worlds", "expected key=value"),
    ):
        with pytest.raises(ValueError, match=None) as exc:
            parse_spec(argument)
        assert message in str(exc.value)
    with pytest.raises(ValueError, match="bad fsearch options"):
        make_agent("netsearch:zoo:standard-2p,wrlds=3")
    with pytest.raises(ValueError, match="no zoo agent 'nope'"):
        make_agent("netsearch:zoo:nope")


def test_blend_uses_the_exact_value_alone():
    search, q = np.array([1.0, 0.0]), np.array([-3.0, 3.0])
    assert blend(search, q, 0.5, False).tolist() == [-1.0, 1.5]
    assert blend(search, q, 0.5, True).tolist() == [1.0, 0.0]


def test_weight_one_is_the_network_and_weight_zero_the_search():
    """weight=1 plays the network's move; weight=0 a move of the search's best value (same seed)."""
    net = load_zoo_agent("standard-2p")
    for game in positions(2, 8, seed=21):
        view = game.view(game.current)
        assert make_agent("netsearch:zoo:standard-2p,weight=1,worlds=8", seed=1).act(view) == net.act(view)
        values, _ = make_agent("fsearch:worlds=8", seed=1).move_values(view)
        move = make_agent("netsearch:zoo:standard-2p,weight=0,worlds=8", seed=1).act(view)
        assert values[view.legal_pairs().index((move.card, move.mask))] == values.max()


def last_round_views(count: int, seed: int = 0):
    """Standard 2-player positions of heuristic play with the stock empty and a choice of moves: the other
    hand is then known by counting, so the compiled search solves them exactly (at most 6 cards left)."""
    from scopa_env.engine.game import Game

    heuristic, found = make_agent("heuristic", seed=0), 0
    for game_seed in range(seed, seed + 400):
        game = Game(2, seed=game_seed, auto_next_hand=False)
        while not game.hand_over and found < count:
            view = game.view(game.current)
            if not game.stock and len(view.legal_pairs()) > 1:
                found += 1
                yield view
            game.play(heuristic.act(view))
        if found >= count:
            return


def test_weight_one_is_the_network_with_the_exact_endgame():
    """Where the search solves the position exactly (2 players, stock empty), weight=1 with one world plays
    a move of the exact solve's best value, not the network's: "Where the search solves the position
    exactly (the last cards) its value is the truth and is used alone." On some of these positions the
    network alone plays a worse move (the gap the hybrid closes, docs/agents.md)."""
    net = load_zoo_agent("standard-2p")
    hybrid = make_agent("netsearch:zoo:standard-2p,weight=1,worlds=1", seed=1)
    exact = make_agent("fsearch:worlds=1", seed=1)
    network_worse = 0
    for view in last_round_views(40, seed=5):
        values, _ = exact.move_values(view)
        pairs = view.legal_pairs()
        move = hybrid.act(view)
        assert values[pairs.index((move.card, move.mask))] == values.max()
        alone = net.act(view)
        network_worse += values[pairs.index((alone.card, alone.mask))] < values.max()
    assert network_worse > 0, "the network alone played every one of these endgames exactly"


def test_weight_one_skips_the_inexact_searches_and_plays_the_same(monkeypatch):
    """With weight=1 the search runs only where it is exact; the seeds it would have drawn elsewhere are
    still drawn, so one agent's decisions over whole hands are those of an agent that searches every time.
    Three players: an exact solve there samples its worlds (two here), so a missed draw changes moves."""
    from agents.fast_search import FastSearchAgent
    from scopa_env.engine.game import Game

    def decisions(agent) -> list:
        moves = []
        for game_seed in range(6):
            game = Game(3, seed=game_seed, auto_next_hand=False)
            while not game.hand_over:
                moves.append(agent.act(game.view(game.current)))
                game.play(moves[-1])
        return moves

    spec = "netsearch:zoo:standard-3p,weight=1,worlds=4,exact_worlds=2"
    skipping = decisions(make_agent(spec, seed=3))
    searches = []
    monkeypatch.setattr(FastSearchAgent, "skips_inexact", lambda self, view: searches.append(view) and False)
    assert decisions(make_agent(spec, seed=3)) == skipping
    assert searches, "the agent that searches every time asked skips_inexact"


def cirulla_positions_the_kernel_skips(count: int, seed: int = 0):
    """Cirulla positions with a choice where the compiled search does not play (a declared wildcard, a
    shown hand or a declaration pending), from greedy play."""
    from scopa_env.engine.game import Game
    from scopa_env.engine.rules import get_rules

    rules, greedy, found = get_rules("cirulla"), make_agent("greedy", seed=0), 0
    for game_seed in range(seed, seed + 500):
        game = Game(2, rules=rules, seed=game_seed, auto_next_hand=False)
        while not game.hand_over and found < count:
            view = game.view(game.current)
            if len(view.legal_pairs()) > 1 and (view.deciding or view.wild_rank or any(view.revealed)):
                found += 1
                yield view
            game.play(greedy.act(view))
        if found >= count:
            return


def test_weight_zero_plays_fsearchs_python_fallback_where_the_kernel_does_not():
    """Where the compiled search gives no values (Cirulla's wildcard and shown hands), weight=0 is still
    the search: fsearch's Python fallback, not the network (the net alone lost a Cirulla row 0.9 a hand)."""
    seen = 0
    for view in cirulla_positions_the_kernel_skips(6, seed=3):
        fsearch = make_agent("fsearch:worlds=8", seed=1)
        assert fsearch.move_values(view) is None
        values, _ = fsearch.fallback_values(view)
        move = make_agent("netsearch:zoo:cirulla-2p,weight=0,worlds=8", seed=1).act(view)
        assert values[view.legal_pairs().index((move.card, move.mask))] == values.max()
        seen += 1
    assert seen == 6


def test_mixing_changes_some_decision():
    """The mix is neither part alone somewhere (else the check above is vacuous)."""
    differs = 0
    for game in positions(2, 30, seed=4):
        view = game.view(game.current)
        mixed = make_agent("netsearch:zoo:standard-2p,weight=0.5,worlds=8", seed=2).act(view)
        alone = make_agent("netsearch:zoo:standard-2p,weight=0,worlds=8", seed=2).act(view)
        differs += mixed != alone
    assert differs > 0


def test_decision_ignores_hidden_cards():
    rng = np.random.default_rng(8)
    for game in positions(2, 6, seed=13):
        other = reshuffle_hidden(game, game.current, rng)
        assert game.hands != other.hands or game.stock != other.stock
        first = make_agent(SPEC, seed=5).act(game.view(game.current))
        assert first == make_agent(SPEC, seed=5).act(other.view(game.current))


def test_batch_policy_is_legal_and_weight_one_is_the_network():
    from train.dmc.agent import load_dmc_batch_policy
    from train.zoo import checked_path

    batch = BatchedScopa(24, 2, action_mode="move", episode="game", reward="game")
    batch.reset(np.arange(24))
    net_policy, _ = load_dmc_batch_policy(checked_path("standard-2p"))
    mixed = NetSearchBatchPolicy("zoo:standard-2p", 0.5, {"worlds": 8}, seed=0)
    alone = NetSearchBatchPolicy("zoo:standard-2p", 1.0, {"worlds": 8}, seed=0)
    for _ in range(12):
        args = (batch.obs, batch.legal_ids, batch.legal_count)
        ids = mixed(*args, batch=batch)
        for i in range(24):
            assert ids[i] in batch.legal_ids[i, : batch.legal_count[i]]
        assert np.array_equal(alone(*args, batch=batch), net_policy(*args, batch=batch))
        batch.step(ids)


@pytest.mark.slow  # a compiled evaluation of the search mixed with a network
def test_cli_fast_eval_of_netsearch_against_the_network(scopa_cli, tmp_path):
    """scopa eval --fast plays a netsearch agent against a zoo agent (policies on both sides)."""
    import json

    out = tmp_path / "r.json"
    result = scopa_cli(
        "eval", "--fast", "netsearch:zoo:standard-2p,worlds=4", "zoo:standard-2p", "--games", "2",
        "--no-progress", "--json", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert [a["agent"] for a in report["agents"]] == ["netsearch:zoo:standard-2p,worlds=4", "zoo:standard-2p"]
    assert report["games"] == 4 and report["config"]["engine"] == "compiled core"
    result = scopa_cli("eval", "--fast", "zoo:standard-2p", "netsearch:zoo:standard-2p,weight=3", "--games", "2")
    assert result.returncode == 2 and "weight must be a number in [0, 1]" in result.stderr
