"""Ahead-of-time compiled row loops and env helpers: the compiled core's first step without the
JIT's compile, and the AEC env's observation and card-play captures in one compiled call each.

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

The extension ``scopa_env.fast._aot_observe`` holds :func:`core.observe` for the Python engine's
parts (one int argument per seat's and side's value, one export per number of players and sides,
:data:`OBSERVERS`; :func:`_flat_observer`): the AEC
env's observers (:mod:`scopa_env.observation`) call it where it is built and fresh, and write the
observation in Python where it is not. It also holds the env's card-play turns under the standard
captures in the 40-card deck: :func:`core.card_capture` (a "select" env's named card's one
capture, :func:`card_capture`) and :func:`core.plain_move_ids` (a "move" env's legal ids,
:func:`move_ids`); the env asks the rules' Python where they are not built or the rules are not
theirs. Loading it imports no numba (this module imports numba only to build, and
``scopa_env.fast`` imports its batch on first use), so the env starts as fast as ever.

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

PREFIX = "_aot_"
"""The extensions' names inside ``scopa_env.fast``: this prefix and a name of :data:`EXTENSIONS`."""
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
OBSERVER = "observe"
"""The env helpers' extension (after :data:`PREFIX`): the observers, :func:`core.card_capture` and
:func:`core.plain_move_ids`."""
OBSERVERS = ((2, 2), (3, 3), (4, 2), (4, 4), (6, 2), (8, 8))
"""``(players, sides)`` of the observers exported (``observe_<players>_<sides>``): every preset's
(8 players: the 52-card deck); other rules write their observation in Python."""
EXTENSIONS = (*SPECS, OBSERVER)
"""Every extension ``setup.py`` builds (tests/test_aot.py holds its list equal to this)."""
CORE = Path(__file__).with_name("core.py")


@functools.cache
def source_hash() -> int:
    """A 63-bit hash of the compiled core's source and the numba and numpy versions: an extension
    is used only while it equals the one it was built with (a build environment's numba or numpy
    other than the installed ones counts as stale too). Read once per process, without importing
    numba (its installed version is read from the package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        numba = version("numba")
    except PackageNotFoundError:  # no numba: nothing compiled can match
        numba = "missing"
    stamp = CORE.read_bytes() + f"|numba {numba}|numpy {np.__version__}".encode()
    return int.from_bytes(hashlib.sha256(stamp).digest()[:8], "little") >> 1


def _signature(opponent: str | None):
    """The numba signature of :func:`core.batch_rows` for a standard batch with ``opponent``."""
    from numba import typeof, types

    from scopa_env.fast.batch import BatchedScopa

    batch = BatchedScopa(1, 2, opponent=opponent)
    args = batch._kernel_args(np.zeros(1, np.int64), batch._obs)
    return types.UniTuple(types.int64, 2)(*([types.int64] * 4 + [typeof(a) for a in args]))


_PER_SEAT_OR_SIDE = (("hand", 0), ("pile", 1), ("played", 0), ("revealed", 0), ("scope", 1), ("score", 1))
""":func:`core.observe`'s tuple arguments in order, each per seat (0) or per side (1)."""
_SCALARS = (
    "table, stock_left, dealer, current, last_capturer, pending, selected, deck_mask, target, hand_size, width, "
    "declare, wild, queue"
)
""":func:`core.observe`'s arguments after them."""


