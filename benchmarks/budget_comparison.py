"""Algorithms and action modes on the same budget: one plot and one table from finished runs.

Reads run folders written by ``scopa train`` (``config.yaml``, ``evaluations.csv``,
``final_eval.json``, ``latest/state.json``), draws the hand-point margin against ``random``
over env steps for every run (95% CI bands from the periodic evaluations) and prints a
markdown table of the final evaluations of each run's ``best`` checkpoint.

Run (the numbers in docs/training-experiments.md)::

    python benchmarks/budget_comparison.py runs/cmp_dqn_select runs/cmp_dqn_move \\
        runs/cmp_ppo_select runs/cmp_ppo_move --out docs/img/budget_comparison.png

Wall time is the run's own clock up to its last periodic evaluation (training plus those
evaluations, without the final evaluation); on a shared machine it depends on the load.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from train.report import read_evaluations

PLOT_OPPONENT = "random"
"""The eval opponent whose margin the plot shows."""
ALGO_COLORS = {"dqn": "tab:blue", "ppo": "tab:orange"}
MODE_STYLES = {"select": "-", "move": "--"}


def ci(m: dict, key: str, pct: bool = False) -> str:
    """``value [lo, hi]``: a percentage for rates, a signed number of points for margins."""
    if pct:
        return f"{100 * m[key]:.1f}% [{100 * m[key + '_lo']:.1f}, {100 * m[key + '_hi']:.1f}]"
    return f"{m[key]:+.3f} [{m[key + '_lo']:+.3f}, {m[key + '_hi']:+.3f}]"


def load_run(run_dir: Path) -> dict:
    """The facts of one finished run the table and the plot need."""
    final = {m["opponent"]: m for m in json.loads((run_dir / "final_eval.json").read_text())}
    return {
        "name": run_dir.name,
        "cfg": yaml.safe_load((run_dir / "config.yaml").read_text()),
        "state": json.loads((run_dir / "latest" / "state.json").read_text()),
        "final": final,
        "curves": read_evaluations(run_dir),
    }


def table(runs: list[dict]) -> str:
    """Markdown table: one row per run, the final evaluation of its ``best`` checkpoint."""
    lines = [
        "| run | algorithm | action mode | env steps | wall time (steps/s) "
        "| margin vs random [95% CI] | margin vs greedy [95% CI] | game win rate vs random [95% CI] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        cfg, state, final = run["cfg"], run["state"], run["final"]
        steps, wall = state["timestep"], state["wall_seconds"]
        best = int(next(iter(final.values()))["timestep"])
        cells = [
            ci(final[opp], key, pct=key == "win_rate") if opp in final else "-"
            for opp, key in (("random", "margin"), ("greedy", "margin"), ("random", "win_rate"))
        ]
        lines.append(
            f"| {run['name']} | {cfg['algo']} | {cfg['action_mode']} | {steps:,} (best at {best:,}) "
            f"| {wall / 60:.1f} min ({steps / wall:,.0f}) | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def plot(runs: list[dict], out: Path) -> None:
    """Margin against ``PLOT_OPPONENT`` over env steps, one line and CI band per run."""
    # Figure objects, not pyplot: no global backend switch (as in train.report).
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.2))
    ax = fig.subplots()
    for run in runs:
        cols = run["curves"].get(PLOT_OPPONENT)
        if cols is None:
            continue
        algo, mode = run["cfg"]["algo"], run["cfg"]["action_mode"]
        color = ALGO_COLORS.get(algo)
        ax.plot(
            cols["timestep"],
            cols["margin"],
            marker="o",
            markersize=3,
            color=color,
            linestyle=MODE_STYLES.get(mode, ":"),
            label=f"{algo} {mode}",
        )
        ax.fill_between(cols["timestep"], cols["margin_lo"], cols["margin_hi"], alpha=0.12, color=color)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel("env steps (learner decisions)")
    ax.set_ylabel("hand-point margin per hand (95% CI)")
    ax.set_title(f"Same budget, vs {PLOT_OPPONENT}: periodic evaluations")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (each with final_eval.json)")
    parser.add_argument("--out", type=Path, default=Path("docs/img/budget_comparison.png"), help="PNG to write")
    args = parser.parse_args()
    runs = [load_run(d) for d in args.runs]
    plot(runs, args.out)
    print(table(runs))
    print(f"\nplot: {args.out}")


if __name__ == "__main__":
    main()
