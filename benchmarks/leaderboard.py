"""The published leaderboard of a suite: every shipped agent rated on its scale.

Plays the suite's reference ladder against itself (every pair, :func:`agents.leaderboard.rate_ladder`)
to fit the suite's scale (the anchor keeps its number), then rates every other shipped agent that
plays the suite's game on that scale (:func:`agents.leaderboard.rate_agent`), and writes
``benchmarks/results/leaderboard-<suite>.json`` in the record format of
``scopa_env/bench/results.py``; ``python benchmarks/render_results.py`` shows it in docs/results.md.

::

    python benchmarks/leaderboard.py --suite standard-2p-v1 --quick --workers 2
    python benchmarks/leaderboard.py --suite standard-2p-v1 --quick --publish-scale   # also write the ladder's
                                                     # ratings into agents/suites/standard-2p-v1.json
    python benchmarks/leaderboard.py --plot benchmarks/results/leaderboard-standard-2p-v1.json   # its figure

Without ``--publish-scale`` the suite file is left as it is and the other agents are rated on
the scale this run measured. The record says the commit, the date, the load average and the
CPU-hours the run took.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from agents.leaderboard import rate_agent, rate_ladder
from agents.matches import game_agent
from agents.suites import load_suite, with_ratings, write_suite
from scopa_env.bench.results import git_commit, load_average, result_record

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

EXTRA_AGENTS = ("netsearch:{zoo},worlds=64",)
"""Shipped agents rated besides the ladder; ``{zoo}`` stands for each zoo agent on the suite's ladder."""

COLUMNS = [
    ("agent", "agent"),
    ("role", "role"),
    ("rating_text", "rating [95% CI]"),
    ("margin_vs_greedy", "points per hand vs greedy [95% CI]"),
    ("win_rate_vs_greedy", "game win rate vs greedy [95% CI]"),
    ("primiera", "primiera"),
    ("settebello", "settebello"),
    ("coins", "coins"),
    ("cards", "cards"),
    ("scope", "scope"),
]


def extra_specs(suite) -> list[str]:
    """The other shipped agents that play the suite's game."""
    zoos = [s for s in suite.ladder_specs if s.startswith("zoo:")]
    out = []
    for template in EXTRA_AGENTS:
        for spec in [template.format(zoo=z) for z in zoos] if "{zoo}" in template else [template]:
            try:
                game_agent(spec, suite.num_players, suite.rules)
            except (ValueError, OSError) as exc:
                print(f"leaderboard: {spec} left out: {exc}", file=sys.stderr)
                continue
            out.append(spec)
    return out


def rating_text(r: dict) -> str:
    return f"{r['mean']:.0f} [{r['lo']:.0f}, {r['hi']:.0f}]"


def _minus(a: float, b: float | None) -> float | None:
    return None if b is None else round(a - b, 4)


def ladder_rows(ladder: dict, anchor: str) -> list[dict]:
    """One row per reference: its rating and its games against the anchor (as the first of the pair or the second)."""
    rows = []
    for r in ladder["ratings"]:
        row = {"agent": r["agent"], "role": "anchor" if r["agent"] == anchor else "reference"}
        row["rating"] = r["rating"]
        row["rating_text"] = rating_text(r["rating"])
        row.update(ladder["per_hand"][r["agent"]])
        for p in ladder["pairs"]:
            if p["pair"] == [r["agent"], anchor]:
                row["margin_vs_greedy"], row["win_rate_vs_greedy"] = p["margin_per_hand"], p["win_rate"]
            elif p["pair"] == [anchor, r["agent"]]:  # the anchor played first: the other side's view
                m, w = p["margin_per_hand"], p["win_rate"]
                row["margin_vs_greedy"] = {
                    "mean": _minus(0, m["mean"]),
                    "lo": _minus(0, m["hi"]),
                    "hi": _minus(0, m["lo"]),
                }
                row["win_rate_vs_greedy"] = {
                    "mean": _minus(1, w["mean"]),
                    "lo": _minus(1, w["hi"]),
                    "hi": _minus(1, w["lo"]),
                }
        rows.append(row)
    return rows


def agent_row(report: dict) -> dict:
    row = report["row"]
    out = {"agent": row["agent"], "role": "rated", "rating": row["rating"], "rating_text": rating_text(row["rating"])}
    for e in row["references"]:
        if e["reference"] == "greedy":
            out["margin_vs_greedy"], out["win_rate_vs_greedy"] = e["margin_per_hand"], e["win_rate"]
    out.update(row["per_hand"])
    out["references"] = row["references"]
    return out


