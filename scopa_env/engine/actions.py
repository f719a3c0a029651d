"""Action spaces: the "move" enumeration and the "select" action ids.

**"move" mode** enumerates every (played card, captured set) pair the rules allow in
some position, plus one trail action per card, like chess_v6's 4,672 moves. Ids are
assigned card by card (0..39); within a card the trail comes first, then captured
sets in ascending bitmask order. For the standard rules N = 16,200:

* a single card of the same rank (3 per card);
* a set of 2+ other cards whose values sum to the played card's rank;
* the trail.

Variants (see ``docs/rules.md`` for N per preset) add the sets that make
``capture_sum`` with the played card, the self-mask move ``(card, 1 << card)`` (keep
Chkobba's drawn first card; declare, under ``bazzica_points``, with the hand's highest
card; an Ace taking itself) and drop sets above
``max_capture_cards``. Under ``ace_takes_all`` an Ace could take any of 2**36 sets,
so each Ace gets one compact *take-all* id (:data:`TAKE_ALL`), last in its block,
whose move is "this Ace takes the whole table": decode it with the table in view
(``decode(action, table)``), and encode a take-all move to it (``encode(move, table)``).
Under Cirulla's ``bonus_wildcard`` the Seven of cups may capture and be captured as
any rank it can be declared as (see :func:`scopa_env.engine.rules.legal_pairs`), so the
enumeration is the union over those ranks (and its take-all id, with
``ace_takes_all``, is for any whole table it takes); declaring it as rank ``r`` for
the total under 10 is ``(WILDCARD, 1 << c)``, ``c`` the rank-``r`` coin
(:func:`scopa_env.engine.scoring.declaring_pairs`).
A house capture rule (:attr:`Rules.house_rules <scopa_env.engine.rules.Rules.house_rules>`,
:mod:`scopa_env.engine.house_rules`) adds every mask it may produce for a card (its ``possible``, by
default its captures on the fullest table); a legal move outside the ids raises a one-line
``ValueError`` naming the rule.
Every preset has a "move" mode; the widest are the Scopa di Quindici presets (84,488 to
100,652 ids: a capture may add up to 15 with the played card), the 52-card deck (preset
``french_52``, N = 72,752: a King of value 13 can take many more sets than a 10) and
Cirulla (271,737: the fifteens and the wildcard's ranks). Rules whose enumeration would
exceed :data:`MAX_MOVE_ACTIONS` (524,288) raise a one-line ``ValueError`` pointing to
"select" mode.

**"select" mode** is ``Discrete(41)`` (``Discrete(53)`` for the 52-card deck, whose
:func:`confirm_action` is 52): actions 0..39 name a card (first the hand card
to play, then the table cards to capture, one at a time in ascending id order), and
:data:`CONFIRM` (40) ends a choice that is complete but could be extended, or
trails where trailing is optional. A self-mask move is chosen by naming the card a
second time: Chkobba's first-card decision is "name the drawn card, then name it again
(keep) or CONFIRM (put it on the table)"; a declaration is "name the hand's highest
card, then name it again (declare) or CONFIRM (pass)"; when Cirulla's wildcard rank is the
player's choice, "name the Seven of cups, then the coin of the rank it stands for
(declare) or CONFIRM (pass)".
"""

from __future__ import annotations

import functools

from scopa_env.engine import house_rules
from scopa_env.engine.cards import ACE, NUM_CARDS, RANK_MASK, RANK_OF, card_id
from scopa_env.engine.rules import WILDCARD, Move, Rules, capture_ranks, move_of
from scopa_env.engine.scoring import WILD_RANK_LABEL_SUIT

NUM_SELECT_ACTIONS = NUM_CARDS + 1
"""Size of "select" mode with the 40-card deck; :func:`num_select_actions` for any rules."""
CONFIRM = NUM_CARDS
""""select" mode's CONFIRM with the 40-card deck; :func:`confirm_action` for any rules."""
MAX_MOVE_ACTIONS = 524_288
"""Most ids "move" mode enumerates (Cirulla's 271,737 fit); wider rules raise and point to "select"."""
TAKE_ALL = -1
"""Captured-mask placeholder of an Ace's compact take-all id (``ace_takes_all`` rules)."""


