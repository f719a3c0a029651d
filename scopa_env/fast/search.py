"""Compiled determinized search: the kernels of the ``fsearch`` agent (:mod:`agents.fast_search`).

The readable reference is :mod:`agents.search` (Perfect Information Monte Carlo); this module
does the same on the state rows of :mod:`scopa_env.fast.core`, with more ingredients:

1. Sample ``worlds`` deals of the unseen cards: the seat's view fixes its own hand, the
   table, the piles and every hand size; the unseen cards (the deck less those) are shuffled
   into the other hands, with their known sizes, and the stock.
2. In every world play every legal move (common random numbers: the same worlds, and the
   same rollout tie-break stream, for every move), then finish the hand: with the compiled
   ``greedy`` or ``heuristic`` player for every seat (a *rollout*), or first ``ab_depth``
   plies of alpha-beta over the world with rollouts at its leaves.
3. When at most ``exact_cards`` cards are left to play (in hands and stock), solve each
   world exactly with alpha-beta to the end of the hand instead. A world is then the whole
   truth when the unseen cards can only lie in one place (2 players, stock empty): one
   world is solved; otherwise ``exact_worlds`` are.
4. Score a finished hand by the hand-point margin of the searching side (its points minus
   the mean of the other sides'); with ``inference`` on, a world counts with the chance
   that the other players would have made the plays they made this round holding the
   cards the world gives them (a softmax over the compiled greedy player's move values).
   The move with the best (weighted) mean wins. Exact values tie often (the other side
   may play perfectly in many lines); the rollout players' margin after the move breaks
   those ties, so the search still exploits an opponent that errs. Remaining ties go to
   a seeded draw.

Alpha-beta with more than two sides is *paranoid*: every other side minimises the
searcher's margin. Budget: ``worlds`` (and ``ply_budget``, which lowers the worlds where
many plies are left), never seconds, so a seed gives the same decision on any machine.

Inputs of :func:`search_kernel` (``positions``, ``rules``, ``C``, ``found``: the bundles
:class:`Positions`, :class:`core.Rules <scopa_env.fast.core.bundles.Rules>` and :class:`Found`),
one position per row ``i``::

    array              shape                 content
    -----------------  --------------------  -------------------------------------------
    positions.state    (N, core.NUM_COLS)    the position as the seat to move sees it: its
                                             own hand, the table, piles, scope, scores,
                                             played cards, dealer, last capturer, cards in
                                             hands, stock position. Other hands and the
                                             stock order are never read.
    positions.counts   (N, core.MAX_PLAYERS) cards in each seat's hand
    positions.seeds    (N,)                  one seed per position
    C                  (NUM_CONFIG,)         the search settings (``C_*``)
    positions.plays    (N, MAX_OBS, OBS_W)   inference: the other seats' plays this deal
                                             round (``OBS_*``: seat, table before, card,
                                             captured, cards the seat is known to have held
                                             then); ``positions.num_plays`` (N,)
    found.moves        (N, OUT_W)            the chosen move (``OUT_CARD``, ``OUT_MASK``), its
                                             index among the legal pairs (``OUT_INDEX``),
                                             worlds sampled (``OUT_WORLDS``)
    found.values       (N, values_width)     mean margin of each legal pair (core.legal_pairs
                                             order)

``rules.params`` must be a copy of :func:`scopa_env.fast.batch.compiled_rules`'s ``P`` with
``P_EPISODE_HAND`` set (:func:`search_params`): a rollout ends with the hand. The search's work
space travels in a :class:`Stack`, one row per ply.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from numba import njit

from scopa_env.engine.rules import supported_by
from scopa_env.fast import core
from scopa_env.fast.core import (
    COL_CURRENT,
    COL_DECK,
    COL_HAND,
    COL_IN_HANDS,
    COL_PILE,
    COL_STOCK_POS,
    COL_TABLE,
    MAX_CARDS,
    MAX_PLAYERS,
    NUM_COLS,
    P_DECK_MASK,
    P_DECK_SIZE,
    P_PLAYERS,
    P_SCRATCH,
    P_SIDES,
    P_SUB_CAP,
    SCORE_TOTAL,
)
from scopa_env.fast.core.bits import _below, _rand, _side
from scopa_env.fast.core.opponents import _mask_value

# --- search settings C ------------------------------------------------------------------
C_WORLDS = 0  # most worlds sampled per decision
C_MIN_WORLDS = 1  # fewest worlds (with a ply budget)
C_PLY_BUDGET = 2  # rollout plies per decision: worlds = budget // (moves * plies left); 0: always C_WORLDS
C_ROLLOUT = 3  # compiled player of the rollouts: core.OPPONENT_GREEDY or OPPONENT_HEURISTIC
C_EXACT_CARDS = 4  # solve exactly when at most this many cards are left to play (hands + stock)
C_EXACT_WORLDS = 5  # worlds solved exactly when the unseen cards may lie in several places
C_AB_DEPTH = 6  # plies of alpha-beta before the rollouts (0: plain rollouts)
C_INFERENCE = 7  # 1: weight worlds by the other seats' plays this round
C_INFER_TEMP = 8  # inference softmax temperature, in hundredths of a point
NUM_CONFIG = 9

ROLLOUTS = {"greedy": core.OPPONENT_GREEDY, "heuristic": core.OPPONENT_HEURISTIC}
"""Rollout policies by name: the compiled players of :mod:`scopa_env.fast.core`."""

# --- inference observations ------------------------------------------------------------
OBS_SEAT = 0
OBS_TABLE = 1  # table before the play
OBS_CARD = 2
OBS_CAPTURED = 3
OBS_KNOWN = 4  # cards the seat held then that are known now: the card and its later plays this round
OBS_W = 5
MAX_OBS = 40

# --- outputs ------------------------------------------------------------------------------
OUT_CARD = 0
OUT_MASK = 1
OUT_INDEX = 2
OUT_WORLDS = 3
OUT_W = 4

NEG = -1e300
TIE_TOL = 1e-9
MAX_DEPTH = MAX_CARDS + 2  # rows of the work stack: a hand has at most 52 plies (40 in the 40-card deck)


class Positions(NamedTuple):
    """The positions :func:`search_kernel` searches, one per row ``i`` (the module docstring)."""

    state: np.ndarray
    """``S``: int64 ``(N, core.NUM_COLS)``, each position as the seat to move sees it."""
    counts: np.ndarray
    """int64 ``(N, core.MAX_PLAYERS)``: the cards in each seat's hand."""
    seeds: np.ndarray
    """int64 ``(N,)``: one seed per position."""
    plays: np.ndarray
    """``obs``: int64 ``(N, MAX_OBS, OBS_W)``, the other seats' plays this deal round (``OBS_*``)."""
    num_plays: np.ndarray
    """``num_obs``: int64 ``(N,)``, the rows of ``plays`` in use."""


