"""The source files a compiled kernel is built from, and one hash of them.

numba compiles a kernel together with every njit function it calls and every global it reads,
wherever they are defined: a kernel of :mod:`scopa_env.fast.search` holds code and constants of
:mod:`scopa_env.fast.core`'s modules. :func:`kernel_sources` follows a file's module-level imports
inside ``scopa_env.fast`` (``from scopa_env.fast.core.bits import popcount``, ``from scopa_env.fast
import core``), transitively, and :func:`digest` hashes what it finds. The numba cache
(:mod:`scopa_env.fast.cache`) and the ahead-of-time build's staleness stamp
(:func:`scopa_env.fast.aot.source_hash`) both key on it, so an edit in any of those files is seen.

Imports inside functions are not followed: a kernel reads its module's globals only. Reading
the files imports nothing (no numba either: :mod:`scopa_env.fast.aot` uses this without it).
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

PACKAGE = "scopa_env.fast"
"""Imports of this package and its modules are followed; any other import is not."""
ROOT = Path(__file__).resolve().parents[2]
"""The directory that holds ``scopa_env``: module names resolve to files below it."""


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` below :data:`ROOT` (a package's ``__init__.py``), else None."""
    relative = Path(*name.split("."))
    for candidate in (ROOT / relative.with_suffix(".py"), ROOT / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path) -> list[str]:
    """The dotted package ``path`` is in (its own name for an ``__init__.py``), as parts."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1]


_IMPORT = re.compile(r"^import[ \t]+([\w., \t]+)$|^from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
"""A module-level (unindented) import statement: ``import a.b, c`` or ``from a import b, c``."""


@functools.cache
def _imports(path: Path) -> tuple[Path, ...]:
    """The files of :data:`PACKAGE` that ``path`` imports at module level (read by :data:`_IMPORT`,
    a tenth of the time of parsing the file; an import quoted in a docstring only adds a file)."""
    names: list[str] = []
    for plain, base, what in _IMPORT.findall(path.read_text()):
        if plain:
            names += [n.split(" as ")[0].strip() for n in plain.split(",")]
            continue
        dots = len(base) - len(base.lstrip("."))
        if dots:  # relative: from the package of ``path``, ``dots - 1`` packages up
            package = _package_of(path)
            package = package[: len(package) - (dots - 1)]
            base = ".".join([*package, base[dots:]] if base[dots:] else package)
        names.append(base)
        for item in re.sub(r"#[^\n]*", "", what).strip("()").replace("\n", ",").split(","):
            name = item.split(" as ")[0].strip()
            if name:
                names.append(f"{base}.{name}")  # ``from package import module``
    found = {_module_file(n) for n in names if n == PACKAGE or n.startswith(PACKAGE + ".")}
    return tuple(sorted(f for f in found if f is not None))


def kernel_sources(*paths: str | Path) -> tuple[Path, ...]:
    """``paths`` and every file of :data:`PACKAGE` they import at module level, transitively, sorted."""
    seen: set[Path] = set()
    todo = [Path(p).resolve() for p in paths]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += _imports(path)
    return tuple(sorted(seen))


def digest(paths: tuple[Path, ...]) -> bytes:
    """sha256 of the files ``paths``, each by its path (below :data:`ROOT` where it is there) and bytes."""
    h = hashlib.sha256()
    for path in paths:
        data = path.read_bytes()
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        h.update(f"{name.as_posix()}|{len(data)}|".encode())
        h.update(data)
    return h.digest()
