"""Scopa as an OpenSpiel game: ``pyspiel.load_game("python_scopa", {...})``.

Importing this module registers the game (it needs the ``openspiel`` extra:
``pip install -e '.[openspiel]'``)::

    import pyspiel
    import scopa_env.openspiel.game  # registers "python_scopa"

    game = pyspiel.load_game("python_scopa", {"rules": "small", "players": 2})

The rules are the engine's (:class:`~scopa_env.engine.game.Game`); this module only turns the
deal into chance nodes and the engine's state into OpenSpiel's strings and tensors.

====================  ==========================================================================
parameter             meaning (default)
====================  ==========================================================================
``rules``             preset name or option string of :func:`~scopa_env.engine.rules.get_rules`
                      (``"standard"``)
``players``           seats, 2, 3, 4 or 6 (8 for ``french_52``); sides as the rules say: 4 and 6
                      play in two teams in the standard game (``2``)
``action_mode``       ``"move"``: one id per (card, captured set) of :mod:`scopa_env.engine.actions`;
                      ``"select"``: name the card, then the captured cards one at a time (``"move"``)
``episode``           ``"hand"``: one hand; ``"game"``: hands until a side wins (``"hand"``)
``reward``            ``"points"``: the side's hand points minus the mean of the other sides',
                      summed over the episode's hands; ``"game"``: +1 to the winning side, the
                      others share -1 (a hand episode is won by the side with strictly most hand
                      points; a tie at the top gives 0 to all) (``"points"``)
``max_hands``         a game episode still undecided after this many hands ends with 0 for the
                      ``"game"`` reward (``50``)
====================  ==========================================================================

Returns are zero-sum for every player count: a seat's return is its side's, and with
three sides the two losers get -1/2 each under ``reward="game"`` (the PettingZoo env gives
them -1).

Chance: the deal
    Each hand starts with chance nodes that deal the whole hand, as the engine's shuffle
    does: first the table cards, then, for each deal of the hand (the stock deals of the
    standard game included), each seat's cards in turn from the player after the dealer.
    A chance outcome is a card id (0..39; 0..51 for the 52-card deck of ``french_52``), and the cards of one table or hand come in
    ascending order, so each set is one chance path: its probability is
    ``C(a, m - 1) / C(b, m)`` for ``m`` cards still to deal to the set, ``a`` the undealt
    cards above the drawn one and ``b`` those above the set's previous card. Cards of a
    later deal stay hidden from everyone, their owner included, until the engine deals
    them.
    A table the rules throw in (three Kings ...) is never dealt: the table's outcomes are
    weighted by the number of completions the rules keep, so the deal has the
    distribution of the engine's deal after redeals. The thrown-in cards are shuffled
    back, so leaving them out hides nothing that matters for the rest of the hand.
    Where a redeal changes more than the cards (``redeal_next_dealer``: Cirulla's next
    dealer deals again; ``first_card_choice``: Chkobba's first card is asked again), the
    table is dealt unweighted and a thrown-in table is public: the hand is dealt again
    with new chance nodes after it (by the next dealer under ``redeal_next_dealer``).

Decisions of the deal (player actions, the AEC env's ids in both modes)
    Chkobba (``first_card_choice``): the deal starts with one chance node, the first card,
    drawn for the player after the dealer, who then keeps it (the self-mask move ``(card,
    1 << card)``; "select": name it, then name it again) or tables it (``(card, 0)``;
    "select": name it, then CONFIRM), in the engine's game of that moment
    (:meth:`Game.from_deal` with ``deciding=True``); the table and the hands follow as
    chance nodes, one card fewer for the holder (kept) or the table (tabled). A kept card
    is seen by its holder only; a tabled one by everyone. Declarations (``bazzica_points``
    / ``hand_bonus_points``): after each three-card deal the engine queues the seats that
    may declare (:attr:`Game.declare_queue`, public, as in :class:`PlayerView`); each
    declares (the self-mask move of the hand's highest card, or Cirulla's wildcard move
    naming the rank) or passes (:func:`~scopa_env.engine.scoring.declaring_pairs`). A declared
    hand is shown: it is in every player's strings and in the ``revealed`` planes of the
    tensors (:func:`~scopa_env.engine.observation.write_observation`). Cirulla's table bonus is
    the engine's (``Game._table_bonus``): no decision. Declaration points count in the
    "points" returns as in the env.

Strings and tensors (player ``p``)
    ``information_state_string``: perfect recall. The hand number, dealer and scores,
    thrown-in tables, the first card (``p``'s own) and its fate, the initial table,
    ``p``'s cards of every deal made so far, the seats to declare and every declaration
    (the shown hand) or pass, every play in order and ``p``'s own pending "select"
    choice; in game episodes the earlier hands the same way. Other hands and the stock
    appear as card counts only.
    ``observation_string``: ``p``'s :class:`~scopa_env.engine.game.PlayerView` in short
    notation (hand, table, piles, played cards, scope, scores, stock size).
    ``observation_tensor``: the kit's observation vector, laid out by
    :class:`~scopa_env.engine.observation.ObservationLayout` (``"observation"``, 376 floats
    for 2 players; 1,144 for ``french_52`` with 8 players, its card planes 52 wide).
    ``information_state_tensor``: the observation followed by ``"plays"``, this hand's
    plays in order (``[ply, 0, card]`` the played card, ``[ply, 1, card]`` the cards it
    took). Within a hand that is perfect recall; earlier hands of a game episode are
    summed up by the scores only (the string has them in full).
    At chance nodes both tensors are zeros: nobody acts while the cards are dealt.
    Card planes, ``plays`` and chance outcomes are :attr:`Rules.num_card_ids` wide (40, or
    52 for ``french_52``, whose strings write the 52-card deck's notation: ``10h``, ``Qs``,
    ``Kc``); "select" mode has ``num_card_ids + 1`` actions (CONFIRM last:
    :func:`~scopa_env.engine.actions.confirm_action`). The 40-card games are unchanged by the
    52-card deck (``tests/test_openspiel.py`` holds their fingerprints). ``french_52`` plays
    in both modes ("move": 72,752 ids).

``resample_from_infostate(p, sampler)`` deals the cards ``p`` cannot see again with the
kit's determinization (:meth:`~scopa_env.engine.game.PlayerView.determinize`) and replays the
history with them; the sampler is called once to seed it. Shown hands, thrown-in tables
and decisions stay; a kept first card (not ``p``'s) is one of its holder's first cards;
where a seat passed on a declaration its hand must be declarable again, so under those
rules draws are repeated until ``p``'s information state is the same (rejection). :func:`state_from_view` builds
a state at an agent's decision from a :class:`~scopa_env.engine.game.PlayerView` (the hidden
cards determinized): that is how an OpenSpiel bot plays as a kit agent
(:mod:`agents.openspiel_bot`).

:func:`export_efg` writes the whole tree of a small game (``rules="small"``: 138,600 decision
nodes) in Gambit's ``.efg`` format for ``pyspiel.load_efg_game``, so that OpenSpiel's C++ CFR and
exploitability run on an exact copy at C++ speed. The transitions live in :class:`Position`
(plain Python); :class:`ScopaState` is OpenSpiel's shell around one.

Every preset plays, the rules whose deal is more than a shuffle included (above).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyspiel

from scopa_env.engine.actions import (
    TAKE_ALL,
    MoveEnumeration,
    confirm_action,
    move_enumeration,
    num_select_actions,
    select_options,
)
from scopa_env.engine.cards import NUM_CARDS, RANK_OF, SUIT_OF, cards_of, format_card
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.observation import ObservationLayout, write_observation
from scopa_env.engine.rules import ALLOWED_PLAYER_COUNTS, WILDCARD, Rules, get_rules

GAME_NAME = "python_scopa"
ACTION_MODES = ("move", "select")
EPISODES = ("hand", "game")
REWARDS = ("points", "game")
DEFAULT_PARAMS: dict[str, object] = {
    "rules": "standard",
    "players": 2,
    "action_mode": "move",
    "episode": "hand",
    "reward": "points",
    "max_hands": 50,
}
"""The game's parameters and their defaults (see the module docstring)."""


