"""Static facts of one ``python_scopa`` parameter set: the parameters, their check, and :class:`Setup`.

:func:`parse_params` checks the game's parameters (:data:`DEFAULT_PARAMS`, documented in
:mod:`scopa_env.openspiel.game`) and returns the :class:`Setup` every state of the game shares:
the deal's schedule and chance slots, the observation layout, the action enumeration, the card
notation and the bounds OpenSpiel asks for. Plain Python: no ``pyspiel`` here.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from scopa_env.engine.actions import MoveEnumeration
from scopa_env.engine.cards import NUM_CARDS, RANK_OF, SUIT_OF, cards_of, format_card
from scopa_env.engine.game import Game
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import Rules
from scopa_env.engine.setup import GameSetup

GAME_NAME = "python_scopa"
DEFAULT_PARAMS: dict[str, object] = {
    "rules": "standard",
    "players": 2,
    "action_mode": "move",
    "episode": "hand",
    "reward": "points",
    "max_hands": 50,
}
"""The game's parameters and their defaults (the table in :mod:`scopa_env.openspiel.game`)."""


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


def ids_text(setup: Setup, cards: Sequence[int]) -> str:
    """Short notation of cards (like :func:`~scopa_env.engine.cards.format_cards`, without its checks)."""
    text, order = setup.card_text, setup.card_order
    if order is not None:
        cards = sorted(cards, key=order.__getitem__)
    return " ".join([text[c] for c in cards])


def cards_text(setup: Setup, mask: int) -> str:
    """Short notation of a bitmask of cards."""
    return ids_text(setup, cards_of(mask))


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


def check_bridge_rules(rules: Rules) -> None:
    """Every rules object plays in the bridge: kept for callers that check rules first, it raises nothing.

    The deals that are more than a shuffle are modelled (:mod:`scopa_env.openspiel.game`): Chkobba's first
    card (``first_card_choice``), declarations (``bazzica_points`` / ``hand_bonus_points``), Cirulla's
    table bonus and ``redeal_next_dealer``.
    """
    rules.check_backend("openspiel")  # a field declared openspiel=False (scopa_env/engine/rules.py) is refused


# --- static facts of one parameter set -----------------------------------------------------


@dataclass(frozen=True, eq=False)
class Setup:
    """Everything fixed by the game's parameters; shared by all states of a game.

    The game's rules, players and modes are checked by :meth:`GameSetup.of
    <scopa_env.engine.setup.GameSetup.of>` (:attr:`game_setup`), which gives the schedule, the
    sides, the layout, the moves and the action count; the rest is the bridge's own.
    """

    rules: Rules
    num_players: int
    action_mode: str
    episode: str
    reward: str
    max_hands: int
    game_setup: GameSetup = field(init=False)
    """The engine's :class:`~scopa_env.engine.setup.GameSetup` of these rules, players and modes (the
    AEC env's and the compiled batch's ``setup`` for the same game)."""
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
        game = GameSetup.of(self.rules, self.num_players, self.action_mode, self.episode, self.reward)
        put("game_setup", game)
        n = self.num_players
        put("schedule", game.schedule)
        put("deal_plies", tuple(n * sum(self.schedule[:k]) for k in range(len(self.schedule))))
        put("plies_per_hand", n * sum(self.schedule))
        put("side_of", game.side_of)
        put("num_sides", game.num_sides)
        put("layout", game.layout)
        put("moves", game.moves)
        put("num_actions", game.num_actions)
        put("num_cards", self.rules.num_card_ids)
        put("confirm", game.confirm)
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
def redeal_judge(rules: Rules) -> Game:
    """A game of ``rules`` whose :meth:`~scopa_env.engine.game.Game.needs_redeal` judges initial tables."""
    return Game(min(rules.player_counts), rules, seed=0)


@functools.lru_cache(maxsize=1 << 16)
def _table_completions(rules: Rules, partial: int, last: int, need: int) -> int:
    """How many sets of ``need`` deck cards above ``last`` and outside ``partial`` complete it to a
    table the rules keep (one that :meth:`~scopa_env.engine.game.Game.needs_redeal` does not throw in)."""
    above = [1 << c for c in rules.deck if c > last and not partial >> c & 1]
    judge = redeal_judge(rules).needs_redeal
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
    n = p["players"]
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"players must be an int, got {n!r}")
    # the rules (a preset name), the player count and the modes: one check for every layer
    game = GameSetup.of(p["rules"], n, p["action_mode"], p["episode"], p["reward"])
    check_bridge_rules(game.rules)
    if isinstance(p["max_hands"], bool) or not isinstance(p["max_hands"], int) or p["max_hands"] < 1:
        raise ValueError(f"max_hands must be an int >= 1, got {p['max_hands']!r}")
    return _setup(game.rules, n, game.action_mode, game.episode, game.reward, p["max_hands"])
