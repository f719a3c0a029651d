"""The compiled core's parameter arrays of a game, made from its rules without numba.

:func:`compiled_rules` fills ``(P, F, TBL, PAIRS)``, whose indices :mod:`scopa_env.fast.layout`
names, once per rules and player count; :func:`check_supported` says which rules the core plays.
Nothing here imports numba, so the AEC env can hand a game to the compiled core's exports
(:mod:`scopa_env.fast.aot`) as fast as it starts; :mod:`scopa_env.fast.batch` re-exports these names.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from scopa_env.engine import house_rules
from scopa_env.engine.cards import COINS, FRENCH_RANKS, RANK_OF, SETTEBELLO, SUIT_OF
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import NAPOLA_READINGS, SCOPA_VALUES, Rules, support_of, supported_by
from scopa_env.engine.scoring import prime_order
from scopa_env.engine.setup import GameSetup
from scopa_env.fast import layout as core  # the compiled core's indices, without its kernels

SUPPORTED_FIELDS = supported_by("fast")
"""Rules fields the compiled core implements for every value, as declared next to each field
(``fast=True`` in scopa_env/engine/rules.py). Any other field must keep its default (standard)
value, or :func:`check_supported` raises ``NotImplementedError``."""

FRENCH_FIELDS = supported_by("french")
"""Rules fields the compiled core implements with the 52-card deck (``ranks_per_suit=13``,
preset ``french_52``; ``french=True`` next to the field); there every other field must keep
its default, or :func:`check_supported` raises ``NotImplementedError``."""


def _rule_fields(names: tuple[str, ...]) -> str:
    """The rules among ``names`` (not the labels ``name`` and ``description``), for messages."""
    return ", ".join(n for n in names if (s := support_of(n)) is None or s.rule)


# Greedy opponent weights (agents.greedy.CaptureWeights defaults).
GREEDY_CARD, GREEDY_COIN, GREEDY_SETTEBELLO, GREEDY_PRIMIERA, GREEDY_SCOPA = 1.0, 1.0, 5.0, 0.25, 10.0
GREEDY_FACE_PRIMIERA = 10
GREEDY_TIE_TOL = 1e-9


def check_supported(rules: Rules, num_players: int | None = None) -> None:
    """Raise ``NotImplementedError`` naming the preset and field if the core cannot play ``rules``
    (with ``num_players`` players, if given: the core holds at most ``core.MAX_PLAYERS`` seats and
    ``core.MAX_SIDES`` sides, as many: every seat may be its own side), or naming the house rule
    (:attr:`Rules.house_rules`) registered without ``backends=("fast",)``."""
    if num_players is not None:
        rules.check_players(num_players)  # a player count the rules do not allow is a ValueError
    default = Rules()
    french = rules.ranks_per_suit != default.ranks_per_suit
    for f in dataclasses.fields(rules):
        value = getattr(rules, f.name)
        if f.name == "house_rules":  # each plug-in declares its own backends; refused by its name
            house_rules.check_backend(value, "french" if french else "fast", rules.name)
            continue
        if f.name not in SUPPORTED_FIELDS and value != getattr(default, f.name):
            raise NotImplementedError(
                f"scopa_env.fast does not support rules preset {rules.name!r}: field {f.name}={value!r} "
                f"(the compiled core implements {_rule_fields(SUPPORTED_FIELDS)}; other fields must keep "
                f"their default); use the Python engine scopa_env.engine.game.Game"
            )
        if french and f.name not in FRENCH_FIELDS and value != getattr(default, f.name):
            raise NotImplementedError(
                f"scopa_env.fast does not support rules preset {rules.name!r}: field {f.name}={value!r} with "
                f"the 52-card deck (ranks_per_suit={rules.ranks_per_suit}: the compiled core plays that deck with "
                f"{_rule_fields(FRENCH_FIELDS)} only; other fields must keep their default); use the Python "
                f"engine scopa_env.engine.game.Game"
            )
    if num_players is not None and (num_players > core.MAX_PLAYERS or rules.num_sides(num_players) > core.MAX_SIDES):
        raise NotImplementedError(
            f"scopa_env.fast does not support rules preset {rules.name!r} with {num_players} players, "
            f"{rules.num_sides(num_players)} sides: the compiled core holds at most {core.MAX_PLAYERS} players "
            f"and {core.MAX_SIDES} sides; use the Python engine scopa_env.engine.game.Game"
        )


def greedy_card_values(rules: Rules) -> np.ndarray:
    """Per card id, the greedy opponent's card value (agents.greedy.card_values, default weights);
    ``core.MAX_CARDS`` entries, those of ``rules.num_card_ids`` used."""
    out = np.zeros(core.MAX_CARDS, np.float64)
    for c in range(rules.num_card_ids):
        v = GREEDY_CARD + GREEDY_PRIMIERA * (rules.primiera_values[RANK_OF[c] - 1] - GREEDY_FACE_PRIMIERA)
        if SUIT_OF[c] == COINS:
            v += GREEDY_COIN
        if c == SETTEBELLO:
            v += GREEDY_SETTEBELLO
        out[c] = v
    return out


def _subset_count(rules: Rules, max_sum: int) -> int:
    """Subsets of the deck with value sum <= ``max_sum`` (the empty one included): scratch size."""
    ways = [1] + [0] * max_sum
    for r in set(rules.ranks):
        new = [0] * (max_sum + 1)
        for total, w in enumerate(ways):
            for k in range(5):
                if w and total + k * r <= max_sum:
                    new[total + k * r] += w * math.comb(4, k)
        ways = new
    return sum(ways)


def _deal_params(P: np.ndarray, rules: Rules, num_players: int, layout: ObservationLayout, num_moves: int) -> None:
    """Fill ``P``'s table of the seats, the deck, the deal and the game's end: who plays, what
    is dealt, a scopa's worth, the target, the observation's size and the moves' count."""
    P[core.P_PLAYERS] = num_players
    P[core.P_SIDES] = layout.num_sides
    P[core.P_HAND_SIZE] = rules.hand_size
    P[core.P_TABLE_SIZE] = rules.table_size
    P[core.P_DECK_SIZE] = len(rules.deck)
    P[core.P_DECK_MASK] = rules.deck_mask
    P[core.P_KINGS_REDEAL] = rules.kings_redeal
    P[core.P_PRIORITY] = rules.single_card_priority
    P[core.P_OPTIONAL] = rules.capture_optional
    P[core.P_LAST_SCOPA] = rules.last_play_scopa
    P[core.P_SCOPA_POINTS] = rules.scopa_points
    P[core.P_TARGET] = rules.target
    P[core.P_CAPPOTTO] = rules.cappotto
    P[core.P_OPPONENT] = core.OPPONENT_NONE
    P[core.P_OBS_SIZE] = layout.size
    P[core.P_NUM_MOVES] = num_moves


