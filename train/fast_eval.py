"""Duplicate-deal evaluation on the compiled core, for policies that act on whole batches.

The same report as :func:`agents.evaluate.summarize` (so :func:`train.evaluation.flat_metrics`,
``scopa eval``'s tables and the run folder's CSV read it unchanged), from games played in
:class:`~scopa_env.fast.BatchedScopa` with the opponent compiled: deal ``d`` is played
twice, once with the learner in seat 0 and once in seat 1, from the same seed (so the same
shuffles, dealer and, hand after hand, the same stock), whole games to the target. The
learner's decisions for up to ``batch_size`` games are one call of ``policy``. Hundreds of
times faster than the Python harness, which is what makes 10,000 duplicate deal pairs a
matter of minutes. :func:`evaluate_fast` plays two players (the core's learner seat);
:func:`evaluate_fast_sides` (:mod:`agents.compiled`, the loop the leaderboard plays on too) any
player count, the policy playing every seat of its side, against a compiled baseline or an
``fsearch`` spec (the compiled search), and a spec may stand in for the policy too: ``scopa eval
--fast`` on any two of ``dmc:``/``zoo:`` agents, compiled baselines and ``fsearch`` specs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

# The compiled loop of any player count lives in the agents layer (the leaderboard plays on it);
# its callers import it from here as before.
from agents.compiled import (  # noqa: F401
    COMPILED_BASELINES,
    LEARNER,
    OPPONENT,
    LegalPolicy,
    compiled_move_ids,
    declared_points,
    evaluate_fast_sides,
    fsearch_config,
    record_step,
    side_moves,
    spec_moves,
)
from agents.compiled import warm_up_search as _warm_up_search  # noqa: F401
from agents.matches import Match, RunResult, deal_seed
from agents.stats import summarize

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``policy(obs (B, size) float32, masks (B, A) bool) -> actions (B,) int``."""


FAST_CHECKPOINTS = ("dmc", "zoo", "netsearch")
"""Prefixes of the agents the compiled evaluation plays as batch policies (besides specs)."""


def zoo_algo(name: str) -> str | None:
    """The algorithm of ``zoo:name`` (``None`` for an unknown name, reported where it is loaded)."""
    from train import zoo

    try:
        return zoo.algo_of(name)
    except ValueError:
        return None


class GameMismatch(ValueError):
    """A network of another game than the one to be played (:func:`fast_side`)."""


def fast_side(
    spec: str, seed: int = 0, rules=None, players: int | None = None
) -> tuple[str | BatchPolicy, dict | None]:
    """A side of the compiled evaluation from an agent spec: ``(spec, None)`` for a compiled baseline or an
    ``fsearch`` spec (checked), ``(batch policy, its metadata)`` for a ``dmc:``, ``zoo:`` or ``netsearch:``
    network (``seed``: netsearch's search seed). ``ValueError`` names what is wrong; given the game to be
    played (``rules``, a preset or :class:`~scopa_env.engine.rules.Rules`, and ``players``), a network
    trained for another raises :class:`GameMismatch`."""
    side, meta = _load_side(spec, seed)
    if meta is not None and rules is not None:
        from scopa_env.engine.rules import get_rules

        want = get_rules(rules)
        if get_rules(meta["rules"]) != want or meta["num_players"] != players:
            raise GameMismatch(
                f"{spec} was trained for {meta['num_players']} players under {meta['rules']!r}, "
                f"not {players} under {want.name!r}"
            )
    return side, meta


def _load_side(spec: str, seed: int) -> tuple[str | BatchPolicy, dict | None]:
    prefix, _, path = spec.partition(":")
    if prefix == "fsearch":
        fsearch_config(spec)
        return spec, None
    if spec in COMPILED_BASELINES:
        return spec, None
    if prefix not in FAST_CHECKPOINTS or not path:
        raise ValueError(
            f"--fast plays {', '.join(COMPILED_BASELINES)}, fsearch specs and "
            f"{', '.join(p + ':' for p in FAST_CHECKPOINTS)} agents, not {spec!r}"
        )
    if prefix == "netsearch":
        from train.dmc.net_search import load_batch_policy

        return load_batch_policy(path, seed)
    from train.dmc.agent import load_dmc_batch_policy

    if prefix == "zoo":
        from train.zoo import checked_path

        if zoo_algo(path) in ("ppo", "dqn"):
            raise ValueError(
                f"{spec} is a {zoo_algo(path)} network: --fast plays it first, against a compiled baseline"
            )
        path = str(checked_path(path))
    return load_dmc_batch_policy(path)


def fast_eval_applies(cfg, opponent: str) -> bool:
    """Whether a run evaluates against ``opponent`` on the compiled core: with ``vec_env: fast``,
    two players and a compiled opponent (else the Python harness plays it)."""
    return cfg.vec_env == "fast" and cfg.num_players == 2 and opponent in COMPILED_BASELINES


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
        declared = declared_points(batch)
        batch.step(actions)
        moves += live
        record_step(batch, live, hands, out, declared)
    seconds = (time.process_time() - start) / n
    return [{**rec, "moves": int(moves[i]), "seconds": seconds} for i, rec in enumerate(out)]
