"""Plots of a tournament with matplotlib (imported when a plot is drawn, so the rest of the harness runs without it)."""

from __future__ import annotations

import math
import os

import numpy as np


def plot_ratings(result: dict, path: str | os.PathLike) -> None:
    """Horizontal bar chart of the ratings with their 95% intervals, written as PNG."""
    # Figure objects, not pyplot: no global backend switch, so notebooks keep their inline plots.
    from matplotlib.figure import Figure

    rows = [r for r in result["ratings"] if not math.isnan(r["elo"])][::-1]
    fig = Figure(figsize=(7, 0.5 * len(rows) + 1.5))
    ax = fig.subplots()
    elo = np.array([r["elo"] for r in rows])
    err = np.array([[r["elo"] - r["lo"] for r in rows], [r["hi"] - r["elo"] for r in rows]])
    ax.barh([r["agent"] for r in rows], elo, xerr=err, color="#4c72b0", capsize=4)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("Bradley-Terry rating (Elo points, mean 0) with 95% CI")
    cfg = result["config"]
    ax.set_title(f"{cfg['deals_per_pair']} duplicate deals per pair, {cfg['players']} players", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
