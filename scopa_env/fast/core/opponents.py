"""The compiled players: ``random``, ``greedy`` (:mod:`agents.greedy`) and ``heuristic``
(:class:`agents.heuristic.HeuristicAgent`); :func:`choose_move` picks a move for the seat to move.
They serve as the batch's opponents, in :func:`~scopa_env.fast.core.kernels.playout_kernel` and in
the search's rollouts (:mod:`scopa_env.fast.search`); ``tests/test_fast_heuristic.py`` holds the
heuristic equal to the Python agent.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scopa_env.fast.core.bits import (
    _below,
    _picture_rank,
    _rank,
    _rank_mask,
    _side,
    _suit_mask,
    popcount,
)
from scopa_env.fast.core.captures import (
    legal_pairs,
    wild_pairs,
)
from scopa_env.fast.core.decisions import (
    _plain_turn,
    mover_pairs,
)
from scopa_env.fast.layout import (
    COL_CURRENT,
    COL_HAND,
    COL_IN_HANDS,
    COL_LASTCAP,
    COL_PHASE,
    COL_PILE,
    COL_REVEALED,
    COL_STOCK_POS,
    COL_TABLE,
    COL_WILD,
    F_GREEDY_SCOPA,
    F_GREEDY_TOL,
    F_GREEDY_VALUES,
    F_PRIMIERA,
    FRENCH_RANKS,
    H_BLOCK,
    H_CARD,
    H_COIN,
    H_LEFTOVER,
    H_PRIMIERA,
    H_REPLY,
    H_SCOPA,
    H_SETTEBELLO,
    H_TRAIL,
    MAX_CARDS,
    MISSING_SUIT_BASE,
    NO_SEAT,
    NUM_CARDS,
    OPPONENT_HEURISTIC,
    OPPONENT_RANDOM,
    P_DECK_MASK,
    P_DECK_SIZE,
    P_DECLARE,
    P_FRENCH,
    P_HAND_SIZE,
    P_LAST_SCOPA,
    P_PLAYERS,
    P_SIDES,
    PHASE_DECLARE,
    PICTURE_BITS,
    PICTURES,
    RANK_SPAN,
    SETTEBELLO,
    SUIT_BITS,
)


@njit(cache=True)
def choose_move(S, i, rng, P, F, H, kind, sub_mask, sub_sum, lc, lm, D):
    """Index into ``lc``/``lm`` of the compiled player's move for the seat to move (lists filled here).

    ``H``: the heuristic's weights, or None when no heuristic player moves (the caller's promise).
    ``D``: None where no decision rule plays (:func:`play`), which prunes the decisions' code.
    """
    table = S[i, COL_TABLE]
    if D is None:  # a compile-time branch: every turn is a plain card play
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], table, P, sub_mask, sub_sum, lc, lm)
    elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], False):
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], table, P, sub_mask, sub_sum, lc, lm)
    else:
        count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, False)
    if kind == OPPONENT_RANDOM or count == 1:
        return _below(rng, i, 1, count)
    if H is not None:  # a compile-time branch: pruned when H is None
        if kind == OPPONENT_HEURISTIC:
            scores = _heuristic_scores(S, i, P, F, H, count, sub_mask, sub_sum, lc, lm)
            return _pick_best(rng, i, scores, count, F[F_GREEDY_TOL])
    # Greedy (agents.greedy): capture value of captured + played (+ scopa), else minus the trailed card's value.
    last_play = S[i, COL_IN_HANDS] == 1 and S[i, COL_STOCK_POS] == P[P_DECK_SIZE]
    sweep_counts = P[P_LAST_SCOPA] or not last_play
    scores = np.empty(count, np.float64)
    for k in range(count):
        m = lm[k]
        if m == 0:
            v = -F[F_GREEDY_VALUES + lc[k]]
        else:
            v = _mask_value(m | (np.int64(1) << lc[k]), F[F_GREEDY_VALUES : F_GREEDY_VALUES + MAX_CARDS])
            if m == table and sweep_counts:
                v += F[F_GREEDY_SCOPA]
        scores[k] = v
    return _pick_best(rng, i, scores, count, F[F_GREEDY_TOL])


@njit(cache=True, inline="always")
def _pick_best(rng, i, scores, count, tol):
    """Index of the best score; ties within ``tol`` broken uniformly (agents.greedy.pick_best)."""
    best = -1e300
    for k in range(count):
        if scores[k] > best:
            best = scores[k]
    ties = 0
    for k in range(count):
        if scores[k] >= best - tol:
            ties += 1
    nth = _below(rng, i, 1, ties) if ties > 1 else 0
    for k in range(count):
        if scores[k] >= best - tol:
            if nth == 0:
                return k
            nth -= 1
    return 0


@njit(cache=True, inline="always")
def _mask_value(mask, values):
    """Sum of ``values`` over the cards of ``mask``, ascending (agents.greedy.mask_value, same float order)."""
    total = 0.0
    while mask != 0:
        b = mask & -mask
        mask ^= b
        total += values[trailing_zeros(b)]
    return total


# --- the heuristic opponent (agents.heuristic.HeuristicAgent, default weights) ---------------
# It reads only what its seat may see: its own hand, the table, the piles, the hand sizes,
# the stock size and the last capturer; the unseen cards are the deck less those.


@njit(cache=True, inline="always")
def _comb(n, k):
    """Binomial coefficient, exact in int64 for a 40-card deck."""
    if k < 0 or k > n:
        return np.int64(0)
    r = np.int64(1)
    for j in range(k):
        r = r * (n - j) // (j + 1)
    return r


@njit(cache=True, inline="always")
def _holds_some(unseen, kind, hand_size):
    """Chance that a hand of ``hand_size`` cards drawn from ``unseen`` cards holds one of ``kind`` of them."""
    if kind <= 0 or hand_size <= 0:
        return 0.0
    if unseen - kind < hand_size:
        return 1.0
    return 1.0 - np.float64(_comb(unseen - kind, hand_size)) / np.float64(_comb(unseen, hand_size))


@njit(cache=True)
def _side_card_values(S, i, P, F, H, side, out):
    """Per card id, what capturing it is worth to ``side`` given its pile (heuristic.side_card_values)."""
    deck = P[P_DECK_MASK]
    french = P[P_FRENCH] != 0
    coins = _suit_mask(0, french)  # the heuristic counts coins, whatever the bonus suit
    half_cards = popcount(deck) / 2
    half_coins = popcount(deck & coins) / 2
    cards_open = True
    coins_open = True
    for s in range(P[P_SIDES]):
        p = S[i, COL_PILE + s]
        if popcount(p) > half_cards:
            cards_open = False
        if popcount(p & coins) > half_coins:
            coins_open = False
    pile = S[i, COL_PILE + side]
    base = np.empty(4, np.float64)
    for suit in range(4):
        held = (pile >> (RANK_SPAN * suit)) & SUIT_BITS
        pictures = (pile >> (NUM_CARDS + PICTURES * suit)) & PICTURE_BITS if french else 0
        best = np.float64(MISSING_SUIT_BASE)
        if held != 0 or pictures != 0:
            best = -1e300
            while held != 0:
                b = held & -held
                held ^= b
                v = F[F_PRIMIERA + trailing_zeros(b)]
                if v > best:
                    best = v
            while pictures != 0:
                b = pictures & -pictures
                pictures ^= b
                v = F[F_PRIMIERA + RANK_SPAN + trailing_zeros(b)]
                if v > best:
                    best = v
        base[suit] = best
    for c in range(NUM_CARDS):
        v = H[H_CARD] if cards_open else 0.0
        v += H[H_PRIMIERA] * max(0.0, F[F_PRIMIERA + c % RANK_SPAN] - base[c // RANK_SPAN])
        if c < RANK_SPAN and coins_open:
            v += H[H_COIN]
        if c == SETTEBELLO:
            v += H[H_SETTEBELLO]
        out[c] = v
    if french:  # the 52-card deck's pictures, ids 40..51 (no coin of them is the settebello)
        for c in range(NUM_CARDS, MAX_CARDS):
            suit = (c - NUM_CARDS) // PICTURES
            v = H[H_CARD] if cards_open else 0.0
            v += H[H_PRIMIERA] * max(0.0, F[F_PRIMIERA + _picture_rank(c) - 1] - base[suit])
            if suit == 0 and coins_open:
                v += H[H_COIN]
            out[c] = v


class _Mover(NamedTuple):
    """What the heuristic's seat to move sees of the position, the same for each of its moves."""

    side: int
    """Its side."""
    hand: int
    """Its hand."""
    table: int
    """The table."""
    unseen: int
    """The cards it cannot see: the deck less its hand, the table, the piles and the shown cards."""
    wild: int
    """Cirulla: the declared wildcard's rank (0: none); it captures and is captured as that rank."""
    french: bool
    """The 52-card deck."""
    values: np.ndarray
    """By card id, what capturing it is worth to its side (:func:`_side_card_values`)."""
    last_play: bool
    """This move is the hand's last: the table then goes to the last capturer."""
    final_round: bool
    """The stock is empty."""
    others_hold: bool
    """Another side still holds cards."""
    sweep_counts: bool
    """A sweep of this move scores (not the hand's last play, or ``P_LAST_SCOPA``)."""
    last_side: int
    """The side of the last capturer, ``NO_SEAT`` for none."""


