"""``scopa train``: train an agent from a YAML config, or resume a run.

::

    scopa train configs/quickstart.yaml                  # runs/quickstart/
    scopa train configs/ppo_vs_heuristic.yaml seed=3 total_timesteps=2e6 name=ppo_h_s3
    scopa train --resume runs/quickstart total_timesteps=400000
    scopa train --help-config                            # every key, its default and meaning
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

# RLlib backend (train/rllib, docs/rllib.md): importing it registers the rllib:PATH agents
# for scopa eval/play; run_train hands configs with `backend: rllib` to rllib_dispatch.
from train.rllib.cli import rllib_dispatch


def add_train_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "train",
        help="train a masked PPO or DQN agent from a YAML config (see configs/)",
        description="Train from CONFIG (YAML) with key=value overrides; writes runs/<name>/.",
    )
    p.add_argument("config", nargs="?", help="YAML config (e.g. configs/quickstart.yaml)")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="override any config key")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR (runs/<name>)")
    p.add_argument("--no-report", action="store_true", help="skip the final evaluation and report.md")
    p.add_argument(
        "--report",
        metavar="RUN_DIR",
        help="only (re)write RUN_DIR/report.md and its plots (e.g. after stopping a run); final_eval_pairs=N allowed",
    )
    p.add_argument("--help-config", action="store_true", help="list every config key and exit")
    p.set_defaults(func=run_train)
    return p


def run_train(args: argparse.Namespace) -> int:
    from train.config import describe_fields

    if args.help_config:
        print(describe_fields())
        return 0
    config, overrides = args.config, list(args.overrides)
    # `scopa train --resume runs/x total_timesteps=1e6`: argparse puts the first override in `config`.
    if config is not None and "=" in config and not config.endswith((".yaml", ".yml")):
        overrides.insert(0, config)
        config = None
    if args.report:
        return _report_only(args.report, overrides)
    where: dict[str, Path | str | None] = {"run_dir": Path(args.resume) if args.resume else None, "backend": None}
    try:
        return _train(args, config, overrides, where)
    except KeyboardInterrupt:
        run_dir = where["run_dir"] if where["run_dir"] is not None else _run_dir_of(config, overrides)
        print("\n" + interrupted_message(run_dir, config, overrides, where["backend"]), file=sys.stderr)
        return 130


def _train(args: argparse.Namespace, config: str | None, overrides: list[str], where: dict) -> int:
    from train.config import ConfigError, TrainConfig, read_yaml

    # The files every backend reads, read once here so that a broken one (bad YAML, nested too
    # deeply) is the same one line whichever backend would have read it first.
    try:
        for path in (config, args.resume and Path(args.resume) / "config.yaml"):
            if path and Path(path).is_file():
                read_yaml(path)
    except ConfigError as exc:
        print(f"scopa train: error: {exc}", file=sys.stderr)
        return 2
    # Deep Monte-Carlo (train/dmc/learner.py): configs with `algo: dmc` and DMC run folders.
    from train.dmc import dmc_dispatch

    status = dmc_dispatch(config, overrides, args.resume, report=not args.no_report)
    if status is not None:
        return status
    # RLlib backend: configs with `backend: rllib` run on Ray RLlib (None: not an RLlib config).
    where["backend"] = "rllib"
    status = rllib_dispatch(config, overrides, resume=args.resume)
    if status is not None:
        return status
    where["backend"] = None
    try:
        if args.resume:
            from train.run import resume_config

            cfg = resume_config(args.resume, config, overrides)
        else:
            if config is None:
                print("scopa train: error: give a CONFIG (see configs/) or --resume RUN_DIR", file=sys.stderr)
                return 2
            cfg = TrainConfig.load(config, overrides)
        cfg.check_agents()
    except ConfigError as exc:
        print(f"scopa train: error: {exc}", file=sys.stderr)
        return 2
    from train.sb3.trainer import train

    where["run_dir"] = Path(cfg.runs_dir) / cfg.name
    run = train(cfg, resume=bool(args.resume), report=not args.no_report)
    print(f"run folder: {run.dir}" + ("" if args.no_report else f" (report: {run.dir / 'report.md'})"))
    return 0


def interrupted_message(
    run_dir: Path | None, config: str | None = None, overrides: Sequence[str] = (), backend: str | None = None
) -> str:
    """What Ctrl-C during ``scopa train`` leaves, and the command that goes on from there (one line)."""
    again = shlex.join(["scopa", "train", *([config] if config else []), *overrides])
    if run_dir is None:
        return f"scopa train: interrupted; start again with `{again}`"
    latest = run_dir / "latest"
    state = latest / "state.json"
    if not state.is_file():
        saved = run_dir / "config.yaml"
        if saved.is_file():
            again = shlex.join(["scopa", "train", str(saved)])
        return f"scopa train: interrupted before the first checkpoint (no {latest} yet); start again with `{again}`"
    try:
        step = f" (step {int(json.loads(state.read_text())['timestep']):,})"
    except (OSError, ValueError, KeyError, TypeError):
        step = ""
    if backend == "rllib":
        return (
            f"scopa train: interrupted; {latest} holds the last checkpoint{step}, which `scopa eval rllib:{run_dir}` "
            f"plays (the RLlib backend does not resume runs)"
        )
    from train.dmc.config import is_dmc_run

    report = "" if is_dmc_run(str(run_dir)) else f", or write its report with `scopa train --report {run_dir}`"
    return (
        f"scopa train: interrupted; {latest} holds the last checkpoint{step}: continue with "
        f"`scopa train --resume {run_dir}`{report}"
    )


def _run_dir_of(config: str | None, overrides: list[str]) -> Path | None:
    """The run folder a config names (``runs_dir/name``), or None when it cannot be read."""
    if config is None:
        return None
    from train.config import TrainConfig
    from train.dmc.config import DmcConfig, is_dmc_config
    from train.rllib.cli import load_rllib_config

    try:
        loaded = load_rllib_config(config, overrides)
        if loaded is not None:
            return Path(loaded[1])
        cfg = (DmcConfig if is_dmc_config(config, overrides) else TrainConfig).load(config, overrides)
    except Exception:  # the config was read once already; a failure now only loses the folder's name
        return None
    return Path(cfg.runs_dir) / cfg.name


def _report_only(run_dir: str, overrides: list[str]) -> int:
    from train.config import ConfigError, TrainConfig, parse_overrides
    from train.report import write_report

    try:
        extra = parse_overrides(overrides)
        if set(extra) - {"final_eval_pairs"}:
            raise ConfigError(f"--report accepts only final_eval_pairs=N, got {sorted(extra)}")
        if not (Path(run_dir) / "latest" / "state.json").is_file():
            raise ConfigError(f"{run_dir!r} is not a run folder with a checkpoint")
        cfg = TrainConfig.load(Path(run_dir) / "config.yaml")
        pairs = int(extra.get("final_eval_pairs", cfg.final_eval_pairs))
    except (ConfigError, ValueError) as exc:
        print(f"scopa train: error: {exc}", file=sys.stderr)
        return 2
    print(f"report: {write_report(run_dir, final_pairs=pairs, progress=True)}")
    return 0