def _capture_params(P: np.ndarray, rules: Rules, schedule: tuple[int, ...], french: bool) -> None:
    """Fill ``P``'s capture rules and the size of the kernels' scratch space for enumerating
    captures (``P_MAX_SUM``, ``P_SUB_CAP``, ``P_SCRATCH``), then the redeals and the first deal."""
    max_sum = max(rules.ranks_per_suit, rules.capture_sum - 1)  # rules._variant_pairs: the largest rank
    sub_cap = _subset_count(rules, max_sum)
    if rules.bonus_wildcard:  # a declared wildcard counts as any rank: at most one more card of rank 1
        sub_cap += _subset_count(rules, max_sum - 1)
    P[core.P_PLAIN] = rules.plain_captures and not french  # legal_pairs's fast path: the 40-card deck's
    P[core.P_CAPTURE_EQUAL] = rules.capture_equal
    P[core.P_CAPTURE_SUM] = rules.capture_sum
    P[core.P_MAX_CAPTURE] = rules.max_capture_cards
    P[core.P_FEWEST] = rules.fewest_cards
    P[core.P_MAX_SUM] = max_sum
    P[core.P_SUB_CAP] = sub_cap
    # a position's legal moves, then the heuristic's model of the next player's replies (one card per rank)
    P[core.P_SCRATCH] = (max(schedule) + rules.ranks_per_suit) * (sub_cap + 1)
    P[core.P_ACES_REDEAL] = rules.aces_redeal
    P[core.P_REDEAL_SAME_RANK] = rules.redeal_same_rank
    P[core.P_FIRST_DEAL] = schedule[0]
    P[core.P_TAKE_ALL] = rules.ace_takes_all
    P[core.P_TAKE_ALL_SCOPA] = rules.ace_takes_all_scopa
    P[core.P_ACE_ITSELF] = rules.ace_takes_itself


