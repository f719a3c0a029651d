"""The ``oracle`` agent: it sees every card (cheating), the ceiling of the benchmark.

Every fair agent decides from one seat's :class:`~scopa_env.engine.game.PlayerView` and so
guesses the other hands and the stock order (:mod:`agents.search` samples worlds of them).
The oracle does not guess: it searches the *true* deal, every hand and the stock order as they
are, so its search plays the perfect-information game. Its results against the ladder bound
what any fair agent could reach with the same kind of search, and the gap between the best
fair agent and the oracle is the value of the hidden information (docs/benchmark.md, "The
oracle ceiling").

How it gets the true deal, and why no fair agent can: an agent class declares
``needs_full_state = True`` (and ``cheating = True``); only then does the match runner
(:func:`agents.matches.play_game`) call its :meth:`OracleAgent.act_full` with a copy of the
whole :class:`~scopa_env.engine.game.Game`. Every other agent is called with ``act(view)`` as
before. The oracle's own ``act(view)`` refuses to play, so a harness that hands out views only
(``scopa play``, ``scopa web``, training) can never run it as if it were fair; those harnesses
refuse it by name anyway (:func:`agents.registry.check_fair`).

The search (:mod:`agents.oracle_kernel`, compiled) plays every legal move in the true deal,
then ``ab_depth`` plies of alpha-beta with ``rollouts`` rollouts of the compiled ``greedy`` or
``heuristic`` player at the leaves, or, once the rest of the hand is small enough, alpha-beta to
the end of the hand: the exact perfect-information value. "Small enough" is counted in play
orders (:func:`play_orders`: the orders in which the cards left can still be played, every
capture choice aside) so that it means the same cost in every variant: at most ``exact_leaves``
(the default, 2,000,000, solves the last four deal rounds of the standard 2-player hand, 24
cards, exactly; a 10-card Scopone hand only from 4 cards each; fewer with more than two sides,
:func:`exact_bound`). Moves are compared by the
hand-point margin of the oracle's side. Spec examples::

    oracle                              alpha-beta 3 plies, 4 rollouts, exact from 2,000,000 play orders
    oracle:ab_depth=0,rollouts=1,exact_leaves=1   one greedy rollout per move in the true deal (cheapest)
    oracle:ab_depth=0,rollouts=256,noise=0.6      256 rollouts per move, the other sides' moves random
                                                  six times in ten (the leaderboard's ceiling)
    oracle:ab_depth=0,rollouts=256,noise=0.6,see=hands
                                                  the same, seeing every hand but not the stock's order:
                                                  each rollout draws the stock anew

``see=hands`` splits the ceiling in two. Inference from the other players' moves can at best
recover their hands, never the order of the cards still in the stock, so the gap between a fair
agent and ``see=hands`` is what reading the opponents could win, and the gap between ``see=hands``
and ``see=all`` is what only the stock's order gives. The hand is then solved exactly only once the
stock is empty (nothing is hidden any more). In a game dealt out at once (Scopone scientifico) the
two are the same agent.

The first spec's search is a poor judge with many sides: its alpha-beta plies are paranoid (every
other side minimises the oracle's margin) and its rollouts trust one line of play of every other
seat, which the real opponents do not follow. On the 8-player game it loses to the fair ``fsearch``,
which averages over many worlds. ``noise`` makes the rollouts average over how the other sides may
play instead (:mod:`agents.oracle_kernel`); against ``fsearch`` the last spec beats the first with
2, 3 and 8 players.

Rules the compiled core does not play, and decisions it does not search (Chkobba's first
card, declarations, a wildcard), fall back to :class:`~agents.search.SearchAgent` with its one
world set to the true deal.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent
from agents.greedy import pick_best
from agents.search import SearchAgent, fast_clone
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.rules import Move, move_of

CHEATING_LABEL = "cheating"
"""The word every listing and table puts after the oracle's name."""

OPTION_RANGES: dict[str, tuple[int, int]] = {
    "ab_depth": (0, 4),
    "exact_leaves": (1, 100_000_000),
    "rollouts": (1, 1024),
}
"""Allowed values of the int options, ends included. ``exact_leaves`` 100,000,000 solves the
standard 2-player hand from its second deal round (30 cards left), up to about a second per
decision; the whole hand (36 cards, about 10^9 play orders) takes up to a quarter of a minute."""
ROLLOUTS = ("greedy", "heuristic")
"""The compiled players a rollout may use."""
SEES = ("all", "hands")
"""What the oracle sees: ``all`` (every hand and the stock's order) or ``hands`` (every hand only)."""
NOISE_MAX = 0.9
"""The largest ``noise``: the other sides still play the rollout player's move one time in ten."""


