"""Hand scoring: cards, coins, settebello, primiera and scope.

pagat-scopa.txt, "Scoring": 1 point each for most cards, most coins, the settebello
and the best primiera, and 1 per scopa. "In case of a tie for most cards no one
scores this point" (likewise coins and primiera). With three sides "most" means
strictly more than every other side. Only a side holding all four suits can win
the primiera ("a player or team that does not have at least one card in each suit
cannot score for prime"), unless :attr:`Rules.primiera_all_suits` is off (the
booklet's table: a missing suit counts 0).

Variants (see ``docs/rules.md``) map their categories onto the same keys where they
are the same concept: ``coins`` is the majority of :attr:`Rules.bonus_suit` (Chkobba's
dinari, Hurrikan's hearts) and ``settebello`` its Seven. ``prime_rule="sevens"`` (the
booklet's seven-majority point, Chkobba's barmila) scores under the extra key
``seven_majority`` (with raw ``num_sevens`` and ``num_sixes``) and leaves
``primiera`` at 0. Rules with ``double_game_below`` add ``double_game`` (set by the
game at its end). The standard game's dicts have exactly the standard keys.

The scoring extras (issue 4) add one point key each, present only when the rules
score it: ``re_bello``, ``seven_of_cups``, ``palle_del_cane``, ``napola``,
``scaletta_bassa``, ``scaletta_alta`` and ``piva`` (-5). ``primiera_by_counts``
scores ``primiera`` by counts (raw ``num_sevens``, ``num_sixes``). A house scoring extra
(:attr:`Rules.house_rules`, :mod:`scopa_env.engine.house_rules`) adds its points under its own
name, after these. Items that are not
points (a Napoleone or Scala that wins the game, a Libyan reset) come from
:func:`game_events`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from scopa_env.engine import house_rules
from scopa_env.engine.cards import (
    ALL_CARDS_MASK,
    BATONS,
    COINS,
    CUPS,
    NUM_RANKS,
    RANK_MASK,
    RANK_OF,
    SUIT_MASK,
    SUITS,
    card_id,
    mask_of,
)
from scopa_env.engine.rules import STANDARD, WILDCARD, Rules, get_rules

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

    Returns 0 when the pile lacks a suit (it cannot win the primiera), unless
    :attr:`Rules.primiera_all_suits` is off: then a missing suit adds 0 (the booklet's
    "None | 0").
    """
    values = rules.primiera_values
    if pile <= ALL_CARDS_MASK and len(values) == NUM_RANKS:  # the 40-card deck: one look-up per suit
        best = _best_in_row(values)
        rows = pile & _ROW, pile >> NUM_RANKS & _ROW, pile >> 2 * NUM_RANKS & _ROW, pile >> 3 * NUM_RANKS
        if rules.primiera_all_suits and not all(rows):
            return 0
        return best[rows[0]] + best[rows[1]] + best[rows[2]] + best[rows[3]]
    total = 0
    for s in SUITS:
        in_suit = pile & SUIT_MASK[s]
        if not in_suit:
            if rules.primiera_all_suits:
                return 0
            continue
        best = 0
        while in_suit:
            low = in_suit & -in_suit
            v = values[RANK_OF[low.bit_length() - 1] - 1]
            if v > best:
                best = v
            in_suit ^= low
        total += best
    return total


_ROW = (1 << NUM_RANKS) - 1


@functools.cache
def _best_in_row(values: tuple[int, ...]) -> tuple[int, ...]:
    """Per 10-bit suit row of a 40-card pile (bit r: the rank r + 1 card), its best primiera
    value under ``values``, at least 0 (so 0 for an empty row), as the loop below counts it;
    built once per scale."""
    return tuple(max([0, *(values[r] for r in range(NUM_RANKS) if row >> r & 1)]) for row in range(1 << NUM_RANKS))


EXTRA_KEYS = (
    "re_bello",
    "seven_of_cups",
    "palle_del_cane",
    "napola",
    "scaletta_bassa",
    "scaletta_alta",
    "piccola",
    "grande",
    "piva",
)
"""Point keys of the scoring extras, in the order they are reported (each only under its rules)."""

