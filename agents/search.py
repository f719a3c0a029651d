"""The ``search`` agent: determinized search (Perfect Information Monte Carlo).

For one decision:

1. Sample ``worlds`` deals of the unseen cards consistent with the information set
   (:meth:`PlayerView.determinize`: other hands get their known sizes, the rest is the
   stock in random order).
2. In every world play every legal move, then finish the hand with the rollout function
   (default :func:`greedy_rollout`: each seat plays the greedy move). The same worlds
   are used for every move (common random numbers), so moves are compared on the same
   deals.
3. Score a finished hand by the hand-point margin of the agent's side (its points minus
   the mean of the other sides) and play the move with the best mean.

When the stock is empty in a 2-player game the one unseen hand is the opponent's, so the
position is fully known: the agent then solves the rest of the hand exactly with
alpha-beta (``exact_endgame``; only with at most :data:`EXACT_ENDGAME_CARDS` cards left in
hands, so variants with big hands stay fast).

Budget: ``ply_budget`` bounds the rollout plies per decision; the number of worlds is
``ply_budget / (moves * plies left in the hand)`` clamped to ``[min_worlds, max_worlds]``,
so decisions late in the hand sample more worlds for the same cost. This keeps the agent
deterministic for a fixed seed. ``time_limit`` (seconds) additionally stops sampling
once exceeded; it makes results depend on the machine, so it is off by default.
``benchmarks/baselines.py`` measures the default at under 50 ms per move. Each option has a
range (:data:`OPTION_RANGES`, ``time_limit`` at most :data:`MAX_TIME_LIMIT` seconds); a value
outside it is refused with one line naming the option and its range.

The rollout function is a parameter (``rollout=``) so a compiled core can replace it: it
takes a :class:`~scopa_env.engine.game.Game` positioned after the candidate move (with
``auto_next_hand=False``) and the agent's seat, plays to the end of the hand and returns
the margin.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agents.base import Agent
from agents.greedy import card_values, pick_best
from scopa_env.engine.cards import COINS, RANK_MASK, SETTEBELLO, SUIT_MASK
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.rules import Move, move_of

RolloutFn = Callable[[Game, int], float]

COIN_MASK = SUIT_MASK[COINS]
SEVENS = RANK_MASK[7]
SIXES_AND_ACES = RANK_MASK[6] | RANK_MASK[1]
ROLLOUT_SCOPA = 10
"""Rollout policy: a sweep outweighs any capture without one."""
WORLD_TRIES = 200
"""Draws per sampled world before giving up. Variants with declarations constrain the hidden
hands (a seat queued to declare must hold something to declare); a draw the engine rejects
is drawn again, which samples uniformly among the consistent worlds."""
EXACT_ENDGAME_CARDS = 6
"""Solve the last round exactly only with this many cards left in hands or fewer (3 each in the
standard 2-player game); variants dealing bigger hands fall back to rollouts, as the tree grows
factorially."""

OPTION_RANGES: dict[str, tuple[int, int]] = {
    "ply_budget": (1, 10_000_000),
    "min_worlds": (1, 4096),
    "max_worlds": (1, 4096),
}
"""Allowed values of the int options, ends included: a Python rollout takes about a millisecond, so
4,096 worlds of a dozen moves are already about a minute per decision."""
MAX_TIME_LIMIT = 3600.0
"""Most seconds per decision ``time_limit`` may be (it is an upper bound on a budget, not a wait)."""


def fast_clone(game: Game) -> Game:
    """A copy of ``game`` for a rollout that ends with the hand (the generator is shared, not copied).

    Every list attribute is copied (hands, stock, piles, declarations, ... whatever the
    engine keeps), the rest is shared: like :meth:`Game.clone` without copying the
    generator, which is only valid with ``auto_next_hand=False``: the copy never deals a
    new hand, so it never draws from the shared generator.
    """
    g = Game.__new__(Game)
    state = g.__dict__
    state.update(game.__dict__)
    for name, value in state.items():
        if type(value) is list:
            state[name] = value[:]
    return g


def hand_margin(game: Game, seat: int) -> float:
    """Hand points of ``seat``'s side minus the mean of the other sides (the hand must be over)."""
    score = game.hand_result.hand_score
    side = game.side_of[seat]
    # Declarations (bazzica rules) score during the hand, outside hand_score's total.
    declared = game.hand_result.declared
    totals = [row["total"] + (sum(declared[s].values()) if declared else 0) for s, row in enumerate(score)]
    others = [t for s, t in enumerate(totals) if s != side]
    return totals[side] - sum(others) / len(others)


def greedy_rollout(game: Game, seat: int) -> float:
    """Finish the hand with every seat playing a fast greedy move; return ``seat``'s margin.

    The policy is the greedy baseline's in bit arithmetic: captured cards count 1, coins,
    sevens, sixes and aces one more each, the settebello three more, a sweep 10; with no
    capture it trails the card of lowest static value.
    """
    trail_cost = _trail_costs(game)
    while not game.hand_over:
        pairs = game.legal_pairs()
        if len(pairs) == 1:
            game.play_pair(*pairs[0])
            continue
        table = game.table
        best = None
        best_v = -1e9
        for c, m in pairs:
            if m:
                t = m | 1 << c
                v = (
                    t.bit_count()
                    + (t & COIN_MASK).bit_count()
                    + (t & SEVENS).bit_count()
                    + (t & SIXES_AND_ACES).bit_count()
                    + 3 * (t >> SETTEBELLO & 1)
                )
                if m == table:
                    v += ROLLOUT_SCOPA
            else:
                v = -trail_cost[c]
            if v > best_v:
                best_v = v
                best = (c, m)
        game.play_pair(*best)
    return hand_margin(game, seat)


