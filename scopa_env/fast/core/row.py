"""The AEC env's game as one state row of the compiled core: the card-play turns of a hand played
in a row ``S`` (one row of :data:`~scopa_env.fast.layout.NUM_COLS` columns) instead of through the
Python engine's :class:`~scopa_env.engine.game.Game`, which deals and scores the hand
(:class:`scopa_env.aec.turns.RowMoveTurns` copies the deal in and the position back).

Three entry points, exported ahead of time (:mod:`scopa_env.fast.aot`): :func:`row_turn` writes
the mover's observation, legal "move" ids and mask in one call, :func:`row_observe` any seat's
observation, and :func:`row_play` plays a card (:func:`~scopa_env.fast.core.game.play_card`, the
batch's own code, for rules without decisions) and writes the next mover's turn in the same call,
or says that the hand's last card is down.
"""

from __future__ import annotations

from numba import njit

from scopa_env.fast.core.captures import plain_move_ids
from scopa_env.fast.core.game import play_card
from scopa_env.fast.core.observation import write_observation
from scopa_env.fast.layout import (
    COL_CURRENT,
    COL_HAND,
    COL_TABLE,
    NUM_COLS,
    P_OBS_SIZE,
    P_OPTIONAL,
    P_PLAYERS,
    P_PRIORITY,
)


@njit(cache=True)
def _fits(S, P, seat, out):
    """Whether ``S`` is a row wide enough, ``seat`` one of its seats and ``out`` long enough for the
    observation (else the entry points write nothing)."""
    return S.shape[0] >= 1 and S.shape[1] >= NUM_COLS and 0 <= seat < P[P_PLAYERS] and out.shape[0] >= P[P_OBS_SIZE]


@njit(cache=True)
def row_turn(S, P, seat, out, mask, ids, pairs, starts):
    """``seat``'s observation into ``out``, then on its card-play turn its legal "move" ids into
    ``ids`` (:func:`~scopa_env.fast.core.captures.plain_move_ids`) and a 1 at each in ``mask``
    (zeros on entry). Returns their count, -1 where the ids are not written (the observation is),
    -2 where nothing is (a row, seat or array that does not fit)."""
    if not _fits(S, P, seat, out) or mask.shape[0] < pairs.shape[0]:
        return -2
    write_observation(S, 0, P, seat, out)
    count = plain_move_ids(S[0, COL_HAND + seat], S[0, COL_TABLE], P[P_PRIORITY], P[P_OPTIONAL], pairs, starts, ids)
    for k in range(count):
        mask[ids[k]] = 1
    return count


@njit(cache=True)
def row_observe(S, P, seat, out):
    """``seat``'s observation into ``out``: 0, or -1 where nothing is written (see :func:`row_turn`)."""
    if not _fits(S, P, seat, out):
        return -1
    write_observation(S, 0, P, seat, out)
    return 0


@njit(cache=True)
def row_play(S, P, TBL, card, captured, out, mask, ids, pairs, starts):
    """Play ``(card, captured)`` for the seat to move, a legal card play of rules without decisions;
    then, where the hand goes on, :func:`row_turn` for the next seat to move (the same arrays and
    returns). -3 where it was the hand's last card (nothing written: the hand's end is the caller's);
    -2 where ``S`` or the arrays do not fit (nothing played)."""
    if S.shape[0] < 1 or S.shape[1] < NUM_COLS or out.shape[0] < P[P_OBS_SIZE] or mask.shape[0] < pairs.shape[0]:
        return -2
    if play_card(S, 0, P, TBL, card, captured, None):
        return -3
    return row_turn(S, P, S[0, COL_CURRENT], out, mask, ids, pairs, starts)