class Found(NamedTuple):
    """What :func:`search_kernel` writes for each position ``i``."""

    moves: np.ndarray
    """``out``: int64 ``(N, OUT_W)``, the chosen move, its index and the worlds sampled (``OUT_*``)."""
    values: np.ndarray
    """float64 ``(N, values_width)``: the mean margin of each legal pair (core.legal_pairs order)."""


class Stack(NamedTuple):
    """The search's work space, one row per ply: row 0 holds a sampled world, row ``d + 1`` the
    position after a move at row ``d`` (:data:`MAX_DEPTH` + 2 rows). Made once per kernel call."""

    rows: np.ndarray
    """int64 ``(MAX_DEPTH + 2, NUM_COLS)``: the state rows."""
    rng: np.ndarray
    """uint64 ``(MAX_DEPTH + 2, 2)``: their generators (row 0's: the worlds and the final tie-break)."""
    cards: np.ndarray
    """int64 ``(MAX_DEPTH + 2, P_SCRATCH)``: each row's legal pairs' cards."""
    captures: np.ndarray
    """int64 ``(MAX_DEPTH + 2, P_SCRATCH)``: their captured masks."""
    order: np.ndarray
    """int64 ``(MAX_DEPTH + 2, P_SCRATCH)``: the order alpha-beta tries them in (:func:`_order`)."""
    subset_masks: np.ndarray
    """int64 ``(P_SUB_CAP,)``: the table's subsets (:class:`core.Scratch`)."""
    subset_sums: np.ndarray
    """int64 ``(P_SUB_CAP,)``: their sums."""
    rewards: np.ndarray
    """float32 ``(MAX_DEPTH + 2, players)``: what :func:`core.play` writes of the rewards."""
    info: np.ndarray
    """int64 ``(MAX_DEPTH + 2, NUM_INFO)``: what it writes of the step's status."""
    hand_score: np.ndarray
    """float64 ``(MAX_DEPTH + 2, MAX_SIDES, NUM_SCORE_FIELDS)``: a finished hand's score, read for the margin."""


class Candidates(NamedTuple):
    """The legal moves of a position being searched, and what the worlds give them."""

    cards: np.ndarray
    """int64: the moves' cards (core.legal_pairs order)."""
    captures: np.ndarray
    """int64: their captured masks."""
    values: np.ndarray
    """float64: the sum of each move's weighted margins (the position's row of ``Found.values``)."""
    tie: np.ndarray
    """float64: exact mode's weighted rollout margins, which break ties between equal exact values."""


@njit(cache=True, inline="always")
def _margin(hand_score, r, side, ns):
    """Hand points of ``side`` minus the mean of the other sides (hand_score row ``r``)."""
    others = 0.0
    for o in range(ns):
        if o != side:
            others += hand_score[r, o, SCORE_TOTAL]
    return hand_score[r, side, SCORE_TOTAL] - others / (ns - 1)


