"""Playing duplicate deals: every agent plays every seat of the same cards.

A *deal* is a seed: it fixes every shuffle of a whole game (``Game(seed=deal_seed)``
shuffles identically for identical seeds). Each deal is played once per *rotation* of
the agents over the sides, so every agent plays every seat of the same cards::

    2 sides, agents A B:   rotation 0: side 0 = A, side 1 = B;  rotation 1: side 0 = B, side 1 = A
    3 sides, agents A B:   A B A,  A A B,  B A A      (the lineup A B A rotated)
    teams (4 or 6 seats):  an agent plays every seat of its side (seat s is on side s % 2)

Seeds: deal ``i`` uses ``SeedSequence(seed, spawn_key=(i,))`` for the shuffles and
``SeedSequence(seed, spawn_key=(i, rotation, seat))`` for the agent at ``seat``, so a run
gives the same numbers for any number of workers.

An agent that raises or returns an illegal move forfeits that game: the game stops, the
offending side is counted as losing it (with two sides the other side wins) and the
position is recorded in ``forfeits``. Hands finished before still count. A forfeit is a
bug, not a result: ``scopa eval`` and ``scopa tournament`` fail on any (see
:mod:`scopa_app.evaluate`). An agent that declares another game (a checkpoint's rules and
player count, :func:`game_agent`) is refused before any deal instead.

Every agent is asked for its move with its seat's view only (:func:`agent_move`); the one
exception is an agent declaring ``needs_full_state``, the ``oracle`` (:mod:`agents.oracle`,
cheating), which is handed a copy of the whole game.

:func:`play_game` plays one deal in one rotation and returns its record; :func:`run_deals`
plays many deals across worker processes, or on a Ray cluster (a :class:`Cluster`,
:mod:`agents.ray_deals`). The statistics over the records are in
:mod:`agents.stats`.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from agents.base import Agent
from agents.registry import make_agent
from scopa_env.engine.cards import format_cards
from scopa_env.engine.game import Game, HandResult, sides_for
from scopa_env.engine.rules import Move, Rules, get_rules

MAX_HANDS = 200
"""A game still undecided after this many hands is stopped with no winner (a safety net)."""


@dataclass(frozen=True)
class Match:
    """What to play: agents, rules, player count and the master seed."""

    agents: tuple[str, ...]
    """Agent specs (see :func:`agents.registry.make_agent`); at least two."""
    num_players: int = 2
    """2, 3, 4 or 6 seats."""
    rules: Rules = field(default_factory=get_rules)
    """The rules in force."""
    seed: int = 0
    """Master seed of the deals and the agents."""

    def __post_init__(self) -> None:
        if len(self.agents) < 2:
            raise ValueError(f"a match needs at least two agents, got {list(self.agents)}")
        object.__setattr__(self, "rules", get_rules(self.rules))
        self.rules.check_players(self.num_players)
        if len(self.agents) > self.num_sides:
            raise ValueError(
                f"{len(self.agents)} agents cannot share {self.num_sides} sides; "
                f"play them in pairs with a tournament instead"
            )

    @property
    def num_sides(self) -> int:
        return max(sides_for(self.num_players, self.rules)) + 1

    def lineups(self) -> list[tuple[int, ...]]:
        """Per rotation, the agent index playing each side."""
        n = self.num_sides
        base = [i % len(self.agents) for i in range(n)]
        return [tuple(base[(s - r) % n] for s in range(n)) for r in range(n)]


def game_agent(spec: str, num_players: int, rules: Rules) -> Agent:
    """The agent of ``spec``, refused if it declares another game.

    A checkpoint agent plays only the game it was trained for, and says why another does not
    fit through its ``mismatch(num_players, rules)`` (the check ``scopa play`` and ``scopa
    web`` make); agents without one play any game.

    Raises:
        ValueError: the agent cannot play ``num_players`` under ``rules`` (named, with its own game),
            or the spec is unknown or its checkpoint refused.
    """
    agent = make_agent(spec)
    check = getattr(agent, "mismatch", None)
    problem = check(num_players, rules) if callable(check) else None
    if problem:
        raise ValueError(f"agent {spec!r} cannot play this game: {problem}")
    return agent


def deal_seed(seed: int, deal: int) -> int:
    """Shuffle seed of deal number ``deal``."""
    return int(np.random.SeedSequence(seed, spawn_key=(deal,)).generate_state(1)[0])


def agent_seed(seed: int, deal: int, rotation: int, seat: int) -> int:
    """Seed of the agent at ``seat`` in one rotation of one deal."""
    return int(np.random.SeedSequence(seed, spawn_key=(deal, rotation, seat)).generate_state(1)[0])


def play_game(match: Match, deal: int, rotation: int, agents: Sequence[Agent]) -> dict:
    """Play deal ``deal`` in rotation ``rotation``; ``agents[i]`` is the instance for seat ``i``.

    Returns a record: ``deal``, ``rotation``, ``lineup`` (agent index per side), ``winner``
    (side or ``None``), ``hands`` (per hand, the points of each side, :func:`hand_rows`),
    ``scores`` (the game score per side at the end), ``forfeit``
    (``None`` or what went wrong), ``moves`` and ``seconds`` (CPU time of this process, so
    other load on the machine does not inflate it).
    """
    start = time.process_time()
    lineup = match.lineups()[rotation]
    game = Game(match.num_players, match.rules, seed=deal_seed(match.seed, deal), auto_next_hand=False)
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(match.seed, deal, rotation, seat))
    hands: list[list[dict]] = []
    forfeit = None
    moves = 0
    while forfeit is None and len(hands) < MAX_HANDS:
        while not game.hand_over:
            seat = game.current
            forfeit = _checked_move(game, agents[seat], match, lineup)
            if forfeit is not None:
                break
            moves += 1
        if forfeit is not None:
            break
        hands.append(hand_rows(game.hand_result))
        if game.winner is not None:
            break
        game.next_hand()
    winner = game.winner
    if forfeit is not None:
        winner = 1 - forfeit["side"] if match.num_sides == 2 else None
    return {
        "deal": deal,
        "rotation": rotation,
        "lineup": list(lineup),
        "winner": winner,
        "hands": hands,
        "scores": list(game.scores),
        "forfeit": forfeit,
        "moves": moves,
        "seconds": time.process_time() - start,
    }


def _checked_move(game: Game, agent: Agent, match: Match, lineup: tuple[int, ...]) -> dict | None:
    """Ask the agent to move and play it; return a forfeit record if it fails."""
    seat = game.current
    side = game.side_of[seat]
    try:
        move = agent_move(agent, game)
        error = None
        if not isinstance(move, Move):
            error = f"returned {move!r}, not a Move"
        elif (move.card, move.mask) not in game.legal_pairs():
            error = f"illegal move: {game.illegal_message(move)}"
    except Exception as exc:  # an agent bug must not stop the evaluation
        move, error = None, f"raised {type(exc).__name__}: {exc}"
    if error is None:
        game.play_pair(move.card, move.mask)
        return None
    deck = game.rules.ranks_per_suit
    state = (
        f"hand {game.hand_number + 1}, seat {seat} (side {side}) to play; hand {format_cards(game.hands[seat], deck)}; "
        f"table {format_cards(game.table, deck) or 'empty'}; stock {len(game.stock)}; scores {game.scores}"
    )
    return {"seat": seat, "side": side, "agent": match.agents[lineup[side]], "error": error, "state": state}


def agent_move(agent: Agent, game: Game) -> Move:
    """The move of the agent of the seat to move: from that seat's view, never more.

    The one exception is an agent that declares ``needs_full_state`` (the ``oracle``, which is
    marked as cheating everywhere, :func:`agents.registry.is_cheating`): it is handed a copy of
    the whole game, every hand and the stock order included. No other agent sees more than
    :meth:`Game.view <scopa_env.engine.game.Game.view>`.
    """
    if getattr(agent, "needs_full_state", False):
        return agent.act_full(game.clone())
    return agent.act(game.view(game.current))


def _numeric(row: dict) -> dict:
    return {k: v for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def hand_rows(result: HandResult) -> list[dict]:
    """Per side, every scoring item of a finished hand, with ``total`` their sum.

    The numbers of ``result.hand_score`` plus the declarations the side scored during the
    hand (``result.declared``: bazzica, bazzicotto, Cirulla's hand bonuses), which the game
    adds to the score when they are made and so are outside ``hand_score``'s ``total``.
    """
    rows = [_numeric(row) for row in result.hand_score]
    for row, declared in zip(rows, result.declared):
        for name, points in declared.items():
            row[name] = row.get(name, 0) + points
            row["total"] += points
    return rows


# --- running many deals --------------------------------------------------------------

_WORKER_AGENTS: dict = {}


def _seat_agents(match: Match) -> list[list[Agent]]:
    """Per rotation, per seat, an agent instance (cached per process and match)."""
    key = (match.agents, match.num_players, match.rules)
    cached = _WORKER_AGENTS.get(key)
    if cached is None:
        side_of = sides_for(match.num_players, match.rules)
        pool = [[make_agent(spec) for _ in range(match.num_players)] for spec in match.agents]
        cached = [[pool[lineup[side_of[s]]][s] for s in range(match.num_players)] for lineup in match.lineups()]
        _WORKER_AGENTS.clear()
        _WORKER_AGENTS[key] = cached
    return cached


def play_deals(match: Match, deals: Sequence[int]) -> list[list[dict]]:
    """Play every rotation of each deal; one list of game records per deal."""
    seat_agents = _seat_agents(match)
    return [[play_game(match, d, r, seat_agents[r]) for r in range(match.num_sides)] for d in deals]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


STOP_GRACE = 2.0
"""Seconds a stopped run waits for the deals in progress before it ends the worker processes."""


def _stop_pool(pool: ProcessPoolExecutor, pending: dict, collect: Callable) -> None:
    """Stop a run of worker processes within about :data:`STOP_GRACE` seconds, saying so on stderr.

    The queued chunks are cancelled and the running ones get :data:`STOP_GRACE` seconds to finish
    (those are kept); a chunk of slow agents can take minutes, so the workers still playing are then
    ended and their deals dropped.
    """
    print(
        f"\nstopping: the deals in progress get {STOP_GRACE:g} s to finish, then the workers are ended",
        file=sys.stderr,
        flush=True,
    )
    for fut in list(pending):
        fut.cancel()
    running = [f for f in pending if not f.cancelled()]
    try:
        finished, _ = wait(running, timeout=STOP_GRACE)
    except KeyboardInterrupt:  # pressed again: stop now
        finished = {f for f in running if f.done()}
    for fut in finished:
        if fut.exception() is None:
            collect(fut)
    if len(finished) < len(running):
        for process in list(getattr(pool, "_processes", {}).values()):  # Python < 3.14 has no terminate_workers()
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class RunResult:
    """Finished deals (in deal order) and whether the run was interrupted."""

    deals: list[list[dict]]
    requested: int
    interrupted: bool = False
    wall_seconds: float = 0.0
    cpu_seconds: float | None = None
    """CPU seconds of the tasks on a cluster's workers, where a run measured them there (:class:`Cluster`)."""


class Cluster(Protocol):
    """Where deals play besides this machine's processes: :class:`agents.ray_deals.RayCluster` (``--ray``)."""

    cpus: int
    """CPUs of the cluster: the chunks are sized to keep them busy."""

    def describe(self) -> str: ...

    def run(
        self, fn: Callable, tasks: Sequence[tuple], on_done: Callable[[int, Any], None], deadline: float | None = None
    ) -> float:
        """``fn(*tasks[i])`` on the cluster, ``on_done(i, result)`` here as each finishes; the workers' CPU
        seconds. A stop (Ctrl-C, ``deadline``) keeps what finished and raises ``KeyboardInterrupt``."""
        ...


def deal_chunks(deals: Sequence[int], workers: int) -> list[list[int]]:
    """``deals`` cut into chunks of up to 8, about 8 chunks per worker (small enough to share the tail)."""
    chunk = max(1, min(8, len(deals) // (workers * 8)))
    return [list(deals[i : i + chunk]) for i in range(0, len(deals), chunk)]


def run_deals(
    match: Match,
    num_deals: int,
    workers: int = 1,
    progress: bool = True,
    first_deal: int = 0,
    desc: str | None = None,
    time_limit: float | None = None,
    cluster: Cluster | None = None,
) -> RunResult:
    """Play deals ``first_deal .. first_deal + num_deals - 1`` across ``workers`` processes, or on ``cluster``.

    ``cluster`` (``--ray``, :mod:`agents.ray_deals`): chunks of deals play as the cluster's tasks
    instead of this machine's processes (``workers`` is then unused); each deal is the same game
    wherever it plays. Ctrl-C, or ``time_limit`` seconds passing, stops the run; the deals finished
    so far are returned with ``interrupted=True``.
    """
    if num_deals < 1:
        raise ValueError(f"the number of games must be at least 1, got {num_deals}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    for spec in match.agents:  # fail early, in this process, on a bad name, checkpoint or game
        game_agent(spec, match.num_players, match.rules)
    from tqdm import tqdm

    start = time.perf_counter()
    deals = list(range(first_deal, first_deal + num_deals))
    done: dict[int, list[dict]] = {}
    bar = tqdm(total=num_deals, unit="deal", desc=desc, disable=not progress, dynamic_ncols=True, leave=False)
    interrupted = False
    cpu = None
    try:
        if cluster is not None:
            chunks = deal_chunks(deals, cluster.cpus)
            bar.set_postfix_str(f"Ray: {cluster.cpus} CPUs", refresh=False)

            def collect_task(i: int, records: list[list[dict]]) -> None:
                for d, rec in zip(chunks[i], records):
                    done[d] = rec
                bar.update(len(chunks[i]))

            deadline = None if time_limit is None else start + time_limit
            cpu = cluster.run(play_deals, [(match, c) for c in chunks], collect_task, deadline)
        elif workers == 1:
            for d in deals:
                if time_limit is not None and time.perf_counter() - start > time_limit:
                    raise KeyboardInterrupt
                done[d] = play_deals(match, [d])[0]
                bar.update(1)
        else:
            chunks = deal_chunks(deals, workers)
            pending: dict = {}

            def collect(fut) -> None:
                chunk_deals = pending.pop(fut)
                for d, records in zip(chunk_deals, fut.result()):
                    done[d] = records
                bar.update(len(chunk_deals))

            try:
                with ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint) as pool:
                    pending.update({pool.submit(play_deals, match, c): c for c in chunks})
                    try:
                        while pending:
                            if time_limit is not None and time.perf_counter() - start > time_limit:
                                raise KeyboardInterrupt
                            finished, _ = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                            for fut in finished:
                                collect(fut)
                    except KeyboardInterrupt:
                        _stop_pool(pool, pending, collect)
                        raise
            finally:
                # Chunks that finished while the run stopped (:func:`_stop_pool`): keep them.
                for fut in [f for f in pending if f.done() and not f.cancelled() and f.exception() is None]:
                    collect(fut)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    return RunResult(
        deals=[done[d] for d in sorted(done)],
        requested=num_deals,
        interrupted=interrupted,
        wall_seconds=time.perf_counter() - start,
        cpu_seconds=cpu,
    )
