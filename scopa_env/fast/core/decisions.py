"""The turns that are not a card play, and the seat to move's pairs in any turn.

Cirulla's table bonus (an initial table of 15 or 30), the declarations after a three-card deal
(``bazzica_points``: Game._open_declarations, Game._declare, scoring.declaration) or at a player's
first turn of it (Cirulla's ``hand_bonus_points``: Game._offer_declaration), and :func:`mover_pairs` (Game.legal_pairs): the decision pairs of Chkobba's
first card and of a declaration, else the capture pairs of :mod:`scopa_env.fast.core.captures`,
with the chiamarsi fuori claim where it is offered. Chkobba's first card itself is dealt in
:mod:`scopa_env.fast.core.game` (:func:`~scopa_env.fast.core.game._decide`), which deals the rest.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from scopa_env.fast.core.bits import (
    _side,
    popcount,
)
from scopa_env.fast.core.captures import (
    legal_pairs,
    wild_pairs,
)
from scopa_env.fast.layout import (
    BAZZICA_FACE,
    BAZZICA_FACE_FROM,
    BAZZICA_MAX,
    BAZZICOTTO_RANK_SPAN,
    BONUS_THREE_OF_A_KIND,
    BONUS_TOTAL,
    COL_CURRENT,
    COL_DEALER,
    COL_DECLARED,
    COL_DECLARERS,
    COL_HAND,
    COL_LASTCAP,
    COL_PHASE,
    COL_PILE,
    COL_QUEUE,
    COL_REVEALED,
    COL_SCOPE,
    COL_SCOPE_PTS,
    COL_SCORE,
    COL_TABLE,
    COL_WILD,
    DECLARATION_CARDS,
    DECLARE_HAND_BONUS,
    HAND_BONUS_BELOW,
    MAX_RANK,
    NO_SEAT,
    ONE_OF_EACH_SUIT,
    P_BAZZICA,
    P_CLAIM_OUT,
    P_DECK_MASK,
    P_DECLARE,
    P_HAND_BONUS,
    P_PLAYERS,
    P_SCOPA_POINTS,
    P_SIDES,
    P_TABLE_BONUS,
    P_WILDCARD,
    PHASE_DECLARE,
    PHASE_PLAY,
    RANK_SPAN,
    TABLE_BONUS_ONE,
    TABLE_BONUS_TWO,
    WILD_RANK_LABEL_SUIT,
    WILD_TOTAL_RANK,
    WILDCARD,
    WILDCARD_RANK,
)

# --- Cirulla's table bonus (Game._table_bonus, scoring.table_bonus_scope) ---------------------------


@njit(cache=True, inline="always")
def _table_bonus_scope(table, P):
    """Scope the dealer marks for an initial table totalling 30 (2) or 15 (1), else 0
    (scoring.table_bonus_scope); under ``bonus_wildcard`` the Seven of cups counts 1..10."""
    if not P[P_TABLE_BONUS] or table == 0:
        return 0
    total = 0
    t = table
    while t != 0:
        b = t & -t
        t ^= b
        total += trailing_zeros(b) % RANK_SPAN + 1
    if P[P_WILDCARD] and (table >> WILDCARD) & 1:
        rest = total - WILDCARD_RANK
        if rest + 1 <= TABLE_BONUS_TWO <= rest + MAX_RANK:
            return 2
        if rest + 1 <= TABLE_BONUS_ONE <= rest + MAX_RANK:
            return 1
        return 0
    if total == TABLE_BONUS_TWO:
        return 2
    return 1 if total == TABLE_BONUS_ONE else 0


@njit(cache=True)
def _table_bonus(S, i, P):
    """Cirulla (Game._table_bonus): an initial table of 15 (30) goes to the dealer with one (two) scope."""
    scope = _table_bonus_scope(S[i, COL_TABLE], P)
    if scope:
        dealer = S[i, COL_DEALER]
        side = _side(dealer, P[P_SIDES])
        S[i, COL_PILE + side] |= S[i, COL_TABLE]
        S[i, COL_TABLE] = 0
        S[i, COL_SCOPE + side] += scope
        S[i, COL_SCOPE_PTS + side] += scope * P[P_SCOPA_POINTS]
        S[i, COL_LASTCAP] = dealer


# --- declarations (bazzica_points: Game._open_declarations, Game._declare, scoring.declaration) ---


@njit(cache=True)
def _declaration(hand, P):
    """``(strength, points)`` of the declaration a hand qualifies for (scoring.declaration);
    strength -1 for none, else lower is better: a bazzicotto (three of a kind) by rank, then a
    bazzica (three cards adding up to 9 or less) by total."""
    if popcount(hand) != DECLARATION_CARDS:
        return -1, 0
    h = hand
    r0 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r1 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r2 = trailing_zeros(h) % RANK_SPAN + 1
    if r0 == r1 and r1 == r2:
        return r0, P[P_BAZZICA + 2]
    total = 0
    for r in (r0, r1, r2):
        total += BAZZICA_FACE if r >= BAZZICA_FACE_FROM else r
    if total > BAZZICA_MAX:
        return -1, 0
    distinct = r0 != r1 and r0 != r2 and r1 != r2
    return BAZZICOTTO_RANK_SPAN + total, P[P_BAZZICA + (0 if distinct else 1)]


@njit(cache=True)
def _hand_bonus(hand, P):
    """``(strength, points, wild_rank)`` of Cirulla's hand bonus of a three-card hand
    (scoring._hand_bonus): strength BONUS_THREE_OF_A_KIND, else BONUS_TOTAL (three cards
    adding up to less than 10), -1 for none; each is tried first without the wildcard, then
    with the Seven of cups standing for the card it needs (``wild_rank``: the rank it stands
    for, reported as an Ace for the total; 0 when the bonus needs no wildcard)."""
    if popcount(hand) != DECLARATION_CARDS:
        return -1, 0, 0
    h = hand
    r0 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r1 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r2 = trailing_zeros(h) % RANK_SPAN + 1
    wild = P[P_WILDCARD] != 0 and (hand >> WILDCARD) & 1 == 1
    o0 = 0
    o1 = 0
    if wild:
        rest = hand & ~(np.int64(1) << WILDCARD)
        o0 = trailing_zeros(rest) % RANK_SPAN + 1
        rest &= rest - 1
        o1 = trailing_zeros(rest) % RANK_SPAN + 1
    if r0 == r1 and r1 == r2:
        return BONUS_THREE_OF_A_KIND, P[P_HAND_BONUS + 1], 0
    if wild and o0 == o1:
        return BONUS_THREE_OF_A_KIND, P[P_HAND_BONUS + 1], o0
    if r0 + r1 + r2 < HAND_BONUS_BELOW:
        return BONUS_TOTAL, P[P_HAND_BONUS], 0
    if wild and o0 + o1 + WILD_TOTAL_RANK < HAND_BONUS_BELOW:
        return BONUS_TOTAL, P[P_HAND_BONUS], WILD_TOTAL_RANK
    return -1, 0, 0


@njit(cache=True)
def _wild_choices(hand, P):
    """Bit ``r`` per rank the player may declare the wildcard as (scoring.wild_rank_choices):
    when the hand's bonus is the total under 10 and needs the wildcard, every rank of the
    deck that keeps the total under 10; else 0 (nothing to choose)."""
    strength, points, wild = _hand_bonus(hand, P)
    if strength != BONUS_TOTAL or wild == 0:
        return 0
    others = 0
    rest = hand & ~(np.int64(1) << WILDCARD)
    while rest != 0:
        others += trailing_zeros(rest) % RANK_SPAN + 1
        rest &= rest - 1
    out = 0
    for r in range(1, MAX_RANK + 1):
        if (P[P_DECK_MASK] & (np.int64(ONE_OF_EACH_SUIT) << (r - 1))) != 0 and others + r < HAND_BONUS_BELOW:
            out |= 1 << r
    return out


@njit(cache=True, inline="always")
def _can_declare(hand, P):
    """Whether a hand qualifies for a declaration (scoring.declaration is not None)."""
    if P[P_DECLARE] == DECLARE_HAND_BONUS:
        return _hand_bonus(hand, P)[0] >= 0
    return _declaration(hand, P)[0] >= 0


@njit(cache=True)
def _first_in_queue(S, i, n):
    """The seat of ``COL_QUEUE`` nearest the dealer's left (the queue is in turn order)."""
    for k in range(n):
        seat = (S[i, COL_DEALER] + 1 + k) % n
        if (S[i, COL_QUEUE] >> seat) & 1:
            return seat
    return NO_SEAT