def _scoring_params(P: np.ndarray, rules: Rules) -> None:
    """Fill ``P``'s scoring rules: the bonus suit, the primiera's reading, the extra points and
    the game-ending or score-resetting sweeps."""
    P[core.P_BONUS_SUIT] = rules.bonus_suit
    P[core.P_SEVENS] = rules.prime_rule == "sevens"
    P[core.P_DOUBLE_BELOW] = rules.double_game_below
    P[core.P_RE_BELLO] = rules.re_bello
    P[core.P_SEVEN_OF_CUPS] = rules.seven_of_cups
    P[core.P_PALLE_DEL_CANE] = rules.palle_del_cane
    P[core.P_NAPOLA] = NAPOLA_READINGS.index(rules.napola)
    P[core.P_SCALETTE] = rules.scalette
    P[core.P_PICCOLA_GRANDE] = rules.piccola_grande
    P[core.P_PIVA] = rules.piva
    P[core.P_ALL_COINS_WINS] = rules.all_coins_wins
    P[core.P_COINS_RESET] = rules.coins_reset
    P[core.P_SCOPA_VALUE] = SCOPA_VALUES.index(rules.scopa_value)
    P[core.P_BY_COUNTS] = rules.primiera_by_counts
    P[core.P_PRIME_ALL_SUITS] = rules.primiera_all_suits


def _decision_params(P: np.ndarray, rules: Rules, layout: ObservationLayout, french: bool) -> None:
    """Fill ``P``'s decisions (Chkobba's first card, chiamarsi fuori, the declarations and their
    points, Cirulla's bonuses and wildcard), the redeals that go with them and the deck family."""
    P[core.P_FIRST_CARD] = rules.first_card_choice
    P[core.P_CLAIM_OUT] = rules.claim_out
    if rules.bazzica_points:
        P[core.P_DECLARE] = core.DECLARE_BAZZICA
        P[core.P_BAZZICA : core.P_BAZZICA + 3] = rules.bazzica_points
    if rules.hand_bonus_points:
        P[core.P_DECLARE] = core.DECLARE_HAND_BONUS
        P[core.P_HAND_BONUS : core.P_HAND_BONUS + 2] = rules.hand_bonus_points
    P[core.P_TABLE_BONUS] = rules.table_bonus
    P[core.P_WILDCARD] = rules.bonus_wildcard
    P[core.P_WILD_IDS] = rules.bonus_wildcard and rules.declarations and core.WILDCARD in rules.deck
    P[core.P_WILD_OBS] = layout.wildcard
    P[core.P_REDEAL_ACES] = rules.redeal_aces
    P[core.P_REDEAL_NEXT] = rules.redeal_next_dealer
    P[core.P_FRENCH] = french
    P[core.P_CARD_IDS] = rules.num_card_ids


