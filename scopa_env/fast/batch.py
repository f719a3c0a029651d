"""``BatchedScopa``: N independent games of Scopa stepped together by compiled kernels.

::

    from scopa_env.fast import BatchedScopa
    batch = BatchedScopa(1024, num_players=2, action_mode="select")
    batch.reset(np.arange(1024))
    while True:
        actions = pick(batch.obs, batch.action_mask)  # one action per game
        batch.step(actions)                           # auto-resets finished games
        batch.rewards, batch.terminated, batch.hand_score ...

It plays exactly the game of :class:`scopa_env.engine.game.Game` and speaks the API of
:mod:`scopa_env.aec.scopa_v0` (observation layout, action ids, masks, rewards, hand-end
score breakdown): ``tests/test_fast.py`` drives both with the same deals and moves.

======================  ====================================================================
Outputs (read-only)     after :meth:`~BatchedScopa.reset` and every :meth:`~BatchedScopa.step`
======================  ====================================================================
``obs``                 float32 ``(N, size)``: observation of the seat to move (``to_play``)
``action_mask``         int8 ``(N, 41)``, "select" mode: legal actions of the seat to move
                        (``(N, 53)`` for the 52-card deck, ``french_52``)
``legal_ids``           int64 ``(N, legal_width)``, "move" mode: legal move ids ascending
                        (a chiamarsi fuori claim last, as the AEC env lists it), padded
                        with -1; ``legal_count`` (N,) says how many
``to_play``             int64 ``(N,)``: seat to move (always the learner with opponents)
``rewards``             float32 ``(N, players)``: this step's reward of every seat (the AEC
                        env's ``rewards``), summed over the opponents' moves too
``terminated``          bool ``(N,)``: the episode ended in this step; the game in that row is
                        already a new one (auto-reset); ``final_obs`` holds the last
                        observation of ``final_obs_seat`` (the learner, or the seat that
                        made the final move), ``winner`` the winning side (-1: none) and
                        ``final_scores`` ``(N, sides)`` the game points per side
``hand_ended``          bool ``(N,)``: a hand ended in this step; ``hand_score`` float64
                        ``(N, sides, 23)`` holds it per side, fields :data:`SCORE_FIELDS`
                        (:meth:`~BatchedScopa.hand_score_dicts` gives the engine's dicts);
                        after a chiamarsi fuori claim it holds the certain points
                        (``scoring.secured_points``) and ``claim`` int64 ``(N,)`` says
                        how the game ended: 1 ``"claim"``, 2 ``"false_claim"``, else 0
======================  ====================================================================

Episodes: each row plays games (or hands, ``episode="hand"``) back to back; after an
episode the row deals a new game from its own generator, which :meth:`reset` seeds.
The first dealer of every game is the last seat, so seat 0 leads (as ``Game`` does).

Opponents: with ``opponent="random"``, ``"greedy"`` or ``"heuristic"`` (the compiled
twins of :mod:`agents.random_agent`, :mod:`agents.greedy` and :mod:`agents.heuristic`) the
learner holds one seat per game (``learner_seat``: a seat, or ``"random"`` to draw one per
game) and every other seat, partners included, is played by compiled code inside
:meth:`step` until it is the learner's turn again. A dict such as
``{"greedy": 0.5, "heuristic": 0.5}`` is a mixture: each game draws its opponents' kind
at every reset from its own seeded generator (``opponent_kind``, int64 ``(N,)``, indexes
:data:`OPPONENT_KINDS`; ``final_opponent`` is the kind of a game that just ended).

Bad input (wrong shapes or dtypes, illegal actions, seeds of the wrong length) raises
``ValueError`` naming the game; nothing is clipped or coerced.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import os
from typing import Any

import numpy as np

from scopa_env.engine.actions import num_select_actions
from scopa_env.engine.bounds import SEED_RULE
from scopa_env.engine.cards import FRENCH_RANKS, format_card, format_cards
from scopa_env.engine.rules import Rules
from scopa_env.engine.setup import GameSetup, resolve_setup
from scopa_env.fast import aot, core
from scopa_env.fast.core import SCORE_FIELDS
from scopa_env.fast.params import (  # made without numba (the AEC env's row); re-exported here
    GREEDY_CARD,
    GREEDY_COIN,
    GREEDY_PRIMIERA,
    GREEDY_SCOPA,
    GREEDY_SETTEBELLO,
    SUPPORTED_FIELDS,
    check_supported,
    compiled_rules,
)

OPPONENTS = {
    None: core.OPPONENT_NONE,
    "random": core.OPPONENT_RANDOM,
    "greedy": core.OPPONENT_GREEDY,
    "heuristic": core.OPPONENT_HEURISTIC,
}
OPPONENT_KINDS = ("random", "greedy", "heuristic")
"""Compiled player kinds, indexed by their code (``opponent_kind``, ``final_opponent``)."""

# Heuristic opponent weights (agents.heuristic.HeuristicWeights defaults; its capture weights are the greedy's).
HEURISTIC_REPLY, HEURISTIC_BLOCK, HEURISTIC_LEFTOVER, HEURISTIC_TRAIL = 1.0, 1.0, 1.0, 0.3


def opponent_weights(opponent: str | dict[str, float] | None) -> np.ndarray | None:
    """The mixture weights per kind of :data:`OPPONENT_KINDS` (summing to 1), or ``None`` for no opponent.

    ``opponent`` is a kind name or a dict ``{kind: weight}``; unknown names, weights that
    are negative, not finite or all zero raise ``ValueError``.
    """
    if opponent is None:
        return None
    if isinstance(opponent, str):
        if opponent not in OPPONENT_KINDS:
            raise ValueError(
                f"opponent must be one of {OPPONENT_KINDS}, a dict of them to weights or None, got {opponent!r}"
            )
        opponent = {opponent: 1.0}
    if not isinstance(opponent, dict) or not opponent:
        raise ValueError(
            f"opponent must be one of {OPPONENT_KINDS}, a dict of them to weights or None, got {opponent!r}"
        )
    weights = np.zeros(len(OPPONENT_KINDS), np.float64)
    for name, w in opponent.items():
        if name not in OPPONENT_KINDS:
            raise ValueError(f"opponent mixture: unknown opponent {name!r}; known: {', '.join(OPPONENT_KINDS)}")
        if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)):
            raise ValueError(f"opponent mixture: weight of {name!r} must be a number, got {w!r}")
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"opponent mixture: weight of {name!r} must be finite and >= 0, got {w!r}")
        weights[OPPONENT_KINDS.index(name)] = float(w)
    total = weights.sum()
    if total <= 0:
        raise ValueError(f"opponent mixture: the weights are all zero: {opponent!r}")
    return weights / total


def heuristic_weights() -> np.ndarray:
    """The heuristic player's weights ``H`` (indices ``core.H_*``), read-only."""
    H = np.zeros(core.NUM_HEURISTIC, np.float64)
    H[core.H_CARD] = GREEDY_CARD
    H[core.H_COIN] = GREEDY_COIN
    H[core.H_SETTEBELLO] = GREEDY_SETTEBELLO
    H[core.H_PRIMIERA] = GREEDY_PRIMIERA
    H[core.H_SCOPA] = GREEDY_SCOPA
    H[core.H_REPLY] = HEURISTIC_REPLY
    H[core.H_BLOCK] = HEURISTIC_BLOCK
    H[core.H_LEFTOVER] = HEURISTIC_LEFTOVER
    H[core.H_TRAIL] = HEURISTIC_TRAIL
    H.flags.writeable = False
    return H


