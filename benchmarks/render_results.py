"""Write docs/results.md from the measurement records in benchmarks/results/*.json.

    python benchmarks/render_results.py                 # rewrite docs/results.md
    python benchmarks/render_results.py --out PATH      # write elsewhere (tests/test_results_page.py)

Each results file is ``{"title", "about", "records": [...]}`` (or one bare record, as
``scopa bench --json PATH`` writes it); a record's fields are described in
scopa_env/bench/results.py. Every table comes with the command that made it, the commit it
was measured at, the date and the machine's load ("not recorded" where nobody wrote it down).

A row may carry its own ``command``, ``commit``, ``date`` or ``load_average`` where it was
measured apart from the rest of its table, and a ``data`` link to the full report it comes
from (``docs/data/.../*.json``, an evaluation report; ``train/zoo/NAME/card.json#OPPONENT``,
a zoo model card): its deals, hands, win rate and margin are then read from that file rather
than copied. The output depends on the JSON files alone (no dates, no randomness), so a test
can regenerate it and compare.

The page opens with a one-screen ``## Summary`` (:func:`summary`): the headline numbers, each read
from its record and linked to the section below that holds it; a row whose file or record is absent
is left out.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scopa_env.bench.results import missing_fields

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
OUT = ROOT / "docs" / "results.md"
ORDER = ("bench", "strength", "training", "openspiel")
"""Files shown first, in this order; any other file follows in name order."""
ROW_SOURCE_KEYS = ("command", "commit", "date", "load_average", "data")
SHORT = 7


# --- reading -----------------------------------------------------------------------------------


def load_files(results: Path = RESULTS) -> list[tuple[str, dict[str, Any]]]:
    """``(stem, file)`` for every results file, in page order; a bare record becomes a one-record file."""
    paths = sorted(
        results.glob("*.json"), key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else len(ORDER), p.stem)
    )
    out = []
    for path in paths:
        data = json.loads(path.read_text())
        if "records" not in data:
            # A bare record's section is named by its title (its long "what" is the sentence below it).
            data = {"title": data.get("title") or data.get("what", path.stem), "about": "", "records": [data]}
        for i, record in enumerate(data["records"]):
            missing = missing_fields(record)
            if missing:
                raise ValueError(f"{path.name}: record {i} ({record.get('id', '?')}) lacks {', '.join(missing)}")
        out.append((path.stem, data))
    return out


def linked_values(link: str, root: Path = ROOT) -> dict[str, Any]:
    """Deals, hands, win rate and margin of a row's ``data`` link, read from the linked report."""
    path, _, opponent = link.partition("#")
    data = json.loads((root / path).read_text())
    if "results" in data:  # a zoo model card: one result per opponent
        found = [r for r in data["results"] if r["opponent"] == opponent]
        if len(found) != 1:
            raise ValueError(f"{path}: no single result against {opponent!r}")
        r = found[0]
        return {
            "deals": r["deal_pairs"],
            "win_rate": {"mean": r["win_rate"], "lo": r["win_rate_lo"], "hi": r["win_rate_hi"]},
            "margin": {"mean": r["margin"], "lo": r["margin_lo"], "hi": r["margin_hi"]},
        }
    first = data["agents"][0]  # an evaluation report (agents.evaluate): the first agent's side
    return {
        "deals": data["deals"],
        "hands": data["hands"],
        "win_rate": {k: first["win_rate"][k] for k in ("mean", "lo", "hi")},
        "margin": {k: first["margin_per_hand"][k] for k in ("mean", "lo", "hi")},
    }


# --- formatting --------------------------------------------------------------------------------


def number(v: float | int) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a == 0 or a >= 1e-3:
        return f"{v:.4g}"
    return f"{v:.6f}".rstrip("0")


def cell(key: str, value: Any) -> str:
    """One table cell: CIs as ``+0.410 [+0.396, +0.424]``, win rates in percent, numbers grouped."""
    if value is None or value == "":
        return ""
    percent = key.startswith("win_rate")
    if isinstance(value, dict) and "mean" in value:
        if percent:
            d = value.get("digits", 1)
            return f"{100 * value['mean']:.{d}f}% [{100 * value['lo']:.{d}f}, {100 * value['hi']:.{d}f}]"
        d = value.get("digits", 3)
        return f"{value['mean']:+.{d}f} [{value['lo']:+.{d}f}, {value['hi']:+.{d}f}]"
    if percent and isinstance(value, float):
        return f"{100 * value:.1f}%"
    if isinstance(value, (int, float)):
        return number(value)
    return str(value).replace("|", "\\|")


