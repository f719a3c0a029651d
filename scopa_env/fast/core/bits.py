"""Bit and card-id helpers every kernel inlines: popcount, the games' random generators, a seat's
side, and the ranks, rank masks and suit masks of card ids (:mod:`scopa_env.engine.cards`).

Each game has two splitmix64 generators in ``rng[i]``: stream 0 shuffles the deals, stream 1
draws for the compiled players (and for a learner's seat or an opponent mixture at reset), so
the opponents' draws never move the deals.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scopa_env.fast.layout import (
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


# numpy's SeedSequence (numpy/random/bit_generator.pyx): its hash and mix constants, 32-bit words.
_SS_INIT_A = np.uint64(0x43B0D7E5)
_SS_MULT_A = np.uint64(0x931E8875)
_SS_INIT_B = np.uint64(0x8B51F9DD)
_SS_MULT_B = np.uint64(0x58F38DED)
_SS_MIX_L = np.uint64(0xCA01F9DD)
_SS_MIX_R = np.uint64(0x4973F715)
_SS_WORD = np.uint64(0xFFFFFFFF)
_SS_SHIFT = np.uint64(16)
_SS_POOL = 4


@njit(cache=True)
def seed_words(seed, out):
    """``numpy.random.SeedSequence(seed).generate_state(4, np.uint64)`` into ``out`` (4 entries):
    the words :class:`numpy.random.PCG64` seeds itself with, so a generator built on them draws
    as ``np.random.default_rng(seed)`` does (the AEC env's seeded reset, without numpy's Python
    around the hash: :mod:`scopa_env.fast.seeding`). numpy's algorithm for an int seed of one or
    two 32-bit words and no spawn key: the pool of four words hashed from the seed's words, mixed
    each into each, then eight output words hashed from the pool, paired little-endian. Returns 0,
    or -1 (nothing written) for a seed outside ``[0, 2**63)`` or an ``out`` shorter than 4."""
    if seed < 0 or out.shape[0] < 4:
        return -1
    s = np.uint64(seed)
    words = np.zeros(_SS_POOL, np.uint64)
    words[0] = s & _SS_WORD
    words[1] = s >> np.uint64(32)
    mixer = np.empty(_SS_POOL, np.uint64)
    hc = _SS_INIT_A
    for k in range(_SS_POOL):  # hashmix of each entropy word (a zero past the seed's words)
        v = words[k] ^ hc
        hc = (hc * _SS_MULT_A) & _SS_WORD
        v = (v * hc) & _SS_WORD
        mixer[k] = v ^ (v >> _SS_SHIFT)
    for src in range(_SS_POOL):  # every word mixed into every other one
        for dst in range(_SS_POOL):
            if src != dst:
                h = mixer[src] ^ hc
                hc = (hc * _SS_MULT_A) & _SS_WORD
                h = (h * hc) & _SS_WORD
                h ^= h >> _SS_SHIFT
                r = (_SS_MIX_L * mixer[dst] - _SS_MIX_R * h) & _SS_WORD
                mixer[dst] = r ^ (r >> _SS_SHIFT)
    hb = _SS_INIT_B
    for j in range(2 * _SS_POOL):  # generate_state: eight 32-bit words, two per uint64
        v = mixer[j % _SS_POOL] ^ hb
        hb = (hb * _SS_MULT_B) & _SS_WORD
        v = (v * hb) & _SS_WORD
        v ^= v >> _SS_SHIFT
        if j % 2 == 0:
            out[j // 2] = v
        else:
            out[j // 2] |= v << np.uint64(32)
    return 0


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
