"""numba's on-disk cache for the kernels of ``scopa_env.fast``, keyed on every file they are built from.

numba's ``cache=True`` stamps a function's cached machine code with its own source file only,
yet a kernel holds the code of the njit functions it calls (inlined or not) and the constants it
reads from other modules: a change to a helper in ``scopa_env/fast/core/bits.py`` would leave
every cached kernel of the other files as it was. :class:`KernelSourcesLocator` adds to that
stamp the hash of every file the function's module imports from ``scopa_env.fast``, transitively
(:func:`scopa_env.fast.sources.kernel_sources`), so a change in any of them compiles afresh.

Importing this module installs the locator (:func:`install`): :mod:`scopa_env.fast.core` imports
it first, before any kernel is defined. The locator takes only functions defined in
``scopa_env/fast``; where they are cached (``NUMBA_CACHE_DIR``, the package's ``__pycache__``, the
user's cache directory) stays numba's choice. ``NUMBA_CACHE_LOCATOR_CLASSES``, which replaces
numba's list of locators, leaves it out.
"""

from __future__ import annotations

import functools
from pathlib import Path

from numba.core import caching

from scopa_env.fast.sources import digest, kernel_sources

PACKAGE_DIR = Path(__file__).resolve().parent
"""Functions whose file is below this directory (``scopa_env/fast``) are this locator's."""

_digest = functools.cache(digest)  # once per set of files and process: every kernel of a module shares it


class KernelSourcesLocator(caching._CacheLocator):
    """numba's own locator for the function (the first of its list that takes it), with the hash
    of the function's kernel sources added to its source stamp."""

    def __init__(self, inner: caching._CacheLocator, py_file: Path):
        self._inner = inner
        self._sources = kernel_sources(py_file)

    def ensure_cache_path(self):
        self._inner.ensure_cache_path()

    def get_cache_path(self):
        return self._inner.get_cache_path()

    def get_source_stamp(self):
        return self._inner.get_source_stamp(), _digest(self._sources)

    def get_disambiguator(self):
        return self._inner.get_disambiguator()

    @classmethod
    def from_function(cls, py_func, py_file):
        path = Path(py_file).resolve()
        if PACKAGE_DIR not in path.parents or not path.is_file():
            return None
        for other in _locator_classes():
            if other is not cls:
                inner = other.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner, path)
        return None


def _locator_classes() -> list:
    """numba's list of cache locators, tried in order (every cached function's ``CacheImpl`` reads it)."""
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # named _CacheImpl before numba 0.59
    return impl._locator_classes


def install() -> None:
    """Put :class:`KernelSourcesLocator` first in numba's list of locators (once)."""
    classes = _locator_classes()
    if KernelSourcesLocator not in classes:
        classes.insert(0, KernelSourcesLocator)


install()
