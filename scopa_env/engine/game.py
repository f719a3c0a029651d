"""A game of Scopa: dealing, turns, hand ends and the game score.

:class:`Game` holds the full-information state and is mutated in place by
:meth:`Game.play` (fast enough for search; :meth:`Game.clone` copies it).
:class:`PlayerView` is what one seat may see: the information set every agent,
observation and web page is built from.

Seats are numbered in turn order: the player after seat ``i`` is ``i + 1`` (mod n),
so "the player after the dealer" is ``dealer + 1``. Sides: with 2 or 3 players each
seat is its own side; with 4 or 6 in :attr:`~scopa_env.engine.rules.Rules.partnerships` the
two teams are the even and the odd seats (partners opposite, alternating seats), side
``seat % 2``; otherwise each seat is its own side (:meth:`Rules.sides`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from scopa_env.engine.cards import ACE, MAX_CARDS, NUM_CARDS, RANK_MASK, cards_of, format_card, format_cards, mask_of
from scopa_env.engine.rules import (
    DECLARATION_CARDS,
    Move,
    Rules,
    capture_rank,
    check_wild_rank,
    get_rules,
    legal_pairs,
    move_of,
)
from scopa_env.engine.scoring import (
    DECLARATION_NAMES,
    HAND_BONUS_NAMES,
    WINS_GAME,
    best_declaration,
    declaration,
    declared_wild_rank,
    declaring_pairs,
    game_events,
    score_masks,
    secured_points,
    table_bonus_scope,
)

_FULL_DECK = list(range(NUM_CARDS))

KINGS_FOR_REDEAL = 3
"""pagat-scopa.txt: "If the four face up cards include three or four Kings" the cards are dealt again
(the Kings of the deck: rank 10, or 13 in the 52-card deck, :attr:`Rules.king`)."""

CAPPOTTO_LEAD = 7
"""wikipedia-scopa.txt: "if a player is winning 7 points to 0 then the game can be considered over"."""


def sides_for(num_players: int, rules: Rules | str | None = None) -> tuple[int, ...]:
    """Side of each seat under ``rules`` (the standard game by default: each for themselves
    with 2-3 players, even/odd teams with 4 or 6); see :meth:`Rules.sides`."""
    return get_rules(rules).sides(num_players)


class HandResult(NamedTuple):
    """What a finished hand leaves behind (also the env's hand-end info)."""

    hand_score: list[dict]
    """Per side, the dicts of :func:`scopa_env.engine.scoring.score_hand`."""
    piles: list[list[int]]
    """Per side, the sorted captured card ids (leftover table cards included)."""
    scope: list[int]
    """Per side, the number of scope."""
    leftover: list[int]
    """Table cards swept up at the end by the last side to capture."""
    leftover_side: int | None
    """The side that took them (``None`` if nobody captured all hand)."""
    events: tuple[tuple[str, int], ...] = ()
    """Hand-end items that are not points, ``(name, side)``: ``napoleone``, ``scala`` or
    ``all_coins`` (the side wins the game), ``coins_reset`` (the other sides go back to 0);
    see :func:`scopa_env.engine.scoring.game_events`."""
    declared: tuple[dict, ...] = ()
    """Per side, the declaration points this hand scored by name (``bazzica``,
    ``bazzicotto``), under rules with declarations (empty otherwise). They were added
    to the game score when the deal's declarations closed, so they are not in
    ``hand_score``'s ``total``."""
    table_bonus: tuple[int, ...] = ()
    """Per side, the scope the dealer's table bonus marked (Cirulla, :attr:`Rules.table_bonus`;
    already counted in ``scope``); empty under other rules."""
    scope_points: tuple[int, ...] = ()
    """Per side, what its scope were worth (differs from ``scope`` only under the Libyan
    :attr:`~scopa_env.engine.rules.Rules.scopa_value` readings)."""


_SEATINGS: dict[tuple[int, int], tuple] = {}
_SEATINGS_LIMIT = 256


def _seating(rules: Rules, num_players: int) -> tuple:
    """What a game derives from its rules and player count (checked here), computed once per pair:
    the deal schedule, the cards per player of the next deal keyed by the stock size before it
    (read only), whether the deals are uniform, the Ace's take-all without a scopa, each seat's
    side and the number of sides, then the rules' flags a game reads on every deal and play
    (:func:`_rule_flags`). Entries hold their rules last, so a key's id stays theirs."""
    key = (id(rules), num_players)
    entry = _SEATINGS.get(key)
    if entry is None:
        rules.check_players(num_players)
        schedule = rules.schedule(num_players)
        side_of = rules.sides(num_players)
        entry = (
            schedule,
            {num_players * sum(schedule[i:]): k for i, k in enumerate(schedule) if i},
            num_players not in dict(rules.deal_schedules),
            rules.ace_takes_all and not rules.ace_takes_all_scopa,
            side_of,
            max(side_of) + 1,
            _rule_flags(rules),
            rules,
        )
        if len(_SEATINGS) >= _SEATINGS_LIMIT:
            _SEATINGS.clear()
        _SEATINGS[key] = entry
    return entry


def _rule_flags(rules: Rules) -> tuple:
    """The rules' facts a game reads on every deal and play, looked up once (the rules are frozen):
    the deck in id order (read only), whether it is the whole 40-card deck (then a shuffle's
    permutation is the deal itself), whether a hand's deal opens with Cirulla's table bonus or
    declarations (:meth:`Game.open_hand`), whether a dealt table may be thrown in
    (:meth:`Game.needs_redeal`), and :attr:`Rules.declare_at_turn`."""
    deck = list(rules.deck)
    redeal = rules.kings_redeal or rules.aces_redeal or rules.redeal_aces or rules.redeal_same_rank
    return deck, deck == _FULL_DECK, bool(rules.table_bonus or rules.declarations), bool(redeal), rules.declare_at_turn


class CardPlayPosition(NamedTuple):
    """What card plays change in a hand (:meth:`Game.adopt_plays`): by seat the hands and the cards
    played, by side the piles, the scope and their points; the table, the seat to move, the last
    capturer (-1: none yet) and the cards left in the stock."""

    hands: tuple[int, ...]
    played: tuple[int, ...]
    piles: tuple[int, ...]
    scope: tuple[int, ...]
    scope_points: tuple[int, ...]
    table: int
    current: int
    last_capturer: int
    stock_left: int


class Game:
    """Full-information state of a game of Scopa.

    Args:
        num_players: 2, 3, 4 or 6 (see :class:`~scopa_env.engine.rules.Rules.player_counts`).
        rules: a :class:`~scopa_env.engine.rules.Rules` object or preset name.
        seed: an int, ``None`` or an ``np.random.Generator``; all shuffles draw from it.
        dealer: dealer of the first hand (default the last seat, so seat 0 leads).
        auto_next_hand: deal the next hand as soon as one ends (else call :meth:`next_hand`).

    Attributes (read them, change them only through :meth:`play`):
        hands: per seat, bitmask of the cards in hand.
        table: bitmask of the face-up table cards.
        stock: card ids still to be dealt, next card first.
        piles, scope: per side, bitmask of captured cards and number of scope this hand.
        scope_points: per side, what those scope are worth (:attr:`Rules.scopa_value`).
        scores: per side, game points so far.
        current: seat to play; dealer: seat that dealt this hand.
        played: per seat, bitmask of the cards played this hand.
        history: this hand's plays as ``(seat, card, captured_mask)``.
        last_capturer: seat that captured last this hand, or ``None``.
        hand_result: the :class:`HandResult` of the hand ended by the last play, else ``None``.
        deciding: a decision, not a card play, is pending: Chkobba's first card or, under
            :attr:`Rules.bazzica_points` / :attr:`Rules.hand_bonus_points`, whether the player
            to move declares.
        declare_queue: seats still to decide on a declaration after this deal (the first
            is ``current``); pending: ``(seat, hand)`` declared in this deal, not yet scored.
            Under :attr:`Rules.declare_at_turn` (Cirulla) the queue is the seat to move alone, at
            its first turn of the deal, and a declaration scores at once (``pending`` stays empty).
        revealed: per seat, the declared cards still in that hand (every seat sees them).
        declarations: this hand's declarations as dicts (seat, side, name, cards, points).
        wild_rank: Cirulla (:attr:`Rules.bonus_wildcard`): the rank the Seven of cups was declared
            as for a hand bonus this hand, which it captures and is captured as until the hand
            ends (public: the declared hand is shown); 0 = it is a Seven.
        winner: the winning side once the game is over, else ``None``.
    """

    def __init__(
        self,
        num_players: int = 2,
        rules: Rules | str | None = None,
        seed: int | np.random.Generator | None = None,
        dealer: int | None = None,
        auto_next_hand: bool = True,
    ) -> None:
        self._setup(num_players, rules, seed, auto_next_hand)
        self.dealer = self.num_players - 1 if dealer is None else self._seat(dealer, "dealer")
        self._new_hand_state()
        self._deal_shuffled()

    # --- construction ----------------------------------------------------------

    def _setup(self, num_players, rules, seed, auto_next_hand) -> None:
        rules = self.rules = get_rules(rules)
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise ValueError(f"num_players must be an int, got {num_players!r}")
        self.num_players = num_players
        (
            self.schedule,
            self._next_deal,
            self._uniform_deals,
            self._take_all_no_scopa,
            self.side_of,
            self.num_sides,
            flags,
            _,
        ) = _seating(rules, num_players)
        self._deck, self._full_deck, self._opens, self._redeals, self._declare_at_turn = flags
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.auto_next_hand = auto_next_hand
        self.scores = [0] * self.num_sides
        self.hand_number = 0
        self.winner: int | None = None
        self.double_game = False
        self.win_reason: str | None = None
        self.hand_result: HandResult | None = None
        self.redeals = 0
        self.deciding = False

    @classmethod
    def from_deal(
        cls,
        hands: Sequence[Sequence[int]],
        table: Sequence[int],
        stock: Sequence[int],
        dealer: int,
        scores: Sequence[int] | None = None,
        rules: Rules | str | None = None,
        seed: int | np.random.Generator | None = None,
        piles: Sequence[Sequence[int]] | None = None,
        scope: Sequence[int] | None = None,
        current: int | None = None,
        last_capturer: int | None = None,
        auto_next_hand: bool = True,
        deciding: bool = False,
        scope_points: Sequence[int] | None = None,
        revealed: Sequence[int] | None = None,
        declare_queue: Sequence[int] = (),
        pending: Sequence[tuple[int, int]] = (),
        wild_rank: int = 0,
    ) -> Game:
        """A game from an explicit position, for scenarios and puzzles.

        Every card of the deck must appear exactly once across ``hands``, ``table``,
        ``stock`` and ``piles``; duplicates and missing cards raise ``ValueError``.
        ``stock`` is in dealing order (next card first). ``current`` defaults to the
        player after the dealer; later hands are shuffled with ``seed``.
        ``deciding=True`` (rules with ``first_card_choice``) is the first-card decision:
        the player after the dealer holds the one drawn card, the table is empty.
        ``scope_points`` (Libyan :attr:`Rules.scopa_value`) defaults to ``scope`` times
        :attr:`Rules.scopa_points`. Under declaration rules (:attr:`Rules.bazzica_points`,
        :attr:`Rules.hand_bonus_points`), ``declare_queue``
        (seats still to decide after a three-card deal, ``current`` first; under
        :attr:`Rules.declare_at_turn` the seat to move alone, at its first turn of the deal),
        ``pending`` (``(seat, hand_mask)`` declared in this deal) and ``revealed`` (per seat,
        bitmask of shown cards still in hand) set up a declaration moment. ``wild_rank``
        (:attr:`Rules.bonus_wildcard`) is the rank the Seven of cups was declared as this
        hand (0: none).
        """
        game = cls.__new__(cls)
        game._setup(len(hands), rules, seed, auto_next_hand)
        n = game.num_players
        game.dealer = game._seat(dealer, "dealer")
        if scores is not None:
            game._set_scores(scores)
        game._new_hand_state()
        game._place_cards(hands, table, stock, piles)
        game._set_scope(scope, scope_points)
        game.last_capturer = None if last_capturer is None else game._seat(last_capturer, "last_capturer")
        game.current = (game.dealer + 1) % n if current is None else game._seat(current, "current")
        game._cards_in_hands = sum(h.bit_count() for h in game.hands)
        check_wild_rank(wild_rank, game.rules)
        game.wild_rank = int(wild_rank)
        if deciding:
            game._check_deciding()
            return game
        game._set_declarations(revealed, declare_queue, pending)
        game._check_stock()
        game._check_round()
        return game

    @classmethod
    def from_order(
        cls,
        order: Sequence[int],
        num_players: int = 2,
        rules: Rules | str | None = None,
        dealer: int | None = None,
        scores: Sequence[int] | None = None,
        seed: int | np.random.Generator | None = None,
        auto_next_hand: bool = True,
    ) -> Game:
        """A game whose hand is dealt from ``order``, the whole deck top card first, exactly as
        the constructor deals a shuffled deck (for callers that draw the deal themselves: the
        OpenSpiel game's chance nodes).

        The first deal goes one card at a time from the player after the dealer, then the table,
        the rest is the stock; under ``first_card_choice`` the player after the dealer holds
        ``order[0]`` and decides on it (:meth:`play_pair`), the rest dealt from the stock as the
        decision says. Where the rules throw the table in (:meth:`needs_redeal`) the game is
        returned before the next deal: :attr:`redeals` is 1, no seat holds a card and
        :attr:`dealer` is the seat to deal again (the next one under :attr:`Rules.redeal_next_dealer`).
        ``seed`` shuffles the later hands (and Chkobba's redeals). Every card of the deck must
        appear exactly once in ``order`` (``ValueError`` otherwise).
        """
        game = cls.__new__(cls)
        game._setup(num_players, rules, seed, auto_next_hand)
        game.dealer = game.num_players - 1 if dealer is None else game._seat(dealer, "dealer")
        if scores is not None:
            if len(scores) != game.num_sides:
                raise ValueError(f"scores needs {game.num_sides} entries (one per side), got {len(scores)}")
            game.scores = [int(s) for s in scores]
        order = [int(c) for c in order]
        _check_deck(order, game.rules)
        game._new_hand_state()
        game._deal_order(order)
        return game

    # --- from_deal's parts: each sets or checks one part of the given position -----

    def _set_scores(self, scores: Sequence[int]) -> None:
        """Set the game score of each side (:meth:`from_deal`'s ``scores``)."""
        if len(scores) != self.num_sides:
            raise ValueError(f"scores needs {self.num_sides} entries (one per side), got {len(scores)}")
        self.scores = [int(s) for s in scores]

    def _place_cards(
        self,
        hands: Sequence[Sequence[int]],
        table: Sequence[int],
        stock: Sequence[int],
        piles: Sequence[Sequence[int]] | None,
    ) -> None:
        """Put the cards of :meth:`from_deal` in the hands, on the table, in the stock (in dealing
        order) and, when ``piles`` is given, in the sides' piles, after checking that together they
        hold every card of the deck exactly once."""
        everything: list[int] = [c for h in hands for c in h] + list(table) + list(stock)
        if piles is not None:
            if len(piles) != self.num_sides:
                raise ValueError(f"piles needs {self.num_sides} entries (one per side), got {len(piles)}")
            everything += [c for p in piles for c in p]
        _check_deck(everything, self.rules)
        self.hands = [mask_of(h) for h in hands]
        self.table = mask_of(table)
        self.stock = [int(c) for c in stock]
        if piles is not None:
            self.piles = [mask_of(p) for p in piles]

    def _set_scope(self, scope: Sequence[int] | None, scope_points: Sequence[int] | None) -> None:
        """Set each side's scope this hand and what they are worth: ``scope_points`` when given,
        else ``scope`` times :attr:`Rules.scopa_points` (:meth:`from_deal`)."""
        if scope is not None:
            if len(scope) != self.num_sides or any(int(k) < 0 for k in scope):
                raise ValueError(f"scope needs {self.num_sides} non-negative counts, got {list(scope)!r}")
            self.scope = [int(k) for k in scope]
            self.scope_points = [k * self.rules.scopa_points for k in self.scope]
        if scope_points is not None:
            if len(scope_points) != self.num_sides:
                raise ValueError(f"scope_points needs {self.num_sides} entries (one per side), got {len(scope_points)}")
            self.scope_points = [int(k) for k in scope_points]

    def _set_declarations(
        self, revealed: Sequence[int] | None, declare_queue: Sequence[int], pending: Sequence[tuple[int, int]]
    ) -> None:
        """Set the shown cards (``revealed``) and a declaration moment (``declare_queue``,
        ``pending``) of :meth:`from_deal`, checked against the hands."""
        n = self.num_players
        if revealed is not None:
            if len(revealed) != n or any(int(r) & ~self.hands[s] for s, r in enumerate(revealed)):
                raise ValueError(f"revealed needs {n} bitmasks, each within that seat's hand")
            self.revealed = [int(r) for r in revealed]
        if declare_queue or pending:
            self._check_declaring(list(declare_queue), list(pending))

    def _check_stock(self) -> None:
        """Check that :meth:`from_deal`'s stock deals out in whole deals: rounds of ``hand_size``
        cards per player, or one of the sizes the deal schedule leaves."""
        n = self.num_players
        per_deal = n * self.rules.hand_size
        if self._uniform_deals:
            if len(self.stock) % per_deal:
                raise ValueError(f"stock has {len(self.stock)} cards; it must deal out in rounds of {per_deal}")
        elif self.stock and len(self.stock) not in self._next_deal:
            raise ValueError(
                f"stock has {len(self.stock)} cards; with {n} players and deals of "
                f"{self.schedule} cards each it must hold one of {sorted(self._next_deal)}"
            )

    def _check_round(self) -> None:
        """Check that some player holds a card and that :meth:`from_deal`'s hand sizes fit a round
        in progress with :attr:`current` to play."""
        n = self.num_players
        if self._cards_in_hands == 0:
            raise ValueError("no player holds a card: deal a hand first")
        # The round runs dealer+1 .. dealer; seats already past hold one card fewer.
        order = [(self.dealer + 1 + i) % n for i in range(n)]
        k = self.hands[self.current].bit_count()
        # Declaring right after the deal (bazzica): nobody has played yet.
        pos = 0 if self.declare_queue and not self.rules.declare_at_turn else order.index(self.current)
        expected = [k - 1 if i < pos else k for i in range(n)]
        actual = [self.hands[s].bit_count() for s in order]
        if k == 0 or actual != expected:
            raise ValueError(
                f"hand sizes {[self.hands[s].bit_count() for s in range(n)]} do not fit a round "
                f"with dealer {self.dealer} and seat {self.current} to play"
            )

    def _check_declaring(self, queue: list[int], pending: list[tuple[int, int]]) -> None:
        rules = self.rules
        if not rules.declarations:
            raise ValueError(f"rules {rules.name!r} have no declarations (bazzica_points, hand_bonus_points)")
        queue = [self._seat(s, "declare_queue seat") for s in queue]
        if not queue or queue[0] != self.current:
            raise ValueError(f"declare_queue {queue} must be non-empty and start with current seat {self.current}")
        for s in queue:
            if declaration(self.hands[s], rules) is None:
                raise ValueError(f"seat {s} in declare_queue holds {format_cards(self.hands[s])}, nothing to declare")
        for s, hand in pending:
            if hand != self.hands[s] or declaration(hand, rules) is None:
                raise ValueError(f"pending declaration of seat {s} must be its whole (declarable) hand")
        if rules.declare_at_turn and (len(queue) != 1 or pending):
            raise ValueError(
                f"rules {rules.name!r} declare at the player's first turn of the deal: declare_queue must be "
                f"the current seat alone and pending empty, got {queue} and {list(pending)}"
            )
        self.declare_queue = queue
        self.pending = [(int(s), int(h)) for s, h in pending]
        self.deciding = True

    def _check_deciding(self) -> None:
        rules = self.rules
        if not rules.first_card_choice:
            raise ValueError(f"rules {rules.name!r} have no first-card decision (first_card_choice is False)")
        cutter = (self.dealer + 1) % self.num_players
        counts = [h.bit_count() for h in self.hands]
        if self.current != cutter or counts[cutter] != 1 or sum(counts) != 1 or self.table or any(self.piles):
            raise ValueError(
                f"a first-card decision needs the player after the dealer (seat {cutter}) to move holding exactly "
                f"one card, every other hand, the table and the piles empty; got hand sizes {counts}"
            )
        self.deciding = True

    def _seat(self, seat, what: str) -> int:
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.num_players:
            raise ValueError(f"{what} must be a seat in 0..{self.num_players - 1}, got {seat!r}")
        return int(seat)

    def _new_hand_state(self) -> None:
        n, s = self.num_players, self.num_sides
        self.hands = [0] * n
        self.table = 0
        self.stock: list[int] = []
        self.piles = [0] * s
        self.scope = [0] * s
        self.scope_points = [0] * s
        self.played = [0] * n
        self.history: list[tuple[int, int, int]] = []
        self.last_capturer: int | None = None
        self.current = (self.dealer + 1) % n
        self._cards_in_hands = 0
        self._legal: list[tuple[int, int]] | None = None
        self.hand_over = False
        self.deciding = False
        self.declare_queue: list[int] = []
        self.pending: list[tuple[int, int]] = []
        self.revealed = [0] * n
        self.declarations: list[dict] = []
        self.table_bonus = [0] * s
        self.wild_rank = 0

    def _deal_shuffled(self) -> None:
        """Shuffle and deal a hand; deal again (same dealer) when the table calls for it.

        With ``first_card_choice`` only the drawn card is dealt, to the player after the
        dealer; :meth:`_decide` completes the deal.
        """
        deck = self._deck  # read only
        full = self._full_deck  # then card ids are the permutation itself
        while True:
            perm = self.rng.permutation(len(deck)).tolist()
            if self._deal_order(perm if full else [deck[i] for i in perm]):
                return

    def _deal_order(self, order: list[int]) -> bool:
        """Deal the hand from ``order`` (the deck, top card first) as :meth:`_deal_shuffled` does:
        the first deal one card at a time from the player after the dealer, then the table, the
        rest is the stock. ``False`` where the table is thrown in (:meth:`needs_redeal`): the redeal
        is counted, the hands are empty and, under :attr:`Rules.redeal_next_dealer`, the next
        dealer deals. With ``first_card_choice`` only ``order[0]`` is dealt, to the player after
        the dealer, the rest waits in the stock for :meth:`_decide`."""
        rules = self.rules
        if rules.first_card_choice:
            self.hands[self.current] = 1 << order[0]
            self._cards_in_hands = 1
            self.stock = order[1:]
            self.deciding = True
            return True
        first = self.num_players * self.schedule[0]
        self._deal_round(order[:first])
        end = first + rules.table_size
        table = 0
        for card in order[first:end]:  # deck cards: mask_of's checks are not needed
            table |= 1 << card
        self.table = table
        self.stock = order[end:]
        if self._redeals and self.needs_redeal(table):
            self.redeals += 1
            self.hands = [0] * self.num_players
            self._cards_in_hands = 0
            if rules.redeal_next_dealer:  # Cirulla: "dealt again by the next dealer"
                self.dealer = (self.dealer + 1) % self.num_players
                self.current = (self.dealer + 1) % self.num_players
            return False
        self.open_hand()
        return True

    def needs_redeal(self, table: int) -> bool:
        """Whether an initial table layout (bitmask) is thrown in under these rules."""
        rules = self.rules
        if rules.kings_redeal and (table & RANK_MASK[rules.king]).bit_count() >= KINGS_FOR_REDEAL:
            return True
        if rules.aces_redeal and table & RANK_MASK[ACE]:
            return True
        if rules.redeal_aces and (table & RANK_MASK[ACE]).bit_count() >= rules.redeal_aces:
            return True
        if rules.redeal_same_rank:
            return any((table & RANK_MASK[r]).bit_count() >= rules.redeal_same_rank for r in rules.ranks)
        return False

    def _decide(self, card: int, keep: bool) -> None:
        """Chkobba's first card: keep it or put it on the table, then complete the deal."""
        rules = self.rules
        n = self.num_players
        cutter = self.current
        per_player = self.schedule[0]
        stock = self.stock
        pos = 0
        for i in range(n):
            seat = (self.dealer + 1 + i) % n
            k = per_player - 1 if keep and seat == cutter else per_player
            self.hands[seat] |= mask_of(stock[pos : pos + k])
            pos += k
        if not keep:
            self.hands[cutter] ^= 1 << card
            self.table = 1 << card
        k = rules.table_size - (0 if keep else 1)
        self.table |= mask_of(stock[pos : pos + k])
        pos += k
        self.stock = stock[pos:]
        self._cards_in_hands = n * per_player
        self.deciding = False
        if self.needs_redeal(self.table):
            # Thrown in: shuffle again and draw a new first card; the decision is taken again.
            self.redeals += 1
            self.hands = [0] * n
            self.table = 0
            self._deal_shuffled()

    def open_hand(self) -> None:
        """What follows a hand's deal (:meth:`_deal_shuffled`): Cirulla's table bonus, then the
        queue of the seats whose hands can declare. For callers that deal a hand themselves
        (the OpenSpiel bridge, through :meth:`from_deal`); a no-op under rules without them."""
        if self._opens:  # Cirulla's table bonus or declarations: else nothing opens a hand
            self._table_bonus()
            self._open_declarations()

    def _table_bonus(self) -> None:
        """Cirulla: an initial table of 15 (30) goes to the dealer with one (two) scope."""
        scope = table_bonus_scope(self.table, self.rules)
        if scope:
            side = self.side_of[self.dealer]
            self.piles[side] |= self.table
            self.table = 0
            self.scope[side] += scope
            self.scope_points[side] += scope * self.rules.scopa_points
            self.table_bonus[side] += scope
            self.last_capturer = self.dealer

    def _open_declarations(self) -> None:
        """After a three-card deal, queue the seats whose hands can declare (in turn order);
        under :attr:`Rules.declare_at_turn` only the seat to move, whose first turn it is
        (the others decide at theirs: :meth:`_offer_declaration`)."""
        rules = self.rules
        if not rules.declarations:
            return
        self.pending = []
        if rules.declare_at_turn:
            self._offer_declaration()
            return
        n = self.num_players
        order = [(self.dealer + 1 + i) % n for i in range(n)]
        queue = [s for s in order if declaration(self.hands[s], rules) is not None]
        self.declare_queue = queue
        if queue:
            self.deciding = True
            self.current = queue[0]

    def _offer_declaration(self) -> None:
        """:attr:`Rules.declare_at_turn`: the seat to move decides on a declaration when this is
        its first turn of the deal (it holds the deal's three cards) and its hand qualifies.

        wikipedia, Cirulla: "Such bonuses must be declared before the player holding them has
        played their first card": the decision comes as late as the text allows, after the
        earlier players' cards of the round (declaring sooner only shows the hand sooner)."""
        seat = self.current
        hand = self.hands[seat]
        if hand.bit_count() == DECLARATION_CARDS and declaration(hand, self.rules) is not None:
            self.declare_queue = [seat]
            self.deciding = True

    def _declare(self, captured: int) -> None:
        """The player to move declares (``captured`` not 0, showing the hand) or passes
        (:func:`~scopa_env.engine.scoring.declaring_pairs`)."""
        seat = self.declare_queue.pop(0)
        if captured:
            self.pending.append((seat, self.hands[seat]))
            self.revealed[seat] = self.hands[seat]
            # wikipedia, Cirulla: the wildcard "will then keep its declared rank ... for the
            # rest of the hand for the purposes of card capturing".
            wild = declared_wild_rank(self.hands[seat], captured, self.rules)
            if wild:
                self.wild_rank = wild
        if self.rules.declare_at_turn:
            # Cirulla: each bonus scores at once; the same seat then plays its first card.
            self._score_declarations(None)
            self.deciding = False
            return
        if self.declare_queue:
            self.current = self.declare_queue[0]
            return
        # Everyone has decided: the declarations score at once (bazzica: only the best one).
        self._score_declarations(best_declaration(self.pending, self.rules) if self.rules.bazzica_points else None)
        self.deciding = False
        self.current = (self.dealer + 1) % self.num_players

    def _score_declarations(self, best: int | None) -> None:
        """Score :attr:`pending`: the ``best``-th one alone (bazzica), or every one (``None``,
        Cirulla's hand bonuses); then it is empty."""
        for i, (s, hand) in enumerate(self.pending):
            found = declaration(hand, self.rules)
            points = found.points if i == best or self.rules.hand_bonus_points else 0
            self.scores[self.side_of[s]] += points
            self.declarations.append(
                {"seat": s, "side": self.side_of[s], "name": found.name, "cards": hand, "points": points}
            )
        self.pending = []

    def _deal_round(self, cards: list[int]) -> None:
        """Deal ``cards`` one at a time starting with the player after the dealer."""
        n = self.num_players
        hands = self.hands
        first = self.dealer + 1
        for i, card in enumerate(cards):
            hands[(first + i) % n] |= 1 << card
        self._cards_in_hands += len(cards)

    # --- queries ---------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once some side has won the game."""
        return self.winner is not None

    def legal_pairs(self) -> list[tuple[int, int]]:
        """Legal moves of the player to move as ``(card, captured_mask)`` (cached)."""
        legal = self._legal
        if legal is not None:
            return legal
        if self.hand_over or self.winner is not None:
            legal = []
        elif self.declare_queue:
            legal = declaring_pairs(self.hands[self.current], self.rules)
        elif self.deciding:
            card = self.hands[self.current].bit_length() - 1
            legal = [(card, 0), (card, 1 << card)]
        else:
            legal = legal_pairs(self.hands[self.current], self.table, self.rules, self.wild_rank)
        self._legal = legal
        return legal

    @property
    def card_turn(self) -> bool:
        """True on a card-play turn: every card of the mover's hand then has a legal move
        (:func:`~scopa_env.engine.rules.legal_pairs` gives each card a capture or its play to the
        table). A declaration or Chkobba's first-card decision offers one card only."""
        return not (self.hand_over or self.winner is not None or self.declare_queue or self.deciding)

    def card_outcomes(self, card: int) -> list[int]:
        """The captured masks of ``card``'s legal actions, in :meth:`action_pairs` order
        (the claim last): on a card-play turn computed for that card alone, which is
        cheaper than the whole hand's :meth:`legal_pairs`."""
        legal = self._legal
        if legal is None and self.card_turn:
            if not self.hands[self.current] >> card & 1:
                return []
            # One card's options depend on the table, the wildcard's rank and that card only.
            out = [m for _, m in legal_pairs(1 << card, self.table, self.rules, self.wild_rank)]
        else:
            out = [m for c, m in self.legal_pairs() if c == card]
        if self.rules.claim_out:
            claim = self.claim_pair()
            if claim is not None and claim[0] == card:
                out.append(claim[1])
        return out

    def legal_moves(self) -> list[Move]:
        """Legal :class:`~scopa_env.engine.rules.Move` objects of the player to move."""
        return [move_of(c, m) for c, m in self.legal_pairs()]

    def claim_pair(self) -> tuple[int, int] | None:
        """Chiamarsi fuori (:attr:`Rules.claim_out`): the claim move ``(card, 1 << card)`` of the
        hand's highest card while the player to move may claim (any card-play turn), else ``None``.

        It is kept out of :meth:`legal_pairs` (which card-playing agents and search use) and
        is part of :meth:`action_pairs` (the env's actions); :meth:`play` accepts it.
        """
        if not self.rules.claim_out or self.deciding or self.hand_over or self.winner is not None:
            return None
        hand = self.hands[self.current]
        if not hand:
            return None
        card = hand.bit_length() - 1
        return (card, 1 << card)

    def action_pairs(self) -> list[tuple[int, int]]:
        """Every legal action of the player to move: :meth:`legal_pairs` plus the claim, if any."""
        claim = self.claim_pair()
        return self.legal_pairs() if claim is None else self.legal_pairs() + [claim]

    @property
    def stock_count(self) -> int:
        return len(self.stock)

    def view(self, seat: int | None = None) -> PlayerView:
        """What ``seat`` (default: the player to move) may see."""
        seat = self.current if seat is None else self._seat(seat, "seat")
        return PlayerView(
            rules=self.rules,
            num_players=self.num_players,
            seat=seat,
            side_of=self.side_of,
            dealer=self.dealer,
            current=self.current,
            hand=self.hands[seat],
            table=self.table,
            piles=tuple(self.piles),
            scope=tuple(self.scope),
            scope_points=tuple(self.scope_points),
            scores=tuple(self.scores),
            stock_count=len(self.stock),
            hand_counts=tuple(h.bit_count() for h in self.hands),
            played=tuple(self.played),
            history=tuple(self.history),
            last_capturer=self.last_capturer,
            hand_number=self.hand_number,
            deciding=self.deciding,
            revealed=tuple(self.revealed),
            declare_queue=tuple(self.declare_queue),
            pending=tuple(self.pending),
            wild_rank=self.wild_rank,
        )

    def clone(self) -> Game:
        """An independent copy (the generator is copied too, so futures match)."""
        g = Game.__new__(Game)
        g.__dict__.update(self.__dict__)
        for name in ("hands", "stock", "piles", "scope", "scope_points", "played", "history", "scores"):
            setattr(g, name, list(getattr(self, name)))
        for name in ("declare_queue", "pending", "revealed", "declarations", "table_bonus"):
            setattr(g, name, list(getattr(self, name)))
        g.rng = np.random.Generator(type(self.rng.bit_generator)())
        g.rng.bit_generator.state = self.rng.bit_generator.state
        return g

    # --- transitions -------------------------------------------------------------

    def play(self, move: Move | tuple[int, Sequence[int]]) -> None:
        """Play a move for the player to move; an illegal move raises ``ValueError``.

        Accepts a :class:`~scopa_env.engine.rules.Move` or a ``(card, captured_cards)`` pair.
        """
        if not isinstance(move, Move):
            try:
                card, captured = move
                move = Move(card, captured)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"not a move: {move!r} ({exc})") from None
        if (move.card, move.mask) not in self.legal_pairs() and (move.card, move.mask) != self.claim_pair():
            raise ValueError(self.illegal_message(move))
        self.play_pair(move.card, move.mask)

    def illegal_message(self, move: Move) -> str:
        """A readable explanation of why ``move`` cannot be played now."""
        if self.winner is not None:
            return "the game is over"
        if self.hand_over:
            return "the hand is over; call next_hand()"
        seat = self.current
        deck = self.rules.ranks_per_suit
        if not self.hands[seat] >> move.card & 1:
            why = (
                f"{format_card(move.card, deck)} is not in player_{seat}'s hand "
                f"({format_cards(self.hands[seat], deck)})"
            )
        else:
            why = (
                f"{move.text(deck)} is not a legal move for player_{seat} "
                f"(table: {format_cards(self.table, deck) or 'empty'})"
            )
        legal = "; ".join(m.text(deck) for m in self.legal_moves())
        return f"{why}; legal moves: {legal}"

    def adopt_plays(self, position: CardPlayPosition, plays: list[tuple[int, int, int]]) -> None:
        """Take on the position that ``plays`` (``(seat, card, captured)``, legal card plays in order)
        reached from this one, played elsewhere: by the compiled core's row behind the AEC env
        (:class:`scopa_env.aec.turns.RowMoveTurns`), whose rules have no decisions, in the same deal
        order (the stock's cards dealt from its front, as :meth:`play_pair` deals them). The plays join
        :attr:`history`; where the hand's last card is down the hand ends here (the sweep, the
        scoring, the next hand's deal), as :meth:`play_pair` would have ended it."""
        self.hands = list(position.hands)
        self.played = list(position.played)
        self.piles = list(position.piles)
        self.scope = list(position.scope)
        self.scope_points = list(position.scope_points)
        self.table = position.table
        self.current = position.current
        self.last_capturer = None if position.last_capturer < 0 else position.last_capturer
        del self.stock[: len(self.stock) - position.stock_left]
        self._cards_in_hands = sum(h.bit_count() for h in self.hands)
        self.history += plays
        self._legal = None
        self.hand_result = None
        if not self._cards_in_hands and not self.stock:
            self._end_hand()

    def play_pair(self, card: int, captured: int) -> None:
        """Apply a legal move given as ``(card, captured_mask)`` without checking it."""
        seat = self.current
        bit = 1 << card
        if self.deciding:
            self._legal = None
            self.hand_result = None
            if self.declare_queue:
                self._declare(captured)
            else:
                self._decide(card, keep=captured == bit)
            return
        if captured == bit and self.rules.claim_out:
            self._claim(seat)
            return
        self.hands[seat] ^= bit
        revealed = self.revealed
        if revealed[seat]:  # shown cards (declarations) only
            revealed[seat] &= ~bit
        self.played[seat] |= bit
        left = self._cards_in_hands = self._cards_in_hands - 1
        self.hand_result = None
        if captured == bit:  # an Ace takes itself from the empty table: no scopa
            self.piles[self.side_of[seat]] |= bit
            self.last_capturer = seat
        elif captured:
            table = self.table = self.table ^ captured
            side = self.side_of[seat]
            self.piles[side] |= captured | bit
            self.last_capturer = seat
            # A scopa, but on the hand's last play only under last_play_scopa.
            if not table and (left or self.stock or self.rules.last_play_scopa):
                # Scopa d'Assi: an Ace clearing a table that held no Ace took it all, no scopa.
                if not (self._take_all_no_scopa and self._takes_all(card, captured)):
                    self.scope[side] += 1
                    self.scope_points[side] += self._scopa_worth(card, captured)
        else:
            self.table |= bit
        self.history.append((seat, card, captured))
        self._legal = None
        self.current = (seat + 1) % self.num_players
        if left:
            if self._declare_at_turn:
                self._offer_declaration()
        elif self.stock:
            stock = self.stock
            per_deal = self.num_players * self._next_deal.get(len(stock), self.rules.hand_size)
            self._deal_round(stock[:per_deal])
            del stock[:per_deal]
            if self._opens:  # declarations (else nothing opens a deal)
                self._open_declarations()
        else:
            self._end_hand()

    def _declared_by_side(self) -> tuple[dict, ...]:
        if not self.rules.declarations:
            return ()
        names = HAND_BONUS_NAMES if self.rules.hand_bonus_points else DECLARATION_NAMES
        out = [dict.fromkeys(names, 0) for _ in range(self.num_sides)]
        for d in self.declarations:
            out[d["side"]][d["name"]] += d["points"]
        return tuple(out)

    def _claim(self, seat: int) -> None:
        """Chiamarsi fuori: the game ends; the claimer's side wins if its certain points reach the target."""
        rules = self.rules
        side = self.side_of[seat]
        remaining = rules.deck_mask
        for p in self.piles:
            remaining &= ~p
        rows = secured_points(self.piles, self.scope_points, rules, remaining, self.scope)
        for s, row in enumerate(rows):
            self.scores[s] += row["total"]
        sound = self.scores[side] >= rules.target
        self.hand_result = HandResult(
            hand_score=rows,
            piles=[cards_of(p) for p in self.piles],
            scope=list(self.scope),
            leftover=[],
            leftover_side=None,
            events=(("claim" if sound else "false_claim", side),),
            declared=self._declared_by_side(),
            table_bonus=tuple(self.table_bonus) if rules.table_bonus else (),
            scope_points=tuple(self.scope_points),
        )
        self.hand_number += 1
        self.hand_over = True
        self.winner = side if sound else 1 - side  # two sides (Rules.claim_out)
        self.win_reason = "claim" if sound else "false_claim"

    def _takes_all(self, card: int, captured: int) -> bool:
        """Whether a capture is an Ace's take-all: an Ace taking a table that held no Ace."""
        wild = self.wild_rank
        return capture_rank(card, wild) == ACE and not any(capture_rank(c, wild) == ACE for c in cards_of(captured))

    def _scopa_worth(self, card: int, captured: int) -> int:
        """Points of one scopa: ``scopa_points``, or a Libyan :attr:`Rules.scopa_value`."""
        how = self.rules.scopa_value
        if how == "card":  # wikipedia: "if the 'winning card' is worth 7, the scopa is worth 7"
            return capture_rank(card, self.wild_rank)
        if how == "cards":  # "if a scopa numbers 5 cards ... 5": the cards taken and the one played
            return captured.bit_count() + 1
        return self.rules.scopa_points

    def _end_hand(self) -> None:
        leftover = self.table
        leftover_side = None
        if self.last_capturer is not None:
            leftover_side = self.side_of[self.last_capturer]
            self.piles[leftover_side] |= leftover
            self.table = 0
        rules = self.rules
        libyan = rules.scopa_value != "points"
        score = score_masks(self.piles, self.scope, rules, self.scope_points if libyan else None)
        for side, row in enumerate(score):
            self.scores[side] += row["total"]
        events = game_events(self.piles, rules) if rules.needs_events else []
        for name, side in events:
            if name == "coins_reset":
                self.scores = [v if s == side else 0 for s, v in enumerate(self.scores)]
        self.hand_result = HandResult(
            hand_score=score,
            piles=[cards_of(p) for p in self.piles],
            scope=list(self.scope),
            leftover=cards_of(leftover),
            leftover_side=leftover_side,
            events=tuple(events),
            declared=self._declared_by_side(),
            table_bonus=tuple(self.table_bonus) if self.rules.table_bonus else (),
            scope_points=tuple(self.scope_points),
        )
        self.hand_number += 1
        self.hand_over = True
        wins = [(name, side) for name, side in events if name in WINS_GAME]
        if wins:
            self.win_reason, self.winner = wins[0]
        else:
            self.winner = self._game_winner()
            self.win_reason = None if self.winner is None else "target"
        below = self.rules.double_game_below
        if below:
            self.double_game = self.winner is not None and all(
                v < below for side, v in enumerate(self.scores) if side != self.winner
            )
            for side, row in enumerate(score):
                row["double_game"] = int(self.double_game and side == self.winner)
        if self.winner is None and self.auto_next_hand:
            self.next_hand()

    def _game_winner(self) -> int | None:
        top = max(self.scores)
        leaders = [s for s, v in enumerate(self.scores) if v == top]
        if top >= self.rules.target and len(leaders) == 1:
            return leaders[0]
        if self.rules.cappotto and top >= CAPPOTTO_LEAD and len(leaders) == 1:
            if all(v == 0 for s, v in enumerate(self.scores) if s != leaders[0]):
                return leaders[0]
        return None

    def next_hand(self) -> None:
        """Deal the next hand: the deal passes to the next player."""
        if self.winner is not None:
            raise ValueError("the game is over")
        if not self.hand_over:
            raise ValueError("the current hand is still being played")
        self.dealer = (self.dealer + 1) % self.num_players
        self._new_hand_state()
        self._deal_shuffled()

    def __repr__(self) -> str:
        deck = self.rules.ranks_per_suit
        hands = " | ".join(format_cards(h, deck) for h in self.hands)
        return (
            f"Game(players={self.num_players}, rules={self.rules.name!r}, dealer={self.dealer}, "
            f"current={self.current}, hands=[{hands}], table=[{format_cards(self.table, deck)}], "
            f"stock={len(self.stock)}, scores={self.scores})"
        )


