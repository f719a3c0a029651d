"""Duplicate deals on the compiled core, each side a compiled player: the leaderboard's fast engine.

:func:`play_deals_compiled` plays the deals of a :class:`~agents.matches.Match` in
:class:`~scopa_env.fast.BatchedScopa` ("move" mode, whole games to the target) and returns the
same :class:`~agents.matches.RunResult` as :func:`agents.matches.run_deals`, so
:func:`agents.stats.summarize` and the leaderboard read it unchanged. Deal ``d`` is played once
per rotation of the sides, every rotation from the seed ``deal_seed(match.seed, d)``; up to
``batch_size`` games are stepped together and each player decides for all of its games in one
call. Hundreds of times faster than the Python harness for the compiled players.

A *compiled player* is one of:

- a compiled baseline's name, ``random``, ``greedy`` or ``heuristic`` (:data:`COMPILED_BASELINES`),
  played by the core's own code (the Python agents' rules of play, checked against them in
  tests/test_fast*.py);
- an ``fsearch`` spec (the compiled search, batched over the games), without ``inference`` or
  ``time_limit`` (:func:`fsearch_config`);
- a batch policy (:data:`LegalPolicy`): ``policy(obs, legal_ids, legal_count) -> move ids``.

An agent says it can play on the compiled core through the hook :data:`HOOK`: a method
``compiled_policy(num_players, rules)`` returning its batch policy, or ``None`` for a game it cannot
play that way. The hook comes with the agent object the registry builds (a prefix factory or an
entry point, :mod:`agents.registry`), so the networks of the training layer (``dmc:``, ``zoo:``,
:class:`train.dmc.agent.DmcAgent`) play here while this layer imports nothing from it; a user's
``module:Class`` may define it too. :func:`compiled_player` turns a spec into its compiled player or
says, in one line, why it has none; :func:`rules_problem` says why the core cannot play a game
(the rules it lacks). A hand's rows are the harness's (:func:`agents.matches.hand_rows`): the
declarations' points (Cirulla's hand bonuses) are in their ``total``, under ``declared``.

The deals: the core shuffles with its own generator (:mod:`scopa_env.fast.core.bits`), so the same
deal seed gives other cards than :class:`~scopa_env.engine.game.Game` does. A pair played here is
played on the core's deals of the suite's seeds, each deal in every rotation (duplicate deals
as on the harness), the same cards on every run and any number of threads.

``train/fast_eval.py`` plays its evaluations (``scopa eval --fast``, the training runs' evaluations)
with this loop too.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence

import numpy as np

from agents.matches import Cluster, Match, RunResult, _numeric, deal_seed
from agents.registry import is_cheating, make_agent
from agents.stats import summarize

LegalPolicy = Callable[..., np.ndarray]
"""``policy(obs (B, size), legal_ids (B, W), legal_count (B,)) -> move ids (B,)`` ("move" mode); a
policy with ``needs_batch = True`` is also given ``batch=`` (to read compiled features from it),
one with ``needs_rows = True`` also ``rows=`` (the games it must decide; the others are ignored)."""

Player = str | LegalPolicy
"""A compiled player: a compiled baseline's name, an ``fsearch`` spec or a :data:`LegalPolicy`."""

COMPILED_BASELINES = ("random", "greedy", "heuristic")
"""The baselines the core plays itself (``scopa_env.fast.batch.OPPONENT_KINDS``)."""

HOOK = "compiled_policy"
"""The agent method ``compiled_policy(num_players, rules) -> LegalPolicy | None`` (module docstring)."""

ENGINE_COMPILED = "compiled core"
ENGINE_PYTHON = "python harness"

LEARNER = "learner"
OPPONENT = "opponent"


# --- which agents and games play here ----------------------------------------------------


