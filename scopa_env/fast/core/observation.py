"""Observations (:mod:`scopa_env.engine.observation`): one seat's view of a game written into a
float32 vector, from a state row (:func:`write_observation`) or from the game's parts
(:func:`observe`, which :mod:`scopa_env.fast.aot` exports for the AEC env's observers).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scopa_env.fast.core.bits import (
    _side,
    popcount,
)
from scopa_env.fast.core.layout import (
    COL_CURRENT,
    COL_DEALER,
    COL_HAND,
    COL_LASTCAP,
    COL_PENDING,
    COL_PILE,
    COL_PLAYED,
    COL_QUEUE,
    COL_REVEALED,
    COL_SCOPE,
    COL_SCORE,
    COL_SELECTED,
    COL_STOCK_POS,
    COL_TABLE,
    COL_WILD,
    MAX_RANK,
    NO_SEAT,
    P_CARD_IDS,
    P_DECK_MASK,
    P_DECK_SIZE,
    P_DECLARE,
    P_HAND_SIZE,
    P_PLAYERS,
    P_SIDES,
    P_TARGET,
    P_WILD_OBS,
)


@njit(cache=True, inline="always")
def _plane(out, pos, mask, width):
    """One card plane of ``width`` (P_CARD_IDS: 40, or 52 for the 52-card deck) entries."""
    for b in range(width):
        out[pos + b] = np.float32((mask >> b) & 1)
    return pos + width


@njit(cache=True)
def write_observation(S, i, P, seat, out):
    """``seat``'s observation of game ``i`` into ``out`` (observation.write_observation)."""
    n = P[P_PLAYERS]
    mine = seat == S[i, COL_CURRENT]
    pending = S[i, COL_PENDING] if mine else NO_SEAT
    observe(
        out,
        seat,
        S[i, COL_HAND : COL_HAND + n],
        S[i, COL_PILE : COL_PILE + P[P_SIDES]],
        S[i, COL_PLAYED : COL_PLAYED + n],
        S[i, COL_REVEALED : COL_REVEALED + n],
        S[i, COL_SCOPE : COL_SCOPE + P[P_SIDES]],
        S[i, COL_SCORE : COL_SCORE + P[P_SIDES]],
        S[i, COL_TABLE],
        P[P_DECK_SIZE] - S[i, COL_STOCK_POS],
        S[i, COL_DEALER],
        S[i, COL_CURRENT],
        S[i, COL_LASTCAP],
        pending,
        S[i, COL_SELECTED] if pending >= 0 else 0,
        P[P_DECK_MASK],
        float(P[P_TARGET]),
        float(P[P_HAND_SIZE]),
        P[P_CARD_IDS],
        P[P_DECLARE] != 0,
        S[i, COL_WILD] if P[P_WILD_OBS] else 0,
        S[i, COL_QUEUE] != 0,
    )


@njit(cache=True, inline="always")
def observe(
    out,
    seat,
    hands,
    piles,
    played,
    revealed,
    scope,
    scores,
    table,
    stock_left,
    dealer,
    current,
    last_capturer,
    pending,
    selected,
    deck_mask,
    target,
    hand_size,
    width,
    declare,
    wild,
    queue,
):
    """``seat``'s observation into ``out`` from the game's parts (observation.write_observation):
    ``hands``, ``played`` and ``revealed`` by seat, ``piles``, ``scope`` and ``scores`` by side
    (the state row's slices, or tuples of the Python engine's ints: :mod:`scopa_env.fast.aot`'s
    observers),
    ``last_capturer`` and ``pending`` (the card chosen in "select" mode) ``NO_SEAT`` for none,
    ``declare`` for the layout's declaration entries, ``wild`` the declared wildcard rank (0: none,
    or no wildcard entry), ``queue`` whether a declaration is being decided."""
    n = len(hands)
    ns = len(piles)
    side = _side(seat, ns)
    seen = hands[seat] | table
    for s in range(ns):
        seen |= piles[s]
    if declare:
        for s in range(n):
            seen |= revealed[s]
    w = width
    pos = _plane(out, 0, hands[seat], w)
    pos = _plane(out, pos, table, w)
    for k in range(ns):
        pos = _plane(out, pos, piles[(side + k) % ns], w)
    for k in range(n):
        pos = _plane(out, pos, played[(seat + k) % n], w)
    pos = _plane(out, pos, deck_mask & ~seen, w)
    pos = _plane(out, pos, (np.int64(1) << pending) if pending >= 0 else 0, w)
    pos = _plane(out, pos, selected, w)
    if declare:  # the revealed planes of seat +1, +2 ...; the declaring flag is the last entry
        for k in range(1, n):
            pos = _plane(out, pos, revealed[(seat + k) % n], w)
    size = out.shape[0]
    for k in range(size - pos):
        out[pos + k] = 0.0
    for j in range(ns):
        sj = (side + j) % ns
        out[pos + j] = np.float32(scope[sj])
        out[pos + ns + j] = np.float32(scores[sj] / target)
    pos += 2 * ns
    for j in range(n):
        out[pos + j] = np.float32(popcount(hands[(seat + j) % n]) / hand_size)
    pos += n
    out[pos] = np.float32(stock_left / float(w))
    pos += 1
    out[pos + (seat - dealer) % n] = 1.0
    pos += n
    out[pos + (current - seat) % n] = 1.0
    pos += n
    out[pos + (n if last_capturer == NO_SEAT else (last_capturer - seat) % n)] = 1.0
    pos += n + 1
    out[pos + (1 if pending >= 0 else 0)] = 1.0
    pos += 2
    if 0 < wild <= MAX_RANK:  # Cirulla: one-hot of the wildcard's declared rank (0: none)
        out[pos + wild - 1] = 1.0
    if declare and queue:
        out[size - 1] = 1.0


@njit(cache=True, inline="always")
def observation_need(players, sides, width, declare, wild):
    """The entries :func:`observe` writes for ``players`` and ``sides`` with planes of ``width``:
    the card planes (hand, table, each side's pile, each seat's played cards, unseen, the pending
    card, the selection; with ``declare`` the other seats' shown cards), then the tail (scope and
    scores per side; hand sizes, dealer, turn per seat; stock; last capturer, none included; the
    pending flag's two), the wildcard's one-hot up to ``wild``'s entry, and with ``declare`` the
    declaring flag (the last entry)."""
    planes = 5 + sides + players + (players - 1 if declare else 0)
    need = planes * width + 2 * sides + 4 * players + 4 + (1 if declare else 0)
    if 0 < wild <= MAX_RANK:
        need += wild
    return need
