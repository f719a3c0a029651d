"""Old import paths of modules that moved in the layered layout (0.2), kept working.

``import scopa_env.game`` still gives :mod:`scopa_env.engine.game` (the same module object, so
classes and patches are shared), and ``python -m scopa_env.fast.aot``-style runs of a moved
module still work. Each old path warns once with a :class:`DeprecationWarning` naming the new one.

One entry points up a layer, ``scopa_env.play`` (the terminal game, now in the applications
package): the import contract (``tests/test_layers.py``) allows exactly the entries of
:data:`UPWARD` and nothing else.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

MOVED: dict[str, str] = {
    "scopa_env.cards": "scopa_env.engine.cards",
    "scopa_env.rules": "scopa_env.engine.rules",
    "scopa_env.presets": "scopa_env.engine.presets",
    "scopa_env.scoring": "scopa_env.engine.scoring",
    "scopa_env.game": "scopa_env.engine.game",
    "scopa_env.actions": "scopa_env.engine.actions",
    "scopa_env.render": "scopa_env.engine.render",
    "scopa_env.observation": "scopa_env.engine.observation",
    "scopa_env.scopa_v0": "scopa_env.aec.scopa_v0",
    "scopa_env.openspiel_game": "scopa_env.openspiel.game",
    "scopa_env.fast.bench": "scopa_env.bench.fast",
    "scopa_env.play": "scopa_app.play",
}
"""Old module path -> where it lives now."""

UPWARD: frozenset[str] = frozenset({"scopa_env.play"})
"""Old paths that now name a module in a layer above :mod:`scopa_env` (allowed by the contract)."""


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module) -> None:  # the target module is already executed
        pass

    def get_code(self, fullname):  # for ``python -m OLD.PATH``
        return importlib.util.find_spec(self.target).loader.get_code(self.target)

    def is_package(self, fullname) -> bool:
        return False


class _MovedFinder(importlib.abc.MetaPathFinder):
    def __init__(self, moved: dict[str, str]) -> None:
        self.moved = moved

    def find_spec(self, fullname, path=None, target=None):
        new = self.moved.get(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new}; import it from there", DeprecationWarning, stacklevel=3)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install(moved: dict[str, str] = MOVED) -> None:
    """Put a finder of the old paths ``moved`` (old path -> new path) on ``sys.meta_path`` (once per table)."""
    if not any(isinstance(f, _MovedFinder) and f.moved is moved for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder(moved))
