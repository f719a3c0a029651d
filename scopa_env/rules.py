"""Rules of Scopa: the frozen :class:`Rules` object, named presets and legal moves.

Pure Python over card ids and bitmasks; no gym, PettingZoo or numpy imports.

The standard game (``Rules()``, preset ``"standard"``) follows pagat-scopa.txt and
wikipedia-scopa.txt:

* a turn plays exactly one hand card;
* if its value equals one or more single table cards it must capture exactly one of
  them (the player chooses which);
* otherwise, if one or more sets of 2+ table cards sum to its value it must capture
  exactly one such set (the player chooses);
* otherwise it is trailed. A card that can capture cannot be trailed, but any hand
  card may be chosen.

A variant is a few fields of :class:`Rules` and a test, never a subclass.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from scopa_env.cards import (
    NUM_CARDS,
    PRIMIERA_BY_RANK,
    RANK_MASK,
    RANK_OF,
    RANKS,
    card_id,
    cards_of,
    format_card,
    format_cards,
    mask_of,
)

PLAYER_COUNTS = (2, 3, 4, 6)


@dataclass(frozen=True)
class Rules:
    """Every rule that differs between variants, with the standard game as default.

    Build variants with :meth:`replace` or pick a named preset with :func:`get_rules`.
    Invalid values raise ``ValueError`` naming the field.
    """

    name: str = "standard"
    """Preset name, used in messages, run folders and docs."""

    player_counts: tuple[int, ...] = PLAYER_COUNTS
    """Player counts the variant allows. 2 and 3 play each for themselves; 4 play in
    two teams with partners opposite (seats 0+2 vs 1+3); 6 in two teams of three
    with alternating seats (0+2+4 vs 1+3+5)."""

    ranks: tuple[int, ...] = RANKS
    """Ranks in the deck (all four suits of each). Scopa Corse drops the Twos."""

    hand_size: int = 3
    """Cards dealt to each player per deal."""

    table_size: int = 4
    """Cards dealt face up to the table at the start of a hand."""

    kings_redeal: bool = True
    """Gather and deal again when the initial table holds 3 or 4 Kings (pagat:
    "with more than two face up Kings in the layout, sweeps (scope) are not possible")."""

    single_card_priority: bool = True
    """A card that matches a single table card must capture a single card, not a set."""

    capture_optional: bool = False
    """A card that could capture may be trailed instead (Scopa Corse)."""

    last_play_scopa: bool = False
    """Clearing the table with the very last card of the hand counts as a scopa."""

    primiera_values: tuple[int, ...] = PRIMIERA_BY_RANK[1:]
    """Primiera value of ranks 1..10 (standard: 16 12 13 14 15 18 21 10 10 10)."""

    scopa_points: int = 1
    """Points per scopa."""

    target: int = 11
    """A game ends after the hand in which some side has at least ``target`` points
    and strictly more than every other side."""

    cappotto: bool = False
    """A side leading 7-0 after a hand wins the game at once (wikipedia-scopa.txt)."""

    description: str = field(default="Standard Scopa (pagat-scopa.txt, wikipedia-scopa.txt).", compare=False)
    """One line for listings."""

    def __post_init__(self) -> None:
        _check(isinstance(self.name, str) and self.name != "", "name", "must be a non-empty string", self.name)
        _check(
            isinstance(self.player_counts, tuple)
            and len(self.player_counts) > 0
            and all(n in PLAYER_COUNTS for n in self.player_counts),
            "player_counts",
            f"must be a non-empty tuple of values from {PLAYER_COUNTS}",
            self.player_counts,
        )
        _check(
            isinstance(self.ranks, tuple)
            and len(self.ranks) > 0
            and len(set(self.ranks)) == len(self.ranks)
            and all(r in RANKS for r in self.ranks),
            "ranks",
            "must be a tuple of distinct ranks from 1..10",
            self.ranks,
        )
        for name in ("hand_size", "table_size", "scopa_points", "target"):
            value = getattr(self, name)
            low = 0 if name == "table_size" else 1
            _check(
                isinstance(value, int) and not isinstance(value, bool) and value >= low,
                name,
                f"must be an int >= {low}",
                value,
            )
        _check(
            isinstance(self.primiera_values, tuple) and len(self.primiera_values) == 10,
            "primiera_values",
            "must be a tuple of 10 numbers (ranks 1..10)",
            self.primiera_values,
        )
        for name in ("kings_redeal", "single_card_priority", "capture_optional", "last_play_scopa", "cappotto"):
            _check(isinstance(getattr(self, name), bool), name, "must be a bool", getattr(self, name))
        for n in self.player_counts:
            self.check_players(n)

    # --- derived facts -------------------------------------------------------

    @functools.cached_property
    def deck(self) -> tuple[int, ...]:
        """Card ids in the deck, ascending."""
        return tuple(sorted(card_id(s, r) for s in range(4) for r in self.ranks))

    @functools.cached_property
    def deck_mask(self) -> int:
        return mask_of(self.deck)

    def check_players(self, num_players: int) -> None:
        """Raise ``ValueError`` if this variant cannot be played by ``num_players``."""
        if num_players not in self.player_counts:
            raise ValueError(f"rules {self.name!r} allow num_players in {self.player_counts}, got {num_players!r}")
        dealt = len(self.deck) - self.table_size
        per_round = num_players * self.hand_size
        if dealt <= 0 or dealt % per_round:
            raise ValueError(
                f"rules {self.name!r}: {len(self.deck)} cards minus table_size={self.table_size} "
                f"cannot be dealt in rounds of hand_size={self.hand_size} to {num_players} players"
            )

    def replace(self, **changes) -> Rules:
        """A copy with some fields changed (validated). Unknown fields raise ``ValueError``."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(f"unknown Rules field(s) {unknown}; valid fields: {sorted(names)}")
        return dataclasses.replace(self, **changes)