def rules_problem(rules, num_players: int) -> str | None:
    """Why the compiled core cannot play ``num_players`` under ``rules`` (``None``: it can): the rules
    it lacks (:func:`scopa_env.fast.batch.check_supported`), in one line."""
    from scopa_env.engine.rules import get_rules
    from scopa_env.fast.batch import check_supported

    try:
        check_supported(get_rules(rules), num_players)
    except NotImplementedError as exc:
        return str(exc).split("; use the Python engine")[0]
    return None


@functools.lru_cache(maxsize=8)
def fsearch_config(spec: str) -> np.ndarray:
    """The settings array of an ``fsearch`` spec for the compiled loop (no inference: the batch keeps
    no history of the round; no time limit: the decisions would depend on the machine).

    Raises:
        ValueError: one line naming the option that the compiled loop cannot play, or a bad spec.
    """
    agent = make_agent(spec)
    if agent.settings["inference"]:
        raise ValueError(f"{spec!r}: inference needs the round's history, which the compiled evaluation lacks")
    if agent.time_limit is not None:
        raise ValueError(f"{spec!r}: the compiled evaluation searches a budget of worlds, not a time_limit")
    return agent.C


def check_fsearch(spec: str, rules) -> None:
    """Refuse, in one line, an ``fsearch`` spec the compiled loop cannot search for ``rules``."""
    from scopa_env.engine import house_rules
    from scopa_env.engine.rules import get_rules
    from scopa_env.fast.search import check_searchable

    fsearch_config(spec)
    try:
        check_searchable(rules)
        rules = get_rules(rules)
        house_rules.check_backend(rules.house_rules, "search", rules.name)  # declared by each plug-in
    except NotImplementedError as exc:
        raise ValueError(f"{spec!r}: {exc}") from None


def is_fsearch(player) -> bool:
    return isinstance(player, str) and player.strip().partition(":")[0] == "fsearch"


def compiled_player(spec: str, num_players: int, rules) -> Player:
    """The compiled player of ``spec`` for this game (see the module docstring).

    Raises:
        ValueError: one line saying why ``spec`` has no compiled form here: a Python agent without
            the :data:`HOOK`, an ``fsearch`` option or rules the batched search cannot value, a
            cheating agent (it needs the whole game), or a hook that declines the game.
    """
    from scopa_env.engine.rules import get_rules

    rules = get_rules(rules)
    if spec in COMPILED_BASELINES:
        return spec
    if is_fsearch(spec):
        check_fsearch(spec, rules)
        return spec
    if is_cheating(spec):
        raise ValueError(f"{spec!r} sees every card: it plays on the Python harness only")
    agent = make_agent(spec)
    hook = getattr(agent, HOOK, None)
    if is_cheating(agent) or not callable(hook):
        raise ValueError(f"{spec!r} has no compiled form (an agent of the Python harness)")
    try:
        policy = hook(num_players, rules)
    except Exception as exc:  # a user's hook: its failure is theirs, said in one line
        raise ValueError(
            f"{spec!r}: {HOOK}({num_players}, {rules.name!r}) failed: {type(exc).__name__}: {exc}"
        ) from None
    if policy is not None and not callable(policy):
        raise ValueError(f"{spec!r}: {HOOK} returned a {type(policy).__name__}, not a batch policy")
    if policy is None:
        raise ValueError(f"{spec!r} has no compiled form for {num_players} players under {rules.name!r}")
    return policy


def compiled_lineup(specs: Sequence[str], num_players: int, rules) -> tuple[list[Player] | None, str | None]:
    """``(players, None)`` with a compiled player per spec where the core plays them all in this game,
    else ``(None, why)`` in one line (:func:`rules_problem`, :func:`compiled_player`)."""
    problem = rules_problem(rules, num_players)
    if problem:
        return None, problem
    built: dict[str, Player] = {}
    for spec in specs:
        if spec not in built:
            try:
                built[spec] = compiled_player(spec, num_players, rules)
            except ValueError as exc:
                return None, str(exc)
    return [built[s] for s in specs], None


# --- a player's moves --------------------------------------------------------------------


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


