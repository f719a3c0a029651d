"""The ``oracle``: it sees every card, beats the fair search, and is refused wherever a fair agent is needed."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import agents.leaderboard as lb
from agents.base import Agent
from agents.matches import Match, agent_move, run_deals
from agents.oracle import OracleAgent, exact_bound, play_orders, true_row
from agents.registry import agent_label, check_fair, is_cheating, known_specs, make_agent, register_agent_factory
from agents.report import render_report, render_tournament
from agents.stats import summarize
from agents.suites import LadderEntry, load_suite
from scopa_app.cli import main
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.rules import Move

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "benchmarks" / "results" / "leaderboard-standard-2p-v1.json"
CHEATING = "sees every card"


def tiny_suite(deals: int = 2, ladder=(("random", 650.0), ("greedy", 1000.0), ("heuristic", 1100.0))):
    """standard-2p-v1 with a cheap rated ladder and a tiny quick tier (its first deals)."""
    suite = load_suite("standard-2p-v1")
    entries = tuple(LadderEntry(a, r) for a, r in ladder)
    return dataclasses.replace(suite, ladder=entries, tiers={"full": suite.tiers["full"], "quick": deals})


def positions(count: int, seed: int = 0):
    """Mid-hand positions of the 2-player game (random play) with several moves and a stock left."""
    rng = np.random.default_rng(seed)
    found, game_seed = 0, seed
    while found < count:
        game = Game(2, seed=game_seed, auto_next_hand=False)
        game_seed += 1
        for _ in range(int(rng.integers(0, 24))):
            pairs = game.legal_pairs()
            game.play_pair(*pairs[int(rng.integers(len(pairs)))])
        if not game.hand_over and len(game.legal_pairs()) > 1 and game.stock:
            found += 1
            yield game


def hidden_permuted(game: Game, rng: np.random.Generator) -> Game:
    """The same position for the seat to move, the cards it cannot see dealt again at random."""
    other = game.view().determinize(rng)
    other.auto_next_hand = False
    return other


class Recorder(Agent):
    """A fair agent that records what the match runner hands it."""

    def __init__(self, seed=None) -> None:
        super().__init__(seed)
        self.seen: list = []

    def act(self, view: PlayerView) -> Move:
        self.seen.append(view)
        return view.legal_moves()[0]


# --- strength ------------------------------------------------------------------------------


def test_the_oracle_beats_the_fair_search_on_fixed_deals():
    """Knowing every card is worth points: on 6 fixed duplicate deals the oracle outscores the fair
    compiled search (the same kind of search, guessing the hidden cards)."""
    match = Match(("oracle", "fsearch:worlds=32"), seed=2024)
    run = run_deals(match, 6, progress=False)
    report = summarize(match, run)
    assert not report["forfeits"], report["forfeits"]
    oracle = report["agents"][0]
    assert oracle["margin_per_hand"]["mean"] > 0.3, f"the oracle's margin per hand: {oracle['margin_per_hand']}"
    assert oracle["wins"] > report["agents"][1]["wins"], report["agents"]


def test_the_oracle_solves_the_last_two_rounds_of_the_true_deal():
    """With 12 cards left the oracle solves the hand exactly on its compiled row of the true deal: each
    move's value equals the Python engine's minimax over the true game, the last round dealt from
    the true stock (so the row holds the other hand and the stock order as they are)."""
    from agents.search import _alphabeta, fast_clone

    checked = 0
    for game in positions(12, seed=5):
        while len(game.stock) > 6 and not game.hand_over:
            game.play_pair(*game.legal_pairs()[0])
        if game.hand_over or len(game.legal_pairs()) < 2:
            continue
        values = OracleAgent(seed=0).move_values(game.clone())
        side = game.side_of[game.current]
        for (card, mask), value in zip(game.legal_pairs(), values):
            g = fast_clone(game)
            g.play_pair(card, mask)
            want = _alphabeta(g, side, -1e9, 1e9) if not g.hand_over else None
            if want is not None:
                assert abs(value - want) < 1e-3, f"move {card},{mask}: oracle {value}, minimax {want}"
        checked += 1
    assert checked >= 4, f"only {checked} positions had a choice with 12 cards left"


def test_noisy_rollouts_average_over_the_other_sides_play():
    """``noise`` turns the other sides' rollout moves random at that rate: the values move away from the
    noiseless ones (a trusted line of play), a seed repeats them, and with ``noise=0`` the kernel is
    the plain rollout search it was (exact solves, which take no rollouts, are turned off)."""
    moved = 0
    for game in positions(6, seed=11):
        plain = OracleAgent(seed=3, ab_depth=0, exact_leaves=1, rollouts=8).move_values(game.clone())
        again = OracleAgent(seed=3, ab_depth=0, exact_leaves=1, rollouts=8, noise=0.0).move_values(game.clone())
        noisy = OracleAgent(seed=3, ab_depth=0, exact_leaves=1, rollouts=8, noise=0.6).move_values(game.clone())
        assert plain == again
        assert noisy == OracleAgent(seed=3, ab_depth=0, exact_leaves=1, rollouts=8, noise=0.6).move_values(game.clone())
        moved += any(abs(a - b) > 1e-9 for a, b in zip(plain, noisy))
    assert moved >= 4, f"noise changed the values in only {moved} of 6 positions"


def stock_permuted(game: Game, rng: np.random.Generator) -> Game:
    """The same deal with the cards still in the stock in another order (every hand as it is)."""
    other = game.clone()
    other.stock = [int(c) for c in rng.permutation(other.stock)]
    return other


def test_an_oracle_that_sees_the_hands_does_not_read_the_stock():
    """``see=hands`` sees every hand but not the stock's order (issue 48: the value of reading the
    opponents, apart from the value of knowing the cards still to come): its values are the same for
    any order of the stock, while ``see=all``'s follow it; a seed repeats them."""
    rng = np.random.default_rng(5)
    moved = 0
    for game in positions(8, seed=21):
        other = stock_permuted(game, rng)
        assert other.stock != game.stock and other.hands == game.hands
        spec = dict(ab_depth=0, rollouts=16, noise=0.6)
        hands = OracleAgent(seed=4, see="hands", **spec).move_values(game.clone())
        assert hands == OracleAgent(seed=4, see="hands", **spec).move_values(other.clone())
        full = OracleAgent(seed=4, **spec).move_values(game.clone())
        moved += full != OracleAgent(seed=4, **spec).move_values(other.clone())
    assert moved >= 4, f"the full oracle's values followed the stock's order in only {moved} of 8 positions"