HEURISTIC_H = heuristic_weights()


def decision_tables(rules: Rules, TBL: np.ndarray) -> np.ndarray | None:
    """The kernels' ``D``: ``TBL`` where a decision rule plays (Chkobba's first card, the
    declarations, Cirulla's table bonus, chiamarsi fuori), else ``None``, so that numba prunes
    that code from the kernels the other presets compile (a shorter cold start)."""
    decisions = rules.first_card_choice or rules.declarations or rules.table_bonus or rules.claim_out
    return TBL if decisions else None


def capture_tables(rules: Rules, TBL: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The batch row loop's ``(STD, VAR)``: ``(TBL, None)`` with the standard captures
    (``P_PLAIN``), ``(None, TBL)`` with a variant's (sums, the Ace's take-all, the 52-card
    deck ...): numba prunes the code behind the None, so each batch compiles one capture code."""
    standard = rules.plain_captures and rules.ranks_per_suit != FRENCH_RANKS
    return (TBL, None) if standard else (None, TBL)


def score_keys(rules: Rules) -> tuple[str, ...]:
    """The keys of the engine's hand score dicts under ``rules``: the :data:`SCORE_FIELDS` it reports."""
    names = list(SCORE_FIELDS[: core.SCORE_SEVEN_MAJORITY])
    if rules.prime_rule == "sevens":
        names += ["seven_majority", "num_sevens", "num_sixes"]
    elif rules.primiera_by_counts:
        names += ["num_sevens", "num_sixes"]
    if rules.double_game_below:
        names.append("double_game")
    for on, keys in (
        (rules.re_bello, ("re_bello",)),
        (rules.seven_of_cups, ("seven_of_cups",)),
        (rules.palle_del_cane, ("palle_del_cane",)),
        (rules.napola, ("napola",)),
        (rules.scalette, ("scaletta_bassa", "scaletta_alta")),
        (rules.piccola_grande, ("piccola", "grande")),
        (rules.piva, ("piva",)),
    ):
        if on:
            names += keys
    return tuple(names)