NAPOLA_MIN = 3
"""pagat: "a sequence of at least three consecutive coins/diamonds beginning with the Ace"."""
NAPOLA_CAP = {"pagat_6": 6, "pagat_9": 10}
"""pagat: "Some play that the maximum Napola is A-2-3-4-5-6 for 6 points. Others allow longer sequences,
up to 9 points for a sequence of 9" (10, the whole suit, is the Napoleone that wins the game)."""
SCALETTA_BASSA_CAP = 9
"""pagat: "extended upwards ... as far as the Horse/Queen (for 9 points)"."""
SCALETTA_ALTA_BASE = 5
"""pagat: "a Scaletta alta ... of King-Horse/Queen-Jack ... is worth 5 points", +1 per card down to the Two."""
PIVA_POINTS = -5
"""pagat: "the 2 of clubs scores minus 5 points for the player who takes it"."""
SUIT_SIZE = 10


def run_from_ace(pile: int, suit: int) -> int:
    """Length of the run Ace, 2, 3 ... of ``suit`` in ``pile`` (0 without the Ace)."""
    bits = pile >> (suit * SUIT_SIZE) & ((1 << SUIT_SIZE) - 1)
    return (~bits & (bits + 1)).bit_length() - 1


def run_from_king(pile: int, suit: int) -> int:
    """Length of the run King, Queen, Jack ... of ``suit`` in ``pile`` (0 without the King)."""
    bits = pile >> (suit * SUIT_SIZE) & ((1 << SUIT_SIZE) - 1)
    reversed_bits = int(f"{bits:010b}"[::-1], 2)
    return (~reversed_bits & (reversed_bits + 1)).bit_length() - 1


def napola_points(pile: int, rules: Rules) -> int:
    """Napola points of a pile under ``rules.napola`` (0 when off or without A-2-3)."""
    run = run_from_ace(pile, rules.bonus_suit)
    if not rules.napola or run < NAPOLA_MIN:
        return 0
    if rules.napola == "wikipedia":
        # "3 points for the Napola, 1 point for each other carta di denari".
        return (pile & SUIT_MASK[rules.bonus_suit]).bit_count()
    return min(run, NAPOLA_CAP[rules.napola])


def scaletta_points(pile: int, rules: Rules) -> tuple[int, int]:
    """(scaletta bassa, scaletta alta) points of a pile (pagat "Scopa con le Scalette")."""
    low = run_from_ace(pile, rules.bonus_suit)
    high = run_from_king(pile, rules.bonus_suit)
    bassa = min(low, SCALETTA_BASSA_CAP) if low >= NAPOLA_MIN else 0
    alta = SCALETTA_ALTA_BASE + min(high, SUIT_SIZE - 1) - NAPOLA_MIN if high >= NAPOLA_MIN else 0
    return bassa, alta


def prime_order(rules: Rules) -> list[list[int]]:
    """Ranks grouped by primiera value, best first (:attr:`Rules.primiera_by_counts` compares in this order)."""
    values = sorted({rules.primiera_values[r - 1] for r in rules.ranks}, reverse=True)
    return [[r for r in rules.ranks if rules.primiera_values[r - 1] == v] for v in values]


def game_events(piles: Sequence[int], rules: Rules = STANDARD) -> list[tuple[str, int]]:
    """Hand-end items that are not points, as ``(name, side)``, in the order they apply.

    ``napoleone`` (``napola="pagat_9"``), ``scala`` (``scalette``) and ``all_coins``
    (``all_coins_wins``): the side took every card of the bonus suit and wins the game.
    ``coins_reset`` (Libyan): the side took ``coins_reset`` or more of them and every
    other side's game score goes back to 0.
    """
    out: list[tuple[str, int]] = []
    suit = SUIT_MASK[rules.bonus_suit] & rules.deck_mask
    for side, pile in enumerate(piles):
        took_all = pile & suit == suit
        if took_all and rules.napola == "pagat_9":
            out.append(("napoleone", side))
        elif took_all and rules.scalette:
            out.append(("scala", side))
        elif took_all and rules.all_coins_wins:
            out.append(("all_coins", side))
        if rules.coins_reset and (pile & suit).bit_count() >= rules.coins_reset:
            out.append(("coins_reset", side))
    return out


