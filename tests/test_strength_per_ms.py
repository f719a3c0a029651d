"""benchmarks/strength_per_ms.py: each agent's margin against one reference beside its CPU ms per decision."""

from __future__ import annotations

import json
import subprocess

import pytest
from benchscripts import load_benchmark

from scopa_env.bench.results import missing_fields


def test_the_record_puts_each_margin_beside_its_cost_and_keeps_the_reports(tmp_path, monkeypatch):
    """Every row's margin is its kept report's, its ms ratio is measured against the reference's in the
    same run, the reference row is its self-match (0 by construction), and a kept report is not played
    again (a stopped run resumes)."""
    script = load_benchmark("strength_per_ms")
    out, record_path, plot = tmp_path / "reports", tmp_path / "record.json", tmp_path / "chart.png"
    argv = ["--agents", "greedy", "fsearch:worlds=4", "--reference", "fsearch:worlds=8", "--pairs", "2"]
    argv += ["--timing-positions", "3", "--out-dir", str(out), "--record", str(record_path), "--plot", str(plot)]
    assert script.main(argv) == 0
    (record,) = json.loads(record_path.read_text())["records"]
    assert not missing_fields(record) and plot.stat().st_size > 0
    rows = {row["agent"]: row for row in record["rows"]}
    reference = rows["fsearch:worlds=8 (the reference)"]
    assert reference["margin"] == 0.0 and reference["ratio_ms"] == 1.0 and reference["ms"] > 0
    for spec in ("greedy", "fsearch:worlds=4"):
        report = json.loads((out / f"{script.slug(spec)}.json").read_text())
        margin = report["agents"][0]["margin_per_hand"]
        assert rows[spec]["margin"] == margin["mean"] and rows[spec]["deals"] == report["deals"] == 2
        assert rows[spec]["ratio_ms"] == pytest.approx(rows[spec]["ms"] / reference["ms"])
    assert rows["greedy"]["ms"] < reference["ms"], "greedy should cost less than an 8-world search"

    run = subprocess.run

    def no_games(command, *args, **kwargs):
        assert "scopa_app.cli" not in command, f"a kept report was played again: {command}"
        return run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", no_games)
    assert script.main(argv) == 0  # every report is kept: nothing is played