def test_an_oracle_that_sees_the_hands_solves_exactly_once_the_stock_is_empty():
    """With the stock empty nothing is hidden from ``see=hands``: Scopone scientifico deals every card at
    once, so there the two oracles are one agent (same values, same seed); mid-stock the hands-only
    oracle does not solve exactly (that would read the stock's order)."""
    game = Game(4, rules="scopone_scientifico", seed=3, auto_next_hand=False)
    assert not game.stock
    for _ in range(4):
        pairs = game.legal_pairs()
        a = OracleAgent(seed=2, ab_depth=0, rollouts=8, noise=0.6).move_values(game.clone())
        b = OracleAgent(seed=2, ab_depth=0, rollouts=8, noise=0.6, see="hands").move_values(game.clone())
        assert a == b
        game.play_pair(*pairs[0])
    mid = next(positions(1, seed=9))
    agent = OracleAgent(seed=0, ab_depth=0, rollouts=2, see="hands", exact_leaves=100_000_000)
    values = agent.move_values(mid.clone())
    assert values == OracleAgent(seed=0, ab_depth=0, rollouts=2, see="hands").move_values(mid.clone())


def test_the_leaderboard_measures_the_noisy_oracle_as_the_ceiling():
    """Every suite's ceiling is the oracle with noisy rollouts, a cheating agent the leaderboard may measure."""
    from benchscripts import load_benchmark

    script = load_benchmark("leaderboard")
    assert "noise=0.6" in script.CEILING and is_cheating(script.CEILING)
    lb.check_agents(load_suite("french52-8p-v1"), script.CEILING, ceiling=True)


