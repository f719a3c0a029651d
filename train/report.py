"""The run report: learning-curve plots (PNG) and ``report.md``.

``write_report(run_dir)`` reads ``evaluations.csv``, draws

* ``margin.png``: hand-point margin per hand against each eval opponent (95% CI band),
* ``win_rate.png``: game win rate against each eval opponent (95% CI band),
* ``categories.png``: per-hand rates of primiera, settebello, coins, cards and scope,
  learner (solid) and opponent (dashed),

then evaluates the ``best`` checkpoint on ``final_pairs`` fresh duplicate deals per
opponent (a different seed from the training-time evaluations) and writes ``report.md``.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from types import SimpleNamespace

CATEGORIES = ("primiera", "settebello", "coins", "cards", "scope")
FINAL_EVAL_SEED = 20_261_122


def read_evaluations(run_dir: str | Path) -> dict[str, dict[str, list[float]]]:
    """``{opponent: {column: values}}`` from ``evaluations.csv``."""
    out: dict[str, dict[str, list[float]]] = {}
    path = Path(run_dir) / "evaluations.csv"
    if not path.exists():
        return out
    with path.open() as fh:
        for row in csv.DictReader(fh):
            cols = out.setdefault(row["opponent"], {})
            for k, v in row.items():
                if k != "opponent":
                    cols.setdefault(k, []).append(float(v))
    return out


def plot_curves(run_dir: str | Path) -> list[str]:
    """Write the three PNGs; returns their file names."""
    # Figure objects, not pyplot: no global backend switch, so notebooks keep their inline plots.
    from matplotlib.figure import Figure

    run_dir = Path(run_dir)
    data = read_evaluations(run_dir)
    if not data:
        return []
    files = []
    for key, label, fname in (
        ("margin", "hand-point margin per hand (95% CI)", "margin.png"),
        ("win_rate", "game win rate (95% CI)", "win_rate.png"),
    ):
        fig = Figure(figsize=(7, 4))
        ax = fig.subplots()
        for opp, cols in data.items():
            (line,) = ax.plot(cols["timestep"], cols[key], marker="o", markersize=3, label=f"vs {opp}")
            ax.fill_between(cols["timestep"], cols[f"{key}_lo"], cols[f"{key}_hi"], alpha=0.2, color=line.get_color())
        ax.axhline(0.5 if key == "win_rate" else 0.0, color="black", linewidth=0.8)
        ax.set_xlabel("env steps")
        ax.set_ylabel(label)
        ax.set_title(f"{run_dir.name}: {label}")
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(run_dir / fname, dpi=110)
        files.append(fname)
    fig = Figure(figsize=(16, 3.5))
    axes = fig.subplots(1, len(CATEGORIES), sharex=True)
    for ax, cat in zip(axes, CATEGORIES):
        for opp, cols in data.items():
            (line,) = ax.plot(cols["timestep"], cols[f"learner_{cat}"], label=f"learner vs {opp}")
            ax.plot(cols["timestep"], cols[f"opponent_{cat}"], linestyle="--", color=line.get_color())
        ax.set_title(f"{cat} per hand" if cat == "scope" else f"{cat} won (share of hands)")
        ax.set_xlabel("env steps")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{run_dir.name}: learner (solid) vs opponent (dashed)")
    fig.tight_layout()
    fig.savefig(run_dir / "categories.png", dpi=110)
    files.append("categories.png")
    return files


def final_evaluation(run_dir: str | Path, pairs: int, progress: bool = False) -> list[dict]:
    """Evaluate ``best`` against every eval opponent; rows of the results table."""
    import yaml

    from train.evaluation import evaluate_agent, flat_metrics
    from train.fast_eval import evaluate_fast, fast_eval_applies
    from train.sb3.policy_agent import load_batch_policy, load_checkpoint_agent, read_meta

    run_dir = Path(run_dir)
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    meta = read_meta(run_dir / "best")
    agent = load_checkpoint_agent(str(run_dir / "best"), algo=meta["algo"])
    rows = []
    for opp in cfg["eval_opponents"]:
        if fast_eval_applies(SimpleNamespace(vec_env=cfg.get("vec_env"), num_players=cfg["num_players"]), opp):
            policy, _ = load_batch_policy(run_dir / "best")
            report = evaluate_fast(
                policy, opp, pairs, cfg["rules"], FINAL_EVAL_SEED, cfg["action_mode"], progress=progress
            )
        else:
            report = evaluate_agent(agent, opp, pairs, cfg["num_players"], cfg["rules"], FINAL_EVAL_SEED)
        m = flat_metrics(report)
        rows.append({"opponent": opp, "timestep": meta["timestep"], **m})
        if progress:
            print(f"final eval vs {opp}: margin {m['margin']:+.3f} [{m['margin_lo']:+.3f}, {m['margin_hi']:+.3f}]")
    (run_dir / "final_eval.json").write_text(json.dumps(rows, indent=2) + "\n")
    return rows


def _ci(m: dict, key: str, pct: bool = False) -> str:
    if math.isnan(m[key]):
        return "-"
    if pct:
        return f"{100 * m[key]:.1f}% [{100 * m[key + '_lo']:.1f}, {100 * m[key + '_hi']:.1f}]"
    return f"{m[key]:+.3f} [{m[key + '_lo']:+.3f}, {m[key + '_hi']:+.3f}]"


def final_table(rows: list[dict], what: str) -> list[str]:
    """The markdown lines of a final evaluation: win rate, margin and category rates per opponent."""
    lines = [
        f"## Final evaluation of `best` ({what})",
        "",
        "| opponent | game win rate [95% CI] | hand-point margin [95% CI] | primiera | settebello | coins | cards "
        "| scope/hand |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in rows:
        cats = " | ".join(f"{m[f'learner_{c}']:.3f} / {m[f'opponent_{c}']:.3f}" for c in CATEGORIES)
        lines.append(f"| {m['opponent']} | {_ci(m, 'win_rate', pct=True)} | {_ci(m, 'margin')} | {cats} |")
    return lines + ["", "Category columns: learner / opponent, per hand.", ""]


def write_report(run_dir: str | Path, final_pairs: int = 200, progress: bool = False) -> Path:
    """Plots, the final evaluation of ``best`` and ``report.md``; returns the report's path."""
    import yaml

    run_dir = Path(run_dir)
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    images = plot_curves(run_dir)
    state = json.loads((run_dir / "latest" / "state.json").read_text())
    lines = [
        f"# Run `{run_dir.name}`",
        "",
        f"- algorithm: **{cfg['algo']}**, action mode **{cfg['action_mode']}**, episode **{cfg['episode']}**, "
        f"reward **{cfg['reward']}**, {cfg['num_players']} players, rules `{cfg['rules']}`",
        f"- opponents: `{cfg['opponents']}`"
        + (f", curriculum {cfg['curriculum']} (threshold {cfg['curriculum_threshold']})" if cfg["curriculum"] else "")
        + (f", self-play pool (fraction {cfg['selfplay_fraction']})" if cfg["selfplay"] else ""),
        f"- trained {state['timestep']:,} env steps in {state['wall_seconds'] / 60:.1f} min (seed {cfg['seed']}); "
        f"best checkpoint at step {state['best_timestep']:,} (margin vs `{cfg['best_opponent'] or cfg['eval_opponents'][-1]}`)",
        f"- reproduce: `scopa train {run_dir / 'config.yaml'} name={run_dir.name}_again` (the resolved config)",
        "",
    ]
    if final_pairs > 0 and (run_dir / "best").exists():
        rows = final_evaluation(run_dir, final_pairs, progress)
        lines += final_table(rows, f"{final_pairs} duplicate deals per opponent, both seatings, full games")
    lines += ["## Learning curves", ""] + [f"![{name}]({name})" for name in images] + [""]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines))
    return path


def results_table(run_dirs: list[str | Path]) -> str:
    """A markdown table of the final evaluations of several runs (``python -m train.report RUN...``)."""
    lines = [
        "| run | algo | mode | steps | opponent | game win rate [95% CI] | hand-point margin [95% CI] | deals |",
        "|---|---|---|---|---|---|---|---|",
    ]
    import yaml

    for run_dir in map(Path, run_dirs):
        final = run_dir / "final_eval.json"
        if not final.exists():
            continue
        cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
        state = json.loads((run_dir / "latest" / "state.json").read_text())
        for m in json.loads(final.read_text()):
            lines.append(
                f"| {run_dir.name} | {cfg['algo']} | {cfg['action_mode']} | {state['timestep']:,} "
                f"(best at {int(m['timestep']):,}) | {m['opponent']} | {_ci(m, 'win_rate', pct=True)} "
                f"| {_ci(m, 'margin')} | {int(m['games']) // 2} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(results_table(sys.argv[1:]))
