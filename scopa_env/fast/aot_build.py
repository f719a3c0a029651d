"""The install-time build of the ahead-of-time extensions that :mod:`scopa_env.fast.aot` loads.

``setup.py``'s ``build_ext`` calls :func:`build_one` once per extension (:data:`~scopa_env.fast.aot.EXTENSIONS`)
in a subprocess; ``python -m scopa_env.fast.aot_build`` builds them all into the package by hand.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from scopa_env.fast.aot import EXTENSIONS, MOVE_OBSERVERS, OBSERVER, OBSERVERS, PREFIX, SEARCH, SPECS, source_hash


def _signature(opponent: str | None):
    """The numba signature of :func:`core.batch_rows` for a standard batch with ``opponent``."""
    from numba import types

    from scopa_env.fast.batch import aot_arg_kinds

    return types.UniTuple(types.int64, 2)(*([types.int64] * 4 + list(aot_arg_kinds(opponent))))


_PER_SEAT_OR_SIDE = (("hand", 0), ("pile", 1), ("played", 0), ("revealed", 0), ("scope", 1), ("score", 1))
""":class:`core.ObservedGame`'s tuple fields in order, each per seat (0) or per side (1)."""
_SCALARS = (
    "table, stock_left, dealer, current, last_capturer, pending, selected, deck_mask, target, hand_size, width, "
    "declare, wild, queue"
)
"""The exports' arguments after them: the scalar fields of :class:`core.ObservedGame` and
:class:`core.ObservationFormat`, in the order the exports have always taken them."""
_GAME_SCALARS = "table, stock_left, dealer, current, last_capturer, pending, selected, wild, queue"
""":class:`core.ObservedGame`'s fields after its tuples, among :data:`_SCALARS`."""
_FORMAT = "deck_mask, target, hand_size, width, declare"
""":class:`core.ObservationFormat`'s fields, among :data:`_SCALARS`."""


def _flat_observer(players: int, sides: int, moves: bool = False):
    """:func:`core.observe` for ``players`` and ``sides`` taking each seat's and side's int as an
    argument of its own (``hand0, hand1, ..., pile0, ...``) instead of tuples: pycc's wrapper
    crashes on a tuple of another length, and a wrong count of arguments is a ``TypeError``.
    Generated from the two ints (``operator.index``) and fixed names.

    ``moves``: ``observe_moves_<players>_<sides>``, which also writes the seat's legal "move" ids
    on a card-play turn under the standard captures in one call (the AEC env's "move" mode): after
    the observation, :func:`core.plain_move_ids` of the seat's hand into ``ids`` and a 1 at each
    of them in ``mask`` (zeros on entry; as long as the enumeration ``pairs`` at least). It takes
    ``mask`` and ``ids`` after ``out`` and the plain move ids' arguments last, and returns their
    number, -1 where they are not written (:func:`core.plain_move_ids`' -1; the observation is),
    or -2 where nothing is (the observer's -1, or a mask shorter than ``pairs``)."""
    import operator

    from scopa_env.fast import core

    players, sides = operator.index(players), operator.index(sides)
    groups = [[f"{name}{j}" for j in range(sides if by_side else players)] for name, by_side in _PER_SEAT_OR_SIDE]
    name = f"observe_{'moves_' if moves else ''}{players}_{sides}"
    params = ", ".join(p for group in groups for p in group)
    tuples = ", ".join(f"({', '.join(group)},)" for group in groups)
    bundles = f"ObservedGame({tuples}, {_GAME_SCALARS}), ObservationFormat({_FORMAT})"
    fits = (
        f"seat < 0 or seat >= {players} or width < 0 or width > {core.MAX_CARDS} or out.shape[0] < "
        f"observation_need({players}, {sides}, width, declare, wild)"
    )
    if not moves:
        text = (
            f"def {name}(out, seat, {params}, {_SCALARS}):\n"
            f"    if {fits}:\n"
            "        return -1\n"
            f"    observe(out, seat, {bundles})\n"
            "    return 0\n"
        )
    else:
        text = (
            f"def {name}(out, mask, ids, seat, {params}, {_SCALARS}, {_MOVE_ARGS}):\n"
            f"    if {fits} or mask.shape[0] < pairs.shape[0]:\n"
            "        return -2\n"
            f"    observe(out, seat, {bundles})\n"
            f"    hands = ({', '.join(groups[0])},)\n"
            f"    count = plain_move_ids(hands[seat], table, {_MOVE_ARGS}, ids)\n"
            "    for k in range(count):\n"
            "        mask[ids[k]] = 1\n"
            "    return count\n"
        )
    namespace = {
        "ObservedGame": core.ObservedGame,
        "ObservationFormat": core.ObservationFormat,
        "observe": core.observe,
        "observation_need": core.observation_need,
        "plain_move_ids": core.plain_move_ids,
    }
    exec(compile(text, f"<{name}>", "exec"), namespace)  # noqa: S102
    return namespace[name]


_MOVE_ARGS = "priority, optional, pairs, starts"
""":func:`core.plain_move_ids`' arguments after the hand and the table and before its output, the
last arguments of ``observe_moves_<players>_<sides>`` (:func:`_flat_observer`)."""