def spec_moves(
    batch, player: str, rows: np.ndarray, rng: np.random.Generator, threads: int | None = None
) -> np.ndarray:
    """A player's move id in every game of ``batch`` (meaningful where ``rows``): a compiled
    baseline's, or an ``fsearch`` spec's, searched only where ``rows`` is set, on ``threads``
    threads (default every core: the moves do not depend on it)."""
    if not is_fsearch(player):
        return compiled_move_ids(batch, player)
    from scopa_env.fast.batch import max_threads
    from scopa_env.fast.search import search_move_ids

    ids = batch.legal_ids[:, 0].copy()
    games = np.flatnonzero(rows)
    if games.size:
        seeds = rng.integers(0, 2**62, games.size)
        ids[games] = search_move_ids(batch, games, seeds, fsearch_config(player), threads=threads or max_threads())
    return ids


def side_moves(
    batch, player: Player, rows: np.ndarray, rng: np.random.Generator, threads: int | None = None
) -> np.ndarray:
    """The move ids ``player`` (a policy, a compiled baseline or an ``fsearch`` spec) plays in every
    game of ``batch``; searching players search only where ``rows`` is set."""
    if isinstance(player, str):
        return spec_moves(batch, player, rows, rng, threads)
    if getattr(player, "needs_rows", False):
        actions = player(batch.obs, batch.legal_ids, batch.legal_count, batch=batch, rows=rows)
    elif getattr(player, "needs_batch", False):
        actions = player(batch.obs, batch.legal_ids, batch.legal_count, batch=batch)
    else:
        actions = player(batch.obs, batch.legal_ids, batch.legal_count)
    return np.asarray(actions, np.int64)


def warm_up_search(spec: str, num_players: int, rules) -> None:
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


# --- playing -----------------------------------------------------------------------------


def declared_points(batch) -> np.ndarray | None:
    """Per game and side, the declarations' points scored so far in the hand being played (``None``
    under rules without declarations): read before a step, for :func:`record_step`."""
    if not batch.rules.declarations:
        return None
    from scopa_env.fast import core

    return batch._S[:, core.COL_DECLARED : core.COL_DECLARED + batch.num_sides].copy()


def record_step(batch, live: np.ndarray, hands: list, out: list, declared: np.ndarray | None = None) -> None:
    """After a step: keep the rows of the hands that ended, and the record of every game that ended
    (``winner``, ``hands``, ``scores``, ``forfeit``); the game is no longer ``live``.

    ``declared`` (:func:`declared_points` before the step): the declarations' points join the hand's
    rows, in their ``total`` and as ``declared``, as the harness's rows count them
    (:func:`agents.matches.hand_rows`; the core's hand scores leave them out), so a game's hand
    totals add up to its final scores on both engines.
    """
    for i in np.flatnonzero(batch.hand_ended & live):
        rows = [_numeric(row) for row in batch.hand_score_dicts(i)]
        if declared is not None:
            for s, row in enumerate(rows):
                row["declared"] = int(declared[i, s])
                row["total"] += int(declared[i, s])
        hands[i].append(rows)
    for i in np.flatnonzero(batch.terminated & live):
        w = int(batch.winner[i])
        out[i] = {"winner": None if w < 0 else w, "hands": hands[i], "scores": batch.final_scores[i].tolist()}
        out[i]["forfeit"] = None
        live[i] = False


