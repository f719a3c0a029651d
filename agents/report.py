"""Reports as text and files: rich tables of a match or a tournament, CSV and JSON.

Reads the report dicts of :func:`agents.stats.summarize` and :func:`agents.tournament.tournament`;
imports nothing else of the kit but the registry's labels: a cheating agent (the ``oracle``) is
shown as ``oracle (cheating)`` in every table (:func:`agents.registry.agent_label`).
"""

from __future__ import annotations

import csv
import math
import os

import numpy as np


def _fmt_ci(ci: dict, pct: bool = False) -> str:
    """``+0.412 [+0.301, +0.523]`` (or ``54.1% [52.0, 56.2]`` with ``pct``)."""
    if math.isnan(ci["mean"]):
        return "-"
    if pct:
        mean, lo, hi = (100 * ci[k] for k in ("mean", "lo", "hi"))
        return f"{mean:.1f}%" if math.isnan(lo) else f"{mean:.1f}% [{lo:.1f}, {hi:.1f}]"
    if math.isnan(ci["lo"]):
        return f"{ci['mean']:+.3f}"
    return f"{ci['mean']:+.3f} [{ci['lo']:+.3f}, {ci['hi']:+.3f}]"


def _label(spec: str) -> str:
    """How a table names an agent: its spec, with ``(cheating)`` after a cheating one."""
    from agents.registry import agent_label

    return agent_label(spec)


def report_rows(report: dict) -> list[dict]:
    """Flat rows (one per agent) for the terminal table and the CSV file."""
    rows = []
    for a in report["agents"]:
        row = {
            "agent": a["agent"],
            "games": a["games"],
            "hands": a["hands"],
            "win_rate": a["win_rate"]["mean"],
            "win_rate_lo": a["win_rate"]["lo"],
            "win_rate_hi": a["win_rate"]["hi"],
            "win_rate_plain_lo": a["win_rate_plain"]["lo"],
            "win_rate_plain_hi": a["win_rate_plain"]["hi"],
            "margin_per_hand": a["margin_per_hand"]["mean"],
            "margin_lo": a["margin_per_hand"]["lo"],
            "margin_hi": a["margin_per_hand"]["hi"],
            "margin_plain_lo": a["margin_per_hand_plain"]["lo"],
            "margin_plain_hi": a["margin_per_hand_plain"]["hi"],
            "points_per_hand": a["points_per_hand"],
            "scope_per_hand": a["scope_per_hand"],
        }
        for cat, outcome in a["categories"].items():
            for k, v in outcome.items():
                if cat == "settebello" and k == "tied":
                    continue
                row[f"{cat}_{k}"] = v
        for key, value in a["extras_per_hand"].items():
            row[f"extra_{key}"] = value
        row["forfeits"] = a["forfeits"]
        row["seconds_per_1000_hands"] = report["seconds_per_1000_hands"]
        rows.append(row)
    return rows