@njit(cache=True)
def _rollout_value(stack, r, rules, kind, side):
    """Finish the hand in row ``r`` with compiled players of ``kind``; return ``side``'s margin."""
    P, F, TBL = rules.params, rules.floats, rules.tables
    R, rng, H = stack.rows, stack.rng, rules.heuristic
    sub_mask, sub_sum = stack.subset_masks, stack.subset_sums
    lc, lm = stack.cards[r], stack.captures[r]
    rewards, info, hand_score = stack.rewards, stack.info, stack.hand_score
    over = 0
    while not over:
        k = core.choose_move(R, r, rng, P, F, H, kind, sub_mask, sub_sum, lc, lm, TBL)
        over = core.play(R, r, rng, P, F, TBL, lc[k], lm[k], rewards, info, hand_score, TBL)
    return _margin(hand_score, r, side, P[P_SIDES])


@njit(cache=True)
def _order(LC, LM, d, count, table, order):
    """Move order at depth ``d``: sweeps, then captures by size, then trails (alpha-beta cuts sooner)."""
    keys = np.empty(count, np.int64)
    for k in range(count):
        m = LM[d, k]
        if m == 0:
            keys[k] = 0
        else:
            keys[k] = core.popcount(m) + (100 if m == table else 1)
    for k in range(count):
        order[k] = k
    for a in range(count):  # selection sort, stable (at most a few dozen moves)
        top = a
        for b in range(a + 1, count):
            if keys[order[b]] > keys[order[top]]:
                top = b
        o = order[top]
        for b in range(top, a, -1):
            order[b] = order[b - 1]
        order[a] = o


@njit(cache=True)
def _alphabeta_value(stack, d0, rules, side, depth, kind, stream):
    """Value for ``side`` of the position in row ``d0`` of ``stack`` (hand not over): alpha-beta to
    ``depth`` plies, then rollouts of ``kind`` (tie-breaks seeded with ``stream``).

    Iterative, one row of the stack per ply (numba's cache cannot hold a recursive function):
    row ``d`` is a node, ``alpha[d]``, ``beta[d]`` its bounds, ``best[d]`` its best value so far,
    ``nxt[d]`` its next move (in ``stack.order[d]``) of ``count[d]``, ``rem[d]`` its plies of
    alpha-beta left, ``maxi[d]`` whether ``side`` moves there.
    """
    P, F, TBL = rules.params, rules.floats, rules.tables
    ns = P[P_SIDES]
    alpha = np.empty(MAX_DEPTH + 2, np.float64)
    beta = np.empty(MAX_DEPTH + 2, np.float64)
    best = np.empty(MAX_DEPTH + 2, np.float64)
    count = np.empty(MAX_DEPTH + 2, np.int64)
    nxt = np.empty(MAX_DEPTH + 2, np.int64)
    rem = np.empty(MAX_DEPTH + 2, np.int64)
    maxi = np.empty(MAX_DEPTH + 2, np.bool_)
    if depth == 0:
        stack.rng[d0, 1] = stream
        return _rollout_value(stack, d0, rules, kind, side)
    R, rng = stack.rows, stack.rng
    LC, LM, ORD = stack.cards, stack.captures, stack.order
    sub_mask, sub_sum = stack.subset_masks, stack.subset_sums
    rewards, info, hand_score = stack.rewards, stack.info, stack.hand_score
    d = d0
    alpha[d] = -np.inf
    beta[d] = np.inf
    rem[d] = depth
    opened = False
    value = 0.0
    returned = False
    while True:
        if not opened:  # start node d: its legal moves, their order, who moves there
            opened = True
            seat = R[d, COL_CURRENT]
            count[d] = core.legal_pairs(R[d, COL_HAND + seat], R[d, COL_TABLE], P, sub_mask, sub_sum, LC[d], LM[d])
            _order(LC, LM, d, count[d], R[d, COL_TABLE], ORD[d])
            maxi[d] = _side(seat, ns) == side
            best[d] = -np.inf if maxi[d] else np.inf
            nxt[d] = 0
        if returned:  # a child of node d is worth ``value``
            returned = False
            if maxi[d]:
                best[d] = max(best[d], value)
                alpha[d] = max(alpha[d], value)
            else:
                best[d] = min(best[d], value)
                beta[d] = min(beta[d], value)
            if alpha[d] >= beta[d]:
                nxt[d] = count[d]  # cut
        if nxt[d] >= count[d]:
            value = best[d]
            if d == d0:
                return value
            d -= 1
            returned = True
            continue
        k = ORD[d, nxt[d]]
        nxt[d] += 1
        c = d + 1
        R[c, :] = R[d, :]
        over = core.play(R, c, rng, P, F, TBL, LC[d, k], LM[d, k], rewards, info, hand_score, TBL)
        if over:
            value = _margin(hand_score, c, side, ns)
            returned = True
        elif rem[d] == 1:
            rng[c, 1] = stream
            value = _rollout_value(stack, c, rules, kind, side)
            returned = True
        else:
            alpha[c] = alpha[d]
            beta[c] = beta[d]
            rem[c] = rem[d] - 1
            d = c
            opened = False


