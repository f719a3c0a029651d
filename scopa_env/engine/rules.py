"""Rules of Scopa: the frozen :class:`Rules` object, which backends play each field, named presets
and legal moves (the captures themselves are enumerated in :mod:`scopa_env.engine.captures`).

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
A house rule from outside the kit is a plug-in instead: registered by name in
:mod:`scopa_env.engine.house_rules` and named in :attr:`Rules.house_rules`.

Each field declares, next to it, the backends that play it besides the engine and the AEC env
(``metadata=backends(fast=..., french=..., openspiel=..., features=..., search=...)``, see
:class:`Support`); the backends' support lists are read from there (:func:`supported_by`) and
:meth:`Rules.check_backend` refuses the rest.

Two moves are encoded with a *self mask*, ``(card, 1 << card)``, the card "taking
itself": in Chkobba's first-card decision it means "keep the drawn card" (``(card, 0)``
puts it on the table), and under :attr:`Rules.ace_takes_itself` it is an Ace played
to the empty table going to the player's pile.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from scopa_env.engine import house_rules
from scopa_env.engine.captures import WILDCARD as WILDCARD  # re-exported: what a card may capture
from scopa_env.engine.captures import WILDCARD_RANK as WILDCARD_RANK
from scopa_env.engine.captures import Move as Move
from scopa_env.engine.captures import capture_rank as capture_rank
from scopa_env.engine.captures import capture_ranks as capture_ranks
from scopa_env.engine.captures import check_wild_rank, legal_pairs, move_of
from scopa_env.engine.cards import (
    ACE,
    COINS,
    CUPS,
    MAX_CARDS,
    NUM_CARDS,
    NUM_RANKS,
    PRIMIERA_BY_RANK,
    RANKS,
    RANKS_PER_SUIT,
    SUITS,
    card_id,
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


BACKENDS = ("engine", "env", "fast", "french", "openspiel", "features", "search")
"""What may play a :class:`Rules` field (:func:`supported_by`): ``engine`` the Python engine
(:class:`~scopa_env.engine.game.Game`), ``env`` the PettingZoo AEC env (:mod:`scopa_env.aec`),
both of which play every field; the rest as :class:`Support` says."""


@dataclass(frozen=True)
class Support:
    """Which backends play a :class:`Rules` field at every value, declared next to the field
    (``field(default=..., metadata=backends(...))``). The engine and the AEC env play every
    field. Where a backend does not play a field, it refuses rules whose value of the field
    differs from the standard one (:meth:`Rules.check_backend`), naming the preset and field."""

    fast: bool
    """The compiled core (:mod:`scopa_env.fast`: ``BatchedScopa``, the vector env, DMC's
    self-play) with the 40-card deck; :func:`scopa_env.fast.batch.check_supported`."""
    french: bool
    """The compiled core with the 52-card deck too (``ranks_per_suit=13``, ``french_52``)."""
    openspiel: bool
    """The OpenSpiel game (:mod:`scopa_env.openspiel`)."""
    features: bool
    """The learners' move features (:class:`train.dmc.agent.MoveFeatures`, and on the compiled
    core :func:`scopa_env.fast.features.heuristic_move_scores`) describe every move it allows."""
    search: bool
    """The compiled batched search (:mod:`scopa_env.fast.search`: the ``fsearch`` agent, DMC's
    search labels) values every decision it adds."""
    rule: bool = True
    """``False`` for a label that is no rule (``name``, ``description``): no rule text to test."""

    def __post_init__(self) -> None:
        if (self.french or self.search) and not self.fast:
            raise ValueError(f"{self}: french and search run on the compiled core, so they need fast=True")


def backends(*, fast: bool, french: bool, openspiel: bool, features: bool, search: bool) -> dict[str, Support]:
    """The ``metadata`` of a :class:`Rules` field: which backends play it (see :class:`Support`)."""
    return {"support": Support(fast=fast, french=french, openspiel=openspiel, features=features, search=search)}


def label() -> dict[str, Support]:
    """The ``metadata`` of a field that names or describes a preset: every backend carries it."""
    return {"support": Support(fast=True, french=True, openspiel=True, features=True, search=True, rule=False)}


@dataclass(frozen=True)
class Rules:
    """Every rule that differs between variants, with the standard game as default.

    Build variants with :meth:`replace` or pick a named preset with :func:`get_rules`.
    Invalid values raise ``ValueError`` naming the field.
    """

    name: str = field(default="standard", metadata=label())
    """Preset name, used in messages, run folders and docs."""

    player_counts: tuple[int, ...] = field(
        default=PLAYER_COUNTS, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Player counts the variant allows; :attr:`partnerships` says which of them play in
    teams."""

    partnerships: tuple[int, ...] = field(
        default=PARTNERSHIP_COUNTS,
        metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True),
    )
    """Player counts that play in two teams, the even seats against the odd ones: 4 with
    partners opposite (seats 0+2 vs 1+3), 6 with alternating seats (0+2+4 vs 1+3+5)
    (pagat: "The game can also be played by 4 or 6 people divided into two equal
    teams"). Every other count plays each for themselves, one side per seat (the
    booklet's basic game "for 2 to 4 players"). See :meth:`sides`."""

    ranks: tuple[int, ...] = field(
        default=RANKS, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Ranks in the deck (all four suits of each). Scopa Corse drops the Twos."""

    ranks_per_suit: int = field(
        default=NUM_RANKS, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """The deck the cards come from: 10, the 40-card Italian deck (ranks 1..10, the
    pictures worth 8, 9, 10), or 13, the 52-card French deck (ranks 1..13: 8, 9, 10 are
    number cards, Jack, Queen, King are worth 11, 12, 13; wikipedia, "Playing with
    French-suited cards"). :attr:`ranks` are drawn from ``1..ranks_per_suit`` and
    :attr:`primiera_values` has one value per rank. Card ids 0..39 are the same cards
    in both; the 52-card deck adds ids 40..51 (see :mod:`scopa_env.engine.cards`)."""

    hand_size: int = field(
        default=3, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Cards dealt to each player per deal."""

    table_size: int = field(
        default=4, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Cards dealt face up to the table at the start of a hand."""

    kings_redeal: bool = field(
        default=True, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Gather and deal again when the initial table holds 3 or 4 Kings (pagat:
    "with more than two face up Kings in the layout, sweeps (scope) are not possible")."""

    single_card_priority: bool = field(
        default=True, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """A card that matches a single table card must capture a single card, not a set."""

    capture_optional: bool = field(
        default=False, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """A card that could capture may be trailed instead (Scopa Corse)."""

    last_play_scopa: bool = field(
        default=False, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Clearing the table with the very last card of the hand counts as a scopa."""

    primiera_values: tuple[int, ...] = field(
        default=PRIMIERA_BY_RANK[1:],
        metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True),
    )
    """Primiera value of ranks 1..10 (standard: 16 12 13 14 15 18 21 10 10 10), or of
    ranks 1..13 when :attr:`ranks_per_suit` is 13."""

    scopa_points: int = field(
        default=1, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Points per scopa."""

    target: int = field(
        default=11, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """A game ends after the hand in which some side has at least ``target`` points
    and strictly more than every other side."""

    cappotto: bool = field(
        default=False, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """A side leading 7-0 after a hand wins the game at once (wikipedia-scopa.txt)."""

    deal_schedules: tuple[tuple[int, tuple[int, ...]], ...] = field(
        default=(), metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Per player count, the cards each player gets in each deal of a hand, e.g.
    ``((2, (3, 3, 3, 3, 4)), (4, (3, 3, 2)))`` for Scopa Corse. A dict is accepted and
    stored as sorted pairs. A player count without an entry gets ``hand_size`` cards
    per deal until the deck is used up. See :meth:`schedule`."""

    first_card_choice: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=False)
    )
    """Chkobba: before the deal the player after the dealer draws one card and keeps it
    (move ``(card, 1 << card)``) or puts it face up on the table (move ``(card, 0)``);
    the dealer then completes the deal."""

    redeal_same_rank: int = field(
        default=0, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Deal again when the initial table holds this many (or more) cards of one rank;
    0 = never (Chkobba: 3)."""

    aces_redeal: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Deal again when the initial table holds any Ace (a Scopa d'Assi option)."""

    capture_equal: bool = field(
        default=True, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """A card captures a single card or a set of 2+ cards of its own value."""

    capture_sum: int = field(
        default=0, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Also capture any set of 1+ cards that together with the played card adds up to
    this total (Scopa di Quindici: 15); 0 = off."""

    ace_takes_all: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """An Ace played while no Ace is on the table captures every table card (Asso
    Pigliatutto, Scopa d'Assi). With an Ace on the table it captures by the other rules."""

    ace_takes_all_scopa: bool = field(
        default=True, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """With :attr:`ace_takes_all`, clearing the table that way scores a scopa (Asso
    Pigliatutto: yes; Scopa d'Assi: no)."""

    ace_takes_itself: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """An Ace played to the empty table goes to the player's pile and the table stays
    empty (a Scopa d'Assi option); move ``(ace, 1 << ace)``."""

    max_capture_cards: int = field(
        default=0, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Most table cards one capture may take; 0 = no limit (booklet: 2)."""

    fewest_cards: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Among the captures a card can make, only those taking the fewest cards are legal
    (booklet; a Scopa di Quindici option)."""

    bonus_suit: int = field(
        default=COINS, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Suit of the "most coins" point and of the settebello (the Seven of this suit):
    coins/diamonds, or hearts (cups, suit 1) in Hurrikan."""

    prime_rule: str = field(
        default="primiera", metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """``"primiera"``: the best primiera scores the point; ``"sevens"``: most Sevens,
    ties broken by most Sixes, else nobody (booklet, Chkobba's barmila), reported
    under the ``seven_majority`` key. See also :attr:`primiera_by_counts`."""

    primiera_by_counts: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """The primiera point goes to the most Sevens, then Sixes, then Aces ... down the
    order of :attr:`primiera_values` (wikipedia's American variant "disliked by
    purists"); no four-suit requirement. (A field of its own, not a ``prime_rule``
    value, so that code knowing only the older values cannot mistake it.)"""

    primiera_all_suits: bool = field(
        default=True, metadata=backends(fast=True, french=True, openspiel=True, features=True, search=True)
    )
    """Only a side with a card of every suit can score the primiera (pagat: "a player or
    team that does not have at least one card in each suit cannot score for prime").
    ``False`` follows the booklet's table, whose row "None | 0" counts a missing suit as
    0, and wikipedia's example ("three sevens (3x21) and no cards of the fourth suit
    (sum=63)", ``french_52``): the side's primiera is the sum over the suits it has and
    can still win the point."""

    double_game_below: int = field(
        default=0, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Hurrikan: the winner wins a double game when every other side has fewer than
    this many points at the end; 0 = off."""

    re_bello: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """A point for the King of the bonus suit (pagat "Re Bello", wikipedia "Additional points")."""

    seven_of_cups: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """A point for the Seven of cups besides the settebello (wikipedia: Calabria)."""

    palle_del_cane: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """A point for all four Sevens (wikipedia: "Le palle del cane", Napoli)."""

    napola: str = field(
        default="", metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Points for a run of the bonus suit from its Ace (at least A-2-3): ``"pagat_6"`` one
    per card up to A..6; ``"pagat_9"`` up to 9 (A..Queen) and the whole suit a Napoleone
    that wins the game; ``"wikipedia"`` 3 for A-2-3 plus 1 per other card of the suit;
    ``""`` off. Key ``napola``."""

    scalette: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Scopa con le Scalette (pagat): scaletta bassa A-2-3 = 3, +1 per card up to the
    Queen; scaletta alta K-Q-J = 5, +1 per card down to the Two; all ten a Scala that
    wins the game. Keys ``scaletta_bassa``, ``scaletta_alta``."""

    all_coins_wins: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """A side taking every card of the bonus suit in a hand wins the game at once."""

    coins_reset: int = field(
        default=0, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Libyan: a side taking at least this many cards of the bonus suit (10: all, "sometimes
    eight") resets every other side's game score to 0 after the hand; 0 = off."""

    scopa_value: str = field(
        default="points", metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """What a scopa is worth: ``"points"`` (:attr:`scopa_points`), ``"card"`` the capture
    value of the sweeping card, ``"cards"`` the cards involved (taken + played) (Libyan)."""

    piva: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Piva: the Two of batons/clubs scores minus 5 (key ``piva``); scores may go negative."""

    bazzica_points: tuple[int, ...] = field(
        default=(), metadata=backends(fast=True, french=False, openspiel=True, features=True, search=False)
    )
    """Scopa Bazzica declarations, points for (a bazzica of three different ranks, a
    bazzica with a pair, a bazzicotto = three of a kind): ``(3, 3, 10)`` in Scopa
    Bazzica, ``(2, 3, 7)`` in Sbarazzina; ``()`` = no declarations. After every
    three-card deal each player whose hand qualifies decides, in turn order, whether
    to declare (showing the hand); only the best declaration of the deal scores, at
    once (see ``docs/rules.md``)."""

    hand_bonus_points: tuple[int, ...] = field(
        default=(), metadata=backends(fast=True, french=False, openspiel=True, features=True, search=False)
    )
    """Cirulla's hand bonuses, points for (three cards totalling less than 10, three of a
    kind): ``(3, 10)``; ``()`` = off. Unlike :attr:`bazzica_points` a hand is declared at its
    holder's first turn of each three-card deal, after the earlier players' cards of that round
    (wikipedia: "declared before the player holding them has played their first card"; see
    :attr:`declare_at_turn`), and every declaration scores at once (a hand that is both scores
    only the three of a kind). Every deal must be of three cards."""

    table_bonus: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Cirulla's dealer bonuses: an initial table totalling 15 goes to the dealer with one
    scopa, totalling 30 with two scope."""

    bonus_wildcard: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=False)
    )
    """Cirulla: the Seven of cups/hearts (card 16) stands for any card when that makes a
    hand bonus or a dealer bonus (for the bonuses only: it captures as a Seven)."""

    piccola_grande: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Cirulla: la piccola, A-2-3 of the bonus suit for 3, one more per card in sequence up
    to 6 (key ``piccola``); la grande, J-Q-K of the bonus suit for 5 (key ``grande``)."""

    redeal_aces: int = field(
        default=0, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """Deal again when the initial table holds at least this many Aces (Cirulla: 2); 0 = off."""

    redeal_next_dealer: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=True)
    )
    """A thrown-in deal is dealt again by the next dealer (Cirulla) instead of the same one."""

    claim_out: bool = field(
        default=False, metadata=backends(fast=True, french=False, openspiel=True, features=True, search=False)
    )
    """Chiamarsi fuori (pagat): on their turn a player may end the game by claiming that
    their side has reached the target with the points already certain; a wrong claim
    loses the game. The claim is ``(card, 1 << card)`` of the hand's highest card, in
    :meth:`~scopa_env.engine.game.Game.claim_pair` (not in ``legal_pairs``). Two sides only."""

    house_rules: tuple[str, ...] = field(
        default=(), metadata=backends(fast=False, french=False, openspiel=False, features=False, search=False)
    )
    """House rules registered as plug-ins by a package outside the kit
    (:mod:`scopa_env.engine.house_rules`: ``register_capture_rule``, ``register_scoring_extra``), by
    name, e.g. ``("king_takes_a_picture",)``, or ``house_rules=a/b`` in option strings; ``()`` = none
    (pagat: "There are numerous variants", and players agree on theirs in advance). A capture rule
    adds captures to the standard ones, a scoring extra adds points under its own key. The engine and
    the AEC env play every one; another backend plays one only where its registration declares it
    (``backends=("fast", ...)``) and else refuses it by name."""

    description: str = field(default="Standard Scopa (pagat.com, Wikipedia).", compare=False, metadata=label())
    """One line for listings."""

    def __post_init__(self) -> None:
        """Store a ``deal_schedules`` dict as sorted pairs, then validate every field (``ValueError``
        naming the first invalid one), group by group in a fixed order."""
        if isinstance(self.deal_schedules, dict):
            pairs = tuple(sorted((k, tuple(v)) for k, v in self.deal_schedules.items()))
            object.__setattr__(self, "deal_schedules", pairs)
        self._check_deck_and_players()
        self._check_field_types()
        self._check_house_rules()
        self._check_enumerated_values()
        self._check_scoring_points()
        self._check_captures_and_deal()
        self._check_declarations()
        self._check_claims_and_deal_bonuses()
        self._check_deck_family()

    def _check_deck_and_players(self) -> None:
        """Check the preset's name, its player counts and partnerships, and the deck (``ranks_per_suit``, ``ranks``)."""
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

    def _check_field_types(self) -> None:
        """Check the types and lower bounds of the int, bool and ``primiera_values`` fields."""
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

    def _check_house_rules(self) -> None:
        """Check that :attr:`house_rules` names distinct registered plug-ins (:mod:`scopa_env.engine.house_rules`)."""
        names = self.house_rules
        _check(
            isinstance(names, tuple) and all(isinstance(n, str) for n in names) and len(set(names)) == len(names),
            "house_rules",
            "must be a tuple of distinct names of registered house rules",
            names,
        )
        for name in names:
            if name not in house_rules.registered():
                raise ValueError(
                    f"Rules.house_rules names {name!r}, which is not a registered house rule; registered: "
                    f"{', '.join(house_rules.registered()) or 'none'} (import the package that registers it first)"
                )

    def _check_enumerated_values(self) -> None:
        """Check the fields that take one of a few values or a range (suits, prime rules, readings)."""
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

    def _check_scoring_points(self) -> None:
        """Check the extra scoring points against each other and against the deck's ranks."""
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
            self.capture_equal or self.capture_sum or self.ace_takes_all or house_rules.capture_rules(self.house_rules),
            "capture_equal",
            "is False and neither capture_sum, ace_takes_all nor a house capture rule is set, so no card could ever "
            "capture",
            self.capture_equal,
        )

    def _check_captures_and_deal(self) -> None:
        """Check that some card can capture, and the redeal, first-card and deal-schedule fields."""
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

    def _check_declarations(self) -> None:
        """Check the declaration systems (Bazzica, Cirulla's hand bonuses) and the bonus wildcard."""
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

    def _check_claims_and_deal_bonuses(self) -> None:
        """Check chiamarsi fuori, Cirulla's dealer bonuses and runs, and what combines with the first-card choice."""
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

    def _check_deck_family(self) -> None:
        """Check the 40-card-only fields against the deck, then every allowed player count (:meth:`check_players`)."""
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
            and not house_rules.capture_rules(self.house_rules)
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

    @property
    def declare_at_turn(self) -> bool:
        """True when a hand is declared at its holder's first turn of the deal (Cirulla's
        :attr:`hand_bonus_points`), not by every qualifying seat right after the deal
        (:attr:`bazzica_points`)."""
        return bool(self.hand_bonus_points)

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
        if self.hand_bonus_points and set(schedule or (self.hand_size,)) != {DECLARATION_CARDS}:
            raise ValueError(
                f"rules {self.name!r}: hand_bonus_points are declared at a player's first turn of a deal, so every "
                f"deal must be of three cards (wikipedia, Cirulla: 'Each player is dealt three cards'), but "
                f"{num_players} players get {schedule} cards per deal"
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

    def replace(self, **changes) -> Rules:
        """A copy with some fields changed (validated). Unknown fields raise ``ValueError``."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(f"unknown Rules field(s) {unknown}; valid fields: {sorted(names)}")
        return dataclasses.replace(self, **changes)

    def check_backend(self, backend: str) -> None:
        """Raise ``NotImplementedError`` naming this preset and the field if ``backend`` (one of
        :data:`BACKENDS`) does not play these rules: a field it does not support (:func:`supported_by`)
        holds another value than the standard game's, or a house rule was registered without it
        (:func:`scopa_env.engine.house_rules.check_backend`, naming the house rule)."""
        supported = supported_by(backend)
        for name in _FIELDS:
            value = getattr(self, name)
            if name == "house_rules":  # each plug-in declares its own backends
                house_rules.check_backend(value, backend, self.name)
                continue
            if name not in supported and value != getattr(STANDARD, name):
                raise NotImplementedError(
                    f"{backend} does not support rules preset {self.name!r}: field {name}={value!r} "
                    f"(see the field's declaration in scopa_env/engine/rules.py); use the Python engine"
                )


DECLARATION_CARDS = 3
"""pagat, Scopa Bazzica: declarations are made "immediately after a three-card deal"."""
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

_FIELDS = {f.name: f for f in dataclasses.fields(Rules)}
_BOOL_FIELDS = tuple(name for name, f in _FIELDS.items() if f.type == "bool")
"""The yes/no rules, read from the annotations (``from __future__ import annotations``: ``"bool"``)."""


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


def support_of(name: str) -> Support | None:
    """The :class:`Support` declared next to the :class:`Rules` field ``name`` (``None``: none declared)."""
    return _FIELDS[name].metadata.get("support")


@functools.cache
def supported_by(backend: str) -> tuple[str, ...]:
    """Names of the :class:`Rules` fields that ``backend`` (one of :data:`BACKENDS`) plays at every
    value, in field order, read from each field's declaration; a field without one is played by
    the engine and the env only."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    if backend in ("engine", "env"):
        return tuple(_FIELDS)
    return tuple(name for name in _FIELDS if (s := support_of(name)) is not None and getattr(s, backend))


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
    ``"standard,primiera_values=face"``; ``house_rules`` ``/``-separated names of registered house
    rules, e.g. ``"standard,house_rules=king_takes_a_picture/four_kings"``). The result is named by
    the whole string.
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
            elif key == "house_rules":
                changes[key] = tuple(v.strip() for v in raw.split("/"))
            else:
                changes[key] = tuple(_number(v) for v in raw.split("/"))
        except ValueError:
            raise ValueError(f"bad value {raw!r} for rules option {key!r} in {text!r}") from None
    return rules.replace(name=text, **changes)


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


_OPTION_FIELDS = frozenset(f.name for f in dataclasses.fields(Rules)) - {"name", "description", "deal_schedules"}


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
