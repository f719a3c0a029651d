"""Command-line entry points of the RLlib backend.

* :func:`rllib_dispatch`: what ``scopa train CONFIG`` calls first; it runs configs whose
  YAML (or overrides) say ``backend: rllib`` and returns ``None`` for the others.
* ``python -m train.rllib CONFIG [key=value ...]`` (:func:`main`): the same without the
  ``scopa`` command; ``--help-config`` lists every key.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from train.config import ConfigError, parse_overrides
from train.rllib.config import BACKEND, describe_fields


def load_rllib_config(config_path: str, overrides: list[str]) -> tuple[dict, Path] | None:
    """``(config mapping, run folder)`` of an RLlib config, or None when the file is for another backend.

    Raises:
        ConfigError: unreadable file or bad override.
    """
    p = Path(config_path)
    if not p.is_file():
        return None  # the SB3 loader reports the missing file
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{config_path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        return None
    data.update(parse_overrides(overrides))
    if data.get("backend") != BACKEND:
        return None
    name = data.pop("name", None) or p.stem
    runs_dir = data.pop("runs_dir", None) or "runs"
    return data, Path(runs_dir) / str(name)


def rllib_dispatch(config_path: str | None, overrides: list[str], resume: str | None = None) -> int | None:
    """Run ``config_path`` on RLlib when it says ``backend: rllib``; None otherwise (the caller goes on)."""
    if resume and _is_rllib_run(Path(resume)):
        print("scopa train: error: --resume is not supported for backend: rllib (start a new run)", file=sys.stderr)
        return 2
    if config_path is None:
        return None
    try:
        loaded = load_rllib_config(config_path, overrides)
    except ConfigError as exc:
        print(f"scopa train: error: {exc}", file=sys.stderr)
        return 2
    if loaded is None:
        return None
    if resume:
        print("scopa train: error: --resume is not supported for backend: rllib (start a new run)", file=sys.stderr)
        return 2
    from train.rllib import run

    data, run_dir = loaded
    return run(data, run_dir)


def _is_rllib_run(run_dir: Path) -> bool:
    try:
        saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(saved, dict) and saved.get("backend") == BACKEND


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="YAML config (e.g. configs/rllib_ppo_vs_greedy.yaml)")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="override any config key")
    p.add_argument("--help-config", action="store_true", help="list every config key and exit")


def _run_args(args: argparse.Namespace) -> int:
    if args.help_config:
        print(describe_fields())
        return 0
    if args.config is None:
        print("scopa train: error: give a CONFIG (see configs/rllib_*.yaml)", file=sys.stderr)
        return 2
    overrides = [*args.overrides, f"backend={BACKEND}"]
    status = rllib_dispatch(args.config, overrides)
    if status is None:  # only a missing file gets here
        print(f"scopa train: error: config file {args.config!r} not found", file=sys.stderr)
        return 2
    return status


def main(argv: list[str] | None = None) -> int:
    """``python -m train.rllib CONFIG [key=value ...]``."""
    p = argparse.ArgumentParser(prog="python -m train.rllib", description=__doc__.split("\n\n")[0])
    _arguments(p)
    return _run_args(p.parse_args(argv))