@njit(cache=True)
def _offer_declaration(S, i, P):
    """Cirulla (Game._offer_declaration): the seat to move decides on its hand bonus when this is
    its first turn of the deal (it holds the deal's three cards) and its hand qualifies."""
    seat = S[i, COL_CURRENT]
    hand = S[i, COL_HAND + seat]
    if popcount(hand) == DECLARATION_CARDS and _hand_bonus(hand, P)[0] >= 0:
        S[i, COL_QUEUE] = np.int64(1) << seat
        S[i, COL_PHASE] = PHASE_DECLARE


@njit(cache=True)
def _open_declarations(S, i, P):
    """After a three-card deal, queue the seats whose hands can declare; the first of them moves.
    Cirulla's hand bonuses: only the seat to move, at its first turn (:func:`_offer_declaration`)."""
    if not P[P_DECLARE]:
        return
    n = P[P_PLAYERS]
    if P[P_DECLARE] == DECLARE_HAND_BONUS:
        S[i, COL_QUEUE] = 0
        S[i, COL_DECLARERS] = 0
        _offer_declaration(S, i, P)
        return
    queue = np.int64(0)
    for seat in range(n):
        if _can_declare(S[i, COL_HAND + seat], P):
            queue |= np.int64(1) << seat
    S[i, COL_QUEUE] = queue
    S[i, COL_DECLARERS] = 0
    if queue != 0:
        S[i, COL_PHASE] = PHASE_DECLARE
        S[i, COL_CURRENT] = _first_in_queue(S, i, n)


