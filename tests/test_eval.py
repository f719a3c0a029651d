"""Evaluation harness: duplicate deals, statistics, outputs, workers, forfeits, tournaments."""

from __future__ import annotations

import argparse
import csv
import json
import math

import numpy as np
import pytest

from agents.base import Agent
from agents.evaluate import (
    Match,
    bradley_terry,
    deal_seed,
    evaluate,
    hand_outcomes,
    play_game,
    ratio_ci,
    run_deals,
    summarize,
    tournament,
    wilson_ci,
)
from agents.random_agent import RandomAgent
from agents.registry import register_agent_factory
from scopa_app.evaluate import add_eval_parser, add_tournament_parser
from scopa_env.engine.game import Game
from scopa_env.engine.rules import Move


class RecordingAgent(RandomAgent):
    """A random agent that remembers the first hand it was dealt in each game."""

    def __init__(self, seed=None) -> None:
        super().__init__(seed)
        self.first_hands: list[int] = []
        self._fresh = True

    def reset(self, seed=None) -> None:
        super().reset(seed)
        self._fresh = True

    def act(self, view):
        if self._fresh:
            self.first_hands.append(view.hand)
            self._fresh = False
        return super().act(view)


class IllegalAgent(Agent):
    """Plays a card from the table: always illegal."""

    def act(self, view):
        table = view.table
        return Move((table & -table).bit_length() - 1 if table else (view.unseen & -view.unseen).bit_length() - 1)


class InterruptingAgent(RandomAgent):
    """Presses Ctrl-C after a number of moves."""

    moves_left = 200

    def act(self, view):
        InterruptingAgent.moves_left -= 1
        if InterruptingAgent.moves_left < 0:
            raise KeyboardInterrupt
        return super().act(view)


class SleepyAgent(RandomAgent):
    """Takes a second a move: a deal of it lasts over a minute."""

    def act(self, view):
        import time

        time.sleep(1.0)
        return super().act(view)


register_agent_factory("test-illegal", lambda arg, seed=None, **kw: IllegalAgent(seed))
register_agent_factory("test-sleepy", lambda arg, seed=None, **kw: SleepyAgent(seed))
register_agent_factory("test-interrupt", lambda arg, seed=None, **kw: InterruptingAgent(seed))


def _stats(report: dict) -> dict:
    """The report without timings (those differ between runs)."""
    return {k: v for k, v in report.items() if "seconds" not in k}


# --- duplicate deals ---------------------------------------------------------------


def test_lineups_rotate_every_side():
    """Issue 6: every deal is played with the seats swapped (more sides: every rotation)."""
    assert Match(("A", "B")).lineups() == [(0, 1), (1, 0)]
    assert Match(("A", "B"), num_players=3).lineups() == [(0, 1, 0), (0, 0, 1), (1, 0, 0)]
    assert Match(("A", "B"), num_players=4).lineups() == [(0, 1), (1, 0)], "teams: two sides"


def test_duplicate_games_swap_the_seats_on_the_same_cards():
    """Rotation 1 deals the cards of rotation 0, with the agents in swapped seats."""
    match = Match(("random", "greedy"), seed=5)
    a, b = RecordingAgent(0), RecordingAgent(1)
    first = play_game(match, deal=3, rotation=0, agents=[a, b])
    second = play_game(match, deal=3, rotation=1, agents=[b, a])
    assert first["lineup"] == [0, 1] and second["lineup"] == [1, 0]
    assert a.first_hands[0] == b.first_hands[1], "seat 0's first hand must be the same in both games"
    assert b.first_hands[0] == a.first_hands[1], "seat 1's first hand must be the same in both games"
    dealt = Game(2, seed=deal_seed(5, 3))
    assert dealt.hands[0] == a.first_hands[0], "the deal comes from the deal seed"


def test_records_count_both_games_of_a_deal():
    match = Match(("greedy", "random"), seed=1)
    run = run_deals(match, 3, progress=False)
    assert [len(records) for records in run.deals] == [2, 2, 2]
    report = summarize(match, run)
    assert report["games"] == 6 and report["deals"] == 3
    a, b = report["agents"]
    assert a["games"] == b["games"] == 6
    assert a["wins"] + b["wins"] == 6, "every game to the target has one winner"
    assert a["margin_per_hand"]["mean"] == pytest.approx(-b["margin_per_hand"]["mean"]), "two sides: margins mirror"


