"""Fixtures shared by the test modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Ray runs its worker processes at nice 15 by default; beside pytest-xdist's workers on a small
# machine they then get almost no CPU and the Ray tests (tests/test_eval_ray.py, tests/test_dmc_ray.py)
# crawl or time out. Every local Ray the tests start, in this process or a `scopa` subprocess, runs
# its workers at the tests' own priority.
os.environ.setdefault("RAY_worker_niceness", "0")

# The helper modules the test files import (tests/variant_helpers.py and the like) assert too: their
# failures get pytest's explanations, as in a test module.
pytest.register_assert_rewrite("checkpoint_helpers", "cli_helpers", "openspiel_helpers", "variant_helpers")


def pytest_runtest_teardown(item):
    """Once ``absl.logging`` is loaded, its handler writes to the real stderr.

    absl (imported by OpenSpiel's Python algorithms: tests/test_openspiel_bots.py) gives its handler
    the ``sys.stderr`` of the moment it is imported, under pytest a capture file. When logging is
    configured again in the same process (uvicorn's ``dictConfig`` under ``scopa web``:
    tests/test_cli.py::test_web_binds_before_it_prints), ``logging`` closes every handler, and absl's
    closes its stream unless it is the current ``sys.stderr``: pytest's own capture file was closed,
    and every later test of the process failed with "I/O operation on closed file". absl never
    closes ``sys.__stderr__``.
    """
    absl_logging = sys.modules.get("absl.logging")
    if absl_logging is not None:
        absl_logging.get_absl_handler().python_handler.stream = sys.__stderr__


def pytest_collection_modifyitems(config, items):
    """A notebook whose metadata says ``"scopa": {"slow": true}`` is in the slow tier, like a test
    marked ``@pytest.mark.slow`` (nbmake gives notebooks no other place for a marker)."""
    for item in items:
        path = Path(str(item.fspath))
        if path.suffix == ".ipynb" and json.loads(path.read_text()).get("metadata", {}).get("scopa", {}).get("slow"):
            item.add_marker(pytest.mark.slow)


TINY_FAST_TRAINING = [
    "vec_env=fast",
    "opponents=greedy",
    "total_timesteps=512",
    "n_envs=8",
    "n_steps=32",
    "batch_size=64",
    "n_epochs=1",
    "net_arch=[32]",
    "eval_every=256",
    "eval_pairs=2",
    "final_eval_pairs=1",
    "learning_starts=64",
    "buffer_size=512",
    "target_update_interval=64",
    "progress_bar=false",
    "eval_opponents=[random]",
]
"""Overrides of ``configs/quickstart.yaml`` for a training run on the compiled core that takes seconds."""


@pytest.fixture
def tiny_fast_config(tmp_path):
    """``tiny_fast_config(*overrides)``: the quickstart config on the compiled core at a tiny
    budget, writing its runs under ``tmp_path``; later overrides win."""
    from train.config import TrainConfig

    def load(*overrides: str):
        return TrainConfig.load(
            ROOT / "configs" / "quickstart.yaml", [f"runs_dir={tmp_path}", *TINY_FAST_TRAINING, *overrides]
        )

    return load


def _run_scopa(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scopa_app.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def scopa_cli():
    """``scopa_cli(*args)``: the ``scopa`` command run in a subprocess from the repository root."""
    return _run_scopa