# --- hidden information -------------------------------------------------------------------------


def test_a_fair_agent_never_receives_the_full_state():
    """The match runner hands a fair agent its seat's view only, and the view of two deals that differ
    in the hidden cards is the same; the oracle gets the game itself, and its choice follows the hidden cards."""
    rng = np.random.default_rng(3)
    oracle_changed = 0
    for game in positions(20, seed=1):
        other = hidden_permuted(game, rng)
        assert game.hands != other.hands or game.stock != other.stock, "the hidden cards should differ"
        fair = Recorder()
        agent_move(fair, game)
        agent_move(fair, other)
        assert all(isinstance(v, PlayerView) for v in fair.seen), [type(v) for v in fair.seen]
        assert fair.seen[0] == fair.seen[1], "a fair agent's observation changed with cards it cannot see"
        for spec in ("heuristic", "fsearch:worlds=16"):
            a, b = make_agent(spec, seed=7), make_agent(spec, seed=7)
            assert agent_move(a, game) == agent_move(b, other), f"{spec} moved differently on the same view"
        a, b = OracleAgent(seed=7), OracleAgent(seed=7)
        oracle_changed += agent_move(a, game) != agent_move(b, other)
    assert oracle_changed > 0, "the oracle never used the hidden cards in 20 positions"


def test_the_oracle_refuses_to_play_from_a_view():
    game = next(positions(1))
    with pytest.raises(ValueError, match="needs the whole deal"):
        OracleAgent(seed=0).act(game.view())


def test_the_true_row_agrees_with_the_view_and_holds_the_hidden_cards():
    """The compiled row of the true deal is the view's row plus every hand and the stock order."""
    from scopa_env.fast import core
    from scopa_env.fast.batch import compiled_rules
    from scopa_env.fast.search import row_from_view, search_params

    game = next(positions(1, seed=9))
    P = search_params(compiled_rules(game.rules, 2)[0])
    row, view_row = true_row(game, P), row_from_view(game.view(), P)[0]
    hidden = [core.COL_HAND + s for s in range(2) if s != game.current]
    hidden += list(range(core.COL_DECK, core.COL_DECK + core.MAX_CARDS))
    same = np.ones(len(row), bool)
    same[hidden] = False
    assert np.array_equal(row[same], view_row[same])
    other = 1 - game.current
    assert row[core.COL_HAND + other] == game.hands[other] and row[core.COL_HAND + other] != 0
    start = row[core.COL_STOCK_POS]
    assert list(row[core.COL_DECK + start : core.COL_DECK + start + len(game.stock)]) == game.stock


def test_play_orders_and_the_exact_bound():
    game = Game(2, seed=1, auto_next_hand=False)
    assert play_orders(game) == 36**6  # six rounds of 3 cards each, two players: (3! * 3!) ** 6
    assert exact_bound(2_000_000, 2) == 2_000_000
    assert exact_bound(2_000_000, 8) < 10_000  # the paranoid search of many sides prunes less


def test_options_are_bounded():
    for spec, message in [
        ("oracle:ab_depth=9", r"ab_depth must be an int in \[0, 4\]"),
        ("oracle:exact_leaves=0", "exact_leaves must be an int"),
        ("oracle:rollout=perfect", "rollout must be one of greedy, heuristic"),
        ("oracle:worlds=4", "bad options for agent 'oracle'"),
        ("oracle:ab_depth=0,noise=0.95", r"noise must be a number in \[0, 0.9\]"),
        ("oracle:noise=0.5", "noise needs ab_depth=0"),
        ("oracle:ab_depth=0,see=stock", "see must be one of all, hands"),
    ]:
        with pytest.raises(ValueError, match=message):
            make_agent(spec)


