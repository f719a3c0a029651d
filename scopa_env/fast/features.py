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

from scopa_env.engine.cards import SETTEBELLO
from scopa_env.fast import core
from scopa_env.fast.core.bits import popcount
from scopa_env.fast.core.captures import legal_pairs
from scopa_env.fast.core.kernels import new_scratch
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


# The spec of :func:`move_feature_rows`: int64 ``(MF_SIZE,)``, the indices and sizes it reads.
MF_CARDS, MF_TABLE, MF_UNSEEN, MF_NEXT_HAND, MF_HAND_SIZE, MF_MAX_RANK, MF_HEURISTIC, MF_SIZE = range(8)


@njit(cache=True)
def move_feature_rows(obs, rows, ids, h, card, mask, take_all, rank, spec, out):
    """The DMC learner's move features (:class:`train.dmc.agent.MoveFeatures`, whose table of columns
    this follows) of move ``ids[j]`` in position ``obs[rows[j]]``, written to ``out[j]`` (float32).

    ``card``/``mask``/``take_all``: each "move" id's card, captured mask (0 for an Ace's take-all id)
    and whether it is a take-all id; ``rank``: float32 rank of each card id; ``h``: the heuristic's
    score of each move (float64, may hold ``-inf``; empty without heuristic features); ``spec``: the
    ``MF_*`` indices. The arithmetic is float32 where the numpy version it replaced was, so a
    network trained on that version scores the same numbers (``tests/test_dmc_features.py``).
    """
    k = spec[MF_CARDS]
    ts = spec[MF_TABLE]
    us = spec[MF_UNSEEN]
    hand_size = np.float32(spec[MF_HAND_SIZE])
    max_rank = spec[MF_MAX_RANK]
    zero = np.float32(0.0)
    one = np.float32(1.0)
    for j in range(ids.shape[0]):
        r = rows[j]
        a = ids[j]
        bits = mask[a]
        if take_all[a]:
            bits = 0
            for b in range(k):
                if obs[r, ts + b] > 0.5:
                    bits |= np.int64(1) << b
        trail = bits == 0
        ncap = zero
        n_after = zero
        rsum = zero
        for b in range(k):
            t = obs[r, ts + b]
            c = one if b == card[a] else zero
            x = one if (bits >> b) & 1 else zero
            after = t + c if trail else t - x
            out[j, b] = c
            out[j, k + b] = x
            out[j, 2 * k + b] = after
            ncap += x
            n_after += after
            rsum += after * rank[b]
        out[j, 3 * k] = ncap / np.float32(10.0)
        out[j, 3 * k + 1] = one if (not trail) and n_after == zero else zero
        out[j, 3 * k + 2] = rsum / np.float32(40.0)
        out[j, 3 * k + 3] = n_after / np.float32(10.0)
        # the rank that would sweep what is left, and how many of it the mover cannot see
        sweep = np.int64(np.floor(rsum + np.float32(0.5)))
        if n_after == zero or sweep > max_rank:
            sweep = 0
        threat = zero
        total = zero
        for b in range(k):
            u = obs[r, us + b]
            total += u
            if sweep > 0 and np.int64(rank[b]) == sweep:
                threat += u
        out[j, 3 * k + 4] = threat / np.float32(4.0)
        held = np.int64(np.floor(obs[r, spec[MF_NEXT_HAND]] * hand_size + np.float32(0.5)))
        miss = 1.0  # P(the next seat holds none of them)
        for i in range(held):
            fi = np.float32(i)
            denom = max(total - fi, one)
            miss = miss * np.float64(max(total - threat - fi, zero)) / np.float64(denom)
        out[j, 3 * k + 5] = np.float32(1.0 - miss) if threat > zero else zero
    if spec[MF_HEURISTIC]:
        _heuristic_columns(rows, h, 3 * k + 6, out)


@njit(cache=True)
def _heuristic_columns(rows, h, col, out):
    """The heuristic's score, its gap to the position's best and whether it is the best; a ``-inf``
    score (a pass on a declaration the heuristic always makes) counts as one below the position's
    lowest finite score (0 where none is finite), so the features stay finite."""
    n_rows = 0
    for j in range(rows.shape[0]):
        n_rows = max(n_rows, rows[j] + 1)
    low = np.full(n_rows, np.inf)
    for j in range(rows.shape[0]):
        if np.isfinite(h[j]):
            low[rows[j]] = min(low[rows[j]], h[j])
    score = np.empty(rows.shape[0])
    best = np.full(n_rows, -np.inf)
    for j in range(rows.shape[0]):
        r = rows[j]
        if np.isfinite(h[j]):
            score[j] = h[j]
        else:
            score[j] = (low[r] if np.isfinite(low[r]) else 1.0) - 1.0
        best[r] = max(best[r], score[j])
    for j in range(rows.shape[0]):
        gap = score[j] - best[rows[j]]
        out[j, col] = score[j] / 10.0
        out[j, col + 1] = gap / 10.0
        out[j, col + 2] = 1.0 if gap >= -1e-9 else 0.0


# The spec of :func:`endgame_feature_rows`: int64 ``(EG_SIZE,)``, the observation's slice starts.
EG_HAND, EG_TABLE, EG_OWN, EG_OTHER, EG_UNSEEN, EG_LAST, EG_SCOPE, EG_SIZE = range(8)
EG_PLANES = 7
"""Card planes of an endgame row: the hand, the unseen cards, the table and the two piles after the
move, then the move's card and captured cards."""
EG_SCALARS = 26
"""Scalars after them (:func:`endgame_feature_rows`' table)."""
EG_REPLIES = 7
"""Entries of each reply summary (:func:`_reply_summary`)."""