@functools.lru_cache(maxsize=64)
def _card_texts(rules: Rules) -> tuple[str, ...]:
    """Short notation of every card id of ``rules``' deck (the 52-card deck's for ``french_52``)."""
    return tuple(format_card(c, rules.ranks_per_suit) for c in range(rules.num_card_ids))


@functools.lru_cache(maxsize=64)
def _card_order(rules: Rules) -> tuple[int, ...] | None:
    """Sort key of each card id for strings: ``None`` for the 40-card deck (ids are in suit, rank
    order), else the rank of ``(suit, rank)``, as :func:`~scopa_env.engine.cards.format_cards` sorts the
    52-card deck (its pictures, ids 40..51, after each suit's 10)."""
    if rules.num_card_ids == NUM_CARDS:
        return None
    ids = sorted(range(rules.num_card_ids), key=lambda c: (SUIT_OF[c], RANK_OF[c]))
    order = [0] * len(ids)
    for k, c in enumerate(ids):
        order[c] = k
    return tuple(order)


def _ids_text(setup: Setup, cards: Sequence[int]) -> str:
    """Short notation of cards (like :func:`~scopa_env.engine.cards.format_cards`, without its checks)."""
    text, order = setup.card_text, setup.card_order
    if order is not None:
        cards = sorted(cards, key=order.__getitem__)
    return " ".join([text[c] for c in cards])


def _cards_text(setup: Setup, mask: int) -> str:
    """Short notation of a bitmask of cards."""
    return _ids_text(setup, cards_of(mask))


TABLE = -1
"""Owner of the table's slot in a hand's deal (seats are 0..n-1)."""
FIRST = -2
"""Owner of the slot of Chkobba's first card (:attr:`Rules.first_card_choice`): one card, drawn for the
player after the dealer, who keeps it or puts it on the table before the rest is dealt."""
MAX_REDEALS_COUNTED = 20
"""Redeals of one hand counted in ``max_game_length`` under ``first_card_choice`` (each one asks the
first-card question again); more have a probability below 1e-35 (a throw-in is about 1.6%)."""

CATEGORY_POINTS = 5
"""Hand points outside scope and extras: cards, coins, settebello, primiera (or most Sevens) and one spare."""
EXTRA_POINTS_BOUND = 40
"""A bound on the points a side's scoring extras can add in one hand (napola, scalette, ...): only
used for OpenSpiel's ``min_utility`` / ``max_utility``, which need not be tight."""

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Scopa (scopa-rl engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=max(ALLOWED_PLAYER_COUNTS),
    min_num_players=min(ALLOWED_PLAYER_COUNTS),
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=False,
    parameter_specification=DEFAULT_PARAMS,
)


def check_bridge_rules(rules: Rules) -> None:
    """Every rules object plays in the bridge: kept for callers that check rules first, it raises nothing.

    The deals that are more than a shuffle are modelled (see the module docstring): Chkobba's first
    card (``first_card_choice``), declarations (``bazzica_points`` / ``hand_bonus_points``), Cirulla's
    table bonus and ``redeal_next_dealer``.
    """


# --- static facts of one parameter set -----------------------------------------------------


@dataclass(frozen=True, eq=False)
class Setup:
    """Everything fixed by the game's parameters; shared by all states of a game."""

    rules: Rules
    num_players: int
    action_mode: str
    episode: str
    reward: str
    max_hands: int
    schedule: tuple[int, ...] = field(init=False)
    """Cards each seat gets in each deal of a hand."""
    deal_plies: tuple[int, ...] = field(init=False)
    """Plays of the hand made before each deal (deal 0 at ply 0)."""
    plies_per_hand: int = field(init=False)
    side_of: tuple[int, ...] = field(init=False)
    num_sides: int = field(init=False)
    layout: ObservationLayout = field(init=False)
    moves: MoveEnumeration | None = field(init=False)
    num_actions: int = field(init=False)
    num_cards: int = field(init=False)
    """Card ids of the deck (:attr:`Rules.num_card_ids`: 40, or 52 for ``french_52``): chance outcomes and tensor planes."""
    confirm: int = field(init=False)
    """"select" mode's CONFIRM action (:func:`~scopa_env.engine.actions.confirm_action`: 40, or 52)."""
    card_text: tuple[str, ...] = field(init=False)
    """Short notation of each card id (French notation for the 52-card deck: ``10h``, ``Qs``)."""
    card_order: tuple[int, ...] | None = field(init=False)
    """Sort key of each card id in strings (by suit, then rank); ``None``: by id (the 40-card deck)."""
    explicit_redeal: bool = field(init=False)
    """A thrown-in table is dealt (its chance nodes) and the hand dealt again after it
    (``redeal_next_dealer``: the next dealer deals); else thrown-in tables are never dealt."""

    def __post_init__(self) -> None:
        put = functools.partial(object.__setattr__, self)
        n = self.num_players
        put("schedule", self.rules.schedule(n))
        put("deal_plies", tuple(n * sum(self.schedule[:k]) for k in range(len(self.schedule))))
        put("plies_per_hand", n * sum(self.schedule))
        put("side_of", self.rules.sides(n))
        put("num_sides", max(self.side_of) + 1)
        put("layout", ObservationLayout.for_rules(n, self.rules))
        put("moves", move_enumeration(self.rules) if self.action_mode == "move" else None)
        put("num_actions", len(self.moves) if self.moves is not None else num_select_actions(self.rules))
        put("num_cards", self.rules.num_card_ids)
        put("confirm", confirm_action(self.rules))
        put("card_text", _card_texts(self.rules))
        put("card_order", _card_order(self.rules))
        put("explicit_redeal", self.rules.redeal_next_dealer or self.rules.first_card_choice)

    def __deepcopy__(self, memo) -> Setup:
        return self  # immutable: states share it (OpenSpiel clones states with deepcopy)

    def __reduce__(self):
        return (_setup, (self.rules, self.num_players, self.action_mode, self.episode, self.reward, self.max_hands))

    def slots(self, dealer: int, keep: bool | None = None) -> list[tuple[int, int]]:
        """``(owner, cards)`` of each set a hand's deal fills, in dealing order (owner ``TABLE`` or a seat).

        Under ``first_card_choice`` the deal starts with the first card alone (owner ``FIRST``);
        ``keep`` (the decision taken) gives the rest: one card fewer for the player after the
        dealer (kept) or for the table (tabled).
        """
        n = self.num_players
        if self.rules.first_card_choice and keep is None:
            return [(FIRST, 1)]
        table = self.rules.table_size - (keep is False)
        out = [(TABLE, table)] if table else []
        for k, size in enumerate(self.schedule):
            out += [((dealer + 1 + i) % n, size - (k == 0 and i == 0 and keep is True)) for i in range(n)]
        return out

    def table_completions(self, partial: int, last: int, need: int) -> int:
        """Tables the rules keep among those completing ``partial`` with ``need`` cards above ``last``."""
        return _table_completions(self.rules, partial, last, need)

    def point_bound(self) -> float:
        """A bound on one side's points in one hand (for OpenSpiel's utility range)."""
        r = self.rules
        scopa = {"points": r.scopa_points, "card": r.ranks_per_suit, "cards": len(r.deck)}[r.scopa_value]
        declared = max((*r.bazzica_points, *r.hand_bonus_points), default=0) * self.num_players * len(self.schedule)
        bonus = 2 * scopa if r.table_bonus else 0  # Cirulla: a table of 30 gives the dealer two scope
        return float(CATEGORY_POINTS + EXTRA_POINTS_BOUND + self.plies_per_hand * scopa + bonus + declared)

    def max_decisions_per_hand(self) -> int:
        """Most decision nodes in one hand: one per play in "move" mode; in "select" mode also one per
        captured card and a confirmation; under declarations one more per seat and deal (two in
        "select" mode: the card, then the card again or CONFIRM)."""
        declare = self.num_players * len(self.schedule) if self.rules.declarations else 0
        if self.rules.first_card_choice:
            declare += 1 + MAX_REDEALS_COUNTED
        if self.action_mode == "move":
            return self.plies_per_hand + declare
        return 2 * self.plies_per_hand + len(self.rules.deck) + 2 * declare