WINS_GAME = ("napoleone", "scala", "all_coins")
"""Names of :func:`game_events` that win the game outright."""


def score_masks(
    piles: Sequence[int], scope: Sequence[int], rules: Rules = STANDARD, scope_points: Sequence[int] | None = None
) -> list[dict]:
    """:func:`score_hand` over bitmask piles (the engine's fast path).

    ``scope_points``: per side, the points of its scope when :attr:`Rules.scopa_value`
    is not ``"points"`` (the Libyan values depend on each sweep, not only on the count).
    """
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
    elif rules.primiera_by_counts:
        # Most Sevens, then Sixes, then Aces ... (wikipedia); a full tie scores nobody.
        order = prime_order(rules)
        keys = [tuple(sum((p & RANK_MASK[r]).bit_count() for r in group) for group in order) for p in piles]
        prim_w = unique_max(keys)
    else:
        prim_w = unique_max(prim) if max(prim) > 0 else None
    out = []
    for side in range(n):
        row = {
            "cards": int(cards_w == side),
            "coins": int(coins_w == side),
            "settebello": int(bool(piles[side] >> seven & 1)),
            "primiera": int(prim_w == side),
            "scope": scope[side] * rules.scopa_points if scope_points is None else scope_points[side],
            "num_cards": num_cards[side],
            "num_coins": num_coins[side],
            "primiera_value": prim[side],
            "num_scope": scope[side],
        }
        row["total"] = row["cards"] + row["coins"] + row["settebello"] + row["primiera"] + row["scope"]
        extras = _extras(piles[side], rules)
        row.update(extras)
        row["total"] += sum(extras.values())
        if sevens_rule:
            row[SEVEN_MAJORITY] = int(sevens_w == side)
            row["num_sevens"] = sevens[side]
            row["num_sixes"] = sixes[side]
            row["total"] += row[SEVEN_MAJORITY]
        if rules.primiera_by_counts:
            row["num_sevens"] = (piles[side] & RANK_MASK[7]).bit_count()
            row["num_sixes"] = (piles[side] & RANK_MASK[6]).bit_count()
        if rules.double_game_below:
            row["double_game"] = 0
        out.append(row)
    return out


def _extras(pile: int, rules: Rules) -> dict[str, int]:
    """The scoring-extra points of one pile (only the keys the rules score)."""
    out: dict[str, int] = {}
    if rules.re_bello:
        out["re_bello"] = pile >> card_id(rules.bonus_suit, rules.king) & 1
    if rules.seven_of_cups:
        out["seven_of_cups"] = pile >> card_id(CUPS, 7) & 1
    if rules.palle_del_cane:
        out["palle_del_cane"] = int(pile & RANK_MASK[7] == RANK_MASK[7])
    if rules.napola:
        out["napola"] = napola_points(pile, rules)
    if rules.scalette:
        out["scaletta_bassa"], out["scaletta_alta"] = scaletta_points(pile, rules)
    if rules.piccola_grande:
        # wikipedia, Cirulla: "Three points ... la piccola ... all the way up to ... six points";
        # "Five points are awarded for capturing ... la grande" (J-Q-K).
        run = run_from_ace(pile, rules.bonus_suit)
        out["piccola"] = min(run, NAPOLA_CAP["pagat_6"]) if run >= NAPOLA_MIN else 0
        out["grande"] = SCALETTA_ALTA_BASE if run_from_king(pile, rules.bonus_suit) >= NAPOLA_MIN else 0
    if rules.piva:
        out["piva"] = PIVA_POINTS * (pile >> card_id(BATONS, 2) & 1)
    if rules.house_rules:
        for plugin in house_rules.scoring_extras(rules.house_rules):
            out[plugin.name] = plugin.points(pile, rules)
    return out