# --- statistics --------------------------------------------------------------------


def test_ratio_ci_is_the_t_free_mean_interval_for_unit_weights():
    x = np.array([0.5, 1.5, -1.0, 2.0, 0.0, 1.0])
    ci = ratio_ci(x, np.ones_like(x))
    half = 1.959963984540054 * x.std(ddof=1) / math.sqrt(len(x))
    assert ci["mean"] == pytest.approx(x.mean())
    assert (ci["lo"], ci["hi"]) == pytest.approx((x.mean() - half, x.mean() + half))


def test_ratio_ci_clusters_by_deal():
    """Sum of margins over sum of hands; a cluster's size weighs its residual."""
    num, den = [3.0, 1.0, -2.0], [4.0, 2.0, 4.0]
    ci = ratio_ci(num, den)
    mean = 2.0 / 10.0
    resid = np.array(num) - mean * np.array(den)
    se = math.sqrt(3 / 2 * (resid**2).sum()) / 10.0
    assert ci["mean"] == pytest.approx(mean)
    assert ci["hi"] - ci["mean"] == pytest.approx(1.959963984540054 * se)


def test_wilson_interval_known_value():
    ci = wilson_ci(50, 100)
    assert (ci["lo"], ci["hi"]) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert wilson_ci(0, 10)["lo"] == pytest.approx(0.0, abs=1e-12)


def test_hand_outcomes_distinguish_ties():
    """pagat: 'In case of a tie for most cards no one scores this point'."""
    row = {"cards": 0, "coins": 1, "settebello": 0, "primiera": 0, "num_cards": 20, "num_coins": 6}
    other = {"cards": 0, "coins": 0, "settebello": 1, "primiera": 1, "num_cards": 20, "num_coins": 4}
    row["primiera_value"], other["primiera_value"] = 70, 78
    out = hand_outcomes([row, other], 0)
    assert out == {"cards": "tied", "coins": "won", "primiera": "lost", "settebello": "lost"}


def test_duplicate_interval_is_tighter_than_plain():
    """Duplicate deals cancel card luck: the clustered margin CI is narrower than the per-game one."""
    report = evaluate(["heuristic", "greedy"], games=40, seed=2)
    a = report["agents"][0]
    dup = a["margin_per_hand"]["hi"] - a["margin_per_hand"]["lo"]
    plain = a["margin_per_hand_plain"]["hi"] - a["margin_per_hand_plain"]["lo"]
    assert dup < plain, f"duplicate CI width {dup:.3f} should be below the plain {plain:.3f}"


# --- reproducibility ------------------------------------------------------------


def test_same_numbers_for_any_worker_count():
    one = evaluate(["greedy", "random"], games=8, seed=11, workers=1)
    two = evaluate(["greedy", "random"], games=8, seed=11, workers=2)
    assert json.dumps(_stats(one), default=str) == json.dumps(_stats(two), default=str)
    other_seed = evaluate(["greedy", "random"], games=8, seed=12, workers=1)
    assert _stats(other_seed) != _stats(one), "the seed must matter"


# --- bad agents and interruption ------------------------------------------------------


def test_illegal_move_forfeits_the_game():
    """An agent returning an illegal move is reported with the state and loses that game."""
    report = evaluate(["test-illegal:x", "random"], games=2, seed=0)
    bad, good = report["agents"]
    assert bad["wins"] == 0 and good["wins"] == 4
    assert bad["forfeits"] == 4 and len(report["forfeits"]) == 4
    f = report["forfeits"][0]
    assert "illegal move" in f["error"] and "table" in f["state"] and f["agent"] == "test-illegal:x"


def test_interrupt_keeps_finished_deals():
    """Ctrl-C during a run returns the deals finished so far, flagged as interrupted."""
    InterruptingAgent.moves_left = 150
    match = Match(("test-interrupt:x", "random"), seed=0)
    run = run_deals(match, 50, progress=False)
    assert run.interrupted
    assert 0 < len(run.deals) < 50
    assert all(len(records) == 2 for records in run.deals), "only whole deals are kept"


