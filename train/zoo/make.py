"""Put a trained DMC, PPO or DQN checkpoint into the zoo with its model card.

::

    python -m train.zoo.make standard-2p runs/dmc_standard --pairs 10000 --config configs/dmc_standard.yaml
    python -m train.zoo.make ppo-standard-2p runs/ppo_vs_heuristic --cpu-hours 1.2 --config configs/ppo_vs_heuristic.yaml
    python -m train.zoo.make standard-2p --add-result search=runs/eval_search.json

The first form copies ``RUN/best`` (weights and metadata only) to ``train/zoo/NAME/``, plays
``--pairs`` duplicate deals against each compiled baseline (random, greedy, heuristic) on the
compiled core, and writes ``card.json``: the game, the config and seed, the training
CPU-hours, those results and the SHA-256 of the weights. A PPO or DQN run's ``best`` (the
``.pt`` files of the Stable-Baselines3 path) is written as ``weights.npz`` and ``meta.json``
(:mod:`train.zoo.policies`) and played in "select" mode on the compiled core (2 players); its
run does not count CPU time, so ``--cpu-hours`` gives it (measured with ``/usr/bin/time``, say).
``--add-result SPEC=FILE`` adds a
result measured elsewhere (the JSON report of ``scopa eval ... --json FILE``, e.g. against
``search`` in the Python harness).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import yaml

from train.dmc.agent import META_FILE, WEIGHTS_FILE, find_dmc_checkpoint, load_dmc_batch_policy
from train.zoo import CARD_FILE, ZOO_DIR, weights_sha256

CARD_SEED = 31_337
"""Seed of the card's evaluation deals (not the training-time or final evaluation deals)."""
FIT_REPORT = "endgame_fit.json"
"""The report :mod:`train.dmc.endgame_fit` writes beside its checkpoint."""
START_CARD = "start_card.json"
"""The model card of the zoo network an endgame fit started from, copied beside its checkpoint."""
CATEGORY_KEYS = ("primiera", "settebello", "coins", "cards", "scope")


def result_row(opponent: str, m: dict, pairs: int, where: str) -> dict:
    """One card row from :func:`train.evaluation.flat_metrics` numbers."""
    return {
        "opponent": opponent,
        "deal_pairs": pairs,
        "evaluated_on": where,
        "margin": round(m["margin"], 4),
        "margin_lo": round(m["margin_lo"], 4),
        "margin_hi": round(m["margin_hi"], 4),
        "win_rate": round(m["win_rate"], 4),
        "win_rate_lo": round(m["win_rate_lo"], 4),
        "win_rate_hi": round(m["win_rate_hi"], 4),
        "per_hand": {side: {c: round(m[f"{side}_{c}"], 4) for c in CATEGORY_KEYS} for side in ("learner", "opponent")},
    }


BASELINES = ("random", "greedy", "heuristic")
"""The compiled baselines every card is evaluated against."""


def baseline_results(play, pairs: int) -> list[dict]:
    """The card rows against :data:`BASELINES`; ``play(opponent)`` returns a compiled evaluation's report."""
    from train.evaluation import flat_metrics

    return [result_row(opp, flat_metrics(play(opp)), pairs, "compiled core, whole games") for opp in BASELINES]


