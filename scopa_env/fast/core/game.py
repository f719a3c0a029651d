"""Dealing and playing (:class:`scopa_env.engine.game.Game`): a new game in a row, the deals (with
the redeals, Chkobba's first card and the start of the declarations), and :func:`play`, one
``(card, captured)`` for the seat to move up to the hand's end and the next deal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scopa_env.fast.core.bits import (
    _below,
    _rand,
    _rank,
    _rank_mask,
    _side,
    popcount,
)
from scopa_env.fast.core.decisions import (
    _declare,
    _offer_declaration,
    _open_declarations,
    _table_bonus,
)
from scopa_env.fast.core.scoring import (
    _claim,
    _game_winner,
    _hand_end_rewards,
    _hand_events,
    _scopa_worth,
    _score_hand,
)
from scopa_env.fast.layout import (
    COL_CURRENT,
    COL_DEALER,
    COL_DECK,
    COL_DECLARED,
    COL_DECLARERS,
    COL_HAND,
    COL_HAND_NUM,
    COL_IN_HANDS,
    COL_LASTCAP,
    COL_LEARNER,
    COL_OPPONENT,
    COL_PENDING,
    COL_PHASE,
    COL_PILE,
    COL_PLAYED,
    COL_QUEUE,
    COL_REDEALS,
    COL_REVEALED,
    COL_SCOPE,
    COL_SCOPE_PTS,
    COL_SCORE,
    COL_SELECTED,
    COL_STOCK_POS,
    COL_TABLE,
    COL_WILD,
    DECLARE_HAND_BONUS,
    F_OPP_CUMULATIVE,
    FRENCH_RANKS,
    INFO_HAND_ENDED,
    KINGS_52,
    KINGS_FOR_REDEAL,
    KINGS_MASK,
    LEARNER_RANDOM,
    MAX_PLAYERS,
    MAX_SIDES,
    NO_SEAT,
    ONE_OF_EACH_SUIT,
    OPPONENT_MIXED,
    OPPONENT_NONE,
    P_ACES_REDEAL,
    P_CLAIM_OUT,
    P_DECK_SIZE,
    P_DECLARE,
    P_DOUBLE_BELOW,
    P_FIRST_CARD,
    P_FIRST_DEAL,
    P_FRENCH,
    P_KINGS_REDEAL,
    P_LAST_SCOPA,
    P_LEARNER_SEAT,
    P_OPPONENT,
    P_PLAYERS,
    P_REDEAL_ACES,
    P_REDEAL_NEXT,
    P_REDEAL_SAME_RANK,
    P_SIDES,
    P_TABLE_BONUS,
    P_TABLE_SIZE,
    P_TAKE_ALL,
    P_TAKE_ALL_SCOPA,
    PHASE_FIRST_CARD,
    PHASE_PLAY,
    RANK_SPAN,
    SCORE_DOUBLE_GAME,
    TBL_DECK,
    TBL_NEXT_DEAL,
)


@njit(cache=True)
def _new_hand_state(S, i, n):
    for s in range(MAX_PLAYERS):
        S[i, COL_HAND + s] = 0
        S[i, COL_PLAYED + s] = 0
    for s in range(MAX_SIDES):
        S[i, COL_PILE + s] = 0
        S[i, COL_SCOPE + s] = 0
        S[i, COL_SCOPE_PTS + s] = 0
    S[i, COL_TABLE] = 0
    S[i, COL_LASTCAP] = NO_SEAT
    S[i, COL_CURRENT] = (S[i, COL_DEALER] + 1) % n
    S[i, COL_IN_HANDS] = 0
    S[i, COL_PENDING] = NO_SEAT
    S[i, COL_SELECTED] = 0
    S[i, COL_PHASE] = PHASE_PLAY
    for s in range(MAX_PLAYERS):
        S[i, COL_REVEALED + s] = 0
    for s in range(MAX_SIDES):
        S[i, COL_DECLARED + s] = 0
    S[i, COL_QUEUE] = 0
    S[i, COL_DECLARERS] = 0
    S[i, COL_WILD] = 0
    S[i, COL_REDEALS] = 0


@njit(cache=True, inline="always")
def _deal_round(S, i, n, start, count):
    """Deal ``count`` cards of the deal order from ``start``, one at a time from the dealer's left."""
    first = S[i, COL_DEALER] + 1
    for k in range(count):
        seat = (first + k) % n
        S[i, COL_HAND + seat] |= np.int64(1) << S[i, COL_DECK + start + k]
    S[i, COL_IN_HANDS] += count