CLAIM_LACKS = ("num_sevens", "num_sixes", "double_game")
"""Keys of :func:`score_keys` that :func:`scopa_env.engine.scoring.secured_points` rows (a claim) do not have."""


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


THREADS_ENV = "SCOPA_THREADS"
"""Environment variable with the default thread count of :class:`BatchedScopa` (a number or ``all``)."""


def max_threads() -> int:
    """The most threads a batch may use: the cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@functools.cache
def _thread_pool(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    """One pool per worker count, shared by every batch (its threads idle between steps)."""
    return concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scopa-batch")


def check_threads(threads: int | str) -> int:
    """``threads`` as a count in ``1..max_threads()`` (``"all"``: every core); else ``ValueError``."""
    if isinstance(threads, str) and threads.strip().lower() == "all":
        return max_threads()
    if isinstance(threads, str) and threads.strip().isdigit():
        threads = int(threads)
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= max_threads():
        raise ValueError(f"threads must be 'all' or a count in 1..{max_threads()} (the cores), got {threads!r}")
    return int(threads)


def default_threads() -> int:
    """Threads of a :class:`BatchedScopa` built without ``threads``: ``$SCOPA_THREADS``, else 1."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return 1
    try:
        return check_threads(value)
    except ValueError as exc:
        raise ValueError(f"{THREADS_ENV}={value!r}: {exc}") from None


def default_legal_width(rules: Rules) -> int:
    """Columns of a "move"-mode batch's ``legal_ids`` wide enough for every position of ``rules``.

    Captures of equal value leave a few dozen legal moves at most (Scopone scientifico's 10-card
    hands, 24 seen in random play); captures of any set adding up to a total (Escoba's fifteen)
    leave many more: 75 seen in random play, so such rules get the soak's width
    (``benchmarks/soak.py``, 1,024, never exceeded there).
    """
    return 1024 if rules.capture_sum else 64


def _check_num_games(num_games: int) -> None:
    """Check :class:`BatchedScopa`'s ``num_games``: a positive int (else ``ValueError``). The game's
    arguments are checked by :meth:`GameSetup.of <scopa_env.engine.setup.GameSetup.of>`."""
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
        raise ValueError(f"num_games must be a positive int, got {num_games!r}")


_GAME_DEFAULTS = {"rules": None, "num_players": 2, "action_mode": "select", "episode": "game", "reward": "game"}
"""The game's arguments of :class:`BatchedScopa` and their defaults (``setup=`` gives them all at once)."""


