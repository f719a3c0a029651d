"""Bit and card-id helpers every kernel inlines: popcount, the games' random generators, a seat's
side, and the ranks, rank masks and suit masks of card ids (:mod:`scopa_env.engine.cards`).

Each game has two splitmix64 generators in ``rng[i]``: stream 0 shuffles the deals, stream 1
draws for the compiled players (and for a learner's seat or an opponent mixture at reset), so
the opponents' draws never move the deals.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scopa_env.fast.core.layout import (
    JACKS_52,
    NUM_CARDS,
    ONE_OF_EACH_SUIT,
    PICTURE_BITS,
    PICTURES,
    RANK_SPAN,
    SUIT_BITS,
    WILDCARD,
    WILDCARD_RANK,
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_OPP_STREAM = np.uint64(0xD1B54A32D192ED03)


# === small helpers ============================================================================


@njit(cache=True, inline="always")
def popcount(x):
    """Number of set bits of a non-negative int64 (cards in a mask)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56 & 0xFF


@njit(cache=True, inline="always")
def _rand(rng, i, stream):
    """Next splitmix64 output of game ``i``'s generator ``stream`` (0: deals, 1: opponents)."""
    z = rng[i, stream] + _GOLDEN
    rng[i, stream] = z
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _below(rng, i, stream, k):
    """Uniform int in ``0..k-1`` (k < 2**31) from game ``i``'s generator."""
    z = _rand(rng, i, stream) >> np.uint64(32)
    return np.int64((z * np.uint64(k)) >> np.uint64(32))


@njit(cache=True)
def seed_games(rng, seeds):
    """Seed both generators of every game from ``seeds``."""
    for i in range(seeds.shape[0]):
        s = np.uint64(seeds[i])
        rng[i, 0] = s * _MIX1 + _GOLDEN
        rng[i, 1] = (s ^ _OPP_STREAM) * _MIX2 + _GOLDEN
        _rand(rng, i, 0)
        _rand(rng, i, 1)


@njit(cache=True, inline="always")
def _side(seat, ns):
    """Side of ``seat`` with ``ns`` sides (Rules.sides): in partnerships (two sides of 4 or 6
    players) the even seats against the odd ones, else each seat its own side."""
    return seat & 1 if ns == 2 else seat


@njit(cache=True, inline="always")
def _picture_rank(card):
    """Rank 11..13 of one of the 52-card deck's pictures, ids 40..51 (cards.RANK_OF)."""
    return RANK_SPAN + 1 + (card - NUM_CARDS) % PICTURES


@njit(cache=True, inline="always")
def _rank(card, wild, french):
    """The rank ``card`` captures and is captured as (rules.capture_rank): its own, or the
    wildcard's declared rank ``wild`` (0: none). ``french``: the 52-card deck (P_FRENCH),
    whose ids 40..51 are its pictures; a literal False leaves the 40-card code alone."""
    if wild != 0 and card == WILDCARD:
        return wild
    if french and card >= NUM_CARDS:
        return _picture_rank(card)
    return card % RANK_SPAN + 1


@njit(cache=True, inline="always")
def _suit_mask(suit, french):
    """The cards of ``suit`` (cards.SUIT_MASK): its 10-bit block, and in the 52-card deck
    (``french``) its three pictures at ``40 + suit * 3``."""
    m = np.int64(SUIT_BITS) << (RANK_SPAN * suit)
    if french:
        m |= np.int64(PICTURE_BITS) << (NUM_CARDS + PICTURES * suit)
    return m


@njit(cache=True, inline="always")
def _rank_mask(rank, wild, french):
    """The cards of capture rank ``rank`` (rules.capture_ranks: the wildcard moved to ``wild``;
    ``french``: ranks 11..13 are the 52-card deck's pictures)."""
    if french and rank > RANK_SPAN:
        return np.int64(JACKS_52) << (rank - RANK_SPAN - 1)
    m = np.int64(ONE_OF_EACH_SUIT) << (rank - 1)
    if wild != 0:
        if rank == WILDCARD_RANK:
            m &= ~(np.int64(1) << WILDCARD)
        if rank == wild:
            m |= np.int64(1) << WILDCARD
    return m


@njit(cache=True, inline="always")
def _wild_for(wild, cards):
    """The wildcard rank :func:`scopa_env.engine.rules.legal_pairs` applies: ``wild`` when it moves the
    Seven of cups to another rank and that card is among ``cards`` (hand | table), else 0."""
    if wild != 0 and wild != WILDCARD_RANK and (cards >> WILDCARD) & 1:
        return wild
    return 0
