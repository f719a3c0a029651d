"""Duplicate-deal evaluation on the compiled core, for policies that act on whole batches.

The same report as :func:`agents.evaluate.summarize` (so :func:`train.evaluation.flat_metrics`,
``scopa eval``'s tables and the run folder's CSV read it unchanged), from games played in
:class:`~scopa_env.fast.BatchedScopa` with the opponent compiled: deal ``d`` is played
twice, once with the learner in seat 0 and once in seat 1, from the same seed (so the same
shuffles, dealer and, hand after hand, the same stock), whole games to the target. The
learner's decisions for up to ``batch_size`` games are one call of ``policy``. Hundreds of
times faster than the Python harness, which is what makes 10,000 duplicate deal pairs a
matter of minutes. :func:`evaluate_fast` plays two players (the core's learner seat);
:func:`evaluate_fast_sides` any player count, the policy playing every seat of its side, against
a compiled baseline or an ``fsearch`` spec (the compiled search), and a spec may stand in for
the policy too: ``scopa eval --fast`` on any two of ``dmc:``/``zoo:`` agents, compiled baselines
and ``fsearch`` specs.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import numpy as np

from agents.matches import Match, RunResult, _numeric, deal_seed
from agents.stats import summarize

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``policy(obs (B, size) float32, masks (B, A) bool) -> actions (B,) int``."""

LEARNER = "learner"
OPPONENT = "opponent"


def fast_eval_applies(cfg, opponent: str) -> bool:
    """Whether a run evaluates against ``opponent`` on the compiled core: with ``vec_env: fast``,
    two players and a compiled opponent (else the Python harness plays it)."""
    from train.fast import COMPILED_OPPONENTS

    return cfg.vec_env == "fast" and cfg.num_players == 2 and opponent in COMPILED_OPPONENTS


def evaluate_fast(
    policy: BatchPolicy,
    opponent: str,
    num_deals: int,
    rules=None,
    seed: int = 0,
    action_mode: str = "select",
    batch_size: int = 1024,
    progress: bool = False,
) -> dict:
    """Play ``num_deals`` duplicate deal pairs of ``policy`` vs the compiled ``opponent`` (2 players).

    Args:
        policy: the learner's decisions for a batch (see :data:`BatchPolicy`).
        opponent: ``"random"``, ``"greedy"`` or ``"heuristic"``.
        num_deals: deals; each is played in both seatings.
        rules: preset name or rules the core supports.
        seed: master seed of the deals (:func:`agents.evaluate.deal_seed`).
        action_mode: the policy's action space.
        batch_size: games stepped together.
        progress: show a progress bar.

    Returns:
        The report of :func:`agents.evaluate.summarize`, agents ``("learner", opponent)``.
    """
    from scopa_env.fast import BatchedScopa

    if num_deals < 1:
        raise ValueError(f"num_deals must be positive, got {num_deals!r}")
    match = Match((LEARNER, opponent), 2, rules, seed)
    deals: list[list[dict]] = [[{}, {}] for _ in range(num_deals)]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=2 * num_deals, unit="game", desc=f"learner vs {opponent}", dynamic_ncols=True)
    for rotation in (0, 1):  # rotation r: the learner (agent 0) plays side r
        for first in range(0, num_deals, batch_size):
            ids = list(range(first, min(first + batch_size, num_deals)))
            batch = BatchedScopa(
                len(ids),
                2,
                match.rules,
                action_mode=action_mode,
                episode="game",
                reward="game",
                opponent=opponent,
                learner_seat=rotation,
            )
            for d, rec in zip(ids, _play(batch, policy, [deal_seed(seed, d) for d in ids])):
                deals[d][rotation] = {"deal": d, "rotation": rotation, "lineup": [rotation, 1 - rotation], **rec}
            if bar is not None:
                # One update per batch: its games end together, and tqdm (drawing at most every 0.1 s)
                # would show their first update alone, one game in the batch's time, as the rate.
                bar.update(len(ids))
    if bar is not None:
        bar.close()
    return summarize(match, RunResult(deals=deals, requested=num_deals))


