"""Hand ends (:mod:`scopa_env.engine.scoring`): a hand's score breakdown into ``hand_score``, the
hand-end events and the game's winner, the env's rewards of a hand, and chiamarsi fuori's claim
(Game._claim, scoring.secured_points), which ends the game with every side's certain points.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from scopa_env.fast.core.bits import (
    _side,
    _suit_mask,
    popcount,
)
from scopa_env.fast.layout import (
    CAPPOTTO_LEAD,
    CLAIM_FALSE,
    CLAIM_SOUND,
    COL_DECLARED,
    COL_HAND_NUM,
    COL_PILE,
    COL_SCOPE,
    COL_SCOPE_PTS,
    COL_SCORE,
    F_PRIMIERA,
    INFO_CLAIM,
    INFO_FINAL_SCORE,
    INFO_HAND_ENDED,
    INFO_TERMINATED,
    INFO_WINNER,
    KING,
    MAX_SIDES,
    NAPOLA_CAP_6,
    NAPOLA_CAP_9,
    NAPOLA_MIN,
    NAPOLA_OFF,
    NAPOLA_PAGAT_6,
    NAPOLA_PAGAT_9,
    NAPOLA_WIKIPEDIA,
    NUM_CARDS,
    NUM_SCORE_FIELDS,
    ONE_OF_EACH_SUIT,
    P_ALL_COINS_WINS,
    P_BONUS_SUIT,
    P_BY_COUNTS,
    P_CAPPOTTO,
    P_COINS_RESET,
    P_DECK_MASK,
    P_EPISODE_HAND,
    P_FRENCH,
    P_NAPOLA,
    P_PALLE_DEL_CANE,
    P_PICCOLA_GRANDE,
    P_PIVA,
    P_PLAYERS,
    P_PRIME_ALL_SUITS,
    P_PRIME_GROUPS,
    P_RE_BELLO,
    P_REWARD_POINTS,
    P_SCALETTE,
    P_SCOPA_POINTS,
    P_SCOPA_VALUE,
    P_SEVEN_OF_CUPS,
    P_SEVENS,
    P_SIDES,
    P_TARGET,
    PICTURE_BITS,
    PICTURES,
    PIVA_CARD,
    PIVA_POINTS,
    PRIME_GROUP_BITS,
    RANK_SPAN,
    SCALETTA_ALTA_BASE,
    SCALETTA_BASSA_CAP,
    SCOPA_VALUE_CARD,
    SCOPA_VALUE_CARDS,
    SCORE_CARDS,
    SCORE_COINS,
    SCORE_DOUBLE_GAME,
    SCORE_GRANDE,
    SCORE_NAPOLA,
    SCORE_NUM_CARDS,
    SCORE_NUM_COINS,
    SCORE_NUM_SCOPE,
    SCORE_NUM_SEVENS,
    SCORE_NUM_SIXES,
    SCORE_PALLE_DEL_CANE,
    SCORE_PICCOLA,
    SCORE_PIVA,
    SCORE_PRIMIERA,
    SCORE_PRIMIERA_VALUE,
    SCORE_RE_BELLO,
    SCORE_SCALETTA_ALTA,
    SCORE_SCALETTA_BASSA,
    SCORE_SCOPE,
    SCORE_SETTEBELLO,
    SCORE_SEVEN_MAJORITY,
    SCORE_SEVEN_OF_CUPS,
    SCORE_TOTAL,
    SETTEBELLO,
    SEVEN_OF_CUPS_CARD,
    SUIT_BITS,
    TBL_PRIME_GROUPS,
)


@njit(cache=True)
def _primiera_sum(pile, F, all_suits, french):
    """Sum of the best primiera value per suit; a missing suit makes it 0 (``all_suits``) or adds 0.
    ``french``: the 52-card deck, whose suits hold their pictures (ranks 11..13) too."""
    total = 0.0
    for s in range(4):
        in_suit = (pile >> (RANK_SPAN * s)) & SUIT_BITS
        pictures = (pile >> (NUM_CARDS + PICTURES * s)) & PICTURE_BITS if french else 0
        if in_suit == 0 and pictures == 0:
            if all_suits:
                return 0.0
            continue
        best = 0.0
        while in_suit != 0:
            b = in_suit & -in_suit
            in_suit ^= b
            v = F[F_PRIMIERA + trailing_zeros(b)]
            if v > best:
                best = v
        while pictures != 0:
            b = pictures & -pictures
            pictures ^= b
            v = F[F_PRIMIERA + RANK_SPAN + trailing_zeros(b)]
            if v > best:
                best = v
        total += best
    return total


@njit(cache=True)
def _unique_max(values, count):
    """Index of the value strictly above all others, else -1 (scoring.unique_max)."""
    best = 0
    ties = 1
    for k in range(1, count):
        if values[k] > values[best]:
            best = k
            ties = 1
        elif values[k] == values[best]:
            ties += 1
    return best if ties == 1 else -1


@njit(cache=True, inline="always")
def _scopa_worth(P, rank, captured):
    """Points of one scopa (Game._scopa_worth): ``scopa_points``, or a Libyan ``scopa_value``
    (``rank``: the sweeping card's capture rank)."""
    how = P[P_SCOPA_VALUE]
    if how == SCOPA_VALUE_CARD:  # the sweeping card's rank
        return rank
    if how == SCOPA_VALUE_CARDS:  # the cards taken and the one played
        return popcount(captured) + 1
    return P[P_SCOPA_POINTS]


@njit(cache=True, inline="always")
def _run_from_ace(pile, suit):
    """Length of the run Ace, 2, 3 ... of ``suit`` in ``pile`` (scoring.run_from_ace)."""
    bits = (pile >> (RANK_SPAN * suit)) & SUIT_BITS
    run = 0
    while run < RANK_SPAN and (bits >> run) & 1:
        run += 1
    return run


@njit(cache=True, inline="always")
def _run_from_king(pile, suit):
    """Length of the run King, Queen, Jack ... of ``suit`` in ``pile`` (scoring.run_from_king)."""
    bits = (pile >> (RANK_SPAN * suit)) & SUIT_BITS
    run = 0
    while run < RANK_SPAN and (bits >> (KING - run)) & 1:
        run += 1
    return run


@njit(cache=True)
def _score_extras(pile, P, row):
    """The scoring extras of one pile into ``row`` (scoring._extras); returns their sum."""
    bonus = P[P_BONUS_SUIT]
    row[SCORE_RE_BELLO] = float((pile >> (RANK_SPAN * bonus + KING)) & 1) if P[P_RE_BELLO] else 0.0
    row[SCORE_SEVEN_OF_CUPS] = float((pile >> SEVEN_OF_CUPS_CARD) & 1) if P[P_SEVEN_OF_CUPS] else 0.0
    sevens = ONE_OF_EACH_SUIT << SETTEBELLO
    row[SCORE_PALLE_DEL_CANE] = 1.0 if P[P_PALLE_DEL_CANE] and (pile & sevens) == sevens else 0.0
    low = _run_from_ace(pile, bonus)
    high = _run_from_king(pile, bonus)
    napola = 0
    if P[P_NAPOLA] != NAPOLA_OFF and low >= NAPOLA_MIN:
        if P[P_NAPOLA] == NAPOLA_WIKIPEDIA:  # 3 for A-2-3, 1 per other card of the suit
            napola = popcount(pile & (SUIT_BITS << (RANK_SPAN * bonus)))
        else:
            napola = min(low, NAPOLA_CAP_6 if P[P_NAPOLA] == NAPOLA_PAGAT_6 else NAPOLA_CAP_9)
    row[SCORE_NAPOLA] = float(napola)
    bassa = alta = piccola = grande = 0
    if P[P_SCALETTE]:
        bassa = min(low, SCALETTA_BASSA_CAP) if low >= NAPOLA_MIN else 0
        alta = SCALETTA_ALTA_BASE + min(high, RANK_SPAN - 1) - NAPOLA_MIN if high >= NAPOLA_MIN else 0
    if P[P_PICCOLA_GRANDE]:
        piccola = min(low, NAPOLA_CAP_6) if low >= NAPOLA_MIN else 0
        grande = SCALETTA_ALTA_BASE if high >= NAPOLA_MIN else 0
    row[SCORE_SCALETTA_BASSA] = float(bassa)
    row[SCORE_SCALETTA_ALTA] = float(alta)
    row[SCORE_PICCOLA] = float(piccola)
    row[SCORE_GRANDE] = float(grande)
    row[SCORE_PIVA] = float(PIVA_POINTS * ((pile >> PIVA_CARD) & 1)) if P[P_PIVA] else 0.0
    total = 0.0
    for f in range(SCORE_RE_BELLO, NUM_SCORE_FIELDS):
        total += row[f]
    return total


@njit(cache=True)
def _score_hand(S, i, P, F, TBL, hand_score):
    """Score the finished hand into ``hand_score[i]`` and add the totals to the game score."""
    ns = P[P_SIDES]
    num_cards = np.zeros(MAX_SIDES, np.float64)
    num_coins = np.zeros(MAX_SIDES, np.float64)
    prim = np.zeros(MAX_SIDES, np.float64)
    sevens = np.zeros(MAX_SIDES, np.float64)
    counts = np.zeros(MAX_SIDES, np.int64)
    top_prim = 0.0
    bonus = P[P_BONUS_SUIT]
    french = P[P_FRENCH] != 0
    coins = _suit_mask(bonus, french)
    for s in range(ns):
        pile = S[i, COL_PILE + s]
        num_cards[s] = popcount(pile)
        num_coins[s] = popcount(pile & coins)
        # (sevens, sixes) compared as one number: most Sevens, then most Sixes
        sevens[s] = popcount(pile & (ONE_OF_EACH_SUIT << 6)) * 8 + popcount(pile & (ONE_OF_EACH_SUIT << 5))
        prim[s] = _primiera_sum(pile, F, P[P_PRIME_ALL_SUITS] != 0, french)
        if prim[s] > top_prim:
            top_prim = prim[s]
        # primiera_by_counts: the counts per rank group, best group first, as one number
        for g in range(P[P_PRIME_GROUPS]):
            counts[s] = (counts[s] << PRIME_GROUP_BITS) + popcount(pile & TBL[TBL_PRIME_GROUPS + g])
    cards_w = _unique_max(num_cards, ns)
    coins_w = _unique_max(num_coins, ns)
    if P[P_SEVENS]:
        prim_w = -1
    elif P[P_BY_COUNTS]:
        prim_w = _unique_max(counts, ns)
    else:
        prim_w = _unique_max(prim, ns) if top_prim > 0 else -1
    sevens_w = _unique_max(sevens, ns) if P[P_SEVENS] else -1
    for s in range(ns):
        row = hand_score[i, s]
        row[SCORE_CARDS] = 1.0 if cards_w == s else 0.0
        row[SCORE_COINS] = 1.0 if coins_w == s else 0.0
        row[SCORE_SETTEBELLO] = float((S[i, COL_PILE + s] >> (RANK_SPAN * bonus + SETTEBELLO)) & 1)
        row[SCORE_PRIMIERA] = 1.0 if prim_w == s else 0.0
        row[SCORE_SCOPE] = S[i, COL_SCOPE_PTS + s]
        row[SCORE_SEVEN_MAJORITY] = 1.0 if sevens_w == s else 0.0
        row[SCORE_NUM_SEVENS] = sevens[s] // 8
        row[SCORE_NUM_SIXES] = sevens[s] % 8
        row[SCORE_DOUBLE_GAME] = 0.0
        total = row[SCORE_CARDS] + row[SCORE_COINS] + row[SCORE_SETTEBELLO] + row[SCORE_PRIMIERA] + row[SCORE_SCOPE]
        total += _score_extras(S[i, COL_PILE + s], P, row)
        total += row[SCORE_SEVEN_MAJORITY]
        row[SCORE_TOTAL] = total
        row[SCORE_NUM_CARDS] = num_cards[s]
        row[SCORE_NUM_COINS] = num_coins[s]
        row[SCORE_PRIMIERA_VALUE] = prim[s]
        row[SCORE_NUM_SCOPE] = S[i, COL_SCOPE + s]
        S[i, COL_SCORE + s] += np.int64(total)
    for s in range(ns, MAX_SIDES):
        for f in range(NUM_SCORE_FIELDS):
            hand_score[i, s, f] = 0.0


@njit(cache=True, inline="always")
def _hand_events(S, i, P):
    """Hand-end items that are not points (scoring.game_events): a side that took the whole
    bonus suit wins at once (Napoleone, Scala, all coins); Libyan ``coins_reset`` sends the
    other sides' game scores back to 0. Returns the side that won this way, else -1."""
    suit = _suit_mask(P[P_BONUS_SUIT], P[P_FRENCH] != 0) & P[P_DECK_MASK]
    takes_all_wins = P[P_NAPOLA] == NAPOLA_PAGAT_9 or P[P_SCALETTE] or P[P_ALL_COINS_WINS]
    winner = -1
    for side in range(P[P_SIDES]):
        coins = S[i, COL_PILE + side] & suit
        if takes_all_wins and coins == suit and winner < 0:
            winner = side
        if P[P_COINS_RESET] and popcount(coins) >= P[P_COINS_RESET]:
            for o in range(P[P_SIDES]):
                if o != side:
                    S[i, COL_SCORE + o] = 0
    return winner


@njit(cache=True, inline="always")
def _game_winner(S, i, P):
    ns = P[P_SIDES]
    top = S[i, COL_SCORE]
    lead = 0
    ties = 1
    for s in range(1, ns):
        v = S[i, COL_SCORE + s]
        if v > top:
            top = v
            lead = s
            ties = 1
        elif v == top:
            ties += 1
    if ties != 1:
        return -1
    if top >= P[P_TARGET]:
        return lead
    if P[P_CAPPOTTO] and top >= CAPPOTTO_LEAD:
        for s in range(ns):
            if s != lead and S[i, COL_SCORE + s] != 0:
                return -1
        return lead
    return -1


@njit(cache=True)
def _hand_end_rewards(S, i, P, winner, rewards, info, hand_score):
    """The env's rewards of a hand just scored into ``hand_score[i]`` (scopa_v0's ``_after_play``),
    and the episode's end if it is over (``winner``: the side that won the game, -1 for none);
    returns 1 if the episode ended."""
    n = P[P_PLAYERS]
    ns = P[P_SIDES]
    over = P[P_EPISODE_HAND] == 1 or winner >= 0
    # A side's hand points: its score breakdown's total and the declarations it scored this hand.
    if P[P_REWARD_POINTS]:
        for s in range(n):
            side = _side(s, ns)
            others = 0.0
            for o in range(ns):
                if o != side:
                    others += hand_score[i, o, SCORE_TOTAL] + S[i, COL_DECLARED + o]
            rewards[i, s] += hand_score[i, side, SCORE_TOTAL] + S[i, COL_DECLARED + side] - others / (ns - 1)
    elif over:
        best = -np.inf  # totals go below 0 under Piva
        ties = 0
        for o in range(ns):
            t = hand_score[i, o, SCORE_TOTAL] + S[i, COL_DECLARED + o]
            if t > best:
                best = t
                ties = 1
            elif t == best:
                ties += 1
        for s in range(n):
            side = _side(s, ns)
            if P[P_EPISODE_HAND] == 0:
                rewards[i, s] += 1.0 if winner == side else -1.0
            elif ties == 1:
                mine = hand_score[i, side, SCORE_TOTAL] + S[i, COL_DECLARED + side]
                rewards[i, s] += 1.0 if mine == best else -1.0
    if over:
        info[i, INFO_TERMINATED] = 1
        info[i, INFO_WINNER] = winner
        for s in range(MAX_SIDES):
            info[i, INFO_FINAL_SCORE + s] = S[i, COL_SCORE + s]
        return 1
    return 0


# --- chiamarsi fuori (Game._claim, scoring.secured_points) ---------------------------------------

CLAIM_CARDS, CLAIM_COINS, CLAIM_SEVENS, CLAIM_COUNTS, CLAIM_PRIMIERA = range(5)  # what _claim_key measures


@njit(cache=True)
def _claim_key(pile, what, P, F, TBL):
    """One majority's measure of a pile (the keys of scoring.secured_points), as one number."""
    if what == CLAIM_CARDS:
        return float(popcount(pile))
    if what == CLAIM_COINS:
        return float(popcount(pile & _suit_mask(P[P_BONUS_SUIT], P[P_FRENCH] != 0)))
    if what == CLAIM_SEVENS:  # (Sevens, Sixes) compared as one number, as in _score_hand
        return float(popcount(pile & (ONE_OF_EACH_SUIT << 6)) * 8 + popcount(pile & (ONE_OF_EACH_SUIT << 5)))
    if what == CLAIM_COUNTS:
        counts = np.int64(0)
        for g in range(P[P_PRIME_GROUPS]):
            counts = (counts << PRIME_GROUP_BITS) + popcount(pile & TBL[TBL_PRIME_GROUPS + g])
        return float(counts)
    return _primiera_sum(pile, F, P[P_PRIME_ALL_SUITS] != 0, P[P_FRENCH] != 0)


@njit(cache=True)
def _secured(S, i, P, F, TBL, side, remaining, what):
    """1 if ``side``'s majority ``what`` holds even when every other side takes all ``remaining`` cards."""
    mine = _claim_key(S[i, COL_PILE + side], what, P, F, TBL)
    for o in range(P[P_SIDES]):
        if o != side and not mine > _claim_key(S[i, COL_PILE + o] | remaining, what, P, F, TBL):
            return 0.0
    return 1.0


@njit(cache=True)
def _claim(S, i, P, F, TBL, seat, rewards, info, hand_score):
    """Chiamarsi fuori (Game._claim): the game ends; every side's certain points
    (scoring.secured_points) go to ``hand_score[i]`` and its score; the claimer's side wins
    if its score reaches the target, else the other side (two sides). Returns 1."""
    ns = P[P_SIDES]
    remaining = P[P_DECK_MASK]
    for s in range(ns):
        remaining &= ~S[i, COL_PILE + s]
    bonus = P[P_BONUS_SUIT]
    for s in range(ns):
        pile = S[i, COL_PILE + s]
        row = hand_score[i, s]
        for f in range(NUM_SCORE_FIELDS):
            row[f] = 0.0
        row[SCORE_CARDS] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_CARDS)
        row[SCORE_COINS] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_COINS)
        row[SCORE_SETTEBELLO] = float((pile >> (RANK_SPAN * bonus + SETTEBELLO)) & 1)
        if P[P_SEVENS]:
            row[SCORE_SEVEN_MAJORITY] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_SEVENS)
        elif P[P_BY_COUNTS]:
            row[SCORE_PRIMIERA] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_COUNTS)
        elif _claim_key(pile, CLAIM_PRIMIERA, P, F, TBL) > 0:
            row[SCORE_PRIMIERA] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_PRIMIERA)
        row[SCORE_SCOPE] = S[i, COL_SCOPE_PTS + s]
        extras = _score_extras(pile, P, row)
        if P[P_PIVA] and (remaining >> PIVA_CARD) & 1:  # an uncaptured Piva Two counts against every side
            row[SCORE_PIVA] = PIVA_POINTS
            extras += PIVA_POINTS
        total = row[SCORE_CARDS] + row[SCORE_COINS] + row[SCORE_SETTEBELLO] + row[SCORE_SEVEN_MAJORITY]
        total += row[SCORE_PRIMIERA] + row[SCORE_SCOPE] + extras
        row[SCORE_TOTAL] = total
        row[SCORE_NUM_CARDS] = popcount(pile)
        row[SCORE_NUM_COINS] = popcount(pile & _suit_mask(bonus, P[P_FRENCH] != 0))
        row[SCORE_PRIMIERA_VALUE] = _claim_key(pile, CLAIM_PRIMIERA, P, F, TBL)
        row[SCORE_NUM_SCOPE] = S[i, COL_SCOPE + s]
        S[i, COL_SCORE + s] += np.int64(total)
    for s in range(ns, MAX_SIDES):
        for f in range(NUM_SCORE_FIELDS):
            hand_score[i, s, f] = 0.0
    side = _side(seat, ns)
    sound = S[i, COL_SCORE + side] >= P[P_TARGET]
    S[i, COL_HAND_NUM] += 1
    info[i, INFO_HAND_ENDED] = 1
    info[i, INFO_CLAIM] = CLAIM_SOUND if sound else CLAIM_FALSE
    _hand_end_rewards(S, i, P, side if sound else 1 - side, rewards, info, hand_score)
    return 1