def load_text(load: Any, note: str | None = None) -> str:
    if load is None:
        text = "not recorded"
        return note if note and note.startswith("not recorded") else text + (f" ({note})" if note else "")
    if "start" in load:

        def show(x):
            return ", ".join(number(v) for v in x) if isinstance(x, list) else number(x)

        text = f"{show(load['start'])} at the start, {show(load['end'])} at the end"
    else:
        text = f"{number(load['min'])} to {number(load['max'])}"
    return text + (f" ({note})" if note else "")


def commit_text(commit: str | None) -> str:
    return f"`{commit[:SHORT]}`" if commit else "not recorded"


def doc_link(path: str) -> str:
    """A repository path as the page shows it: as code, not a link (the site leaves docs/data/ out)."""
    return f"`{path}`"


def render_record(record: dict[str, Any], root: Path = ROOT, heading: bool = True) -> list[str]:
    """A record's lines: its heading (unless ``heading`` is false: the section already says it), what it
    measures, its command, commit, date and load, its table, facts and figures."""
    rows = []
    for row in record["rows"]:
        row = dict(row)
        if row.get("data"):
            for k, v in linked_values(row["data"], root).items():
                row.setdefault(k, v)
        rows.append(row)
    columns = record.get("columns") or [[k, k] for k in (rows[0] if rows else {})]
    apart = any(any(k in row for k in ROW_SOURCE_KEYS) for row in rows)
    what = record["what"][0].upper() + record["what"][1:]
    if not heading:
        lines = [f"{what}.", ""]
    elif record.get("title"):
        lines = [f"### {record['title']}", "", f"{what}.", ""]
    else:
        lines = [f"### {what}", ""]
    command = f"`{record['command']}`" if record["command"] else "not recorded"
    if record.get("command_note"):
        command += f" ({record['command_note']})"
    lines += [
        f"- command: {command}",
        f"- commit: {commit_text(record['commit'])}; date: {record['date']}",
        f"- load average: {load_text(record['load_average'], record.get('load_note'))}",
    ]
    if record.get("machine"):
        lines.append(f"- machine: {record['machine']}")
    lines.append("")
    header = [h for _, h in columns] + (["measured apart"] if apart else [])
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        cells = [cell(k, row.get(k)) for k, _ in columns]
        if apart:
            parts = []
            if "command" in row:
                parts.append(f"`{row['command']}`" if row["command"] else "command not recorded")
            if "commit" in row:
                parts.append(f"commit {commit_text(row['commit'])}")
            if "date" in row:
                parts.append(str(row["date"]))
            if "load_average" in row:
                parts.append(f"load {load_text(row['load_average'])}")
            if row.get("data"):
                parts.append(f"data: {doc_link(row['data'].partition('#')[0])}")
            cells.append("; ".join(parts))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for fact in record.get("facts", []):
        lines.append(f"- {fact['what']}: {fact['value']}")
    if record.get("facts"):
        lines.append("")
    figures = record.get("figures") or ([record["figure"]] if record.get("figure") else [])
    for fig in figures:
        name = Path(fig).stem.replace("_", " ")
        lines += [f"![{name}]({fig[len('docs/') :] if fig.startswith('docs/') else fig})", ""]
    return lines


LEADERBOARD = "leaderboard-"
"""The stem prefix of a published leaderboard's file (benchmarks/leaderboard.py)."""


def full_tier_hours(board: dict[str, Any], cpu_hours: float, root: Path = ROOT) -> str:
    """About the CPU-hours of ``board``'s whole run on its suite's full tier: ``cpu_hours`` (the run's, on its
    ``deals``) times the full tier's deals over them; ``-`` where the suite file is not found."""
    suite_file = root / "agents" / "suites" / f"{board['suite']}.json"
    if not suite_file.is_file():
        return "-"
    full = json.loads(suite_file.read_text())["tiers"]["full"]
    return f"about {cpu_hours * full / board['deals']:.0f} ({full:,} deals)"


