"""Legal moves (:func:`scopa_env.engine.rules.legal_pairs`): the capture rules as ``(card, captured)``
pairs, and their ids in the "move" enumeration (:mod:`scopa_env.engine.actions`).

:func:`legal_pairs` is the general entry; its fast path, the 40-card deck's standard captures
(``P_PLAIN``), is :func:`_standard_pairs`, which :func:`plain_pairs` (the batch row loop's, where
``STD`` is not None), :func:`card_capture` and :func:`plain_move_ids` (the AEC env's helpers that
:mod:`scopa_env.fast.aot` exports) share. :func:`_variant_pairs` holds every other capture rule,
:func:`wild_pairs` Cirulla's declared wildcard.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scopa_env.fast.core.bits import (
    _rank,
    _rank_mask,
    _wild_for,
    popcount,
)
from scopa_env.fast.layout import (
    MAX_RANK,
    NUM_CARDS,
    NUM_PARAMS,
    ONE_OF_EACH_SUIT,
    P_ACE_ITSELF,
    P_CAPTURE_EQUAL,
    P_CAPTURE_SUM,
    P_FEWEST,
    P_FRENCH,
    P_MAX_CAPTURE,
    P_MAX_SUM,
    P_OPTIONAL,
    P_PLAIN,
    P_PRIORITY,
    P_TAKE_ALL,
    P_WILD_IDS,
    PLAIN_SUBSETS,
    RANK_SPAN,
    TBL_CARD_START,
    WILDCARD,
)


@njit(cache=True, inline="always")
def _subsets(table, max_sum, sub_mask, sub_sum, wild, french):
    """Every subset of ``table`` with value sum <= ``max_sum``, ascending by mask (the empty set first);
    the wildcard counts as ``wild`` (0: its own rank); ``french``: the 52-card deck (:func:`_rank`).

    Adding cards in ascending id order keeps the list sorted: each new subset holds a
    higher bit than every older one.
    """
    sub_mask[0] = 0
    sub_sum[0] = 0
    n = 1
    t = table
    while t != 0:
        b = t & -t
        t ^= b
        r = _rank(trailing_zeros(b), wild, french)
        m = n
        for k in range(m):
            s = sub_sum[k] + r
            if s <= max_sum:
                sub_mask[n] = sub_mask[k] | b
                sub_sum[n] = s
                n += 1
    return n


@njit(cache=True)
def legal_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask):
    """Legal ``(card, captured)`` pairs into ``out_card``/``out_mask``; returns their number.

    Same moves in the same order as :func:`scopa_env.engine.rules.legal_pairs`: by card, then
    captured mask ascending, the trail (mask 0) first where it is legal. The fast path below
    is the 40-card deck's standard capture pattern (``P_PLAIN``); the rest, the 52-card deck
    included, goes through :func:`_variant_pairs`.
    """
    if not P[P_PLAIN]:
        return _variant_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask, 0)
    return _standard_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask)


@njit(cache=True)
def plain_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask):
    """:func:`legal_pairs` under the standard captures (``P_PLAIN``): the batch row loop calls it
    where ``STD`` is not None, so those rules do not compile :func:`_variant_pairs`."""
    return _standard_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask)


@njit(cache=True, inline="always")
def _standard_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask):
    """The standard captures' pairs, inlined into :func:`legal_pairs` and :func:`plain_pairs`
    (a call in between cost random play an eighth of its speed, 3.8M -> 3.3M moves per
    CPU-second: numba counts the references of the arrays passed)."""
    priority = P[P_PRIORITY]
    optional = P[P_OPTIONAL]
    count = 0
    if table == 0:
        h = hand
        while h != 0:
            b = h & -h
            h ^= b
            out_card[count] = trailing_zeros(b)
            out_mask[count] = 0
            count += 1
        return count
    nsub = -1
    h = hand
    while h != 0:
        b = h & -h
        h ^= b
        card = trailing_zeros(b)
        rank = card % RANK_SPAN + 1
        singles = table & (ONE_OF_EACH_SUIT << (rank - 1))
        if singles != 0 and priority:
            if optional:
                out_card[count] = card
                out_mask[count] = 0
                count += 1
            while singles != 0:
                s = singles & -singles
                singles ^= s
                out_card[count] = card
                out_mask[count] = s
                count += 1
            continue
        if nsub < 0:
            nsub = _subsets(table, MAX_RANK, sub_mask, sub_sum, 0, False)
        start = count
        if optional:
            out_card[count] = card
            out_mask[count] = 0
            count += 1
        # Sets summing to the rank; without single-card priority singles of the rank compete too.
        for k in range(1, nsub):
            if sub_sum[k] == rank:
                out_card[count] = card
                out_mask[count] = sub_mask[k]
                count += 1
        if count == start:
            out_card[count] = card
            out_mask[count] = 0
            count += 1
    return count


@njit(cache=True)
def card_capture(card, table, priority, optional):
    """The captured mask of ``card``'s legal move on ``table`` under the standard captures
    (``P_PLAIN``, priority and optional as ``P_PRIORITY`` and ``P_OPTIONAL``) when it has one
    (0: it goes to the table), or -1 when it has several: :func:`_standard_pairs` for that card
    alone, for the AEC env's "select" mode (:mod:`scopa_env.fast.aot` exports it). The scratch
    holds every subset of the table, bounded by the deck's (:data:`PLAIN_SUBSETS`). A card or
    table outside the 40-card deck is -1 too, never a shift past the word."""
    if card < 0 or card >= NUM_CARDS or table < 0 or table >> NUM_CARDS != 0:
        return -1
    count, _, masks = _plain_hand_pairs(1 << card, table, priority, optional)
    return masks[0] if count == 1 else -1


@njit(cache=True, inline="always")
def _plain_hand_pairs(hand, table, priority, optional):
    """:func:`_standard_pairs` of ``hand`` (a 40-card deck's cards) on ``table``, with a scratch sized
    to them (a card's moves: its trail and the table's subsets at most): ``(count, cards, masks)``."""
    cap = min(PLAIN_SUBSETS, 1 << popcount(table)) + 1
    width = popcount(hand) * cap
    P = np.zeros(NUM_PARAMS, np.int64)
    P[P_PRIORITY] = priority
    P[P_OPTIONAL] = optional
    scratch = np.empty(2 * cap + 2 * width, np.int64)
    cards = scratch[2 * cap : 2 * cap + width]
    masks = scratch[2 * cap + width :]
    count = _standard_pairs(hand, table, P, scratch[:cap], scratch[cap : 2 * cap], cards, masks)
    return count, cards, masks


@njit(cache=True)
def wild_pairs(hand, table, P, wild, sub_mask, sub_sum, out_card, out_mask):
    """:func:`legal_pairs` with Cirulla's declared wildcard rank ``wild`` (rules.legal_pairs's
    ``wild_rank``): the Seven of cups captures and is captured as that rank."""
    w = _wild_for(wild, hand | table)
    if w != 0:
        return _variant_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask, w)
    return legal_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask)


@njit(cache=True)
def _variant_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask, wild):
    """:func:`legal_pairs` for the capture fields (rules._variant_pairs): the union of
    equal-value captures, ``capture_sum`` captures and the Ace's take-all, then the
    ``max_capture_cards`` and ``fewest_cards`` filters. One ascending subset list serves
    every condition, so the union comes out sorted and without duplicates (the take-all,
    the whole table, is the largest mask of all: it goes last). ``wild``: the wildcard's
    capture rank (0: its own). Under ``P_FRENCH`` the ranks are the 52-card deck's (1..13)."""
    french = P[P_FRENCH] != 0
    equal = P[P_CAPTURE_EQUAL]
    total = P[P_CAPTURE_SUM]
    most = P[P_MAX_CAPTURE]
    optional = P[P_OPTIONAL]
    fewest_rule = P[P_FEWEST]
    passes = 2 if fewest_rule else 1  # the first pass finds the fewest cards a capture takes
    count = 0
    nsub = -1
    h = hand
    while h != 0:
        b = h & -h
        h ^= b
        card = trailing_zeros(b)
        rank = _rank(card, wild, french)
        if table == 0:
            out_card[count] = card
            out_mask[count] = b if (P[P_ACE_ITSELF] and rank == 1) else 0
            count += 1
            continue
        if nsub < 0:
            nsub = _subsets(table, P[P_MAX_SUM], sub_mask, sub_sum, wild, french)
        singles_only = P[P_PRIORITY] and (table & _rank_mask(rank, wild, french)) != 0
        need = total - rank if total else -1
        take_all = P[P_TAKE_ALL] and rank == 1 and (table & _rank_mask(1, wild, False)) == 0
        fewest = 64
        for pass_ in range(passes):
            emit = pass_ == passes - 1
            start = count
            if emit and optional:
                out_card[count] = card
                out_mask[count] = 0
                count += 1
            table_listed = False
            for k in range(nsub + 1):
                if k == 0:
                    continue
                if k < nsub:
                    m = sub_mask[k]
                    v = sub_sum[k]
                    size = popcount(m)
                    ok = (equal and v == rank and (size == 1 or not singles_only)) or (need > 0 and v == need)
                    ok = ok or (take_all and m == table)
                    if ok and m == table:
                        table_listed = True
                else:  # after the list: the take-all, unless the list held the whole table already
                    m = table
                    size = popcount(m)
                    ok = take_all and not table_listed
                if not ok or (most and size > most):
                    continue
                if not emit:
                    if size < fewest:
                        fewest = size
                    continue
                if fewest_rule and size != fewest:
                    continue
                out_card[count] = card
                out_mask[count] = m
                count += 1
            if emit and count == start:
                out_card[count] = card
                out_mask[count] = 0
                count += 1
    return count


