"""An agent's row on a benchmark suite: its games against the suite's ladder, rated on the suite's scale.

:func:`rate_agent` plays an agent against every reference of a suite's ladder
(:mod:`agents.suites`) on the suite's deals and returns its row:

- ``rating``: Bradley-Terry strength in Elo points on the suite's published scale, with a 95%
  interval from a bootstrap over deals. The references keep their published ratings (the anchor,
  ``greedy = 1000`` in the shipped suites, by definition): only the agent's number is fitted, so
  rating a new agent never moves the scale;
- per reference, the margin in points per hand and the game win rate, with 95% intervals
  clustered by deal (:func:`agents.stats.summarize`);
- the per-hand rates of primiera, settebello, coins and cards won, and of scope made.

A game of more than two sides counts as one comparison between the agent and each other side:
the winner beats every side it played, another side's win is a draw between the two who lost
(so two equal agents come out even whatever the number of sides).

:func:`rate_ladder` plays the references against each other (every pair, the first of the pair
on one side and the second on all the others, as the agent plays) and fits the scale that
:func:`agents.suites.with_ratings` publishes. The row depends on the suite, the tier and the
agent only: the deals and the agents' seeds come from the suite's seed, so any number of
workers gives the same row.

An agent is a spec (:func:`agents.registry.make_agent`), a checkpoint spec (``dmc:PATH``) or a
user's class ``module:Class`` (:func:`resolve_agent`, :func:`agents.registry.user_class`).

The engine (:func:`plan_pair`): a pair plays on the compiled core (:mod:`agents.compiled`) where
both of its agents have a compiled form (the compiled baselines, ``fsearch`` specs, the agents
whose ``compiled_policy`` hook gives a batch policy: the ``dmc:`` and ``zoo:`` networks) and the core
plays the suite's game as the harness does (:func:`agents.compiled.rules_problem`), else on the
Python harness (:func:`agents.matches.run_deals`); ``engine="python"`` plays every pair on the
harness and ``engine="compiled"`` refuses, before any game, a pair the core cannot play. Every
reference entry and ladder pair says its ``engine``. On the compiled core the deals are the core's
shuffles of the suite's deal seeds (its generator is not the engine's): the same cards on every
run, any number of workers (its threads) and any batch.

A long run can keep each finished pair (``state_dir``, :func:`played_pair`): a JSON file per pair,
with the pair's deal-by-deal comparisons, its summary, the engine, its CPU time and the commit that
played it; a later run with the same suite, tier, deals, pair and engine takes the file instead of
playing the pair again (and says so in its ``reused`` count), so a ladder of several CPU-hours can
be played over several sessions, on a Ray cluster or not (``cluster``, :mod:`agents.ray_deals`: the
same games wherever a deal plays). The files hold numbers and strings only (JSON, no pickle).

The ``oracle`` sees every card (:mod:`agents.oracle`, cheating): it gets no ranked row
(:func:`check_agents` refuses it) and no reference may be one. ``rate_agent(..., ceiling=True)``
measures it against the ladder like any agent, margins, win rates and intervals, but marks the
row ``role: "ceiling"`` and leaves it out of the rating fit (``rating`` is ``None``): it is the
ceiling the fair agents are measured against (``benchmarks/leaderboard.py``).
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from agents.base import Agent
from agents.compiled import ENGINE_COMPILED, ENGINE_PYTHON, Player, compiled_lineup, play_deals_compiled
from agents.matches import Cluster, Match, RunResult, game_agent, run_deals
from agents.registry import agent_label, check_fair, is_cheating, is_user_class, user_class
from agents.stats import ELO_PER_NATURAL_UNIT, bradley_terry, summarize
from agents.suites import Suite

BOOTSTRAP = 1000
"""Resamples of the deals behind a rating's interval."""

PRIOR = 0.5
"""Pseudo-comparisons won and lost against every reference played, so an agent that never loses is rated."""

PER_HAND = ("primiera", "settebello", "coins", "cards", "scope")
"""The per-hand rates of a row: categories won (a share of hands) and scope made per hand."""

# --- the agent ---------------------------------------------------------------------------


def resolve_agent(spec: str) -> str:
    """The spec to play ``spec`` by; a user's ``module:Class`` is imported and checked first.

    :func:`agents.registry.user_class` does it (every command that names an agent builds a user's
    class the same way); here it runs before any game and before the workers fork, which inherit
    the imported module.

    Raises:
        ValueError: one line: the module cannot be imported, has no such name, or the name is not
            a class implementing the agent interface.
    """
    if is_user_class(spec):
        user_class(spec.strip())
    return spec


