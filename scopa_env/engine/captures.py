"""Moves and what a played card may capture: :class:`Move` and :func:`legal_pairs`, the engine's
legal moves as ``(card, mask)`` pairs.

Pure Python over card ids and bitmasks; no gym, PettingZoo or numpy imports. The rules come in
as any object with the capture fields of :class:`~scopa_env.engine.rules.Rules` (this module
is below ``rules.py``, which imports it and re-exports its public names: ``Move``, ``move_of``,
``legal_pairs``, ``check_wild_rank``, ``capture_ranks``, ``capture_rank``, ``WILDCARD``,
``WILDCARD_RANK``).

The standard captures (pagat-scopa.txt, wikipedia-scopa.txt) take the fast path of
:func:`legal_pairs`; every other capture field (``capture_sum``, ``ace_takes_all``,
``ace_takes_itself``, ``max_capture_cards``, ``fewest_cards``, ``capture_equal=False``), the
house capture rules (:mod:`scopa_env.engine.house_rules`) and Cirulla's declared wildcard go
through :func:`_variant_pairs`. Both build the table's subset
sums once per call from the rank combinations cached per rank multiset of the table.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from typing import Protocol

from scopa_env.engine import house_rules
from scopa_env.engine.cards import (
    ACE,
    CUPS,
    FRENCH_RANKS,
    MAX_CARDS,
    MAX_RANK,
    NUM_CARDS,
    NUM_RANKS,
    RANK_MASK,
    RANK_OF,
    card_id,
    cards_of,
    format_card,
    format_cards,
    mask_of,
)


class Move:
    """One turn: the hand card played and the table cards it captures (empty = trail).

    Moves compare and hash by value; ``Move(6, {16, 30})`` equals the engine's move.
    ``Move(card, itself=True)`` is the self-mask move (``captured == {card}``): keeping
    Chkobba's drawn first card, or an Ace taking itself (see :mod:`scopa_env.engine.rules`).
    """

    __slots__ = ("card", "captured", "mask")

    card: int
    captured: frozenset[int]
    mask: int  # bitmask of ``captured``

    def __init__(self, card: int, captured: Iterable[int] = (), itself: bool = False) -> None:
        object.__setattr__(self, "card", int(card))
        if not 0 <= self.card < MAX_CARDS:
            raise ValueError(f"not a card id (0..{MAX_CARDS - 1}): {card!r}")
        if itself:
            if tuple(captured):
                raise ValueError("a move that takes itself captures no table cards")
            captured = (self.card,)
        caps = frozenset(int(c) for c in captured)
        object.__setattr__(self, "captured", caps)
        object.__setattr__(self, "mask", mask_of(caps))
        if self.mask >> self.card & 1 and not itself:
            raise ValueError(
                f"a move cannot capture the card it plays ({format_card(self.card)}); "
                f"use Move({self.card}, itself=True) for a card that takes itself"
            )

    def __setattr__(self, name, value):
        raise AttributeError("Move is immutable")

    @property
    def is_trail(self) -> bool:
        return not self.mask

    @property
    def is_self(self) -> bool:
        """The card "takes itself": keep the drawn card (Chkobba) or an Ace takes itself."""
        return self.mask == 1 << self.card

    def __eq__(self, other) -> bool:
        return isinstance(other, Move) and self.card == other.card and self.mask == other.mask

    def __hash__(self) -> int:
        return hash((self.card, self.mask))

    def __lt__(self, other: Move) -> bool:
        return (self.card, self.mask) < (other.card, other.mask)

    def __repr__(self) -> str:
        return f"Move({self.card}, {sorted(self.captured)})"

    def __str__(self) -> str:
        return self.text()

    def text(self, ranks_per_suit: int = NUM_RANKS) -> str:
        """The move in short notation (``"7d takes 3c 4s"``); ``ranks_per_suit=13`` writes the
        52-card deck's (see :func:`~scopa_env.engine.cards.format_card`)."""
        card = format_card(self.card, ranks_per_suit)
        if self.is_trail:
            return f"{card} trails"
        if self.is_self:
            return f"{card} takes itself"
        return f"{card} takes {format_cards(self.mask, ranks_per_suit)}"


_MOVES: dict[int, Move] = {}


def move_of(card: int, mask: int) -> Move:
    """The (cached) :class:`Move` for a card and a captured bitmask."""
    key = mask << 6 | card
    move = _MOVES.get(key)
    if move is None:
        if mask == 1 << card:
            move = _MOVES[key] = Move(card, itself=True)
        else:
            move = _MOVES[key] = Move(card, cards_of(mask))
    return move


