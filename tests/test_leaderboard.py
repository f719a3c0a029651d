"""``scopa leaderboard``: an agent's row on a suite, its rating on a fixed scale, refusals before any game."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
import textwrap

import numpy as np
import pytest
from benchscripts import load_benchmark

import agents.leaderboard as lb
from agents.leaderboard import (
    anchored_bradley_terry,
    fit_against,
    pair_comparisons,
    rate_agent,
    rating_with_interval,
    resolve_agent,
)
from agents.matches import RunResult
from agents.suites import LadderEntry, load_suite
from scopa_app.cli import main


def tiny_suite(deals: int = 3, name: str = "standard-2p-v1"):
    """A suite with a cheap rated ladder and a tiny quick tier (its deals are the real suite's first ones)."""
    suite = load_suite(name)
    ladder = (LadderEntry("random", 650.0), LadderEntry("greedy", 1000.0), LadderEntry("heuristic", 1100.0))
    return dataclasses.replace(suite, ladder=ladder, tiers={"full": suite.tiers["full"], "quick": deals})


def test_fit_against_recovers_an_elo_difference():
    """Winning 76% against a reference rated 1000 is about 200 Elo points above it."""
    got = float(fit_against(np.array([760.0]), np.array([240.0]), np.array([1000.0]), prior=0.0))
    want = 1000 + 400 * math.log10(760 / 240)
    assert abs(got - want) < 0.01, f"rating {got}, Elo says {want}"
    even = float(fit_against(np.array([10.0, 30.0]), np.array([30.0, 10.0]), np.array([900.0, 1100.0])))
    assert abs(even - 1000) < 0.01, f"even results against 900 and 1100 rate {even}, not 1000"


def test_anchor_keeps_its_number():
    """The ladder's fit puts the anchor at its number exactly, with no width; the rest move around it."""
    rng = np.random.default_rng(0)
    per_pair = {(i, j): rng.integers(0, 3, size=(40, 2)).astype(float) for i in range(3) for j in range(i + 1, 3)}
    for anchor in range(3):
        ratings = anchored_bradley_terry(["a", "b", "c"], per_pair, anchor, 1000.0, seed=1)
        assert ratings[anchor]["rating"] == {"mean": 1000.0, "lo": 1000.0, "hi": 1000.0}, ratings[anchor]
    shifted = anchored_bradley_terry(["a", "b", "c"], per_pair, 1, 0.0, seed=1)
    base = anchored_bradley_terry(["a", "b", "c"], per_pair, 1, 1000.0, seed=1)
    assert [r["rating"]["mean"] + 1000 for r in shifted] == [r["rating"]["mean"] for r in base]


def test_rating_an_agent_moves_no_reference():
    """Only the agent is fitted: however it plays, the references' ratings are the suite's."""
    ref_ratings = [650.0, 1000.0, 1100.0]
    crushing = [np.tile([[2.0, 0.0]], (20, 1)) for _ in ref_ratings]
    r = rating_with_interval(crushing, ref_ratings, seed=0)
    assert r["lo"] <= r["mean"] <= r["hi"] and r["mean"] > 1100, r
    assert ref_ratings == [650.0, 1000.0, 1100.0]


def test_pair_comparisons_count_each_other_side():
    """A win beats every other side; another side's win beats only the agent (the rest is a draw)."""
    records = [
        {"lineup": [0, 1, 1], "winner": 0},
        {"lineup": [1, 0, 1], "winner": 2},
        {"lineup": [1, 1, 0], "winner": None},
    ]
    run = RunResult(deals=[records, records[:1]], requested=2)
    assert pair_comparisons(run).tolist() == [[2.0, 1.0], [2.0, 0.0]]


@pytest.mark.parametrize("engine, played_on", [("auto", "compiled core"), ("python", "python harness")])
def test_row_is_the_same_on_one_and_two_workers(engine, played_on):
    """On the compiled core (two workers: two threads) as on the harness (two processes)."""
    suite = tiny_suite(3)
    one = rate_agent(suite, "greedy", "quick", workers=1, engine=engine)
    two = rate_agent(suite, "greedy", "quick", workers=2, engine=engine)
    assert json.dumps(one["row"], sort_keys=True) == json.dumps(two["row"], sort_keys=True), "workers changed the row"
    row = one["row"]
    assert [e["reference"] for e in row["references"]] == ["random", "greedy", "heuristic"]
    assert [e["engine"] for e in row["references"]] == [played_on] * 3
    assert row["rating"]["lo"] <= row["rating"]["mean"] <= row["rating"]["hi"]
    assert set(row["per_hand"]) == {"primiera", "settebello", "coins", "cards", "scope"}
    assert all(e["games"] == 6 for e in row["references"]), "3 deals, 2 rotations each"


def test_a_compiled_row_with_a_network_and_the_search_is_the_same_on_one_and_two_workers():
    """A zoo network (its compiled_policy hook) against fsearch and the baselines, on 3 sides' rotations of
    a 2-player suite's deals: every pair on the compiled core, the same row on one worker and on two."""
    suite = dataclasses.replace(
        tiny_suite(4),
        ladder=(LadderEntry("random", 650.0), LadderEntry("greedy", 1000.0), LadderEntry("fsearch:worlds=4", 1200.0)),
    )
    one = rate_agent(suite, "zoo:standard-2p", "quick", workers=1)
    two = rate_agent(suite, "zoo:standard-2p", "quick", workers=2)
    assert json.dumps(one["row"], sort_keys=True) == json.dumps(two["row"], sort_keys=True), "workers changed the row"
    assert {e["engine"] for e in one["row"]["references"]} == {"compiled core"}


def fail(what):
    def played(*args, **kwargs):
        raise AssertionError(f"a pair was played on the {what}")

    return played


def test_a_pair_plays_on_the_compiled_core_when_it_can_and_on_the_harness_otherwise(user_module, monkeypatch):
    """Baselines against baselines play on the core (the harness would fail here), a user's class without
    the hook on the harness (the core would fail), and the row says so per reference."""
    suite = tiny_suite(2)
    harness, core = lb.run_deals, lb.play_deals_compiled
    monkeypatch.setattr(lb, "run_deals", fail("harness"))
    row = rate_agent(suite, "heuristic", "quick")["row"]
    assert [e["engine"] for e in row["references"]] == ["compiled core"] * 3
    monkeypatch.setattr(lb, "run_deals", harness)
    monkeypatch.setattr(lb, "play_deals_compiled", fail("compiled core"))
    row = rate_agent(suite, f"{user_module}:MyAgent", "quick")["row"]
    assert [e["engine"] for e in row["references"]] == ["python harness"] * 3
    assert core is not lb.play_deals_compiled


def test_a_users_class_plays_on_the_compiled_core_through_its_hook(user_module):
    """A class defining compiled_policy plays every pair on the core; a failing hook is one line, before any game."""
    suite = tiny_suite(2)
    row = rate_agent(suite, f"{user_module}:FirstMove", "quick")["row"]
    assert [e["engine"] for e in row["references"]] == ["compiled core"] * 3
    assert row["references"][2]["margin_per_hand"]["mean"] < 0, "the first legal move loses to heuristic"
    with pytest.raises(ValueError, match="compiled_policy.* failed: RuntimeError: no batch here") as err:
        rate_agent(suite, f"{user_module}:BrokenHook", "quick", engine="compiled")
    assert "\n" not in str(err.value)


def test_a_ladder_mixes_the_engines_pair_by_pair_and_keeps_its_anchor():
    """rate_ladder plays each pair where it can: search (no compiled form) on the harness, the rest on the core."""
    suite = dataclasses.replace(
        tiny_suite(2),
        ladder=(LadderEntry("random", None), LadderEntry("greedy", 1000.0), LadderEntry("search:ply_budget=40", None)),
    )
    ladder = lb.rate_ladder(suite, "quick")
    engines = {tuple(p["pair"]): p["engine"] for p in ladder["pairs"]}
    assert engines == {
        ("random", "greedy"): "compiled core",
        ("random", "search:ply_budget=40"): "python harness",
        ("greedy", "search:ply_budget=40"): "python harness",
    }
    greedy = next(r for r in ladder["ratings"] if r["agent"] == "greedy")
    assert greedy["rating"] == {"mean": 1000.0, "lo": 1000.0, "hi": 1000.0}


def test_a_reference_row_is_measured_alone_against_the_anchor_whatever_the_sides():
    """A reference row's numbers against greedy are the reference on one side and greedy on every other,
    as an agent's row. With two sides the pair [greedy, heuristic] turned round is exactly that. With
    three, that pair is greedy alone against two heuristics, and 1 minus greedy's win rate is the chance
    that one of the two heuristics wins, not a side's win rate: the ladder plays [heuristic, greedy] as
    well, outside the fit, and the row reads it; without it the row stays empty."""
    script = load_benchmark("leaderboard")
    two = tiny_suite(deals=2)
    ladder = lb.rate_ladder(two, "quick")
    assert ladder["alone_pairs"] == []
    rows = {r["agent"]: r for r in script.ladder_rows(ladder, "greedy", two.num_sides)}
    reverse = next(p for p in ladder["pairs"] if p["pair"] == ["greedy", "heuristic"])
    win, margin = rows["heuristic"]["win_rate_vs_greedy"], rows["heuristic"]["margin_vs_greedy"]
    assert win["mean"] == pytest.approx(1 - reverse["win_rate"]["mean"])
    assert margin["mean"] == pytest.approx(-reverse["margin_per_hand"]["mean"])

    three = tiny_suite(deals=2, name="standard-3p-v1")
    ladder = lb.rate_ladder(three, "quick")
    assert [p["pair"] for p in ladder["alone_pairs"]] == [["heuristic", "greedy"]]
    assert [p["pair"] for p in ladder["pairs"]] == [
        ["random", "greedy"],
        ["random", "heuristic"],
        ["greedy", "heuristic"],
    ]
    alone = ladder["alone_pairs"][0]
    rows = {r["agent"]: r for r in script.ladder_rows(ladder, "greedy", three.num_sides)}
    assert rows["heuristic"]["win_rate_vs_greedy"] == alone["win_rate"]
    assert rows["heuristic"]["margin_vs_greedy"] == alone["margin_per_hand"]
    assert rows["random"]["win_rate_vs_greedy"] == ladder["pairs"][0]["win_rate"]
    unplayed = script.ladder_rows({**ladder, "alone_pairs": []}, "greedy", three.num_sides)
    assert "win_rate_vs_greedy" not in next(r for r in unplayed if r["agent"] == "heuristic")


def test_cirulla_plays_fsearch_on_the_harness_and_a_compiled_only_run_refuses_it(monkeypatch):
    """fsearch plays Cirulla on the harness (the batched search does not value its declarations, so no
    compiled form); engine="compiled" refuses that pair in one line before any game, never as forfeits."""
    cirulla = load_suite("cirulla-2p-v1")
    suite = dataclasses.replace(
        cirulla, ladder=(LadderEntry("random", None), LadderEntry("greedy", 1000.0), LadderEntry("fsearch", None))
    )
    assert "fsearch" in cirulla.ladder_specs
    assert lb.plan_pair(suite, "fsearch", "greedy")[0] == "python harness"
    assert lb.plan_pair(suite, "heuristic", "greedy")[0] == "compiled core"
    monkeypatch.setattr(lb, "run_deals", fail("harness"))
    monkeypatch.setattr(lb, "play_deals_compiled", fail("compiled core"))
    with pytest.raises(
        ValueError, match="heuristic vs fsearch on cirulla-2p-v1 cannot play on the compiled core"
    ) as err:
        rate_agent(suite, "heuristic", "quick", engine="compiled")
    assert "\n" not in str(err.value) and "does not value the decisions" in str(err.value)
    with pytest.raises(ValueError, match="engine must be one of auto, compiled, python"):
        rate_agent(suite, "heuristic", "quick", engine="gpu")


USER_MODULE = """
from agents.base import Agent
from agents.random_agent import RandomAgent


class MyAgent(RandomAgent):
    name = "mine"


class NotAnAgent:
    pass


class Abstract(Agent):
    pass


class FirstMove(Agent):
    # the first legal move, on the harness and (through the hook) on the compiled core

    def act(self, view):
        return view.legal_moves()[0]

    def compiled_policy(self, num_players, rules):
        return lambda obs, legal_ids, legal_count: legal_ids[:, 0]


class BlasThreads(RandomAgent):
    # records the BLAS thread count each time it moves
    seen = []

    def act(self, view):
        from threadpoolctl import threadpool_info

        BlasThreads.seen.append(max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"))
        return super().act(view)


class BrokenHook(RandomAgent):
    def compiled_policy(self, num_players, rules):
        raise RuntimeError("no batch here")
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_scopa_agents.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_scopa_agents"
    sys.modules.pop("my_scopa_agents", None)


def test_a_users_class_gets_a_row(user_module):
    """``module:Class`` plays through forked workers, and its row equals the one-worker row."""
    suite = tiny_suite(2)
    spec = f"{user_module}:MyAgent"
    two = rate_agent(suite, spec, "quick", workers=2)
    one = rate_agent(suite, spec, "quick", workers=1)
    assert one["row"] == two["row"] and one["row"]["agent"] == spec
    assert not one["forfeits"], one["forfeits"]


def test_pairs_play_with_one_blas_thread_and_the_limit_comes_back(user_module):
    """Leaderboard pairs pin BLAS to one thread (a second one only spins on a busy machine), then restore it."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")

    module = __import__(user_module)
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == 2
        rate_agent(tiny_suite(1), f"{user_module}:BlasThreads", "quick", engine="python")
        assert blas_threads() == 2, "the caller's BLAS limit was not restored"
    assert module.BlasThreads.seen and set(module.BlasThreads.seen) == {1}, module.BlasThreads.seen


