"""The scripts under ``benchmarks/`` as modules, for the tests that call their functions.

The scripts are commands, not a package: each is loaded from its file under the name
``benchmarks_NAME``, registered in ``sys.modules`` so that its dataclasses can look their module up.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_benchmark(name: str) -> ModuleType:
    """The module of ``benchmarks/NAME.py``, loaded afresh."""
    module_name = f"benchmarks_{name}"
    spec = importlib.util.spec_from_file_location(module_name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
