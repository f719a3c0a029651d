"""The batch entry points: the row loop that resets and steps games (:func:`batch_rows`, the one
:mod:`scopa_env.fast.aot` exports), observe and choose (:func:`batch_kernel`), the action check,
and whole games of compiled players (:func:`playout_kernel`); with what a step writes back: the
legal actions ("select" mask or "move" ids) and the settling of a row (compiled opponents'
moves, auto-reset at an episode's end).

The arrays travel in the bundles of :mod:`scopa_env.fast.core.bundles` (``games``, ``rules``,
``out``, ``scratch``), the entry points' own arguments :func:`~scopa_env.fast.core.borrow.borrowed`
(no reference counts); the compile-time switches ``D``, ``OPPS``, ``STD`` and ``VAR`` travel on
their own, down to every inlined helper that branches on them, so that numba prunes the code
behind a None.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from scopa_env.fast.core.bits import (
    seed_games,
)
from scopa_env.fast.core.borrow import borrowed
from scopa_env.fast.core.bundles import Scratch
from scopa_env.fast.core.captures import (
    _move_id,
    legal_pairs,
    plain_pairs,
)
from scopa_env.fast.core.decisions import (
    _plain_turn,
    mover_pairs,
)
from scopa_env.fast.core.game import (
    new_game,
    play,
)
from scopa_env.fast.core.observation import (
    write_observation,
)
from scopa_env.fast.core.opponents import (
    choose_move,
)
from scopa_env.fast.layout import (
    CLAIM_NONE,
    COL_CURRENT,
    COL_HAND,
    COL_LEARNER,
    COL_OPPONENT,
    COL_PENDING,
    COL_PHASE,
    COL_SELECTED,
    COL_TABLE,
    COL_WILD,
    INFO_CHOICE_CARD,
    INFO_CHOICE_MASK,
    INFO_CLAIM,
    INFO_FINAL_OPPONENT,
    INFO_HAND_ENDED,
    INFO_LEGAL_COUNT,
    INFO_OBS_SEAT,
    INFO_TERMINATED,
    INFO_TO_PLAY,
    INFO_WINNER,
    INFO_WINS,
    MAX_SIDES,
    NO_SEAT,
    OPPONENT_NONE,
    P_CARD_IDS,
    P_CLAIM_OUT,
    P_LEGAL_WIDTH,
    P_OPPONENT,
    P_PLAYERS,
    P_SCRATCH,
    P_SELECT,
    P_SUB_CAP,
    PHASE_PLAY,
    STATUS_BAD_ACTION,
    STATUS_LEGAL_OVERFLOW,
    STATUS_OK,
    TAKE_ALL_ID,
)


@njit(cache=True, inline="always")
def new_scratch(P):
    """A fresh :class:`~scopa_env.fast.core.bundles.Scratch` sized for the rules ``P``."""
    return Scratch(
        np.empty(P[P_SUB_CAP], np.int64),
        np.empty(P[P_SUB_CAP], np.int64),
        np.empty(P[P_SCRATCH], np.int64),
        np.empty(P[P_SCRATCH], np.int64),
    )


# The turn's legal pairs are enumerated in three places below, each written out: a helper
# would cost the row loop the reference counts of the scratch arrays it takes (borrow.py).


@njit(cache=True, inline="always")
def _select_candidates(S, i, P, scratch, D, STD, VAR):
    """Outcomes of the pending card still reachable from the selection, packed at the front of
    ``scratch.captures``."""
    sub_mask, sub_sum = scratch.subset_masks, scratch.subset_sums
    lc, lm = scratch.cards, scratch.captures
    if D is None:  # a compile-time branch: every turn is a plain card play
        count = 0  # numba prunes one of the two calls: STD or VAR is None
        if STD is not None:
            count = plain_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        if VAR is not None:
            count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], P[P_CLAIM_OUT]):
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    else:
        count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
    pending = S[i, COL_PENDING]
    selected = S[i, COL_SELECTED]
    below = (np.int64(1) << (64 - leading_zeros(selected))) - 1 if selected != 0 else np.int64(0)
    nc = 0
    for k in range(count):
        if lc[k] == pending and (lm[k] & below) == selected:
            lm[nc] = lm[k]
            nc += 1
    return nc


@njit(cache=True, inline="always")
def _write_legal(S, i, rules, scratch, out, D, STD, VAR):
    """Legal actions of the seat to move into ``out``: the "select" mask or the "move" id list;
    returns a status."""
    P = rules.params
    sub_mask, sub_sum = scratch.subset_masks, scratch.subset_sums
    lc, lm = scratch.cards, scratch.captures
    if P[P_SELECT]:
        row = out.mask[i]
        for a in range(row.shape[0]):  # P_CARD_IDS + 1 actions
            row[a] = 0
        if S[i, COL_PENDING] == NO_SEAT:
            h = S[i, COL_HAND + S[i, COL_CURRENT]]  # every hand card has a legal move ...
            if D is not None:  # a compile-time branch: pruned where no decision rule plays
                if S[i, COL_PHASE] != PHASE_PLAY:  # ... but a decision names one card (the highest, or the wildcard)
                    mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
                    h = np.int64(1) << lc[0]
            while h != 0:
                b = h & -h
                h ^= b
                row[trailing_zeros(b)] = 1
            return STATUS_OK
        selected = S[i, COL_SELECTED]
        nc = _select_candidates(S, i, P, scratch, D, STD, VAR)
        has_selected = False
        for k in range(nc):
            if lm[k] == selected:
                has_selected = True
            else:
                x = lm[k] ^ selected
                row[trailing_zeros(x & -x)] = 1
        if has_selected and nc > 1:
            row[P[P_CARD_IDS]] = 1  # CONFIRM
        return STATUS_OK
    if D is None:  # a compile-time branch: every turn is a plain card play
        count = 0  # numba prunes one of the two calls: STD or VAR is None
        if STD is not None:
            count = plain_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        if VAR is not None:
            count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], P[P_CLAIM_OUT]):
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    else:
        count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
    out.info[i, INFO_LEGAL_COUNT] = count
    width = P[P_LEGAL_WIDTH]
    legal_ids, PAIRS, TBL = out.legal_ids, rules.pairs, rules.tables
    for k in range(min(count, width)):
        legal_ids[i, k] = _move_id(PAIRS, TBL, P, S[i, COL_TABLE], lc[k], lm[k])
    for k in range(count, width):
        legal_ids[i, k] = -1
    return STATUS_LEGAL_OVERFLOW if count > width else STATUS_OK


@njit(cache=True, inline="always")
def _settle(games, i, rules, over, scratch, out, D, OPPS):
    """After a play: record and reset a finished episode, then let compiled opponents move
    (``OPPS`` None: the batch has none, and numba prunes their code)."""
    S, rng = games.state, games.rng
    P, F, TBL = rules.params, rules.floats, rules.tables
    while True:
        if over:
            seat = S[i, COL_LEARNER]
            if seat == NO_SEAT:
                seat = (S[i, COL_CURRENT] + P[P_PLAYERS] - 1) % P[P_PLAYERS]  # the seat that just played
            out.info[i, INFO_OBS_SEAT] = seat
            out.info[i, INFO_FINAL_OPPONENT] = S[i, COL_OPPONENT]
            write_observation(S, i, P, seat, out.final_obs[i])
            new_game(S, i, rng, P, F, TBL, D)
            over = 0
        if OPPS is None:  # a compile-time branch: no compiled opponent in this batch
            return
        if P[P_OPPONENT] == OPPONENT_NONE or S[i, COL_CURRENT] == S[i, COL_LEARNER]:
            return
        sub_mask, sub_sum = scratch.subset_masks, scratch.subset_sums
        lc, lm = scratch.cards, scratch.captures
        k = choose_move(S, i, rng, P, F, rules.heuristic, S[i, COL_OPPONENT], sub_mask, sub_sum, lc, lm, D)
        over = play(S, i, rng, P, F, TBL, lc[k], lm[k], out.rewards, out.info, out.hand_score, D)


@njit(cache=True, inline="always")
def _clear_outputs(i, P, out):
    for s in range(P[P_PLAYERS]):
        out.rewards[i, s] = 0.0
    info = out.info
    info[i, INFO_TERMINATED] = 0
    info[i, INFO_HAND_ENDED] = 0
    info[i, INFO_WINNER] = -1
    info[i, INFO_FINAL_OPPONENT] = OPPONENT_NONE
    info[i, INFO_CLAIM] = CLAIM_NONE


OP_RESET = 0  # arg: one seed per game
OP_STEP = 1  # arg: one action per game
OP_OBSERVE = 2  # arg: one seat per game; observations go to obs
OP_CHOOSE = 3  # arg: one compiled player kind per game; its move goes to info (nothing is played)


@njit(cache=True)
def batch_kernel(op, arg, games, rules, out, D):
    """The batch's observe and choose entry point; returns ``(status, game)``. Reset and step
    go to :func:`batch_rows`, so a batch that only steps compiles neither of these.

    ``OP_OBSERVE``: observation of game ``i`` from seat ``arg[i]`` into ``out.obs[i]`` (nothing
    else is written). ``OP_CHOOSE``: the move a compiled player of kind ``arg[i]`` picks for
    the seat to move, into ``out.info[i, INFO_CHOICE_CARD]`` and ``out.info[i, INFO_CHOICE_MASK]``
    (draws from the opponents' generator; the game does not move).
    """
    games, rules = borrowed(games), borrowed(rules)
    out, arg = borrowed(out), borrowed(arg)
    S, P = games.state, rules.params
    N = S.shape[0]
    if op == OP_OBSERVE:
        for i in range(N):
            write_observation(S, i, P, arg[i], out.obs[i])
        return STATUS_OK, -1
    scratch = new_scratch(P)
    sub_mask, sub_sum = scratch.subset_masks, scratch.subset_sums
    lc, lm = scratch.cards, scratch.captures
    for i in range(N):
        k = choose_move(S, i, games.rng, P, rules.floats, rules.heuristic, arg[i], sub_mask, sub_sum, lc, lm, D)
        out.info[i, INFO_CHOICE_CARD] = lc[k]
        out.info[i, INFO_CHOICE_MASK] = lm[k]
    return STATUS_OK, -1


@njit(cache=True)
def check_actions(P, arg, mask, legal_ids, info):
    """``(STATUS_BAD_ACTION, game)`` for the first action outside the legal actions written by
    the previous call, else ``(STATUS_OK, -1)``."""
    select = P[P_SELECT]
    for i in range(arg.shape[0]):
        a = arg[i]
        if select:
            if a < 0 or a >= mask.shape[1] or mask[i, a] == 0:
                return STATUS_BAD_ACTION, i
        else:
            ok = False
            for k in range(min(info[i, INFO_LEGAL_COUNT], P[P_LEGAL_WIDTH])):
                if legal_ids[i, k] == a:
                    ok = True
                    break
            if not ok:
                return STATUS_BAD_ACTION, i
    return STATUS_OK, -1


@njit(cache=True, nogil=True)
def batch_rows(op, lo, hi, prepare, arg, games, rules, out, D, OPPS, STD, VAR):
    """Reset (``OP_RESET``: new games seeded by ``arg``) or step (``OP_STEP``: one action per game,
    auto-reset at episode ends) rows ``lo..hi-1`` of ``games``, then write their outputs into
    ``out``; returns ``(status, first bad row)``. With ``prepare`` (one call for the whole batch)
    the games are first seeded by :func:`seed_games`, or every action checked by
    :func:`check_actions` against the legal actions of the previous call: on the first illegal
    one nothing changes and ``(STATUS_BAD_ACTION, game)`` comes back; without it the caller has
    done that.

    ``D`` and ``OPPS`` are None where the batch has no decision rule and no compiled opponent,
    and exactly one of ``STD`` and ``VAR`` is None: ``VAR`` with the standard captures
    (``P_PLAIN``), ``STD`` with a variant's. numba prunes the code behind a None argument
    (and only behind a None: an array argument keeps both branches), so a batch compiles
    one capture code, :func:`plain_pairs` or :func:`legal_pairs`.

    The several-thread path of ``BatchedScopa`` calls it from Python threads on disjoint row
    ranges: it releases the GIL (``nogil``), its scratch is its own, and a row reads and
    writes only its own state, generators and output rows, so the result does not depend on
    how the rows are split.
    """
    games, rules = borrowed(games), borrowed(rules)
    out, arg = borrowed(out), borrowed(arg)
    S, rng, P = games.state, games.rng, rules.params
    if prepare:
        if op == OP_STEP:
            status, bad = check_actions(P, arg, out.mask, out.legal_ids, out.info)
            if status != STATUS_OK:
                return status, bad
        else:
            seed_games(rng, arg)
    scratch = new_scratch(P)
    status = STATUS_OK
    bad = -1
    for i in range(lo, hi):
        _clear_outputs(i, P, out)
        if op == OP_RESET:
            new_game(S, i, rng, P, rules.floats, rules.tables, D)
            _settle(games, i, rules, np.int64(0), scratch, out, D, OPPS)
        else:
            _step_one(games, i, rules, arg[i], scratch, out, D, OPPS, STD, VAR)
        seat = S[i, COL_CURRENT]
        out.info[i, INFO_TO_PLAY] = seat
        write_observation(S, i, P, seat, out.obs[i])
        st = _write_legal(S, i, rules, scratch, out, D, STD, VAR)
        if st != STATUS_OK and bad < 0:
            status, bad = st, i
    return status, bad


@njit(cache=True, inline="always")
def _step_one(games, i, rules, a, scratch, out, D, OPPS, STD, VAR):
    """Apply action ``a`` (already checked) to game ``i``, then settle it (opponents, auto-reset)."""
    S, P = games.state, rules.params
    sub_mask, sub_sum = scratch.subset_masks, scratch.subset_sums
    lc, lm = scratch.cards, scratch.captures
    card = -1
    captured = np.int64(0)
    if not P[P_SELECT]:
        card = rules.pairs[a, 0]
        captured = rules.pairs[a, 1]
        if captured == TAKE_ALL_ID:
            captured = S[i, COL_TABLE]
    elif S[i, COL_PENDING] == NO_SEAT:
        if D is None:  # a compile-time branch: every turn is a plain card play
            count = 0  # numba prunes one of the two calls: STD or VAR is None
            if STD is not None:
                count = plain_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
            if VAR is not None:
                count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], P[P_CLAIM_OUT]):
            count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        else:
            count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
        nout = 0
        for k in range(count):
            if lc[k] == a:
                nout += 1
                captured = lm[k]
        if nout == 1:
            card = a
        else:
            S[i, COL_PENDING] = a
            S[i, COL_SELECTED] = 0
    elif a == P[P_CARD_IDS]:  # CONFIRM
        card = S[i, COL_PENDING]
        captured = S[i, COL_SELECTED]
    else:
        S[i, COL_SELECTED] |= np.int64(1) << a
        nc = _select_candidates(S, i, P, scratch, D, STD, VAR)
        if nc == 1:
            card = S[i, COL_PENDING]
            captured = lm[0]
    if card >= 0:
        S[i, COL_PENDING] = NO_SEAT
        S[i, COL_SELECTED] = 0
        F, TBL = rules.floats, rules.tables
        over = play(S, i, games.rng, P, F, TBL, card, captured, out.rewards, out.info, out.hand_score, D)
        _settle(games, i, rules, over, scratch, out, D, OPPS)


@njit(cache=True)
def playout_kernel(games, rules, arg, rewards, info, hand_score, D):
    """Row 0 of ``games`` plays ``arg[0]`` whole games seeded by ``arg[1]``, seat ``s`` played by
    compiled kind ``arg[2 + s]``; returns the number of moves, the wins go to ``info[0, INFO_WINS:]``.

    A second entry point (compiled on first use) so the batch kernel's cold compile stays short.
    """
    games, rules, arg = borrowed(games), borrowed(rules), borrowed(arg)
    rewards, info, hand_score = borrowed(rewards), borrowed(info), borrowed(hand_score)
    S, rng = games.state, games.rng
    P, F, TBL = rules.params, rules.floats, rules.tables
    H = rules.heuristic
    scratch = new_scratch(P)
    sub_mask, sub_sum = scratch.subset_masks, scratch.subset_sums
    lc, lm = scratch.cards, scratch.captures
    seed_games(rng, arg[1:2])
    for k in range(MAX_SIDES + 1):
        info[0, INFO_WINS + k] = 0
    moves = 0
    for _ in range(arg[0]):
        new_game(S, 0, rng, P, F, TBL, D)
        over = 0
        while not over:
            k = choose_move(S, 0, rng, P, F, H, arg[2 + S[0, COL_CURRENT]], sub_mask, sub_sum, lc, lm, D)
            over = play(S, 0, rng, P, F, TBL, lc[k], lm[k], rewards, info, hand_score, D)
            moves += 1
        w = info[0, INFO_WINNER]
        info[0, INFO_WINS + (w if w >= 0 else MAX_SIDES)] += 1
    return moves