class _Reply(NamedTuple):
    """The heuristic's model of the next player's reply: one unseen card per rank stands for
    that rank (HeuristicAgent's reply term)."""

    cards: int
    """The lowest unseen card of every rank an unseen card has."""
    chance: np.ndarray
    """By rank - 1: the chance that the next player holds a card of that rank."""
    played: np.ndarray
    """By rank - 1: the mean value, to the next player's side, of the card of that rank it plays."""
    values: np.ndarray
    """By card id, what capturing it is worth to the next player's side."""
    sweep_counts: bool
    """A sweep of the next player's scores (not the hand's last play, or ``P_LAST_SCOPA``)."""


@njit(cache=True)
def _heuristic_scores(S, i, P, F, H, count, sub_mask, sub_sum, lc, lm):
    """The heuristic score of each of the ``count`` legal pairs in ``lc``/``lm`` (HeuristicAgent.scores).

    In a declaration (``COL_PHASE`` PHASE_DECLARE) passing scores ``-inf``: the heuristic always
    declares. The next player's replies are enumerated into ``lc``/``lm`` after the ``count`` pairs.
    The move loop is written out here, not in a helper per move: the arrays it reads are this
    function's own, and an inlined helper would count a reference to each per move (borrow.py).
    """
    mover, reply = _heuristic_view(S, i, P, F, H)
    table, hand, side, wild, french = mover.table, mover.hand, mover.side, mover.wild, mover.french
    mine, theirs = mover.values, reply.values
    rep_p, rep_played = reply.chance, reply.played
    best = np.empty(FRENCH_RANKS, np.float64)
    order = np.empty(FRENCH_RANKS, np.int64)
    rc = lc[count:]
    rm = lm[count:]
    w_scopa = H[H_SCOPA]
    w_leftover = H[H_LEFTOVER]
    declaring = S[i, COL_PHASE] == PHASE_DECLARE
    scores = np.empty(count, np.float64)
    for k in range(count):
        card = lc[k]
        captured = lm[k]
        if declaring and captured == 0:  # passing on a declaration: below every declaring move
            scores[k] = -np.inf
            continue
        bit = np.int64(1) << card
        after = table & ~captured if captured != 0 else table | bit
        rank_mask = _rank_mask(_rank(card, wild, french), wild, french)
        if captured != 0:
            score = _mask_value(captured | bit, mine)
            if captured == table and mover.sweep_counts:
                score += w_scopa
        else:
            score = -H[H_TRAIL] * mine[card]
            if (mover.unseen & rank_mask) == 0 and (hand & rank_mask & ~bit) != 0:
                score += H[H_BLOCK] * mine[card]
        if mover.last_play:
            # The hand ends now: the table goes to the last capturer.
            taker = side if captured != 0 else mover.last_side
            if taker == side:
                score += w_leftover * _mask_value(after, mine)
            elif taker != NO_SEAT:
                score -= w_leftover * _mask_value(after, theirs)
            scores[k] = score
            continue
        # Expected value of the next player's best capture on ``after``, and the chance they have none.
        value = 0.0
        p_none = 1.0
        if after != 0 and reply.cards != 0:
            nr = wild_pairs(reply.cards, after, P, wild, sub_mask, sub_sum, rc, rm)
            ranked = 0
            for r in range(FRENCH_RANKS if french else RANK_SPAN):
                best[r] = -1.0
            for j in range(nr):
                m = rm[j]
                if m == 0:
                    continue
                v = _mask_value(m, theirs)
                if m == after and reply.sweep_counts:
                    v += w_scopa
                r = _rank(rc[j], 0, french) - 1
                if v > best[r]:
                    if best[r] < 0.0:  # ranks in order of first capture (the engine's dict order)
                        order[ranked] = r
                        ranked += 1
                    best[r] = v
            # By best value, descending; equal values keep their first-capture order (a stable sort).
            for a in range(ranked):
                top = a
                for b in range(a + 1, ranked):
                    if best[order[b]] > best[order[top]]:
                        top = b
                r = order[top]
                for b in range(top, a, -1):
                    order[b] = order[b - 1]
                order[a] = r
                value += p_none * rep_p[r] * (best[r] + rep_played[r])
                p_none *= 1.0 - rep_p[r]
        score -= H[H_REPLY] * value
        if mover.final_round and captured != 0:
            share = 1.0 if not mover.others_hold else 0.5 * p_none
            score += w_leftover * share * _mask_value(after, mine)
        scores[k] = score
    return scores


