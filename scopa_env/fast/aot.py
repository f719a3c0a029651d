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
JIT's loop releases the GIL), observe and choose; so does everything when an
extension is missing (no C compiler at install: the build only warns), stale (its
:func:`source_hash`, of the compiled core's sources (:data:`BUILT_FROM`) and the numba and numpy
versions, differs from the installed one's) or switched off with ``SCOPA_AOT=0``.

The extension ``scopa_env.fast._aot_observe`` holds :func:`core.observe` for the Python engine's
parts (one int argument per seat's and side's value, one export per number of players and sides,
:data:`OBSERVERS`; :func:`~scopa_env.fast.aot_build._flat_observer`): the AEC
env's observers (:mod:`scopa_env.engine.observation`) call it where it is built and fresh, and write the
observation in Python where it is not. It also holds the env's card-play turns under the standard
captures in the 40-card deck: :func:`core.card_capture` (a "select" env's named card's one
capture, :func:`card_capture`) and :func:`core.plain_move_ids` (a "move" env's legal ids,
:func:`move_ids`, and with the observation and the mask in one call, ``observe_moves_<players>_<sides>``:
:func:`observer`'s ``moves``); the env asks the rules' Python where they are not built or the rules
are not theirs. And :func:`core.seed_words`, numpy's seed hash for a seeded reset's generator
(:func:`seed_words`, :mod:`scopa_env.fast.seeding`). Loading it imports no numba (this module imports numba only to build, and
``scopa_env.fast`` imports its batch on first use), so the env starts as fast as ever.

The extension ``scopa_env.fast._aot_search`` holds the compiled search's kernel,
:func:`scopa_env.fast.search.search_kernel`, with the argument types
:func:`scopa_env.fast.search.search_rows` passes it for every preset (its rules are data:
:func:`scopa_env.fast.search.aot_arg_kinds`), built to release the GIL as the JIT's does, so
its threads search at once. The ``fsearch`` agent's first move, and ``scopa eval --fast``'s,
then costs no compile (about a minute of the JIT's); :func:`search_for` hands it out where the
arguments' types match and it is fresh (its own stamp: ``search.py`` and what it imports,
:func:`source_files`), else the JIT's kernel, whose compile on a cold numba cache
:func:`announce_compile` names on stderr.

This module loads the extensions; :mod:`scopa_env.fast.aot_build` builds them. Build by hand
(into the package, where the loader looks): ``python -m scopa_env.fast.aot_build`` (or
``python -m scopa_env.fast.aot``; ``SCOPA_AOT_CPU=generic`` for machines other than this one).
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
MOVE_OBSERVERS = tuple(ps for ps in OBSERVERS if ps != (8, 8))
"""``(players, sides)`` of the observers that also write the legal "move" ids and their mask
(``observe_moves_<players>_<sides>``, :func:`observer`'s ``moves``): the 40-card deck's, where
"move" mode and the standard captures' :func:`core.plain_move_ids` apply."""
SEARCH = "search"
"""The compiled search's extension (after :data:`PREFIX`): :func:`scopa_env.fast.search.search_kernel`."""
EXTENSIONS = (*SPECS, OBSERVER, SEARCH)
"""Every extension ``setup.py`` builds (tests/test_aot.py holds its list equal to this)."""
BUILT_FROM = (
    Path(__file__).with_name("core") / "kernels.py",
    Path(__file__).with_name("core") / "row.py",
    Path(__file__).with_name("aot_build.py"),
)
"""What the extensions are compiled from: the compiled core's entry points (``core/kernels.py``, which
imports every module whose kernels they hold: the row loop's, the observer's and the env helpers';
``core/row.py``, the AEC env's row),
with every file of ``scopa_env.fast`` it imports (:func:`source_files`), and the build, which wraps
:func:`core.observe` for export."""
SEARCH_BUILT_FROM = Path(__file__).with_name("search.py")
"""What :data:`SEARCH`'s extension is compiled from (with every file of ``scopa_env.fast`` it
imports, the compiled core among them, and the build): its stamp is its own, so an edit to the
search leaves the row loops fresh."""


def source_files(name: str | None = None) -> tuple[Path, ...]:
    """The files :func:`source_hash` reads for the extension ``name`` (None: the row loops' and
    the env helpers'): its entry points (:data:`BUILT_FROM`, or :data:`SEARCH_BUILT_FROM` for
    :data:`SEARCH`) and what they import from ``scopa_env.fast``, transitively
    (:func:`scopa_env.fast.sources.kernel_sources`), and the build itself."""
    from scopa_env.fast.sources import kernel_sources

    *entries, build = BUILT_FROM
    if name == SEARCH:
        entries = [SEARCH_BUILT_FROM]
    return tuple(sorted({*kernel_sources(*entries), build.resolve()}))


@functools.cache
def source_hash(name: str | None = None) -> int:
    """A 63-bit hash of the sources the extension ``name`` is built from (:func:`source_files`)
    and of the numba and numpy versions: an extension is used only while it equals the one it
    was built with (an edit in any of those files, or a build environment's numba or numpy other
    than the installed ones, counts as stale). Read once per process, without importing numba
    (its installed version is read from the package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    from scopa_env.fast.sources import digest

    try:
        numba = version("numba")
    except PackageNotFoundError:  # no numba: nothing compiled can match
        numba = "missing"
    stamp = digest(source_files(name)) + f"|numba {numba}|numpy {np.__version__}".encode()
    return int.from_bytes(hashlib.sha256(stamp).digest()[:8], "little") >> 1


@functools.cache
def load(name: str):
    """The built extension ``name`` (of :data:`EXTENSIONS`), or None where it is missing (a failed
    build leaves an empty file, which fails to import) or stale."""
    try:
        module = importlib.import_module(f"scopa_env.fast.{PREFIX}{name}")
    except (ImportError, OSError):
        return None
    if module.source_hash() != source_hash(name if name == SEARCH else None):
        return None
    return module


def rows_for(args: tuple, kinds_of):
    """The ahead-of-time row loop taking ``args`` (``BatchedScopa._kernel_args``), else None
    (none takes them, or it is missing, stale or switched off with ``SCOPA_AOT=0``).
    ``kinds_of(opponent)``: the numba types of the arguments of :data:`SPECS`' batch with that
    opponent (:func:`scopa_env.fast.batch.aot_arg_kinds`)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    from numba import typeof

    kinds = tuple(typeof(a) for a in args)
    for name, opponent in SPECS.items():
        if kinds_of(opponent) == kinds:
            module = load(name)
            return None if module is None else module.rows
    return None


def search_for(args: tuple, kinds_of):
    """The ahead-of-time search kernel taking ``args`` (the JIT kernel's, in order), else None
    (their :func:`array_kinds` are not the built ones, or it is missing, stale or switched off with
    ``SCOPA_AOT=0``). ``kinds_of()``: the :func:`array_kinds` of the arguments it was built for
    (:func:`scopa_env.fast.search.aot_arg_kinds`). Checked on every call, in a few microseconds:
    pycc's wrapper reads an array of another type or layout as the declared one, past its end."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    module = load(SEARCH)
    if module is None or array_kinds(args) != kinds_of():
        return None
    return module.search


def array_kinds(args: tuple) -> tuple | None:
    """What numba's type of each of ``args`` is made of, read from numpy (``numba.typeof`` takes
    about 20 µs an array): its dtype, dimensions, layout as numba names it ("C" where C-contiguous,
    else "F" where Fortran-contiguous, else "A"), writability and alignment; a bundle (a namedtuple,
    :mod:`scopa_env.fast.core.bundles`) by its class and the kinds of its fields, a None field as
    None; None where one is anything else. Equal kinds give equal numba types."""
    kinds = []
    for a in args:
        if type(a) is np.ndarray:
            flags = a.flags
            layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
            kinds.append((a.dtype, a.ndim, layout, flags.writeable, flags.aligned))
        elif isinstance(a, tuple) and hasattr(a, "_fields"):
            fields = array_kinds(tuple(f for f in a if f is not None))
            if fields is None:
                return None
            kinds.append((type(a), tuple(f is None for f in a), fields))
        else:
            return None
    return tuple(kinds)


def announce_compile(dispatcher, message: str) -> None:
    """Print ``message`` to stderr, once per process, when numba is about to compile
    ``dispatcher`` (a JIT kernel): not when it loads it from its on-disk cache, nor when the
    ahead-of-time build serves the call. Registering the same kernel again does nothing."""
    if dispatcher in _ANNOUNCED:
        return
    from numba.core import event

    class Announce(event.Listener):
        said = False

        def on_start(self, ev) -> None:
            if not self.said and ev.data.get("dispatcher") is dispatcher:
                self.said = True
                print(message, file=sys.stderr, flush=True)

        def on_end(self, ev) -> None:
            pass

    _ANNOUNCED[dispatcher] = Announce()
    event.register("numba:compile", _ANNOUNCED[dispatcher])


_ANNOUNCED: dict = {}
"""The kernels :func:`announce_compile` watches, and their listeners."""


def observer(players: int, sides: int, checked: bool = True, moves: bool = False):
    """The compiled :func:`core.observe` for ``players`` and ``sides``, else None (not in
    :data:`OBSERVERS`, missing, stale, or switched off with ``SCOPA_AOT=0``). It returns 0, or -1
    and writes nothing where ``seat`` or ``width`` is out of range or ``out`` is shorter than
    :func:`core.observation_need`. ``checked``: behind a check that ``out`` is a float32 array
    (:func:`check_arrays`); the env's observers, which make their own, take the export itself.
    ``moves``: the export that also writes the seat's legal "move" ids and their mask on a
    card-play turn under the standard captures (:data:`MOVE_OBSERVERS`; its arguments and returns:
    :func:`scopa_env.fast.aot_build._flat_observer`), unchecked: the env's "move" observers
    make its arrays and check the enumeration's once."""
    if moves:
        return env_export(f"observe_moves_{players}_{sides}") if (players, sides) in MOVE_OBSERVERS else None
    raw = env_export(f"observe_{players}_{sides}") if (players, sides) in OBSERVERS else None
    if raw is None or not checked:
        return raw

    def observe_checked(out, *args):
        check_arrays(out=(out, np.float32, 1))
        return raw(out, *args)

    return observe_checked


def seed_words():
    """The compiled :func:`core.seed_words` (numpy's seed hash for PCG64), else None (:func:`env_export`).
    Its ``out`` must be a writable C-contiguous uint64 array (:func:`check_arrays`): its caller,
    :mod:`scopa_env.fast.seeding`, makes it."""
    return env_export("seed_words")


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


def row_exports():
    """The compiled AEC env's row (:mod:`scopa_env.fast.core.row`): ``(row_turn, row_observe,
    row_play)``, else None (:func:`env_export`). Unchecked: their caller,
    :class:`scopa_env.aec.turns.RowMoveTurns`, makes their arrays and checks them once
    (:func:`check_arrays`)."""
    found = tuple(env_export(name) for name in ("row_turn", "row_observe", "row_play"))
    return None if None in found else found


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


if __name__ == "__main__":  # pragma: no cover  (the build lives in aot_build, which imports the batch)
    import runpy

    runpy.run_module("scopa_env.fast.aot_build", run_name="__main__")