@functools.lru_cache(maxsize=8)
def _redeal_judge(rules: Rules) -> Game:
    """A game of ``rules`` whose :meth:`~scopa_env.engine.game.Game.needs_redeal` judges initial tables."""
    return Game(min(rules.player_counts), rules, seed=0)


@functools.lru_cache(maxsize=1 << 16)
def _table_completions(rules: Rules, partial: int, last: int, need: int) -> int:
    """How many sets of ``need`` deck cards above ``last`` and outside ``partial`` complete it to a
    table the rules keep (one that :meth:`~scopa_env.engine.game.Game.needs_redeal` does not throw in)."""
    above = [1 << c for c in rules.deck if c > last and not partial >> c & 1]
    judge = _redeal_judge(rules).needs_redeal
    return sum(1 for extra in itertools.combinations(above, need) if not judge(partial | sum(extra)))


@functools.lru_cache(maxsize=32)
def _setup(rules: Rules, num_players: int, action_mode: str, episode: str, reward: str, max_hands: int) -> Setup:
    return Setup(rules, num_players, action_mode, episode, reward, max_hands)


def parse_params(params: dict | None) -> Setup:
    """Check the game's parameters (one-line ``ValueError`` on a bad one) and return the :class:`Setup`."""
    p = dict(DEFAULT_PARAMS)
    unknown = sorted(set(params or {}) - set(p))
    if unknown:
        raise ValueError(f"unknown python_scopa parameter(s) {unknown}; known: {sorted(p)}")
    p.update(params or {})
    rules = get_rules(p["rules"])
    check_bridge_rules(rules)
    n = p["players"]
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"players must be an int, got {n!r}")
    rules.check_players(n)
    for name, allowed in (("action_mode", ACTION_MODES), ("episode", EPISODES), ("reward", REWARDS)):
        if p[name] not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {p[name]!r}")
    if isinstance(p["max_hands"], bool) or not isinstance(p["max_hands"], int) or p["max_hands"] < 1:
        raise ValueError(f"max_hands must be an int >= 1, got {p['max_hands']!r}")
    return _setup(rules, n, p["action_mode"], p["episode"], p["reward"], p["max_hands"])


# --- the game -----------------------------------------------------------------------------


