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
from scopa_env.fast.core.bundles import ObservationFormat, ObservedGame
from scopa_env.fast.layout import (
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
    ns = P[P_SIDES]
    mine = seat == S[i, COL_CURRENT]
    pending = S[i, COL_PENDING] if mine else NO_SEAT
    game = ObservedGame(
        S[i, COL_HAND : COL_HAND + n],
        S[i, COL_PILE : COL_PILE + ns],
        S[i, COL_PLAYED : COL_PLAYED + n],
        S[i, COL_REVEALED : COL_REVEALED + n],
        S[i, COL_SCOPE : COL_SCOPE + ns],
        S[i, COL_SCORE : COL_SCORE + ns],
        S[i, COL_TABLE],
        P[P_DECK_SIZE] - S[i, COL_STOCK_POS],
        S[i, COL_DEALER],
        S[i, COL_CURRENT],
        S[i, COL_LASTCAP],
        pending,
        S[i, COL_SELECTED] if pending >= 0 else 0,
        S[i, COL_WILD] if P[P_WILD_OBS] else 0,
        S[i, COL_QUEUE] != 0,
    )
    form = ObservationFormat(
        P[P_DECK_MASK], float(P[P_TARGET]), float(P[P_HAND_SIZE]), P[P_CARD_IDS], P[P_DECLARE] != 0
    )
    observe(out, seat, game, form)


@njit(cache=True, inline="always")
def observe(out, seat, game, form):
    """``seat``'s observation into ``out`` from the game's parts (observation.write_observation):
    ``game`` an :class:`~scopa_env.fast.core.bundles.ObservedGame` (``hands``, ``played`` and
    ``revealed`` by seat, ``piles``, ``scope`` and ``scores`` by side: the state row's slices, or
    tuples of the Python engine's ints, :mod:`scopa_env.fast.aot`'s observers), ``form`` an
    :class:`~scopa_env.fast.core.bundles.ObservationFormat` (the layout's card planes, scales and
    declaration entries)."""
    hands, piles = game.hands, game.piles
    played, revealed = game.played, game.revealed
    n = len(hands)
    ns = len(piles)
    side = _side(seat, ns)
    seen = hands[seat] | game.table
    for s in range(ns):
        seen |= piles[s]
    if form.declare:
        for s in range(n):
            seen |= revealed[s]
    w = form.width
    pending = game.pending
    pos = _plane(out, 0, hands[seat], w)
    pos = _plane(out, pos, game.table, w)
    for k in range(ns):
        pos = _plane(out, pos, piles[(side + k) % ns], w)
    for k in range(n):
        pos = _plane(out, pos, played[(seat + k) % n], w)
    pos = _plane(out, pos, form.deck_mask & ~seen, w)
    pos = _plane(out, pos, (np.int64(1) << pending) if pending >= 0 else 0, w)
    pos = _plane(out, pos, game.selected, w)
    if form.declare:  # the revealed planes of seat +1, +2 ...; the declaring flag is the last entry
        for k in range(1, n):
            pos = _plane(out, pos, revealed[(seat + k) % n], w)
    _write_tail(out, pos, seat, game, form)


@njit(cache=True, inline="always")
def _write_tail(out, pos, seat, game, form):
    """The entries after the card planes (from ``pos``; :func:`observation_need` lists them),
    and zeros up to the end of ``out``."""
    n = len(game.hands)
    ns = len(game.piles)
    side = _side(seat, ns)
    size = out.shape[0]
    for k in range(size - pos):
        out[pos + k] = 0.0
    for j in range(ns):
        sj = (side + j) % ns
        out[pos + j] = np.float32(game.scope[sj])
        out[pos + ns + j] = np.float32(game.scores[sj] / form.target)
    pos += 2 * ns
    for j in range(n):
        out[pos + j] = np.float32(popcount(game.hands[(seat + j) % n]) / form.hand_size)
    pos += n
    out[pos] = np.float32(game.stock_left / float(form.width))
    pos += 1
    out[pos + (seat - game.dealer) % n] = 1.0
    pos += n
    out[pos + (game.current - seat) % n] = 1.0
    pos += n
    last = game.last_capturer
    out[pos + (n if last == NO_SEAT else (last - seat) % n)] = 1.0
    pos += n + 1
    out[pos + (1 if game.pending >= 0 else 0)] = 1.0
    pos += 2
    wild = game.wild
    if 0 < wild <= MAX_RANK:  # Cirulla: one-hot of the wildcard's declared rank (0: none)
        out[pos + wild - 1] = 1.0
    if form.declare and game.queue:
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
