"""Ahead-of-time compiled row loops: the compiled core's first step without the JIT's compile.

``pip install`` builds the extensions ``scopa_env.fast._aot_plain``, ``_aot_opponents`` and
``_aot_heuristic`` (``setup.py``'s ``build_ext``, about 20 s) with ``numba.pycc``: the row loop
:func:`core.batch_rows` exported with the argument types of a standard-capture batch (no decision
rule, ``STD`` an array and ``VAR`` None), without compiled opponents, with them, and with the
heuristic among them (:data:`SPECS`), for the CPU it is built on. A single-thread
:class:`~scopa_env.fast.batch.BatchedScopa` whose arguments have those types resets and steps
through it, so a fresh process on an empty numba cache starts in a fraction of a second instead
of compiling for several. Everything else stays on the JIT: other presets, several threads (the
JIT's loop releases the GIL), observe and choose, the search kernels; so does everything when an
extension is missing (no C compiler at install: the build only warns), stale (its
:func:`source_hash`, of the compiled core's source and the numba and numpy versions, differs from
the installed one's) or switched off with ``SCOPA_AOT=0``.

Build by hand (into the package, where the loader looks): ``python -m scopa_env.fast.aot``
(``SCOPA_AOT_CPU=generic`` for machines other than this one).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import sys
from pathlib import Path

import numpy as np

from scopa_env.fast import core

PREFIX = "_aot_"
"""The extensions' names inside ``scopa_env.fast``: this prefix and a :data:`SPECS` key."""
ENV_SWITCH = "SCOPA_AOT"
"""``SCOPA_AOT=0`` keeps every batch on the JIT (to measure it, or to rule the extensions out)."""
SPECS = {
    "plain": None,
    "opponents": "greedy",
    "heuristic": "heuristic",
}
"""Exported row loops, one extension each (pycc fails to type one loop for several signatures in
one module), by the ``opponent`` of the standard 2-player batch whose argument types they take:
``None``, no compiled opponent; ``"greedy"``, opponents without the heuristic's weights (as
``random`` and ``greedy`` pass); ``"heuristic"``, with them. The number of players, the mode,
the rules (the standard captures, no decision rule) and the batch size are data."""


@functools.cache
def source_hash() -> int:
    """A 63-bit hash of the compiled core's source and the numba and numpy versions: an extension
    is used only while it equals the one it was built with (a build environment's numba or numpy
    other than the installed ones counts as stale too). Read once per process."""
    import numba

    stamp = Path(core.__file__).read_bytes() + f"|numba {numba.__version__}|numpy {np.__version__}".encode()
    return int.from_bytes(hashlib.sha256(stamp).digest()[:8], "little") >> 1


def _signature(opponent: str | None):
    """The numba signature of :func:`core.batch_rows` for a standard batch with ``opponent``."""
    from numba import typeof, types

    from scopa_env.fast.batch import BatchedScopa

    batch = BatchedScopa(1, 2, opponent=opponent)
    args = batch._kernel_args(np.zeros(1, np.int64), batch._obs)
    return types.UniTuple(types.int64, 2)(*([types.int64] * 4 + [typeof(a) for a in args]))


def build(output_dir: str | Path, target_cpu: str = "host") -> list[Path]:
    """Compile every :data:`SPECS` extension into ``output_dir``; returns their paths."""
    return [build_one(name, output_dir, target_cpu) for name in SPECS]


def build_one(name: str, output_dir: str | Path, target_cpu: str = "host") -> Path:
    """Compile the extension of :data:`SPECS` entry ``name`` into ``output_dir``; returns its path.
    ``target_cpu="host"`` tunes it for this machine (a wheel for other machines wants
    ``"generic"``, about a quarter slower)."""
    from numba.pycc import CC

    stamp = source_hash()

    def built_hash():
        return stamp

    cc = CC(PREFIX + name)
    cc.output_dir = str(output_dir)
    cc.target_cpu = target_cpu
    cc.verbose = False
    cc.export("rows", _signature(SPECS[name]))(core.batch_rows.py_func)
    cc.export("source_hash", "i8()")(built_hash)
    cc.compile()
    return Path(cc.output_dir) / cc.output_file


@functools.cache
def load(name: str):
    """The built extension of :data:`SPECS` entry ``name``, or None where it is missing (a
    failed build leaves an empty file, which fails to import) or stale."""
    try:
        module = importlib.import_module(f"scopa_env.fast.{PREFIX}{name}")
    except (ImportError, OSError):
        return None
    if module.source_hash() != source_hash():
        return None
    return module


def rows_for(args: tuple):
    """The ahead-of-time row loop taking ``args`` (``BatchedScopa._kernel_args``), else None
    (none takes them, or it is missing, stale or switched off with ``SCOPA_AOT=0``)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    from numba import typeof

    kinds = tuple(typeof(a) for a in args)
    for name, opponent in SPECS.items():
        if _arg_types(opponent) == kinds:
            module = load(name)
            return None if module is None else module.rows
    return None


@functools.cache
def _arg_types(opponent: str | None) -> tuple:
    return tuple(_signature(opponent).args[4:])


def main() -> None:
    target = Path(__file__).parent
    for path in build(target, os.environ.get("SCOPA_AOT_CPU", "host")):
        print(f"built {path.name} in {target}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