@njit(cache=True)
def endgame_feature_rows(obs, rows, ids, card, mask, take_all, suit, prim, P, spec, out):
    """Afterstate features of move ``ids[j]`` in the 2-player position ``obs[rows[j]]`` (float32
    ``out[j]``), for the last round, where the unseen cards are the other hand
    (:class:`train.dmc.endgame.EndgameFeatures` documents the columns).

    ``card``/``mask``/``take_all``: each "move" id's card, captured mask and whether it takes the
    whole table; ``suit``, ``prim``: each card's suit and primiera value; ``P``: the compiled rules,
    whose capture enumeration (:func:`~scopa_env.fast.core.captures.legal_pairs`) gives the replies.
    """
    k = 40
    scratch = new_scratch(P)
    hs, ts, os_, xs, us = spec[EG_HAND], spec[EG_TABLE], spec[EG_OWN], spec[EG_OTHER], spec[EG_UNSEEN]
    c0 = EG_PLANES * k
    for j in range(ids.shape[0]):
        r = rows[j]
        a = ids[j]
        table = np.int64(0)
        hand = np.int64(0)
        other = np.int64(0)
        for b in range(k):
            if obs[r, ts + b] > 0.5:
                table |= np.int64(1) << b
            if obs[r, hs + b] > 0.5:
                hand |= np.int64(1) << b
            if obs[r, us + b] > 0.5:
                other |= np.int64(1) << b
        c = card[a]
        taken = table if take_all[a] else mask[a]
        hand_after = hand & ~(np.int64(1) << c)
        table_after = table | (np.int64(1) << c) if taken == 0 else table & ~taken
        prim_own = np.zeros(4, np.float32)
        prim_other = np.zeros(4, np.float32)
        prim_left = np.zeros(4, np.float32)
        n_own = n_other = coins_own = coins_other = np.float32(0.0)
        for b in range(k):
            bit = np.int64(1) << b
            in_own = obs[r, os_ + b] > 0.5 or (taken != 0 and (b == c or (taken & bit) != 0))
            in_other = obs[r, xs + b] > 0.5
            out[j, b] = 1.0 if hand_after & bit else 0.0
            out[j, k + b] = 1.0 if other & bit else 0.0
            out[j, 2 * k + b] = 1.0 if table_after & bit else 0.0
            out[j, 3 * k + b] = 1.0 if in_own else 0.0
            out[j, 4 * k + b] = 1.0 if in_other else 0.0
            out[j, 5 * k + b] = 1.0 if b == c else 0.0
            out[j, 6 * k + b] = 1.0 if taken & bit else 0.0
            s = suit[b]
            if in_own:
                n_own += 1
                coins_own += 1 if s == 0 else 0
                prim_own[s] = max(prim_own[s], prim[b])
            if in_other:
                n_other += 1
                coins_other += 1 if s == 0 else 0
                prim_other[s] = max(prim_other[s], prim[b])
            if (hand_after | other | table_after) & bit:
                prim_left[s] = max(prim_left[s], prim[b])
        out[j, c0] = 1.0 if taken != 0 and table_after == 0 else 0.0
        out[j, c0 + 1] = 1.0 if taken != 0 else 0.0
        for q in range(3):  # who captured last before the move: the mover, the other seat, no one
            out[j, c0 + 2 + q] = obs[r, spec[EG_LAST] + q]
        out[j, c0 + 5] = popcount(hand_after) / 3.0
        out[j, c0 + 6] = popcount(other) / 3.0
        out[j, c0 + 7] = popcount(table_after) / 10.0
        out[j, c0 + 8] = n_own / 20.0
        out[j, c0 + 9] = n_other / 20.0
        out[j, c0 + 10] = coins_own / 5.0
        out[j, c0 + 11] = coins_other / 5.0
        for s in range(4):
            out[j, c0 + 12 + s] = prim_own[s] / 21.0
            out[j, c0 + 16 + s] = prim_other[s] / 21.0
            out[j, c0 + 20 + s] = prim_left[s] / 21.0
        out[j, c0 + 24] = obs[r, spec[EG_SCOPE]] / 5.0
        out[j, c0 + 25] = obs[r, spec[EG_SCOPE] + 1] / 5.0
        _reply_summary(other, table_after, P, scratch, suit, prim, out[j, c0 + EG_SCALARS :])
        _reply_summary(hand_after, table_after, P, scratch, suit, prim, out[j, c0 + EG_SCALARS + EG_REPLIES :])


@njit(cache=True)
def _reply_summary(hand, table, P, scratch, suit, prim, out):
    """What the cards of ``hand`` can take from ``table`` (each move of the rules' capture enumeration):
    whether any captures, whether one clears the table, whether one takes the settebello, the most
    cards, coins and best primiera card one move takes, and how many of the cards capture (/3)."""
    count = legal_pairs(hand, table, P, scratch.subset_masks, scratch.subset_sums, scratch.cards, scratch.captures)
    any_ = sweep = bello = 0.0
    most = coins = best = 0.0
    capturing = np.int64(0)
    for i in range(count):
        m = scratch.captures[i]
        if m == 0:
            continue
        m |= np.int64(1) << scratch.cards[i]
        capturing |= np.int64(1) << scratch.cards[i]
        any_ = 1.0
        if scratch.captures[i] == table:
            sweep = 1.0
        if (m >> SETTEBELLO) & 1:
            bello = 1.0
        n = co = pv = 0.0
        for b in range(40):
            if (m >> b) & 1:
                n += 1
                co += 1 if suit[b] == 0 else 0
                pv = max(pv, prim[b])
        most = max(most, n)
        coins = max(coins, co)
        best = max(best, pv)
    out[0] = any_
    out[1] = sweep
    out[2] = bello
    out[3] = most / 4.0
    out[4] = coins / 4.0
    out[5] = best / 21.0
    out[6] = popcount(capturing) / 3.0
