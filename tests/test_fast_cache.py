"""numba's on-disk cache of the compiled core sees a change in any file a kernel is built from
(scopa_env/fast/cache.py), not only in the kernel's own file as numba alone does.

The cache runs are in fresh processes over a copy of the package, each with its own
``NUMBA_CACHE_DIR``; the copy's helper is edited between them, as a developer would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.registry import CPUDispatcher

from scopa_env.fast import cache, core, features, search, sources

ROOT = Path(__file__).resolve().parents[1]

# core.card_capture lives in captures.py; its table subsets add up card ranks through bits._rank.
# A Four (id 3) on a table of an Ace (id 0) and a Three (id 2) takes both (mask 0b101 = 5).
PROBE = (
    "from scopa_env.fast import core\n"
    "f = core.card_capture\n"
    "print(core.__file__)\n"
    "print(f(3, 0b101, 1, 0), sum(f.stats.cache_hits.values()))\n"
)
HELPER = "    return card % RANK_SPAN + 1\n"  # bits._rank's last line: a card's own rank
EDITED = "    return card % RANK_SPAN + 2\n"  # every table card a rank higher: the Three counts 4


def _copy_package(to: Path) -> Path:
    """The package's sources (no caches, no built extensions) copied under ``to``."""
    shutil.copytree(
        ROOT / "scopa_env", to / "scopa_env", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.nbi", "*.nbc")
    )
    return to


def _probe(tree: Path, cache_dir: Path, **env) -> tuple[str, int, int]:
    """``(core's file, card_capture's answer, cache hits)`` of a fresh process importing ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(cache_dir), **env)
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=tree, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    where, line = out.stdout.splitlines()[-2:]
    answer, hits = map(int, line.split())
    return where, answer, hits


@pytest.mark.slow  # cold compiles in a copy of the package
def test_a_helper_changed_in_another_file_is_compiled_afresh(tmp_path):
    """Edit ``bits._rank`` in a copy: ``captures.card_capture``'s cached code is not reused, its answer
    follows the edit. numba's own locator (``NUMBA_CACHE_LOCATOR_CLASSES`` names it alone) reuses
    the stale code: the control that shows the mechanism is what makes the difference."""
    tree = _copy_package(tmp_path / "tree")
    ours, numbas = tmp_path / "ours", tmp_path / "numbas"
    numba_only = {"NUMBA_CACHE_LOCATOR_CLASSES": "UserProvidedCacheLocator"}

    where, answer, hits = _probe(tree, ours)
    assert Path(where).is_relative_to(tree), f"the probe imported {where}, not the copy"
    assert (answer, hits) == (5, 0), "first run: compiled, the Four takes the Ace and the Three"
    assert _probe(tree, ours)[1:] == (5, 1), "nothing changed: the cache is used"
    assert _probe(tree, numbas, **numba_only)[1:] == (5, 0)

    bits = tree / "scopa_env" / "fast" / "core" / "bits.py"
    text = bits.read_text()
    assert text.count(HELPER) == 1, "bits._rank changed: update HELPER"
    bits.write_text(text.replace(HELPER, EDITED))

    assert _probe(tree, ours)[1:] == (4, 0), "the edit in bits.py is compiled: the Four takes the Three alone"
    assert _probe(tree, numbas, **numba_only)[1:] == (5, 1), "numba alone keeps the stale code"


def test_every_kernel_takes_the_locator():
    """Every cached kernel of the compiled core, the search and the features is stamped with its
    kernel sources: the locator was installed before any of them was defined."""
    modules = [m for n, m in sorted(sys.modules.items()) if n.startswith(core.__name__ + ".")]
    assert len(modules) >= 8, [m.__name__ for m in modules]
    dispatchers = [
        (module.__name__, name, obj)
        for module in (*modules, search, features)
        for name, obj in vars(module).items()
        if isinstance(obj, CPUDispatcher)
    ]
    assert len(dispatchers) > 100
    for module, name, dispatcher in dispatchers:
        locator = dispatcher._cache._impl.locator
        assert isinstance(locator, cache.KernelSourcesLocator), f"{module}.{name}: {type(locator).__name__}"


def test_kernel_sources_follow_the_imports():
    """A module's sources are itself and what it imports from scopa_env.fast, transitively: the
    search's include every module of the core but the AEC env's row (core/row.py, which only the env
    helpers' build holds: its own sources are the play, capture and observation modules it calls);
    captures' only the modules it builds on."""
    fast = ROOT / "scopa_env" / "fast"
    core_files = {p for p in (fast / "core").glob("*.py") if p.name != "row.py"}
    assert core_files <= set(sources.kernel_sources(fast / "search.py"))
    assert core_files <= set(sources.kernel_sources(fast / "features.py"))
    row = {p.name for p in sources.kernel_sources(fast / "core" / "row.py")}
    assert {"row.py", "game.py", "captures.py", "observation.py", "layout.py"} <= row, row
    names = {p.name for p in sources.kernel_sources(fast / "core" / "captures.py")}
    assert names == {"captures.py", "bits.py", "layout.py"}, names
