"""Benchmark suites: the engine still deals every shipped suite as it was frozen."""

from __future__ import annotations

import dataclasses
import json

import pytest

from agents.matches import Match, deal_seed, play_game
from agents.random_agent import RandomAgent
from agents.suites import (
    SUITES_DIR,
    check,
    core_fingerprint,
    deal_record,
    fingerprint,
    from_dict,
    load_suite,
    names,
    to_dict,
    with_ratings,
)
from scopa_env.engine.game import Game
from train import zoo

REQUIRED = {
    ("standard", 2, 2): "standard 2 players",
    ("standard", 3, 3): "standard 3 players",
    ("standard", 4, 2): "standard 4 players in teams",
    ("scopone_scientifico", 4, 2): "Scopone scientifico",
    ("booklet", 4, 4): "the booklet's 4 players each for themselves",
    ("escoba", 2, 2): "Escoba",
    ("scopa_d_assi", 2, 2): "Scopa d'Assi",
    ("cirulla", 2, 2): "Cirulla",
    ("french_52", 8, 8): "the 52-card game for 8 players",
}
"""(preset, players, sides) of every game issue 34 asks a suite for."""


def test_every_required_game_has_a_suite():
    shipped = {(s.rules.name, s.num_players, s.num_sides) for s in map(load_suite, names())}
    missing = [what for key, what in REQUIRED.items() if key not in shipped]
    assert not missing, f"no suite for {missing}; shipped: {sorted(shipped)}"


@pytest.mark.parametrize("name", names())
def test_engine_deals_the_suite_as_frozen(name):
    """Both tiers' fingerprints, recomputed from the engine, match the file."""
    suite = load_suite(name)
    assert check(suite) == [], f"{name} no longer deals as frozen"


@pytest.mark.parametrize("name", names())
def test_suite_file_is_what_to_dict_writes(name):
    """The file is exactly the suite's JSON (nothing hand-edited that the loader would drop)."""
    text = (SUITES_DIR / f"{name}.json").read_text()
    assert json.loads(text) == to_dict(from_dict(json.loads(text))), f"{name}.json does not round-trip"
    assert name.endswith("-v1") or name[-3:-1] == "-v", f"suite names carry a version: {name}"


@pytest.mark.parametrize("name", names())
def test_ladder_holds_the_basics_and_the_anchor(name):
    suite = load_suite(name)
    for spec in ("random", "greedy", "heuristic", "search", "fsearch"):
        assert spec in suite.ladder_specs, f"{name}: {spec} missing from the ladder"
    assert suite.rating_of(suite.anchor) is not None, f"{name}: the anchor {suite.anchor} has no rating"
    assert suite.tiers["full"] == 10_000, f"{name}: the full tier is 10,000 deal pairs"
    assert 50 <= suite.tiers["quick"] <= 500, f"{name}: the quick tier is a few hundred deal pairs"


def test_zoo_agent_of_each_game_is_on_its_ladder():
    """A suite's ladder holds a zoo DMC agent trained for its preset and player count where the zoo has
    one, and every zoo agent on a ladder is one (the PPO and DQN entries, distilled from the standard
    game's DMC agent, are not references). A frozen ``-v1`` ladder keeps the agent it was frozen with:
    a later entry of the same game (``scopone-scientifico-v2``) is rated with ``--rows-only``, not added."""
    for name in names():
        suite = load_suite(name)
        fitting = {
            f"zoo:{z}"
            for z in zoo.names()
            if (card := zoo.card(z))["algo"] == "dmc"
            and card["rules"] == suite.rules.name
            and card["num_players"] == suite.num_players
        }
        on_ladder = {spec for spec in suite.ladder_specs if spec.startswith("zoo:")}
        assert on_ladder <= fitting, f"{name}: {sorted(on_ladder - fitting)} do not play this game"
        assert bool(on_ladder) == bool(fitting), (
            f"{name}: the zoo has {sorted(fitting)}, the ladder {sorted(on_ladder)}"
        )


def test_a_different_deal_changes_the_fingerprint():
    """The check can fail: another seed, one deal fewer, or another player count is another fingerprint."""
    suite = load_suite("standard-2p-v1")
    moved = dataclasses.replace(suite, seed=suite.seed + 1)
    assert any("quick tier differently" in p for p in check(moved, ("quick",))), "a new seed went unnoticed"
    n = suite.tiers["quick"]
    base = fingerprint(suite.rules, 2, suite.seed, n)
    assert fingerprint(suite.rules, 2, suite.seed, n - 1) != base
    assert fingerprint(suite.rules, 4, suite.seed, n) != base
    wrong_target = dataclasses.replace(suite, target=21)
    assert any("target 21" in p for p in check(wrong_target, ())), "a wrong target went unnoticed"


