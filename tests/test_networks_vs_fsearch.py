"""benchmarks/networks_vs_fsearch.py: a network alone against the search, game by game, beside its cost."""

from __future__ import annotations

import json
import subprocess

import pytest
from benchscripts import load_benchmark

from scopa_env.bench.results import missing_fields


def test_each_row_is_its_kept_report_beside_its_cost(tmp_path, monkeypatch):
    """A row's margin and deals are its kept report's, its game is the one named, its ms ratio is measured
    against the reference in the same run, and a kept report is not played again (a stopped run resumes)."""
    script = load_benchmark("networks_vs_fsearch")
    out, record_path = tmp_path / "reports", tmp_path / "record.json"
    argv = ["--row", "scopone", "4", "greedy", "2", "--reference", "fsearch:worlds=4", "--timing-positions", "3"]
    argv += ["--out-dir", str(out), "--record", str(record_path)]
    assert script.main(argv) == 0
    (record,) = json.loads(record_path.read_text())["records"]
    assert not missing_fields(record)
    (row,) = record["rows"]
    report = json.loads((out / "scopone-4p-greedy.json").read_text())
    assert report["config"]["players"] == 4 and report["config"]["rules"] == "scopone"
    assert row["game"] == "scopone, 4 players" and row["deals"] == report["deals"] == 2
    assert row["margin"] == report["agents"][0]["margin_per_hand"]["mean"]
    assert row["ms"] > 0 and row["ratio_ms"] < 1, "greedy should cost less than a 4-world search"
    assert row["within_budget"] == (row["ms"] <= script.BUDGET_MS)

    run = subprocess.run

    def no_games(command, *args, **kwargs):
        assert "scopa_app.cli" not in command, f"a kept report was played again: {command}"
        return run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", no_games)
    assert script.main(argv) == 0
    assert json.loads(record_path.read_text())["records"][0]["rows"][0]["margin"] == pytest.approx(row["margin"])


def test_another_record_file_names_its_own_title_and_agents(tmp_path):
    """A record of agents that are not networks alone (a network with a search) goes to its own file
    under its own title, and its 'what' says what the agents are."""
    script = load_benchmark("networks_vs_fsearch")
    record_path = tmp_path / "hybrid.json"
    argv = ["--row", "standard", "2", "greedy", "2", "--reference", "fsearch:worlds=4", "--timing-positions", "2"]
    argv += ["--out-dir", str(tmp_path / "reports"), "--record", str(record_path)]
    argv += ["--title", "A network and an endgame solver", "--about", "Issue 48.", "--agent-kind", "a hybrid agent"]
    assert script.main(argv) == 0
    data = json.loads(record_path.read_text())
    assert data["title"] == "A network and an endgame solver" and data["about"] == "Issue 48."
    assert data["records"][0]["what"].startswith("a hybrid agent against fsearch:worlds=4")
    assert "--title 'A network and an endgame solver'" in data["records"][0]["command"], "a command to copy"
    assert script.main(argv[: argv.index("--title")]) == 0
    assert json.loads(record_path.read_text())["title"] == script.TITLE


def test_a_bad_row_is_refused_in_one_line(capsys):
    script = load_benchmark("networks_vs_fsearch")
    with pytest.raises(SystemExit):
        script.main(["--row", "scopone", "four", "greedy", "2"])
    assert "PLAYERS and PAIRS must be positive integers" in capsys.readouterr().err