@njit(cache=True)
def _sample_world(R, S, i, counts, seat, cards, nu, rng, P):
    """Row 0 of ``R``: position ``i`` with the unseen ``cards`` shuffled into the other hands and the stock."""
    R[0, :] = S[i, :]
    for k in range(nu - 1, 0, -1):  # Fisher-Yates
        j = _below(rng, 0, 0, k + 1)
        tmp = cards[k]
        cards[k] = cards[j]
        cards[j] = tmp
    pos = 0
    for s in range(P[P_PLAYERS]):
        if s == seat:
            continue
        hand = np.int64(0)
        for _ in range(counts[i, s]):
            hand |= np.int64(1) << cards[pos]
            pos += 1
        R[0, COL_HAND + s] = hand
    start = R[0, COL_STOCK_POS]
    for k in range(pos, nu):
        R[0, COL_DECK + start + k - pos] = cards[k]


@njit(cache=True)
def _world_weight(R, plays, i, nobs, rules, temp, scratch, scores):
    """Chance of the other seats' plays this round (``plays[i, :nobs]``) in the world of row 0 of
    ``R``, under a softmax (temperature ``temp``) over the compiled greedy player's values of their
    legal moves (enumerated into ``scratch``, valued into ``scores``)."""
    P, F = rules.params, rules.floats
    sub_mask, sub_sum = scratch.subset_masks, scratch.subset_sums
    lc, lm = scratch.cards, scratch.captures
    weight = 1.0
    vals = F[core.F_GREEDY_VALUES : core.F_GREEDY_VALUES + MAX_CARDS]
    for k in range(nobs):
        table = plays[i, k, OBS_TABLE]
        hand = R[0, COL_HAND + plays[i, k, OBS_SEAT]] | plays[i, k, OBS_KNOWN]
        count = core.legal_pairs(hand, table, P, sub_mask, sub_sum, lc, lm)
        if count <= 1:
            continue
        top = NEG
        for j in range(count):
            scores[j] = _greedy_value(lc[j], lm[j], table, vals, F)
            if scores[j] > top:
                top = scores[j]
        total = 0.0
        for j in range(count):
            total += np.exp((scores[j] - top) / temp)
        played = _greedy_value(plays[i, k, OBS_CARD], plays[i, k, OBS_CAPTURED], table, vals, F)
        weight *= np.exp((played - top) / temp) / total
    return weight


@njit(cache=True, inline="always")
def _greedy_value(card, captured, table, vals, F):
    """The compiled greedy player's value of a move (core.choose_move, sweeps always counted)."""
    if captured == 0:
        return -vals[card]
    v = _mask_value(captured | (np.int64(1) << card), vals)
    if captured == table:
        v += F[core.F_GREEDY_SCOPA]
    return v


@njit(cache=True, nogil=True)
def search_kernel(positions, rules, C, found):
    """Search every one of ``positions`` (see the module docstring) with the settings ``C``; the
    moves and values go to ``found``."""
    positions, rules = core.borrowed(positions), core.borrowed(rules)
    C, found = core.borrowed(C), core.borrowed(found)
    P = rules.params
    stack = new_stack(P)
    # the inference's legal pairs (sharing the stack's subsets) and their values
    weigh = core.Scratch(
        stack.subset_masks,
        stack.subset_sums,
        np.empty(P[P_SCRATCH], np.int64),
        np.empty(P[P_SCRATCH], np.int64),
    )
    scores = np.empty(P[P_SCRATCH], np.float64)
    cards = np.empty(MAX_CARDS, np.int64)
    seed_row = np.empty(1, np.int64)
    S = positions.state
    for i in range(S.shape[0]):
        hand, table = S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE]
        count = core.legal_pairs(
            hand, table, P, stack.subset_masks, stack.subset_sums, stack.cards[0], stack.captures[0]
        )
        seed_row[0] = positions.seeds[i]
        core.seed_games(stack.rng, seed_row)  # rng[0]: stream 0 draws the worlds, stream 1 the final tie-break
        moves = Candidates(
            stack.cards[0, :count].copy(),
            stack.captures[0, :count].copy(),
            found.values[i],
            np.zeros(count, np.float64),  # exact mode: rollout values that break ties between equal exact values
        )
        for k in range(count):
            moves.values[k] = 0.0
        if count == 1:
            _write_move(found.moves, i, moves, 0, 0)
            continue
        nu = _unseen_cards(S, i, P, cards)
        worlds, depth, exact = _world_plan(S, i, P, C, positions.counts, count)
        total_w = 0.0
        for _ in range(worlds):
            total_w += _search_world(i, positions, rules, C, stack, (weigh, scores), cards, nu, moves, depth, exact)
        if total_w > 0.0:
            for k in range(count):
                moves.values[k] /= total_w
        found.moves[i, OUT_WORLDS] = worlds
        k = _pick_move(moves, count, stack.rng)
        if k >= 0:
            _write_move(found.moves, i, moves, k, worlds)


