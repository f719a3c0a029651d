"""Action spaces: the "move" enumeration and the "select" action ids.

**"move" mode** enumerates every (played card, captured set) pair the rules allow in
some position, plus one trail action per card, like chess_v6's 4,672 moves. Ids are
assigned card by card (0..39); within a card the trail comes first, then captured
sets in ascending bitmask order. For the standard rules N = 16,200:

* a single card of the same rank (3 per card);
* a set of 2+ other cards whose values sum to the played card's rank;
* the trail.

**"select" mode** is ``Discrete(41)``: actions 0..39 name a card (first the hand card
to play, then the table cards to capture, one at a time in ascending id order), and
:data:`CONFIRM` (40) ends a choice that is complete but could be extended, or
trails where trailing is optional.
"""

from __future__ import annotations

import functools

from scopa_env.cards import NUM_CARDS, RANK_OF
from scopa_env.rules import Move, Rules, move_of

NUM_SELECT_ACTIONS = NUM_CARDS + 1
CONFIRM = NUM_CARDS
MAX_MOVE_ACTIONS = 65_536


class MoveEnumeration:
    """The fixed list of (card, captured_mask) pairs of "move" mode for one rules object."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        pairs: list[tuple[int, int]] = []
        deck = rules.deck
        for card in deck:
            pairs.append((card, 0))
            pairs.extend((card, m) for m in sorted(_possible_captures(card, deck, rules)))
        if len(pairs) > MAX_MOVE_ACTIONS:
            raise ValueError(
                f"rules {rules.name!r} allow {len(pairs):,} distinct moves, more than the "
                f"{MAX_MOVE_ACTIONS:,} that action_mode='move' supports; use action_mode='select'"
            )
        self.pairs = pairs
        self.index = {(c, m): i for i, (c, m) in enumerate(pairs)}

    def __len__(self) -> int:
        return len(self.pairs)

    def decode(self, action: int) -> Move:
        """The :class:`~scopa_env.rules.Move` of an action id."""
        if not 0 <= action < len(self.pairs):
            raise ValueError(f"action {action} is out of range for {len(self.pairs)} move ids")
        return move_of(*self.pairs[action])

    def encode(self, move: Move) -> int:
        """The action id of a move; a move the rules can never make raises ``ValueError``."""
        try:
            return self.index[(move.card, move.mask)]
        except KeyError:
            raise ValueError(f"{move} is not a move under rules {self.rules.name!r}") from None


@functools.lru_cache(maxsize=64)
def move_enumeration(rules: Rules) -> MoveEnumeration:
    """Cached :class:`MoveEnumeration` of a rules object."""
    return MoveEnumeration(rules)


def _possible_captures(card: int, deck: tuple[int, ...], rules: Rules) -> list[int]:
    """Every set the card could capture in some position: same-rank singles and sums."""
    rank = RANK_OF[card]
    others = [c for c in deck if c != card]
    out = [1 << c for c in others if RANK_OF[c] == rank]
    smaller = [c for c in others if RANK_OF[c] < rank]

    def walk(i: int, total: int, mask: int, size: int) -> None:
        for j in range(i, len(smaller)):
            c = smaller[j]
            t = total + RANK_OF[c]
            if t == rank and size >= 1:
                out.append(mask | 1 << c)
            elif t < rank:
                walk(j + 1, t, mask | 1 << c, size + 1)

    walk(0, 0, 0, 0)
    return out


def select_options(outcomes: list[int], selected: int) -> tuple[list[int], bool, list[int]]:
    """Where a "select" capture choice can go next.

    Args:
        outcomes: captured masks of the legal moves of the pending card (0 = trail).
        selected: table cards chosen so far (ascending id order).

    Returns:
        ``(next_cards, can_confirm, candidates)``: table cards that may be chosen
        next, whether :data:`CONFIRM` is legal, and the outcomes still reachable.
    """
    if selected:
        below = (1 << selected.bit_length()) - 1
        candidates = [m for m in outcomes if m & below == selected]
    else:
        candidates = list(outcomes)
    nxt = sorted({(m ^ selected) & -(m ^ selected) for m in candidates if m != selected})
    can_confirm = selected in candidates and len(candidates) > 1
    return [b.bit_length() - 1 for b in nxt], can_confirm, candidates


__all__ = ["CONFIRM", "NUM_SELECT_ACTIONS", "MoveEnumeration", "move_enumeration", "select_options"]
