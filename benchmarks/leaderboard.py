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
    python benchmarks/leaderboard.py --suite standard-2p-v1 --quick --ceiling-only   # only (re)measure the
                                                     # oracle's ceiling row of the published record
    python benchmarks/leaderboard.py --suite cirulla-2p-v1 --quick --rows-only   # only rate the shipped
                                                     # agents the published record lacks (its scale kept)
    python benchmarks/leaderboard.py --suite standard-3p-v1 --quick --publish-scale --state runs/lb-3p
                                                     # keep each finished pair in runs/lb-3p; run again
                                                     # (another session) to go on where it stopped
    python benchmarks/leaderboard.py --suite standard-2p-v1 --publish-scale --state runs/lb-2p --ray auto
                                                     # the full tier on the Ray cluster started here
                                                     # (`ray start --head`): the same record, every pair's
                                                     # deals spread over the cluster's CPUs

Each pair plays on the compiled core where both of its agents have a compiled form (the compiled
baselines, ``fsearch`` specs, the zoo networks) and on the Python harness otherwise (the ``search``
agent, the ``oracle``, ``netsearch``); ``--engine python`` plays every pair on the harness, as the
records before the compiled engine were measured. The record says the engine of every pair.
BLAS runs on one thread per process (``OPENBLAS_NUM_THREADS=1`` unless set): the networks'
batches on the compiled core are small, and a second BLAS thread on a busy machine only spins.

Without ``--publish-scale`` the suite file is left as it is and the other agents are rated on
the scale this run measured. The record says the commit, the date, the load average and the
CPU-hours the run took.

The ceiling: last, the ``oracle`` (:mod:`agents.oracle`, which sees every card: cheating) plays
the ladder too. Its row, ``oracle (cheating)`` with role ``ceiling``, shows its margins and win
rates but no rating: it is left out of the fit and of the ranking. It plays the best fair agent
as well where that one is not on the ladder, and the record's facts say the best fair agent's gap
to it: the oracle's margin in points per hand and game win rate against that agent, with their
95% intervals. ``--ceiling-only`` measures only that row on the suite's published scale and
puts it into the existing record (marked with its own command, commit, date and load), leaving
the rest as it was; ``--ceiling-deals N`` plays it on the tier's first N deals only (said in
the record).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads (module docstring)
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from agents.leaderboard import ENGINES, plan_pair, played_pair, rate_agent, rate_ladder  # noqa: E402
from agents.matches import game_agent  # noqa: E402
from agents.ray_deals import RayCluster  # noqa: E402
from agents.registry import agent_label  # noqa: E402
from agents.suites import load_suite, with_ratings, write_suite  # noqa: E402
from scopa_app.args import add_ray_argument  # noqa: E402
from scopa_env.bench.results import git_commit, load_average, result_record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

EXTRA_AGENTS = ("netsearch:{zoo},worlds=64",)
"""Shipped agents rated besides the ladder; ``{zoo}`` stands for each zoo agent on the suite's ladder."""

CEILING = "oracle:ab_depth=0,rollouts=256,noise=0.6"
"""The agent that sees every card (cheating), measured as each suite's unranked ceiling row. Not the
plain ``oracle`` (3 plies of paranoid alpha-beta and greedy rollouts in the true deal): its rollouts
trust one line of the other seats' play, and it lost to the fair ``fsearch`` on french52-8p-v1. Noisy
rollouts average over how the others may play, and against ``fsearch`` this spec beats the plain one
with 2, 3 and 8 players (docs/benchmark.md, The oracle ceiling)."""


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


def ladder_rows(ladder: dict, anchor: str, sides: int) -> list[dict]:
    """One row per reference: its rating and its games alone against the anchor on every other side.

    Those are the pair ``[reference, anchor]`` (a fitted pair or, with more than two sides, one of the
    ladder's ``alone_pairs``) or, with two sides only, the pair ``[anchor, reference]`` seen from the
    other side. With more than two sides that reversed pair is the anchor alone against the reference
    on every other side, another measure (a side's margin is against the mean of the others and one
    side wins), so it is never turned round: a row without its own pair leaves the columns empty.
    """
    played = ladder["pairs"] + ladder.get("alone_pairs", [])
    rows = []
    for r in ladder["ratings"]:
        row = {"agent": r["agent"], "role": "anchor" if r["agent"] == anchor else "reference"}
        row["rating"] = r["rating"]
        row["rating_text"] = rating_text(r["rating"])
        row.update(ladder["per_hand"][r["agent"]])
        for p in played:
            if p["pair"] == [r["agent"], anchor]:
                row["margin_vs_greedy"], row["win_rate_vs_greedy"] = p["margin_per_hand"], p["win_rate"]
                break
        else:
            for p in played:
                if p["pair"] == [anchor, r["agent"]] and sides == 2:
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