@njit(cache=True, inline="always")
def new_stack(P):
    """A fresh :class:`Stack` for the rules ``P``."""
    rows = MAX_DEPTH + 2
    return Stack(
        np.zeros((rows, NUM_COLS), np.int64),
        np.zeros((rows, 2), np.uint64),
        np.empty((rows, P[P_SCRATCH]), np.int64),
        np.empty((rows, P[P_SCRATCH]), np.int64),
        np.empty((rows, P[P_SCRATCH]), np.int64),
        np.empty(P[P_SUB_CAP], np.int64),
        np.empty(P[P_SUB_CAP], np.int64),
        np.zeros((rows, P[P_PLAYERS]), np.float32),
        np.zeros((rows, core.NUM_INFO), np.int64),
        np.zeros((rows, core.MAX_SIDES, core.NUM_SCORE_FIELDS), np.float64),
    )


@njit(cache=True, inline="always")
def _write_move(out, i, moves, k, worlds):
    """Move ``k`` of ``moves`` as position ``i``'s choice, found in ``worlds`` worlds."""
    out[i, OUT_CARD] = moves.cards[k]
    out[i, OUT_MASK] = moves.captures[k]
    out[i, OUT_INDEX] = k
    out[i, OUT_WORLDS] = worlds


@njit(cache=True, inline="always")
def _unseen_cards(S, i, P, cards):
    """The cards the seat to move in position ``i`` cannot see, ascending into ``cards``; returns their number."""
    seat = S[i, COL_CURRENT]
    seen = S[i, COL_HAND + seat] | S[i, COL_TABLE]
    for s in range(P[P_SIDES]):
        seen |= S[i, COL_PILE + s]
    u = P[P_DECK_MASK] & ~seen
    nu = 0
    while u != 0:
        b = u & -u
        u ^= b
        cards[nu] = core.popcount(b - 1)
        nu += 1
    return nu


