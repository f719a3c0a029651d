"""The compiled perfect-information search of the ``oracle`` agent (:mod:`agents.oracle`).

:func:`oracle_kernel` values every legal move of the seat to move in one *true* state row of
:mod:`scopa_env.fast.core` (every hand and the stock order filled in, as the deal really is):
no world is sampled, the one world searched is the deal itself. After each candidate move it
runs ``ab_depth`` plies of alpha-beta over the true deal with ``rollouts`` rollouts of the
compiled ``greedy`` or ``heuristic`` player at the leaves (each with its own tie-break
stream), or, when the caller says ``exact``, alpha-beta to the end of the hand: the exact value
of the perfect-information hand. It reuses the kernels of
:mod:`scopa_env.fast.search` (the fair search samples worlds; this one does not).

Separate from :mod:`agents.oracle` so that importing the agents does not load numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scopa_env.fast import core
from scopa_env.fast.core import (
    COL_CURRENT,
    COL_DECK,
    COL_HAND,
    COL_STOCK_POS,
    COL_TABLE,
    P_DECK_SIZE,
    P_SIDES,
)
from scopa_env.fast.core.bits import _below, _rand, _side
from scopa_env.fast.search import MAX_DEPTH, _alphabeta_value, _margin, _rollout_value, new_stack

O_AB_DEPTH = 0  # plies of alpha-beta after the candidate move before the rollouts
O_ROLLOUTS = 1  # rollouts per leaf (tie-break streams) when not exact
O_ROLLOUT = 2  # core.OPPONENT_GREEDY or OPPONENT_HEURISTIC
O_NOISE = 3  # per mille: the chance that another side's rollout move is a random legal move (ab_depth 0 only)
O_HIDE_STOCK = 4  # 1: the stock's order is not seen; each sample shuffles it (every hand stays seen)
NUM_ORACLE_CONFIG = 5


@njit(cache=True)
def _noisy_rollout(stack, r, rules, kind, side, noise):
    """Finish the hand in row ``r`` of ``stack`` (a :class:`scopa_env.fast.search.Stack`): ``side``
    plays the compiled player ``kind``, every other side plays it too except that each of its moves
    is a random legal move with chance ``noise``/1000. Returns ``side``'s margin."""
    P, F, TBL = rules.params, rules.floats, rules.tables
    R, rng, lc, lm = stack.rows, stack.rng, stack.cards[r], stack.captures[r]
    ns = P[P_SIDES]
    over = 0
    while not over:
        mover = kind
        if _side(R[r, COL_CURRENT], ns) != side and _below(rng, r, 1, 1000) < noise:
            mover = core.OPPONENT_RANDOM
        k = core.choose_move(
            R, r, rng, P, F, rules.heuristic, mover, stack.subset_masks, stack.subset_sums, lc, lm, TBL
        )
        over = core.play(R, r, rng, P, F, TBL, lc[k], lm[k], stack.rewards, stack.info, stack.hand_score, TBL)
    return _margin(stack.hand_score, r, side, ns)


@njit(cache=True)
def _shuffle_stock(R, r, rng, P):
    """Shuffle the stock cards still to come in row ``r`` (Fisher-Yates on game ``r``'s deal stream),
    from their sorted order, so that the result does not depend on the order they were in."""
    start = R[r, COL_STOCK_POS]
    n = P[P_DECK_SIZE] - start
    R[r, COL_DECK + start : COL_DECK + start + n] = np.sort(R[r, COL_DECK + start : COL_DECK + start + n])
    for i in range(n - 1, 0, -1):
        j = _below(rng, r, 0, i + 1)
        a = R[r, COL_DECK + start + i]
        R[r, COL_DECK + start + i] = R[r, COL_DECK + start + j]
        R[r, COL_DECK + start + j] = a


@njit(cache=True, nogil=True)
def oracle_kernel(S, seed, P, F, H, TBL, C, exact, values, tie):
    """Value every legal move of the seat to move in the true state row ``S`` (``NUM_COLS``,).

    Writes the mean margin of each move (``core.legal_pairs`` order) into ``values`` and, when
    ``exact``, the rollout players' margin into ``tie`` (it breaks ties between equal exact
    values, as the fair search does). Returns the number of legal moves. With ``C[O_HIDE_STOCK]``
    each sample first shuffles the stock still to come (the same shuffle for every move of that
    sample), so the values average over the stock orders the seat cannot see; the caller passes
    ``exact`` only when the stock is empty then.
    """
    stack = new_stack(P)  # the search's rows, one per ply (scopa_env.fast.search.Stack)
    rules = core.Rules(P, F, TBL, None, H)
    R, rng, LC, LM = stack.rows, stack.rng, stack.cards, stack.captures
    seed_row = np.empty(1, np.int64)
    seed_row[0] = seed
    core.seed_games(rng, seed_row)
    ns = P[P_SIDES]
    R[0, :] = S
    seat = R[0, COL_CURRENT]
    side = _side(seat, ns)
    count = core.legal_pairs(
        R[0, COL_HAND + seat], R[0, COL_TABLE], P, stack.subset_masks, stack.subset_sums, LC[0], LM[0]
    )
    mc = LC[0, :count].copy()
    mm = LM[0, :count].copy()
    for k in range(count):
        values[k] = 0.0
        tie[k] = 0.0
    depth = MAX_DEPTH if exact else C[O_AB_DEPTH]
    samples = 1 if exact else max(1, C[O_ROLLOUTS])
    kind = C[O_ROLLOUT]
    noise = C[O_NOISE]
    hide_stock = C[O_HIDE_STOCK] != 0
    for _ in range(samples):
        if hide_stock:
            R[0, :] = S
            _shuffle_stock(R, 0, rng, P)
        stream = _rand(rng, 0, 0)  # this sample's rollout tie-breaks, the same for every move
        for k in range(count):
            R[1, :] = R[0, :]
            over = core.play(R, 1, rng, P, F, TBL, mc[k], mm[k], stack.rewards, stack.info, stack.hand_score, TBL)
            if over:
                v = _margin(stack.hand_score, 1, side, ns)
            elif noise > 0 and not exact:  # ab_depth 0 (the agent's promise): one noisy rollout
                rng[1, 1] = stream
                v = _noisy_rollout(stack, 1, rules, kind, side, noise)
            else:
                v = _alphabeta_value(stack, 1, rules, side, depth, kind, stream)
                if exact:
                    rng[1, 1] = stream
                    tie[k] += _rollout_value(stack, 1, rules, kind, side)
            values[k] += v
    for k in range(count):
        values[k] /= samples
    return count