def ranked(rows: list[dict]) -> list[dict]:
    """The ceiling row first (unranked), then the rated rows best first."""
    ceiling = [r for r in rows if r["role"] == "ceiling"]
    return ceiling + sorted((r for r in rows if r["role"] != "ceiling"), key=lambda r: -r["rating"]["mean"])


def best_fair(rows: list[dict]) -> dict:
    """The fair row of the highest rating."""
    return max((r for r in rows if r["role"] != "ceiling"), key=lambda r: r["rating"]["mean"])


def ceiling_row(report: dict, source: dict | None = None) -> dict:
    """The oracle's row: its games against the ladder, no rating (role ``ceiling``, label ``NAME (cheating)``).

    ``source`` (``command``, ``commit``, ``date``, ``load_average``) marks a row measured apart
    from the rest of its table (``--ceiling-only``).
    """
    row = report["row"]
    out = {
        "agent": agent_label(row["agent"]),
        "spec": row["agent"],
        "role": "ceiling",
        "cheating": True,
        "rating": None,
        "rating_text": "not rated: sees every card",
        "deals": row["deals"],
    }
    for e in row["references"]:
        if e["reference"] == "greedy":
            out["margin_vs_greedy"], out["win_rate_vs_greedy"] = e["margin_per_hand"], e["win_rate"]
    out.update(row["per_hand"])
    out["references"] = row["references"]
    out.update(source or {})
    return out


def interval(ci: dict) -> dict:
    """``{mean, lo, hi}`` of a :func:`agents.stats.summarize` interval, rounded as the rows are."""
    return {k: round(float(ci[k]), 4) for k in ("mean", "lo", "hi")}


def ceiling_gap(
    suite, ceiling: dict, best: dict, deals: int, workers: int, progress: bool, state_dir=None, cluster=None
) -> tuple[dict, float]:
    """The oracle against the best fair agent: from its ladder games, else played here on the same deals
    (kept in ``state_dir`` like any pair, and taken back from there).

    Returns ``({"agent", "rating", "margin_per_hand", "win_rate", "deals"}, cpu_seconds)``; margin and
    win rate are the oracle's, with 95% intervals clustered by deal.
    """
    found = [e for e in ceiling["references"] if e["reference"] == best["agent"]]
    cpu = 0.0
    if found:
        entry = found[0]
        margin, win, n = entry["margin_per_hand"], entry["win_rate"], entry["deals"]
    else:
        plan = plan_pair(suite, ceiling["spec"], best["agent"])
        desc = f"vs {best['agent']}"
        outcome = played_pair(
            suite, ceiling["spec"], best["agent"], deals, workers, progress, desc, plan, state_dir, cluster
        )
        if outcome.interrupted:
            raise KeyboardInterrupt
        side, cpu = outcome.summary["agents"][0], outcome.cpu
        margin, win, n = interval(side["margin_per_hand"]), interval(side["win_rate"]), outcome.summary["deals"]
    gap = {"agent": best["agent"], "rating": best["rating"], "margin_per_hand": margin, "win_rate": win, "deals": n}
    return gap, cpu


def _num(x: float | None, spec: str, scale: float = 1.0) -> str:
    """``x * scale`` formatted, or ``n/a`` where an interval has no value (a single deal)."""
    return "n/a" if x is None else format(scale * x, spec)


def ceiling_facts(ceiling: dict, gap: dict, tier_deals: int, cpu_hours: float, sides: int = 2) -> list[dict]:
    """The record's lines about the ceiling: what it is, its cost, and the best fair agent's gap to it."""
    m, w = gap["margin_per_hand"], gap["win_rate"]
    partial = f" (the tier's first {gap['deals']} of {tier_deals} deals)" if gap["deals"] != tier_deals else ""
    return [
        {
            "what": "ceiling",
            "value": f"{ceiling['agent']} searches the true deal, every hand and the stock order; it is "
            f"not rated and not ranked (docs/benchmark.md, The oracle ceiling); its games took {cpu_hours:.2f} "
            "CPU-hours (its moves and the references')",
        },
        {
            "what": "best fair agent's gap to the oracle",
            "value": f"{gap['agent']} (rated {gap['rating']['mean']:.0f}) loses {_num(m['mean'], '.3f')} points "
            f"per hand [95% CI {_num(m['lo'], '.3f')}, {_num(m['hi'], '.3f')}] to the oracle, which wins "
            f"{_num(w['mean'], '.1f', 100)}% of their games [{_num(w['lo'], '.1f', 100)}, {_num(w['hi'], '.1f', 100)}]; "
            f"{gap['deals']} deals x {sides} rotations{partial}",
        },
    ]


