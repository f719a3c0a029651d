"""The AEC env's observers: one function per seat that writes :func:`~scopa_env.engine.observation.write_observation`'s
values fast, through the compiled :func:`~scopa_env.fast.core.observe` built ahead of time
(:mod:`scopa_env.fast.aot`) where it is built and fresh, else the engine's straight-line Python
(:func:`~scopa_env.engine.observation._python_observer`). Loading this module imports no numba.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from scopa_env.engine.game import Game
from scopa_env.engine.observation import _F32, ObservationLayout, _empty, _python_observer


def observers_for(layout: ObservationLayout) -> _Observers:
    """Per seat of ``layout``, the function :func:`observation_array` calls (compiled once per
    layout object and kept on it, as a cached property would be)."""
    found = layout.__dict__.get("_observers")
    if found is None:
        found = layout.__dict__["_observers"] = _Observers.of(layout)
    return found


def observation_array(
    game: Game, seat: int, layout: ObservationLayout, select_card: int | None = None, select_captured: int = 0
) -> np.ndarray:
    """A new float32 array holding ``seat``'s observation of ``game``: the values
    :func:`write_observation` writes, when ``layout`` is ``ObservationLayout.for_rules(
    game.num_players, game.rules)`` and ``seat`` is in ``0 .. num_players - 1`` (the env's
    fast path, held equal to :func:`write_observation` by tests/test_env_speed_paths.py)."""
    return observers_for(layout)[seat](game, select_card, select_captured)


class _Observers(tuple):
    """A layout's compiled observers, one per seat; pickled (with a layout or an env) as the
    layout's fields and compiled again when loaded."""

    fields: tuple
    ahead_of_time: bool
    """Whether they call the ahead-of-time :func:`~scopa_env.fast.core.observe` (else they are
    straight-line Python)."""
    moves: tuple | None
    """Per seat, the observer that also writes the seat's legal "move" ids and their mask on a
    card-play turn under the standard captures, in the same compiled call (the AEC env's "move"
    mode; :func:`_calling`'s ``moves``), or None where that export is not built for the layout."""

    @classmethod
    def of(cls, layout: ObservationLayout) -> _Observers:
        out = cls(_compile_observer(layout, seat) for seat in range(layout.num_players))
        out.fields = (layout.num_players, layout.declarations, layout.wildcard, layout.sides, layout.cards)
        out.ahead_of_time = out[0].__name__ == "observe_compiled"
        out.moves = None
        if out.ahead_of_time:
            from scopa_env.fast import aot

            compiled = aot.observer(layout.num_players, layout.num_sides, moves=True)
            if compiled is not None:
                out.moves = tuple(_calling(compiled, layout, seat, moves=True) for seat in range(layout.num_players))
        return out

    def __reduce__(self):
        return _observers_of_fields, (self.fields,)


def _observers_of_fields(fields: tuple) -> _Observers:
    return _Observers.of(ObservationLayout(*fields))


def _compile_observer(
    layout: ObservationLayout, seat: int, ahead_of_time: bool = True
) -> Callable[[Game, int | None, int], np.ndarray]:
    """:func:`write_observation` for one seat of one layout, fast: the compiled core's
    :func:`~scopa_env.fast.core.observe` built ahead of time (:mod:`scopa_env.fast.aot`) where
    it is built for the layout's players and sides (and ``ahead_of_time``), else straight-line
    Python (:func:`_python_observer`)."""
    n, s, seat = (operator.index(v) for v in (layout.num_players, layout.num_sides, seat))
    compiled = _aot_observer(n, s) if ahead_of_time else None
    if compiled is None:
        return _python_observer(layout, seat)
    return _calling(compiled, layout, seat)


def _aot_observer(players: int, sides: int):
    """The ahead-of-time :func:`~scopa_env.fast.core.observe` for ``players`` and ``sides``, or
    None (not built, stale, switched off; :func:`scopa_env.fast.aot.observer`). Loading it
    imports no numba. The export itself: :func:`_calling` makes its float32 array."""
    from scopa_env.fast import aot

    return aot.observer(players, sides, checked=False)