class ScopaGame(pyspiel.Game):
    """The OpenSpiel game (static facts); build it with ``pyspiel.load_game("python_scopa", params)``."""

    def __init__(self, params: dict | None = None) -> None:
        setup = parse_params(params)
        hands = setup.max_hands if setup.episode == "game" else 1
        bound = setup.point_bound() * hands if setup.reward == "points" else 1.0
        low = -bound if setup.reward == "points" or setup.num_sides == 2 else -1.0 / (setup.num_sides - 1)
        info = pyspiel.GameInfo(
            num_distinct_actions=setup.num_actions,
            max_chance_outcomes=setup.num_cards,
            num_players=setup.num_players,
            min_utility=low,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=setup.max_decisions_per_hand() * hands,
        )
        super().__init__(GAME_TYPE, info, {**DEFAULT_PARAMS, **(params or {})})
        self.setup = setup

    def new_initial_state(self) -> ScopaState:
        return ScopaState(self)

    def state_at(self, position: Position) -> ScopaState:
        """A state over ``position`` (a copy) whose OpenSpiel history holds ``position.history``."""
        state = ScopaState(self, Position.initial(self.setup, position.start))
        for action in position.history:
            state.apply_action(action)
        return state

    def make_py_observer(self, iig_obs_type=None, params=None) -> ScopaObserver:
        if params:
            raise ValueError(f"python_scopa observers take no parameters, got {params}")
        return ScopaObserver(self.setup, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


# --- positions: the game's transitions in plain Python ----------------------------------------


def _copy_game(game: Game) -> Game:
    """A copy of a hand in play: its lists copied, the rest shared.

    Unlike :meth:`Game.clone` the generator is shared, not copied (copying it is most of the
    cost): these games never shuffle, as every hand is built by ``Game.from_deal`` with
    ``auto_next_hand=False`` and ``next_hand`` is never called.
    """
    copy = Game.__new__(Game)
    attrs = copy.__dict__
    attrs.update(game.__dict__)
    for name, value in attrs.items():
        if type(value) is list:
            attrs[name] = value[:]
    return copy


class Position:
    """One history of the OpenSpiel game, in plain Python: the deal in progress or the engine's game.

    :class:`ScopaState` is a thin OpenSpiel shell around one; tree walks (:func:`export_efg`)
    and replays (:meth:`ScopaState.resample_from_infostate`) use positions directly, which
    is several times faster than going through OpenSpiel's state objects.
    """

    __slots__ = (
        "setup",
        "start",
        "hand",
        "dealer",
        "scores",
        "slots",
        "dealt",
        "slot",
        "game",
        "pending",
        "selected",
        "returns",
        "over",
        "past",
        "texts",
        "history",
        "hand_start",
        "deal_start",
        "thrown",
        "decisions",
        "first",
    )

    setup: Setup
    start: tuple[int, tuple[int, ...], int]
    """Dealer, scores and number of hands played before this history's first hand."""
    hand: int
    """Hands finished in this history."""
    dealer: int
    scores: list[int]
    """Per side, the game score before the current hand."""
    slots: list[tuple[int, int]]
    """``(owner, cards)`` of each set of the current hand's deal (:meth:`Setup.slots`)."""
    dealt: list[list[int]]
    """Per slot, the cards dealt to it so far, ascending."""
    slot: int
    """Index of the slot being dealt; ``len(slots)`` once the hand is dealt."""
    game: Game | None
    """The engine's game of the current hand, ``None`` while it is dealt."""
    pending: int | None
    """"select" mode: the card chosen, its captures not yet complete."""
    selected: int
    """"select" mode: the table cards chosen so far (bitmask)."""
    returns: list[float]
    over: bool
    past: list[str]
    """Per player, the information-state text of the finished hands."""
    texts: list[str]
    """Per player, the information-state text of the current hand's plays so far."""
    history: list[int]
    """Every action applied, chance outcomes included (OpenSpiel's ``history()``)."""
    hand_start: int
    """Index in :attr:`history` of the current hand's first deal action."""
    deal_start: int
    """Index in :attr:`history` of the first action of the current hand's last deal (after
    thrown-in tables of ``redeal_next_dealer`` rules; else :attr:`hand_start`)."""
    thrown: tuple[str, ...]
    """Per player, this hand's thrown-in deals as that player saw them (who dealt, the first card
    and its fate under ``first_card_choice``, the table)."""
    decisions: tuple[tuple[int, int, int], ...]
    """This hand's declaration decisions, ``(plays before it, seat, captured mask)`` (0: passed)."""
    first: tuple[int, bool] | None
    """``first_card_choice``: the current deal's first card and whether it was kept; ``None`` before
    the decision (and under other rules)."""

    @classmethod
    def initial(cls, setup: Setup, start: tuple[int, Sequence[int], int] | None = None) -> Position:
        """The start of a history: the first hand about to be dealt.

        ``start`` is ``(dealer, scores, hands_played)``; default the first hand of a game
        (dealer the last seat, scores 0).
        """
        pos = cls.__new__(cls)
        dealer, scores, first_hand = start or (setup.num_players - 1, (0,) * setup.num_sides, 0)
        pos.setup, pos.start = setup, (dealer, tuple(scores), first_hand)
        pos.hand, pos.dealer, pos.scores = 0, dealer, list(scores)
        pos.pending, pos.selected = None, 0
        pos.returns, pos.over = [0.0] * setup.num_players, False
        pos.past = [""] * setup.num_players
        pos.history = []
        pos._start_hand()
        return pos

    def copy(self) -> Position:
        new = Position.__new__(Position)
        new.setup, new.start, new.hand, new.dealer = self.setup, self.start, self.hand, self.dealer
        new.scores = self.scores  # replaced, never mutated
        new.slots = self.slots  # replaced, never mutated
        new.dealt = [cards[:] for cards in self.dealt] if self.game is None else self.dealt
        new.slot = self.slot
        new.game = None if self.game is None else _copy_game(self.game)
        new.pending, new.selected = self.pending, self.selected
        new.returns, new.over = self.returns[:], self.over
        new.past, new.texts = self.past, self.texts  # replaced, never mutated
        new.history, new.hand_start = self.history[:], self.hand_start
        new.deal_start, new.thrown, new.decisions = self.deal_start, self.thrown, self.decisions
        new.first = self.first
        return new

    def __deepcopy__(self, memo) -> Position:
        return self.copy()  # OpenSpiel clones a Python state by deep-copying its attributes

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def _cards(self, mask: int) -> str:
        return _cards_text(self.setup, mask)

    def _ids(self, cards: Sequence[int]) -> str:
        return _ids_text(self.setup, cards)

    # --- dealing ----------------------------------------------------------------------------

    def _start_hand(self) -> None:
        self.hand_start = len(self.history)
        self.thrown = ("",) * self.setup.num_players
        self.decisions = ()
        self._start_deal()

    def _start_deal(self) -> None:
        self.slots = self.setup.slots(self.dealer)
        self.dealt = [[] for _ in self.slots]
        self.slot = 0
        self.game = None
        self.texts = []
        self.first = None
        self.deal_start = len(self.history)

    def _hand_head(self, player: int) -> str:
        return f"hand {self.start[2] + self.hand + 1} {self.thrown[player]}dealer {self.dealer}"

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card of the slot being dealt, with its probability (see the module docstring)."""
        setup = self.setup
        owner, size = self.slots[self.slot]
        cards = self.dealt[self.slot]
        need = size - len(cards)
        last = cards[-1] if cards else -1
        used = 0 if self.first is None else 1 << self.first[0]
        for dealt in self.dealt[: self.slot + 1]:
            for c in dealt:
                used |= 1 << c
        pool = [c for c in setup.rules.deck if c > last and not used >> c & 1]
        if owner == TABLE and not setup.explicit_redeal:
            partial = sum(1 << c for c in cards)
            total = setup.table_completions(partial, last, need)
            weights = [(c, setup.table_completions(partial | 1 << c, c, need - 1)) for c in pool]
            return [(c, w / total) for c, w in weights if w]
        total = math.comb(len(pool), need)
        return [(c, math.comb(len(pool) - 1 - k, need - 1) / total) for k, c in enumerate(pool[: len(pool) - need + 1])]

    def _deal(self, card: int) -> None:
        cards = self.dealt[self.slot]
        cards.append(card)
        if len(cards) == self.slots[self.slot][1]:
            owner = self.slots[self.slot][0]
            if owner == FIRST:
                self._first_card(card)
                return
            if owner == TABLE and self.setup.explicit_redeal and self._thrown_in(cards):
                return
            self.slot += 1
            if self.slot == len(self.slots):
                self._begin_play()

    def _thrown_in(self, cards: list[int]) -> bool:
        """``redeal_next_dealer`` and ``first_card_choice`` rules: a table the engine throws in
        (:meth:`Game.needs_redeal`) is public; the hand is dealt again (new chance nodes), by the next
        dealer under ``redeal_next_dealer``, with a new first card under ``first_card_choice``."""
        rules = self.setup.rules
        table = sorted(cards + [self.first[0]]) if self.first is not None and not self.first[1] else cards
        if not _redeal_judge(rules).needs_redeal(sum(1 << c for c in table)):
            return False
        if self.first is not None:
            head = len(f"hand {self.start[2] + self.hand + 1} ")
            self.thrown = tuple(f"{t[head:]} | table {self._ids(table)} thrown in, " for t in self.texts)
        else:
            self.thrown = tuple(f"{t}dealer {self.dealer} table {self._ids(table)} thrown in, " for t in self.thrown)
        if rules.redeal_next_dealer:  # Cirulla: "dealt again by the next dealer"
            self.dealer = (self.dealer + 1) % self.setup.num_players
        self._start_deal()
        return True

    def _deals(self) -> tuple[list[int], list[list[list[int]]]]:
        """The table and, per deal of the hand, per seat, the cards of the complete deal (Chkobba's
        first card where it went)."""
        n = self.setup.num_players
        table: list[int] = []
        deals: list[list[list[int]]] = [[[] for _ in range(n)] for _ in self.setup.schedule]
        k = 0
        for (owner, _), cards in zip(self.slots, self.dealt):
            if owner == TABLE:
                table = cards
            else:
                deals[k // n][owner] = cards
                k += 1
        if self.first is not None:
            card, keep = self.first
            if keep:
                cutter = (self.dealer + 1) % n
                deals[0][cutter] = sorted(deals[0][cutter] + [card])
            else:
                table = sorted(table + [card])
        return table, deals

    def _first_card(self, card: int) -> None:
        """Chkobba: the first card is drawn for the player after the dealer, who decides on it in the
        engine's game of that moment (:meth:`Game.from_deal` with ``deciding=True``; the rest of the
        deck stands in for the stock, whose order is dealt by the chance nodes after the decision)."""
        setup = self.setup
        n = setup.num_players
        cutter = (self.dealer + 1) % n
        game = Game.from_deal(
            hands=[[card] if s == cutter else [] for s in range(n)],
            table=[],
            stock=[c for c in setup.rules.deck if c != card],
            dealer=self.dealer,
            scores=self.scores,
            rules=setup.rules,
            seed=0,
            auto_next_hand=False,
            deciding=True,
        )
        game.hand_number = self.start[2] + self.hand
        self.game = game
        scores = "/".join(map(str, self.scores))
        self.texts = [
            f"{self._hand_head(p)} scores {scores} | first card p{cutter}"
            + (f" {setup.card_text[card]}" if p == cutter else "")
            for p in range(n)
        ]

    def _decide_first(self, seat: int, card: int, captured: int) -> None:
        """Chkobba's first card kept (the self-mask move) or put on the table (public); the rest is dealt."""
        keep = captured != 0
        part = f" | p{seat}:keeps" if keep else f" | p{seat}:tables {self.setup.card_text[card]}"
        texts = [t + part for t in self.texts]
        self.slots = self.setup.slots(self.dealer, keep)
        self.dealt = [[] for _ in self.slots]
        self.slot = 0
        self.game = None
        self.first = (card, keep)
        self.texts = texts

    def _begin_play(self) -> None:
        """The deal is complete: the engine takes over, with the later deals as its stock."""
        setup = self.setup
        n = setup.num_players
        table, deals = self._deals()
        order = [(self.dealer + 1 + i) % n for i in range(n)]
        stock: list[int] = []
        for later, size in zip(deals[1:], setup.schedule[1:]):
            stock += [later[order[i % n]][i // n] for i in range(n * size)]
        game = Game.from_deal(
            hands=deals[0],
            table=table,
            stock=stock,
            dealer=self.dealer,
            scores=self.scores,
            rules=setup.rules,
            seed=0,
            auto_next_hand=False,
        )
        game.hand_number = self.start[2] + self.hand
        game.open_hand()  # the engine's own step after a deal: Cirulla's table bonus, the declarations
        self.game = game
        tail = f" | table {self._ids(table)}" if table else ""
        if any(game.table_bonus):
            tail += f" | table bonus {'/'.join(map(str, game.table_bonus))}"
        if self.first is not None:  # the first card's texts go on
            heads = [t + tail for t in self.texts]
        else:
            scores = "/".join(map(str, self.scores))
            heads = [f"{self._hand_head(p)} scores {scores}{tail}" for p in range(n)]
        self.texts = [f"{heads[p]} | {self._deal_text(0, p)}{self._queue_text()}" for p in range(n)]

    def _queue_text(self) -> str:
        """The seats that decide on a declaration after a deal (public, as the engine's
        :attr:`PlayerView.declare_queue`); empty where nobody does."""
        queue = self.game.declare_queue
        return " | to declare " + " ".join(f"p{s}" for s in queue) if queue else ""

    def _deal_text(self, deal: int, player: int) -> str:
        """One deal as ``player`` sees it: its own cards, a count for the other seats."""
        _, deals = self._deals()
        n = self.setup.num_players
        seats = [(self.dealer + 1 + i) % n for i in range(n)]
        return " | ".join(f"p{s} {self._ids(deals[deal][s]) if s == player else len(deals[deal][s])}" for s in seats)

    # --- play ---------------------------------------------------------------------------------

    def current_player(self) -> int:
        if self.over:
            return pyspiel.PlayerId.TERMINAL
        if self.game is None:
            return pyspiel.PlayerId.CHANCE
        return self.game.current

    def legal_actions(self) -> list[int]:
        """Legal actions of the player to move (ascending), or the chance outcomes' cards."""
        if self.over:
            return []
        if self.game is None:
            return [c for c, _ in self.chance_outcomes()]
        game, moves = self.game, self.setup.moves
        pairs = game.action_pairs()
        if moves is not None:
            return sorted(moves.ids(pairs, game.table))
        if self.pending is None:
            return sorted({c for c, _ in pairs})
        nxt, can_confirm, _ = select_options(self._outcomes(self.pending), self.selected)
        return nxt + [self.setup.confirm] if can_confirm else nxt

    def _outcomes(self, card: int) -> list[int]:
        return [mask for c, mask in self.game.action_pairs() if c == card]

    def apply(self, action: int) -> None:
        """Apply a legal action (a dealt card at chance nodes); the caller checks legality."""
        self.history.append(action)
        if self.game is None:
            self._deal(action)
            return
        move = self._resolve(action)
        if move is not None:
            self._play(*move)

    def _resolve(self, action: int) -> tuple[int, int] | None:
        """The ``(card, captured_mask)`` to play now, or ``None`` while a "select" choice goes on."""
        moves = self.setup.moves
        if moves is not None:
            card, mask = moves.pairs[action]
            return (card, self.game.table) if mask == TAKE_ALL else (card, mask)
        if self.pending is None:
            outcomes = self._outcomes(action)
            if len(outcomes) == 1:
                return action, outcomes[0]
            self.pending, self.selected = action, 0
            return None
        if action == self.setup.confirm:
            return self.pending, self.selected
        self.selected |= 1 << action
        _, _, candidates = select_options(self._outcomes(self.pending), self.selected)
        return (self.pending, candidates[0]) if len(candidates) == 1 else None

    def _play(self, card: int, captured: int) -> None:
        setup = self.setup
        self.pending, self.selected = None, 0
        game = self.game
        seat = game.current
        if game.declare_queue:
            self._declare(seat, card, captured)
            return
        if game.deciding:
            self._decide_first(seat, card, captured)
            return
        game.play_pair(card, captured)
        took = f">{self._cards(captured)}" if captured else ""
        part = f" | p{seat}:{self.setup.card_text[card]}{took}"
        texts = [t + part for t in self.texts]
        plies = len(game.history)
        if plies in setup.deal_plies and not game.hand_over:
            deal = setup.deal_plies.index(plies)
            queue = self._queue_text()
            texts = [f"{t} | {self._deal_text(deal, p)}{queue}" for p, t in enumerate(texts)]
        self.texts = texts
        if game.hand_over:
            self._end_hand()

    def _declare(self, seat: int, card: int, captured: int) -> None:
        """A declaration decision (the engine's :meth:`Game.play_pair`): declaring shows the hand to
        every player (and, for Cirulla's wildcard, the rank it stands for); passing shows nothing."""
        game = self.game
        wild = game.wild_rank
        game.play_pair(card, captured)
        self.decisions += ((len(game.history), seat, captured),)
        if captured:
            part = f" | p{seat}:declares {self._cards(game.revealed[seat])}"
            if game.wild_rank != wild:
                part += f" wild {game.wild_rank}"
        else:
            part = f" | p{seat}:passes"
        self.texts = [t + part for t in self.texts]

    def _end_hand(self) -> None:
        setup, game = self.setup, self.game
        totals = [row["total"] for row in game.hand_result.hand_score]
        if setup.rules.declarations:
            # Declarations scored when the deal's decisions closed, outside hand_score's total (as the env counts them).
            totals = [t + sum(d.values()) for t, d in zip(totals, game.hand_result.declared)]
        s = setup.num_sides
        game_over = game.winner is not None or self.hand + 1 >= setup.max_hands
        if setup.reward == "points":
            side_returns = [t - (sum(totals) - t) / (s - 1) for t in totals]
        elif setup.episode == "hand":
            best = max(totals)
            side_returns = _win_returns(totals.index(best) if totals.count(best) == 1 else None, s)
        else:
            side_returns = _win_returns(game.winner, s) if game_over else [0.0] * s
        for seat in range(setup.num_players):
            self.returns[seat] += side_returns[setup.side_of[seat]]
        if setup.episode == "hand" or game_over:
            self.over = True
            return
        self.past = [past + text + "\n" for past, text in zip(self.past, self.texts)]
        self.hand += 1
        self.scores = list(game.scores)
        self.dealer = (self.dealer + 1) % setup.num_players
        self._start_hand()

    # --- what a player knows -----------------------------------------------------------------

    def info_text(self, player: int) -> str:
        """``player``'s perfect-recall information state (see the module docstring)."""
        if self.game is None:
            current = self._dealing_text(player)
        else:
            current = self.texts[player]
            if self.pending is not None and player == self.game.current:  # the others see the card once played
                current += f" | choosing {self.setup.card_text[self.pending]}>{self._cards(self.selected)}"
        return f"p{player}\n{self.past[player]}{current}"

    def _dealing_text(self, player: int) -> str:
        """The deal in progress: the table and ``player``'s cards of the first deal so far."""
        n = self.setup.num_players
        if self.texts:  # Chkobba: the first card and its fate
            parts = [self.texts[player] + " | dealing"]
        else:
            parts = [f"{self._hand_head(player)} dealing"]
        k = 0
        for (owner, _), cards in zip(self.slots, self.dealt):
            if owner == TABLE:
                parts.append(f"table {self._ids(cards)}")
            elif owner != FIRST and k < n:
                parts.append(f"p{owner} {self._ids(cards) if owner == player else len(cards)}")
                k += 1
        return " | ".join(parts)

    def observation_text(self, player: int) -> str:
        """``player``'s view of the position in short notation (imperfect recall)."""
        game = self.game
        if game is None:
            return f"p{player} dealing"
        v = game.view(player)
        parts = [
            f"p{player} to move p{v.current} dealer p{v.dealer}",
            f"hand {self._cards(v.hand)}",
            f"table {self._cards(v.table)}",
            "piles " + " / ".join(self._cards(p) for p in v.piles),
            "played " + " / ".join(self._cards(p) for p in v.played),
            f"scope {'/'.join(map(str, v.scope))} scores {'/'.join(map(str, v.scores))} stock {v.stock_count}",
        ]
        if self.setup.rules.declarations:
            parts += [f"shown p{s} {self._cards(r)}" for s, r in enumerate(v.revealed) if r]
            if v.wild_rank:
                parts.append(f"wild {v.wild_rank}")
            if v.declare_queue:
                parts.append("declaring " + " ".join(f"p{s}" for s in v.declare_queue))
        if self.pending is not None and player == v.current:
            parts.append(f"choosing {self.setup.card_text[self.pending]}>{self._cards(self.selected)}")
        return " | ".join(parts)

    def action_text(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {self.setup.card_text[action]}"
        moves = self.setup.moves
        game = self.game
        if moves is not None and game is not None and game.declare_queue and player == game.current:
            card, mask = moves.pair(action, game.table)
            return "pass" if mask == 0 else f"declare {self.setup.card_text[card]}>{self._cards(mask)}"
        if moves is not None:
            card, mask = moves.pairs[action]
            return f"{self.setup.card_text[card]} takes the table" if mask == TAKE_ALL else str(moves.decode(action))
        return "confirm" if action == self.setup.confirm else self.setup.card_text[action]

    def __str__(self) -> str:
        head = f"hand {self.start[2] + self.hand + 1}, dealer {self.dealer}, scores {self.scores}"
        if self.game is None:
            dealt = "; ".join(
                f"{ {TABLE: 'table', FIRST: 'first card'}.get(owner, f'p{owner}') }: {self._ids(cards)}"
                for (owner, _), cards in zip(self.slots, self.dealt)
                if cards
            )
            return f"{head}; dealing: {dealt}"
        text = f"{head}; {self.game!r}"
        return text if self.pending is None else f"{text}; choosing {self.setup.card_text[self.pending]}"


def _win_returns(winner: int | None, num_sides: int) -> list[float]:
    """+1 to the winning side, -1 shared by the others (zero-sum); 0 to all without a winner."""
    if winner is None:
        return [0.0] * num_sides
    return [1.0 if s == winner else -1.0 / (num_sides - 1) for s in range(num_sides)]


# --- the OpenSpiel state ------------------------------------------------------------------


class ScopaState(pyspiel.State):
    """The OpenSpiel state: a shell over a :class:`Position`."""

    def __init__(self, game: ScopaGame, position: Position | None = None) -> None:
        super().__init__(game)
        self._pos = position if position is not None else Position.initial(game.setup)

    @property
    def position(self) -> Position:
        """The position (read it; change it only through ``apply_action``)."""
        return self._pos

    @property
    def engine(self) -> Game | None:
        """The engine's game of the hand being played (``None`` while it is dealt). Read only."""
        return self._pos.game

    def current_player(self) -> int:
        return self._pos.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        return self._pos.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._pos.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self._pos.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return self._pos.action_text(player, int(action))

    def is_terminal(self) -> bool:
        return self._pos.over

    def returns(self) -> list[float]:
        pos = self._pos
        return pos.returns[:] if pos.over else [0.0] * pos.setup.num_players

    def __str__(self) -> str:
        return str(self._pos)

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float] | None = None):
        """A state ``player_id`` cannot tell from this one: the cards it cannot see dealt again.

        Args:
            player_id: the seat whose information is kept.
            probability_sampler: OpenSpiel's sampler (a callable returning a float in [0, 1));
                called once, to seed the deal. ``None`` uses fresh entropy.

        Raises:
            ValueError: at a chance node (a deal in progress) or at the end.
        """
        pos = self._pos
        if pos.game is None or pos.over:
            raise ValueError("resample_from_infostate needs a decision node (not a deal in progress or the end)")
        seed = None if probability_sampler is None else int(probability_sampler() * 2**53)
        return self.get_game().state_at(_resampled(pos, player_id, np.random.default_rng(seed)))


RESAMPLE_TRIES = 10_000
"""Most determinizations :func:`_resampled` draws under declaration rules before it gives up."""


def _resampled(pos: Position, player: int, rng: np.random.Generator) -> Position:
    """``pos`` with the cards ``player`` cannot see dealt again (:meth:`PlayerView.determinize`).

    The public part of the hand stays: thrown-in tables, the table and every decision. Under
    declaration rules who decides is public (the engine's :attr:`PlayerView.declare_queue`), so a
    seat that passed holds a hand it could have declared: draws whose replay does not give
    ``player`` the same information state are drawn again (rejection sampling).
    """
    setup = pos.setup
    view = pos.game.view(player)
    base = _replayed(setup, pos.start, pos.history[: pos.deal_start])
    table = sum(1 << c for c in pos._deals()[0])
    first = pos.first
    if first is not None and first[1] and player != (pos.dealer + 1) % setup.num_players:
        first = (None, True)  # a kept first card is known to its holder only: any of its first cards
    check = setup.rules.declarations or setup.rules.first_card_choice
    target = pos.info_text(player) if check else ""
    for _ in range(RESAMPLE_TRIES if check else 1):
        try:
            world = view.determinize(rng)
        except ValueError:  # a seat waiting to declare got a hand with nothing to declare
            continue
        new = _world_position(base, world, pos.decisions, table, first, rng)
        if new is None:
            continue
        for action in pos.history[len(new.history) :]:  # a "select" choice in progress
            new.apply(action)
        if not check or new.info_text(player) == target:
            return new
    raise RuntimeError(f"resample_from_infostate found no deal for p{player} in {RESAMPLE_TRIES} draws")


def _replayed(setup: Setup, start, actions: Sequence[int]) -> Position:
    pos = Position.initial(setup, start)
    for a in actions:
        pos.apply(a)
    return pos


def _initial_table(setup: Setup, world: Game) -> int:
    """The table ``world``'s hand was dealt: the plays undone, and Cirulla's table bonus (the table
    went to the dealer's pile before any play) read off the dealer side's pile."""
    table = world.table
    for _, card, captured in reversed(world.history):
        if captured == 0:
            table ^= 1 << card
        elif captured != 1 << card:
            table |= captured
    if setup.rules.table_bonus and not table and setup.rules.table_size:
        side = setup.side_of[world.dealer]
        taken = 0
        for seat, card, captured in world.history:
            if captured and setup.side_of[seat] == side:
                taken |= captured | 1 << card
        table = world.piles[side] & ~taken
    return table


def _world_position(
    base: Position,
    world: Game,
    decisions: Sequence[tuple[int, int, int]] | None,
    table: int | None = None,
    first: tuple[int | None, bool] | None = None,
    rng: np.random.Generator | None = None,
) -> Position | None:
    """``base`` (a position at the start of a deal) dealt and played on to ``world``.

    ``world`` is a full game in the middle of a hand (a real one or a determinization):
    its initial table is recovered by undoing the plays (or given), each seat's cards of a past
    deal are those it played in that round, the current deal adds the cards in hand, and the
    later deals come from the stock in the engine's dealing order. ``decisions`` are the hand's
    declaration decisions (:attr:`Position.decisions`): ``None`` passes wherever a seat may
    declare, except where ``world`` shows a declared hand of the current deal. A "select" choice
    in progress is not part of ``world`` and so not of the result. ``None`` if the decisions do
    not fit ``world`` (another seat would decide, or none). ``first`` (``first_card_choice``): the
    first card and whether it was kept; ``(None, True)`` or ``None``: kept, one of the first deal's
    cards of the player after the dealer, drawn with ``rng``.
    """
    setup = base.setup
    n = setup.num_players
    history = world.history
    cutter = (world.dealer + 1) % n
    if setup.rules.first_card_choice and world.deciding and not world.declare_queue:
        pos = base.copy()
        pos.apply(world.hands[cutter].bit_length() - 1)  # the first card, its decision pending
        return pos
    if table is None:
        table = _initial_table(setup, world)
    deal_of_ply = [
        max(k for k, first in enumerate(setup.deal_plies) if first <= ply) for ply in range(len(history) + 1)
    ]
    current = deal_of_ply[len(history)]
    dealt = [[0] * n for _ in setup.schedule]
    for ply, (seat, card, _) in enumerate(history):
        dealt[deal_of_ply[ply]][seat] |= 1 << card
    for seat in range(n):
        dealt[current][seat] |= world.hands[seat]
    order = [(world.dealer + 1 + i) % n for i in range(n)]
    stock = iter(world.stock)
    for k in range(current + 1, len(setup.schedule)):
        for i in range(n * setup.schedule[k]):
            dealt[k][order[i % n]] |= 1 << next(stock)
    pos = base.copy()
    keep = None
    if setup.rules.first_card_choice:
        card, keep = first if first is not None else (None, True)
        if card is None:
            mine = cards_of(dealt[0][cutter])
            card = mine[int(rng.integers(len(mine)))]
        pos.apply(card)
        for a in _move_actions(pos, card, 1 << card if keep else 0):
            pos.apply(a)
        if keep:
            dealt[0][cutter] &= ~(1 << card)
        else:
            table &= ~(1 << card)
    seat_slots = 0
    for owner, _ in setup.slots(world.dealer, keep):
        if owner == TABLE:
            cards = cards_of(table)
        else:
            cards = cards_of(dealt[seat_slots // n][owner])
            seat_slots += 1
        for a in cards:
            pos.apply(a)
    # The plays: in "select" mode a move may take several actions, so they are read off a replay.
    todo = None if decisions is None else list(decisions)
    for ply, (_, card, captured) in enumerate(history):
        if not _replay_decisions(pos, todo, ply, world):
            return None
        for a in _move_actions(pos, card, captured):
            pos.apply(a)
    if not _replay_decisions(pos, todo, len(history), world) or todo:
        return None
    return pos


def _replay_decisions(pos: Position, todo: list[tuple[int, int, int]] | None, ply: int, world: Game) -> bool:
    """Apply the declaration decisions due after ``ply`` plays; ``False`` if they do not fit.

    ``todo``: the recorded ``(ply, seat, captured)`` (consumed); ``None``: guessed from ``world``
    (a seat declares where its hand of the current deal is shown, or where an earlier hand held the
    Seven of cups of the wildcard rank in force, at that rank, and passes elsewhere; the queue stops
    where ``world``'s does).
    """
    game = pos.game
    last = ply == len(world.history)
    this_deal = ply == max(p for p in pos.setup.deal_plies if p <= len(world.history))
    while game.declare_queue:
        seat = game.current
        if last and game.declare_queue == world.declare_queue:
            return True  # the decisions still to come
        if todo is None:
            pairs = game.legal_pairs()
            shown = this_deal and (world.revealed[seat] or any(s == seat for s, _ in world.pending))
            # A wildcard rank in force was declared with the Seven of cups (its cards may all be played).
            shown = shown or (
                world.wild_rank and game.wild_rank != world.wild_rank and game.hands[seat] >> WILDCARD & 1
            )
            declare = [
                (c, m)
                for c, m in pairs
                if m and (not world.wild_rank or len(pairs) == 2 or RANK_OF[m.bit_length() - 1] == world.wild_rank)
            ]
            pair = declare[0] if shown and declare else pairs[0]
        else:
            if not todo or todo[0][0] != ply or todo[0][1] != seat:
                return False
            _, _, captured = todo.pop(0)
            pair = next(((c, m) for c, m in game.legal_pairs() if m == captured), None)
            if pair is None:
                return False
        for a in _move_actions(pos, *pair):
            pos.apply(a)
    return todo is None or not (todo and todo[0][0] == ply)


def _move_actions(pos: Position, card: int, captured: int) -> list[int]:
    """The action ids that play ``(card, captured)`` in ``pos`` (several in "select" mode)."""
    setup, game = pos.setup, pos.game
    if setup.moves is not None:
        return setup.moves.ids([(card, captured)], game.table)
    outcomes = [m for c, m in game.action_pairs() if c == card]
    out, selected = [card], 0
    if len(outcomes) == 1:
        return out
    for c in cards_of(captured):
        if len(select_options(outcomes, selected)[2]) == 1:
            return out
        selected |= 1 << c
        out.append(c)
    if len(select_options(outcomes, selected)[2]) > 1:
        out.append(setup.confirm)
    return out


def state_from_view(game: ScopaGame, view: PlayerView, rng: np.random.Generator) -> ScopaState:
    """A state at ``view``'s decision: the hand so far replayed with the hidden cards determinized.

    The state's history starts at the view's hand (its dealer, scores and hand number);
    earlier hands are not part of it. ``view.seat`` sees exactly what the view shows.
    """
    setup = game.setup
    if view.rules != setup.rules or view.num_players != setup.num_players:
        raise ValueError(
            f"the view is of {view.num_players} players under {view.rules.name!r}, the game is of "
            f"{setup.num_players} under {setup.rules.name!r}"
        )
    checked = setup.rules.declarations or setup.rules.first_card_choice
    for _ in range(RESAMPLE_TRIES if setup.rules.declarations else 1):
        try:
            world = view.determinize(rng)
        except ValueError:  # a seat waiting to declare got a hand with nothing to declare
            continue
        start = (world.dealer, tuple(world.scores), world.hand_number)
        pos = _world_position(Position.initial(setup, start), world, None, rng=rng)
        if setup.rules.declarations and pos is not None and pos.game.scores != world.scores:
            # The view's scores hold this hand's declarations already: start the hand without them.
            scores = tuple(2 * w - r for w, r in zip(world.scores, pos.game.scores))
            start = (world.dealer, scores, world.hand_number)
            pos = _world_position(Position.initial(setup, start), world, None, rng=rng)
        # A seat not asked to declare must hold a hand with nothing to declare: else draw again.
        if pos is not None and (not checked or pos.game.view(view.seat) == world.view(view.seat)):
            return game.state_at(pos)
    raise ValueError(
        f"the view of p{view.seat} could not be rebuilt as a history of its hand in {RESAMPLE_TRIES} draws"
    )


# --- the whole tree, for tabular solvers ------------------------------------------------------

EFG_NODE_LIMIT = 2_000_000
"""Most nodes :func:`export_efg` writes (the small preset has about 185,000)."""


@dataclass
class TreeExport:
    """A game tree in Gambit's ``.efg`` format, for ``pyspiel.load_efg_game``.

    OpenSpiel's C++ algorithms (CFR, best responses, exploitability) run on the loaded
    copy at C++ speed, with the same chance probabilities, payoffs and information sets
    (an information set of the copy is one ``information_state_string`` of the game).
    Action names are the game's action ids, so ``efg_state.action_to_string(a)`` of the
    copy gives back the game's action id.
    """

    text: str
    infosets: list[list[str]]
    """Per player, the information-state string of the copy's information set ``i + 1`` at index ``i``."""
    decision_nodes: int
    chance_nodes: int
    terminal_nodes: int

    def efg_state(self, efg_game: pyspiel.Game, history: Sequence[int]) -> pyspiel.State:
        """The loaded copy's state after ``history`` (actions of the game, chance outcomes included).

        Read a solver's policy at a Scopa position with it:
        ``policy.get_state_policy(tree.efg_state(copy, state.history()))`` gives ``(copy action,
        probability)`` pairs, and ``int(efg_state.action_to_string(a))`` is the game's action.
        """
        state = efg_game.new_initial_state()
        for action in history:
            by_name = {state.action_to_string(a): a for a in state.legal_actions()}
            if str(action) not in by_name:
                raise ValueError(f"action {action} is not legal in the exported tree after {state.history()}")
            state.apply_action(by_name[str(action)])
        return state


def export_efg(game: ScopaGame, node_limit: int = EFG_NODE_LIMIT) -> TreeExport:
    """Write every history of ``game`` as a Gambit tree (meant for ``rules="small"``).

    Raises:
        ValueError: the tree has more than ``node_limit`` nodes (use a smaller preset).
    """
    n = game.num_players()
    players = " ".join(f'"Pl{p + 1}"' for p in range(n))
    lines = [f'EFG 2 R "{game}" {{ {players} }}', '""']
    numbers: list[dict[str, int]] = [{} for _ in range(n)]
    counts = [0, 0, 0]  # decision, chance, terminal

    def visit(pos: Position) -> None:
        if sum(counts) >= node_limit:
            raise ValueError(f"{game} has more than {node_limit:,} nodes; export a smaller game (rules='small')")
        if pos.over:
            counts[2] += 1
            lines.append(f't "" {counts[2]} "" {{ {" ".join(repr(float(r)) for r in pos.returns)} }}')
            return
        if pos.game is None:
            counts[1] += 1
            outcomes = pos.chance_outcomes()
            lines.append(f'c "" {counts[1]} "" {{ {" ".join(f"{chr(34)}{a}{chr(34)} {p!r}" for a, p in outcomes)} }} 0')
            actions = [a for a, _ in outcomes]
        else:
            counts[0] += 1
            player = pos.current_player()
            known = numbers[player]
            number = known.setdefault(pos.info_text(player), len(known) + 1)
            actions = pos.legal_actions()
            lines.append(f'p "" {player + 1} {number} "" {{ {" ".join(f"{chr(34)}{a}{chr(34)}" for a in actions)} }} 0')
        for a in actions:
            child = pos.copy()
            child.apply(a)
            visit(child)

    visit(Position.initial(game.setup))
    return TreeExport(
        text="\n".join(lines) + "\n",
        infosets=[list(known) for known in numbers],
        decision_nodes=counts[0],
        chance_nodes=counts[1],
        terminal_nodes=counts[2],
    )


# --- observations -------------------------------------------------------------------------


class ScopaObserver:
    """Strings and tensors of one player's point of view (OpenSpiel's ``PyObserver``).

    Two kinds, as OpenSpiel asks for them: ``perfect_recall=False`` (the observation) and
    ``perfect_recall=True`` (the information state), both with the player's own cards.
    """

    def __init__(self, setup: Setup, iig_obs_type) -> None:
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                "python_scopa observes one player's cards and the public cards only "
                "(private_info=SINGLE_PLAYER, public_info=True)"
            )
        self.setup = setup
        self.perfect_recall = iig_obs_type.perfect_recall
        size = setup.layout.size
        pieces = [("observation", size, (size,))]
        if self.perfect_recall:
            plies = setup.plies_per_hand
            cards = setup.num_cards
            pieces.append(("plays", plies * 2 * cards, (plies, 2, cards)))
        self.tensor = np.zeros(sum(width for _, width, _ in pieces), np.float32)
        self.dict = {}
        offset = 0
        for name, width, shape in pieces:
            self.dict[name] = self.tensor[offset : offset + width].reshape(shape)
            offset += width

    def set_from(self, state: ScopaState, player: int) -> None:
        self.tensor.fill(0.0)
        pos = state.position
        game = pos.game
        if game is None:
            return  # a deal in progress: nobody acts
        mine = player == game.current
        write_observation(
            game,
            player,
            self.setup.layout,
            self.dict["observation"],
            select_card=pos.pending if mine else None,
            select_captured=pos.selected if mine else 0,
        )
        if self.perfect_recall:
            plays = self.dict["plays"]
            for ply, (_, card, captured) in enumerate(game.history):
                plays[ply, 0, card] = 1.0
                for c in cards_of(captured):
                    plays[ply, 1, c] = 1.0

    def string_from(self, state: ScopaState, player: int) -> str:
        pos = state.position
        return pos.info_text(player) if self.perfect_recall else pos.observation_text(player)


pyspiel.register_game(GAME_TYPE, ScopaGame)

__all__ = [
    "DEFAULT_PARAMS",
    "GAME_NAME",
    "GAME_TYPE",
    "Position",
    "ScopaGame",
    "ScopaObserver",
    "ScopaState",
    "Setup",
    "TreeExport",
    "check_bridge_rules",
    "export_efg",
    "parse_params",
    "state_from_view",
]