@pytest.mark.parametrize(
    "cls, message",
    [
        ("NotAnAgent", "not a subclass of agents.base.Agent"),
        ("Abstract", "lacks act"),
        ("Missing", "the module my_scopa_agents .* has no 'Missing'"),
    ],
)
def test_a_class_that_is_not_an_agent_is_refused(user_module, cls, message):
    with pytest.raises(ValueError, match=message):
        resolve_agent(f"{user_module}:{cls}")


def no_games(*args, **kwargs):
    raise AssertionError("a game was played before the refusal")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["heuristic", "--suite", "nope"], "unknown suite 'nope'; known suites: .*standard-2p-v1"),
        (["zoo:standard-2p", "--suite", "standard-3p-v1"], "cannot play this game: .*trained for 2 players"),
        (["my_scopa_agents:NotAnAgent"], "not a subclass of agents.base.Agent"),
        (["no_such_module_here:Agent"], "unknown agent 'no_such_module_here:Agent'"),
        (["train.dmc.agent:DmcAgent"], "the kit's own agents are played by their specs"),
        (["heuristic", "--quick", "--deals", "0"], "deals must be between 1"),
        (
            ["heuristic", "--suite", "cirulla-2p-v1", "--engine", "compiled"],
            "heuristic vs search on cirulla-2p-v1 cannot play on the compiled core: 'search' has no compiled form",
        ),
    ],
)
def test_bad_input_is_one_line_before_any_game(user_module, monkeypatch, capsys, argv, message):
    monkeypatch.setattr(lb, "run_deals", no_games)
    monkeypatch.setattr(lb, "play_deals_compiled", no_games)
    assert main(["leaderboard", *argv, "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if "error" in line]) == 1, err
    assert err[-1].startswith("scopa leaderboard: error: ")
    assert re.search(message, err[-1]), err[-1]


def test_command_prints_the_row_and_writes_json(tmp_path, capsys, monkeypatch):
    import scopa_app.leaderboard as app

    monkeypatch.setattr(app, "load_suite", lambda name: tiny_suite(1))
    path = tmp_path / "row.json"
    assert main(["leaderboard", "heuristic", "--quick", "--no-progress", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "rating: " in out and "greedy = 1000" in out, out
    for ref in ("random", "greedy", "heuristic"):
        assert re.search(f"\n{ref} .* compiled core\n", out), out
    report = json.loads(path.read_text())
    assert report["row"]["agent"] == "heuristic" and report["timing"]["load_average"]["start"]


def test_list_shows_every_suite(capsys):
    assert main(["leaderboard", "--list"]) == 0
    out = capsys.readouterr().out
    assert "standard-2p-v1" in out and "french52-8p-v1" in out


def test_a_ladder_kept_pair_by_pair_is_taken_back_as_it_was_played(tmp_path, monkeypatch, capsys):
    """``state_dir`` keeps each finished pair as JSON; a second run takes every pair back without playing
    and rates the ladder the same; a damaged file or another run's file is played again, said in one line."""
    suite = dataclasses.replace(
        tiny_suite(2),
        ladder=(LadderEntry("random", None), LadderEntry("greedy", 1000.0), LadderEntry("search:ply_budget=40", None)),
    )
    first = lb.rate_ladder(suite, "quick", state_dir=tmp_path)
    files = sorted(p.name for p in tmp_path.glob("*.json"))
    assert len(files) == 3, files
    assert first["timing"]["reused_pairs"] == 0

    def no_games(*args, **kwargs):
        raise AssertionError("a kept pair was played again")

    monkeypatch.setattr(lb, "play_pair", no_games)
    again = lb.rate_ladder(suite, "quick", state_dir=tmp_path)
    assert again["timing"]["reused_pairs"] == 3
    assert again["ratings"] == first["ratings"] and again["per_hand"] == first["per_hand"]
    assert all("kept_from_commit" in p for p in again["pairs"])
    assert [{k: v for k, v in p.items() if k != "kept_from_commit"} for p in again["pairs"]] == first["pairs"]

    monkeypatch.undo()
    damaged = tmp_path / files[0]
    damaged.write_text(damaged.read_text()[:-40])
    other = json.loads((tmp_path / files[1]).read_text())
    other["key"]["deals"] = 5
    (tmp_path / files[1]).write_text(json.dumps(other))
    capsys.readouterr()
    third = lb.rate_ladder(suite, "quick", state_dir=tmp_path)
    err = capsys.readouterr().err
    assert "cannot be read back" in err and "another run's pair" in err
    assert third["timing"]["reused_pairs"] == 1
    assert third["ratings"] == first["ratings"]


def test_the_published_record_takes_rows_and_a_ceiling_measured_apart(tmp_path, monkeypatch, capsys):
    """benchmarks/leaderboard.py --rows-only rates the shipped agents a published record lacks on its scale
    (the row rate_agent gives, marked with its own command and cost) and leaves the ladder as it was; a
    second run has nothing to add; --ceiling-only adds the oracle's row; a missing record is one line."""
    script = load_benchmark("leaderboard")
    suite = tiny_suite(deals=2)
    monkeypatch.setattr(script, "load_suite", lambda name: suite)
    out = tmp_path / "leaderboard-tiny.json"
    base = ["--suite", suite.name, "--quick", "--out", str(out), "--no-progress"]
    missing = script.main([*base, "--rows-only"])
    err = capsys.readouterr().err.strip().splitlines()
    assert missing == 2 and len(err) == 1 and "does not exist" in err[0], err
    assert script.main([*base, "--rows-only", "--ceiling-only"]) == 2

    monkeypatch.setattr(script, "EXTRA_AGENTS", ())
    assert script.main([*base, "--no-ceiling"]) == 0
    before = json.loads(out.read_text())["records"][0]
    assert [r["role"] for r in before["rows"]] == ["reference", "anchor", "reference"]

    monkeypatch.setattr(script, "EXTRA_AGENTS", ("fsearch:worlds=4",))
    assert script.main([*base, "--rows-only"]) == 0
    after = json.loads(out.read_text())["records"][0]
    added = next(r for r in after["rows"] if r["role"] == "rated")
    assert added["agent"] == "fsearch:worlds=4" and "--rows-only" in added["command"]
    assert added["cpu_hours"] >= 0 and set(added["load_average"]) == {"start", "end"} and added["date"]
    assert added["rating"] == rate_agent(suite, "fsearch:worlds=4", "quick")["row"]["rating"]
    assert [r for r in after["rows"] if r["role"] != "rated"] == before["rows"]
    assert after["ladder_pairs"] == before["ladder_pairs"] and after["cpu_hours"] == before["cpu_hours"]
    ranks = [r["rating"]["mean"] for r in after["rows"]]
    assert ranks == sorted(ranks, reverse=True)

    text = out.read_text()
    capsys.readouterr()
    assert script.main([*base, "--rows-only"]) == 0
    assert "already" in capsys.readouterr().out and out.read_text() == text

    summary = "\n".join(load_benchmark("render_results").leaderboard_summary([(out.stem, json.loads(text))]))
    line = next(x for x in summary.splitlines() if x.startswith(f"| {suite.name} |"))
    assert "(rows added)" in line and "| 4 |" in line, line  # three references and the added row

    assert script.main([*base, "--ceiling-only", "--ceiling-deals", "1"]) == 0
    final = json.loads(out.read_text())["records"][0]
    assert final["rows"][0]["role"] == "ceiling" and final["rows"][0]["cheating"] is True
    assert [r for r in final["rows"] if r["role"] != "ceiling"] == after["rows"]

    # the oracle against a best fair agent it has not met on the ladder: played once, then kept
    best = {"agent": "greedy", "rating": {"mean": 1000.0, "lo": 1000.0, "hi": 1000.0}}
    alone = {"spec": "oracle", "references": []}
    state = tmp_path / "state"
    gap, cpu = script.ceiling_gap(suite, alone, best, 2, 1, False, state)
    assert (
        gap["agent"] == "greedy"
        and gap["deals"] == 2
        and [p.name for p in state.iterdir()] == ["oracle__vs__greedy.json"]
    )
    kept, kept_cpu = script.ceiling_gap(suite, alone, best, 2, 1, False, state)
    assert kept == gap and kept_cpu == pytest.approx(cpu, abs=1e-3)


def test_the_full_tier_says_its_cost_before_the_first_game(monkeypatch, capsys):
    """Without --quick, the size of the full tier and its CPU-hours are printed before any game, with --quick offered."""
    import scopa_app.leaderboard as app

    def first_game(*args, **kwargs):
        raise ValueError("the first game")

    monkeypatch.setattr(app, "rate_agent", first_game)
    assert main(["leaderboard", "heuristic", "--no-progress"]) == 2
    err = capsys.readouterr().err.splitlines()
    warning = next(i for i, line in enumerate(err) if line.startswith("the full tier is 120,000 games"))
    assert "CPU-hours" in err[warning] and "--quick plays its first 200 deals" in err[warning], err
    assert err[-1] == "scopa leaderboard: error: the first game" and warning < len(err) - 1, err
    assert main(["leaderboard", "heuristic", "--quick", "--no-progress"]) == 2
    assert "the full tier" not in capsys.readouterr().err, "the quick tier says nothing of the full one"


def test_deals_out_of_range_is_the_only_line(monkeypatch, capsys):
    monkeypatch.setattr(lb, "run_deals", no_games)
    assert main(["leaderboard", "heuristic", "--quick", "--deals", "201", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "scopa leaderboard: error: deals must be between 1 and the quick tier's 200, got 201", err


def test_an_unknown_option_shows_the_subcommands_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["leaderboard", "heuristic", "--players", "3"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: scopa leaderboard ") and "unrecognized arguments: --players 3" in err, err
