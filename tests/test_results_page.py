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


# --- the summary ---------------------------------------------------------------------------------------

SUMMARY_MAX_LINES = 40


def summary_of(page: str) -> str:
    """The page's first ``## `` section, heading included."""
    first = page.split("\n## ", 1)[1]
    return "## " + first.split("\n## ", 1)[0].rstrip("\n")


def summary_rows(page: str) -> dict[str, str]:
    """The summary table's rows: what -> measured."""
    rows = [line.split(" | ") for line in summary_of(page).splitlines() if line.startswith("| ")][1:]  # no header
    return {cells[0].removeprefix("| "): cells[1] for cells in rows}


def test_the_page_opens_with_a_one_screen_summary_linked_to_its_sections():
    page = PAGE.read_text()
    assert re.findall(r"^## (.+)$", page, re.M)[0] == "Summary", "the first section is the summary"
    section = summary_of(page)
    assert len(section.splitlines()) <= SUMMARY_MAX_LINES, f"the summary is {len(section.splitlines())} lines"
    rows = summary_rows(page)
    assert len(rows) >= 6, f"the summary's headline rows: {sorted(rows)}"
    ids = set(renderer().heading_ids(page.splitlines(), set()).values())
    links = re.findall(r"\]\(#([^)]+)\)", section)
    assert len(links) == len(rows), "every row links to its section"
    for anchor in links:
        assert anchor in ids, f"the summary links to #{anchor}, which no heading of the page has"


def test_heading_ids_are_the_ones_mkdocs_makes():
    """The renderer computes the summary's anchors as Python-Markdown's toc extension (mkdocs) does."""
    markdown = pytest.importorskip("markdown")
    page = PAGE.read_text()
    html = markdown.Markdown(extensions=["toc", "tables"]).convert(page)
    made = re.findall(r'<h\d id="([^"]+)"', html)
    assert list(renderer().heading_ids(page.splitlines(), set()).values()) == made


def copy_results(tmp_path: Path, leave_out: tuple[str, ...] = ()) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for path in RESULTS.glob("*.json"):
        if path.stem not in leave_out:
            (folder / path.name).write_text(path.read_text())
    return folder


def edit(folder: Path, stem: str, change) -> None:
    path = folder / f"{stem}.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def row_where(record: dict, **want) -> dict:
    return next(r for r in record["rows"] if all(str(r.get(k, "")).startswith(v) for k, v in want.items()))


def test_each_summary_number_is_read_from_its_record(tmp_path):
    """Change each source value in a copy of the results and see the summary say the new value."""
    page = renderer().render(RESULTS)
    before = summary_of(page)
    for shown in ("339,900 moves/s", "3,820,000 moves/s", "`fsearch` 1241 [1217, 1266]", "+1.943 [+1.849, +2.036]"):
        assert shown in before, f"{shown!r} is in the summary"
    folder = copy_results(tmp_path)

    def bench(data):
        record = next(r for r in data["records"] if r["id"] == "scopa-bench")
        row_where(record, benchmark="Python engine, random legal play")["value"] = 123457
        row_where(record, benchmark="compiled core, random legal play")["value"] = 7654321
        next(r for r in record["rows"] if 'floor, "move" mode' in r["benchmark"])["value"] = 0.77
        next(r for r in record["rows"] if 'floor, "select" mode' in r["benchmark"])["value"] = 0.66

    def leaderboard(data):
        record = data["records"][0]
        row = row_where(record, agent="fsearch")
        row["rating"], row["rating_text"] = {"mean": 1999.0, "lo": 1998.0, "hi": 2000.0}, "1999 [1998, 2000]"
        record["ceiling"]["gap"]["margin_per_hand"] = {"mean": 9.876, "lo": 9.5, "hi": 10.25}

    def strength(data):
        record = next(r for r in data["records"] if r.get("id") == "zoo")
        row = row_where(record, agent="zoo:standard-2p", opponent="heuristic")
        del row["data"]  # the values in the row itself, in place of the model card's
        row |= {"deals": 4321, "margin": {"mean": 0.123, "lo": 0.1, "hi": 0.146}}

    def per_ms(data):
        record = data["records"][0]
        row_where(record, agent="fsearch (the reference)")["ms"] = 5.4321
        row = row_where(record, agent="zoo:standard-2p")
        row |= {"ms": 0.1234, "margin": 0.5, "margin_text": "+0.500 [+0.400, +0.600]"}

    for stem, change in [
        ("bench", bench),
        ("leaderboard-standard-2p-v1", leaderboard),
        ("strength", strength),
        ("strength_per_ms", per_ms),
    ]:
        edit(folder, stem, change)
    after = summary_of(renderer().render(folder))
    for shown in (
        "123,457 moves/s",
        "7,654,321 moves/s",
        '0.77 in "move" mode, 0.66 in "select" mode',
        "`fsearch` 1999 [1998, 2000]",
        "+9.876 [+9.500, +10.250] points per hand above `fsearch`",
        "+0.123 [+0.100, +0.146] points per hand, 4,321 deal pairs",
        "`fsearch` 5.43 ms per decision",
        "`zoo:standard-2p`, 0.12 ms at +0.500 [+0.400, +0.600]",
    ):
        assert shown in after, f"{shown!r} is not in the summary:\n{after}"
    (per_ms_record,) = json.loads((RESULTS / "strength_per_ms.json").read_text())["records"]
    old_ref = f"{row_where(per_ms_record, agent='fsearch (the reference)')['ms']:.2f} ms"
    strongest = max((r for r in per_ms_record["rows"] if r["family"] == "network"), key=lambda r: r["margin"])
    old_ms = f"`{strongest['agent']}`, {strongest['ms']:.2f} ms"  # the strongest network alone, with its agent
    for old in ("339,900", "3,820,000", "1241 [1217, 1266]", "+1.943", "+0.454", old_ref, old_ms):
        assert old in before and old not in after, f"{old!r} stays in the summary after its record changed"