def _flat_observer(players: int, sides: int):
    """:func:`core.observe` for ``players`` and ``sides`` taking each seat's and side's int as an
    argument of its own (``hand0, hand1, ..., pile0, ...``) instead of tuples: pycc's wrapper
    crashes on a tuple of another length, and a wrong count of arguments is a ``TypeError``.
    Generated from the two ints (``operator.index``) and fixed names."""
    import operator

    from scopa_env.fast import core

    players, sides = operator.index(players), operator.index(sides)
    groups = [[f"{name}{j}" for j in range(sides if by_side else players)] for name, by_side in _PER_SEAT_OR_SIDE]
    name = f"observe_{players}_{sides}"
    params = ", ".join(p for group in groups for p in group)
    tuples = ", ".join(f"({', '.join(group)},)" for group in groups)
    text = (
        f"def {name}(out, seat, {params}, {_SCALARS}):\n"
        f"    if seat < 0 or seat >= {players} or width < 0 or width > {core.MAX_CARDS} or out.shape[0] < "
        f"observation_need({players}, {sides}, width, declare, wild):\n"
        "        return -1\n"
        f"    observe(out, seat, {tuples}, {_SCALARS})\n"
        "    return 0\n"
    )
    namespace = {"observe": core.observe, "observation_need": core.observation_need}
    exec(compile(text, f"<{name}>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def _observer_signature(players: int, sides: int):
    """The numba signature of :func:`_flat_observer`'s function for ``players`` and ``sides``."""
    from numba import types

    i8, f8 = types.int64, types.float64
    per = sum(sides if by_side else players for _, by_side in _PER_SEAT_OR_SIDE)
    return i8(types.float32[::1], i8, *[i8] * (per + 8), f8, f8, i8, types.boolean, i8, types.boolean)


def _move_ids_signature():
    """The numba signature of :func:`core.plain_move_ids`."""
    from numba import types

    i8 = types.int64
    return i8(i8, i8, i8, i8, i8[:, ::1], i8[::1], i8[::1])


def build(output_dir: str | Path, target_cpu: str = "host") -> list[Path]:
    """Compile every extension (:data:`EXTENSIONS`) into ``output_dir``; returns their paths."""
    return [build_one(name, output_dir, target_cpu) for name in EXTENSIONS]


def build_one(name: str, output_dir: str | Path, target_cpu: str = "host") -> Path:
    """Compile the extension ``name`` (of :data:`EXTENSIONS`) into ``output_dir``; returns its
    path. ``target_cpu="host"`` tunes it for this machine (a wheel for other machines wants
    ``"generic"``, about a quarter slower)."""
    from numba.pycc import CC

    from scopa_env.fast import core

    stamp = source_hash()

    def built_hash():
        return stamp

    cc = CC(PREFIX + name)
    cc.output_dir = str(output_dir)
    cc.target_cpu = target_cpu
    cc.verbose = False
    if name == OBSERVER:
        for players, sides in OBSERVERS:
            func = _flat_observer(players, sides)
            cc.export(func.__name__, _observer_signature(players, sides))(func)
        cc.export("card_capture", "i8(i8, i8, i8, i8)")(core.card_capture.py_func)
        cc.export("plain_move_ids", _move_ids_signature())(core.plain_move_ids.py_func)
    else:
        cc.export("rows", _signature(SPECS[name]))(core.batch_rows.py_func)
    cc.export("source_hash", "i8()")(built_hash)
    cc.compile()
    return Path(cc.output_dir) / cc.output_file


@functools.cache
def load(name: str):
    """The built extension ``name`` (of :data:`EXTENSIONS`), or None where it is missing (a failed
    build leaves an empty file, which fails to import) or stale."""
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


def observer(players: int, sides: int, checked: bool = True):
    """The compiled :func:`core.observe` for ``players`` and ``sides``, else None (not in
    :data:`OBSERVERS`, missing, stale, or switched off with ``SCOPA_AOT=0``). It returns 0, or -1
    and writes nothing where ``seat`` or ``width`` is out of range or ``out`` is shorter than
    :func:`core.observation_need`. ``checked``: behind a check that ``out`` is a float32 array
    (:func:`check_arrays`); the env's observers, which make their own, take the export itself."""
    raw = env_export(f"observe_{players}_{sides}") if (players, sides) in OBSERVERS else None
    if raw is None or not checked:
        return raw

    def observe_checked(out, *args):
        check_arrays(out=(out, np.float32, 1))
        return raw(out, *args)

    return observe_checked


def card_capture():
    """The compiled :func:`core.card_capture` (one card's capture under the standard captures),
    else None (:func:`env_export`)."""
    return env_export("card_capture")


def move_ids(checked: bool = True):
    """The compiled :func:`core.plain_move_ids` (a hand's "move" ids under the standard captures),
    else None (:func:`env_export`). ``checked``: behind a check of its arrays (:func:`check_arrays`);
    the AEC env, which makes its own and checks them once, takes the export itself."""
    raw = env_export("plain_move_ids")
    if raw is None or not checked:
        return raw

    def plain_move_ids(hand, table, priority, optional, pairs, starts, out):
        check_arrays(pairs=(pairs, np.int64, 2), starts=(starts, np.int64, 1), out=(out, np.int64, 1))
        return raw(hand, table, priority, optional, pairs, starts, out)

    return plain_move_ids


def check_arrays(**arrays) -> None:
    """``TypeError`` naming the first of ``arrays`` (``name=(array, dtype, ndim)``) that is not a
    writable C-contiguous numpy array of that dtype and number of dimensions: what the exports'
    signatures declare. pycc's wrappers read an array of another type or layout as if it were the
    declared one, past its end (a crash, or memory overwritten)."""
    for name, (array, dtype, ndim) in arrays.items():
        if not (
            isinstance(array, np.ndarray)
            and array.dtype == dtype
            and array.ndim == ndim
            and array.flags.c_contiguous
            and array.flags.writeable
        ):
            raise TypeError(
                f"{name} must be a writable C-contiguous {np.dtype(dtype).name} array of {ndim} dimension(s), "
                f"got {array!r:.80}"
            )


def env_export(name: str):
    """The export ``name`` of the env's extension (``_aot_observe``), else None: missing, stale, or
    switched off with ``SCOPA_AOT=0``. Loading it imports no numba."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    module = load(OBSERVER)
    return None if module is None else getattr(module, name)


@functools.cache
def _arg_types(opponent: str | None) -> tuple:
    return tuple(_signature(opponent).args[4:])


def main() -> None:
    target = Path(__file__).parent
    for path in build(target, os.environ.get("SCOPA_AOT_CPU", "host")):
        print(f"built {path.name} in {target}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