def _check_deck(cards: list[int], rules: Rules) -> None:
    seen: set[int] = set()
    dup = sorted({int(c) for c in cards if (c in seen or seen.add(c))})
    bad = sorted(c for c in seen if not (isinstance(c, (int, np.integer)) and 0 <= c < MAX_CARDS))
    if bad:
        raise ValueError(f"not card ids: {bad}")
    if dup:
        raise ValueError(f"cards dealt more than once: {format_cards(dup, rules.ranks_per_suit)}")
    missing = sorted(set(rules.deck) - seen)
    extra = sorted(seen - set(rules.deck))
    if extra:
        raise ValueError(f"cards not in the {rules.name!r} deck: {format_cards(extra, rules.ranks_per_suit)}")
    if missing:
        raise ValueError(f"cards missing from the deal: {format_cards(missing, rules.ranks_per_suit)}")


@dataclass(frozen=True)
class PlayerView:
    """One seat's information set: everything that seat may see, nothing more.

    Other hands and the stock order are hidden; their union is :attr:`unseen`.
    Card sets are bitmasks (see :func:`scopa_env.engine.cards.cards_of`).
    """

    rules: Rules
    num_players: int
    seat: int
    side_of: tuple[int, ...]
    dealer: int
    current: int
    hand: int
    table: int
    piles: tuple[int, ...]
    scope: tuple[int, ...]
    scope_points: tuple[int, ...]
    """Per side, what the scope are worth (differs from ``scope`` only under Libyan rules)."""
    scores: tuple[int, ...]
    stock_count: int
    hand_counts: tuple[int, ...]
    played: tuple[int, ...]
    history: tuple[tuple[int, int, int], ...]
    last_capturer: int | None
    hand_number: int
    deciding: bool = False
    """A decision is pending: Chkobba's first card (:attr:`Rules.first_card_choice`) or,
    when :attr:`declare_queue` is not empty, a declaration (:attr:`Rules.bazzica_points`)."""
    revealed: tuple[int, ...] = ()
    """Per seat, declared cards still in that hand (shown to everyone)."""
    declare_queue: tuple[int, ...] = ()
    """Seats still to decide on a declaration after this deal (the first is ``current``); under
    :attr:`Rules.declare_at_turn` (Cirulla) the seat to move alone, at its first turn of the deal."""
    pending: tuple[tuple[int, int], ...] = ()
    """``(seat, hand)`` declared (and shown) in this deal, scored when the queue empties."""
    wild_rank: int = 0
    """Cirulla: the rank the Seven of cups was declared as this hand (0: a Seven); see
    :attr:`Game.wild_rank`."""

    @property
    def declaring(self) -> bool:
        """The player to move decides whether to declare: ``(card, 1 << card)`` declares,
        ``(card, 0)`` passes (``card`` is the highest card of the hand)."""
        return bool(self.declare_queue)

    @property
    def side(self) -> int:
        return self.side_of[self.seat]

    @property
    def num_sides(self) -> int:
        return max(self.side_of) + 1

    @property
    def unseen(self) -> int:
        """Bitmask of the cards this seat cannot see: other hands (less their revealed cards) and the stock."""
        seen = self.hand | self.table
        for p in self.piles:
            seen |= p
        for r in self.revealed:
            seen |= r
        return self.rules.deck_mask & ~seen

    def legal_pairs(self) -> list[tuple[int, int]]:
        if self.current != self.seat:
            return []
        if self.declare_queue:
            return declaring_pairs(self.hand, self.rules)
        if self.deciding:
            card = self.hand.bit_length() - 1
            return [(card, 0), (card, 1 << card)]
        return legal_pairs(self.hand, self.table, self.rules, self.wild_rank)

    def legal_moves(self) -> list[Move]:
        """Legal moves when it is this seat's turn (else empty)."""
        return [move_of(c, m) for c, m in self.legal_pairs()]

    def claim_pair(self) -> tuple[int, int] | None:
        """The chiamarsi fuori claim move when this seat may claim now (see :meth:`Game.claim_pair`)."""
        if not self.rules.claim_out or self.current != self.seat or self.deciding or not self.hand:
            return None
        card = self.hand.bit_length() - 1
        return (card, 1 << card)

    def claim_is_sound(self) -> bool:
        """Whether a claim now would win: this side's score plus its certain hand points reach the target."""
        remaining = self.rules.deck_mask
        for p in self.piles:
            remaining &= ~p
        rows = secured_points(self.piles, self.scope_points, self.rules, remaining)
        return self.scores[self.side] + rows[self.side]["total"] >= self.rules.target

    def determinize(self, rng: np.random.Generator) -> Game:
        """A full game consistent with this view: unseen cards dealt at random.

        Other hands get their known sizes; the rest becomes the stock in random order.
        """
        unseen = cards_of(self.unseen)
        order = [unseen[i] for i in rng.permutation(len(unseen)).tolist()]
        hands = []
        pos = 0
        for s in range(self.num_players):
            if s == self.seat:
                hands.append(cards_of(self.hand))
            else:
                shown = cards_of(self.revealed[s]) if self.revealed else []
                k = self.hand_counts[s] - len(shown)
                hands.append(shown + order[pos : pos + k])
                pos += k
        game = Game.from_deal(
            hands=hands,
            table=cards_of(self.table),
            stock=order[pos:],
            dealer=self.dealer,
            scores=self.scores,
            rules=self.rules,
            seed=rng,
            piles=[cards_of(p) for p in self.piles],
            scope=self.scope,
            scope_points=self.scope_points,
            current=self.current,
            last_capturer=self.last_capturer,
            deciding=self.deciding and not self.declare_queue,
            revealed=self.revealed or None,
            declare_queue=self.declare_queue,
            pending=self.pending,
            wild_rank=self.wild_rank,
        )
        game.played = list(self.played)
        game.history = list(self.history)
        game.hand_number = self.hand_number
        return game