class BatchedScopa:
    """N games of Scopa in numpy arrays, stepped by compiled kernels. See the module docstring.

    Args:
        num_games: N, the batch size.
        num_players: 2, 3, 4 or 6 (8: ``french_52``).
        rules: a preset name or :class:`~scopa_env.engine.rules.Rules` (unsupported ones raise
            ``NotImplementedError`` naming the preset and field).
        action_mode: ``"select"`` (``Discrete(41)``, 53 for ``french_52``; dense masks) or ``"move"`` (the ids of
            :func:`scopa_env.engine.actions.move_enumeration`, as a padded list).
        episode: ``"game"`` or ``"hand"``, as in :mod:`scopa_env.aec.scopa_v0`.
        reward: ``"game"`` or ``"points"``, as in :mod:`scopa_env.aec.scopa_v0`.
        opponent: ``None`` (the caller plays every seat), ``"random"``, ``"greedy"``,
            ``"heuristic"``, or a mixture ``{"greedy": 0.5, "heuristic": 0.5}``: each game
            draws its opponents' kind at every reset from the row's seeded generator
            (``opponent_kind`` says which; ``final_opponent`` that of a finished game).
        learner_seat: with an opponent, the learner's seat, or ``"random"`` (one per game).
        legal_width: "move" mode: columns of ``legal_ids``, default :func:`default_legal_width`
            of the rules. A position with more legal moves raises ``RuntimeError`` (never
            truncated); raise the width then.
        threads: cores that :meth:`reset` and :meth:`step` use (threads, each playing a
            contiguous run of rows in a compiled kernel that releases the GIL), or ``"all"``;
            default :func:`default_threads` (the ``SCOPA_THREADS`` environment variable,
            else 1). Rows never share state, so the results are the same whatever the count;
            no extra kernel is compiled for it.
        setup: instead of ``num_players``, ``rules`` and the modes, a
            :class:`~scopa_env.engine.setup.GameSetup` (``batch.setup`` is the batch's own).
    """

    def __init__(
        self,
        num_games: int,
        num_players: int = 2,
        rules: Rules | str | None = None,
        action_mode: str = "select",
        episode: str = "game",
        reward: str = "game",
        opponent: str | dict[str, float] | None = None,
        learner_seat: int | str = 0,
        legal_width: int | None = None,
        threads: int | str | None = None,
        *,
        setup: GameSetup | None = None,
    ) -> None:
        _check_num_games(num_games)
        self.setup = resolve_setup(
            setup,
            _GAME_DEFAULTS,
            rules=rules,
            num_players=num_players,
            action_mode=action_mode,
            episode=episode,
            reward=reward,
        )
        """The game (rules, player count, modes) and what it fixes: :class:`~scopa_env.engine.setup.GameSetup`."""
        mixture = opponent_weights(opponent)
        self.rules = self.setup.rules
        self.num_games = int(num_games)
        self.num_players = self.setup.num_players
        base_P, self._F, self._TBL, self._PAIRS = compiled_rules(self.setup)
        self._D = decision_tables(self.rules, self._TBL)
        self._STD, self._VAR = capture_tables(self.rules, self._TBL)
        self._rows = None  # the row loop, chosen at the first reset (aot.rows_for, else the JIT's)
        seat_code = self._learner_seat_code(learner_seat)
        legal_width = self._check_legal_width(legal_width)
        self.action_mode = self.setup.action_mode
        self.episode = self.setup.episode
        self.reward_mode = self.setup.reward
        self.opponent = dict(opponent) if isinstance(opponent, dict) else opponent
        self.learner_seat = learner_seat
        self.layout = self.setup.layout
        self.num_sides = self.setup.num_sides
        self.moves = self.setup.moves  # "move" mode: rules too wide for it raise the ValueError naming "select"
        self.confirm = self.setup.confirm  # "select" mode's CONFIRM: 40, or 52 for the 52-card deck
        self.num_actions = self.setup.num_actions
        self._P = self._batch_params(base_P, mixture, seat_code, legal_width)
        # the opponents' code is compiled only into batches with an opponent (OPPS not None):
        # numba prunes branches on None
        self._O = None if mixture is None else self._F
        # the heuristic's kernels are compiled (and passed) only where a heuristic opponent may play
        self._H = HEURISTIC_H if mixture is not None and mixture[core.OPPONENT_HEURISTIC] > 0 else None
        self.legal_width = int(legal_width)
        self.threads = check_threads(default_threads() if threads is None else threads)
        self._allocate_buffers()
        self._expose_outputs()
        self._rules = core.Rules(self._P, self._F, self._TBL, self._PAIRS, self._H)
        """The kernels' :class:`~scopa_env.fast.core.bundles.Rules` (its arrays are the ones above)."""
        self.score_keys = score_keys(self.rules)

    # --- construction ------------------------------------------------------------

    def _learner_seat_code(self, learner_seat: int | str) -> int:
        """The kernels' code of ``learner_seat``: the seat, or ``core.LEARNER_RANDOM`` for ``"random"``."""
        if learner_seat == "random":
            return core.LEARNER_RANDOM
        if isinstance(learner_seat, (int, np.integer)) and not isinstance(learner_seat, bool):
            if not 0 <= learner_seat < self.num_players:
                raise ValueError(f"learner_seat must be a seat in 0..{self.num_players - 1} or 'random'")
            return int(learner_seat)
        raise ValueError(f"learner_seat must be a seat or 'random', got {learner_seat!r}")

    def _check_legal_width(self, legal_width: int | None) -> int:
        """``legal_width``, or :func:`default_legal_width` of the rules for ``None``; ``ValueError``
        unless a positive int."""
        if legal_width is None:
            legal_width = default_legal_width(self.rules)
        if isinstance(legal_width, bool) or not isinstance(legal_width, (int, np.integer)) or legal_width < 1:
            raise ValueError(f"legal_width must be a positive int, got {legal_width!r}")
        return legal_width

    def _batch_params(
        self, base_P: np.ndarray, mixture: np.ndarray | None, seat_code: int, legal_width: int
    ) -> np.ndarray:
        """This batch's read-only ``P``: ``base_P`` (:func:`compiled_rules`) with the episode, reward,
        action mode, opponent, learner seat and legal width set. A mixture of opponents also gets its
        own copy of ``F`` (``self._F``) holding the cumulative weights that each reset draws from."""
        P = base_P.copy()
        P[core.P_EPISODE_HAND] = self.episode == "hand"
        P[core.P_REWARD_POINTS] = self.reward_mode == "points"
        P[core.P_SELECT] = self.action_mode == "select"
        if mixture is None:
            P[core.P_OPPONENT] = core.OPPONENT_NONE
        elif np.count_nonzero(mixture) == 1:
            P[core.P_OPPONENT] = int(np.flatnonzero(mixture)[0])  # one kind: no draws
        else:
            P[core.P_OPPONENT] = core.OPPONENT_MIXED
            F = self._F.copy()
            cumulative = np.cumsum(mixture)
            cumulative[int(np.flatnonzero(mixture)[-1]) :] = np.inf  # no rounding gap at the top
            F[core.F_OPP_CUMULATIVE : core.F_OPP_CUMULATIVE + len(OPPONENT_KINDS)] = cumulative
            F.flags.writeable = False
            self._F = F
        P[core.P_LEARNER_SEAT] = seat_code
        P[core.P_LEGAL_WIDTH] = legal_width
        P.flags.writeable = False
        return P

    def _allocate_buffers(self) -> None:
        """Allocate the kernels' per-game arrays (state, generators, outputs), all zero until :meth:`reset`."""
        n = self.num_games
        self._S = np.zeros((n, core.NUM_COLS), np.int64)
        self._rng = np.zeros((n, 2), np.uint64)
        self._obs = np.zeros((n, self.layout.size), np.float32)
        self._final_obs = np.zeros((n, self.layout.size), np.float32)
        self._mask = np.zeros((n, num_select_actions(self.rules)), np.int8)
        self._legal_ids = np.full((n, self.legal_width), -1, np.int64)
        self._rewards = np.zeros((n, self.num_players), np.float32)
        self._info = np.zeros((n, core.NUM_INFO), np.int64)
        self._hand_score = np.zeros((n, core.MAX_SIDES, core.NUM_SCORE_FIELDS), np.float64)
        self._games = core.Games(self._S, self._rng)
        self._outputs = core.Outputs(
            self._obs, self._mask, self._legal_ids, self._rewards, self._info, self._hand_score, self._final_obs
        )
        self._ready = False

    def _expose_outputs(self) -> None:
        """Set the public outputs (see the module docstring): read-only views of the kernels' arrays."""
        self.obs = _readonly(self._obs)
        self.final_obs = _readonly(self._final_obs)
        self.action_mask = _readonly(self._mask)
        self.legal_ids = _readonly(self._legal_ids)
        self.legal_count = _readonly(self._info[:, core.INFO_LEGAL_COUNT])
        self.to_play = _readonly(self._info[:, core.INFO_TO_PLAY])
        self.rewards = _readonly(self._rewards)
        self.hand_score = _readonly(self._hand_score[:, : self.num_sides])
        self.winner = _readonly(self._info[:, core.INFO_WINNER])
        self.final_scores = _readonly(self._info[:, core.INFO_FINAL_SCORE : core.INFO_FINAL_SCORE + self.num_sides])
        self.final_obs_seat = _readonly(self._info[:, core.INFO_OBS_SEAT])
        self.opponent_kind = _readonly(self._S[:, core.COL_OPPONENT])
        self.final_opponent = _readonly(self._info[:, core.INFO_FINAL_OPPONENT])
        self.claim = _readonly(self._info[:, core.INFO_CLAIM])

    # --- episode API -------------------------------------------------------------

    def reset(self, seeds: np.ndarray | list[int]) -> np.ndarray:
        """Start a new game in every row; row ``i``'s deals and opponents draw from ``seeds[i]``, an int
        in ``[0, 2**63)`` (the seed rule of every env, :mod:`scopa_env.engine.bounds`).

        Returns ``obs`` (read-only).
        """
        seeds = self._check_int_array(seeds, "seeds")
        bad = np.flatnonzero(seeds < 0)
        if bad.size:  # the seed rule of scopa_env/engine/bounds.py, per game
            raise ValueError(f"game {bad[0]}: seeds value {seeds[bad[0]]} is not {SEED_RULE}")
        self._run(core.OP_RESET, seeds)
        self._ready = True
        return self.obs

    def step(self, actions: np.ndarray | list[int]) -> np.ndarray:
        """One action per game for the seat to move; finished episodes auto-reset.

        Returns ``obs`` (read-only); rewards, terminations and hand scores are attributes.
        """
        if not self._ready:
            raise ValueError("call reset(seeds) before step()")
        actions = self._check_int_array(actions, "actions")
        self._run(core.OP_STEP, actions)
        return self.obs

    def _call(self, op: int, arg: np.ndarray, obs: np.ndarray, H: np.ndarray | None = None) -> tuple[int, int]:
        if op in (core.OP_RESET, core.OP_STEP):
            if self.threads > 1 and self.num_games > 1:
                return self._call_threads(op, arg, obs)
            args = self._kernel_args(arg, obs)
            if self._rows is None:  # the ahead-of-time build where it takes these arguments (aot.py)
                self._rows = aot.rows_for(args, aot_arg_kinds) or core.batch_rows
            return self._rows(op, 0, self.num_games, 1, *args)
        rules = self._rules if H is None else self._rules._replace(heuristic=H)
        out = self._outputs if obs is self._obs else self._outputs._replace(obs=obs)
        return core.batch_kernel(op, arg, self._games, rules, out, self._D)  # observe, choose

    def _kernel_args(self, arg: np.ndarray, obs: np.ndarray) -> tuple:
        """What ``core.batch_rows`` takes after the op, the row range and the ``prepare`` flag:
        ``arg``, the games, the rules and the outputs (``obs`` in place of the batch's own), then
        the compile-time switches ``D``, ``OPPS``, ``STD`` and ``VAR``."""
        out = self._outputs if obs is self._obs else self._outputs._replace(obs=obs)
        return arg, self._games, self._rules, out, self._D, self._O, self._STD, self._VAR

    def _call_threads(self, op: int, arg: np.ndarray, obs: np.ndarray) -> tuple[int, int]:
        """Reset or step on :attr:`threads` threads: the actions are checked (or the games
        seeded) first, then each thread plays a contiguous run of rows in
        ``core.batch_rows``, which releases the GIL; the first bad row is reported, as one
        thread would."""
        if op == core.OP_STEP:
            status, game = core.check_actions(self._P, arg, self._mask, self._legal_ids, self._info)
            if status != core.STATUS_OK:
                return status, game
        else:
            core.seed_games(self._rng, arg)
        args = self._kernel_args(arg, obs)
        n = self.num_games
        chunks = min(self.threads, n)
        bounds = [c * n // chunks for c in range(chunks + 1)]
        pool = _thread_pool(chunks - 1)
        # The calling thread plays the first run while the pool plays the others.
        futures = [pool.submit(core.batch_rows, op, bounds[c], bounds[c + 1], 0, *args) for c in range(1, chunks)]
        results = [core.batch_rows(op, bounds[0], bounds[1], 0, *args)] + [f.result() for f in futures]
        for status, game in results:
            if status != core.STATUS_OK:
                return status, game
        return core.STATUS_OK, -1

    def _run(self, op: int, arg: np.ndarray) -> None:
        status, game = self._call(op, arg, self._obs)
        if status == core.STATUS_BAD_ACTION:
            raise ValueError(f"game {game}: {self._illegal_text(game, int(arg[game]))}")
        if status == core.STATUS_LEGAL_OVERFLOW:
            self._ready = False
            raise RuntimeError(
                f"game {game}: {int(self._info[game, core.INFO_LEGAL_COUNT])} legal moves, more than "
                f"legal_width={self.legal_width}; build the batch with a larger legal_width and reset it"
            )

    def _check_int_array(self, values, what: str) -> np.ndarray:
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu" and arr.size:
            bad = next((i for i, v in enumerate(arr.reshape(-1)) if not isinstance(v, (int, np.integer))), 0)
            raise ValueError(f"{what} must be integers, got dtype {arr.dtype} (game {bad}: {arr.reshape(-1)[bad]!r})")
        if arr.shape != (self.num_games,):
            raise ValueError(f"{what} must have shape ({self.num_games},) (one per game), got shape {arr.shape}")
        if arr.dtype.kind not in "iu":  # an empty list: numpy's float64
            raise ValueError(f"{what} must be integers, got dtype {arr.dtype}")
        if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            game = int(np.argmax(arr > np.iinfo(np.int64).max))
            raise ValueError(f"game {game}: {what} value {arr[game]} does not fit in int64")
        return np.ascontiguousarray(arr, dtype=np.int64)

    def _illegal_text(self, game: int, action: int) -> str:
        seat = int(self._info[game, core.INFO_TO_PLAY])
        legal = self.legal_actions(game)
        if self.action_mode == "select":
            deck = self.rules.ranks_per_suit
            confirm = self.confirm
            desc = "confirm" if action == confirm else (format_card(action, deck) if 0 <= action < confirm else "?")
            names = ", ".join(f"{a} ({'confirm' if a == confirm else format_card(a, deck)})" for a in legal)
        else:
            desc = str(self.moves.decode(action)) if 0 <= action < len(self.moves) else "out of range"
            names = ", ".join(f"{a} ({self.moves.decode(a)})" for a in legal)
        if not 0 <= action < self.num_actions:
            return f"action {action} is out of range 0..{self.num_actions - 1} for player_{seat}; legal: {names}"
        return f"action {action} ({desc}) is not legal for player_{seat}; legal: {names}"

    # --- queries -----------------------------------------------------------------

    @property
    def hand_ended(self) -> np.ndarray:
        """bool ``(N,)``: a hand ended in the last step (a new array)."""
        return self._info[:, core.INFO_HAND_ENDED] != 0

    @property
    def terminated(self) -> np.ndarray:
        """bool ``(N,)``: the episode ended in the last step and the row was reset (a new array)."""
        return self._info[:, core.INFO_TERMINATED] != 0

    def legal(self) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """The legal actions of every game: the "select" mask, or ``(legal_ids, legal_count)``."""
        if self.action_mode == "select":
            return self.action_mask
        return self.legal_ids, self.legal_count

    def legal_actions(self, game: int) -> list[int]:
        """Legal action ids of one game, ascending."""
        if self.action_mode == "select":
            return np.flatnonzero(self._mask[game]).tolist()
        return self._legal_ids[game, : self._info[game, core.INFO_LEGAL_COUNT]].tolist()

    def dense_move_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """The ``(N, num_actions)`` int8 mask of the legal actions (dense; costly in "move" mode)."""
        if out is None:
            out = np.zeros((self.num_games, self.num_actions), np.int8)
        else:
            out[:] = 0
        if self.action_mode == "select":
            out[:] = self._mask
            return out
        valid = self._legal_ids >= 0
        rows = np.broadcast_to(np.arange(self.num_games)[:, None], valid.shape)
        out[rows[valid], self._legal_ids[valid]] = 1
        return out

    def choose(self, player: str = "greedy") -> list[tuple[int, int]]:
        """The ``(card, captured_mask)`` a compiled ``"random"``, ``"greedy"`` or ``"heuristic"``
        player would play now in every game (drawing from the opponents' generator); nothing is played."""
        if player not in OPPONENT_KINDS:
            raise ValueError(f"player must be one of {OPPONENT_KINDS}, got {player!r}")
        if not self._ready:
            raise ValueError("call reset(seeds) before choose()")
        kinds = np.full(self.num_games, OPPONENTS[player], np.int64)
        self._call(core.OP_CHOOSE, kinds, self._obs, HEURISTIC_H if player == "heuristic" else None)
        return [(int(c), int(m)) for c, m in self._info[:, core.INFO_CHOICE_CARD : core.INFO_CHOICE_MASK + 1]]

    def observe(self, seats: np.ndarray | list[int], out: np.ndarray | None = None) -> np.ndarray:
        """Observations of game ``i`` from seat ``seats[i]`` (float32 ``(N, size)``)."""
        seats = self._check_int_array(seats, "seats")
        bad = np.flatnonzero((seats < 0) | (seats >= self.num_players))
        if bad.size:
            raise ValueError(f"game {bad[0]}: seat {seats[bad[0]]} is not in 0..{self.num_players - 1}")
        if out is None:
            out = np.empty((self.num_games, self.layout.size), np.float32)
        elif (
            not isinstance(out, np.ndarray)
            or out.shape != (self.num_games, self.layout.size)
            or out.dtype != np.float32
            or not out.flags.c_contiguous
            or not out.flags.writeable
        ):
            raise ValueError(
                f"out must be a writable C-contiguous float32 array of shape {(self.num_games, self.layout.size)}"
            )
        self._call(core.OP_OBSERVE, seats, out)
        return out

    def hand_score_dicts(self, game: int) -> list[dict[str, Any]]:
        """The last hand score of one game as :func:`scopa_env.engine.scoring.score_hand` dicts (the same keys);
        after a claim in the last step, :func:`scopa_env.engine.scoring.secured_points` rows (their keys)."""
        names = self.score_keys
        if self._info[game, core.INFO_CLAIM] != core.CLAIM_NONE:
            names = tuple(k for k in names if k not in CLAIM_LACKS)
        out = []
        for side in range(self.num_sides):
            row = self._hand_score[game, side]
            d = {name: int(row[SCORE_FIELDS.index(name)]) for name in names}
            pv = float(row[core.SCORE_PRIMIERA_VALUE])
            d["primiera_value"] = int(pv) if pv.is_integer() else pv
            out.append(d)
        return out

    def state(self, game: int) -> dict[str, Any]:
        """The full state of one game, in :class:`scopa_env.engine.game.Game`'s terms (for tests and debugging)."""
        S = self._S[game]
        n, s = self.num_players, self.num_sides
        size = len(self.rules.deck)
        pos = int(S[core.COL_STOCK_POS])
        lc = int(S[core.COL_LASTCAP])
        pending = int(S[core.COL_PENDING])
        order = [(int(S[core.COL_DEALER]) + 1 + k) % n for k in range(n)]  # turn order: a declaration queue's
        return {
            "hands": [int(S[core.COL_HAND + k]) for k in range(n)],
            "played": [int(S[core.COL_PLAYED + k]) for k in range(n)],
            "table": int(S[core.COL_TABLE]),
            "piles": [int(S[core.COL_PILE + k]) for k in range(s)],
            "scope": [int(S[core.COL_SCOPE + k]) for k in range(s)],
            "scores": [int(S[core.COL_SCORE + k]) for k in range(s)],
            "stock": [int(c) for c in S[core.COL_DECK + pos : core.COL_DECK + size]],
            "deal_order": [int(c) for c in S[core.COL_DECK : core.COL_DECK + size]],
            "current": int(S[core.COL_CURRENT]),
            "dealer": int(S[core.COL_DEALER]),
            "last_capturer": None if lc == core.NO_SEAT else lc,
            "hand_number": int(S[core.COL_HAND_NUM]),
            "pending_card": None if pending == core.NO_SEAT else pending,
            "selected": int(S[core.COL_SELECTED]),
            "learner": int(S[core.COL_LEARNER]),
            "deciding": bool(S[core.COL_PHASE] == core.PHASE_FIRST_CARD),
            "declare_queue": [seat for seat in order if int(S[core.COL_QUEUE]) >> seat & 1],
            "pending": [
                (seat, int(S[core.COL_HAND + seat])) for seat in order if int(S[core.COL_DECLARERS]) >> seat & 1
            ],
            "revealed": [int(S[core.COL_REVEALED + k]) for k in range(n)],
            "declared": [int(S[core.COL_DECLARED + k]) for k in range(s)],
            "wild_rank": int(S[core.COL_WILD]),
            "redeals": int(S[core.COL_REDEALS]),
        }

    def describe(self, game: int) -> str:
        """One line about one game, for messages."""
        st = self.state(game)
        deck = self.rules.ranks_per_suit
        hands = " | ".join(format_cards(h, deck) for h in st["hands"])
        return (
            f"game {game}: current={st['current']} dealer={st['dealer']} hands=[{hands}] "
            f"table=[{format_cards(st['table'], deck)}] stock={len(st['stock'])} scores={st['scores']}"
        )

    def __repr__(self) -> str:
        return (
            f"BatchedScopa(num_games={self.num_games}, num_players={self.num_players}, rules={self.rules.name!r}, "
            f"action_mode={self.action_mode!r}, episode={self.episode!r}, reward={self.reward_mode!r}, "
            f"opponent={self.opponent!r})"
        )


def playout(
    num_games: int,
    num_players: int = 2,
    rules: Rules | str | None = None,
    players: tuple[str, ...] | None = None,
    seed: int = 0,
) -> tuple[int, np.ndarray]:
    """Play whole games with compiled players in one thread (benchmarks, quick evaluations).

    Args:
        players: per seat ``"random"``, ``"greedy"`` or ``"heuristic"`` (default: all random).

    Returns:
        ``(moves, wins)``: moves played and games won per side (``num_sides + 1`` entries,
        the last: games without a winner).
    """
    setup = GameSetup.of(rules, num_players)
    P, F, TBL, _ = compiled_rules(setup)
    players = players or ("random",) * num_players
    if len(players) != num_players or any(p not in OPPONENT_KINDS for p in players):
        raise ValueError(f"players must give one of {OPPONENT_KINDS} for each of {num_players} seats, got {players!r}")
    arg = np.array([int(num_games), int(seed)] + [OPPONENTS[p] for p in players], np.int64)
    games = core.Games(np.zeros((1, core.NUM_COLS), np.int64), np.zeros((1, 2), np.uint64))
    rules = core.Rules(P, F, TBL, None, HEURISTIC_H if "heuristic" in players else None)
    info = np.zeros((1, core.NUM_INFO), np.int64)
    moves = core.playout_kernel(
        games,
        rules,
        arg,
        np.zeros((1, num_players), np.float32),
        info,
        np.zeros((1, core.MAX_SIDES, core.NUM_SCORE_FIELDS), np.float64),
        decision_tables(setup.rules, TBL),
    )
    wins = info[0, core.INFO_WINS : core.INFO_WINS + core.MAX_SIDES + 1]
    return int(moves), np.append(wins[: setup.num_sides], wins[core.MAX_SIDES])


__all__ = [
    "OPPONENT_KINDS",
    "SCORE_FIELDS",
    "SUPPORTED_FIELDS",
    "BatchedScopa",
    "check_supported",
    "compiled_rules",
    "opponent_weights",
    "playout",
]


@functools.cache
def aot_arg_kinds(opponent: str | None) -> tuple:
    """The numba types of :func:`core.batch_rows`' arguments for the standard 2-player batch with
    ``opponent``: what the ahead-of-time row loop of that spec takes (:data:`~scopa_env.fast.aot.SPECS`)."""
    from numba import typeof

    batch = BatchedScopa(1, 2, opponent=opponent)
    return tuple(typeof(a) for a in batch._kernel_args(np.zeros(1, np.int64), batch._obs))