def plot(record: dict, path: Path) -> None:
    """The ratings with their 95% intervals, best on top, the anchor's number marked."""
    from matplotlib.figure import Figure

    rows = sorted(record["rows"], key=lambda r: r["rating"]["mean"])
    fig = Figure(figsize=(7, 0.45 * len(rows) + 1.4))
    ax = fig.subplots()
    mean = [r["rating"]["mean"] for r in rows]
    err = [
        [r["rating"]["mean"] - r["rating"]["lo"] for r in rows],
        [r["rating"]["hi"] - r["rating"]["mean"] for r in rows],
    ]
    colors = ["#c44e52" if r["role"] == "rated" else "#4c72b0" for r in rows]
    ax.errorbar(mean, range(len(rows)), xerr=err, fmt="none", ecolor="grey", capsize=4)
    ax.scatter(mean, range(len(rows)), c=colors, zorder=3)
    ax.set_yticks(range(len(rows)), [r["agent"] for r in rows])
    anchor = next(r for r in rows if r["role"] == "anchor")
    ax.axvline(anchor["rating"]["mean"], color="black", linewidth=0.8)
    ax.set_xlabel(f"rating, Elo points ({anchor['agent']} = {anchor['rating']['mean']:g}), 95% interval")
    ax.set_title(f"{record['suite']}, {record['tier']} tier ({record['deals']} deals per pair)", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def add_figure(results_file: Path) -> Path:
    """Draw the figure of a leaderboard file (``docs/img/leaderboard-<suite>.png``) and name it in the record."""
    data = json.loads(results_file.read_text())
    record = data["records"][0]
    figure = f"docs/img/leaderboard-{record['suite']}.png"
    plot(record, ROOT / figure)
    record["figure"] = figure
    results_file.write_text(json.dumps(data, indent=2) + "\n")
    return ROOT / figure


def write(out: Path, suite, rows: list[dict], cpu: float, run: dict, pairs: list[dict]) -> None:
    """Write the leaderboard file of the rows rated so far (best first)."""
    tier, deals, load_start = run["tier"], run["deals"], run["load_start"]
    record = result_record(
        run["command"],
        sorted(rows, key=lambda r: -r["rating"]["mean"]),
        what=f"every shipped agent on {suite.name} ({suite.title}), {tier} tier: {deals} deals x "
        f"{suite.num_sides} rotations per pair; ratings in Elo points with {suite.anchor} = "
        f"{suite.anchor_rating:g} (the references fitted together, the others against them), per-hand "
        f"rates over every reference; {cpu / 3600:.2f} CPU-hours",
        columns=COLUMNS,
        load={"start": load_start, "end": load_average()} if load_start else None,
        commit=run["commit"],
        id=f"leaderboard-{suite.name}",
        title=f"Leaderboard {suite.name}",
        machine="this project's shared 2-core CPU machine",
        load_note="other jobs shared the machine" if load_start and max(load_start) > 2 else None,
        cpu_hours=round(cpu / 3600, 3),
        suite=suite.name,
        tier=tier,
        deals=deals,
        ladder_pairs=pairs,
    )
    in_docs = out.resolve().parent == RESULTS.resolve()
    figure = ROOT / "docs" / "img" / f"leaderboard-{suite.name}.png" if in_docs else out.with_suffix(".png")
    plot(record, figure)
    record["figure"] = os.path.relpath(figure, ROOT) if in_docs else str(figure)
    data = {
        "title": f"Leaderboard: {suite.name}",
        "about": "The suite's reference ladder and the other shipped agents, rated on the suite's frozen deals "
        f"(docs/benchmark.md). `scopa leaderboard AGENT --suite {suite.name}` puts a new agent on the same scale.",
        "records": [record],
    }
    out.write_text(json.dumps(data, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="standard-2p-v1")
    parser.add_argument("--quick", action="store_true", help="the quick tier")
    parser.add_argument("--deals", type=int, help="only the tier's first DEALS deals (a trial)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--publish-scale", action="store_true", help="write the ladder's ratings into the suite file")
    parser.add_argument("--out", type=Path, help="default benchmarks/results/leaderboard-<suite>.json")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--plot", type=Path, metavar="JSON", help="only draw the figure of a leaderboard file")
    args = parser.parse_args(argv)
    if args.plot:
        print(f"wrote {os.path.relpath(add_figure(args.plot), ROOT)}")
        return 0
    command = shlex.join(["python", "benchmarks/leaderboard.py", *(argv if argv is not None else sys.argv[1:])])
    try:
        suite = load_suite(args.suite)
    except ValueError as exc:
        print(f"leaderboard: error: {exc}", file=sys.stderr)
        return 2
    tier = "quick" if args.quick else "full"
    load_start, commit = load_average(), git_commit()
    ladder = rate_ladder(suite, tier, args.deals, args.workers, progress=not args.no_progress)
    if ladder["forfeits"]:
        print(f"leaderboard: error: {len(ladder['forfeits'])} forfeits in the ladder", file=sys.stderr)
        return 1
    ratings = {r["agent"]: r["rating"]["mean"] for r in ladder["ratings"]}
    source = {"command": command, "commit": commit, "tier": tier, "deals": ladder["deals"]}
    rated = with_ratings(suite, ratings, source)
    if args.publish_scale:
        print(f"scale published in {write_suite(rated)}", file=sys.stderr)
    rows = ladder_rows(ladder, suite.anchor)
    cpu = ladder["timing"]["cpu_seconds"]
    out = args.out or RESULTS / f"leaderboard-{suite.name}.json"
    run = {"command": command, "commit": commit, "load_start": load_start, "tier": tier, "deals": ladder["deals"]}
    write(out, suite, rows, cpu, run, ladder["pairs"])  # the ladder is kept if the other agents are stopped
    for spec in extra_specs(suite):
        report = rate_agent(rated, spec, tier, args.deals, args.workers, progress=not args.no_progress)
        cpu += report["timing"]["cpu_seconds"]
        if report["forfeits"]:
            print(f"leaderboard: {spec} forfeited {len(report['forfeits'])} games; left out", file=sys.stderr)
            continue
        rows.append(agent_row(report))
        write(out, suite, rows, cpu, run, ladder["pairs"])
    print(f"wrote {out} and its figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