def _play(batch, policy: BatchPolicy, seeds: list[int]) -> list[dict]:
    """Play one game in every row of ``batch`` (later games of the auto-reset are not kept)."""
    n = len(seeds)
    batch.reset(np.asarray(seeds, np.int64))
    hands: list[list[list[dict]]] = [[] for _ in range(n)]
    out: list[dict | None] = [None] * n
    moves = np.zeros(n, np.int64)
    start = time.process_time()
    live = np.ones(n, bool)
    while live.any():
        masks = batch.dense_move_mask().astype(bool)
        actions = np.asarray(policy(batch.obs.copy(), masks), np.int64)
        batch.step(actions)
        moves += live
        for i in np.flatnonzero(batch.hand_ended & live):
            hands[i].append([_numeric(row) for row in batch.hand_score_dicts(i)])
        for i in np.flatnonzero(batch.terminated & live):
            w = int(batch.winner[i])
            out[i] = {
                "winner": None if w < 0 else w,
                "hands": hands[i],
                "scores": batch.final_scores[i].tolist(),
                "forfeit": None,
                "moves": int(moves[i]),
            }
            live[i] = False
    seconds = (time.process_time() - start) / n
    return [{**rec, "seconds": seconds} for rec in out]


LegalPolicy = Callable[..., np.ndarray]
"""``policy(obs (B, size), legal_ids (B, W), legal_count (B,)) -> move ids (B,)`` ("move" mode);
a policy with ``needs_batch = True`` is also given ``batch=`` (to read compiled features from it)."""


def compiled_move_ids(batch, player: str) -> np.ndarray:
    """The "move" id the compiled ``player`` would play now in every game of ``batch``."""
    from scopa_env.fast import core
    from scopa_env.fast.features import move_id_tables

    choices = np.asarray(batch.choose(player), np.int64)
    cards, masks = move_id_tables(batch.rules)
    legal_ids, count = batch.legal_ids, batch.legal_count
    valid = np.arange(legal_ids.shape[1])[None, :] < count[:, None]
    safe = np.where(valid, legal_ids, 0)
    table = batch._S[:, core.COL_TABLE]
    captured = np.where(masks[safe] < 0, table[:, None], masks[safe])
    match = valid & (cards[safe] == choices[:, :1]) & (captured == choices[:, 1:2])
    if not match.any(axis=1).all():
        bad = int(np.flatnonzero(~match.any(axis=1))[0])
        raise RuntimeError(f"game {bad}: the compiled {player}'s move is not among the legal ids")
    return legal_ids[np.arange(len(legal_ids)), np.argmax(match, axis=1)]