def _float_params(rules: Rules) -> np.ndarray:
    """The kernels' ``F``: the primiera values and the greedy opponent's card values and weights."""
    F = np.zeros(core.NUM_FLOATS, np.float64)
    F[core.F_PRIMIERA : core.F_PRIMIERA + rules.ranks_per_suit] = rules.primiera_values
    F[core.F_GREEDY_VALUES : core.F_GREEDY_VALUES + core.MAX_CARDS] = greedy_card_values(rules)
    F[core.F_GREEDY_SCOPA] = GREEDY_SCOPA
    F[core.F_GREEDY_TOL] = GREEDY_TIE_TOL
    return F


def _tables(P: np.ndarray, rules: Rules, num_players: int, schedule: tuple[int, ...], PAIRS: np.ndarray) -> np.ndarray:
    """The kernels' ``TBL``: the deck, where each card's moves start in ``PAIRS``, the size of the
    deal that starts at each stock count and, under :attr:`Rules.primiera_by_counts`, the
    primiera's groups of ranks (whose count goes to ``P``)."""
    TBL = np.zeros(core.NUM_TBL, np.int64)
    TBL[core.TBL_DECK : core.TBL_DECK + len(rules.deck)] = rules.deck
    starts = np.searchsorted(PAIRS[:, 0], np.arange(core.MAX_CARDS + 1), side="left")  # "move" mode: 40 or 52 cards
    TBL[core.TBL_CARD_START : core.TBL_CARD_START + core.MAX_CARDS + 1] = starts
    # Game._next_deal: the deal that starts with k cards in the stock gives each player this many.
    TBL[core.TBL_NEXT_DEAL : core.TBL_NEXT_DEAL + core.MAX_CARDS + 1] = rules.hand_size
    for k in range(1, len(schedule)):
        TBL[core.TBL_NEXT_DEAL + num_players * sum(schedule[k:])] = schedule[k]
    if rules.primiera_by_counts:
        groups = prime_order(rules)
        P[core.P_PRIME_GROUPS] = len(groups)
        for g, ranks in enumerate(groups):
            TBL[core.TBL_PRIME_GROUPS + g] = sum(core.ONE_OF_EACH_SUIT << (r - 1) for r in ranks)
    return TBL


def compiled_rules(
    rules: Rules | GameSetup, num_players: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(P, F, TBL, PAIRS)`` arrays of the kernels for ``rules`` and ``num_players``, or for a
    :class:`~scopa_env.engine.setup.GameSetup` alone (its modes left out: the arrays have them at 0;
    copy P to set them). Cached per game.

    ``PAIRS`` is empty when the rules have more moves than
    :data:`~scopa_env.engine.actions.MAX_MOVE_ACTIONS` (no preset does; "select" only).
    """
    if isinstance(rules, GameSetup):
        if num_players not in (None, rules.num_players):
            raise ValueError(
                f"compiled_rules: the setup has {rules.num_players} players, got num_players={num_players!r}"
            )
        rules, num_players = rules.rules, rules.num_players
    return _compiled_rules(rules, num_players)


@functools.lru_cache(maxsize=32)
def _compiled_rules(rules: Rules, num_players: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    check_supported(rules, num_players)  # the player count's check (rules.check_players) included
    setup = GameSetup.of(rules, num_players)  # "move" mode: its moves are the PAIRS
    french = rules.ranks_per_suit == FRENCH_RANKS  # the 52-card deck: P_FRENCH
    layout = setup.layout
    try:
        pairs = setup.moves.pairs
    except ValueError:  # more moves than "move" mode allows
        pairs = []
    schedule = setup.schedule
    P = np.zeros(core.NUM_PARAMS, np.int64)
    _deal_params(P, rules, num_players, layout, len(pairs))
    _capture_params(P, rules, schedule, french)
    _scoring_params(P, rules)
    _decision_params(P, rules, layout, french)
    F = _float_params(rules)
    PAIRS = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    TBL = _tables(P, rules, num_players, schedule, PAIRS)
    for arr in (P, F, TBL, PAIRS):
        arr.flags.writeable = False
    return P, F, TBL, PAIRS
