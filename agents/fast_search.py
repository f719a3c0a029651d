"""The ``fsearch`` agent: the compiled determinized search of :mod:`scopa_env.fast.search`.

It plays like :mod:`agents.search` (sample the hidden cards consistently with the view, play
every move out in every world, keep the best mean hand-point margin) on the compiled core,
with more ingredients: alpha-beta plies before the rollouts (``ab_depth``), an exact
endgame from ``exact_cards`` cards left, heuristic rollouts, and inference about the other
hands from their plays this round. Spec examples::

    fsearch                                   256 worlds, greedy rollouts, exact last round (2 players)
    fsearch:worlds=64,rollout=heuristic       fewer worlds, heuristic rollouts
    fsearch:exact_cards=12,inference=true     exact from the last deal on, weighted worlds
    fsearch:worlds=4096,time_limit=0.05       as many worlds as 50 ms allow, up to 4,096

The budget is in worlds (and rollout plies), so a seed gives the same decisions on any
machine. ``time_limit`` (seconds) is an option on top: the worlds are then searched in chunks
of ``time_chunk`` until the time is spent or ``worlds`` are done, so the decisions depend on
the machine's speed (positions the kernel solves exactly, or gives fewer worlds under a ply
budget, are one call as without it).

Every option has a range (:data:`OPTION_RANGES`, :data:`FLOAT_RANGES`; the table in docs/agents.md):
a value outside it is refused when the agent is built, with one line naming the option and its
range, before anything is searched (``ab_depth=100`` would not finish a decision in hours).

The agent builds the kernel's state row from the :class:`~scopa_env.engine.game.PlayerView` alone
(its hand, the table, piles, scores, played cards, hand sizes), so it decides from the view
only. Each decision draws one seed from the agent's generator: a seeded agent repeats its
decisions. Rules the compiled core does not play (:func:`scopa_env.fast.batch.check_supported`),
house rules registered without ``backends=("fast", "search")`` included, fall back to the Python
:class:`~agents.search.SearchAgent`, as do declarations.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.search import SearchAgent
from scopa_env.engine import house_rules
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move, move_of

COMPILE_NOTICE = "compiling the compiled search once (about a minute; cached afterwards)..."
"""Said on stderr when numba is about to compile the search kernel: where the install-time build
does not take the call (``SCOPA_AOT=0``, a stale or missing build) and numba's cache is cold."""


OPTION_RANGES: dict[str, tuple[int, int]] = {
    "worlds": (1, 65_536),
    "min_worlds": (1, 65_536),
    "time_chunk": (1, 65_536),
    "exact_worlds": (1, 1024),
    "exact_cards": (0, 12),
    "ab_depth": (0, 8),
    "ply_budget": (0, 1_000_000_000),
}
"""Allowed values of the int options, ends included. The costly ones are bounded by what a decision
can afford: ``ab_depth`` 8 takes about a second per decision and each ply multiplies that by the
moves; ``exact_cards`` 12 solves the last two rounds of a 2-player hand exactly, and the tree grows
factorially with every card."""
FLOAT_RANGES: dict[str, tuple[float, float]] = {"infer_temp": (0.01, 1000.0), "time_limit": (0.0, 3600.0)}
"""Allowed values of the number options: ``infer_temp`` in [0.01, 1000] points, ``time_limit`` in
(0, 3600] seconds (or none)."""


def check_options(options: dict, agent: str = "fsearch") -> None:
    """Refuse an option outside :data:`OPTION_RANGES` or :data:`FLOAT_RANGES` with one line naming it and its range."""
    for name, (low, high) in OPTION_RANGES.items():
        value = options.get(name)
        if name in options and (
            isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high
        ):
            raise ValueError(f"{agent} {name} must be an int in [{low}, {high}], got {value!r}")
    low, high = FLOAT_RANGES["infer_temp"]
    temp = options.get("infer_temp", 1.0)
    if isinstance(temp, bool) or not isinstance(temp, (int, float)) or not low <= temp <= high:
        raise ValueError(f"{agent} infer_temp must be a number in [{low:g}, {high:g}], got {temp!r}")
    limit = options.get("time_limit")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= FLOAT_RANGES["time_limit"][1]
    ):
        raise ValueError(
            f"{agent} time_limit must be positive seconds in (0, {FLOAT_RANGES['time_limit'][1]:g}], got {limit!r}"
        )