def spec_moves(batch, opponent: str, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A player's move id in every game of ``batch`` (meaningful where ``rows``): a compiled
    player's, or an ``fsearch`` spec's, searched (on every core) only where ``rows`` is set."""
    if opponent.partition(":")[0] != "fsearch":
        return compiled_move_ids(batch, opponent)
    from scopa_env.fast.batch import max_threads
    from scopa_env.fast.search import search_move_ids

    ids = batch.legal_ids[:, 0].copy()
    games = np.flatnonzero(rows)
    if games.size:
        seeds = rng.integers(0, 2**62, games.size)
        ids[games] = search_move_ids(batch, games, seeds, fsearch_config(opponent), threads=max_threads())
    return ids


@functools.lru_cache(maxsize=8)
def fsearch_config(spec: str) -> np.ndarray:
    """The settings array of an ``fsearch`` spec for the compiled evaluation (no inference: the
    batch keeps no history of the round)."""
    from agents.registry import make_agent

    agent = make_agent(spec)
    if agent.settings["inference"]:
        raise ValueError(f"{spec!r}: inference needs the round's history, which the compiled evaluation lacks")
    if agent.time_limit is not None:
        raise ValueError(f"{spec!r}: the compiled evaluation searches a budget of worlds, not a time_limit")
    return agent.C


def evaluate_fast_sides(
    policy: LegalPolicy | str,
    opponent: LegalPolicy | str,
    num_deals: int,
    num_players: int = 2,
    rules=None,
    seed: int = 0,
    batch_size: int = 1024,
    progress: bool = False,
) -> dict:
    """Duplicate deals of a "move"-mode ``policy`` against a compiled ``opponent``, any player count.

    The policy plays every seat of its side (both partners in Scopone) and the compiled
    ``opponent`` (a compiled player's name or an ``fsearch`` spec) every other seat; deal ``d`` is
    played once per rotation of the sides, from the same seed. Either side may be a spec or a
    policy. The report is :func:`agents.evaluate.summarize`'s, agents ``("learner", opponent)``
    (a policy opponent is named "opponent"; a spec policy by its spec).
    """
    from scopa_env.fast import BatchedScopa

    if num_deals < 1:
        raise ValueError(f"num_deals must be positive, got {num_deals!r}")
    if isinstance(policy, str) and policy == opponent:
        raise ValueError(f"both sides are {policy!r}: nothing to compare")
    names = (policy if isinstance(policy, str) else LEARNER, opponent if isinstance(opponent, str) else OPPONENT)
    match = Match(names, num_players, rules, seed)
    wall = time.time()
    sides = match.num_sides
    lineups = match.lineups()
    deals: list[list[dict]] = [[{} for _ in lineups] for _ in range(num_deals)]
    for side in names:
        if side.partition(":")[0] == "fsearch":
            _warm_up_search(side, num_players, match.rules)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(lineups) * num_deals, unit="game", desc=f"{names[0]} vs {names[1]}", dynamic_ncols=True)
    for rotation, lineup in enumerate(lineups):
        learner_side = lineup.index(0)
        for first in range(0, num_deals, batch_size):
            ids = list(range(first, min(first + batch_size, num_deals)))
            batch = BatchedScopa(len(ids), num_players, match.rules, action_mode="move", episode="game", reward="game")
            seeds = [deal_seed(seed, d) for d in ids]
            for d, rec in zip(ids, _play_sides(batch, policy, opponent, learner_side, sides, seeds)):
                deals[d][rotation] = {"deal": d, "rotation": rotation, "lineup": list(lineup), **rec}
            if bar is not None:
                # One update per batch: its games end together, and tqdm (drawing at most every 0.1 s)
                # would show their first update alone, one game in the batch's time, as the rate.
                bar.update(len(ids))
    if bar is not None:
        bar.close()
    report = summarize(match, RunResult(deals=deals, requested=num_deals, wall_seconds=time.time() - wall))
    report["config"]["engine"] = "compiled core"
    return report


def _warm_up_search(spec: str, num_players: int, rules) -> None:
    """Search one position with the ``fsearch`` ``spec`` before the progress bar starts: where the
    search kernel is compiled now (no install-time build takes it and numba's cache is cold: about
    a minute, said on stderr), the bar then times games only and its ETA holds. Draws nothing
    from the evaluation's generators; rules the search refuses raise here as they would later."""
    from agents.fast_search import COMPILE_NOTICE
    from scopa_env.fast import BatchedScopa
    from scopa_env.fast.aot import announce_compile
    from scopa_env.fast.search import search_kernel, search_move_ids

    announce_compile(search_kernel, COMPILE_NOTICE)
    batch = BatchedScopa(1, num_players, rules, action_mode="move", episode="game", reward="game")
    batch.reset(np.zeros(1, np.int64))
    search_move_ids(batch, np.zeros(1, np.int64), np.zeros(1, np.int64), fsearch_config(spec))


def side_moves(batch, player: LegalPolicy | str, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The move ids ``player`` (a policy, a compiled baseline or an ``fsearch`` spec) plays in every
    game of ``batch``; searching players search only where ``rows`` is set."""
    if isinstance(player, str):
        return spec_moves(batch, player, rows, rng)
    if getattr(player, "needs_rows", False):
        actions = player(batch.obs, batch.legal_ids, batch.legal_count, batch=batch, rows=rows)
    elif getattr(player, "needs_batch", False):
        actions = player(batch.obs, batch.legal_ids, batch.legal_count, batch=batch)
    else:
        actions = player(batch.obs, batch.legal_ids, batch.legal_count)
    return np.asarray(actions, np.int64)


def _play_sides(
    batch, policy: LegalPolicy | str, opponent: LegalPolicy | str, learner_side: int, sides: int, seeds: list[int]
) -> list[dict]:
    n = len(seeds)
    batch.reset(np.asarray(seeds, np.int64))
    hands: list[list[list[dict]]] = [[] for _ in range(n)]
    out: list[dict | None] = [None] * n
    moves = np.zeros(n, np.int64)
    live = np.ones(n, bool)
    spent = 0.0
    rng = np.random.default_rng([int(seeds[0]) % 2**63, learner_side])  # the search seeds
    while live.any():
        mine = batch.to_play % sides == learner_side
        start = time.process_time()
        actions = side_moves(batch, policy, live & mine, rng)
        spent += time.process_time() - start
        if not mine.all():
            actions = np.where(mine, actions, side_moves(batch, opponent, live & ~mine, rng))
        batch.step(actions)
        moves += live & mine
        for i in np.flatnonzero(batch.hand_ended & live):
            hands[i].append([_numeric(row) for row in batch.hand_score_dicts(i)])
        for i in np.flatnonzero(batch.terminated & live):
            w = int(batch.winner[i])
            out[i] = {
                "winner": None if w < 0 else w,
                "hands": hands[i],
                "scores": batch.final_scores[i].tolist(),
                "forfeit": None,
                "moves": int(moves[i]),
            }
            live[i] = False
    # seconds: the learner's own decision time per game (the compiled opponent's is not counted)
    return [{**rec, "seconds": spent / n} for rec in out]