def write_card(dest: Path, meta: dict, cfg: dict, config: str, results: list[dict], **fields) -> Path:
    """Write ``dest``'s card: the entry's game, recipe and results, ``fields`` in between, and its weights' hash."""
    card = {
        "name": dest.name,
        "rules": meta["rules"],
        "num_players": meta["num_players"],
        "algo": meta["algo"],
        "config": config,
        "run": cfg["name"],
        "seed": cfg["seed"],
        **fields,
        "evaluation_seed": CARD_SEED,
        "results": results,
        "weights_sha256": weights_sha256(dest),
    }
    (dest / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    return dest


def make_entry(
    name: str, run_dir: Path, pairs: int, config: str, progress: bool = True, cpu_hours: float | None = None
) -> Path:
    from train.checkpoint import read_meta

    if read_meta(run_dir).get("algo") in ("ppo", "dqn"):
        if cpu_hours is None:
            raise ValueError("a PPO or DQN run does not count its CPU time: give --cpu-hours")
        return make_policy_entry(name, Path(run_dir), pairs, config, cpu_hours, progress)
    return make_dmc_entry(name, run_dir, pairs, config, progress)


def make_policy_entry(
    name: str, run_dir: Path, pairs: int, config: str, cpu_hours: float, progress: bool = True
) -> Path:
    """A PPO or DQN entry from ``run_dir`` (its ``best``) with its card (see the module docstring)."""
    from train.checkpoint import find_checkpoint
    from train.fast_eval import evaluate_fast
    from train.zoo.policies import batch_policy, export_checkpoint, load_network

    src = find_checkpoint(run_dir)
    run_dir = src.parent
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    dest = ZOO_DIR / name
    meta = export_checkpoint(src, dest)
    if meta["num_players"] != 2:
        raise ValueError(f"{run_dir}: the compiled evaluation of a PPO or DQN entry plays 2 players")
    net, meta = load_network(dest)
    policy = batch_policy(net, meta)
    results = baseline_results(
        lambda opp: evaluate_fast(policy, opp, pairs, meta["rules"], CARD_SEED, meta["action_mode"], progress=progress),
        pairs,
    )
    return write_card(
        dest,
        meta,
        cfg,
        config,
        results,
        pretrain=cfg.get("pretrain", ""),
        decisions_trained=meta.get("timestep", 0),
        cpu_hours=round(cpu_hours, 4),
        network=f"policy_net {meta['policy_net']}, net_arch {meta['net_arch']}"
        + (" (actor and critic)" if meta["algo"] == "ppo" else " (Q-network)")
        + f", action_mode {meta['action_mode']}",
    )


def _copy_and_measure(name: str, src: Path, meta: dict, pairs: int, progress: bool) -> tuple[Path, list[dict]]:
    """Copy a DMC checkpoint's weights and metadata to ``zoo:name`` and play the card's baselines."""
    from train.fast_eval import evaluate_fast_sides

    dest = ZOO_DIR / name
    dest.mkdir(parents=True, exist_ok=True)
    for f in (WEIGHTS_FILE, META_FILE):
        shutil.copyfile(src / f, dest / f)
    policy, _ = load_dmc_batch_policy(dest)
    results = baseline_results(
        lambda opp: evaluate_fast_sides(
            policy, opp, pairs, meta["num_players"], meta["rules"], CARD_SEED, progress=progress
        ),
        pairs,
    )
    return dest, results


def make_dmc_entry(name: str, run_dir: Path, pairs: int, config: str, progress: bool = True) -> Path:
    src = find_dmc_checkpoint(run_dir)
    if (src / FIT_REPORT).is_file():
        return make_endgame_entry(name, src, pairs, progress)
    # the run folder: best/ and latest/ sit in it, a kept evaluation in its evaluated/ folder
    run_dir = src.parent if (src.parent / "config.yaml").exists() else src.parent.parent
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    meta = json.loads((src / META_FILE).read_text())
    dest, results = _copy_and_measure(name, src, meta, pairs, progress)
    state = json.loads((run_dir / "latest" / "state.json").read_text())
    return write_card(
        dest,
        meta,
        cfg,
        config,
        results,
        decisions_trained=meta["timestep"],
        # a run started from another network (init_weights) costs that one's CPU-hours too
        cpu_hours=meta.get("cpu_hours_with_init", meta.get("cpu_hours", round(state["cpu_seconds"] / 3600, 4))),
        network={"trunk": meta["trunk"], "head": meta["net_arch"]},
    )


def make_endgame_entry(name: str, src: Path, pairs: int, progress: bool = True) -> Path:
    """An entry from a checkpoint of :mod:`train.dmc.endgame_fit` (a zoo network with an endgame network):
    its card names the start's recipe and the fit, and counts the CPU-hours of both."""
    if not (src / START_CARD).is_file():
        raise ValueError(f"{src}: its endgame fit did not start from a zoo network, so it has no start's card")
    fit = json.loads((src / FIT_REPORT).read_text())
    start = json.loads((src / START_CARD).read_text())
    meta = json.loads((src / META_FILE).read_text())
    dest, results = _copy_and_measure(name, src, meta, pairs, progress)
    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in fit["config"].items() if k not in ("start", "out"))
    return write_card(
        dest,
        meta,
        {"name": start["run"], "seed": start["seed"]},
        start["config"],
        results,
        decisions_trained=start["decisions_trained"],
        cpu_hours=round(start["cpu_hours"] + fit["cpu_hours"], 4),
        network={"trunk": meta["trunk"], "head": meta["net_arch"], "endgame": meta["endgame"]["arch"]},
        endgame={
            "start": fit["start"],
            "command": f"python -m train.dmc.endgame_fit {fit['start']} OUT {flags}",
            "moves": meta["endgame"]["moves"],
            "cpu_hours": round(fit["cpu_hours"], 4),
            # a fit that went on from another endgame network (--init): moves and CPU-hours count it too
            **({"init": meta["endgame"]["init"]} if "init" in meta["endgame"] else {}),
        },
    )


def add_result(name: str, opponent: str, report_file: Path) -> None:
    """Add (or replace) the card's row against ``opponent`` from a ``scopa eval --json`` report."""
    from train.evaluation import flat_metrics

    path = ZOO_DIR / name / CARD_FILE
    card = json.loads(path.read_text())
    report = json.loads(report_file.read_text())
    m = flat_metrics(report)
    engine = report.get("config", {}).get("engine", "Python harness")
    pairs = int(report["deals"]) if isinstance(report.get("deals"), int) else int(m["games"]) // 2
    row = result_row(opponent, m, pairs, f"{engine} (scopa eval), whole games")
    card["results"] = [r for r in card["results"] if r["opponent"] != opponent] + [row]
    path.write_text(json.dumps(card, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.zoo.make", description=__doc__.split("\n\n")[0])
    p.add_argument("name", help="zoo name, e.g. standard-2p")
    p.add_argument("run", nargs="?", help="run folder (its best/) or checkpoint folder")
    p.add_argument("--pairs", type=int, default=10_000, help="duplicate deal pairs per baseline")
    p.add_argument("--config", default="", help="the config the run came from, as the card names it")
    p.add_argument("--cpu-hours", type=float, help="a PPO or DQN run's training CPU-hours (DMC runs count their own)")
    p.add_argument("--add-result", metavar="SPEC=FILE", action="append", default=[], help="a scopa eval --json report")
    args = p.parse_args(argv)
    try:
        if args.run:
            config = args.config or f"configs/{Path(args.run).name}.yaml"
            dest = make_entry(args.name, Path(args.run), args.pairs, config, cpu_hours=args.cpu_hours)
            print(f"zoo:{args.name} -> {dest}")
        for item in args.add_result:
            spec, _, file = item.rpartition("=")
            add_result(args.name, spec, Path(file))
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