def play_batch(
    batch, side_players: Sequence[Player], seeds: Sequence[int], rotation: int, timed: int, threads: int | None = None
) -> list[dict]:
    """Play one game in every row of ``batch`` (later games of the auto-reset are not kept).

    Args:
        side_players: the player of each side (a player on several sides decides for all of them
            in one call).
        rotation: keys the generator of the searching players' seeds, with the first seed.
        timed: the side whose player's moves and CPU time the records count (``moves``,
            ``seconds``: its own decision time per game; the others' is not counted).
    """
    from scopa_env.engine.game import sides_for

    n = len(seeds)
    batch.reset(np.asarray(seeds, np.int64))
    side_of = np.asarray(sides_for(batch.num_players, batch.rules), np.int64)
    order = [side_players[timed]] + [p for p in side_players if p is not side_players[timed]]
    players = [p for k, p in enumerate(order) if all(p is not q for q in order[:k])]
    hands: list[list[list[dict]]] = [[] for _ in range(n)]
    out: list[dict | None] = [None] * n
    moves = np.zeros(n, np.int64)
    live = np.ones(n, bool)
    spent = 0.0
    rng = np.random.default_rng([int(seeds[0]) % 2**63, rotation])  # the search seeds
    while live.any():
        side = side_of[batch.to_play]
        actions = None
        for k, player in enumerate(players):
            mine = np.zeros(n, bool)
            for s, p in enumerate(side_players):
                if p is player:
                    mine |= side == s
            if k and not mine.any():
                continue  # a compiled baseline draws from every game's generator: call it only when it plays
            start = time.process_time()
            ids = side_moves(batch, player, live & mine, rng, threads)
            if k == 0:
                spent += time.process_time() - start
                moves += live & mine
            actions = ids if actions is None else np.where(mine, ids, actions)
        declared = declared_points(batch)
        batch.step(actions)
        record_step(batch, live, hands, out, declared)
    return [{**rec, "moves": int(moves[i]), "seconds": spent / n} for i, rec in enumerate(out)]


def play_rotation(
    match: Match,
    players: Sequence[Player],
    lineup: Sequence[int],
    rotation: int,
    ids: Sequence[int],
    threads: int | None = None,
) -> list[dict]:
    """One batch: deals ``ids`` of ``match`` in rotation ``rotation`` (``lineup``: the agent of each side),
    each deal's record as :func:`play_deals_compiled` gives it."""
    from scopa_env.fast import BatchedScopa

    lineup = tuple(lineup)
    timed = lineup.index(0) if 0 in lineup else 0
    side_players = [players[a] for a in lineup]
    batch = BatchedScopa(
        len(ids), match.num_players, match.rules, "move", episode="game", reward="game", threads=threads
    )
    seeds = [deal_seed(match.seed, d) for d in ids]
    records = play_batch(batch, side_players, seeds, rotation, timed, threads)
    return [{"deal": d, "rotation": rotation, "lineup": list(lineup), **rec} for d, rec in zip(ids, records)]


_TASK_PLAYERS: dict = {}


def play_rotation_task(match: Match, rotation: int, ids: Sequence[int]) -> list[dict]:
    """:func:`play_rotation` on a cluster's worker (:mod:`agents.ray_deals`): the compiled players built
    here from the match's specs (kept for the worker's next task of the same match), one thread."""
    key = (match.agents, match.num_players, match.rules)
    if key not in _TASK_PLAYERS:
        players, why = compiled_lineup(match.agents, match.num_players, match.rules)
        if players is None:
            raise ValueError(f"{' vs '.join(match.agents)} cannot play on the compiled core: {why}")
        _TASK_PLAYERS.clear()
        _TASK_PLAYERS[key] = players
    return play_rotation(match, _TASK_PLAYERS[key], match.lineups()[rotation], rotation, ids, threads=1)