_TRAIL_COSTS: dict = {}


def _trail_costs(game: Game) -> tuple[float, ...]:
    costs = _TRAIL_COSTS.get(game.rules)
    if costs is None:
        costs = _TRAIL_COSTS[game.rules] = card_values(game.rules)
    return costs


class SearchAgent(Agent):
    """Determinized (PIMC) search over rollouts to the end of the hand.

    Args:
        seed: seeds the world sampling and tie-breaks.
        ply_budget: rollout plies per decision (sets the number of worlds, see the module docstring).
        min_worlds: fewest worlds sampled per decision.
        max_worlds: most worlds sampled per decision.
        time_limit: optional seconds per decision after which sampling stops (not reproducible).
        exact_endgame: solve the last round of a 2-player hand exactly (it is fully known).
        rollout: the function that finishes a hand (see the module docstring).
    """

    name = "search"

    def __init__(
        self,
        seed=None,
        ply_budget: int = 2000,
        min_worlds: int = 4,
        max_worlds: int = 64,
        time_limit: float | None = None,
        exact_endgame: bool = True,
        rollout: RolloutFn = greedy_rollout,
    ) -> None:
        super().__init__(seed)
        for name, value in (("ply_budget", ply_budget), ("min_worlds", min_worlds), ("max_worlds", max_worlds)):
            low, high = OPTION_RANGES[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"SearchAgent {name} must be an int in [{low}, {high}], got {value!r}")
        if min_worlds > max_worlds:
            raise ValueError(f"SearchAgent min_worlds ({min_worlds}) exceeds max_worlds ({max_worlds})")
        if time_limit is not None and (
            isinstance(time_limit, bool)
            or not isinstance(time_limit, (int, float))
            or not 0 < time_limit <= MAX_TIME_LIMIT
        ):
            raise ValueError(
                f"SearchAgent time_limit must be positive seconds in (0, {MAX_TIME_LIMIT:g}] or None, got {time_limit!r}"
            )
        self.ply_budget = ply_budget
        self.min_worlds = min_worlds
        self.max_worlds = max_worlds
        self.time_limit = time_limit
        self.exact_endgame = exact_endgame
        self.rollout = rollout

    def __repr__(self) -> str:
        return f"SearchAgent(ply_budget={self.ply_budget}, worlds={self.min_worlds}..{self.max_worlds})"

    def worlds_for(self, view: PlayerView, num_moves: int) -> int:
        """Worlds sampled for a decision with ``num_moves`` legal moves."""
        plies_left = sum(view.hand_counts) + view.stock_count
        worlds = self.ply_budget // max(1, num_moves * plies_left)
        return max(self.min_worlds, min(self.max_worlds, worlds))

    def act(self, view: PlayerView) -> Move:
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        if len(pairs) == 1:
            return move_of(*pairs[0])
        return move_of(*pick_best(pairs, self.move_values(view, pairs), self.rng))

    def solves_exactly(self, view: PlayerView) -> bool:
        """Whether :meth:`move_values` solves ``view`` exactly (the last round of a 2-player hand)."""
        return (
            self.exact_endgame
            and view.num_players == 2
            and view.stock_count == 0
            and sum(view.hand_counts) <= EXACT_ENDGAME_CARDS
        )

    def move_values(self, view: PlayerView, pairs: list[tuple[int, int]]) -> list[float]:
        """Mean rollout margin of each ``(card, captured_mask)`` pair over the sampled worlds (the
        exact margin where :meth:`solves_exactly`)."""
        if self.solves_exactly(view):
            world = self.sample_world(view)
            return [self._solve_after(world, c, m, view.seat) for c, m in pairs]
        start = time.perf_counter()
        totals = [0.0] * len(pairs)
        done = 0
        for _ in range(self.worlds_for(view, len(pairs))):
            world = self.sample_world(view)
            for i, (c, m) in enumerate(pairs):
                g = fast_clone(world)
                g.play_pair(c, m)
                totals[i] += self.rollout(g, view.seat)
            done += 1
            if self.time_limit is not None and time.perf_counter() - start > self.time_limit:
                break
        return [t / done for t in totals]

    def sample_world(self, view: PlayerView) -> Game:
        """A full game consistent with ``view`` (rejection sampling over :meth:`PlayerView.determinize`)."""
        for attempt in range(WORLD_TRIES):
            try:
                world = view.determinize(self.rng)
            except ValueError:
                if attempt == WORLD_TRIES - 1:
                    raise
                continue
            world.auto_next_hand = False
            return world
        raise AssertionError("unreachable")

    def _solve_after(self, world: Game, card: int, captured: int, seat: int) -> float:
        g = fast_clone(world)
        g.play_pair(card, captured)
        return _alphabeta(g, g.side_of[seat], -1e9, 1e9)


def _alphabeta(game: Game, side: int, alpha: float, beta: float) -> float:
    """Exact hand margin of ``side`` with both sides playing perfectly (2 sides, full information)."""
    if game.hand_over:
        score = game.hand_result.hand_score
        return score[side]["total"] - score[1 - side]["total"]
    maximizing = game.side_of[game.current] == side
    best = -1e9 if maximizing else 1e9
    for c, m in game.legal_pairs():
        g = fast_clone(game)
        g.play_pair(c, m)
        v = _alphabeta(g, side, alpha, beta)
        if maximizing:
            best = max(best, v)
            alpha = max(alpha, v)
        else:
            best = min(best, v)
            beta = min(beta, v)
        if alpha >= beta:
            break
    return best
