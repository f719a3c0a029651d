"""Learning curves against ``heuristic`` per CPU-hour: DMC runs next to the PPO recipe.

::

    python benchmarks/learning_curves.py "docs/data/dmc_expert_diff:DMC + search labels, difference labels from 12M (configs/dmc_expert.yaml)" \
        "docs/data/dmc_expert_stage2:DMC + search labels, value labels on every position from 12M" \
        "runs/dmc_v3:DMC (configs/dmc_standard.yaml)" "runs/dmc_v2:DMC, no heuristic features" --out docs/img/dmc_vs_ppo.png

``--opponents heuristic,fsearch`` draws one panel per opponent. A run's points against an opponent
come from its ``evaluations.csv`` (the evaluations made during training) or, for an opponent it was
not evaluated against, from ``evaluations_<opponent>.csv`` (``benchmarks/snapshot_curve.py``, played
afterwards from the weights the run kept). The PPO recipe is drawn on the ``heuristic`` panel only.

Each DMC run folder's ``evaluations.csv`` has a ``cpu_hours`` column (the training process's CPU
time at each evaluation, both cores counted). The PPO recipe's curve is the one recorded in
docs/training-experiments.md for ``configs/ppo_vs_heuristic.yaml`` (1,000-deal evaluations, 24M steps in 82
minutes of wall time with one torch thread on the same kind of 2-core machine); its CPU-hours
are estimated as wall time x 1.1 cores (the compiled games run beside the learner), so that
curve is placed by an estimate, not by a measurement made in this run.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

PPO_RECIPE = [  # (steps, margin vs heuristic), docs/training-experiments.md "The earlier PPO recipe"
    (0, -0.42),
    (2_000_000, -0.18),
    (6_000_000, -0.16),
    (10_000_000, -0.10),
    (14_000_000, -0.06),
    (24_000_000, -0.036),
]
PPO_STEPS, PPO_WALL_HOURS, PPO_CORES = 24_000_000, 82 / 60, 1.1


def dmc_curve(run_dir: Path, opponent: str = "heuristic") -> tuple[list[float], list[float], list[float], list[float]]:
    """A run's (CPU-hours, margin, CI low, CI high) against ``opponent``, in the order of its decisions."""
    from train.dmc.learner import opponent_curve_file

    rows = []
    for path in (run_dir / "evaluations.csv", opponent_curve_file(run_dir, opponent)):
        if path.exists() and not rows:  # the run's own evaluations first; a replayed curve only without them
            with path.open() as fh:
                rows = [r for r in csv.DictReader(fh) if r["opponent"] == opponent]
    if not rows:
        raise SystemExit(f"error: {run_dir} has no evaluation against {opponent!r}")
    rows.sort(key=lambda r: int(float(r["timestep"])))
    return tuple([float(r[k]) for r in rows] for k in ("cpu_hours", "margin", "margin_lo", "margin_hi"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="RUN_DIR:label")
    p.add_argument("--opponents", default="heuristic", help="comma-separated; one panel each (default heuristic)")
    p.add_argument("--out", default="docs/img/dmc_vs_ppo.png")
    p.add_argument("--no-ppo", action="store_true", help="leave out the PPO recipe's curve")
    args = p.parse_args()
    from matplotlib.figure import Figure

    opponents = [o for o in args.opponents.split(",") if o]
    fig = Figure(figsize=(7.5 if len(opponents) == 1 else 6.0 * len(opponents), 4.5))
    axes = fig.subplots(1, len(opponents), squeeze=False)[0]
    for ax, opponent in zip(axes, opponents, strict=True):
        lowest = 0.0
        for item in args.runs:
            path, _, label = item.partition(":")
            hours, margin, lo, hi = dmc_curve(Path(path), opponent)
            (line,) = ax.plot(hours, margin, marker="o", markersize=3, label=label or Path(path).name)
            ax.fill_between(hours, lo, hi, alpha=0.2, color=line.get_color())
            lowest = min(lowest, min(lo[1:] or lo))
        if opponent == "heuristic" and not args.no_ppo:
            ppo_hours = [s / PPO_STEPS * PPO_WALL_HOURS * PPO_CORES for s, _ in PPO_RECIPE]
            ax.plot(
                ppo_hours,
                [m for _, m in PPO_RECIPE],
                marker="s",
                linestyle="--",
                color="gray",
                label="PPO recipe (docs/training-experiments.md; CPU-hours estimated)",
            )
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_ylim(min(-0.6, lowest - 0.1), None)  # the untrained networks start near -2, off the scale
        ax.text(0.01, 0.02, "untrained networks start near -2 (off the scale)", transform=ax.transAxes, fontsize=7)
        ax.set_xlabel("training CPU-hours")
        ax.set_ylabel(f"points per hand vs {opponent} (95% CI)")
        ax.set_title(f"Standard game, 2 players: against {opponent}", fontsize=10)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