class FastSearchAgent(Agent):
    """Compiled determinized search (see the module docstring and :func:`scopa_env.fast.search.search_config`).

    Args:
        seed: seeds the per-decision search seeds.
        worlds, rollout, exact_cards, exact_worlds, ab_depth, ply_budget, min_worlds, inference, infer_temp: the
            search settings (:func:`scopa_env.fast.search.search_config`).
    """

    name = "fsearch"

    def __init__(
        self,
        seed=None,
        worlds: int = 256,
        rollout: str = "greedy",
        exact_cards: int = 6,
        exact_worlds: int = 16,
        ab_depth: int = 0,
        ply_budget: int = 0,
        min_worlds: int = 4,
        inference: bool = False,
        infer_temp: float = 1.0,
        time_limit: float | None = None,
        time_chunk: int = 32,
    ) -> None:
        super().__init__(seed)
        check_options(
            dict(
                worlds=worlds,
                min_worlds=min_worlds,
                time_chunk=time_chunk,
                exact_worlds=exact_worlds,
                exact_cards=exact_cards,
                ab_depth=ab_depth,
                ply_budget=ply_budget,
                infer_temp=infer_temp,
                time_limit=time_limit,
            )
        )
        self.time_limit = time_limit
        from scopa_env.fast.search import search_config  # numba loads on first use, not at import

        self.settings = dict(
            worlds=worlds,
            rollout=rollout,
            exact_cards=exact_cards,
            exact_worlds=exact_worlds,
            ab_depth=ab_depth,
            ply_budget=ply_budget,
            min_worlds=min_worlds,
            inference=inference,
            infer_temp=infer_temp,
        )
        self.C = search_config(**self.settings)
        self.C_chunk = search_config(**{**self.settings, "worlds": min(time_chunk, worlds)})
        self._compiled: dict = {}
        self._fallback: SearchAgent | None = None

    def __repr__(self) -> str:
        return f"FastSearchAgent({', '.join(f'{k}={v!r}' for k, v in self.settings.items())})"

    def _rules_arrays(self, view: PlayerView):
        """``(P, F, TBL)`` for the view's rules and player count, or ``None`` if the core cannot play them."""
        key = (view.rules, view.num_players)
        if key not in self._compiled:
            from scopa_env.fast.aot import announce_compile
            from scopa_env.fast.batch import compiled_rules
            from scopa_env.fast.search import search_kernel, search_params

            announce_compile(search_kernel, COMPILE_NOTICE)  # before the first search of these rules

            try:
                P, F, TBL, _ = compiled_rules(view.rules, view.num_players)
                # a house rule the core plays (backends=("fast",)) but the search does not value
                house_rules.check_backend(view.rules.house_rules, "search", view.rules.name)
                self._compiled[key] = (search_params(P), F, TBL)
            except NotImplementedError:
                self._compiled[key] = None
        return self._compiled[key]

    def act(self, view: PlayerView) -> Move:
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        if len(pairs) == 1:
            return move_of(*pairs[0])
        card, mask = self.search(view)
        return move_of(card, mask)

    def move_values(self, view: PlayerView) -> tuple[np.ndarray, bool] | None:
        """``(values, exact)``: the search's mean margin of each of ``view.legal_pairs()`` (in that
        order) and whether the position was solved exactly; ``None`` where the compiled search does
        not play (the Python fallback's cases). One seed is drawn from the agent's generator."""
        inputs = self._kernel_inputs(view)
        if inputs is None:
            return None
        from scopa_env.fast.search import C_EXACT_CARDS, search_rows

        row, counts, seed, P, F, TBL, obs = inputs
        _, values = search_rows(row[None], counts[None], np.array([seed], np.int64), P, F, TBL, self.C, obs)
        exact = sum(view.hand_counts) + view.stock_count <= self.C[C_EXACT_CARDS]
        return values[0, : len(view.legal_pairs())], bool(exact)

    def skips_inexact(self, view: PlayerView) -> bool:
        """Whether :meth:`move_values` would search ``view`` in the compiled core and not solve it exactly
        (more than ``exact_cards`` cards left): then this draws the one seed that call would draw and
        returns ``True``, so a caller that needs only the exact values may skip the search and leave
        every later decision as it was; otherwise it draws nothing and returns ``False``."""
        from scopa_env.fast.search import C_EXACT_CARDS

        if sum(view.hand_counts) + view.stock_count <= self.C[C_EXACT_CARDS]:
            return False
        if self._rules_arrays(view) is None or view.deciding or view.wild_rank or any(view.revealed):
            return False
        self.rng.integers(2**62)
        return True

    @property
    def fallback(self) -> SearchAgent:
        """The Python search that plays where the compiled one does not (it shares this agent's generator)."""
        if self._fallback is None:
            self._fallback = SearchAgent(seed=self.rng)
        return self._fallback

    def fallback_values(self, view: PlayerView) -> tuple[np.ndarray, bool]:
        """``(values, exact)`` like :meth:`move_values`, from :attr:`fallback`: for the positions where
        :meth:`move_values` gives ``None``, so that an agent built on the values plays them as ``act`` does."""
        fallback = self.fallback
        exact = fallback.solves_exactly(view)
        return np.asarray(fallback.move_values(view, view.legal_pairs()), np.float64), exact

    def _kernel_inputs(self, view: PlayerView):
        """``(row, counts, seed, P, F, TBL, obs)`` for one decision, or ``None`` where the compiled
        search does not play (rules the core lacks, declarations, a wildcard). Draws the seed."""
        arrays = self._rules_arrays(view)
        seed = int(self.rng.integers(2**62))
        if arrays is None or view.deciding or view.wild_rank or any(view.revealed):
            return None
        from scopa_env.fast.search import round_plays, row_from_view

        P, F, TBL = arrays
        row, counts = row_from_view(view, P)
        obs = round_plays(view)[None] if self.settings["inference"] else None
        return row, counts, seed, P, F, TBL, obs

    def search(self, view: PlayerView) -> tuple[int, int]:
        """The searched ``(card, captured_mask)`` for the seat to move."""
        inputs = self._kernel_inputs(view)
        if inputs is None:
            move = self.fallback.act(view)
            return move.card, move.mask
        from scopa_env.fast.search import search_rows

        row, counts, seed, P, F, TBL, obs = inputs
        if self.time_limit is None:
            out, _ = search_rows(row[None], counts[None], np.array([seed], np.int64), P, F, TBL, self.C, obs)
            return int(out[0, 0]), int(out[0, 1])
        return self._timed(view, row, counts, seed, P, F, TBL, obs)

    def _timed(self, view, row, counts, seed, P, F, TBL, obs) -> tuple[int, int]:
        """Chunks of worlds until ``time_limit`` is spent or ``worlds`` are searched; best weighted mean."""
        import time

        from scopa_env.fast.search import C_WORLDS, OUT_WORLDS, search_rows

        deadline = time.perf_counter() + self.time_limit
        pairs = view.legal_pairs()  # the kernel's value order (core.legal_pairs lists the same moves)
        seeds = np.random.default_rng(seed)
        total = np.zeros(len(pairs))
        done = 0
        while True:
            one = np.array([seeds.integers(2**62)], np.int64)
            out, values = search_rows(row[None], counts[None], one, P, F, TBL, self.C_chunk, obs)
            worlds = int(out[0, OUT_WORLDS])
            if worlds < self.C_chunk[C_WORLDS] and done == 0:  # solved exactly, or a ply budget: one call
                return int(out[0, 0]), int(out[0, 1])
            total += worlds * values[0, : len(pairs)]
            done += worlds
            if done >= self.C[C_WORLDS] or time.perf_counter() >= deadline:
                break
        best = np.flatnonzero(total >= total.max() - 1e-9)
        return pairs[int(best[int(seeds.integers(len(best)))]) if len(best) > 1 else int(best[0])]