BAZZICA_MAX = 9
"""pagat: "Bazzica: any three cards which add up to 9 or less"."""
BAZZICA_VALUES = (0, 1, 2, 3, 4, 5, 6, 7, 10, 10, 10)
"""By rank: "counting 2 to 7 as face value, Ace as 1 and pictures as 10"."""
DECLARATION_NAMES = ("bazzica", "bazzicotto")
"""Keys of the declaration points (``HandResult.declared``)."""


class Declaration(NamedTuple):
    """What a three-card hand can declare (:attr:`Rules.bazzica_points`)."""

    name: str
    """``"bazzicotto"`` (three of a kind) or ``"bazzica"`` (three cards totalling 9 or less)."""
    points: int
    """What it scores when it is the best declaration of the deal."""
    strength: tuple[int, int]
    """Lower is better: any bazzicotto beats any bazzica, then lower ranks / lower totals."""
    wild_rank: int = 0
    """Cirulla: the rank the wildcard (Seven of cups) is declared as to make this bonus, which
    it then keeps for capturing until the end of the hand; 0 when the bonus does not need it."""


def declaration(hand: int, rules: Rules) -> Declaration | None:
    """The best declaration a three-card hand (bitmask) qualifies for, or ``None``.

    pagat: "Bazzicotto: three cards of the same rank"; "Bazzica: any three cards which
    add up to 9 or less"; "Any bazzicotto beats any bazzica"; "the one with the lower
    total card value is better"; "the one with the lower cards is better (A+A+A is best,
    K+K+K is worst)". Sbarazzina: "2 points if the three cards are all of different
    ranks, or 3 points if they include a pair. Three of a kind of any rank scores 7".
    """
    if hand.bit_count() != 3:
        return None
    if rules.hand_bonus_points:
        return _hand_bonus(hand, rules)
    if not rules.bazzica_points:
        return None
    ranks = sorted(RANK_OF[c] for c in _cards(hand))
    distinct = len(set(ranks))
    if distinct == 1:
        return Declaration("bazzicotto", rules.bazzica_points[2], (0, ranks[0]))
    total = sum(BAZZICA_VALUES[r] for r in ranks)
    if total <= BAZZICA_MAX:
        return Declaration("bazzica", rules.bazzica_points[0 if distinct == 3 else 1], (1, total))
    return None


HAND_BONUS_BELOW = 10
"""wikipedia, Cirulla: "three cards whose values add up to strictly less than 10"."""
TABLE_BONUS_TOTALS = (30, 15)
"""wikipedia, Cirulla: the initial table adding up to 15 (one scopa) or 30 (two scope)."""
HAND_BONUS_NAMES = ("bonus_3", "bonus_10")
"""Keys of Cirulla's hand bonuses in ``HandResult.declared``."""


def _hand_bonus(hand: int, rules: Rules) -> Declaration | None:
    """Cirulla's hand bonus of a three-card hand: three of a kind, else a total under 10.

    With :attr:`Rules.bonus_wildcard` the Seven of cups may stand for any card when that
    makes a bonus (wikipedia: "but only as long as doing so allows them to score"): as
    another card of the pair's rank (three of a kind), or as a low card (total under 10;
    reported as an Ace, the player chooses the rank: :func:`wild_rank_choices`). The rank
    it stands for is the declaration's ``wild_rank``, which it keeps for capturing until
    the end of the hand.
    """
    ranks = [RANK_OF[c] for c in _cards(hand)]
    wild = rules.bonus_wildcard and hand >> WILDCARD & 1
    others = [RANK_OF[c] for c in _cards(hand) if c != WILDCARD] if wild else ranks
    # The better bonus first ("only the ten-point bonus" for a hand that is both), each
    # without the wildcard first: a Seven that makes the bonus as itself is no wildcard.
    if len(set(ranks)) == 1:
        return Declaration("bonus_10", rules.hand_bonus_points[1], (0, 0))
    if wild and len(set(others)) == 1:
        return Declaration("bonus_10", rules.hand_bonus_points[1], (0, 0), wild_rank=others[0])
    if sum(ranks) < HAND_BONUS_BELOW:
        return Declaration("bonus_3", rules.hand_bonus_points[0], (1, 0))
    if wild and sum(others) + WILD_TOTAL_RANK < HAND_BONUS_BELOW:
        return Declaration("bonus_3", rules.hand_bonus_points[0], (1, 0), wild_rank=WILD_TOTAL_RANK)
    return None