@njit(cache=True)
def _declare(S, i, P, captured):
    """The seat to move declares (``captured`` not 0, showing its hand) or passes; once every
    queued seat has decided, the best declaration of the deal scores at once, none on a tie
    (Game._declare). Under Cirulla's ``hand_bonus_points`` the seat to move is the only one
    queued, at its first turn: its declaration scores at once and it then plays a card. A
    Cirulla declaration sets the wildcard's rank for the rest of the hand
    (scoring.declared_wild_rank)."""
    n = P[P_PLAYERS]
    seat = S[i, COL_CURRENT]
    S[i, COL_QUEUE] &= ~(np.int64(1) << seat)
    if captured != 0:
        hand = S[i, COL_HAND + seat]
        S[i, COL_DECLARERS] |= np.int64(1) << seat
        S[i, COL_REVEALED + seat] = hand
        if P[P_DECLARE] == DECLARE_HAND_BONUS:
            if _wild_choices(hand, P) != 0:  # the label's rank: (WILDCARD, 1 << the coin of that rank)
                wild = trailing_zeros(captured) % RANK_SPAN + 1
            else:
                wild = _hand_bonus(hand, P)[2]
            if wild != 0:
                S[i, COL_WILD] = wild
    if P[P_DECLARE] == DECLARE_HAND_BONUS:  # Cirulla: the declaration scores at once; the seat plays on
        if captured != 0:
            points = _hand_bonus(S[i, COL_HAND + seat], P)[1]
            side = _side(seat, P[P_SIDES])
            S[i, COL_SCORE + side] += points
            S[i, COL_DECLARED + side] += points
        S[i, COL_DECLARERS] = 0
        S[i, COL_PHASE] = PHASE_PLAY
        return
    if S[i, COL_QUEUE] != 0:
        S[i, COL_CURRENT] = _first_in_queue(S, i, n)
        return
    best = 1 << 30
    ties = 0
    points = 0
    winner = NO_SEAT
    for seat in range(n):
        if (S[i, COL_DECLARERS] >> seat) & 1:
            strength, pts = _declaration(S[i, COL_HAND + seat], P)
            if strength < best:
                best, ties, points, winner = strength, 1, pts, seat
            elif strength == best:
                ties += 1
    if winner != NO_SEAT and ties == 1:
        side = _side(winner, P[P_SIDES])
        S[i, COL_SCORE + side] += points
        S[i, COL_DECLARED + side] += points
    S[i, COL_DECLARERS] = 0
    S[i, COL_PHASE] = PHASE_PLAY
    S[i, COL_CURRENT] = (S[i, COL_DEALER] + 1) % n