# --- marked as cheating -------------------------------------------------------------------------


def test_the_cheating_label_is_in_the_listing_and_the_tables():
    assert "oracle (cheating)" in known_specs()
    assert agent_label("oracle:ab_depth=1") == "oracle:ab_depth=1 (cheating)" and agent_label("fsearch") == "fsearch"
    assert is_cheating("oracle") and is_cheating(OracleAgent(seed=0)) and not is_cheating("search")
    with pytest.raises(ValueError, match=r"known agents: .*oracle \(cheating\)"):
        make_agent("oracel")
    match = Match(("oracle:ab_depth=0,rollouts=1", "random"), seed=1)
    report = summarize(match, run_deals(match, 1, progress=False))
    from rich.console import Console

    console = Console(file=io.StringIO(), width=200)
    render_report(report, console)
    text = console.file.getvalue()
    assert "oracle:ab_depth=0,rollouts=1 (cheating)" in text and "random (cheating)" not in text, text
    console = Console(file=io.StringIO(), width=200)
    render_tournament({"ratings": [], "pairs": [report], "interrupted": False}, console)
    assert "(cheating) vs random" in console.file.getvalue()


# --- refused where it must be -------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"opponents": "oracle"}, "opponents"),
        ({"opponents": {"greedy": 1.0, "oracle:ab_depth=1": 1.0}}, "opponents"),
        ({"eval_opponents": ["greedy", "oracle"]}, "eval_opponents"),
        ({"algo": "dqn", "opponents": ["oracle"]}, "opponents"),
        ({"curriculum": ["random", "oracle"], "eval_opponents": ["random", "oracle"]}, "eval_opponents"),
    ],
)
def test_refused_as_a_training_opponent(overrides, key):
    from train.config import ConfigError, TrainConfig

    with pytest.raises(ConfigError, match=f"cfg.yaml: {key}: agent '.*' {CHEATING}.*cannot be"):
        TrainConfig.from_dict(overrides, "cfg.yaml")


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"teacher": "oracle"}, "teacher"),
        ({"opponents": "oracle"}, "opponents"),
        ({"eval_opponents": ["oracle"]}, "eval"),
    ],
)
def test_refused_in_a_dmc_config(overrides, key):
    from train.config import ConfigError
    from train.dmc.config import DmcConfig

    with pytest.raises(ConfigError, match=f"cfg.yaml: {key}.*{CHEATING}"):
        DmcConfig.from_dict({"algo": "dmc", **overrides}, "cfg.yaml")


def test_the_opponent_sampler_refuses_it_by_spec_and_by_agent():
    from train.opponents import OpponentSampler

    with pytest.raises(ValueError, match=CHEATING):
        OpponentSampler({"greedy": 1.0, "oracle": 1.0})

    class Sneaky(Agent):  # a user's agent declaring that it needs the whole game
        needs_full_state = True

        def act(self, view):
            return view.legal_moves()[0]

    register_agent_factory("sneaky", lambda argument, seed=None: Sneaky(seed))
    sampler = OpponentSampler("sneaky:x")
    with pytest.raises(ValueError, match=f"'sneaky:x' {CHEATING}"):
        sampler.agent("sneaky:x")


def no_games(*args, **kwargs):
    raise AssertionError("a game was played before the refusal")