def _observer_signature(players: int, sides: int, moves: bool = False):
    """The numba signature of :func:`_flat_observer`'s function for ``players``, ``sides`` and ``moves``."""
    from numba import types

    i8, f8 = types.int64, types.float64
    per = sum(sides if by_side else players for _, by_side in _PER_SEAT_OR_SIDE)
    scalars = [*[i8] * (per + 8), f8, f8, i8, types.boolean, i8, types.boolean]
    if not moves:
        return i8(types.float32[::1], i8, *scalars)
    return i8(types.float32[::1], types.int8[::1], i8[::1], i8, *scalars, i8, i8, i8[:, ::1], i8[::1])


def _move_ids_signature():
    """The numba signature of :func:`core.plain_move_ids`."""
    from numba import types

    i8 = types.int64
    return i8(i8, i8, i8, i8, i8[:, ::1], i8[::1], i8[::1])


def _row_signatures() -> dict:
    """The numba signatures of the AEC env's row exports (:mod:`scopa_env.fast.core.row`), by name:
    the row, ``P`` and ``TBL`` writable C-contiguous int64 arrays (the env's own copies)."""
    from numba import types

    i8, row, vec = types.int64, types.int64[:, ::1], types.int64[::1]
    out, mask = types.float32[::1], types.int8[::1]
    return {
        "row_turn": i8(row, vec, i8, out, mask, vec, types.int64[:, ::1], vec),
        "row_observe": i8(row, vec, i8, out),
        "row_play": i8(row, vec, vec, i8, i8, out, mask, vec, types.int64[:, ::1], vec),
    }


def _search_signature():
    """The numba signature of :func:`scopa_env.fast.search.search_kernel` for what
    :func:`~scopa_env.fast.search.search_rows` passes it (:func:`~scopa_env.fast.search.aot_args`)."""
    from numba import typeof, types

    from scopa_env.fast.search import aot_args

    return types.none(*(typeof(a) for a in aot_args()))


@contextlib.contextmanager
def _releasing_the_gil():
    """pycc's Python wrappers hold the GIL through the call (the compile flags it makes inside
    ``_cull_exports`` leave ``release_gil`` off); the search kernel's JIT releases it
    (``nogil=True``), which :func:`~scopa_env.fast.search.search_rows`' threads need to search at
    once. Inside this block pycc's exports release it too, as the JIT's wrapper does: around the
    compiled call, after unboxing the arguments and before boxing the result."""
    from numba.core.compiler import Flags
    from numba.pycc import compiler

    def flags() -> Flags:
        made = Flags()
        made.release_gil = True
        return made

    compiler.Flags = flags
    try:
        yield
    finally:
        compiler.Flags = Flags


def build(output_dir: str | Path, target_cpu: str = "host") -> list[Path]:
    """Compile every extension (:data:`EXTENSIONS`) into ``output_dir``; returns their paths."""
    return [build_one(name, output_dir, target_cpu) for name in EXTENSIONS]


def build_one(name: str, output_dir: str | Path, target_cpu: str = "host") -> Path:
    """Compile the extension ``name`` (of :data:`EXTENSIONS`) into ``output_dir``; returns its
    path. ``target_cpu="host"`` tunes it for this machine (a wheel for other machines wants
    ``"generic"``, about a quarter slower)."""
    from numba.pycc import CC

    from scopa_env.fast import core
    from scopa_env.fast.core import row

    stamp = source_hash(name if name == SEARCH else None)

    def built_hash():
        return stamp

    cc = CC(PREFIX + name)
    cc.output_dir = str(output_dir)
    cc.target_cpu = target_cpu
    cc.verbose = False
    gil = contextlib.nullcontext()
    if name == SEARCH:
        from scopa_env.fast.search import search_kernel

        cc.export("search", _search_signature())(search_kernel.py_func)
        gil = _releasing_the_gil()
    elif name == OBSERVER:
        for players, sides in OBSERVERS:
            func = _flat_observer(players, sides)
            cc.export(func.__name__, _observer_signature(players, sides))(func)
        for players, sides in MOVE_OBSERVERS:
            func = _flat_observer(players, sides, moves=True)
            cc.export(func.__name__, _observer_signature(players, sides, moves=True))(func)
        cc.export("card_capture", "i8(i8, i8, i8, i8)")(core.card_capture.py_func)
        cc.export("plain_move_ids", _move_ids_signature())(core.plain_move_ids.py_func)
        cc.export("seed_words", "i8(i8, u8[::1])")(core.seed_words.py_func)
        for export, signature in _row_signatures().items():
            cc.export(export, signature)(getattr(row, export).py_func)
    else:
        cc.export("rows", _signature(SPECS[name]))(core.batch_rows.py_func)
    cc.export("source_hash", "i8()")(built_hash)
    with gil:
        cc.compile()
    return Path(cc.output_dir) / cc.output_file


def main() -> None:
    target = Path(__file__).parent
    for path in build(target, os.environ.get("SCOPA_AOT_CPU", "host")):
        print(f"built {path.name} in {target}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