class CaptureRules(Protocol):
    """The fields of :class:`~scopa_env.engine.rules.Rules` that say what a card may capture."""

    name: str
    ranks: tuple[int, ...]
    ranks_per_suit: int
    single_card_priority: bool
    capture_optional: bool
    capture_equal: bool
    capture_sum: int
    ace_takes_all: bool
    ace_takes_itself: bool
    max_capture_cards: int
    fewest_cards: bool
    bonus_wildcard: bool
    house_rules: tuple[str, ...]
    plain_captures: bool


WILDCARD = card_id(CUPS, 7)
"""Cirulla's wildcard for the bonuses, the Seven of cups/hearts (card 16)."""
WILDCARD_RANK = 7
"""The wildcard's own rank, which it captures as unless declared otherwise."""


def check_wild_rank(wild_rank: int, rules: CaptureRules) -> None:
    """Raise ``ValueError`` unless ``wild_rank`` is 0 (none) or a declarable rank under ``rules``."""
    if wild_rank == 0:
        return
    if not rules.bonus_wildcard:
        raise ValueError(
            f"wild_rank={wild_rank!r}: rules {rules.name!r} have no wildcard (bonus_wildcard is False); use 0"
        )
    if isinstance(wild_rank, bool) or not isinstance(wild_rank, int) or wild_rank not in rules.ranks:
        raise ValueError(f"wild_rank must be 0 (none) or a rank of the deck {rules.ranks}, got {wild_rank!r}")