def _check(ok: bool, field_name: str, what: str, value) -> None:
    if not ok:
        raise ValueError(f"Rules.{field_name} {what}, got {value!r}")


STANDARD = Rules()

#: Named presets. Variants add themselves here (see docs/rules.md).
PRESETS: dict[str, Rules] = {"standard": STANDARD}


def register_preset(rules: Rules) -> Rules:
    """Add a preset under ``rules.name``; a second preset with the same name is an error."""
    if rules.name in PRESETS and PRESETS[rules.name] != rules:
        raise ValueError(f"a different preset named {rules.name!r} is already registered")
    PRESETS[rules.name] = rules
    return rules


def get_rules(rules: str | Rules | None = None) -> Rules:
    """Resolve a preset name or a :class:`Rules` object (``None`` is the standard game)."""
    if rules is None:
        return STANDARD
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        try:
            return PRESETS[rules]
        except KeyError:
            raise ValueError(f"unknown rules preset {rules!r}; known presets: {', '.join(sorted(PRESETS))}") from None
    raise ValueError(f"rules must be a preset name or a Rules object, got {type(rules).__name__}")


# --- moves --------------------------------------------------------------------


class Move:
    """One turn: the hand card played and the table cards it captures (empty = trail).

    Moves compare and hash by value; ``Move(6, {16, 30})`` equals the engine's move.
    """

    __slots__ = ("card", "captured", "mask")

    card: int
    captured: frozenset[int]
    mask: int  # bitmask of ``captured``

    def __init__(self, card: int, captured: Iterable[int] = ()) -> None:
        object.__setattr__(self, "card", int(card))
        caps = frozenset(int(c) for c in captured)
        object.__setattr__(self, "captured", caps)
        object.__setattr__(self, "mask", mask_of(caps))
        if not 0 <= self.card < NUM_CARDS:
            raise ValueError(f"not a card id (0..39): {card!r}")
        if self.mask >> self.card & 1:
            raise ValueError(f"a move cannot capture the card it plays ({format_card(self.card)})")

    def __setattr__(self, name, value):
        raise AttributeError("Move is immutable")

    @property
    def is_trail(self) -> bool:
        return not self.mask

    def __eq__(self, other) -> bool:
        return isinstance(other, Move) and self.card == other.card and self.mask == other.mask

    def __hash__(self) -> int:
        return hash((self.card, self.mask))

    def __lt__(self, other: Move) -> bool:
        return (self.card, self.mask) < (other.card, other.mask)

    def __repr__(self) -> str:
        return f"Move({self.card}, {sorted(self.captured)})"

    def __str__(self) -> str:
        if self.is_trail:
            return f"{format_card(self.card)} trails"
        return f"{format_card(self.card)} takes {format_cards(self.mask)}"


_MOVES: dict[int, Move] = {}