WILD_TOTAL_RANK = 1
"""The lowest rank the wildcard may be declared as for the total under 10 (an Ace): the
rank :func:`declaration` reports; the player chooses among :func:`wild_rank_choices`."""
WILD_RANK_LABEL_SUIT = COINS
"""A declaration naming the wildcard's rank ``r`` is the move ``(WILDCARD, 1 << card)`` with
``card`` the rank-``r`` card of this suit: a label for the rank (see :func:`declaring_pairs`)."""


def wild_rank_choices(hand: int, rules: Rules) -> tuple[int, ...]:
    """Ranks the player may declare the wildcard as, when the hand's bonus is the total under
    10 and needs it; ``()`` when there is nothing to choose.

    wikipedia, Cirulla: the Seven of hearts "counts as a wildcard ... but only as long as
    doing so allows them to score", and "will then keep its declared rank ... for the
    rest of the hand for the purposes of card capturing". Every rank of the deck that
    makes the total strictly less than 10 with the other two cards qualifies.
    """
    found = declaration(hand, rules)
    if found is None or found.name != HAND_BONUS_NAMES[0] or not found.wild_rank:
        return ()
    others = sum(RANK_OF[c] for c in _cards(hand) if c != WILDCARD)
    return tuple(r for r in sorted(rules.ranks) if others + r < HAND_BONUS_BELOW)


def declaring_pairs(hand: int, rules: Rules) -> list[tuple[int, int]]:
    """The moves of a declaration decision, ``(card, captured_mask)``, ascending.

    Pass is ``(card, 0)`` and declare ``(card, 1 << card)``, ``card`` being the hand's
    highest card. When the wildcard's rank is the player's choice
    (:func:`wild_rank_choices`), the moves are pass ``(WILDCARD, 0)`` and, per rank ``r``,
    ``(WILDCARD, 1 << c)`` with ``c`` the rank-``r`` card of coins: "declare the Seven of
    cups as rank r" ("select" mode: name the Seven of cups, then the coin of the rank).
    """
    choices = wild_rank_choices(hand, rules)
    if choices:
        return [(WILDCARD, 0)] + [(WILDCARD, 1 << card_id(WILD_RANK_LABEL_SUIT, r)) for r in choices]
    card = hand.bit_length() - 1
    return [(card, 0), (card, 1 << card)]


def declared_wild_rank(hand: int, captured: int, rules: Rules) -> int:
    """The wildcard's rank set by the declaration move ``captured`` (0: none, the bonus needs no wildcard)."""
    if wild_rank_choices(hand, rules):
        return RANK_OF[captured.bit_length() - 1]
    found = declaration(hand, rules)
    return found.wild_rank if found is not None else 0


def table_bonus_scope(table: int, rules: Rules) -> int:
    """Scope the dealer marks for an initial table totalling 30 (2) or 15 (1), else 0.

    With :attr:`Rules.bonus_wildcard` the Seven of cups on the table may count 1..10.
    """
    if not rules.table_bonus or not table:
        return 0
    if rules.bonus_wildcard and table >> WILDCARD & 1:
        rest = sum(RANK_OF[c] for c in _cards(table) if c != WILDCARD)
        totals = {rest + v for v in range(1, 11)}
    else:
        totals = {sum(RANK_OF[c] for c in _cards(table))}
    for scope, total in zip((2, 1), TABLE_BONUS_TOTALS):
        if total in totals:
            return scope
    return 0