def add_ceiling(
    record: dict,
    suite,
    deals: int | None,
    workers: int,
    progress: bool,
    source: dict | None,
    state_dir=None,
    cluster=None,
) -> float:
    """Measure the oracle on ``suite`` and put its row, its gap and its facts into ``record``; returns its CPU-seconds."""
    tier = record["tier"]
    spec = CEILING
    report = rate_agent(
        suite, spec, tier, deals, workers, progress=progress, ceiling=True, state_dir=state_dir, cluster=cluster
    )
    if report["forfeits"] or report["interrupted"]:
        raise RuntimeError(f"the ceiling run of {spec} was {'interrupted' if report['interrupted'] else 'forfeited'}")
    row = ceiling_row(report, source)
    rows = [r for r in record["rows"] if r["role"] != "ceiling"]
    gap, cpu = ceiling_gap(suite, row, best_fair(rows), report["row"]["deals"], workers, progress, state_dir, cluster)
    cpu += report["timing"]["cpu_seconds"]
    if source is not None:
        row["cpu_hours"] = round(cpu / 3600, 3)
    record["rows"] = ranked([*rows, row])
    record["ceiling"] = {"agent": row["agent"], "spec": spec, "gap": gap, "cpu_hours": round(cpu / 3600, 3)}
    facts = [f for f in record.get("facts", []) if f["what"] not in ("ceiling", "best fair agent's gap to the oracle")]
    record["facts"] = facts + ceiling_facts(row, gap, suite.deals(tier), cpu / 3600, suite.num_sides)
    return cpu


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

    rows = sorted((r for r in record["rows"] if r["rating"] is not None), key=lambda r: r["rating"]["mean"])
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


def draw(record: dict, out: Path) -> None:
    """Draw ``record``'s figure and name it there: ``docs/img/leaderboard-<suite>.png`` for a file under
    ``benchmarks/results/``, else beside ``out``."""
    in_docs = out.resolve().parent == RESULTS.resolve()
    figure = ROOT / "docs" / "img" / f"leaderboard-{record['suite']}.png" if in_docs else out.with_suffix(".png")
    plot(record, figure)
    record["figure"] = os.path.relpath(figure, ROOT) if in_docs else str(figure)