@functools.lru_cache(maxsize=16)
def capture_ranks(wild_rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(rank_of, rank_mask)`` with the Seven of cups moved to ``wild_rank``."""
    rank_of = list(RANK_OF)
    rank_of[WILDCARD] = wild_rank
    rank_mask = list(RANK_MASK)
    rank_mask[WILDCARD_RANK] &= ~(1 << WILDCARD)
    rank_mask[wild_rank] |= 1 << WILDCARD
    return tuple(rank_of), tuple(rank_mask)


def capture_rank(card: int, wild_rank: int = 0) -> int:
    """The rank ``card`` captures and is captured as: its own, or the wildcard's declared one."""
    return wild_rank if wild_rank and card == WILDCARD else RANK_OF[card]


def _bits(mask: int) -> list[int]:
    """Single-bit masks of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


def legal_pairs(hand: int, table: int, rules: CaptureRules, wild_rank: int = 0) -> list[tuple[int, int]]:
    """Legal moves as ``(card, captured_mask)`` pairs, ordered by card then mask.

    The fast form of :func:`legal_moves` used by the engine: the table's subset
    sums are built once per call and shared by every hand card.

    ``wild_rank`` (Cirulla, :attr:`Rules.bonus_wildcard`): the rank the Seven of cups
    was declared as for a hand bonus; it captures and is captured as that rank, in hand
    and on the table, until the end of the hand. 0 = it is a Seven.
    """
    if wild_rank and wild_rank != WILDCARD_RANK and (hand | table) >> WILDCARD & 1:
        return _variant_pairs(hand, table, rules, *capture_ranks(wild_rank))
    if not rules.plain_captures:
        return _variant_pairs(hand, table, rules)
    if not table:
        return [(c, 0) for c in cards_of(hand)]
    out: list[tuple[int, int]] = []
    priority = rules.single_card_priority
    optional = rules.capture_optional
    combos = None
    h = hand
    while h:
        low = h & -h
        h ^= low
        card = low.bit_length() - 1
        rank = RANK_OF[card]
        singles = table & RANK_MASK[rank]
        if singles and priority:
            if optional:
                out.append((card, 0))
            while singles:
                b = singles & -singles
                out.append((card, b))
                singles ^= b
            continue
        if combos is None:
            combos = _sets_by_sum(table, rules.ranks_per_suit)
        sets = _expand(combos[rank], table) if combos[rank] else []
        if singles:  # no single-card priority: singles compete with sets
            sets = sorted(sets + _bits(singles))
        if not sets or optional:
            out.append((card, 0))
        for m in sets:
            out.append((card, m))
    return out


def _variant_pairs(
    hand: int,
    table: int,
    rules: CaptureRules,
    rank_of: tuple[int, ...] = RANK_OF,
    rank_mask: tuple[int, ...] = RANK_MASK,
) -> list[tuple[int, int]]:
    """:func:`legal_pairs` for every capture rule of :class:`Rules` (the slower general path).

    The options of a card are the union of: equal-value captures (a single card, or a
    set of 2+ cards, singles first under ``single_card_priority``), ``capture_sum``
    captures (1+ cards adding up to the total with the played card), the Ace's
    take-all and the house capture rules' extra captures (:attr:`Rules.house_rules`,
    :mod:`scopa_env.engine.house_rules`); then ``max_capture_cards`` and ``fewest_cards``
    filter them.
    ``rank_of``/``rank_mask`` are the capture ranks (Cirulla's declared wildcard moves
    the Seven of cups to another rank, :func:`capture_ranks`).
    """
    out: list[tuple[int, int]] = []
    aces_on_table = table & rank_mask[ACE]
    combos = None
    plugins = house_rules.capture_rules(rules.house_rules) if rules.house_rules else ()
    h = hand
    while h:
        low = h & -h
        h ^= low
        card = low.bit_length() - 1
        rank = rank_of[card]
        if not table:
            out.append((card, low) if rank == ACE and rules.ace_takes_itself else (card, 0))
            continue
        if combos is None:
            combos = _sets_up_to(table, max(rules.ranks_per_suit, rules.capture_sum - 1), rank_of)
        options: set[int] = set()
        if rules.capture_equal:
            singles = table & rank_mask[rank]
            if singles and rules.single_card_priority:
                options.update(_bits(singles))
            else:
                options.update(_bits(singles))
                options.update(_expand([c for c, size in combos[rank] if size >= 2], table, rank_mask))
        need = rules.capture_sum - rank
        if rules.capture_sum and 0 < need < len(combos):
            options.update(_expand([c for c, _ in combos[need]], table, rank_mask))
        if rules.ace_takes_all and rank == ACE and not aces_on_table:
            options.add(table)
        for plugin in plugins:
            options.update(plugin.extra_captures(card, table, rules))
        if rules.max_capture_cards:
            options = {m for m in options if m.bit_count() <= rules.max_capture_cards}
        if rules.fewest_cards and options:
            fewest = min(m.bit_count() for m in options)
            options = {m for m in options if m.bit_count() == fewest}
        if not options or rules.capture_optional:
            out.append((card, 0))
        out.extend((card, m) for m in sorted(options))
    return out


_WIDE: dict[tuple[int, int], list[list[tuple[tuple[tuple[int, int], ...], int]]]] = {}


def _sets_up_to(
    table: int, max_total: int, rank_of: tuple[int, ...] = RANK_OF
) -> list[list[tuple[tuple[tuple[int, int], ...], int]]]:
    """Rank combinations of 1+ table cards with their size, grouped by sum (0..max_total)."""
    if rank_of is RANK_OF:
        key = _rank_key(table)
    else:
        key = 0
        t = table
        while t:
            low = t & -t
            t ^= low
            key += _POW5[rank_of[low.bit_length() - 1]]
    combos = _WIDE.get((key, max_total))
    if combos is None:
        if len(_WIDE) > _COMBO_CACHE_LIMIT:
            _WIDE.clear()
        combos = _WIDE[(key, max_total)] = _fitting(key, max_total, 1)
    return combos


# Capture sets depend on the table only through its ranks, so the rank combinations
# (e.g. "one 3 and one 5") summing to each value are cached per rank multiset of the
# table and then expanded to the table's actual cards. The multiset is a base-5 number
# (digit r: how many cards of rank r), read from the table's four suit rows with
# _SUIT_ROW_KEY; its combinations are the rows of the _rank_partitions table that fit it.
_POW5 = tuple(5**r for r in range(MAX_RANK + 1))
_SUIT_ROW_KEY = tuple(sum(_POW5[b + 1] for b in range(NUM_RANKS) if row >> b & 1) for row in range(1 << NUM_RANKS))
"""Rank-multiset key of one suit's 10-bit row of a card bitmask (bit ``b``: rank ``b + 1``)."""
_ROW_MASK = (1 << NUM_RANKS) - 1
_HIGH_KEY = tuple(
    sum(_POW5[NUM_RANKS + 1 + b % (FRENCH_RANKS - NUM_RANKS)] for b in range(MAX_CARDS - NUM_CARDS) if v >> b & 1)
    for v in range(1 << (MAX_CARDS - NUM_CARDS))
)
"""Rank-multiset key of the 52-card deck's pictures, ids 40..51 (bit ``b``: rank ``11 + b % 3``)."""
_COMBOS: dict[int | tuple[int, int], list[list[tuple[tuple[int, int], ...]]]] = {}
_CHOOSE: dict[tuple[int, int], list[int]] = {}
_COMBO_CACHE_LIMIT = 500_000


def _rank_key(mask: int) -> int:
    """The base-5 rank-multiset key of a card bitmask (four table look-ups, one per suit)."""
    return (
        _SUIT_ROW_KEY[mask & _ROW_MASK]
        + _SUIT_ROW_KEY[mask >> NUM_RANKS & _ROW_MASK]
        + _SUIT_ROW_KEY[mask >> 2 * NUM_RANKS & _ROW_MASK]
        + _SUIT_ROW_KEY[mask >> 3 * NUM_RANKS & _ROW_MASK]
        + _HIGH_KEY[mask >> NUM_CARDS]
    )