@pytest.mark.parametrize("spec", ["oracle", "oracle:ab_depth=1"])
def test_scopa_leaderboard_refuses_a_ranked_row(spec, monkeypatch, capsys):
    monkeypatch.setattr(lb, "run_deals", no_games)
    assert main(["leaderboard", spec, "--suite", "standard-2p-v1", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("scopa leaderboard: error: "), err
    assert CHEATING in err[0] and "ranked" in err[0] and "ceiling" in err[0], err[0]
    with pytest.raises(ValueError, match="cannot be ranked"):
        lb.rate_agent(tiny_suite(), spec)


def test_a_ladder_with_the_oracle_is_refused(monkeypatch):
    monkeypatch.setattr(lb, "run_deals", no_games)
    suite = tiny_suite(ladder=(("greedy", 1000.0), ("oracle", 1500.0)))
    with pytest.raises(ValueError, match="a reference of a suite's ladder"):
        lb.rate_agent(suite, "heuristic")
    with pytest.raises(ValueError, match="a reference of a suite's ladder"):
        lb.rate_ladder(suite)


def test_the_ceiling_row_is_measured_but_not_rated():
    """rate_agent(..., ceiling=True) plays the ladder like any agent, with no rating and the cheating label."""
    report = lb.rate_agent(tiny_suite(1), "oracle:ab_depth=0,rollouts=1", ceiling=True)
    row = report["row"]
    assert row["role"] == "ceiling" and row["cheating"] and row["rating"] is None
    assert row["label"] == "oracle:ab_depth=0,rollouts=1 (cheating)"
    assert [e["reference"] for e in row["references"]] == ["random", "greedy", "heuristic"]
    assert all(e["margin_per_hand"]["mean"] is not None for e in row["references"])
    with pytest.raises(ValueError, match="fair agent"):
        lb.rate_agent(tiny_suite(1), "greedy", ceiling=True)


@pytest.mark.parametrize("argv", [["--opponent", "oracle"], ["--players", "4", "--teammate", "oracle"]])
def test_scopa_play_refuses_it_at_a_humans_table(argv, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and CHEATING in err[0] and "would see your cards" in err[0], err


def test_scopa_web_refuses_it_at_a_humans_table(capsys):
    from scopa_app.web.server import AgentFactory

    with pytest.raises(ValueError, match=f"{CHEATING}.*would see your cards"):
        AgentFactory(("heuristic", "oracle"))
    assert main(["web", "--opponent", "oracle", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and CHEATING in err[0], err


def test_check_fair_says_the_role():
    with pytest.raises(ValueError, match=r"^agent 'oracle' sees every card \(cheating.*\): it cannot be a judge$"):
        check_fair("oracle", "a judge")
    check_fair("fsearch", "a judge")  # a fair agent passes


# --- the published ceiling ----------------------------------------------------------------------


def test_the_published_record_shows_the_unranked_ceiling():
    """The standard-2p-v1 record holds the oracle's ceiling row, unrated and above the ranking, and the gap."""
    record = json.loads(RECORD.read_text())["records"][0]
    ceiling = [r for r in record["rows"] if r["role"] == "ceiling"]
    assert len(ceiling) == 1 and record["rows"][0]["role"] == "ceiling"
    row = ceiling[0]
    spec = record["ceiling"]["spec"]
    assert is_cheating(spec) and spec.split(":")[0] == "oracle", spec
    assert row["agent"] == f"{spec} (cheating)" and row["rating"] is None and row["cheating"]
    rated = [r["rating"]["mean"] for r in record["rows"][1:]]
    assert rated == sorted(rated, reverse=True), "the fair rows are ranked by rating, the ceiling apart"
    gap = record["ceiling"]["gap"]
    best = max(record["rows"][1:], key=lambda r: r["rating"]["mean"])
    assert gap["agent"] == best["agent"], "the gap is the best fair agent's"
    assert gap["margin_per_hand"]["lo"] > 0, f"the oracle should beat the best fair agent: {gap}"
    facts = {f["what"]: f["value"] for f in record["facts"]}
    assert re.search(rf"^{re.escape(best['agent'])} \(rated \d+\) loses", facts["best fair agent's gap to the oracle"])
