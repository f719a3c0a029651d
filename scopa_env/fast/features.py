"""Per-move scores of the compiled heuristic, for learners that score moves one by one.

:func:`heuristic_move_scores` gives, for every game of a :class:`~scopa_env.fast.BatchedScopa`
in "move" mode, the score :class:`agents.heuristic.HeuristicAgent` gives each legal move id of
the seat to move (``core.opponents._heuristic_scores``, the compiled twin that ``tests/test_fast_heuristic.py``
holds equal to the Python agent). The heuristic reads only what the seat to move may see, so
the scores are part of that seat's information. The DMC learner (:mod:`train.dmc`) takes them as
move features; at play time the Python agent computes the same numbers from the view.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from scopa_env.fast import core
from scopa_env.fast.core.opponents import _heuristic_scores


@functools.lru_cache(maxsize=16)
def move_id_tables(rules) -> tuple[np.ndarray, np.ndarray]:
    """Card and captured mask of every "move" id of ``rules`` (mask -1: an Ace's take-all id)."""
    from scopa_env.engine.actions import move_enumeration

    pairs = move_enumeration(rules).pairs
    cards = np.array([c for c, _ in pairs], np.int64)
    masks = np.array([m for _, m in pairs], np.int64)
    cards.flags.writeable = masks.flags.writeable = False
    return cards, masks


@njit(cache=True)
def _scores_kernel(S, P, F, H, cards, masks, legal_ids, legal_count, out):
    sub_mask = np.empty(P[core.P_SUB_CAP], np.int64)
    sub_sum = np.empty(P[core.P_SUB_CAP], np.int64)
    lc = np.empty(P[core.P_SCRATCH], np.int64)
    lm = np.empty(P[core.P_SCRATCH], np.int64)
    for i in range(S.shape[0]):
        count = legal_count[i]
        table = S[i, core.COL_TABLE]
        for k in range(count):
            a = legal_ids[i, k]
            lc[k] = cards[a]
            lm[k] = table if masks[a] < 0 else masks[a]  # an Ace's take-all id takes the table
        scores = _heuristic_scores(S, i, P, F, H, count, sub_mask, sub_sum, lc, lm)
        for k in range(count):
            out[i, k] = scores[k]


def heuristic_move_scores(batch, out: np.ndarray | None = None) -> np.ndarray:
    """float64 ``(N, legal_width)``: the heuristic's score of each legal id in ``batch.legal_ids``.

    Columns past ``legal_count`` are left as they are (0 in a new array).
    """
    from scopa_env.fast.batch import HEURISTIC_H

    if batch.action_mode != "move":
        raise ValueError("heuristic_move_scores needs a batch in 'move' mode")
    if out is None:
        out = np.zeros(batch.legal_ids.shape, np.float64)
    cards, masks = move_id_tables(batch.rules)
    _scores_kernel(batch._S, batch._P, batch._F, HEURISTIC_H, cards, masks, batch.legal_ids, batch.legal_count, out)
    return out


def view_heuristic_scores(view, ids: np.ndarray) -> np.ndarray | None:
    """float64 ``(len(ids),)``: the compiled heuristic's score of each "move" id in ``ids`` (the legal
    moves of ``view``, a :class:`~scopa_env.engine.game.PlayerView`), as
    :meth:`agents.heuristic.HeuristicAgent.scores` gives them from the view; ``None`` where this path
    does not play (rules the compiled core lacks, a declaration, a wildcard, shown hands), so the caller
    keeps the Python scores there.

    The state row holds only what the seat may see (:func:`scopa_env.fast.search.row_from_view`); the
    other hands hold placeholder cards of their true sizes, all the heuristic reads of them.
    """
    from scopa_env.fast.batch import HEURISTIC_H, compiled_rules
    from scopa_env.fast.search import row_from_view

    if view.deciding or view.wild_rank or any(view.revealed):
        return None
    try:
        P, F, _, _ = compiled_rules(view.rules, view.num_players)
    except NotImplementedError:
        return None
    row, counts = row_from_view(view, P)
    free = int(P[core.P_DECK_MASK]) & ~(view.hand | view.table)
    for s in range(view.num_players):
        if s != view.seat:  # the lowest free cards stand for a hidden hand of counts[s] cards
            hand = 0
            for _ in range(int(counts[s])):
                low = free & -free
                hand |= low
                free &= ~low
            row[core.COL_HAND + s] = hand
    cards, masks = move_id_tables(view.rules)
    ids = np.asarray(ids, np.int64)[None, :]
    out = np.zeros(ids.shape, np.float64)
    _scores_kernel(row[None, :], P, F, HEURISTIC_H, cards, masks, ids, np.array([ids.shape[1]], np.int64), out)
    return out[0]
