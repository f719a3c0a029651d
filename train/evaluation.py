"""Evaluating the learner as it trains, with the harness's duplicate deals.

The learner is an in-memory :class:`~train.sb3.policy_agent.PolicyAgent`, so the deals are
played here with :func:`agents.evaluate.play_game` (one process) and summarized with
:func:`agents.evaluate.summarize`: the same deals, seeds and statistics as ``scopa eval``.
:func:`flat_metrics` turns a report into the ``eval/<opponent>/...`` scalars and CSV columns.
"""

from __future__ import annotations

import math

from agents.base import Agent
from agents.matches import Match, RunResult, play_game
from agents.registry import make_agent
from agents.stats import summarize
from scopa_env.engine.game import sides_for

LEARNER = "learner"


def evaluate_agent(
    learner: Agent, opponent: str, num_deals: int, num_players: int = 2, rules=None, seed: int = 0
) -> dict:
    """Play ``num_deals`` duplicate deals (every rotation, full games) of ``learner`` vs ``opponent``."""
    match = Match((LEARNER, opponent), num_players, rules, seed)
    side_of = sides_for(num_players, match.rules)
    pool = [
        [learner] * num_players,
        [make_agent(opponent) for _ in range(num_players)],
    ]
    seat_agents = [[pool[lineup[side_of[s]]][s] for s in range(num_players)] for lineup in match.lineups()]
    deals = [[play_game(match, d, r, seat_agents[r]) for r in range(match.num_sides)] for d in range(num_deals)]
    return summarize(match, RunResult(deals=deals, requested=num_deals))


def flat_metrics(report: dict) -> dict[str, float]:
    """Scalars of one learner-vs-opponent report: win rate, margin with CI, per-hand category rates.

    Keys: ``win_rate``, ``win_rate_lo/hi``, ``margin``, ``margin_lo/hi``, then per side
    (``learner_`` / ``opponent_``): ``primiera``, ``settebello``, ``coins``, ``cards`` (the
    share of hands in which that side won the point) and ``scope`` (scope per hand);
    ``games``, ``hands``, ``forfeits``.
    """
    me, opp = report["agents"]
    out = {
        "win_rate": me["win_rate"]["mean"],
        "win_rate_lo": me["win_rate"]["lo"],
        "win_rate_hi": me["win_rate"]["hi"],
        "margin": me["margin_per_hand"]["mean"],
        "margin_lo": me["margin_per_hand"]["lo"],
        "margin_hi": me["margin_per_hand"]["hi"],
    }
    for prefix, row in (("learner", me), ("opponent", opp)):
        for cat in ("primiera", "settebello", "coins", "cards"):
            out[f"{prefix}_{cat}"] = row["categories"][cat]["won"]
        out[f"{prefix}_scope"] = row["scope_per_hand"]
    out["games"] = me["games"]
    out["hands"] = me["hands"]
    out["forfeits"] = me["forfeits"]
    return {k: (float(v) if v is not None else math.nan) for k, v in out.items()}