def _counts_of(key: int) -> list[int]:
    """Cards per rank (index 0..13) of a rank-multiset key."""
    return [key // _POW5[r] % 5 for r in range(MAX_RANK + 1)]


def _fitting(key: int, max_total: int, min_size: int) -> list[list[tuple[tuple[tuple[int, int], ...], int]]]:
    """The rows of :func:`_rank_partitions` that a table of rank-multiset ``key`` holds.

    Tables that differ only in cards no combination can use (a second Ten, a third Six)
    share one entry of ``_FITTING``; a row is kept when the table has each of its ranks
    (one bitmask test) and, for the few rows using a rank twice or more, enough of them.
    """
    counts = _counts_of(key)
    capped = sum(min(counts[r], max_total // r) * _POW5[r] for r in range(1, MAX_RANK + 1))
    out = _FITTING.get((capped, max_total, min_size))
    if out is None:
        present = sum(1 << r for r in range(1, MAX_RANK + 1) if counts[r])
        out = [
            [(combo, size) for combo, size, ranks, repeats in row if not ranks & ~present and _holds(repeats, counts)]
            for row in _rank_partitions(max_total, min_size)
        ]
        if len(_FITTING) > _COMBO_CACHE_LIMIT:
            _FITTING.clear()
        _FITTING[(capped, max_total, min_size)] = out
    return out


def _holds(repeats: tuple[tuple[int, int], ...], counts: list[int]) -> bool:
    for rank, k in repeats:
        if counts[rank] < k:
            return False
    return True


_FITTING: dict[tuple[int, int, int], list] = {}


@functools.cache
def _rank_partitions(max_total: int, min_size: int) -> tuple[tuple[tuple, ...], ...]:
    """Every rank combination of ``min_size``+ cards a deck allows (at most 4 per rank,
    ranks 1..13; sums up to 10 never use a rank above 10) as ``(combo, size, ranks, repeats)`` (``ranks``: bit ``r`` per rank used;
    ``repeats``: the ``(rank, k)`` with ``k >= 2``), grouped by sum 0..max_total: the
    table, built once, that each table's combinations are filtered from. Within a sum,
    combinations are ordered by their count of Aces, then Twos ... (the order
    :func:`_expand`'s callers always had)."""
    by_sum: list[list[tuple]] = [[] for _ in range(max_total + 1)]
    # (total, size, combo) after deciding ranks 1..rank, extended one rank at a time.
    partial = [(0, 0, ())]
    for rank in range(1, MAX_RANK + 1):
        partial = [
            (total + k * rank, size + k, combo + ((rank, k),) if k else combo)
            for total, size, combo in partial
            for k in range(min(4, (max_total - total) // rank) + 1)
        ]
    for total, size, combo in partial:
        if size >= min_size:
            ranks = sum(1 << r for r, _ in combo)
            by_sum[total].append((combo, size, ranks, tuple((r, k) for r, k in combo if k >= 2)))
    return tuple(tuple(row) for row in by_sum)


def _sets_by_sum(table: int, top: int = NUM_RANKS) -> list[list[tuple[tuple[int, int], ...]]]:
    """Rank combinations of 2+ table cards, grouped by their sum (0..top, the deck's
    highest rank: 10, or 13 in the 52-card deck)."""
    key = _rank_key(table) if top == NUM_RANKS else (_rank_key(table), top)
    combos = _COMBOS.get(key)
    if combos is None:
        if len(_COMBOS) > _COMBO_CACHE_LIMIT:
            _COMBOS.clear()
        combos = _COMBOS[key] = [[c for c, _ in row] for row in _fitting(_rank_key(table), top, 2)]
    return combos


def _expand(combos: list[tuple[tuple[int, int], ...]], table: int, rank_mask: tuple[int, ...] = RANK_MASK) -> list[int]:
    """Bitmasks of the table sets matching rank combinations, ascending."""
    out: list[int] = []
    for combo in combos:
        masks = [0]
        for rank, k in combo:
            avail = table & rank_mask[rank]
            if k == avail.bit_count():
                masks = [m | avail for m in masks]
            else:
                choices = _CHOOSE.get((avail, k))
                if choices is None:
                    bits = _bits(avail)
                    choices = _CHOOSE[(avail, k)] = [sum(c) for c in itertools.combinations(bits, k)]
                masks = [m | c for m in masks for c in choices]
        out += masks
    out.sort()
    return out