def write_csv(report: dict, path: str | os.PathLike) -> None:
    """One row per agent (the columns of :func:`report_rows`)."""
    rows = report_rows(report)
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def write_json(report: dict, path: str | os.PathLike) -> None:
    import json

    with open(path, "w") as fh:
        json.dump(report, fh, indent=2, default=_json_default)
        fh.write("\n")


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _console():
    """A rich console; wide when the output is a file or pipe so the tables stay on one line."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


def render_report(report: dict, console=None) -> None:
    """Print the report as a table with rich (or plain text when ``console`` is ``None`` and rich fails)."""
    from rich.table import Table

    console = console or _console()
    cfg = report["config"]
    title = (
        f"{' vs '.join(map(_label, cfg['agents']))}: {report['deals']} duplicate deals x {cfg['rotations']} rotations "
        f"= {report['games']} games, {report['hands']} hands ({cfg['players']} players, rules {cfg['rules']}, "
        f"seed {cfg['seed']})"
    )
    table = Table(title=title, title_justify="left")
    for col in ("agent", "win rate [95% CI]", "plain CI", "margin/hand [95% CI]", "plain CI", "pts/hand", "scope/hand"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for a in report["agents"]:
        table.add_row(
            _label(a["agent"]),
            _fmt_ci(a["win_rate"], pct=True),
            _fmt_ci(a["win_rate_plain"], pct=True).split(" ", 1)[-1],
            _fmt_ci(a["margin_per_hand"]),
            _fmt_ci(a["margin_per_hand_plain"]).split(" ", 1)[-1],
            f"{a['points_per_hand']:.3f}",
            f"{a['scope_per_hand']:.3f}",
        )
    console.print(table)
    cats = Table(title="per hand: won / tied / lost", title_justify="left")
    cats.add_column("agent")
    names = list(report["agents"][0]["categories"]) if report["agents"] else []
    extra_keys = sorted({k for a in report["agents"] for k in a["extras_per_hand"]})
    for cat in names:
        cats.add_column(cat, justify="right")
    for key in extra_keys:
        cats.add_column(f"{key} pts", justify="right")
    for a in report["agents"]:
        cells = []
        for cat in names:
            c = a["categories"][cat]
            cells.append(
                f"{c['won']:.3f} / {c['lost']:.3f}"
                if cat == "settebello"
                else f"{c['won']:.3f} / {c['tied']:.3f} / {c['lost']:.3f}"
            )
        cells += [f"{a['extras_per_hand'].get(k, 0.0):.3f}" for k in extra_keys]
        cats.add_row(_label(a["agent"]), *cells)
    console.print(cats)
    console.print(
        f"{report['seconds_per_1000_hands']:.1f} CPU s per 1,000 hands (one process); wall {report['wall_seconds']:.1f} s"
    )
    for f in report["forfeits"][:10]:
        console.print(
            f"[red]forfeit[/red] deal {f['deal']} rotation {f['rotation']}: {f['agent']} {f['error']} ({f['state']})",
            markup=True,
            highlight=False,
        )
    if len(report["forfeits"]) > 10:
        console.print(f"... and {len(report['forfeits']) - 10} more forfeits (see the JSON)")
    if report["interrupted"]:
        console.print(
            f"[yellow]interrupted: {report['deals']} of {cfg['deals_requested']} deals finished[/yellow]", markup=True
        )


def render_tournament(result: dict, console=None) -> None:
    """Print the ratings and the pair margins."""
    from rich.table import Table

    console = console or _console()
    table = Table(title="Bradley-Terry ratings (Elo scale, mean 0, 95% bootstrap CI over deals)", title_justify="left")
    for col in ("agent", "Elo", "95% CI", "wins / games"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for r in result["ratings"]:
        ci = "-" if math.isnan(r["lo"]) else f"[{r['lo']:+.0f}, {r['hi']:+.0f}]"
        elo = "-" if math.isnan(r["elo"]) else f"{r['elo']:+.0f}"
        table.add_row(_label(r["agent"]), elo, ci, f"{r['wins']} / {r['games']}")
    console.print(table)
    pairs = Table(title="pairs (first agent's view)", title_justify="left")
    for col in ("pair", "deals", "win rate [95% CI]", "margin/hand [95% CI]", "s / 1,000 hands"):
        pairs.add_column(col, justify="left" if col == "pair" else "right")
    for rep in result["pairs"]:
        a = rep["agents"][0]
        pairs.add_row(
            " vs ".join(map(_label, rep["config"]["agents"])),
            str(rep["deals"]),
            _fmt_ci(a["win_rate"], pct=True),
            _fmt_ci(a["margin_per_hand"]),
            f"{rep['seconds_per_1000_hands']:.1f}",
        )
    console.print(pairs)
    if result["interrupted"]:
        console.print("[yellow]interrupted: ratings use the pairs finished so far[/yellow]", markup=True)