def leaderboard_summary(files: list[tuple[str, dict[str, Any]]], root: Path = ROOT) -> list[str]:
    """One table over the published leaderboards (each file's first record): the strongest fair agent
    and its gap to the oracle's ceiling, the cost, the full tier's estimated cost (:func:`full_tier_hours`),
    the commit; then the suites not published yet."""
    boards = [data["records"][0] for stem, data in files if stem.startswith(LEADERBOARD)]
    if not boards:
        return []
    plain = any((b.get("ceiling") or {}).get("spec") == "oracle" for b in boards)
    lines = [
        "## Leaderboards at a glance",
        "",
        "Every published suite's strongest fair agent and how far the cheating `oracle` (every card seen) is above it",
        "([the oracle ceiling](benchmark.md#the-oracle-ceiling)"
        + (
            "; the plain `oracle`, measured before the noisy one became the ceiling, is a lower bound)"
            if plain
            else ")"
        )
        + "; each suite's section below has its whole table. The full tier's CPU-hours",
        "are the run's, ceiling and added rows included, scaled to the full tier's deals: what the same",
        "leaderboard costs on a cluster ([Running on a Ray cluster](benchmark.md#running-on-a-ray-cluster)).",
        "",
        "| suite | tier | agents | strongest fair agent | oracle above it, points per hand | CPU-hours "
        "| full tier, CPU-hours (estimated) | commit | date |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for board in sorted(boards, key=lambda b: b["suite"]):
        fair = [r for r in board["rows"] if r.get("role") != "ceiling" and isinstance(r.get("rating"), dict)]
        best = max(fair, key=lambda r: r["rating"]["mean"])
        # --rows-only gives a row its own command and cost, outside the whole run's.
        added = [r.get("cpu_hours", 0.0) for r in fair if r.get("role") == "rated" and "command" in r]
        cost = number(board["cpu_hours"]) + (f" + {number(round(sum(added), 3))} (rows added)" if added else "")
        ceiling = board.get("ceiling")
        apart = False
        if ceiling:
            gap = ceiling["gap"]
            above = (
                f"{cell('margin', gap['margin_per_hand'])}, wins {cell('win_rate', gap['win_rate'])}"
                f" (vs `{gap['agent']}`, {gap['deals']} deals; `{ceiling['spec']}`)"
            )
            row = next(r for r in board["rows"] if r.get("role") == "ceiling")
            # --ceiling-only gives the row its own command and cost; a whole run's cost includes it.
            apart = "command" in row
            hours = f"{cost} {'+' if apart else 'with'} {number(ceiling['cpu_hours'])} (ceiling)"
        else:
            above, hours = "not measured", cost
        spent = board["cpu_hours"] + sum(added) + (ceiling["cpu_hours"] if apart else 0.0)
        full = full_tier_hours(board, spent, root)
        lines.append(
            f"| {board['suite']} | {board['tier']}, {board['deals']} deals | {len(fair)} | "
            f"`{best['agent']}` {best['rating_text']} | {above} | {hours} | {full} | {commit_text(board['commit'])} | "
            f"{str(board['date'])[:10]} |"
        )
    published = {b["suite"] for b in boards}
    waiting = sorted(p.stem for p in (root / "agents" / "suites").glob("*.json") if p.stem not in published)
    if waiting:
        lines += ["", "Not published yet: " + ", ".join(waiting) + "."]
    return lines + [""]


# --- the summary -------------------------------------------------------------------------------

SUMMARY_MAX_LINES = 30
"""The summary is one screen: at most this many lines, its heading included."""
LEADERBOARD_TOP = 4
"""The strongest fair agents of the standard 2-player leaderboard shown in the summary."""


def slugify(text: str) -> str:
    """A heading's id as Python-Markdown's ``toc`` extension makes it (mkdocs.yml keeps its default)."""
    text = re.sub(r"[`*]", "", text)  # code spans and emphasis: the id is made from the rendered text
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def heading_ids(lines: list[str], taken: set[str]) -> dict[int, str]:
    """The id of each heading among ``lines`` (by line index), after the ids in ``taken``: a repeated
    id gets ``_1``, ``_2``, ... as the ``toc`` extension numbers it."""
    out = {}
    for i, line in enumerate(lines):
        m = re.match(r"#{1,6} (.+)$", line)
        if not m:
            continue
        anchor = slugify(m.group(1))
        while anchor in taken or not anchor:
            n = re.match(r"^(.*)_([0-9]+)$", anchor)
            anchor = f"{n.group(1)}_{int(n.group(2)) + 1}" if n else f"{anchor}_1"
        taken.add(anchor)
        out[i] = anchor
    return out


def find_record(files: dict[str, dict[str, Any]], stem: str, record_id: str | None = None) -> dict[str, Any] | None:
    """The record ``record_id`` of file ``stem`` (its first record without an id), or None where either is absent."""
    data = files.get(stem)
    if data is None or not data["records"]:
        return None
    if record_id is None:
        return data["records"][0]
    return next((r for r in data["records"] if r.get("id") == record_id), None)


def find_row(record: dict[str, Any] | None, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The first row of ``record`` that passes ``test``, or None (also where the record is None)."""
    if record is None:
        return None
    return next((r for r in record["rows"] if test(r)), None)


def summary_rows(files: dict[str, dict[str, Any]], root: Path = ROOT) -> list[tuple[str, str, str, str | None]]:
    """The summary's rows as ``(what, measured, file stem, record id)``: each number read from the record
    of that file (the row links to the record's section); a row whose file, record or row is absent is
    left out."""
    out: list[tuple[str, str, str, str | None]] = []
    bench = find_record(files, "bench", "scopa-bench")
    for what, prefix in (
        ("Python engine, random legal play, 2 players", "Python engine, random legal play"),
        ("Compiled core, random legal play, 1 thread", "compiled core, random legal play"),
    ):
        row = find_row(bench, lambda r, prefix=prefix: str(r.get("benchmark")).startswith(prefix))
        if row:
            out.append((what, f"{number(row['value'])} {row['unit']}", "bench", "scopa-bench"))
    ratios = []
    for mode in ("move", "select"):
        row = find_row(bench, lambda r, mode=mode: f'do-nothing AEC floor, "{mode}" mode' in str(r.get("benchmark")))
        if row:
            ratios.append(f'{number(row["value"])} in "{mode}" mode')
    if ratios:
        out.append(("AEC env + standard wrappers / do-nothing AEC floor", ", ".join(ratios), "bench", "scopa-bench"))

    stem = f"{LEADERBOARD}standard-2p-v1"
    board = find_record(files, stem)
    if board:
        fair = [r for r in board["rows"] if r.get("role") != "ceiling" and isinstance(r.get("rating"), dict)]
        top = sorted(fair, key=lambda r: -r["rating"]["mean"])[:LEADERBOARD_TOP]
        if top:
            what = (
                f"Strongest agents, standard game, 2 players (Elo, greedy = 1000; {board['tier']} tier, "
                f"{board['deals']} deals)"
            )
            out.append((what, ", ".join(f"`{r['agent']}` {r['rating_text']}" for r in top), stem, None))
        gap = (board.get("ceiling") or {}).get("gap")
        if gap:
            measured = (
                f"{cell('margin', gap['margin_per_hand'])} points per hand above `{gap['agent']}`, "
                f"wins {cell('win_rate', gap['win_rate'])} ({gap['deals']} deals)"
            )
            out.append(("The oracle ceiling (every card seen) above the strongest fair agent", measured, stem, None))

    zoo = find_record(files, "strength", "zoo")
    row = find_row(zoo, lambda r: r.get("agent") == "zoo:standard-2p" and r.get("opponent") == "heuristic")
    if row:
        values = {**linked_values(row["data"], root), **row} if row.get("data") else row
        measured = f"{cell('margin', values['margin'])} points per hand, {number(values['deals'])} deal pairs"
        out.append(("The zoo's network `zoo:standard-2p` against `heuristic`", measured, "strength", "zoo"))

    versus = find_record(files, "networks_vs_fsearch")
    if versus and versus["rows"]:
        parts = [f"`{r['agent']}` ({r['game']}) {r['margin_text']} at {r['ms']:.2f} ms" for r in versus["rows"]]
        out.append(("Networks alone against `fsearch`, points per hand", "; ".join(parts), "networks_vs_fsearch", None))

    endgame = find_record(files, "network_endgame")
    if endgame and endgame["rows"]:
        parts = [f"`{r['agent']}` {r['margin_text']} at {r['ms']:.2f} ms" for r in endgame["rows"]]
        title = "Networks alone and with the exact endgame against `fsearch`, points per hand"
        out.append((title, "; ".join(parts), "network_endgame", None))

    per_ms = find_record(files, "strength_per_ms")
    if per_ms:
        ref = next((r for r in per_ms["rows"] if r.get("ratio_ms") == 1.0), None)
        nets = [r for r in per_ms["rows"] if r.get("family") == "network"]
        best = max(nets, key=lambda r: r["margin"]) if nets else None
        if ref and best:
            measured = (
                f"`{ref['family']}` {ref['ms']:.2f} ms per decision; the strongest network alone, `{best['agent']}`, "
                f"{best['ms']:.2f} ms at {best['margin_text']} points per hand against it"
            )
            out.append(("Strength per millisecond, standard game, 2 players", measured, "strength_per_ms", None))

    reduction = find_record(files, "variance_reduction")
    if reduction and reduction["rows"]:
        ratios = [r["ratio"] for r in reduction["rows"]]
        measured = (
            f"intervals {min(ratios):.2f} to {max(ratios):.2f} times as narrow on {len(ratios)} pairs "
            f"({number(min(r['deals'] for r in reduction['rows']))}+ deals each); used only from 1.5"
        )
        out.append(("A chance correction (AIVAT-style) beside duplicate deals", measured, "variance_reduction", None))
    return out


def summary(
    rows: list[tuple[str, str, str, str | None]], sections: dict[tuple[str, str | None], tuple[str, str]]
) -> list[str]:
    """The ``## Summary`` section: one table row per headline number, linked to its record's section
    (``sections``: the heading's text and id of each file, ``(stem, None)``, and record, ``(stem, id)``)."""
    if not rows:
        return []
    lines = [
        "## Summary",
        "",
        "The headline numbers, each read from the record in the section it links to (which gives the command,",
        "the commit, the date and the machine's load).",
        "",
        "| what | measured | section |",
        "|---|---|---|",
    ]
    for what, measured, stem, record_id in rows:
        title, anchor = sections.get((stem, record_id)) or sections[(stem, None)]
        measured = measured.replace("|", "\\|")  # a table cell
        lines.append(f"| {what} | {measured} | [{title}](#{anchor}) |")
    lines.append("")
    if len(lines) > SUMMARY_MAX_LINES:
        raise ValueError(f"the summary has {len(lines)} lines, more than {SUMMARY_MAX_LINES}: shorten summary_rows")
    return lines


# --- the page ----------------------------------------------------------------------------------


def render_sections(
    files: list[tuple[str, dict[str, Any]]], root: Path = ROOT
) -> tuple[list[str], dict[tuple[str, str | None], int]]:
    """Every file's section (and the leaderboards at a glance before the first leaderboard's), and the index
    of the heading of each file (``(stem, None)``) and of each record with an id (``(stem, id)``)."""
    lines: list[str] = []
    where: dict[tuple[str, str | None], int] = {}
    glance = leaderboard_summary(files, root)
    for stem, data in files:
        if glance and stem.startswith(LEADERBOARD):
            lines += glance  # before the first leaderboard's section
            glance = []
        where[(stem, None)] = len(lines)
        lines += [f"## {data['title']}", ""]
        if data.get("about"):
            lines += [data["about"], ""]
        for record in data["records"]:
            heading = record.get("title") != data["title"]
            if record.get("id"):
                where[(stem, record["id"])] = len(lines) if heading else where[(stem, None)]
            lines += render_record(record, root, heading=heading)
    return lines, where


def render(results: Path = RESULTS, root: Path = ROOT) -> str:
    """The whole page, from the files under ``results``."""
    lines = [
        "# Results",
        "",
        "<!-- Generated by benchmarks/render_results.py from benchmarks/results/*.json: edit those and rerun it. -->",
        "",
        "Every number on this page is data in `benchmarks/results/*.json`, rendered by",
        "`python benchmarks/render_results.py`. Each table names the command that made it, the commit it was",
        'measured at, the date, and the machine\'s load average as reported ("not recorded" where it was not',
        "written down). `scopa bench --json PATH` writes a new record of the same shape.",
        "",
        "Duplicate deals: every deal is played twice with the seats swapped, so the luck of the cards cancels.",
        "Points per hand: the margin in game points per hand, side minus opponent.",
        "",
    ]
    files = load_files(results)
    sections, where = render_sections(files, root)
    rows = summary_rows(dict(files), root)
    ids = heading_ids(sections, {"results", "summary"} if rows else {"results"})
    headings = {key: (sections[i].lstrip("#").strip(), ids[i]) for key, i in where.items()}
    lines += summary(rows, headings)
    lines += sections
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of result files")
    parser.add_argument("--out", type=Path, default=OUT, help="page to write (default docs/results.md)")
    args = parser.parse_args(argv)
    try:
        text = render(args.results)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        print(f"render_results: error: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