def move_of(card: int, mask: int) -> Move:
    """The (cached) :class:`Move` for a card and a captured bitmask."""
    key = mask << 6 | card
    move = _MOVES.get(key)
    if move is None:
        move = _MOVES[key] = Move(card, cards_of(mask))
    return move


def capture_options(rank: int, table: int, rules: Rules = STANDARD) -> list[int]:
    """Bitmasks of the table sets a card of ``rank`` may capture (empty list: none).

    Args:
        rank: capture value of the played card (1..10).
        table: bitmask of the table cards.
        rules: the rules in force.
    """
    return [m for c, m in legal_pairs(1 << card_id(0, rank), table, rules.replace(capture_optional=False)) if m]


def legal_pairs(hand: int, table: int, rules: Rules = STANDARD) -> list[tuple[int, int]]:
    """Legal moves as ``(card, captured_mask)`` pairs, ordered by card then mask.

    The fast form of :func:`legal_moves` used by the engine: the table's subset
    sums are built once per call and shared by every hand card.
    """
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
            combos = _sets_by_sum(table)
        sets = _expand(combos[rank], table) if combos[rank] else []
        if singles:  # no single-card priority: singles compete with sets
            sets = sorted(sets + _bits(singles))
        if not sets or optional:
            out.append((card, 0))
        for m in sets:
            out.append((card, m))
    return out


# Capture sets depend on the table only through its ranks, so the rank combinations
# (e.g. "one 3 and one 5") summing to each value are cached per rank multiset of the
# table and then expanded to the table's actual cards.
_POW5 = tuple(5**r for r in range(11))
_COMBOS: dict[int, list[list[tuple[tuple[int, int], ...]]]] = {}
_CHOOSE: dict[tuple[int, int], list[int]] = {}
_COMBO_CACHE_LIMIT = 500_000


def _sets_by_sum(table: int) -> list[list[tuple[tuple[int, int], ...]]]:
    """Rank combinations of 2+ table cards, grouped by their sum (0..10)."""
    key = 0
    t = table
    while t:
        low = t & -t
        t ^= low
        key += _POW5[RANK_OF[low.bit_length() - 1]]
    combos = _COMBOS.get(key)
    if combos is None:
        if len(_COMBOS) > _COMBO_CACHE_LIMIT:
            _COMBOS.clear()
        combos = _COMBOS[key] = _rank_combos([key // _POW5[r] % 5 for r in range(11)])
    return combos


def _rank_combos(counts: list[int]) -> list[list[tuple[tuple[int, int], ...]]]:
    by_sum: list[list[tuple[tuple[int, int], ...]]] = [[] for _ in range(11)]

    def walk(rank: int, total: int, size: int, chosen: tuple[tuple[int, int], ...]) -> None:
        if rank > 10:
            if size >= 2:
                by_sum[total].append(chosen)
            return
        for k in range(min(counts[rank], (10 - total) // rank) + 1):
            walk(rank + 1, total + k * rank, size + k, chosen + ((rank, k),) if k else chosen)

    walk(1, 0, 0, ())
    return by_sum


def _expand(combos: list[tuple[tuple[int, int], ...]], table: int) -> list[int]:
    """Bitmasks of the table sets matching rank combinations, ascending."""
    out: list[int] = []
    for combo in combos:
        masks = [0]
        for rank, k in combo:
            avail = table & RANK_MASK[rank]
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


def legal_moves(hand: Iterable[int] | int, table: Iterable[int] | int, rules: Rules | str | None = None) -> list[Move]:
    """Every legal move for a player holding ``hand`` with ``table`` face up.

    Args:
        hand: card ids (or a bitmask) in the player's hand.
        table: card ids (or a bitmask) face up on the table.
        rules: a :class:`Rules` object or preset name; the standard game by default.

    Returns:
        Moves ordered by played card, then captured set; trails have an empty ``captured``.
    """
    r = get_rules(rules)
    hand_mask = hand if isinstance(hand, int) else mask_of(hand)
    table_mask = table if isinstance(table, int) else mask_of(table)
    if hand_mask & table_mask:
        raise ValueError(f"cards both in hand and on the table: {format_cards(hand_mask & table_mask)}")
    return [move_of(c, m) for c, m in legal_pairs(hand_mask, table_mask, r)]


def _bits(mask: int) -> list[int]:
    """Single-bit masks of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out