def write(out: Path, suite, rows: list[dict], cpu: float, run: dict, ladder: dict, extra: dict | None = None) -> None:
    """Write the leaderboard file of the rows rated so far (the ceiling, then best first); ``extra``: more record keys.

    ``ladder``: :func:`agents.leaderboard.rate_ladder`'s result, whose fitted and alone pairs the record keeps.
    """
    pairs, alone = ladder["pairs"], ladder.get("alone_pairs", [])
    tier, deals, load_start = run["tier"], run["deals"], run["load_start"]
    played = [p["engine"] for p in pairs + alone] + [e["engine"] for r in rows for e in r.get("references", [])]
    engines = {name: played.count(name) for name in sorted(set(played))}
    record = result_record(
        run["command"],
        ranked(rows),
        what=f"every shipped agent on {suite.name} ({suite.title}), {tier} tier: {deals} deals x "
        f"{suite.num_sides} rotations per pair; ratings in Elo points with {suite.anchor} = "
        f"{suite.anchor_rating:g} (the references fitted together, the others against them), per-hand "
        f"rates over every reference; {cpu / 3600:.2f} CPU-hours; pairs played on "
        + ", ".join(f"the {name}: {n}" for name, n in engines.items())
        + (
            f"; with {suite.num_sides} sides, the vs {suite.anchor} columns of the references after "
            f"{suite.anchor} come from {len(alone)} more pairs, each alone against {suite.anchor} (not fitted)"
            if alone
            else ""
        ),
        columns=COLUMNS,
        load={"start": load_start, "end": load_average()} if load_start else None,
        commit=run["commit"],
        id=f"leaderboard-{suite.name}",
        title=f"Leaderboard {suite.name}",
        machine=run.get("machine", "this project's shared 2-core CPU machine"),
        load_note="other jobs shared the machine" if load_start and max(load_start) > 2 else None,
        cpu_hours=round(cpu / 3600, 3),
        suite=suite.name,
        tier=tier,
        deals=deals,
        ladder_pairs=pairs,
        **({"alone_pairs": alone} if alone else {}),
        engines={
            "asked": run.get("engine", "auto"),
            "pairs": engines,
            "cpu_hours": {k: round(v / 3600, 3) for k, v in run.get("cpu_by_engine", {}).items()},
        },
        **(extra or {}),
    )
    draw(record, out)
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
    parser.add_argument("--workers", type=int, default=1, help="processes (threads on the compiled core)")
    parser.add_argument(
        "--engine", choices=ENGINES, default="auto", help="where pairs play (auto: the compiled core where it can)"
    )
    parser.add_argument("--publish-scale", action="store_true", help="write the ladder's ratings into the suite file")
    parser.add_argument("--out", type=Path, help="default benchmarks/results/leaderboard-<suite>.json")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--plot", type=Path, metavar="JSON", help="only draw the figure of a leaderboard file")
    parser.add_argument(
        "--ceiling-only",
        action="store_true",
        help=f"only measure the oracle's ceiling row ({CEILING}) into the existing record",
    )
    parser.add_argument(
        "--rows-only",
        action="store_true",
        help="only rate the shipped agents the existing record lacks, on the published scale, and add their rows",
    )
    parser.add_argument("--ceiling-deals", type=int, help="the ceiling row on the tier's first N deals only")
    parser.add_argument("--no-ceiling", action="store_true", help="leave the oracle's ceiling row out")
    parser.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="keep each finished pair in DIR and take the pairs an earlier run kept there (a run over several sessions)",
    )
    add_ray_argument(parser)
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
    ceiling_deals = args.ceiling_deals if args.ceiling_deals is not None else args.deals
    if args.ceiling_only and args.rows_only:
        print("leaderboard: error: --ceiling-only and --rows-only are two runs: give one", file=sys.stderr)
        return 2
    try:
        args.cluster = RayCluster(args.ray, args.workers) if args.ray is not None else None
    except ValueError as exc:
        print(f"leaderboard: error: {exc}", file=sys.stderr)
        return 2
    try:
        return publish(args, suite, tier, ceiling_deals, command)
    finally:
        if args.cluster is not None:
            args.cluster.close()


def publish(args, suite, tier: str, ceiling_deals: int | None, command: str) -> int:
    """The run :func:`main` parsed: ``--ceiling-only``, ``--rows-only`` or the whole leaderboard (module docstring)."""
    if args.ceiling_only:
        return ceiling_only(args, suite, tier, ceiling_deals, command)
    if args.rows_only:
        return rows_only(args, suite, tier, command)
    load_start, commit = load_average(), git_commit()
    ladder = rate_ladder(
        suite,
        tier,
        args.deals,
        args.workers,
        progress=not args.no_progress,
        engine=args.engine,
        state_dir=args.state,
        cluster=args.cluster,
    )
    if ladder["forfeits"]:
        print(f"leaderboard: error: {len(ladder['forfeits'])} forfeits in the ladder", file=sys.stderr)
        return 1
    ratings = {r["agent"]: r["rating"]["mean"] for r in ladder["ratings"]}
    source = {"command": command, "commit": commit, "tier": tier, "deals": ladder["deals"]}
    rated = with_ratings(suite, ratings, source, ladder["weights"])
    if args.publish_scale:
        print(f"scale published in {write_suite(rated)}", file=sys.stderr)
    rows = ladder_rows(ladder, suite.anchor, suite.num_sides)
    cpu = ladder["timing"]["cpu_seconds"]
    by_engine = dict(ladder["timing"]["cpu_seconds_by_engine"])
    out = args.out or RESULTS / f"leaderboard-{suite.name}.json"
    run = {"command": command, "commit": commit, "load_start": load_start, "tier": tier, "deals": ladder["deals"]}
    run["engine"], run["cpu_by_engine"] = args.engine, by_engine
    if args.cluster is not None:
        run["machine"] = f"{args.cluster.describe()} (--ray)"
    write(out, suite, rows, cpu, run, ladder)  # the ladder is kept if the other agents are stopped
    for spec in extra_specs(suite):
        report = rate_agent(
            rated,
            spec,
            tier,
            args.deals,
            args.workers,
            progress=not args.no_progress,
            engine=args.engine,
            state_dir=args.state,
            cluster=args.cluster,
        )
        cpu += report["timing"]["cpu_seconds"]
        for name, seconds in report["timing"]["cpu_seconds_by_engine"].items():
            by_engine[name] = by_engine.get(name, 0.0) + seconds
        if report["forfeits"]:
            print(f"leaderboard: {spec} forfeited {len(report['forfeits'])} games; left out", file=sys.stderr)
            continue
        rows.append(agent_row(report))
        write(out, suite, rows, cpu, run, ladder)
    if not args.no_ceiling:
        record = {"rows": rows, "tier": tier}
        ceiling_cpu = add_ceiling(
            record, rated, ceiling_deals, args.workers, not args.no_progress, None, args.state, args.cluster
        )
        cpu += ceiling_cpu
        by_engine["python harness"] = by_engine.get("python harness", 0.0) + ceiling_cpu  # the oracle: harness only
        extra = {"ceiling": record["ceiling"], "facts": record["facts"]}
        write(out, suite, record["rows"], cpu, run, ladder, extra)
    print(f"wrote {out} and its figure")
    return 0