def test_a_different_deal_changes_the_core_fingerprint():
    """The compiled core's deals are frozen too: another seed or one deal fewer is noticed."""
    suite = load_suite("standard-2p-v1")
    n = suite.tiers["quick"]
    base = core_fingerprint(suite.rules, 2, suite.seed, n)
    assert base == suite.core_fingerprints["quick"]
    assert base != fingerprint(suite.rules, 2, suite.seed, n)  # the core's cards are its own
    assert core_fingerprint(suite.rules, 2, suite.seed, n - 1) != base
    assert core_fingerprint(suite.rules, 2, suite.seed + 1, n) != base
    stale = dataclasses.replace(suite, core_fingerprints={"quick": "0" * 64, "full": suite.core_fingerprints["full"]})
    assert any("compiled core deals the quick tier" in p for p in check(stale, ("quick",)))


def test_fingerprint_covers_the_dealt_cards():
    """The record of a deal is the engine's first hand and the deck orders of the next ones."""
    suite = load_suite("standard-2p-v1")
    seed = deal_seed(suite.seed, 0)
    rec = json.loads(deal_record(suite.rules, 2, seed))
    game = Game(2, suite.rules, seed=seed, auto_next_hand=False)
    assert rec["hands"] == game.hands and rec["table"] == game.table and rec["stock"] == game.stock
    assert len(rec["later"]) == 7 and all(sorted(o) == list(range(40)) for o in rec["later"])


def test_the_harness_plays_the_suites_deals():
    """A match seeded with the suite's seed deals deal i from the suite's i-th seed."""
    suite = load_suite("standard-2p-v1")
    seen = []

    class Recorder(RandomAgent):
        def act(self, view):
            if not seen:
                seen.append(view.hand)
            return super().act(view)

    match = Match(("random", "random"), 2, suite.rules, suite.seed)
    play_game(match, 3, 0, [Recorder(0), RandomAgent(1)])
    game = Game(2, suite.rules, seed=suite.deal_seeds("quick")[3], auto_next_hand=False)
    assert seen[0] == game.hands[game.current], "the harness dealt another hand than the suite's deal 3"


def test_unknown_suite_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown suite 'nope'; known suites: .*standard-2p-v1"):
        load_suite("nope")
    with pytest.raises(ValueError, match="no tier 'huge'"):
        load_suite("standard-2p-v1").deals("huge")


def test_with_ratings_keeps_the_anchor():
    suite = load_suite("standard-3p-v1")
    ratings = {s: 1000.0 + 10 * i for i, s in enumerate(suite.ladder_specs)}
    ratings[suite.anchor] = suite.anchor_rating
    rated = with_ratings(suite, ratings, {"tier": "quick"})
    assert rated.rated and rated.rating_of(suite.anchor) == suite.anchor_rating
    ratings[suite.anchor] += 5
    with pytest.raises(ValueError, match="anchor"):
        with_ratings(suite, ratings, {})


@pytest.mark.parametrize("name", names())
def test_trained_references_are_pinned_to_the_weights_they_were_rated_with(name):
    """A `zoo:` reference carries the SHA-256 of its weights, the card's and the installed file's: retraining
    a zoo agent without a new suite version fails here (its published rating would describe another network)."""
    for entry in load_suite(name).ladder:
        if entry.agent.startswith("zoo:"):
            zname = entry.agent.removeprefix("zoo:")
            installed = zoo.weights_sha256(zoo.path_of(zname))
            assert entry.weights_sha256 == zoo.card(zname)["weights_sha256"] == installed, f"{name}: {entry.agent}"
        else:
            assert entry.weights_sha256 is None, f"{name}: {entry.agent} has no weights to pin"


def test_a_reference_with_other_weights_is_refused_before_any_game():
    """The leaderboard refuses a suite whose installed reference is not the pinned network, naming both."""
    import agents.leaderboard as lb

    suite = load_suite("standard-2p-v1")
    ladder = tuple(
        dataclasses.replace(e, weights_sha256="0" * 64) if e.agent == "zoo:standard-2p" else e for e in suite.ladder
    )
    other = dataclasses.replace(suite, ladder=ladder)
    with pytest.raises(ValueError, match=r"zoo:standard-2p was rated with weights 000000000000, but the installed"):
        lb.check_agents(other, "greedy")
    with pytest.raises(ValueError, match="a retrained reference needs a new suite version"):
        lb.rate_ladder(other)
    lb.check_agents(suite, "greedy")  # the shipped pins hold


def test_with_ratings_pins_the_weights_it_is_given():
    suite = load_suite("standard-3p-v1")
    bare = dataclasses.replace(suite, ladder=tuple(dataclasses.replace(e, weights_sha256=None) for e in suite.ladder))
    ratings = {e.agent: e.rating for e in suite.ladder}
    rated = with_ratings(bare, ratings, {"tier": "quick"}, {"zoo:standard-3p": "ab" * 32})
    assert {e.agent: e.weights_sha256 for e in rated.ladder if e.weights_sha256} == {"zoo:standard-3p": "ab" * 32}
    assert from_dict(to_dict(rated)) == rated