def _calling(compiled, layout: ObservationLayout, seat: int, moves: bool = False):
    """An observer for ``seat`` that hands the game's parts to ``compiled`` in one call: each
    seat's and side's int as an argument of its own (:func:`scopa_env.fast.aot_build._flat_observer`),
    so a game that does not fit the layout (another number of players or sides, a list grown or
    shrunk) is a ``ValueError`` naming both, never a crash.

    The function is generated for the layout, like :func:`_python_observer`: each per-seat and
    per-side list is unpacked into as many names as the layout has seats or sides (an unpacking
    that does not fit raises), which is cheaper than spreading the lists into the call. The
    generated text holds only Python ints taken from the layout (``operator.index``) and fixed
    names.

    ``moves``: ``compiled`` is ``observe_moves_<players>_<sides>`` and the observer, called as
    ``(game, mask, ids, priority, optional, pairs, starts)`` on the seat's card-play turn (no card
    pending), returns ``(observation, count)``: ``count`` legal "move" ids written into ``ids``
    and marked in ``mask`` (zeros on entry), or -1 where the compiled ids do not apply (then
    ``mask`` is untouched and the caller finds them in Python)."""
    n, s, seat = (operator.index(v) for v in (layout.num_players, layout.num_sides, seat))
    size, width = operator.index(layout.size), operator.index(layout.cards)
    declarations, wildcard = bool(layout.declarations), bool(layout.wildcard)
    per_seat = {"hands": "h", "played": "d", "revealed": "v"}
    per_side = {"piles": "p", "scope": "s", "scores": "t"}
    names = {attr: [f"{short}{j}" for j in range(n)] for attr, short in per_seat.items()}
    names |= {attr: [f"{short}{j}" for j in range(s)] for attr, short in per_side.items()}
    unpack = [
        f"        {', '.join(names[attr])}, = game.{attr}"
        for attr in ("hands", "piles", "played", "revealed", "scope", "scores")
    ]
    args = [name for attr in ("hands", "piles", "played", "revealed", "scope", "scores") for name in names[attr]]
    # A game of another player count holds another number of hands, which their unpacking refuses:
    # no check of its own is needed.
    # The two kinds differ in their head, the arrays before the seat, the selection, the
    # arguments after the flags, the status that means nothing was written and what they return.
    name, head, arrays, selection, tail, failed, done = _KINDS[bool(moves)]
    lines = [
        head,
        "    try:",
        *unpack,
        "    except (TypeError, ValueError) as exc:",
        "        raise ValueError(f'{fits}; the game has {game.num_players} players and {game.num_sides} sides ({exc})') from None",
        f"    out = _empty({size}, _F32)",
        "    rules = game.rules",
        "    lc = game.last_capturer",
        "    try:",
        "        status = compiled(",
        f"            {arrays}, {seat}, {', '.join(args)},",
        "            game.table, len(game.stock), game.dealer, game.current, -1 if lc is None else lc,",
        f"            {selection},",
        f"            rules.deck_mask, rules.target, rules.hand_size, {width}, {declarations},",
        f"            {'game.wild_rank' if wildcard else '0'}, {'bool(game.declare_queue)' if declarations else 'False'}{tail},",
        "        )",
        "    except (TypeError, OverflowError) as exc:",
        "        raise ValueError(f'{fits}; the game has {game.num_players} players and {game.num_sides} sides ({exc})') from None",
        f"    if status < {failed}:  # never for the layout's own size: the compiled observe wrote nothing",
        f"        raise ValueError(f'{{fits}}; its {size} entries do not hold the observation of this game')",
        f"    return {done}",
    ]
    namespace = {
        "compiled": compiled,
        "fits": f"the observation layout is for {n} players and {s} sides",
        "_empty": _empty,
        "_F32": _F32,
    }
    what = "compiled observer" + (" with moves" if moves else "")
    exec(compile("\n".join(lines), f"<{what} for seat {seat} of {n} players>", "exec"), namespace)  # noqa: S102
    return namespace[name]


_KINDS = {
    False: (
        "observe_compiled",
        "def observe_compiled(game, select_card, select_captured):",
        "out",
        "-1 if select_card is None else select_card, select_captured",
        "",
        0,
        "out",
    ),
    True: (
        "observe_moves_compiled",
        "def observe_moves_compiled(game, mask, ids, priority, optional, pairs, starts):",
        "out, mask, ids",
        "-1, 0",
        ", priority, optional, pairs, starts",
        -1,
        "out, status",
    ),
}
""":func:`_calling`'s generated text by kind (``moves``): the function's name and head, the arrays
before the seat, the pending card and selection, the arguments after the flags, the status below
which nothing was written, and what it returns."""
