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

A variant is a few fields of :class:`Rules` and a test, never a subclass. The named
variants (Scopone, Scopa d'Assi, Scopa di Quindici, Chkobba, Hurrikan ...) are in
:mod:`scopa_env.engine.presets` and documented in ``docs/rules.md``. That module imports this
one and registers them in :data:`PRESETS`; the package (``scopa_env/__init__.py``) imports
it, so every importer of ``scopa_env.engine.rules`` sees them, and this module imports no preset.

Two moves are encoded with a *self mask*, ``(card, 1 << card)``, the card "taking
itself": in Chkobba's first-card decision it means "keep the drawn card" (``(card, 0)``
puts it on the table), and under :attr:`Rules.ace_takes_itself` it is an Ace played
to the empty table going to the player's pile.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from scopa_env.engine.cards import (
    ACE,
    COINS,
    CUPS,
    FRENCH_RANKS,
    MAX_CARDS,
    MAX_RANK,
    NUM_CARDS,
    NUM_RANKS,
    PRIMIERA_BY_RANK,
    RANK_MASK,
    RANK_OF,
    RANKS,
    RANKS_PER_SUIT,
    SUITS,
    card_id,
    cards_of,
    format_card,
    format_cards,
    mask_of,
)

PLAYER_COUNTS = (2, 3, 4, 6)
"""Player counts of the 40-card game (the default of :attr:`Rules.player_counts`)."""
ALLOWED_PLAYER_COUNTS = (*PLAYER_COUNTS, 8)
"""Player counts a variant may allow (8: the 52-card game, preset ``french_52``)."""
PARTNERSHIP_COUNTS = (4, 6)
"""Player counts that may play in two teams (:attr:`Rules.partnerships`)."""
PRIME_RULES = ("primiera", "sevens")
NAPOLA_READINGS = ("", "pagat_6", "pagat_9", "wikipedia")
"""Values of :attr:`Rules.napola`: off, or the reading of the source it follows."""
SCOPA_VALUES = ("points", "card", "cards")
"""Values of :attr:`Rules.scopa_value`: ``scopa_points`` each, or the Libyan readings."""

#: Named primiera scales, usable as ``primiera_values=NAME`` in option strings.
PRIMIERA_SCALES: dict[str, tuple[float, ...]] = {
    "standard": tuple(PRIMIERA_BY_RANK[1:]),
    # pagat "Deciding the Primiera": "some count 2-7 as face value, Aces as 5 1/2 and picture cards as 1/2".
    "face": (5.5, 2, 3, 4, 5, 6, 7, 0.5, 0.5, 0.5),
    # wikipedia "Scoring the prime": "count 0 points for each face card".
    "no_figures": (16, 12, 13, 14, 15, 18, 21, 0, 0, 0),
}


