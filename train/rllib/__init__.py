"""Training on Ray RLlib: ``scopa train CONFIG`` with ``backend: rllib`` (see docs/rllib.md).

::

    from train.rllib import run
    run({"backend": "rllib", "opponents": "greedy", "total_timesteps": 100_000}, Path("runs/rl"))

* :func:`run` trains masked PPO (RLlib's new API stack) on the Scopa AEC env through
  RLlib's ``PettingZooEnv``, against the same opponents as the SB3 path, and evaluates
  with the same duplicate-deal harness and metrics (:mod:`train.rllib.trainer`).
* :func:`validate_config` checks a config mapping (unknown keys list the valid ones).
* Importing the package registers the ``rllib:PATH`` checkpoint agents (torch only).

Importing this package never needs ray; :func:`run` without ray prints one line naming
the extra to install.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from train.config import ConfigError
from train.rllib.config import BACKEND, RllibConfig, validate_config

RAY_MISSING = 'ray[rllib] is not installed: pip install -e ".[rllib]"'
EXIT_BAD_INPUT = 2


def ray_available() -> bool:
    """Whether RLlib can be imported: ray, and dm-tree (``tree``), which only the ``rllib`` extra installs
    (Ray's core alone, in the ``all`` extra for the evaluations' ``--ray``, does not make RLlib importable)."""
    return importlib.util.find_spec("ray") is not None and importlib.util.find_spec("tree") is not None


def run(config: dict, run_dir: Path) -> int:
    """Train an RLlib run described by ``config`` into ``run_dir``; returns the exit status.

    ``run_dir`` fixes the run's ``name`` and ``runs_dir``. Bad input (an unknown key, a
    missing ray install, an unreachable cluster) prints one line on stderr and returns 2.
    """
    from train.rllib.trainer import ClusterUnreachable  # noqa: F401  (ray-free module top)

    run_dir = Path(run_dir)
    data = {**dict(config or {}), "name": run_dir.name, "runs_dir": str(run_dir.parent)}
    try:
        cfg = validate_config(data, str(data.get("name")))
    except ConfigError as exc:
        return _fail(str(exc))
    if not ray_available():
        return _fail(RAY_MISSING)
    from train.rllib.trainer import train

    try:
        return train(cfg, run_dir)
    except (ConfigError, ClusterUnreachable) as exc:
        return _fail(str(exc))


def _fail(message: str) -> int:
    print(f"scopa train: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


__all__ = ["BACKEND", "RAY_MISSING", "RllibConfig", "run", "validate_config"]