def published_record(args, suite, tier: str) -> tuple[Path, dict, dict]:
    """``(out, data, record)``: the leaderboard file (``--out`` or the suite's), its data and its record of
    ``suite``'s ``tier``, on the suite's published scale.

    Raises:
        ValueError: no such file, a file of another suite or tier, or a suite without a published scale.
    """
    out = args.out or RESULTS / f"leaderboard-{suite.name}.json"
    if not out.is_file():
        raise ValueError(f"{out} does not exist: run the whole leaderboard first")
    data = json.loads(out.read_text())
    record = data["records"][0]
    if record.get("suite") != suite.name or record.get("tier") != tier:
        raise ValueError(f"{out} holds {record.get('suite')} {record.get('tier')} tier, not {suite.name} {tier}")
    if not suite.rated:
        raise ValueError(f"{suite.name} has no published scale (--publish-scale)")
    return out, data, record


def apart(command: str) -> dict:
    """The source of a row measured apart from its record's run: command, commit and date (UTC)."""
    return {"command": command, "commit": git_commit(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def rows_only(args, suite, tier: str, command: str) -> int:
    """``--rows-only``: rate the shipped agents the existing record lacks on the suite's published scale
    and add their rows, each marked with its own command, commit, date, load and CPU-hours; the ladder's
    rows and pairs stay as they were."""
    try:
        out, data, record = published_record(args, suite, tier)
    except ValueError as exc:
        print(f"leaderboard: error: {exc}", file=sys.stderr)
        return 2
    have = {row.get("spec", row["agent"]) for row in record["rows"]}
    missing = [spec for spec in extra_specs(suite) if spec not in have]
    if not missing:
        print(f"{out} has a row for every shipped agent already")
        return 0
    for spec in missing:
        start = load_average()
        source = apart(command)
        report = rate_agent(
            suite,
            spec,
            tier,
            args.deals,
            args.workers,
            not args.no_progress,
            engine=args.engine,
            state_dir=args.state,
            cluster=args.cluster,
        )
        if report["forfeits"] or report["interrupted"]:
            why = "was interrupted" if report["interrupted"] else f"forfeited {len(report['forfeits'])} games"
            print(f"leaderboard: {spec} {why}; left out", file=sys.stderr)
            continue
        row = {**agent_row(report), **source, "load_average": {"start": start, "end": load_average()}}
        row["cpu_hours"] = round(report["timing"]["cpu_seconds"] / 3600, 3)
        record["rows"] = ranked([*record["rows"], row])
        record["facts"] = [
            f for f in record.get("facts", []) if not (f["what"] == "left out" and spec in str(f["value"]))
        ]
        draw(record, out)
        out.write_text(json.dumps(data, indent=2) + "\n")
        print(f"added the row of {spec} to {out}")
    return 0


def ceiling_only(args, suite, tier: str, deals: int | None, command: str) -> int:
    """``--ceiling-only``: measure the oracle on the suite's published scale into the existing record."""
    try:
        out, data, record = published_record(args, suite, tier)
    except ValueError as exc:
        print(f"leaderboard: error: {exc}", file=sys.stderr)
        return 2
    start = load_average()
    source = apart(command)
    source["load_average"] = {"start": start, "end": None}
    add_ceiling(record, suite, deals, args.workers, not args.no_progress, source, args.state, args.cluster)
    next(r for r in record["rows"] if r["role"] == "ceiling")["load_average"]["end"] = load_average()
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote the ceiling row into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