@dataclass(frozen=True)
class Rules:
    """Every rule that differs between variants, with the standard game as default.

    Build variants with :meth:`replace` or pick a named preset with :func:`get_rules`.
    Invalid values raise ``ValueError`` naming the field.
    """

    name: str = "standard"
    """Preset name, used in messages, run folders and docs."""

    player_counts: tuple[int, ...] = PLAYER_COUNTS
    """Player counts the variant allows; :attr:`partnerships` says which of them play in
    teams."""

    partnerships: tuple[int, ...] = PARTNERSHIP_COUNTS
    """Player counts that play in two teams, the even seats against the odd ones: 4 with
    partners opposite (seats 0+2 vs 1+3), 6 with alternating seats (0+2+4 vs 1+3+5)
    (pagat: "The game can also be played by 4 or 6 people divided into two equal
    teams"). Every other count plays each for themselves, one side per seat (the
    booklet's basic game "for 2 to 4 players"). See :meth:`sides`."""

    ranks: tuple[int, ...] = RANKS
    """Ranks in the deck (all four suits of each). Scopa Corse drops the Twos."""

    ranks_per_suit: int = NUM_RANKS
    """The deck the cards come from: 10, the 40-card Italian deck (ranks 1..10, the
    pictures worth 8, 9, 10), or 13, the 52-card French deck (ranks 1..13: 8, 9, 10 are
    number cards, Jack, Queen, King are worth 11, 12, 13; wikipedia, "Playing with
    French-suited cards"). :attr:`ranks` are drawn from ``1..ranks_per_suit`` and
    :attr:`primiera_values` has one value per rank. Card ids 0..39 are the same cards
    in both; the 52-card deck adds ids 40..51 (see :mod:`scopa_env.engine.cards`)."""

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
    """Primiera value of ranks 1..10 (standard: 16 12 13 14 15 18 21 10 10 10), or of
    ranks 1..13 when :attr:`ranks_per_suit` is 13."""

    scopa_points: int = 1
    """Points per scopa."""

    target: int = 11
    """A game ends after the hand in which some side has at least ``target`` points
    and strictly more than every other side."""

    cappotto: bool = False
    """A side leading 7-0 after a hand wins the game at once (wikipedia-scopa.txt)."""

    deal_schedules: tuple[tuple[int, tuple[int, ...]], ...] = ()
    """Per player count, the cards each player gets in each deal of a hand, e.g.
    ``((2, (3, 3, 3, 3, 4)), (4, (3, 3, 2)))`` for Scopa Corse. A dict is accepted and
    stored as sorted pairs. A player count without an entry gets ``hand_size`` cards
    per deal until the deck is used up. See :meth:`schedule`."""

    first_card_choice: bool = False
    """Chkobba: before the deal the player after the dealer draws one card and keeps it
    (move ``(card, 1 << card)``) or puts it face up on the table (move ``(card, 0)``);
    the dealer then completes the deal."""

    redeal_same_rank: int = 0
    """Deal again when the initial table holds this many (or more) cards of one rank;
    0 = never (Chkobba: 3)."""

    aces_redeal: bool = False
    """Deal again when the initial table holds any Ace (a Scopa d'Assi option)."""

    capture_equal: bool = True
    """A card captures a single card or a set of 2+ cards of its own value."""

    capture_sum: int = 0
    """Also capture any set of 1+ cards that together with the played card adds up to
    this total (Scopa di Quindici: 15); 0 = off."""

    ace_takes_all: bool = False
    """An Ace played while no Ace is on the table captures every table card (Asso
    Pigliatutto, Scopa d'Assi). With an Ace on the table it captures by the other rules."""

    ace_takes_all_scopa: bool = True
    """With :attr:`ace_takes_all`, clearing the table that way scores a scopa (Asso
    Pigliatutto: yes; Scopa d'Assi: no)."""

    ace_takes_itself: bool = False
    """An Ace played to the empty table goes to the player's pile and the table stays
    empty (a Scopa d'Assi option); move ``(ace, 1 << ace)``."""

    max_capture_cards: int = 0
    """Most table cards one capture may take; 0 = no limit (booklet: 2)."""

    fewest_cards: bool = False
    """Among the captures a card can make, only those taking the fewest cards are legal
    (booklet; a Scopa di Quindici option)."""

    bonus_suit: int = COINS
    """Suit of the "most coins" point and of the settebello (the Seven of this suit):
    coins/diamonds, or hearts (cups, suit 1) in Hurrikan."""

    prime_rule: str = "primiera"
    """``"primiera"``: the best primiera scores the point; ``"sevens"``: most Sevens,
    ties broken by most Sixes, else nobody (booklet, Chkobba's barmila), reported
    under the ``seven_majority`` key. See also :attr:`primiera_by_counts`."""

    primiera_by_counts: bool = False
    """The primiera point goes to the most Sevens, then Sixes, then Aces ... down the
    order of :attr:`primiera_values` (wikipedia's American variant "disliked by
    purists"); no four-suit requirement. (A field of its own, not a ``prime_rule``
    value, so that code knowing only the older values cannot mistake it.)"""

    primiera_all_suits: bool = True
    """Only a side with a card of every suit can score the primiera (pagat: "a player or
    team that does not have at least one card in each suit cannot score for prime").
    ``False`` follows the booklet's table, whose row "None | 0" counts a missing suit as
    0: the side's primiera is the sum over the suits it has and can still win the point."""

    double_game_below: int = 0
    """Hurrikan: the winner wins a double game when every other side has fewer than
    this many points at the end; 0 = off."""

    re_bello: bool = False
    """A point for the King of the bonus suit (pagat "Re Bello", wikipedia "Additional points")."""

    seven_of_cups: bool = False
    """A point for the Seven of cups besides the settebello (wikipedia: Calabria)."""

    palle_del_cane: bool = False
    """A point for all four Sevens (wikipedia: "Le palle del cane", Napoli)."""

    napola: str = ""
    """Points for a run of the bonus suit from its Ace (at least A-2-3): ``"pagat_6"`` one
    per card up to A..6; ``"pagat_9"`` up to 9 (A..Queen) and the whole suit a Napoleone
    that wins the game; ``"wikipedia"`` 3 for A-2-3 plus 1 per other card of the suit;
    ``""`` off. Key ``napola``."""

    scalette: bool = False
    """Scopa con le Scalette (pagat): scaletta bassa A-2-3 = 3, +1 per card up to the
    Queen; scaletta alta K-Q-J = 5, +1 per card down to the Two; all ten a Scala that
    wins the game. Keys ``scaletta_bassa``, ``scaletta_alta``."""

    all_coins_wins: bool = False
    """A side taking every card of the bonus suit in a hand wins the game at once."""

    coins_reset: int = 0
    """Libyan: a side taking at least this many cards of the bonus suit (10: all, "sometimes
    eight") resets every other side's game score to 0 after the hand; 0 = off."""

    scopa_value: str = "points"
    """What a scopa is worth: ``"points"`` (:attr:`scopa_points`), ``"card"`` the capture
    value of the sweeping card, ``"cards"`` the cards involved (taken + played) (Libyan)."""

    piva: bool = False
    """Piva: the Two of batons/clubs scores minus 5 (key ``piva``); scores may go negative."""

    bazzica_points: tuple[int, ...] = ()
    """Scopa Bazzica declarations, points for (a bazzica of three different ranks, a
    bazzica with a pair, a bazzicotto = three of a kind): ``(3, 3, 10)`` in Scopa
    Bazzica, ``(2, 3, 7)`` in Sbarazzina; ``()`` = no declarations. After every
    three-card deal each player whose hand qualifies decides, in turn order, whether
    to declare (showing the hand); only the best declaration of the deal scores, at
    once (see ``docs/rules.md``)."""

    hand_bonus_points: tuple[int, ...] = ()
    """Cirulla's hand bonuses, points for (three cards totalling less than 10, three of a
    kind): ``(3, 10)``; ``()`` = off. Declared like :attr:`bazzica_points` after every
    three-card deal, but every declaration scores (a hand that is both scores only the
    three of a kind)."""

    table_bonus: bool = False
    """Cirulla's dealer bonuses: an initial table totalling 15 goes to the dealer with one
    scopa, totalling 30 with two scope."""

    bonus_wildcard: bool = False
    """Cirulla: the Seven of cups/hearts (card 16) stands for any card when that makes a
    hand bonus or a dealer bonus (for the bonuses only: it captures as a Seven)."""

    piccola_grande: bool = False
    """Cirulla: la piccola, A-2-3 of the bonus suit for 3, one more per card in sequence up
    to 6 (key ``piccola``); la grande, J-Q-K of the bonus suit for 5 (key ``grande``)."""

    redeal_aces: int = 0
    """Deal again when the initial table holds at least this many Aces (Cirulla: 2); 0 = off."""

    redeal_next_dealer: bool = False
    """A thrown-in deal is dealt again by the next dealer (Cirulla) instead of the same one."""

    claim_out: bool = False
    """Chiamarsi fuori (pagat): on their turn a player may end the game by claiming that
    their side has reached the target with the points already certain; a wrong claim
    loses the game. The claim is ``(card, 1 << card)`` of the hand's highest card, in
    :meth:`~scopa_env.engine.game.Game.claim_pair` (not in ``legal_pairs``). Two sides only."""

    description: str = field(default="Standard Scopa (pagat.com, Wikipedia).", compare=False)
    """One line for listings."""

    def __post_init__(self) -> None:
        if isinstance(self.deal_schedules, dict):
            pairs = tuple(sorted((k, tuple(v)) for k, v in self.deal_schedules.items()))
            object.__setattr__(self, "deal_schedules", pairs)
        _check(isinstance(self.name, str) and self.name != "", "name", "must be a non-empty string", self.name)
        _check(
            isinstance(self.player_counts, tuple)
            and len(self.player_counts) > 0
            and all(n in ALLOWED_PLAYER_COUNTS for n in self.player_counts),
            "player_counts",
            f"must be a non-empty tuple of values from {ALLOWED_PLAYER_COUNTS}",
            self.player_counts,
        )
        _check(
            self.ranks_per_suit in RANKS_PER_SUIT and not isinstance(self.ranks_per_suit, bool),
            "ranks_per_suit",
            f"must be one of {RANKS_PER_SUIT} (the 40-card Italian or the 52-card French deck)",
            self.ranks_per_suit,
        )
        _check(
            isinstance(self.ranks, tuple)
            and len(self.ranks) > 0
            and len(set(self.ranks)) == len(self.ranks)
            and all(r in range(1, self.ranks_per_suit + 1) for r in self.ranks),
            "ranks",
            f"must be a tuple of distinct ranks from 1..{self.ranks_per_suit} (ranks_per_suit={self.ranks_per_suit})",
            self.ranks,
        )
        _check(
            isinstance(self.partnerships, tuple) and all(n in PARTNERSHIP_COUNTS for n in self.partnerships),
            "partnerships",
            f"must be a tuple of player counts from {PARTNERSHIP_COUNTS} (two teams of even and odd seats)",
            self.partnerships,
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
            isinstance(self.primiera_values, tuple) and len(self.primiera_values) == self.ranks_per_suit,
            "primiera_values",
            f"must be a tuple of {self.ranks_per_suit} numbers (ranks 1..{self.ranks_per_suit})",
            self.primiera_values,
        )
        for name in _BOOL_FIELDS:
            _check(isinstance(getattr(self, name), bool), name, "must be a bool", getattr(self, name))
        for name in (
            "redeal_same_rank",
            "capture_sum",
            "max_capture_cards",
            "double_game_below",
            "coins_reset",
            "redeal_aces",
        ):
            value = getattr(self, name)
            _check(
                isinstance(value, int) and not isinstance(value, bool) and value >= 0,
                name,
                "must be an int >= 0",
                value,
            )
        _check(self.redeal_same_rank != 1, "redeal_same_rank", "must be 0 (off) or 2..4 (1 would redeal forever)", 1)
        _check(
            self.capture_sum == 0 or self.capture_sum >= 2, "capture_sum", "must be 0 (off) or >= 2", self.capture_sum
        )
        _check(self.bonus_suit in SUITS, "bonus_suit", f"must be a suit id in {SUITS}", self.bonus_suit)
        _check(self.prime_rule in PRIME_RULES, "prime_rule", f"must be one of {PRIME_RULES}", self.prime_rule)
        _check(
            not (self.primiera_by_counts and self.prime_rule == "sevens"),
            "primiera_by_counts",
            'scores the primiera, which prime_rule="sevens" replaces; choose one',
            self.primiera_by_counts,
        )
        _check(self.napola in NAPOLA_READINGS, "napola", f"must be one of {NAPOLA_READINGS}", self.napola)
        _check(self.scopa_value in SCOPA_VALUES, "scopa_value", f"must be one of {SCOPA_VALUES}", self.scopa_value)
        _check(
            all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.primiera_values),
            "primiera_values",
            "must hold numbers",
            self.primiera_values,
        )
        _check(
            self.coins_reset == 0 or 6 <= self.coins_reset <= 10,
            "coins_reset",
            "must be 0 (off) or 6..10 (a majority of the 10 cards of the bonus suit)",
            self.coins_reset,
        )
        _check(
            not (self.napola and self.scalette),
            "scalette",
            "and napola both score the run from the Ace (pagat: a scaletta bassa 'is equivalent to a Napola'); "
            "choose one",
            self.scalette,
        )
        _check(
            not (self.seven_of_cups and self.bonus_suit == CUPS),
            "seven_of_cups",
            "is already the settebello when bonus_suit is cups",
            self.seven_of_cups,
        )
        _check(not (self.piva and 2 not in self.ranks), "piva", "needs the Twos in the deck (ranks)", self.piva)
        _check(
            not (self.palle_del_cane and 7 not in self.ranks),
            "palle_del_cane",
            "needs the Sevens in the deck (ranks)",
            self.palle_del_cane,
        )
        _check(
            self.capture_equal or self.capture_sum or self.ace_takes_all,
            "capture_equal",
            "is False and neither capture_sum nor ace_takes_all is set, so no card could ever capture",
            self.capture_equal,
        )
        _check(
            not (self.aces_redeal and ACE not in self.ranks),
            "aces_redeal",
            "needs Aces in the deck (ranks)",
            self.aces_redeal,
        )
        _check(
            not (self.first_card_choice and self.table_size == 0),
            "first_card_choice",
            "needs table_size >= 1 (the drawn card may go to the table)",
            self.first_card_choice,
        )
        _check(
            isinstance(self.deal_schedules, tuple)
            and all(
                isinstance(p, tuple)
                and len(p) == 2
                and p[0] in ALLOWED_PLAYER_COUNTS
                and isinstance(p[1], tuple)
                and len(p[1]) > 0
                and all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in p[1])
                for p in self.deal_schedules
            )
            and len({p[0] for p in self.deal_schedules}) == len(self.deal_schedules),
            "deal_schedules",
            "must map player counts to non-empty tuples of positive ints (cards per player per deal)",
            self.deal_schedules,
        )
        _check(
            _off_or_points(self.bazzica_points, 3),
            "bazzica_points",
            "must be () or 3 ints >= 0 (bazzica of different ranks, bazzica with a pair, bazzicotto)",
            self.bazzica_points,
        )
        _check(
            _off_or_points(self.hand_bonus_points, 2),
            "hand_bonus_points",
            "must be () or 2 ints >= 0 (total under 10, three of a kind)",
            self.hand_bonus_points,
        )
        _check(
            not (self.hand_bonus_points and self.bazzica_points),
            "hand_bonus_points",
            "and bazzica_points are two declaration systems; choose one",
            self.hand_bonus_points,
        )
        _check(
            not (self.hand_bonus_points and self.first_card_choice),
            "hand_bonus_points",
            "cannot be combined with first_card_choice (two kinds of decision at the deal)",
            self.hand_bonus_points,
        )
        _check(
            not (self.bonus_wildcard and not (self.hand_bonus_points or self.table_bonus)),
            "bonus_wildcard",
            "is a wildcard for the hand and dealer bonuses only: set hand_bonus_points or table_bonus",
            self.bonus_wildcard,
        )
        _check(
            not (self.bonus_wildcard and 7 not in self.ranks),
            "bonus_wildcard",
            "needs the Seven of cups in the deck",
            self.bonus_wildcard,
        )
        _check(
            not (self.claim_out and any(self.num_sides(n) != 2 for n in self.player_counts)),
            "claim_out",
            "needs two sides (a wrong claim loses to the other side): 2 players, or 4 or 6 in partnerships",
            self.claim_out,
        )
        _check(
            not (self.claim_out and self.ace_takes_itself),
            "claim_out",
            "and ace_takes_itself would share the self-mask move of an Ace",
            self.claim_out,
        )
        _check(
            not (self.table_bonus and self.first_card_choice),
            "table_bonus",
            "cannot be combined with first_card_choice",
            self.table_bonus,
        )
        _check(
            not (self.table_bonus and self.table_size == 0),
            "table_bonus",
            "needs cards dealt to the table (table_size >= 1)",
            self.table_bonus,
        )
        _check(
            not (self.piccola_grande and (self.napola or self.scalette)),
            "piccola_grande",
            "scores the run from the Ace like napola/scalette; choose one",
            self.piccola_grande,
        )
        _check(
            not (self.redeal_aces and ACE not in self.ranks), "redeal_aces", "needs Aces in the deck", self.redeal_aces
        )
        _check(
            not (self.bazzica_points and self.first_card_choice),
            "bazzica_points",
            "cannot be combined with first_card_choice (two kinds of decision at the deal)",
            self.bazzica_points,
        )
        for name in _FORTY_CARD_FIELDS:
            _check(
                self.ranks_per_suit == NUM_RANKS or not getattr(self, name),
                name,
                "is defined on the 40-card deck's ranks (runs to its King, the wildcard's ranks); "
                "it cannot be used with ranks_per_suit=13",
                getattr(self, name),
            )
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

    @property
    def num_card_ids(self) -> int:
        """Card ids of the deck family, the width of a card plane: 40 (ids 0..39) for the
        Italian deck, 52 (ids 0..51) for the French one, whichever :attr:`ranks` it keeps."""
        return NUM_CARDS if self.ranks_per_suit == NUM_RANKS else MAX_CARDS

    @property
    def king(self) -> int:
        """Rank of the Kings: 10 in the 40-card deck, 13 in the 52-card deck."""
        return self.ranks_per_suit

    @functools.cached_property
    def plain_captures(self) -> bool:
        """True when captures follow the standard pattern (the engine's fast path)."""
        return (
            self.capture_equal
            and not self.capture_sum
            and not self.ace_takes_all
            and not self.ace_takes_itself
            and not self.max_capture_cards
            and not self.fewest_cards
        )

    @functools.cached_property
    def needs_events(self) -> bool:
        """True when a hand can end with a :func:`~scopa_env.engine.scoring.game_events` item."""
        return bool(
            self.napola == "pagat_9" or self.scalette or self.all_coins_wins or self.coins_reset or self.claim_out
        )

    @property
    def declarations(self) -> bool:
        """True when players may declare hands (:attr:`bazzica_points`, :attr:`hand_bonus_points`)."""
        return bool(self.bazzica_points or self.hand_bonus_points)

    def check_players(self, num_players: int) -> None:
        """Raise ``ValueError`` if this variant cannot be played by ``num_players``."""
        if num_players not in self.player_counts:
            raise ValueError(f"rules {self.name!r} allow num_players in {self.player_counts}, got {num_players!r}")
        schedule = dict(self.deal_schedules).get(num_players)
        dealt = len(self.deck) - self.table_size
        if schedule is None:
            per_round = num_players * self.hand_size
            if dealt <= 0 or dealt % per_round:
                raise ValueError(
                    f"rules {self.name!r}: {len(self.deck)} cards minus table_size={self.table_size} "
                    f"cannot be dealt in rounds of hand_size={self.hand_size} to {num_players} players"
                )
        elif num_players * sum(schedule) != dealt:
            raise ValueError(
                f"rules {self.name!r}: deal_schedules gives {num_players} players {'+'.join(map(str, schedule))} = "
                f"{sum(schedule)} cards each, {num_players * sum(schedule)} in all, but the {len(self.deck)}-card "
                f"deck minus table_size={self.table_size} leaves {dealt}"
            )
        if (self.bazzica_points or self.hand_bonus_points) and DECLARATION_CARDS not in (schedule or (self.hand_size,)):
            raise ValueError(
                f"rules {self.name!r}: declarations need three-card deals (pagat: 'declared immediately after a "
                f"three-card deal'), but {num_players} players get {schedule or (self.hand_size,)} cards per deal"
            )

    def sides(self, num_players: int) -> tuple[int, ...]:
        """Side of each seat: ``seat % 2`` when ``num_players`` plays in :attr:`partnerships`,
        else ``seat`` (each for themselves)."""
        if num_players in self.partnerships:
            return tuple(s % 2 for s in range(num_players))
        return tuple(range(num_players))

    def num_sides(self, num_players: int) -> int:
        """Number of sides (scores, piles) for ``num_players``: 2 in partnerships, else ``num_players``."""
        return 2 if num_players in self.partnerships else num_players

    def schedule(self, num_players: int) -> tuple[int, ...]:
        """Cards each player gets in each deal of a hand, first deal first."""
        self.check_players(num_players)
        schedule = dict(self.deal_schedules).get(num_players)
        if schedule is None:
            rounds = (len(self.deck) - self.table_size) // (num_players * self.hand_size)
            schedule = (self.hand_size,) * rounds
        return schedule

    def max_hand(self, num_players: int) -> int:
        """Most cards a player holds at once."""
        return max(self.schedule(num_players))

    def replace(self, **changes) -> Rules:
        """A copy with some fields changed (validated). Unknown fields raise ``ValueError``."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(f"unknown Rules field(s) {unknown}; valid fields: {sorted(names)}")
        return dataclasses.replace(self, **changes)


DECLARATION_CARDS = 3
_FORTY_CARD_FIELDS = (
    "napola",
    "scalette",
    "piccola_grande",
    "bonus_wildcard",
    "bazzica_points",
    "hand_bonus_points",
    "table_bonus",
)
"""Rules written for the 40-card deck only; :attr:`Rules.ranks_per_suit` = 13 refuses them."""
"""pagat, Scopa Bazzica: declarations are made "immediately after a three-card deal"."""

_BOOL_FIELDS = (
    "kings_redeal",
    "single_card_priority",
    "capture_optional",
    "last_play_scopa",
    "cappotto",
    "first_card_choice",
    "aces_redeal",
    "capture_equal",
    "ace_takes_all",
    "ace_takes_all_scopa",
    "ace_takes_itself",
    "fewest_cards",
    "primiera_by_counts",
    "primiera_all_suits",
    "re_bello",
    "seven_of_cups",
    "palle_del_cane",
    "scalette",
    "all_coins_wins",
    "piva",
    "table_bonus",
    "bonus_wildcard",
    "piccola_grande",
    "redeal_next_dealer",
    "claim_out",
)


def _off_or_points(value, length: int) -> bool:
    """``()`` (the rule is off) or a tuple of ``length`` non-negative ints (its points)."""
    return value == () or (
        isinstance(value, tuple)
        and len(value) == length
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    )


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
    """Resolve a preset name or a :class:`Rules` object (``None`` is the standard game).

    A name may carry options after commas, ``"NAME,field=value,..."``, e.g.
    ``"chkobba,target=31"`` or ``"standard,cappotto=true,player_counts=2/3"``: ints,
    bools (true/false, on/off, 1/0), strings and ``/``-separated number tuples (``none``: empty)
    (``primiera_values`` also takes a scale name from :data:`PRIMIERA_SCALES`, e.g.
    ``"standard,primiera_values=face"``). The result is named by the whole string.
    """
    if rules is None:
        return STANDARD
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        if "," in rules:
            return _with_options(rules)
        try:
            return PRESETS[rules]
        except KeyError:
            raise ValueError(f"unknown rules preset {rules!r}; known presets: {', '.join(sorted(PRESETS))}") from None
    raise ValueError(f"rules must be a preset name or a Rules object, got {type(rules).__name__}")


_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")
_EMPTY = ("", "none")
"""An empty tuple in option strings, e.g. ``partnerships=none`` (everyone for themselves)."""


def _with_options(text: str) -> Rules:
    base, *options = (part.strip() for part in text.split(","))
    rules = get_rules(base)
    changes: dict = {}
    for option in options:
        key, sep, raw = option.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or key not in _OPTION_FIELDS:
            raise ValueError(
                f"bad rules option {option!r} in {text!r}: use field=value with a field from {sorted(_OPTION_FIELDS)}"
            )
        current = getattr(rules, key)
        try:
            if isinstance(current, bool):
                if raw.lower() not in _TRUE + _FALSE:
                    raise ValueError
                changes[key] = raw.lower() in _TRUE
            elif isinstance(current, int):
                changes[key] = int(raw)
            elif isinstance(current, str):
                changes[key] = raw
            elif key == "primiera_values" and raw in PRIMIERA_SCALES:
                changes[key] = PRIMIERA_SCALES[raw]
            elif raw.lower() in _EMPTY:
                changes[key] = ()
            else:
                changes[key] = tuple(_number(v) for v in raw.split("/"))
        except ValueError:
            raise ValueError(f"bad value {raw!r} for rules option {key!r} in {text!r}") from None
    return rules.replace(name=text, **changes)


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


_OPTION_FIELDS = frozenset(f.name for f in dataclasses.fields(Rules)) - {"name", "description", "deal_schedules"}


# --- moves --------------------------------------------------------------------


class Move:
    """One turn: the hand card played and the table cards it captures (empty = trail).

    Moves compare and hash by value; ``Move(6, {16, 30})`` equals the engine's move.
    ``Move(card, itself=True)`` is the self-mask move (``captured == {card}``): keeping
    Chkobba's drawn first card, or an Ace taking itself (see the module docstring).
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


