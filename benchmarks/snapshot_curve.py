"""A DMC run's learning curve against another opponent, measured after the run from its kept weights.

::

    python benchmarks/snapshot_curve.py runs/dmc_diff_from_start --opponent fsearch --pairs 200

A run trained with ``keep_evaluated: true`` keeps the weights of every evaluation in
``evaluated/<decisions>/``. This plays each of them against ``--opponent`` (a compiled baseline, an
``fsearch`` spec, or a ``dmc:``/``zoo:`` network such as the run's ``init_weights``) on the same
duplicate deals (whole games to 11, every rotation, the compiled core) and writes ``evaluations_<opponent>.csv`` next to the run's ``evaluations.csv``: the same columns,
with the ``cpu_hours`` the run had spent when it saved those weights. The games played here are not
charged to the run, so a search opponent that would cost more than the training itself can still
draw the curve. ``benchmarks/learning_curves.py --opponents heuristic,fsearch`` plots it.

A second call goes on where the first stopped: the decisions already in the file are not played
again (same pairs and seed, or the call is refused).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from train.dmc.learner import EVALUATED_DIR, opponent_curve_file

CURVE_SEED = 31337


def kept_weights(run_dir: Path) -> list[Path]:
    """The run's ``evaluated/<decisions>/`` folders, in the order of their decisions."""
    folder = run_dir / EVALUATED_DIR
    if not folder.is_dir():
        raise SystemExit(f"error: {run_dir} has no {EVALUATED_DIR}/ folder (train it with keep_evaluated=true)")
    return sorted((p for p in folder.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def run_cpu_hours(run_dir: Path) -> dict[int, float]:
    """The CPU-hours the run had spent at each evaluation (its ``evaluations.csv``)."""
    path = run_dir / "evaluations.csv"
    if not path.exists():
        return {}
    with path.open() as fh:
        return {int(float(r["timestep"])): float(r["cpu_hours"]) for r in csv.DictReader(fh)}


def measured(path: Path, pairs: int, seed: int) -> set[int]:
    """The decisions already in a curve file, refused if it was measured on other deals."""
    if not path.exists():
        return set()
    done = set()
    with path.open() as fh:
        for row in csv.DictReader(fh):
            if int(float(row["pairs"])) != pairs or int(float(row["seed"])) != seed:
                raise SystemExit(
                    f"error: {path} was measured with --pairs {row['pairs']} --seed {row['seed']}; "
                    f"pass those or remove the file"
                )
            done.add(int(row["timestep"]))
    return done


def opponent_side(spec: str, rules: str, players: int):
    """The evaluation's other side (:func:`train.fast_eval.fast_side`): a compiled baseline's name or an
    ``fsearch`` spec as given, a ``dmc:`` or ``zoo:`` network of this game as its batch policy; anything
    else is a one-line error."""
    from train.fast_eval import GameMismatch, fast_side

    try:
        return fast_side(spec, rules=rules, players=players)[0]
    except GameMismatch as exc:
        raise SystemExit(f"error: --opponent {exc}") from None
    except (ValueError, OSError) as exc:
        raise SystemExit(f"error: --opponent {spec}: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path, help="a DMC run folder trained with keep_evaluated=true")
    p.add_argument(
        "--opponent",
        default="fsearch",
        help="a compiled baseline, an fsearch spec or a dmc:/zoo: network (default fsearch)",
    )
    p.add_argument("--pairs", type=int, default=200, help="duplicate deals per checkpoint (default 200)")
    p.add_argument("--seed", type=int, default=CURVE_SEED)
    p.add_argument("--every", type=int, default=1, help="measure every N-th kept checkpoint (default all)")
    args = p.parse_args(argv)
    from tqdm import tqdm

    from train.dmc.agent import load_dmc_batch_policy
    from train.evaluation import flat_metrics
    from train.fast_eval import evaluate_fast_sides
    from train.run import CSV_COLUMNS

    if args.pairs < 1 or args.every < 1:
        raise SystemExit("error: --pairs and --every must be positive")
    kept = kept_weights(args.run_dir)[:: args.every]
    game = json.loads((kept[0] / "meta.json").read_text()) if kept else {"rules": "standard", "num_players": 2}
    opponent = opponent_side(args.opponent, game["rules"], int(game["num_players"]))
    out = opponent_curve_file(args.run_dir, args.opponent)
    done = measured(out, args.pairs, args.seed)
    todo = [k for k in kept if int(k.name) not in done]
    hours = run_cpu_hours(args.run_dir)
    print(f"{len(kept)} kept checkpoints, {len(todo)} to play against {args.opponent} ({args.pairs} pairs each)")
    print("the compiled core compiles on first use: the first checkpoint can take a minute longer", flush=True)
    fields = (*CSV_COLUMNS, "cpu_hours", "pairs", "seed")
    for folder in tqdm(todo, unit="checkpoint"):
        policy, meta = load_dmc_batch_policy(folder)
        report = evaluate_fast_sides(policy, opponent, args.pairs, int(meta["num_players"]), meta["rules"], args.seed)
        m = flat_metrics(report)
        row = {"timestep": int(folder.name), "opponent": args.opponent, **m}
        row.update(cpu_hours=hours.get(int(folder.name), meta["cpu_hours"]), pairs=args.pairs, seed=args.seed)
        new = not out.exists()
        with out.open("a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerow(row)
        tqdm.write(
            f"{int(folder.name):>11,} decisions, {row['cpu_hours']:.2f} CPU-h: "
            f"{m['margin']:+.3f} [{m['margin_lo']:+.3f}, {m['margin_hi']:+.3f}] vs {args.opponent}"
        )
    print(json.dumps({"file": str(out), "rows": len(done) + len(todo)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