@njit(cache=True)
def _deal(S, i, rng, P, TBL, D):
    """Shuffle and deal a hand; deal again while the table calls for it (Game._deal_shuffled:
    the same dealer, or the next one under ``redeal_next_dealer``). Then Cirulla's table
    bonus and the declarations.

    With ``first_card_choice`` only the first card of the deal order is dealt, to the player
    after the dealer, who decides on it (:func:`_decide` completes the deal).
    """
    n = P[P_PLAYERS]
    size = P[P_DECK_SIZE]
    dealt = n * P[P_FIRST_DEAL]
    while True:
        for k in range(size):
            S[i, COL_DECK + k] = TBL[TBL_DECK + k]
        for k in range(size - 1, 0, -1):
            j = _below(rng, i, 0, k + 1)
            tmp = S[i, COL_DECK + k]
            S[i, COL_DECK + k] = S[i, COL_DECK + j]
            S[i, COL_DECK + j] = tmp
        for s in range(n):
            S[i, COL_HAND + s] = 0
        S[i, COL_IN_HANDS] = 0
        if P[P_FIRST_CARD]:
            S[i, COL_HAND + S[i, COL_CURRENT]] = np.int64(1) << S[i, COL_DECK]
            S[i, COL_IN_HANDS] = 1
            S[i, COL_TABLE] = 0
            S[i, COL_STOCK_POS] = 1
            S[i, COL_PHASE] = PHASE_FIRST_CARD
            return
        _deal_round(S, i, n, 0, dealt)
        table = np.int64(0)
        for k in range(dealt, dealt + P[P_TABLE_SIZE]):
            table |= np.int64(1) << S[i, COL_DECK + k]
        S[i, COL_TABLE] = table
        S[i, COL_STOCK_POS] = dealt + P[P_TABLE_SIZE]
        if not _needs_redeal(table, P):
            if D is not None:  # a compile-time branch: pruned for the rules without decisions (D None)
                if P[P_TABLE_BONUS]:
                    _table_bonus(S, i, P)
                if P[P_DECLARE]:
                    _open_declarations(S, i, P)
            return
        S[i, COL_REDEALS] += 1
        if P[P_REDEAL_NEXT]:  # Cirulla: "dealt again by the next dealer"
            S[i, COL_DEALER] = (S[i, COL_DEALER] + 1) % n
            S[i, COL_CURRENT] = (S[i, COL_DEALER] + 1) % n


@njit(cache=True)
def _decide(S, i, rng, P, TBL, keep):
    """Chkobba's first card (Game._decide): kept, or put face up on the table; then the deal
    is completed from the deal order, each player's cards in one run from the dealer's left
    (the player who kept the drawn card gets one fewer), then the table. A table that calls
    for a redeal is thrown in: a new shuffle and a new first card to decide on."""
    n = P[P_PLAYERS]
    cutter = S[i, COL_CURRENT]
    per_player = P[P_FIRST_DEAL]
    bit = S[i, COL_HAND + cutter]  # the drawn card, the only one dealt so far
    pos = S[i, COL_STOCK_POS]
    for k in range(n):
        seat = (S[i, COL_DEALER] + 1 + k) % n
        count = per_player - 1 if keep and seat == cutter else per_player
        for j in range(count):
            S[i, COL_HAND + seat] |= np.int64(1) << S[i, COL_DECK + pos + j]
        pos += count
    table = np.int64(0)
    if not keep:
        S[i, COL_HAND + cutter] ^= bit
        table = bit
    count = P[P_TABLE_SIZE] - (0 if keep else 1)
    for j in range(count):
        table |= np.int64(1) << S[i, COL_DECK + pos + j]
    S[i, COL_TABLE] = table
    S[i, COL_STOCK_POS] = pos + count
    S[i, COL_IN_HANDS] = n * per_player
    S[i, COL_PHASE] = PHASE_PLAY
    if _needs_redeal(table, P):
        _deal(S, i, rng, P, TBL, TBL)  # a decision rule: the decision code stays (D not None)