def capture_options(rank: int, table: int, rules: Rules = STANDARD) -> list[int]:
    """Bitmasks of the table sets a card of ``rank`` may capture (empty list: none).

    Args:
        rank: capture value of the played card (1..10).
        table: bitmask of the table cards.
        rules: the rules in force.
    """
    return [m for c, m in legal_pairs(1 << card_id(0, rank), table, rules.replace(capture_optional=False)) if m]


def legal_pairs(hand: int, table: int, rules: Rules = STANDARD, wild_rank: int = 0) -> list[tuple[int, int]]:
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
    rules: Rules,
    rank_of: tuple[int, ...] = RANK_OF,
    rank_mask: tuple[int, ...] = RANK_MASK,
) -> list[tuple[int, int]]:
    """:func:`legal_pairs` for every capture rule of :class:`Rules` (the slower general path).

    The options of a card are the union of: equal-value captures (a single card, or a
    set of 2+ cards, singles first under ``single_card_priority``), ``capture_sum``
    captures (1+ cards adding up to the total with the played card) and the Ace's
    take-all; then ``max_capture_cards`` and ``fewest_cards`` filter them.
    ``rank_of``/``rank_mask`` are the capture ranks (Cirulla's declared wildcard moves
    the Seven of cups to another rank, :func:`capture_ranks`).
    """
    out: list[tuple[int, int]] = []
    aces_on_table = table & rank_mask[ACE]
    combos = None
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