class MoveEnumeration:
    """The fixed list of (card, captured_mask) pairs of "move" mode for one rules object."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        pairs: list[tuple[int, int]] = []
        deck = rules.deck
        self.take_all = rules.ace_takes_all
        self.wildcard = rules.bonus_wildcard and rules.declarations and WILDCARD in deck
        rank_tables = [RANK_OF]
        if self.wildcard:  # the Seven of cups as every rank it may be declared as
            rank_tables += [capture_ranks(r)[0] for r in rules.ranks if r != RANK_OF[WILDCARD]]
        for card in deck:
            pairs.append((card, 0))
            masks: set[int] = set()
            for rank_of in rank_tables:
                masks.update(_possible_captures(card, deck, rules, rank_of))
            if self.wildcard and card == WILDCARD and rules.hand_bonus_points:
                # declaring the wildcard as rank r: (WILDCARD, the rank-r coin) (scoring.declaring_pairs)
                masks.update(1 << card_id(WILD_RANK_LABEL_SUIT, r) for r in rules.ranks if r != RANK_OF[WILDCARD])
            pairs.extend((card, m) for m in sorted(masks))
            if self.take_all and (RANK_OF[card] == ACE or (self.wildcard and card == WILDCARD)):
                pairs.append((card, TAKE_ALL))
        if len(pairs) > MAX_MOVE_ACTIONS:
            raise ValueError(
                f"rules {rules.name!r} allow {len(pairs):,} distinct moves, more than the "
                f"{MAX_MOVE_ACTIONS:,} that action_mode='move' supports; use action_mode='select'"
            )
        self.pairs = pairs
        self.index = {(c, m): i for i, (c, m) in enumerate(pairs)}

    def __len__(self) -> int:
        return len(self.pairs)

    def is_take_all(self, card: int, mask: int, table: int) -> bool:
        """Whether the legal pair ``(card, mask)`` is an Ace's take-all on ``table``.

        Under ``bonus_wildcard`` any capture of the whole table by the Seven of cups goes to
        its take-all id (it may be an Ace by declaration, which the ids do not need to know).
        """
        if not (self.take_all and mask == table and mask):
            return False
        if self.wildcard and card == WILDCARD:
            return True
        return RANK_OF[card] == ACE and not table & RANK_MASK[ACE]

    def ids(self, pairs: list[tuple[int, int]], table: int) -> list[int]:
        """Action ids of legal pairs with ``table`` face up (take-alls go to their compact id)."""
        index = self.index
        try:
            if not self.take_all:
                return [index[p] for p in pairs]
            return [index[(c, TAKE_ALL)] if self.is_take_all(c, m, table) else index[(c, m)] for c, m in pairs]
        except KeyError as exc:
            raise self._missing(*exc.args[0]) from None

    def _missing(self, card: int, mask: int) -> ValueError:
        """The one-line error for a legal pair outside the enumeration (a house capture rule's
        ``possible`` that misses a capture it makes)."""
        plugins = house_rules.capture_rules(self.rules.house_rules)
        blame = (
            f"; house capture rule(s) {', '.join(repr(p.name) for p in plugins)} must list it in possible(card, rules)"
            if plugins
            else ""
        )
        return ValueError(
            f"the legal move {move_of(card, mask)} is not among the 'move' ids of rules {self.rules.name!r}{blame}"
        )

    def pair(self, action: int, table: int | None = None) -> tuple[int, int]:
        """The ``(card, captured_mask)`` of an action id (a take-all id needs the ``table``)."""
        if not 0 <= action < len(self.pairs):
            raise ValueError(f"action {action} is out of range for {len(self.pairs)} move ids")
        card, mask = self.pairs[action]
        if mask == TAKE_ALL:
            if table is None:
                raise ValueError(f"action {action} is 'Ace takes the whole table': decoding it needs the table")
            mask = table
        return card, mask

    def decode(self, action: int, table: int | None = None) -> Move:
        """The :class:`~scopa_env.engine.rules.Move` of an action id (a take-all id needs the ``table``)."""
        return move_of(*self.pair(action, table))

    def encode(self, move: Move, table: int | None = None) -> int:
        """The action id of a move; a move the rules can never make raises ``ValueError``.

        With ``ace_takes_all`` rules pass the ``table``, so that an Ace taking it all
        maps to its compact take-all id.
        """
        if table is not None and self.is_take_all(move.card, move.mask, table):
            return self.index[(move.card, TAKE_ALL)]
        try:
            return self.index[(move.card, move.mask)]
        except KeyError:
            raise ValueError(f"{move} is not a move under rules {self.rules.name!r}") from None


def num_select_actions(rules: Rules) -> int:
    """Size of "select" mode under ``rules``: one id per card id, then CONFIRM (41; 53 for
    the 52-card deck)."""
    return rules.num_card_ids + 1


def confirm_action(rules: Rules) -> int:
    """The CONFIRM id of "select" mode under ``rules`` (40; 52 for the 52-card deck)."""
    return rules.num_card_ids


@functools.lru_cache(maxsize=64)
def move_enumeration(rules: Rules) -> MoveEnumeration:
    """Cached :class:`MoveEnumeration` of a rules object."""
    return MoveEnumeration(rules)


def _possible_captures(card: int, deck: tuple[int, ...], rules: Rules, rank_of: tuple[int, ...] = RANK_OF) -> list[int]:
    """Every set the card could capture in some position under ``rules``.

    Standard: same-rank singles and sets of 2+ summing to the rank. Variants add the
    ``capture_sum`` sets, the house capture rules' possible captures
    (:meth:`~scopa_env.engine.house_rules.HouseRule.possible_captures`), the self mask (Chkobba's
    kept first card, a declaration under ``bazzica_points``, an Ace taking itself) and drop sets larger than ``max_capture_cards``; ``fewest_cards`` only
    removes options in some positions, so it leaves the enumeration as it is.
    """
    rank = rank_of[card]
    others = [c for c in deck if c != card]
    out: list[int] = []
    if rules.capture_equal:
        out += [1 << c for c in others if rank_of[c] == rank]
        out += [m for m in _sets_summing_to(others, rank, rank_of) if m.bit_count() >= 2]
    if rules.capture_sum and rules.capture_sum > rank:
        found = set(out)
        out += [m for m in _sets_summing_to(others, rules.capture_sum - rank, rank_of) if m not in found]
    for plugin in house_rules.capture_rules(rules.house_rules):
        found = set(out)
        out += [m for m in plugin.possible_captures(card, rules) if m not in found]
    if rules.max_capture_cards:
        out = [m for m in out if m.bit_count() <= rules.max_capture_cards]
    if rules.first_card_choice or rules.declarations or rules.claim_out or (rules.ace_takes_itself and rank == ACE):
        out.append(1 << card)
    return out


def _sets_summing_to(cards: list[int], total: int, rank_of: tuple[int, ...] = RANK_OF) -> list[int]:
    """Bitmasks of the sets of 1+ of ``cards`` whose values add up to ``total``."""
    usable = [c for c in cards if rank_of[c] <= total]
    out: list[int] = []

    def walk(i: int, t: int, mask: int) -> None:
        for j in range(i, len(usable)):
            c = usable[j]
            v = t + rank_of[c]
            if v == total:
                out.append(mask | 1 << c)
            elif v < total:
                walk(j + 1, v, mask | 1 << c)

    walk(0, 0, 0)
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


__all__ = [
    "CONFIRM",
    "NUM_SELECT_ACTIONS",
    "TAKE_ALL",
    "MoveEnumeration",
    "confirm_action",
    "move_enumeration",
    "num_select_actions",
    "select_options",
]