@njit(cache=True)
def _needs_redeal(table, P):
    """Game.needs_redeal: 3+ Kings, any Ace (aces_redeal), redeal_aces Aces (Cirulla), or
    redeal_same_rank cards of one rank."""
    if P[P_KINGS_REDEAL] and popcount(table & (KINGS_52 if P[P_FRENCH] else KINGS_MASK)) >= KINGS_FOR_REDEAL:
        return True
    if P[P_ACES_REDEAL] and (table & ONE_OF_EACH_SUIT) != 0:
        return True
    if P[P_REDEAL_ACES] and popcount(table & ONE_OF_EACH_SUIT) >= P[P_REDEAL_ACES]:
        return True
    if P[P_REDEAL_SAME_RANK]:
        french = P[P_FRENCH] != 0
        for r in range(1, (FRENCH_RANKS if french else RANK_SPAN) + 1):
            if popcount(table & _rank_mask(r, 0, french)) >= P[P_REDEAL_SAME_RANK]:
                return True
    return False


@njit(cache=True)
def new_game(S, i, rng, P, F, TBL, D):
    """A fresh game in row ``i``: scores 0, the last seat deals, seat 0 leads; the learner's
    seat and the opponents' kind are drawn here when they vary by game."""
    n = P[P_PLAYERS]
    for s in range(MAX_SIDES):
        S[i, COL_SCORE + s] = 0
    S[i, COL_HAND_NUM] = 0
    S[i, COL_DEALER] = n - 1
    if P[P_OPPONENT] == OPPONENT_NONE:
        S[i, COL_LEARNER] = NO_SEAT
    elif P[P_LEARNER_SEAT] == LEARNER_RANDOM:
        S[i, COL_LEARNER] = _below(rng, i, 1, n)
    else:
        S[i, COL_LEARNER] = P[P_LEARNER_SEAT]
    kind = P[P_OPPONENT]
    if kind == OPPONENT_MIXED:
        u = np.float64(_rand(rng, i, 1) >> np.uint64(11)) * (1.0 / 9007199254740992.0)  # 53 bits in [0, 1)
        kind = 0
        while u >= F[F_OPP_CUMULATIVE + kind]:
            kind += 1
    S[i, COL_OPPONENT] = kind
    _new_hand_state(S, i, n)
    _deal(S, i, rng, P, TBL, D)


