"""Hand scoring: cards, coins, settebello, primiera and scope.

pagat-scopa.txt, "Scoring": 1 point each for most cards, most coins, the settebello
and the best primiera, and 1 per scopa. "In case of a tie for most cards no one
scores this point" (likewise coins and primiera). With three sides "most" means
strictly more than every other side. Only a side holding all four suits can win
the primiera ("a player or team that does not have at least one card in each suit
cannot score for prime").

Variants (see ``docs/rules.md``) map their categories onto the same keys where they
are the same concept: ``coins`` is the majority of :attr:`Rules.bonus_suit` (Chkobba's
dinari, Hurrikan's hearts) and ``settebello`` its Seven. ``prime_rule="sevens"`` (the
booklet's seven-majority point, Chkobba's barmila) scores under the extra key
``seven_majority`` (with raw ``num_sevens`` and ``num_sixes``) and leaves
``primiera`` at 0. Rules with ``double_game_below`` add ``double_game`` (set by the
game at its end). The standard game's dicts have exactly the standard keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scopa_env.cards import RANK_MASK, RANK_OF, SUIT_MASK, SUITS, card_id, mask_of
from scopa_env.rules import STANDARD, Rules, get_rules

CATEGORIES = ("cards", "coins", "settebello", "primiera", "scope")
"""Scoring categories of the standard game, in the order they are reported."""

SEVEN_MAJORITY = "seven_majority"
"""Extra category of ``prime_rule="sevens"``: most Sevens, then most Sixes, else nobody."""


def unique_max(values: Sequence[float]) -> int | None:
    """Index of the value strictly greater than every other one, or ``None`` on a tie."""
    best = max(values)
    winners = [i for i, v in enumerate(values) if v == best]
    return winners[0] if len(winners) == 1 else None


def primiera_value(pile: int, rules: Rules = STANDARD) -> float:
    """Primiera of a pile (bitmask): the sum of the best card of each suit.

    Returns 0 when the pile lacks a suit (it cannot win the primiera).
    """
    values = rules.primiera_values
    total = 0
    for s in SUITS:
        in_suit = pile & SUIT_MASK[s]
        if not in_suit:
            return 0
        best = 0
        while in_suit:
            low = in_suit & -in_suit
            v = values[RANK_OF[low.bit_length() - 1] - 1]
            if v > best:
                best = v
            in_suit ^= low
        total += best
    return total


def score_masks(piles: Sequence[int], scope: Sequence[int], rules: Rules = STANDARD) -> list[dict]:
    """:func:`score_hand` over bitmask piles (the engine's fast path)."""
    n = len(piles)
    if len(scope) != n:
        raise ValueError(f"piles has {n} sides but scope has {len(scope)}")
    num_cards = [p.bit_count() for p in piles]
    bonus = SUIT_MASK[rules.bonus_suit]
    seven = card_id(rules.bonus_suit, 7)
    num_coins = [(p & bonus).bit_count() for p in piles]
    prim = [primiera_value(p, rules) for p in piles]
    cards_w = unique_max(num_cards)
    coins_w = unique_max(num_coins)
    sevens_rule = rules.prime_rule == "sevens"
    if sevens_rule:
        sevens = [(p & RANK_MASK[7]).bit_count() for p in piles]
        sixes = [(p & RANK_MASK[6]).bit_count() for p in piles]
        # Most Sevens; among the sides tied for most, most Sixes; else nobody.
        sevens_w = unique_max([(a, b) for a, b in zip(sevens, sixes)])
        prim_w = None
    else:
        prim_w = unique_max(prim) if max(prim) > 0 else None
    out = []
    for side in range(n):
        row = {
            "cards": int(cards_w == side),
            "coins": int(coins_w == side),
            "settebello": int(bool(piles[side] >> seven & 1)),
            "primiera": int(prim_w == side),
            "scope": scope[side] * rules.scopa_points,
            "num_cards": num_cards[side],
            "num_coins": num_coins[side],
            "primiera_value": prim[side],
            "num_scope": scope[side],
        }
        row["total"] = row["cards"] + row["coins"] + row["settebello"] + row["primiera"] + row["scope"]
        if sevens_rule:
            row[SEVEN_MAJORITY] = int(sevens_w == side)
            row["num_sevens"] = sevens[side]
            row["num_sixes"] = sixes[side]
            row["total"] += row[SEVEN_MAJORITY]
        if rules.double_game_below:
            row["double_game"] = 0
        out.append(row)
    return out


def score_hand(
    piles: Sequence[Iterable[int] | int], scope: Sequence[int], rules: Rules | str | None = None
) -> list[dict]:
    """Score one hand.

    Args:
        piles: per side, the captured card ids (or a bitmask).
        scope: per side, the number of scope (sweeps) made.
        rules: a :class:`~scopa_env.rules.Rules` object or preset name.

    Returns:
        One dict per side. Points: ``cards``, ``coins``, ``settebello``, ``primiera``,
        ``scope`` and ``total``. Raw counts: ``num_cards``, ``num_coins``,
        ``primiera_value`` (0 without all four suits) and ``num_scope``.
    """
    masks = [p if isinstance(p, int) else mask_of(p) for p in piles]
    seen = 0
    for m in masks:
        if seen & m:
            raise ValueError("a card appears in more than one pile")
        seen |= m
    if any((not isinstance(k, int)) or k < 0 for k in scope):
        raise ValueError(f"scope must be non-negative ints, got {list(scope)!r}")
    return score_masks(masks, list(scope), get_rules(rules))
