"""A match or a round robin in one call: the deals played (:mod:`agents.matches`) and summarized (:mod:`agents.stats`).

:func:`evaluate` plays two or more agents on duplicate deals and returns the report of
:func:`agents.stats.summarize`; :func:`tournament` plays every pair of agents on the same
deals and rates them (:func:`agents.stats.elo_ratings`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from agents.matches import Cluster, Match, game_agent, run_deals
from agents.stats import elo_ratings, pair_deal_wins, summarize
from scopa_env.engine.rules import Rules, get_rules


def evaluate(
    agents: Sequence[str],
    games: int = 100,
    rules: str | Rules | None = None,
    players: int = 2,
    workers: int = 1,
    seed: int = 0,
    progress: bool = False,
    cluster: Cluster | None = None,
) -> dict:
    """Play ``games`` duplicate deals (each in every rotation) and return the report dict.

    Forfeits are in the report (``forfeits``); an agent that cannot play this game is refused
    before any deal (``ValueError``, :func:`agents.matches.game_agent`). ``cluster``: the deals play
    on a Ray cluster (:mod:`agents.ray_deals`), the same games.
    """
    match = Match(tuple(agents), players, get_rules(rules), seed)
    return summarize(match, run_deals(match, games, workers, progress, cluster=cluster))


def tournament(
    agents: Sequence[str],
    games: int = 100,
    rules: str | Rules | None = None,
    players: int = 2,
    workers: int = 1,
    seed: int = 0,
    progress: bool = False,
    bootstrap: int = 200,
    on_pair: Callable[[dict], None] | None = None,
    cluster: Cluster | None = None,
) -> dict:
    """Play every pair of ``agents`` on the same duplicate deals and fit Bradley-Terry ratings.

    Ratings are in Elo points (mean zero) with 95% intervals from a bootstrap over deals.
    An interrupted run reports the pairs finished so far. ``cluster``: every pair's deals play on a
    Ray cluster (:mod:`agents.ray_deals`), the same games.

    Raises:
        ValueError: fewer than two distinct agents, or one that cannot play this game
            (:func:`agents.matches.game_agent`), before any pair is played.
    """
    specs = list(agents)
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ValueError(f"a tournament needs at least two distinct agents, got {specs}")
    rules = get_rules(rules)
    rules.check_players(players)
    for spec in specs:
        game_agent(spec, players, rules)
    k = len(specs)
    pairs = []
    per_deal_wins: dict[tuple[int, int], np.ndarray] = {}
    interrupted = False
    for i in range(k):
        for j in range(i + 1, k):
            if interrupted:
                break
            match = Match((specs[i], specs[j]), players, rules, seed)
            run = run_deals(match, games, workers, progress, desc=f"{specs[i]} vs {specs[j]}", cluster=cluster)
            report = summarize(match, run)
            pairs.append(report)
            if on_pair is not None:
                on_pair(report)
            per_deal_wins[(i, j)] = pair_deal_wins(run)
            interrupted = run.interrupted
    ratings, wins = elo_ratings(specs, per_deal_wins, seed, bootstrap)
    return {
        "ratings": ratings,
        "wins": wins.astype(int).tolist(),
        "agents": specs,
        "pairs": pairs,
        "config": {"agents": specs, "rules": rules.name, "players": players, "seed": seed, "deals_per_pair": games},
        "interrupted": interrupted,
    }