def best_declaration(hands: Sequence[tuple[int, int]], rules: Rules) -> int | None:
    """Index into ``hands`` (``(seat, hand)`` pairs declared in one deal) of the one that scores.

    "only the better one scores"; "If they are equal in value ... then neither player scores".
    """
    strengths = [declaration(h, rules).strength for _, h in hands]
    if not strengths:
        return None
    best = min(strengths)
    return strengths.index(best) if strengths.count(best) == 1 else None


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def score_hand(
    piles: Sequence[Iterable[int] | int],
    scope: Sequence[int],
    rules: Rules | str | None = None,
    scope_points: Sequence[int] | None = None,
) -> list[dict]:
    """Score one hand.

    Args:
        piles: per side, the captured card ids (or a bitmask).
        scope: per side, the number of scope (sweeps) made.
        rules: a :class:`~scopa_env.engine.rules.Rules` object or preset name.
        scope_points: per side, what its scope are worth under the Libyan
            :attr:`~scopa_env.engine.rules.Rules.scopa_value` readings (default: count * scopa_points).

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
    return score_masks(masks, list(scope), get_rules(rules), scope_points)


def secured_points(
    piles: Sequence[int],
    scope_points: Sequence[int],
    rules: Rules,
    remaining: int,
    scope: Sequence[int] | None = None,
) -> list[dict]:
    """Per side, the hand points already certain whatever happens to the ``remaining``
    (not yet captured) cards: the test of a chiamarsi fuori claim.

    pagat: "a player needs 21 cards to claim the point for cards and 6 coins/diamonds to
    claim the point for that suit. The prime can be claimed if the claimer can
    demonstrate that they will win the prime even if the opponent takes all the cards
    that are not yet captured." Generally: a majority is certain when it holds against
    every other side taking all the remaining cards; the settebello and the extras of
    cards already captured are certain; scope made are certain; a Piva Two still
    uncaptured counts against the side (the worst case). Rows have the point keys of
    :func:`score_hand` and ``total``, then the raw counts so far (``scope``: the
    number of scope, for ``num_scope``).
    """
    n = len(piles)
    bonus = SUIT_MASK[rules.bonus_suit]
    seven = card_id(rules.bonus_suit, 7)

    order = prime_order(rules)

    def counts(p: int) -> tuple[int, ...]:
        return tuple(sum((p & RANK_MASK[r]).bit_count() for r in group) for group in order)

    def beats(side: int, key) -> int:
        mine = key(piles[side])
        return int(all(mine > key(piles[o] | remaining) for o in range(n) if o != side))

    out = []
    for side in range(n):
        pile = piles[side]
        row = {
            "cards": beats(side, lambda p: p.bit_count()),
            "coins": beats(side, lambda p: (p & bonus).bit_count()),
            "settebello": pile >> seven & 1,
        }
        if rules.prime_rule == "sevens":
            row[SEVEN_MAJORITY] = beats(
                side, lambda p: ((p & RANK_MASK[7]).bit_count(), (p & RANK_MASK[6]).bit_count())
            )
            row["primiera"] = 0
        elif rules.primiera_by_counts:
            row["primiera"] = beats(side, counts)
        else:
            row["primiera"] = int(primiera_value(pile, rules) > 0 and beats(side, lambda p: primiera_value(p, rules)))
        row["scope"] = scope_points[side]
        extras = _extras(pile, rules)
        if rules.piva and remaining >> card_id(BATONS, 2) & 1:
            extras["piva"] = PIVA_POINTS
        for plugin in house_rules.scoring_extras(rules.house_rules) if rules.house_rules else ():
            # the worse of the side taking none or all of the remaining cards (exact for a rule whose
            # points only grow, or only shrink, as the pile grows)
            extras[plugin.name] = min(extras[plugin.name], plugin.points(pile | remaining, rules))
        row.update(extras)
        row["total"] = sum(row.values())
        # Raw counts as in score_hand (the cards captured so far), for displays and logs.
        row["num_cards"] = pile.bit_count()
        row["num_coins"] = (pile & bonus).bit_count()
        row["primiera_value"] = primiera_value(pile, rules)
        row["num_scope"] = scope[side] if scope is not None else 0
        out.append(row)
    return out
