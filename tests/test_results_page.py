"""docs/results.md is generated from benchmarks/results/*.json by benchmarks/render_results.py: the page
must be what the script writes now, and every record must say its command, commit, date and load."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path

import pytest
from benchscripts import load_benchmark

from scopa_env.bench.results import REQUIRED_FIELDS, missing_fields, result_record, write_record

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "results.md"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def renderer():
    return load_benchmark("render_results")


def records() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        out += [(path.name, r) for r in data.get("records", [data])]
    return out


def test_page_is_what_the_script_writes(tmp_path):
    out = tmp_path / "results.md"
    assert renderer().main(["--out", str(out)]) == 0
    assert PAGE.read_text() == out.read_text(), (
        "docs/results.md is stale or edited by hand: run python benchmarks/render_results.py"
    )


def test_every_record_says_command_commit_date_and_load():
    assert len(records()) >= 10, "the results files hold the measurements"
    for name, record in records():
        where = f"{name}: {record.get('id', record.get('what'))}"
        assert not missing_fields(record), f"{where} lacks {missing_fields(record)}"
        assert record["commit"] is None or COMMIT.match(record["commit"]), f"{where}: commit is a full git hash"
        assert DATE.match(record["date"]), f"{where}: date is ISO"
        if record["load_average"] is None:
            assert record.get("load_note", "").startswith("not recorded"), f"{where}: a null load says 'not recorded'"
        for row in record["rows"]:
            if row.get("commit") is not None:
                assert COMMIT.match(row["commit"]), f"{where}: a row's commit is a full git hash"
            if row.get("data"):
                assert (ROOT / row["data"].partition("#")[0]).is_file(), f"{where}: {row['data']} exists"


def test_a_record_without_its_fields_is_refused(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"what": "x", "rows": [], "date": "2026-01-01"}))
    with pytest.raises(ValueError, match="lacks command, commit, load_average"):
        renderer().render(tmp_path)
    with pytest.raises(ValueError, match="needs command"):
        write_record({"what": "x", "rows": []}, tmp_path / "out.json")


def test_scopa_bench_json_writes_a_record(tmp_path, monkeypatch):
    import scopa_env.bench.env as bench
    from scopa_app.cli import main

    monkeypatch.setitem(sys.modules, "scopa_env.bench.fast", None)  # the compiled rows: not measured here
    monkeypatch.setattr(
        bench, "run_all", lambda seconds, extra, progress=None, on_row=None: [bench.Row("engine", 10.0, "moves/s", 2.0)]
    )
    out = tmp_path / "bench.json"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["bench", "--seconds", "0.5", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert set(REQUIRED_FIELDS) <= set(record), f"the record has {sorted(record)}"
    assert record["command"] == f"scopa bench --seconds 0.5 --json {out}"
    assert record["commit"] is None or COMMIT.match(record["commit"])
    assert len(record["load_average"]["start"]) == 3 and len(record["load_average"]["end"]) == 3
    assert record["rows"] == [{"benchmark": "engine", "value": 10.0, "unit": "moves/s", "vs_ref": 2.0}]
    page = renderer().render(tmp_path)  # the renderer reads what the tool writes
    assert "`scopa bench --seconds 0.5" in page


def test_result_record_defaults():
    record = result_record("cmd", [{"a": 1}], what="w", commit="0" * 40, date="2026-01-01")
    assert record["columns"] == [["a", "a"]] and record["load_average"] is None


def test_a_titled_bare_record_is_one_short_section(tmp_path):
    """A bare record (no ``records`` list) is its own section, named by its title, not by its long "what"."""
    record = result_record("cmd", [{"a": 1}], what="a long sentence of what was measured", commit="0" * 40)
    record["date"], record["title"] = "2026-01-01", "Short title"
    (tmp_path / "bare.json").write_text(json.dumps(record))
    page = renderer().render(tmp_path)
    assert "## Short title\n" in page and "## a long sentence" not in page
    assert "### Short title" not in page, "the section's heading is not said twice"
    assert "A long sentence of what was measured." in page


def test_leaderboards_at_a_glance_names_the_best_fair_agent_and_the_unpublished_suites(tmp_path):
    rating = {"mean": 1100.0, "lo": 1090.0, "hi": 1110.0}
    rows = [
        {"agent": "oracle (cheating)", "role": "ceiling", "rating": None, "rating_text": "not rated", "command": "c"},
        {"agent": "a", "role": "reference", "rating": rating, "rating_text": "1100 [1090, 1110]"},
        {"agent": "b", "role": "anchor", "rating": {"mean": 1000.0, "lo": 1000.0, "hi": 1000.0}, "rating_text": "1000"},
    ]
    record = result_record("cmd", rows, what="w", commit="1" * 40, date="2026-01-02")
    gap = {"agent": "a", "margin_per_hand": {"mean": 1.5, "lo": 1.4, "hi": 1.6}, "deals": 200}
    gap["win_rate"] = {"mean": 0.9, "lo": 0.88, "hi": 0.92}
    record |= {"title": "Leaderboard standard-2p-v1", "suite": "standard-2p-v1", "tier": "quick", "deals": 200}
    record |= {"cpu_hours": 0.5, "ceiling": {"gap": gap, "cpu_hours": 0.25, "spec": "oracle:noise=0.6"}}
    data = {"title": "Leaderboard: standard-2p-v1", "about": "", "records": [record]}
    (tmp_path / "leaderboard-standard-2p-v1.json").write_text(json.dumps(data))
    page = renderer().render(tmp_path)
    line = next(x for x in page.splitlines() if x.startswith("| standard-2p-v1 |"))
    assert "`a` 1100 [1090, 1110]" in line and "+1.500 [+1.400, +1.600], wins 90.0% [88.0, 92.0]" in line
    assert "0.5 + 0.25 (ceiling)" in line, line
    assert "`oracle:noise=0.6`" in line, "the ceiling's spec says which oracle measured it"
    assert page.index("## Leaderboards at a glance") < page.index("## Leaderboard: standard-2p-v1")
    assert "Not published yet: " in page and "escoba-2p-v1" in page.split("Not published yet: ")[1].split("\n")[0]