CPU_SECONDS_PER_GAME = 637 / (200 * 2 * 6)
"""CPU-seconds of one game against the ladder for an agent deciding in about a millisecond: what
``fsearch:worlds=64`` took on the quick tier of ``standard-2p-v1`` (637 CPU-seconds for 200 deals x 2
rotations x 6 references, docs/benchmark.md), a game of 40 cards to 11 points."""


def estimate_cpu_seconds(suite: Suite, deals: int) -> float:
    """About how many CPU-seconds ``deals`` deals of ``suite`` take against its whole ladder, for an agent
    deciding in about a millisecond (:data:`CPU_SECONDS_PER_GAME`, scaled by the deck and the target)."""
    games = deals * suite.num_sides * len(suite.ladder)
    return games * CPU_SECONDS_PER_GAME * len(suite.rules.deck) / 40 * suite.rules.target / 11


def tier_deals(suite: Suite, tier: str, deals: int | None = None) -> int:
    """The deals a run plays: the tier's, or its first ``deals`` (a trial).

    Raises:
        ValueError: an unknown tier, or ``deals`` outside 1 to the tier's size.
    """
    size = suite.deals(tier)
    n = size if deals is None else deals
    if not 1 <= n <= size:
        raise ValueError(f"deals must be between 1 and the {tier} tier's {size}, got {n}")
    return n


RANKED_ROLE = (
    "ranked on a leaderboard; the suite's published record (benchmarks/leaderboard.py) shows it as the "
    "unranked ceiling row"
)
"""What a cheating agent cannot be, in :func:`check_agents`' refusal."""


def check_agents(suite: Suite, spec: str, ceiling: bool = False) -> None:
    """Refuse, before any game, an agent or a reference that cannot play the suite's game.

    A cheating agent (the ``oracle``) is refused as a ranked agent, and as a reference always;
    ``ceiling=True`` lets it be measured as the suite's ceiling row.

    A trained reference whose installed weights are not the ones the suite pins
    (:attr:`agents.suites.LadderEntry.weights_sha256`) is refused too: the published ratings
    describe the pinned network.

    Raises:
        ValueError: one line naming the agent and why (:func:`agents.matches.game_agent`, :func:`agents.registry.check_fair`).
    """
    for s in suite.ladder_specs:
        check_fair(s, "a reference of a suite's ladder")
    if not ceiling:
        check_fair(spec, RANKED_ROLE)
    agent = game_agent(spec, suite.num_players, suite.rules)
    if not ceiling:
        check_fair(agent, RANKED_ROLE)
    elif not is_cheating(agent):
        raise ValueError(f"{spec!r} is a fair agent: only a cheating agent (the oracle) is measured as the ceiling")
    for entry in suite.ladder:
        check_pinned(suite, entry, game_agent(entry.agent, suite.num_players, suite.rules))


def check_pinned(suite: Suite, entry, agent: Agent) -> None:
    """Refuse a reference whose weights are not the ones ``suite`` pins for it (one line, naming both)."""
    if entry.weights_sha256 is None or agent.weights_sha256 == entry.weights_sha256:
        return
    got = "no checked weights" if agent.weights_sha256 is None else f"weights {agent.weights_sha256[:12]}"
    raise ValueError(
        f"suite {suite.name}: its reference {entry.agent} was rated with weights {entry.weights_sha256[:12]}, "
        f"but the installed {entry.agent} has {got}: a retrained reference needs a new suite version"
    )


# --- playing ------------------------------------------------------------------------------


def lineup(suite: Suite, first: str, other: str) -> tuple[str, ...]:
    """``first`` on one side, ``other`` on every other side (the rotations move ``first`` round)."""
    return (first,) + (other,) * (suite.num_sides - 1)


def pair_comparisons(run: RunResult) -> np.ndarray:
    """Per deal, the comparisons the first agent won and lost against the other sides (module docstring)."""
    out = np.zeros((len(run.deals), 2))
    for d, records in enumerate(run.deals):
        for rec in records:
            if rec["winner"] is None:
                continue
            first = rec["lineup"].index(0)
            if rec["winner"] == first:
                out[d, 0] += len(rec["lineup"]) - 1
            else:
                out[d, 1] += 1
    return out