# --- the seat to move's pairs (Game.legal_pairs) -----------------------------------------------


@njit(cache=True)
def _decision_pairs(S, i, P, hand, lc, lm):
    """:func:`mover_pairs` in a decision (``COL_PHASE`` not PHASE_PLAY); returns their number.

    Kept apart so that the card-play path, which every preset takes on most turns, stays short.
    """
    high = 63 - leading_zeros(hand)
    if S[i, COL_PHASE] == PHASE_DECLARE and P[P_DECLARE] == DECLARE_HAND_BONUS:
        choices = _wild_choices(hand, P)
        if choices != 0:  # pass (WILDCARD, 0); declare it as rank r: (WILDCARD, 1 << the coin of r)
            lc[0] = WILDCARD
            lm[0] = 0
            count = 1
            for r in range(1, MAX_RANK + 1):
                if (choices >> r) & 1:
                    lc[count] = WILDCARD
                    lm[count] = np.int64(1) << (WILD_RANK_LABEL_SUIT * RANK_SPAN + r - 1)
                    count += 1
            return count
    # keep or table the first card; declare or pass
    lc[0] = high
    lm[0] = 0
    lc[1] = high
    lm[1] = np.int64(1) << high
    return 2


@njit(cache=True, inline="always")
def _plain_turn(phase, wild, claim):
    """Whether the seat to move's pairs are :func:`legal_pairs`'s list alone: a card-play turn
    (``phase``) without a declared wildcard (``wild``) and no claim offered (``claim``). The
    hot callers then call :func:`legal_pairs` themselves, as before the decision rules came:
    going through :func:`mover_pairs` on every turn cost the standard game about a seventh of
    its random-play speed (3.7M -> 3.1M moves per CPU-second). Scalars only here, so inlining
    this adds no array references to count. For the same reason its four callers spell out the
    choice between ``D`` None, :func:`legal_pairs` and :func:`mover_pairs`: one inlined helper
    taking the arrays measured 5 to 10% slower in random play and batch steps."""
    return phase == PHASE_PLAY and wild == 0 and not claim


@njit(cache=True)
def mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, claims):
    """The ``(card, captured)`` pairs of the seat to move into ``lc``/``lm``; returns their number.

    Game.legal_pairs: in a Chkobba decision ``(card, 0)`` (table it) and ``(card, 1 << card)``
    (keep it) of the hand's only card; in a declaration ``(card, 0)`` (pass) and
    ``(card, 1 << card)`` (declare) of the hand's highest card, or under Cirulla's wildcard
    ``(WILDCARD, 0)`` and ``(WILDCARD, 1 << the coin of r)`` per rank ``r`` it may be named
    (scoring.declaring_pairs; :func:`_decision_pairs`); else :func:`wild_pairs`
    (:func:`legal_pairs` with a declared wildcard's rank). With ``claims`` (Game.action_pairs,
    what the env offers) the chiamarsi fuori claim ``(highest card, its own bit)`` follows on a
    card-play turn; the compiled players choose without it, as the Python agents do.
    """
    hand = S[i, COL_HAND + S[i, COL_CURRENT]]
    if S[i, COL_PHASE] != PHASE_PLAY:
        return _decision_pairs(S, i, P, hand, lc, lm)
    wild = S[i, COL_WILD]
    if wild == 0:  # no declared wildcard (every preset but Cirulla): the plain list, one call fewer
        count = legal_pairs(hand, S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    else:
        count = wild_pairs(hand, S[i, COL_TABLE], P, wild, sub_mask, sub_sum, lc, lm)
    if claims and P[P_CLAIM_OUT]:
        high = 63 - leading_zeros(hand)
        lc[count] = high
        lm[count] = np.int64(1) << high
        count += 1
    return count