class OracleAgent(Agent):
    """Perfect-information search over the true deal (see the module docstring). Cheating.

    Args:
        seed: seeds the rollout tie-breaks and the choice among equal moves.
        ab_depth: plies of alpha-beta after each move before the rollouts.
        exact_leaves: solve the rest of the hand exactly when it has at most this many play orders
            (:func:`play_orders`).
        rollouts: rollouts per leaf, each with its own tie-break stream.
        rollout: ``"greedy"`` or ``"heuristic"``: the compiled player of the rollouts.
        noise: with ``ab_depth=0``, the chance (in [0, 0.9]) that a move of another side in a
            rollout is a random legal move instead of the rollout player's: the rollouts then
            average over how the other sides might play rather than trusting one line of play.
        see: ``"all"`` (every hand and the stock's order) or ``"hands"`` (every hand, not the
            stock's order: each rollout draws the stock anew, and the exact solve waits for an
            empty stock).
    """

    name = "oracle"
    cheating = True
    needs_full_state = True

    def __init__(
        self,
        seed=None,
        ab_depth: int = 3,
        exact_leaves: int = 2_000_000,
        rollouts: int = 4,
        rollout: str = "greedy",
        noise: float = 0.0,
        see: str = "all",
    ) -> None:
        super().__init__(seed)
        for key, value in (("ab_depth", ab_depth), ("exact_leaves", exact_leaves), ("rollouts", rollouts)):
            low, high = OPTION_RANGES[key]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
                raise ValueError(f"oracle {key} must be an int in [{low}, {high}], got {value!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"oracle rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0.0 <= noise <= NOISE_MAX:
            raise ValueError(f"oracle noise must be a number in [0, {NOISE_MAX:g}], got {noise!r}")
        if see not in SEES:
            raise ValueError(f"oracle see must be one of {', '.join(SEES)}, got {see!r}")
        if noise and ab_depth:
            raise ValueError(
                f"oracle noise needs ab_depth=0 (its rollouts follow the move directly), got ab_depth={ab_depth}"
            )
        self.settings = dict(ab_depth=int(ab_depth), exact_leaves=int(exact_leaves), rollouts=int(rollouts))
        self.rollout = rollout
        self.noise = float(noise)
        self.see = see
        self._compiled: dict = {}
        self._fallback: _TrueWorldSearch | None = None

    def __repr__(self) -> str:
        options = ", ".join(
            f"{k}={v!r}"
            for k, v in {**self.settings, "rollout": self.rollout, "noise": self.noise, "see": self.see}.items()
        )
        return f"OracleAgent({options}) [{CHEATING_LABEL}]"

    def act(self, view: PlayerView) -> Move:
        raise ValueError(
            "the oracle needs the whole deal, not a player's view: it plays only in matches "
            "(scopa eval, scopa tournament, the leaderboard's ceiling row), which hand it the game"
        )

    def act_full(self, game: Game) -> Move:
        """Choose the move of the seat to move in ``game``, knowing every card (a copy of the true game)."""
        pairs = game.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{game.current} has no legal move")
        if len(pairs) == 1:
            return move_of(*pairs[0])
        values = self.move_values(game)
        return move_of(*pick_best(pairs, values, self.rng))

    def move_values(self, game: Game) -> list[float]:
        """The searched value of each of ``game.legal_pairs()`` (in that order) for the seat to move."""
        pairs = game.legal_pairs()
        inputs = self._kernel_inputs(game)
        if inputs is None:
            return self._fallback_values(game, pairs)
        from agents.oracle_kernel import oracle_kernel
        from scopa_env.fast.batch import HEURISTIC_H
        from scopa_env.fast.core import P_SCRATCH

        row, P, F, TBL, C = inputs
        values = np.zeros(P[P_SCRATCH], np.float64)
        tie = np.zeros_like(values)
        seed = int(self.rng.integers(2**62))
        exact = play_orders(game) <= exact_bound(self.settings["exact_leaves"], game.num_sides)
        if self.see == "hands" and game.stock:
            exact = False  # an exact solve would read the stock's order
        count = oracle_kernel(row, seed, P, F, HEURISTIC_H, TBL, C, exact, values, tie)
        if count != len(pairs):
            raise AssertionError(f"the compiled core lists {count} moves where the game lists {len(pairs)}")
        if exact:  # equal exact values: the rollout players' margin after the move breaks the tie
            best = values[:count].max()
            return [float(v) + (1e-6 * t if v >= best - 1e-9 else 0.0) for v, t in zip(values[:count], tie[:count])]
        return [float(v) for v in values[:count]]

    def _kernel_inputs(self, game: Game):
        """``(row, P, F, TBL, C)`` of the true deal, or ``None`` where the compiled core does not play."""
        if game.deciding or game.wild_rank or any(game.revealed) or game.declare_queue:
            return None
        key = (game.rules, game.num_players)
        if key not in self._compiled:
            from scopa_env.fast import core
            from scopa_env.fast.batch import compiled_rules
            from scopa_env.fast.search import search_params

            try:
                P, F, TBL, _ = compiled_rules(game.rules, game.num_players)
            except NotImplementedError:
                self._compiled[key] = None
            else:
                from agents.oracle_kernel import NUM_ORACLE_CONFIG

                C = np.zeros(NUM_ORACLE_CONFIG, np.int64)
                C[:] = (
                    self.settings["ab_depth"],
                    self.settings["rollouts"],
                    core.OPPONENT_GREEDY if self.rollout == "greedy" else core.OPPONENT_HEURISTIC,
                    round(self.noise * 1000),
                    int(self.see == "hands"),
                )
                self._compiled[key] = (search_params(P), F, TBL, C)
        arrays = self._compiled[key]
        if arrays is None:
            return None
        P, F, TBL, C = arrays
        return true_row(game, P), P, F, TBL, C

    def _fallback_values(self, game: Game, pairs: list[tuple[int, int]]) -> list[float]:
        if self._fallback is None:
            worlds = 1 if self.see == "all" else min(self.settings["rollouts"], 64)
            self._fallback = _TrueWorldSearch(seed=self.rng, worlds=worlds, hide_stock=self.see == "hands")
        self._fallback.truth = game
        return self._fallback.move_values(game.view(), pairs)


def play_orders(game: Game) -> int:
    """The orders in which the cards left in ``game``'s hand can still be played, capture choices aside.

    The product, over the plies left, of the cards the player to move then holds: the product of
    the factorials of the hand sizes now, times that of every deal round still in the stock
    (:meth:`~scopa_env.engine.rules.Rules.schedule`). It measures the exact solve's tree the same
    way in every variant, whatever the hand size and player count.
    """
    orders = 1
    for hand in game.hands:
        orders *= math.factorial(hand.bit_count())
    stock = len(game.stock)
    for size in reversed(game.rules.schedule(game.num_players)):
        if stock < size * game.num_players:
            break
        stock -= size * game.num_players
        orders *= math.factorial(size) ** game.num_players
    return orders


def exact_bound(exact_leaves: int, sides: int) -> float:
    """The most play orders solved exactly with ``sides`` sides: ``exact_leaves ** (sides / (2 (sides - 1)))``.

    With two sides alpha-beta visits about the square root of the tree's leaves; with more, the
    search is paranoid (every other side minimises the oracle's margin) and prunes only at the
    oracle's own plies, about ``leaves ** ((sides - 1) / sides)``. The bound keeps that cost at
    the two-sided cost of ``exact_leaves``.
    """
    return float(exact_leaves) ** (sides / (2 * (sides - 1))) if sides > 2 else float(exact_leaves)


def true_row(game: Game, P: np.ndarray) -> np.ndarray:
    """The compiled core's state row of ``game`` with everything filled in: every hand and the stock order.

    It starts from the row of the mover's view (:func:`scopa_env.fast.search.row_from_view`) and
    adds what the view hides, so the two agree on everything a player may see.
    """
    from scopa_env.fast import core
    from scopa_env.fast.search import row_from_view

    row, _ = row_from_view(game.view(), P)
    for seat, hand in enumerate(game.hands):
        row[core.COL_HAND + seat] = hand
    start = int(P[core.P_DECK_SIZE]) - len(game.stock)
    row[core.COL_STOCK_POS] = start
    for k, card in enumerate(game.stock):
        row[core.COL_DECK + start + k] = card
    return row


class _TrueWorldSearch(SearchAgent):
    """The Python search with its worlds set to the true deal (the oracle's fallback): one world, or
    with ``hide_stock`` ``worlds`` worlds that keep every hand and shuffle the stock."""

    truth: Game | None = None

    def __init__(self, seed=None, worlds: int = 1, hide_stock: bool = False) -> None:
        super().__init__(seed=seed, min_worlds=worlds, max_worlds=worlds)
        self.hide_stock = hide_stock

    def sample_world(self, view: PlayerView) -> Game:
        world = fast_clone(self.truth)
        world.auto_next_hand = False
        if self.hide_stock and world.stock:
            world.stock = [int(c) for c in self.rng.permutation(world.stock)]
        return world