ENGINES = ("auto", "compiled", "python")
"""Where pairs play: the compiled core where it can (``auto``), only there, or only on the Python harness."""


def plan_pair(suite: Suite, first: str, other: str, engine: str = "auto") -> tuple[str, list[Player] | None]:
    """``(engine, players)``: the compiled core and a compiled player per agent of the pair's match, or the
    Python harness and ``None`` (module docstring).

    Raises:
        ValueError: an unknown ``engine``, or ``engine="compiled"`` and a pair the core cannot play
            (one line saying why).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "python":
        return ENGINE_PYTHON, None
    players, why = compiled_lineup(lineup(suite, first, other), suite.num_players, suite.rules)
    if players is None:
        if engine == "compiled":
            raise ValueError(f"{first} vs {other} on {suite.name} cannot play on the compiled core: {why}")
        return ENGINE_PYTHON, None
    return ENGINE_COMPILED, players


def play_pair(
    suite: Suite,
    first: str,
    other: str,
    deals: int,
    workers: int = 1,
    progress: bool = False,
    desc: str | None = None,
    engine: str = "auto",
    plan: tuple[str, list[Player] | None] | None = None,
    cluster: Cluster | None = None,
) -> tuple[Match, RunResult, str, float]:
    """Play the first ``deals`` deals of the suite, ``first`` against ``other``, on the engine of :func:`plan_pair`.

    ``cluster`` (``--ray``, :mod:`agents.ray_deals`): the deals play as its tasks, on either engine, the
    same games as here; ``workers`` is then unused.

    BLAS runs on one thread while the pair plays (threadpoolctl; the previous limit comes back
    after): the networks' batches are small, and on a busy machine a second BLAS thread only spins
    (it made a zoo pair's CPU time about 6 times larger).

    Returns ``(match, run, engine, cpu_seconds)``: the harness's CPU time is its games' (summed over
    the workers), the compiled core's this process's (every thread) while it played, or its tasks' on a cluster.
    """
    name, players = plan if plan is not None else plan_pair(suite, first, other, engine)
    match = Match(lineup(suite, first, other), suite.num_players, suite.rules, suite.seed)
    with threadpool_limits(limits=1, user_api="blas"):  # forked workers keep the limit
        if players is None:
            run = run_deals(match, deals, workers, progress, desc=desc, cluster=cluster)
            return match, run, name, sum(rec["seconds"] for records in run.deals for rec in records)
        from scopa_env.fast.batch import max_threads

        start = time.process_time()
        threads = min(workers, max_threads())
        run = play_deals_compiled(match, players, deals, progress=progress, desc=desc, threads=threads, cluster=cluster)
        cpu = run.cpu_seconds if run.cpu_seconds is not None else time.process_time() - start
        return match, run, name, cpu


STATE_FORMAT = 1
"""Version of the kept pair files (:func:`played_pair`)."""


@dataclass
class PairOutcome:
    """What a pair's games left: its ``summary`` (:func:`agents.stats.summarize`'s report), its
    deal-by-deal ``comparisons`` (:func:`pair_comparisons`), the engine, the CPU and wall seconds, and
    whether it was ``interrupted`` or ``reused`` from a kept file (played at ``commit``)."""

    summary: dict | None
    comparisons: np.ndarray | None
    engine: str
    cpu: float
    wall: float
    interrupted: bool = False
    reused: bool = False
    commit: str | None = None


def _state_file(state_dir: Path, first: str, other: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{first}__vs__{other}")
    return Path(state_dir) / f"{safe}.json"


def _pair_key(suite: Suite, first: str, other: str, deals: int, engine: str) -> dict:
    return {
        "suite": suite.name,
        "fingerprints": dict(suite.fingerprints),
        "deals": deals,
        "pair": [first, other],
        "engine": engine,
    }


def _kept_pair(path: Path, key: dict) -> PairOutcome | None:
    """The pair kept in ``path`` if it is one of ``key`` and well formed, else None (said in one line)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        if data.get("format") != STATE_FORMAT or data.get("key") != key:
            why = "another run's pair (suite, deals, pair or engine differ)"
            print(f"leaderboard: {path} is {why}: played again", file=sys.stderr)
            return None
        comparisons = np.asarray(data["comparisons"], dtype=np.float64)
        if comparisons.shape != (key["deals"], 2) or not np.isfinite(comparisons).all():
            raise ValueError(f"comparisons of shape {comparisons.shape}, not ({key['deals']}, 2)")
        summary = data["summary"]
        if not isinstance(summary, dict) or not isinstance(summary.get("agents"), list):
            raise ValueError("no summary of the pair's agents")
        engine, cpu, wall = str(data["engine"]), float(data["cpu_seconds"]), float(data["wall_seconds"])
        return PairOutcome(summary, comparisons, engine, cpu, wall, reused=True, commit=data.get("commit"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"leaderboard: {path} cannot be read back ({exc}): played again", file=sys.stderr)
        return None


def played_pair(
    suite: Suite,
    first: str,
    other: str,
    deals: int,
    workers: int,
    progress: bool,
    desc: str,
    plan: tuple[str, list[Player] | None],
    state_dir: str | Path | None = None,
    cluster: Cluster | None = None,
) -> PairOutcome:
    """:func:`play_pair` and :func:`agents.stats.summarize`, or the pair kept in ``state_dir`` by an earlier
    run of the same suite, deals, pair and engine; a pair played to its end is kept there (on ``cluster``
    or not: a pair is the same games either way, so a run can stop on one and go on on the other)."""
    key = _pair_key(suite, first, other, deals, plan[0])
    path = _state_file(Path(state_dir), first, other) if state_dir is not None else None
    if path is not None:
        kept = _kept_pair(path, key)
        if kept is not None:
            if progress:
                print(f"{desc}: kept in {path} (played at {kept.commit or 'an unknown commit'})", file=sys.stderr)
            return kept
    match, run, played_on, seconds = play_pair(
        suite, first, other, deals, workers, progress, desc, plan=plan, cluster=cluster
    )
    if run.interrupted or len(run.deals) < deals:
        return PairOutcome(None, None, played_on, seconds, run.wall_seconds, interrupted=True)
    summary = summarize(match, run)
    outcome = PairOutcome(summary, pair_comparisons(run), played_on, seconds, run.wall_seconds)
    if path is not None:
        from scopa_env.bench.results import git_commit

        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "format": STATE_FORMAT,
            "key": key,
            "commit": git_commit(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "engine": played_on,
            "cpu_seconds": round(seconds, 3),
            "wall_seconds": round(run.wall_seconds, 3),
            "summary": summary,
            "comparisons": outcome.comparisons.tolist(),
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)
    return outcome


# --- ratings -------------------------------------------------------------------------------


def fit_against(wins: np.ndarray, losses: np.ndarray, ratings: np.ndarray, prior: float = PRIOR) -> np.ndarray:
    """Maximum-likelihood Elo rating of one agent against references of fixed ``ratings``.

    Args:
        wins, losses: ``(..., k)`` comparisons won and lost against each of ``k`` references;
            leading axes (bootstrap resamples) are fitted independently.
        ratings: ``(k,)`` the references' ratings in Elo points.

    The log-likelihood is concave in the rating, so its derivative, decreasing, is solved by
    bisection to well below a hundredth of a point.
    """
    w = np.asarray(wins, float) + prior
    n = w + np.asarray(losses, float) + prior
    x = np.asarray(ratings, float) / ELO_PER_NATURAL_UNIT
    lo = np.full(w.shape[:-1], x.min() - 40.0)
    hi = np.full(w.shape[:-1], x.max() + 40.0)
    for _ in range(80):
        mid = (lo + hi) / 2
        p = 1 / (1 + np.exp(x - mid[..., None]))  # P(agent beats reference j)
        grad = (w - n * p).sum(axis=-1)
        lo = np.where(grad > 0, mid, lo)
        hi = np.where(grad > 0, hi, mid)
    return (lo + hi) / 2 * ELO_PER_NATURAL_UNIT


def rating_with_interval(per_ref: Sequence[np.ndarray], ratings: Sequence[float], seed: int) -> dict:
    """Rating and 95% bootstrap interval from per-deal comparisons against each reference.

    Every reference was played on the same deals, so a resample draws deals once for all of them.
    """
    stack = np.stack(per_ref, axis=1)  # (deals, refs, won/lost)
    r = np.asarray(ratings, float)
    mean = float(fit_against(stack[:, :, 0].sum(0), stack[:, :, 1].sum(0), r))
    rng = np.random.default_rng(seed)
    picks = rng.integers(len(stack), size=(BOOTSTRAP, len(stack)))
    boot = stack[picks].sum(axis=1)  # (resamples, refs, 2)
    samples = fit_against(boot[..., 0], boot[..., 1], r)
    return {
        "mean": round(mean, 1),
        "lo": round(float(np.percentile(samples, 2.5)), 1),
        "hi": round(float(np.percentile(samples, 97.5)), 1),
    }


def anchored_bradley_terry(
    specs: Sequence[str], per_pair: dict[tuple[int, int], np.ndarray], anchor: int, anchor_rating: float, seed: int
) -> list[dict]:
    """Bradley-Terry ratings in Elo points with ``specs[anchor]`` at ``anchor_rating``, and bootstrap intervals.

    Args:
        per_pair: for each pair ``(i, j)`` played, per deal the comparisons ``i`` won and lost
            against ``j`` (:func:`pair_comparisons`); every pair on the same deals.
    """
    k = len(specs)

    def fit(sums: dict[tuple[int, int], np.ndarray]) -> np.ndarray:
        wins = np.zeros((k, k))
        for (i, j), s in sums.items():
            wins[i, j] += s[0]
            wins[j, i] += s[1]
        theta = bradley_terry(wins) * ELO_PER_NATURAL_UNIT
        return theta - theta[anchor] + anchor_rating

    point = fit({p: w.sum(0) for p, w in per_pair.items()})
    deals = len(next(iter(per_pair.values())))
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(BOOTSTRAP // 5):  # each resample is a whole fit: fewer of them
        pick = rng.integers(deals, size=deals)
        samples.append(fit({p: w[pick].sum(0) for p, w in per_pair.items()}))
    arr = np.array(samples)
    return [
        {
            "agent": specs[a],
            "rating": {
                "mean": round(float(point[a]), 1),
                "lo": round(float(np.percentile(arr[:, a], 2.5)), 1),
                "hi": round(float(np.percentile(arr[:, a], 97.5)), 1),
            },
        }
        for a in range(k)
    ]


# --- the row -------------------------------------------------------------------------------


def _ci(ci: dict) -> dict:
    return {k: (None if math.isnan(ci[k]) else round(float(ci[k]), 4)) for k in ("mean", "lo", "hi")}


def per_hand_rates(side: dict) -> dict:
    """The per-hand rates of one agent's row of :func:`agents.stats.summarize`."""
    rates = {cat: side["categories"][cat]["won"] for cat in PER_HAND if cat != "scope"}
    rates["scope"] = side["scope_per_hand"]
    return {k: round(float(v), 4) for k, v in rates.items()}


def _reference_entry(suite: Suite, ref: str, outcome: PairOutcome) -> dict:
    """The entry of :func:`rate_agent`'s row for one reference: the agent's games against ``ref``
    (``outcome``: :func:`played_pair`'s), its margin and win rate with intervals, its per-hand rates
    and the engine that played them."""
    report = outcome.summary
    side = report["agents"][0]
    return {
        "reference": ref,
        "reference_rating": suite.rating_of(ref),
        "engine": outcome.engine,
        "deals": report["deals"],
        "games": side["games"],
        "hands": side["hands"],
        "margin_per_hand": _ci(side["margin_per_hand"]),
        "win_rate": _ci(side["win_rate"]),
        "per_hand": per_hand_rates(side),
        **({"kept_from_commit": outcome.commit} if outcome.reused else {}),
    }


def _agent_row(
    suite: Suite,
    spec: str,
    tier: str,
    n: int,
    ceiling: bool,
    rating: dict | None,
    per_ref: list[dict],
    totals: dict[str, float],
) -> dict:
    """:func:`rate_agent`'s leaderboard row from its reference entries, its rating (or ``None``) and
    ``totals`` (the hands played and the per-hand rates weighted by them, over all references)."""
    hands = totals["hands"]
    return {
        "agent": spec,
        **({"label": agent_label(spec), "role": "ceiling", "cheating": is_cheating(spec)} if ceiling else {}),
        "suite": suite.name,
        "tier": tier,
        "deals": n,
        "trial": n != suite.deals(tier),
        "rating": rating,
        "scale": f"Elo points, {suite.anchor} = {suite.anchor_rating:g}",
        "references": per_ref,
        "per_hand": {k: round(totals[k] / hands, 4) for k in PER_HAND} if hands else None,
    }


def rate_agent(
    suite: Suite,
    spec: str,
    tier: str = "quick",
    deals: int | None = None,
    workers: int = 1,
    progress: bool = False,
    on_reference: Callable[[str, dict], None] | None = None,
    ceiling: bool = False,
    engine: str = "auto",
    state_dir: str | Path | None = None,
    cluster: Cluster | None = None,
) -> dict:
    """Play ``spec`` against the suite's ladder and return its leaderboard report.

    Args:
        deals: only the first ``deals`` deals of the tier (a trial run, marked in the report).
        on_reference: called with each reference and its entry as it finishes.
        ceiling: measure a cheating agent (the ``oracle``) as the suite's ceiling: its row has
            ``role: "ceiling"``, ``cheating: True`` and no rating (it is left out of the fit).
        engine: ``auto``, ``compiled`` or ``python`` (:func:`plan_pair`); each reference entry says
            the engine that played it.
        state_dir: keep each finished pair there and take the pairs kept by an earlier run
            (:func:`played_pair`; ``timing.reused_pairs`` counts them).
        cluster: play the deals on a Ray cluster (``--ray``, :mod:`agents.ray_deals`): the same row;
            ``timing.ray`` says where, ``timing.workers`` counts its CPUs.

    Returns:
        ``{"row": ..., "forfeits": [...], "timing": {...}, "interrupted": bool}``. ``row`` is the
        leaderboard row (the same for any ``workers``); its ``rating`` is ``None`` while the
        suite's ladder has no published ratings.

    Raises:
        ValueError: an unknown tier or engine, an agent or reference that cannot play the suite's
            game, or a pair that ``engine="compiled"`` cannot play (before any game).
    """
    spec = resolve_agent(spec)
    n = tier_deals(suite, tier, deals)
    check_agents(suite, spec, ceiling=ceiling)
    refs = suite.ladder_specs
    plans = [plan_pair(suite, spec, ref, engine) for ref in refs]
    per_ref, comparisons, totals = [], [], {"hands": 0.0, **{k: 0.0 for k in PER_HAND}}
    forfeits: list[dict] = []
    wall = cpu = 0.0
    by_engine: dict[str, float] = {}
    interrupted = False
    reused = 0
    for k, (ref, plan) in enumerate(zip(refs, plans), 1):
        desc = f"[{k}/{len(refs)}] vs {ref}"
        outcome = played_pair(suite, spec, ref, n, workers, progress, desc, plan, state_dir, cluster)
        played_on, seconds = outcome.engine, outcome.cpu
        wall += outcome.wall
        cpu += seconds
        by_engine[played_on] = by_engine.get(played_on, 0.0) + seconds
        if outcome.interrupted:
            interrupted = True
            break
        reused += outcome.reused
        forfeits += [f for f in outcome.summary["forfeits"]]
        entry = _reference_entry(suite, ref, outcome)
        totals["hands"] += entry["hands"]
        for key in PER_HAND:
            totals[key] += entry["per_hand"][key] * entry["hands"]
        per_ref.append(entry)
        comparisons.append(outcome.comparisons)
        if on_reference is not None:
            on_reference(ref, entry)
    complete = len(per_ref) == len(refs)
    rating = None
    if complete and suite.rated and not ceiling:
        rating = rating_with_interval(comparisons, [suite.rating_of(r) for r in refs], suite.seed)
    return {
        "row": _agent_row(suite, spec, tier, n, ceiling, rating, per_ref, totals),
        "forfeits": forfeits,
        "interrupted": interrupted,
        "timing": {
            "wall_seconds": round(wall, 1),
            "cpu_seconds": round(cpu, 1),
            "cpu_seconds_by_engine": {k: round(v, 1) for k, v in by_engine.items()},
            "workers": workers if cluster is None else cluster.cpus,
            **({} if cluster is None else {"ray": cluster.describe()}),
            "python": sys.version.split()[0],
            "reused_pairs": reused,
        },
    }


def rate_ladder(
    suite: Suite,
    tier: str = "quick",
    deals: int | None = None,
    workers: int = 1,
    progress: bool = False,
    engine: str = "auto",
    state_dir: str | Path | None = None,
    cluster: Cluster | None = None,
) -> dict:
    """Play every pair of the suite's references and fit its scale (the anchor keeps its number).

    Returns ``{"ratings": [{"agent", "rating": {mean, lo, hi}}], "per_hand": {agent: rates}, "pairs": [...],
    "alone_pairs": [...], "forfeits", "deals", "tier", "weights", "timing"}`` (``weights``: the SHA-256
    of each trained reference's weights, what a published scale pins); the per-hand rates are over all of a
    reference's fitted pairs, and each pair says the ``engine`` that played it (:func:`plan_pair`).

    The fitted pairs put the earlier reference of the ladder on one side and the later one on all the
    others. In a game of more than two sides, a reference after the anchor has then only met the anchor
    as the many against the one, which says nothing about it alone against the anchor on every other
    side (the rated agents' "vs anchor" numbers): ``alone_pairs`` plays that pair too, ``[reference,
    anchor]``, outside the fit. With two sides the pair seen from the other side is the same numbers.

    ``state_dir`` and ``cluster`` are :func:`rate_agent`'s.
    """
    refs = suite.ladder_specs
    n = suite.deals(tier) if deals is None else deals
    weights = {}
    for entry in suite.ladder:
        check_fair(entry.agent, "a reference of a suite's ladder")
        agent = game_agent(entry.agent, suite.num_players, suite.rules)
        check_pinned(suite, entry, agent)
        if agent.weights_sha256 is not None:
            weights[entry.agent] = agent.weights_sha256
    pair_ids = [(i, j) for i in range(len(refs)) for j in range(i + 1, len(refs))]
    if suite.num_sides > 2:
        a = refs.index(suite.anchor)
        alone_ids = [(j, a) for j in range(a + 1, len(refs))]
    else:
        alone_ids = []
    plans = {(i, j): plan_pair(suite, refs[i], refs[j], engine) for i, j in pair_ids + alone_ids}
    per_pair: dict[tuple[int, int], np.ndarray] = {}
    hands_seen: dict[str, dict[str, float]] = {}
    pairs, alone, forfeits = [], [], []
    wall = cpu = 0.0
    reused = 0
    by_engine: dict[str, float] = {}
    total = len(pair_ids) + len(alone_ids)
    for k, (i, j) in enumerate(pair_ids + alone_ids, 1):
        fitted = k <= len(pair_ids)
        desc = f"[{k}/{total}] {refs[i]} vs {refs[j]}" + ("" if fitted else " (alone, not fitted)")
        outcome = played_pair(suite, refs[i], refs[j], n, workers, progress, desc, plans[i, j], state_dir, cluster)
        played_on, seconds = outcome.engine, outcome.cpu
        wall += outcome.wall
        cpu += seconds
        by_engine[played_on] = by_engine.get(played_on, 0.0) + seconds
        if outcome.interrupted:
            raise KeyboardInterrupt
        reused += outcome.reused
        report = outcome.summary
        forfeits += report["forfeits"]
        side = report["agents"][0]
        entry = {
            "pair": [refs[i], refs[j]],
            "engine": played_on,
            **({"kept_from_commit": outcome.commit} if outcome.reused else {}),
            "deals": report["deals"],
            "margin_per_hand": _ci(side["margin_per_hand"]),
            "win_rate": _ci(side["win_rate"]),
        }
        if not fitted:
            alone.append(entry)
            continue
        per_pair[(i, j)] = outcome.comparisons
        for side in report["agents"]:
            rates = per_hand_rates(side)
            acc = hands_seen.setdefault(side["agent"], {"hands": 0.0, **{k: 0.0 for k in PER_HAND}})
            acc["hands"] += side["hands"]
            for key in PER_HAND:
                acc[key] += rates[key] * side["hands"]
        pairs.append(entry)
    ratings = anchored_bradley_terry(refs, per_pair, refs.index(suite.anchor), suite.anchor_rating, suite.seed)
    return {
        "ratings": ratings,
        "per_hand": {a: {k: round(v[k] / v["hands"], 4) for k in PER_HAND} for a, v in hands_seen.items()},
        "pairs": pairs,
        "alone_pairs": alone,
        "forfeits": forfeits,
        "deals": n,
        "tier": tier,
        "weights": weights,
        "timing": {
            "wall_seconds": round(wall, 1),
            "cpu_seconds": round(cpu, 1),
            "cpu_seconds_by_engine": {k: round(v, 1) for k, v in by_engine.items()},
            "workers": workers if cluster is None else cluster.cpus,
            **({} if cluster is None else {"ray": cluster.describe()}),
            "reused_pairs": reused,
        },
    }