def test_a_stopped_run_of_workers_ends_them_within_seconds_and_says_so(capsys):
    """Stopping a run of slow agents on worker processes (Ctrl-C, or the time limit, which takes the same
    path) does not wait for the deals in progress, each over a minute: it says it is stopping, gives them
    a grace of a few seconds, then ends the workers."""
    from agents.matches import STOP_GRACE

    match = Match(("test-sleepy:x", "random"), seed=0)
    run = run_deals(match, 4, workers=2, progress=False, time_limit=1.0)
    assert run.interrupted and run.deals == [], "no deal of a second-a-move agent finishes in 3 s"
    assert run.wall_seconds < 1.0 + STOP_GRACE + 20, f"the run took {run.wall_seconds:.0f} s to stop"
    assert "stopping: the deals in progress get" in capsys.readouterr().err


# --- outputs and CLI ---------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scopa")
    sub = parser.add_subparsers(dest="command")
    add_eval_parser(sub)
    add_tournament_parser(sub)
    return parser


def test_eval_cli_writes_json_and_csv(tmp_path, capsys):
    args = _parser().parse_args(
        ["eval", "greedy", "random", "--games", "4", "--seed", "3", "--no-progress"]
        + ["--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "margin" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert [a["agent"] for a in data["agents"]] == ["greedy", "random"]
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert [r["agent"] for r in rows] == ["greedy", "random"]
    assert float(rows[0]["margin_per_hand"]) == pytest.approx(data["agents"][0]["margin_per_hand"]["mean"])
    for column in ("cards_won", "cards_tied", "coins_lost", "settebello_won", "primiera_tied", "scope_per_hand"):
        assert column in rows[0], f"CSV lacks {column}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "greedy", "grredy"], "known agents: random, greedy, heuristic, search"),
        (["eval", "greedy", "random", "--players", "8"], "num_players"),
        (["eval", "greedy", "nosuchprefix:model.pt"], "unknown agent"),
        (["tournament", "greedy"], "at least two"),
    ],
)
def test_bad_input_is_one_line(argv, message, capsys):
    args = _parser().parse_args(argv + ["--no-progress"])
    assert args.func(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err, f"expected a one-line error with {message!r}, got {err!r}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["eval", "greedy", "random", "--rules", "nope"],
            "argument --rules: unknown rules preset 'nope'; known presets",
        ),
        (["eval", "greedy", "random", "--players", "5"], "argument --players: must be one of 2, 3, 4, 6, 8, got '5'"),
        (["tournament", "a", "b", "--players", "two"], "argument --players: must be one of"),
    ],
)
def test_bad_game_options_fail_while_parsing(argv, message, capsys):
    """--rules and --players are typed by scopa_app/args.py, as in every other subcommand: the error
    names the option and the problem, before any agent is built."""
    with pytest.raises(SystemExit) as exit_info:
        _parser().parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def test_tournament_ratings_and_chart(tmp_path):
    result = tournament(["random", "greedy", "heuristic"], games=6, seed=1, bootstrap=50)
    ratings = {r["agent"]: r for r in result["ratings"]}
    assert ratings["random"]["elo"] < ratings["greedy"]["elo"], "greedy must out-rate random"
    for r in result["ratings"]:
        assert r["lo"] <= r["elo"] <= r["hi"]
    assert sum(r["elo"] for r in result["ratings"]) == pytest.approx(0.0, abs=1e-6)
    args = _parser().parse_args(
        ["tournament", "random", "greedy", "--games", "3", "--no-progress", "--png", str(tmp_path / "t.png")]
    )
    assert args.func(args) == 0
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bradley_terry_recovers_strengths():
    """With wins drawn from known strengths the fit recovers their order and spacing."""
    theta = np.array([-1.0, 0.0, 1.0])
    games = 4000
    wins = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            if i != j:
                wins[i, j] = games / (1 + math.exp(theta[j] - theta[i]))
    fit = bradley_terry(wins, prior=0.0)
    assert fit == pytest.approx(theta, abs=1e-3)
    assert bradley_terry(np.array([[0, 5], [5, 0]])) == pytest.approx([0.0, 0.0])


# --- other table sizes -------------------------------------------------------------


@pytest.mark.parametrize("players", [3, 4, 6])
def test_eval_runs_for_more_players(players):
    """Small-budget smoke test: every rotation played, margins of teams mirror."""
    report = evaluate(["search:ply_budget=100,min_worlds=1,max_worlds=2", "heuristic"], games=1, players=players)
    rotations = report["config"]["rotations"]
    assert report["games"] == rotations == (3 if players == 3 else 2)
    assert all(a["hands"] > 0 for a in report["agents"])
    assert not report["forfeits"]