def test_a_networks_vs_fsearch_record_adds_its_row(tmp_path):
    folder = copy_results(tmp_path, leave_out=("networks_vs_fsearch",))
    row = {"game": "scopone, 4 players", "agent": "zoo:scopone-4p", "deals": 10, "ms": 0.4567}
    row |= {"margin_text": "+0.012 [-0.034, +0.058]", "win_text": "51.0 [49.0, 53.0]%", "ratio_ms": 0.06}
    record = result_record("python benchmarks/networks_vs_fsearch.py", [row], what="w", commit="2" * 40)
    record["date"] = "2026-01-03"
    data = {"title": "Networks alone against the compiled search", "about": "", "records": [record]}
    (folder / "networks_vs_fsearch.json").write_text(json.dumps(data))
    page = renderer().render(folder)
    line = next(x for x in summary_of(page).splitlines() if "against `fsearch`" in x and "zoo:scopone-4p" in x)
    assert "+0.012 [-0.034, +0.058] at 0.46 ms" in line
    assert "](#networks-alone-against-the-compiled-search)" in line


def test_a_network_endgame_record_adds_its_row(tmp_path):
    folder = copy_results(tmp_path, leave_out=("network_endgame",))
    assert "with the exact endgame" not in summary_of(renderer().render(folder))
    row = {"game": "standard, 2 players", "agent": "netsearch:zoo:standard-2p,weight=1,worlds=1", "deals": 10}
    row |= {"margin_text": "-0.091 [-0.125, -0.058]", "win_text": "46.7 [45.4, 47.9]%", "ms": 0.5512, "ratio_ms": 0.1}
    record = result_record("python benchmarks/networks_vs_fsearch.py", [row], what="w", commit="2" * 40)
    data = {"title": "The network with an exact endgame, standard game", "about": "", "records": [record]}
    (folder / "network_endgame.json").write_text(json.dumps(data))
    line = next(x for x in summary_of(renderer().render(folder)).splitlines() if "with the exact endgame" in x)
    assert "-0.091 [-0.125, -0.058] at 0.55 ms" in line
    assert "](#the-network-with-an-exact-endgame-standard-game)" in line


@pytest.mark.parametrize(
    "stem, gone",
    [
        ("bench", ("moves/s", "AEC env")),
        ("leaderboard-standard-2p-v1", ("Strongest agents", "oracle ceiling")),
        ("strength", ("against `heuristic`",)),
        ("strength_per_ms", ("Strength per millisecond",)),
    ],
)
def test_a_missing_results_file_leaves_its_summary_rows_out(tmp_path, stem, gone):
    page = renderer().render(copy_results(tmp_path, leave_out=(stem,)))
    section = summary_of(page)
    assert section.startswith("## Summary")
    for words in gone:
        assert words not in section, f"{words!r} stays in the summary without {stem}.json"
    assert len(summary_rows(page)) >= 2, "the other rows stay"


def test_no_headline_record_means_no_summary(tmp_path):
    record = result_record("cmd", [{"a": 1}], what="w", commit="0" * 40, date="2026-01-01")
    (tmp_path / "other.json").write_text(json.dumps({"title": "Other", "about": "", "records": [record]}))
    page = renderer().render(tmp_path)
    assert "## Summary" not in page and "## Other" in page


def test_the_lower_bound_note_shows_only_while_a_suite_has_the_plain_oracle(tmp_path):
    """Every suite measured with the ceiling spec: no note. A suite whose ceiling is still the plain
    `oracle` brings back the note that it is a lower bound."""
    folder = copy_results(tmp_path)
    note = "the plain `oracle`, measured before the noisy one became the ceiling, is a lower bound"
    page = renderer().render(folder)
    glance = page.split("## Leaderboards at a glance", 1)[1].split("\n## ", 1)[0]
    assert note not in glance.replace("\n", " ")
    path = folder / "leaderboard-scopone-scientifico-v1.json"
    data = json.loads(path.read_text())
    data["records"][0]["ceiling"]["spec"] = "oracle"
    path.write_text(json.dumps(data))
    glance = renderer().render(folder).split("## Leaderboards at a glance", 1)[1].split("\n## ", 1)[0]
    assert note in glance.replace("\n", " ")