@njit(cache=True, inline="always")
def _world_plan(S, i, P, C, counts, count):
    """``(worlds, depth, exact)`` for position ``i`` with ``count`` legal moves: exact to the end of
    the hand when few cards are left, else ``C_WORLDS`` (or what the ply budget leaves) with
    ``C_AB_DEPTH`` plies of alpha-beta; one world where the view is the whole truth."""
    seat = S[i, COL_CURRENT]
    stock = P[P_DECK_SIZE] - S[i, COL_STOCK_POS]
    plies = S[i, COL_IN_HANDS] + stock
    holders = 0  # places the unseen cards may lie in
    for s in range(P[P_PLAYERS]):
        if s != seat and counts[i, s] > 0:
            holders += 1
    if stock > 0:
        holders += 1
    exact = plies <= C[C_EXACT_CARDS]
    if exact:
        worlds = 1 if holders <= 1 else C[C_EXACT_WORLDS]
        depth = MAX_DEPTH
    else:
        worlds = C[C_WORLDS]
        if C[C_PLY_BUDGET] > 0:
            worlds = max(C[C_MIN_WORLDS], min(worlds, C[C_PLY_BUDGET] // (count * plies)))
        depth = C[C_AB_DEPTH]
    if holders <= 1:  # the view is the whole truth: one world
        worlds = 1
    return worlds, depth, exact


@njit(cache=True, inline="always")
def _search_world(i, positions, rules, C, stack, inference, cards, nu, moves, depth, exact):
    """Sample one world of position ``i`` (the ``nu`` unseen ``cards`` dealt out) and add every
    candidate move's weighted margin in it to ``moves``; returns the world's weight (0: the
    inference rules it out). ``inference``: the work space of :func:`_world_weight`."""
    S, R, rng = positions.state, stack.rows, stack.rng
    P, F, TBL = rules.params, rules.floats, rules.tables
    kind = C[C_ROLLOUT]
    ns = P[P_SIDES]
    seat = S[i, COL_CURRENT]
    side = _side(seat, ns)
    _sample_world(R, S, i, positions.counts, seat, cards, nu, rng, P)
    weight = 1.0
    if C[C_INFERENCE] and positions.num_plays[i] > 0:
        scratch, scores = inference
        weight = _world_weight(
            R, positions.plays, i, positions.num_plays[i], rules, C[C_INFER_TEMP] / 100.0, scratch, scores
        )
        if weight <= 0.0:
            return 0.0
    stream = _rand(rng, 0, 0)  # this world's rollout tie-breaks, the same for every move
    for k in range(moves.cards.shape[0]):
        R[1, :] = R[0, :]
        over = core.play(
            R, 1, rng, P, F, TBL, moves.cards[k], moves.captures[k], stack.rewards, stack.info, stack.hand_score, TBL
        )
        if over:
            v = _margin(stack.hand_score, 1, side, ns)
        else:  # depth 0: a plain rollout
            v = _alphabeta_value(stack, 1, rules, side, depth, kind, stream)
            if exact:  # among equal exact values, prefer what the rollout players would reward
                rng[1, 1] = stream
                moves.tie[k] += weight * _rollout_value(stack, 1, rules, kind, side)
        moves.values[k] += weight * v
    return weight


@njit(cache=True, inline="always")
def _pick_move(moves, count, rng):
    """The index of the best of ``moves``' values: among those within ``TIE_TOL``, the best tie-break
    values, then a draw from ``rng`` row 0's stream 1; -1 if none compares (NaN values)."""
    values, tie = moves.values, moves.tie
    best = NEG
    for k in range(count):
        if values[k] > best:
            best = values[k]
    best_tie = NEG
    for k in range(count):
        if values[k] >= best - TIE_TOL and tie[k] > best_tie:
            best_tie = tie[k]
    ties = 0
    for k in range(count):
        if values[k] >= best - TIE_TOL and tie[k] >= best_tie - TIE_TOL:
            ties += 1
    nth = _below(rng, 0, 1, ties) if ties > 1 else 0
    for k in range(count):
        if values[k] >= best - TIE_TOL and tie[k] >= best_tie - TIE_TOL:
            if nth == 0:
                return k
            nth -= 1
    return -1


# === Python side: settings, rows from views, batch entry ======================================


def search_config(
    worlds: int = 256,
    rollout: str = "greedy",
    exact_cards: int = 6,
    exact_worlds: int = 16,
    ab_depth: int = 0,
    ply_budget: int = 0,
    min_worlds: int = 4,
    inference: bool = False,
    infer_temp: float = 1.0,
) -> np.ndarray:
    """The settings array ``C`` (see :func:`search_kernel`); bad values raise ``ValueError``.

    Args:
        worlds: worlds sampled per decision (the most, with ``ply_budget``).
        rollout: ``"greedy"`` or ``"heuristic"``: the compiled player that finishes each world.
        exact_cards: solve exactly (alpha-beta to the end of the hand, every world) when at
            most this many cards are left to play, in hands and stock; 0: never.
        exact_worlds: worlds solved exactly when the unseen cards may lie in several places
            (teams, or more than 2 players); one world when they can lie in one only.
        ab_depth: plies of alpha-beta after the candidate move before the rollouts; 0: none.
        ply_budget: rollout plies per decision; lowers the worlds to ``ply_budget // (moves *
            plies left)`` (but not below ``min_worlds``); 0: always ``worlds``.
        min_worlds: fewest worlds with a ply budget.
        inference: weight each world by how likely the other seats' plays this deal round
            were with the cards it gives them.
        infer_temp: softmax temperature of that likelihood, in points (lower: sharper).
    """
    for name, value, low in (
        ("worlds", worlds, 1),
        ("exact_cards", exact_cards, 0),
        ("exact_worlds", exact_worlds, 1),
        ("ab_depth", ab_depth, 0),
        ("ply_budget", ply_budget, 0),
        ("min_worlds", min_worlds, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"fsearch {name} must be an int >= {low}, got {value!r}")
    if rollout not in ROLLOUTS:
        raise ValueError(f"fsearch rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
    if not isinstance(infer_temp, (int, float)) or not infer_temp >= 0.01:
        raise ValueError(f"fsearch infer_temp must be a number >= 0.01, got {infer_temp!r}")
    C = np.zeros(NUM_CONFIG, np.int64)
    C[C_WORLDS] = worlds
    C[C_MIN_WORLDS] = min(min_worlds, worlds)
    C[C_PLY_BUDGET] = ply_budget
    C[C_ROLLOUT] = ROLLOUTS[rollout]
    C[C_EXACT_CARDS] = exact_cards
    C[C_EXACT_WORLDS] = exact_worlds
    C[C_AB_DEPTH] = ab_depth
    C[C_INFERENCE] = bool(inference)
    C[C_INFER_TEMP] = round(infer_temp * 100)
    return C


def search_params(P: np.ndarray) -> np.ndarray:
    """A copy of the rules' ``P`` for the search kernels: an episode is one hand, no opponents."""
    P = P.copy()
    P[core.P_EPISODE_HAND] = 1
    P[core.P_REWARD_POINTS] = 1
    P[core.P_OPPONENT] = core.OPPONENT_NONE
    P[core.P_LEARNER_SEAT] = 0
    return P


def row_from_view(view, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(row, counts)``: the state row of a :class:`~scopa_env.engine.game.PlayerView` (only what the
    seat may see: the other hands and the stock are left empty) and every seat's hand size."""
    row = np.zeros(NUM_COLS, np.int64)
    counts = np.zeros(MAX_PLAYERS, np.int64)
    row[COL_HAND + view.seat] = view.hand
    for s in range(view.num_players):
        row[core.COL_PLAYED + s] = view.played[s]
        counts[s] = view.hand_counts[s]
    for side in range(view.num_sides):
        row[COL_PILE + side] = view.piles[side]
        row[core.COL_SCOPE + side] = view.scope[side]
        row[core.COL_SCOPE_PTS + side] = view.scope_points[side]
        row[core.COL_SCORE + side] = view.scores[side]
    row[COL_TABLE] = view.table
    row[COL_CURRENT] = view.current
    row[core.COL_DEALER] = view.dealer
    row[core.COL_LASTCAP] = core.NO_SEAT if view.last_capturer is None else view.last_capturer
    row[COL_IN_HANDS] = sum(view.hand_counts)
    row[COL_STOCK_POS] = P[P_DECK_SIZE] - view.stock_count
    row[core.COL_HAND_NUM] = view.hand_number
    row[core.COL_PENDING] = core.NO_SEAT
    row[core.COL_LEARNER] = core.NO_SEAT
    row[core.COL_OPPONENT] = core.OPPONENT_NONE
    return row, counts


def round_plays(view) -> np.ndarray:
    """The other seats' plays of this deal round as inference rows ``(MAX_OBS, OBS_W)`` (``OBS_*``);
    unused rows have seat -1. Plays of earlier rounds reveal nothing: those hands were all played."""
    schedule = view.rules.schedule(view.num_players)
    played = len(view.history)
    start = 0
    for size in schedule:  # the round in progress began at the last deal boundary at or below ``played``
        if start + size * view.num_players > played:
            break
        start += size * view.num_players
    rows = np.full((MAX_OBS, OBS_W), -1, np.int64)
    # Walk back from the current table to the table before each play of the round.
    table = view.table
    later = [0] * view.num_players  # cards each seat played after the play being read
    k = 0
    for seat, card, captured in reversed(view.history[start:]):
        bit = 1 << card
        before = table & ~bit if captured == 0 else (table | captured if captured != bit else table)
        if seat != view.seat:
            rows[k] = (seat, before, card, captured, bit | later[seat])
            k += 1
        later[seat] |= bit
        table = before
    return rows


def search_rows(
    S: np.ndarray,
    counts: np.ndarray,
    seeds: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    TBL: np.ndarray,
    C: np.ndarray,
    obs: np.ndarray | None = None,
    threads: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Search every position of ``S`` (the batched form); returns ``(out, values)`` (see the module docstring).

    ``P`` comes from :func:`search_params`. ``obs`` (N, MAX_OBS, OBS_W) holds the
    inference rows (:func:`round_plays`), or ``None``. ``threads`` > 1 splits the rows into
    contiguous runs searched on that many threads (the kernel releases the GIL); every row
    draws from its own seed, so the results are the same for any thread count. The kernel is
    the install-time build's where it takes these arguments (:func:`scopa_env.fast.aot.search_for`),
    else the JIT's.
    """
    from scopa_env.fast import aot
    from scopa_env.fast.batch import _thread_pool, check_threads

    args = _kernel_args(S, counts, seeds, P, F, TBL, C, obs)
    kernel = aot.search_for(args, aot_arg_kinds) or search_kernel
    positions, rules, C, found = args
    N = found.moves.shape[0]

    def run(lo: int, hi: int) -> None:
        kernel(_rows(positions, lo, hi), rules, C, _rows(found, lo, hi))

    chunks = min(check_threads(threads), N)
    if chunks <= 1:
        run(0, N)
        return found
    bounds = np.linspace(0, N, chunks + 1).astype(int)
    pool = _thread_pool(chunks - 1)
    futures = [pool.submit(run, int(bounds[c]), int(bounds[c + 1])) for c in range(1, chunks)]
    run(0, int(bounds[1]))
    for f in futures:
        f.result()
    return found


def _rows(bundle: tuple, lo: int, hi: int) -> tuple:
    """``bundle`` (:class:`Positions` or :class:`Found`, an array per field with a row per position)
    with rows ``lo..hi-1`` of each: a thread of :func:`search_rows` searches those positions."""
    return type(bundle)(*(a[lo:hi] for a in bundle))


def _kernel_args(S, counts, seeds, P, F, TBL, C, obs) -> tuple:
    """:func:`search_kernel`'s arguments for :func:`search_rows`' (its outputs zeroed):
    ``(Positions, core.Rules, C, Found)``."""
    from scopa_env.fast.batch import HEURISTIC_H

    N = S.shape[0]
    if obs is None:
        obs = np.full((N, 1, OBS_W), -1, np.int64)
    S = np.ascontiguousarray(S, np.int64)
    counts = np.ascontiguousarray(counts, np.int64)
    seeds = np.ascontiguousarray(seeds, np.int64)
    obs = np.ascontiguousarray(obs, np.int64)
    num_obs = (obs[:, :, OBS_SEAT] >= 0).sum(axis=1).astype(np.int64)
    out = np.zeros((N, OUT_W), np.int64)
    values = np.zeros((N, P[P_SCRATCH]), np.float64)
    positions = Positions(S, counts, seeds, obs, num_obs)
    return positions, core.Rules(P, F, TBL, None, HEURISTIC_H), C, Found(out, values)


def aot_args() -> tuple:
    """:func:`search_kernel`'s arguments as :func:`search_rows` passes them for the standard
    2-player game (with inference rows or without: the same types): what the install-time build
    takes (:data:`scopa_env.fast.aot.SEARCH`, built for their numba types). Every preset the
    search plays passes arguments of the same types (the rules are data in ``P``, ``F`` and ``TBL``)."""
    from scopa_env.engine.rules import get_rules
    from scopa_env.fast.batch import compiled_rules

    P, F, TBL, _ = compiled_rules(get_rules("standard"), 2)
    S = np.zeros((1, NUM_COLS), np.int64)
    counts, seeds = np.zeros((1, MAX_PLAYERS), np.int64), np.zeros(1, np.int64)
    return _kernel_args(S, counts, seeds, search_params(P), F, TBL, search_config(), None)


@functools.cache
def aot_arg_kinds() -> tuple:
    """:func:`scopa_env.fast.aot.array_kinds` of :func:`aot_args`: the install-time kernel takes
    arguments of these kinds (:func:`scopa_env.fast.aot.search_for`)."""
    from scopa_env.fast import aot

    return aot.array_kinds(aot_args())


def hand_counts(S: np.ndarray, num_players: int) -> np.ndarray:
    """``(N, MAX_PLAYERS)``: the cards in every seat's hand in the state rows ``S``."""
    counts = np.zeros((S.shape[0], MAX_PLAYERS), np.int64)
    for s in range(num_players):
        counts[:, s] = [int(h).bit_count() for h in S[:, COL_HAND + s]]
    return counts


def search_batch(batch, seeds, C: np.ndarray) -> list[tuple[int, int]]:
    """The searched ``(card, captured_mask)`` of the seat to move in every game of a
    :class:`~scopa_env.fast.batch.BatchedScopa` (nothing is played). It reads only what that
    seat may see: the other hands and the stock order in the batch's rows are overwritten by
    the sampled worlds. Without inference (the batch keeps no history)."""
    out, _ = _search_games(batch, np.arange(batch.num_games), seeds, C, 1)
    return [(int(c), int(m)) for c, m in out[:, :2]]


SEARCH_REFUSED_FIELDS = tuple(f for f in supported_by("fast") if f not in supported_by("search"))
"""Rules fields whose decisions (Chkobba's first card, the declarations, the claim) the batched
search does not value (``search=False`` next to the field in scopa_env/engine/rules.py): it
searches card plays only, so it would mislabel those decisions."""


def check_searchable(rules) -> None:
    """Raise ``NotImplementedError`` naming the preset and field if the batched search cannot value
    every legal move of ``rules`` (the ``fsearch`` agent hands those decisions to the Python search)."""
    from scopa_env.engine.rules import Rules, get_rules

    rules, default = get_rules(rules), Rules()
    for name in SEARCH_REFUSED_FIELDS:
        if getattr(rules, name) != getattr(default, name):
            raise NotImplementedError(
                f"the batched compiled search does not value the decisions of rules preset {rules.name!r} "
                f"(field {name}={getattr(rules, name)!r}); it searches card plays only"
            )


def _search_games(batch, games: np.ndarray, seeds: np.ndarray, C: np.ndarray, threads: int):
    from scopa_env.fast.batch import compiled_rules

    check_searchable(batch.rules)
    P, F, TBL, _ = compiled_rules(batch.rules, batch.num_players)
    S = batch._S[np.asarray(games, np.int64)]
    return search_rows(
        S, hand_counts(S, batch.num_players), np.asarray(seeds, np.int64), search_params(P), F, TBL, C, threads=threads
    )


def exact_games(batch, C: np.ndarray) -> np.ndarray:
    """Whether the search with settings ``C`` solves each game of ``batch`` exactly where it stands: at most
    ``exact_cards`` cards are left to play (in the hands and the stock), as the search itself decides."""
    from scopa_env.fast.batch import compiled_rules

    P = compiled_rules(batch.rules, batch.num_players)[0]
    S = batch._S
    return S[:, COL_IN_HANDS] + (P[P_DECK_SIZE] - S[:, COL_STOCK_POS]) <= C[C_EXACT_CARDS]


def search_values(batch, games: np.ndarray, seeds: np.ndarray, C: np.ndarray, threads: int = 1) -> np.ndarray:
    """The search's value of every legal move in some games of a "move"-mode batch (a teacher's labels).

    Returns float64 ``(len(games), batch.legal_ids.shape[1])``: entry ``[j, k]`` is the mean
    hand-point margin, for the side to move, of ``batch.legal_ids[games[j], k]`` over the
    sampled worlds (the core lists legal ids in :func:`core.legal_pairs` order, which is the
    order of the kernel's values). As :func:`search_batch`, only the mover's view is read.
    """
    _, values = _search_games(batch, games, seeds, C, threads)
    width = batch.legal_ids.shape[1]
    out = np.zeros((len(games), width), np.float64)
    k = min(width, values.shape[1])
    out[:, :k] = values[:, :k]
    return out


def search_move_ids(batch, games: np.ndarray, seeds: np.ndarray, C: np.ndarray, threads: int = 1) -> np.ndarray:
    """The "move" id the search plays in each of ``games`` of a "move"-mode batch (nothing is played)."""
    out, _ = _search_games(batch, games, seeds, C, threads)
    return batch.legal_ids[np.asarray(games, np.int64), out[:, OUT_INDEX]]
