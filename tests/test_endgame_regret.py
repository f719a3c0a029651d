"""benchmarks/endgame_regret.py: the regret of agents against the exact solve of the last cards."""

from __future__ import annotations

import json

import numpy as np
import pytest
from benchscripts import load_benchmark

probe = load_benchmark("endgame_regret")


def test_the_solver_has_no_regret_and_the_baselines_some(tmp_path, capsys):
    """The exact solve is the yardstick, so fsearch (the same solve there) never regrets a move; greedy,
    which ignores what the other player can do next, regrets some; every agent is scored on the same
    positions; the table is written as JSON."""
    out = tmp_path / "regret.json"
    assert probe.main(["fsearch", "greedy", "heuristic", "--games", "60", "--boot", "50", "--json", str(out)]) == 0
    rows = {r["agent"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["fsearch"]["regret"] == 0.0 and rows["fsearch"]["best_share"] == 1.0
    assert rows["greedy"]["regret"] > 0 and rows["greedy"]["best_share"] < 1.0
    assert rows["greedy"]["regret_lo"] <= rows["greedy"]["regret"] <= rows["greedy"]["regret_hi"]
    assert len({r["positions"] for r in rows.values()}) == 1 and rows["fsearch"]["positions"] > 60
    for row in rows.values():  # the breakdown by cards left covers every position, at most six cards left
        parts = row["by_cards_left"]
        assert sum(p["positions"] for p in parts.values()) == row["positions"] and max(map(int, parts)) <= 6
        mean = sum(p["regret"] * p["positions"] for p in parts.values()) / row["positions"]
        assert mean == pytest.approx(row["regret"])
    assert "greedy" in capsys.readouterr().out


def test_a_position_regret_is_the_exact_gap():
    """An agent's regret at a position is the best move's exact value minus its move's: per position, the
    regrets of two agents differ by the exact values of their moves, and a hand's positions are all in
    its last round (at most 6 cards left: at most six decisions, three per player)."""
    data = probe.regrets(["fsearch", "greedy"], 40, 3, "heuristic", "standard", 2)
    assert (data["fsearch"] == 0).all() and (data["greedy"] >= 0).all()
    assert np.bincount(data["hand"], minlength=40).max() <= 6


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["zoo:scopone-4p-v4"], "trained for 4 players"),
        (["mystery"], "not 'mystery'"),
        (["greedy", "--driver", "fsearch"], "--driver must be one of"),
        (["greedy", "--games", "0"], "must be positive"),
    ],
)
def test_bad_input_is_one_line(argv, message):
    with pytest.raises(SystemExit, match=message):
        probe.main(argv)