@njit(cache=True, inline="always")
def _move_id(PAIRS, TBL, P, table, card, mask):
    """Id of ``(card, mask)`` in the "move" enumeration (binary search in the card's block).

    Under ``ace_takes_all`` an Ace's block ends with its compact take-all id (mask -1),
    which every Ace capture of the whole table maps to when no Ace lies there
    (MoveEnumeration.is_take_all); the search skips it. Under Cirulla's wildcard the Seven
    of cups has one too, which every move of it taking the whole table maps to.
    """
    lo = TBL[TBL_CARD_START + card]
    hi = TBL[TBL_CARD_START + card + 1] - 1
    if P[P_TAKE_ALL] and P[P_WILD_IDS] and card == WILDCARD:
        if mask == table and mask != 0:
            return hi
        hi -= 1
    elif P[P_TAKE_ALL] and card % RANK_SPAN == 0:
        if mask == table and mask != 0 and (table & ONE_OF_EACH_SUIT) == 0:
            return hi
        hi -= 1
    return _block_search(PAIRS, lo, hi, mask)


@njit(cache=True, inline="always")
def _block_search(PAIRS, lo, hi, mask):
    """The first index of ``lo..hi`` whose mask in ``PAIRS`` is not below ``mask`` (``hi`` if none):
    a card's block of the "move" enumeration is sorted by mask."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if PAIRS[mid, 1] < mask:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def plain_move_ids(hand, table, priority, optional, PAIRS, starts, out):
    """The "move" ids of ``hand``'s legal moves on ``table`` under the standard captures (as
    :func:`card_capture`) into ``out``, in :func:`legal_pairs` order; returns their number. For the
    AEC env's "move" mode (:mod:`scopa_env.fast.aot` exports it): ``PAIRS`` is the enumeration
    (``MoveEnumeration.pairs``, no take-all ids), ``starts[c]`` card ``c``'s first id (41 entries or
    more). -1, and nothing read out of bounds, where a card or the table is outside the 40-card
    deck, ``starts`` does not fit ``PAIRS``, a move is not in it, or ``out`` is too short."""
    if hand < 0 or hand >> NUM_CARDS != 0 or table < 0 or table >> NUM_CARDS != 0:
        return -1
    if starts.shape[0] <= NUM_CARDS or PAIRS.shape[1] != 2:
        return -1
    count, cards, masks = _plain_hand_pairs(hand, table, priority, optional)
    if count > out.shape[0]:
        return -1
    for k in range(count):
        card = cards[k]
        lo = starts[card]
        hi = starts[card + 1] - 1
        if lo < 0 or lo > hi or hi >= PAIRS.shape[0]:
            return -1
        j = _block_search(PAIRS, lo, hi, masks[k])
        if PAIRS[j, 0] != card or PAIRS[j, 1] != masks[k]:
            return -1
        out[k] = j
    return count
