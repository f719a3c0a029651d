"""benchmarks/soak.py: a tiny run finds nothing on sound engines, finds a planted violation in
each engine, and writes a results record that benchmarks/render_results.py can read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchscripts import load_benchmark

from scopa_env.bench.results import missing_fields

ROOT = Path(__file__).resolve().parent.parent
PRESETS = "standard,scopa_bazzica,chiamarsi_fuori"
"""Plain play, declarations (their points outside the hand totals) and claims (hands cut short)."""


def soak():
    return load_benchmark("soak")


def run(tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "soak.json"
    rc = soak().main(["--games", "60", "--python-games", "12", "--presets", PRESETS, "--out", str(out), *extra])
    return rc, json.loads(out.read_text())["records"][0]


def test_a_tiny_soak_finds_no_violation_and_writes_its_record(tmp_path):
    rc, record = run(tmp_path)
    assert rc == 0 and record["totals"]["violations"] == 0, record["violations_found"]
    assert not missing_fields(record), missing_fields(record)
    assert set(record["load_average"]) == {"start", "end"} and record["machine"] and record["command"]
    rows = {(r["preset"], r["players"]): r for r in record["rows"]}
    assert set(rows) == {("standard", n) for n in (2, 3, 4, 6)} | {("scopa_bazzica", 2)} | {
        ("chiamarsi_fuori", n) for n in (2, 4, 6)
    }
    for key, row in rows.items():
        assert row["compiled_games"] >= 60 // len(rows) and row["python_games"] >= 1, f"{key}: {row}"
        assert row["compiled_hands"] >= row["compiled_games"], f"{key}: a game has at least one hand"


@pytest.mark.parametrize("plant", ["cards", "score"])
def test_the_soak_finds_a_planted_violation_in_each_engine(tmp_path, plant):
    """--plant corrupts one state per engine (a card in two places; a point no hand awarded)."""
    rc, record = run(tmp_path, "--plant", plant)
    assert rc == 1 and record["totals"]["violations"] > 0, f"the planted {plant} violation went unseen"
    found = {(v["engine"], v["kind"]) for v in record["violations_found"]}
    assert {("core", plant), ("engine", plant)} <= found, found