@njit(cache=True, inline="always")
def _heuristic_view(S, i, P, F, H):
    """``(_Mover, _Reply)``: what the seat to move in game ``i`` sees, and its model of the next
    player's reply."""
    n = P[P_PLAYERS]
    ns = P[P_SIDES]
    seat = S[i, COL_CURRENT]
    side = _side(seat, ns)
    nxt = (seat + 1) % n
    hand = S[i, COL_HAND + seat]
    table = S[i, COL_TABLE]
    french = P[P_FRENCH] != 0
    mine = np.empty(MAX_CARDS, np.float64)
    theirs = np.empty(MAX_CARDS, np.float64)
    _side_card_values(S, i, P, F, H, side, mine)
    _side_card_values(S, i, P, F, H, _side(nxt, ns), theirs)
    seen = hand | table
    for s in range(ns):
        seen |= S[i, COL_PILE + s]
    if P[P_DECLARE]:  # declared hands are shown
        for s in range(n):
            seen |= S[i, COL_REVEALED + s]
    unseen = P[P_DECK_MASK] & ~seen
    stock = P[P_DECK_SIZE] - S[i, COL_STOCK_POS]
    in_hands = S[i, COL_IN_HANDS]  # the hand sizes, visible to all
    last_play = stock == 0 and in_hands == 1
    cards_left = in_hands - 1  # in all hands after this move
    if cards_left:
        opp_hand = popcount(S[i, COL_HAND + nxt])
    else:
        opp_hand = P[P_HAND_SIZE] if stock else 0
    others_hold = False
    for s in range(n):
        if _side(s, ns) != side and S[i, COL_HAND + s] != 0:
            others_hold = True
    their_last = stock == 0 and cards_left == 1
    sweep_counts = P[P_LAST_SCOPA] or not last_play
    their_sweep_counts = P[P_LAST_SCOPA] or not their_last
    lcap = S[i, COL_LASTCAP]
    last_side = NO_SEAT if lcap == NO_SEAT else _side(lcap, ns)
    wild = S[i, COL_WILD]  # Cirulla: a declared wildcard captures and is captured as its rank
    mover = _Mover(
        side, hand, table, unseen, wild, french, mine, last_play, stock == 0, others_hold, sweep_counts, last_side
    )
    return mover, _reply_model(unseen, opp_hand, theirs, french, their_sweep_counts)


@njit(cache=True, inline="always")
def _reply_model(unseen, opp_hand, theirs, french, sweep_counts):
    """The :class:`_Reply` of a next player holding ``opp_hand`` of the ``unseen`` cards."""
    num_unseen = popcount(unseen)
    # One unseen card per rank stands for that rank in the reply model.
    rep_p = np.zeros(FRENCH_RANKS, np.float64)
    rep_played = np.zeros(FRENCH_RANKS, np.float64)
    rep_hand = np.int64(0)
    for r in range(FRENCH_RANKS if french else RANK_SPAN):
        kind = unseen & _rank_mask(r + 1, 0, french)
        if kind != 0:
            k = popcount(kind)
            low = kind & -kind
            rep_p[r] = _holds_some(num_unseen, k, opp_hand)
            rep_played[r] = _mask_value(kind, theirs) / k
            rep_hand |= low
    return _Reply(rep_hand, rep_p, rep_played, theirs, sweep_counts)