@njit(cache=True, inline="always")
def play_card(S, i, P, TBL, card, captured, D):
    """The card-play part of :func:`play` (Game.play_pair on a card-play turn): the card leaves the
    hand, takes ``captured`` (a scopa where it clears the table) or trails, the turn passes, and a
    new round is dealt from the deal order when the hands are empty. Returns True when the hand's
    last card was played: its end (the sweep to the last capturer, the scoring) is left to the caller
    (:func:`play`; the AEC env's row, :mod:`scopa_env.fast.core.row`, which the Python engine scores)."""
    n = P[P_PLAYERS]
    ns = P[P_SIDES]
    seat = S[i, COL_CURRENT]
    bit = np.int64(1) << card
    S[i, COL_HAND + seat] ^= bit
    if P[P_DECLARE]:  # a declared card leaves the shown hand when played
        S[i, COL_REVEALED + seat] &= ~bit
    S[i, COL_PLAYED + seat] |= bit
    S[i, COL_IN_HANDS] -= 1
    stock_empty = S[i, COL_STOCK_POS] == P[P_DECK_SIZE]
    last_play = S[i, COL_IN_HANDS] == 0 and stock_empty
    if captured == bit:  # an Ace takes itself from the empty table: no scopa
        S[i, COL_PILE + _side(seat, ns)] |= bit
        S[i, COL_LASTCAP] = seat
    elif captured != 0:
        S[i, COL_TABLE] ^= captured
        side = _side(seat, ns)
        S[i, COL_PILE + side] |= captured | bit
        S[i, COL_LASTCAP] = seat
        if S[i, COL_TABLE] == 0 and (not last_play or P[P_LAST_SCOPA]):
            # Scopa d'Assi: an Ace clearing a table that held no Ace took it all, no scopa
            # (capture ranks: Cirulla's declared wildcard counts as its rank, Game._takes_all).
            wild = S[i, COL_WILD]
            rank = _rank(card, wild, P[P_FRENCH] != 0)
            took_all = P[P_TAKE_ALL] and rank == 1 and (captured & _rank_mask(1, wild, False)) == 0
            if not (took_all and not P[P_TAKE_ALL_SCOPA]):
                S[i, COL_SCOPE + side] += 1
                S[i, COL_SCOPE_PTS + side] += _scopa_worth(P, rank, captured)
    else:
        S[i, COL_TABLE] |= bit
    S[i, COL_CURRENT] = (seat + 1) % n
    if S[i, COL_IN_HANDS] != 0:
        if D is not None and P[P_DECLARE] == DECLARE_HAND_BONUS:  # Cirulla: the next seat's first turn?
            _offer_declaration(S, i, P)
        return False
    if not stock_empty:
        per_deal = n * TBL[TBL_NEXT_DEAL + P[P_DECK_SIZE] - S[i, COL_STOCK_POS]]
        _deal_round(S, i, n, S[i, COL_STOCK_POS], per_deal)
        S[i, COL_STOCK_POS] += per_deal
        if D is not None and P[P_DECLARE]:
            _open_declarations(S, i, P)
        return False
    return True


@njit(cache=True)
def play(S, i, rng, P, F, TBL, card, captured, rewards, info, hand_score, D):
    """Play ``(card, captured)`` for the seat to move (Game.play_pair); returns 1 if the episode ended.

    At a hand end it scores the hand, sets the env's rewards (added into ``rewards[i]``)
    and deals the next hand unless the episode is over. A decision (Chkobba's first card)
    and a claim (chiamarsi fuori) are plays too: ``(card, 1 << card)`` keeps or claims.
    """
    n = P[P_PLAYERS]
    ns = P[P_SIDES]
    seat = S[i, COL_CURRENT]
    bit = np.int64(1) << card
    phase = S[i, COL_PHASE]
    if D is not None:  # a compile-time branch: pruned for the rules without decisions (D None)
        if phase != PHASE_PLAY:  # one test on the card-play path of every decision preset
            if phase == PHASE_FIRST_CARD:
                _decide(S, i, rng, P, TBL, captured == bit)
            else:
                _declare(S, i, P, captured)
            return 0
        if P[P_CLAIM_OUT] and captured == bit:
            return _claim(S, i, P, F, TBL, seat, rewards, info, hand_score)
    if not play_card(S, i, P, TBL, card, captured, D):
        return 0
    # End of the hand: the last capturer's side sweeps up the table.
    lc = S[i, COL_LASTCAP]
    if lc != NO_SEAT:
        S[i, COL_PILE + _side(lc, ns)] |= S[i, COL_TABLE]
        S[i, COL_TABLE] = 0
    _score_hand(S, i, P, F, TBL, hand_score)
    S[i, COL_HAND_NUM] += 1
    info[i, INFO_HAND_ENDED] = 1
    winner = _hand_events(S, i, P)
    if winner < 0:
        winner = _game_winner(S, i, P)
    below = P[P_DOUBLE_BELOW]
    if below and winner >= 0:
        double = True
        for o in range(ns):
            if o != winner and S[i, COL_SCORE + o] >= below:
                double = False
        if double:
            hand_score[i, winner, SCORE_DOUBLE_GAME] = 1.0
    if _hand_end_rewards(S, i, P, winner, rewards, info, hand_score):
        return 1
    S[i, COL_DEALER] = (S[i, COL_DEALER] + 1) % n
    _new_hand_state(S, i, n)
    _deal(S, i, rng, P, TBL, D)
    return 0