def play_deals_compiled(
    match: Match,
    players: Sequence[Player],
    num_deals: int,
    lineups: Sequence[Sequence[int]] | None = None,
    batch_size: int = 1024,
    progress: bool = False,
    desc: str | None = None,
    threads: int | None = None,
    cluster: Cluster | None = None,
) -> RunResult:
    """Play deals ``0 .. num_deals - 1`` of ``match`` on the compiled core, ``players[a]`` for its agent ``a``.

    Args:
        players: a compiled player per agent of the match (the same object may play several).
        lineups: per rotation, the agent of each side (default :meth:`Match.lineups`); the
            records' ``moves`` and ``seconds`` are those of the side agent 0 plays (at most one).
        threads: cores the batches and the search use (default: the batch's default, every core
            for the search); the games do not depend on it.
        cluster: play each rotation's batches as the cluster's tasks (``--ray``,
            :func:`play_rotation_task`), the same batches as here, so the same games; the players are
            built there from the match's specs (a batch policy must be a function of its inputs, as
            the shipped ones are), and ``lineups`` must be the default.

    Returns:
        the records of :func:`agents.matches.play_game` (``seconds``: agent 0's decision time per
        game), deal by deal; a Ctrl-C keeps the deals finished in every rotation, ``interrupted``.
    """
    if num_deals < 1:
        raise ValueError(f"num_deals must be positive, got {num_deals!r}")
    if len(players) != len(match.agents):
        raise ValueError(f"{len(match.agents)} agents need as many players, got {len(players)}")
    if cluster is not None and lineups is not None:
        raise ValueError("a cluster plays the match's own rotations only (lineups=None)")
    lineups = [tuple(lu) for lu in (match.lineups() if lineups is None else lineups)]
    wall = time.perf_counter()
    if cluster is None:
        for player in dict.fromkeys(p for p in players if is_fsearch(p)):
            warm_up_search(player, match.num_players, match.rules)
    deals: list[list[dict]] = [[{} for _ in lineups] for _ in range(num_deals)]
    bar = None
    if progress:
        from tqdm import tqdm

        names = desc or f"{match.agents[0]} vs {match.agents[1]}"
        bar = tqdm(total=len(lineups) * num_deals, unit="game", desc=names, dynamic_ncols=True, leave=False)
    batches = [
        (rotation, list(range(first, min(first + batch_size, num_deals))))
        for rotation in range(len(lineups))
        for first in range(0, num_deals, batch_size)
    ]

    def keep(records: list[dict]) -> None:
        for rec in records:
            deals[rec["deal"]][rec["rotation"]] = rec
        if bar is not None:
            # One update per batch: its games end together, and tqdm (drawing at most every 0.1 s)
            # would show their first update alone, one game in the batch's time, as the rate.
            bar.update(len(records))

    finished = num_deals
    cpu = None
    try:
        if cluster is not None:
            if bar is not None:
                bar.set_postfix_str(f"Ray: {cluster.cpus} CPUs", refresh=False)
            tasks = [(match, rotation, ids) for rotation, ids in batches]
            cpu = cluster.run(play_rotation_task, tasks, lambda i, records: keep(records))
        else:
            for rotation, ids in batches:
                keep(play_rotation(match, players, lineups[rotation], rotation, ids, threads))
    except KeyboardInterrupt:
        finished = 0
    finally:
        if bar is not None:
            bar.close()
    return RunResult(
        deals=deals[:finished],
        requested=num_deals,
        interrupted=finished < num_deals,
        wall_seconds=time.perf_counter() - wall,
        cpu_seconds=cpu,
    )


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
    played once per rotation of the sides (the policy's side ``r`` in rotation ``r``), from the
    same seed. Either side may be a spec or a policy. The report is
    :func:`agents.stats.summarize`'s, agents ``("learner", opponent)`` (a policy opponent is named
    "opponent"; a spec policy by its spec), and ``config["engine"]`` says the compiled core.
    """
    if num_deals < 1:
        raise ValueError(f"num_deals must be positive, got {num_deals!r}")
    if isinstance(policy, str) and policy == opponent:
        raise ValueError(f"both sides are {policy!r}: nothing to compare")
    names = (policy if isinstance(policy, str) else LEARNER, opponent if isinstance(opponent, str) else OPPONENT)
    match = Match(names, num_players, rules, seed)
    sides = match.num_sides
    lineups = [tuple(0 if s == r else 1 for s in range(sides)) for r in range(sides)]
    run = play_deals_compiled(match, (policy, opponent), num_deals, lineups, batch_size, progress)
    if run.interrupted:
        raise KeyboardInterrupt
    report = summarize(match, run)
    report["config"]["engine"] = ENGINE_COMPILED
    return report