def legal_moves(
    hand: Iterable[int] | int,
    table: Iterable[int] | int,
    rules: Rules | str | None = None,
    wild_rank: int = 0,
) -> list[Move]:
    """Every legal move for a player holding ``hand`` with ``table`` face up.

    Args:
        hand: card ids (or a bitmask) in the player's hand.
        table: card ids (or a bitmask) face up on the table.
        rules: a :class:`Rules` object or preset name; the standard game by default.
        wild_rank: Cirulla, the rank the Seven of cups was declared as (0: a Seven);
            see :func:`legal_pairs`.

    Returns:
        Moves ordered by played card, then captured set; trails have an empty ``captured``.
    """
    r = get_rules(rules)
    hand_mask = hand if isinstance(hand, int) else mask_of(hand)
    table_mask = table if isinstance(table, int) else mask_of(table)
    if hand_mask & table_mask:
        raise ValueError(f"cards both in hand and on the table: {format_cards(hand_mask & table_mask)}")
    check_wild_rank(wild_rank, r)
    return [move_of(c, m) for c, m in legal_pairs(hand_mask, table_mask, r, wild_rank)]


WILDCARD = card_id(CUPS, 7)
"""Cirulla's wildcard for the bonuses, the Seven of cups/hearts (card 16)."""
WILDCARD_RANK = 7
"""The wildcard's own rank, which it captures as unless declared otherwise."""


def check_wild_rank(wild_rank: int, rules: Rules) -> None:
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
