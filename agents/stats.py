"""Statistics of played deals: summaries, confidence intervals clustered by deal, ratings.

Results are clustered by deal: the confidence intervals treat a deal (all its rotations)
as one sample, which removes most of the card luck. The *plain* intervals treat every
game as an independent sample, as a tally of single games would; both are reported.

:func:`summarize` turns the game records of :func:`agents.matches.run_deals` into the
report dict; :func:`elo_ratings` fits Bradley-Terry ratings to the wins of every pair of a
tournament, with intervals from a bootstrap over deals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from agents.matches import Match, RunResult

Z95 = 1.959963984540054
"""Normal quantile of a two-sided 95% interval."""

MAX_HANDS = 200
"""A game still undecided after this many hands is stopped with no winner (a safety net)."""

CATEGORY_COUNTS = {"cards": "num_cards", "coins": "num_coins", "primiera": "primiera_value"}
"""Majority categories and the raw count deciding each; a tie at the top scores nobody."""

KNOWN_SCORE_KEYS = {
    "cards",
    "coins",
    "settebello",
    "primiera",
    "scope",
    "total",
    "num_scope",
    *CATEGORY_COUNTS.values(),
}
"""Keys of a hand score reported in their own columns; any other number a variant adds is an extra."""


def ratio_ci(num: Sequence[float], den: Sequence[float], z: float = Z95) -> dict:
    """Mean ``sum(num) / sum(den)`` with a cluster-robust normal interval (one cluster per entry).

    With ``den`` all ones this is the usual mean and ``z * s / sqrt(n)`` interval. With
    fewer than two clusters, or no spread, the interval collapses to the mean.
    """
    x = np.asarray(num, dtype=float)
    n_ = np.asarray(den, dtype=float)
    total = n_.sum()
    if total <= 0:
        return {"mean": math.nan, "lo": math.nan, "hi": math.nan, "n": int(len(x))}
    mean = float(x.sum() / total)
    k = len(x)
    if k < 2:
        return {"mean": mean, "lo": math.nan, "hi": math.nan, "n": k}
    resid = x - mean * n_
    se = math.sqrt(k / (k - 1) * float((resid**2).sum())) / total
    return {"mean": mean, "lo": mean - z * se, "hi": mean + z * se, "n": k}


def _clip01(ci: dict) -> dict:
    """A proportion's interval clipped to [0, 1]."""
    if not math.isnan(ci["lo"]):
        ci["lo"], ci["hi"] = max(0.0, ci["lo"]), min(1.0, ci["hi"])
    return ci


def wilson_ci(wins: float, games: float, z: float = Z95) -> dict:
    """Wilson score interval of a binomial proportion."""
    if games <= 0:
        return {"mean": math.nan, "lo": math.nan, "hi": math.nan, "n": 0}
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    return {"mean": p, "lo": centre - half, "hi": centre + half, "n": int(games)}


def hand_outcomes(hand: list[dict], side: int) -> dict:
    """Per category, ``"won"``, ``"tied"`` or ``"lost"`` for ``side`` in one hand's score."""
    out = {}
    for cat, raw in CATEGORY_COUNTS.items():
        if hand[side][cat] > 0:
            out[cat] = "won"
        elif hand[side][raw] == max(row[raw] for row in hand):
            out[cat] = "tied"  # nobody scored it and this side was not beaten
        else:
            out[cat] = "lost"
    out["settebello"] = "won" if hand[side]["settebello"] > 0 else "lost"
    return out


def hand_margin(hand: list[dict], side: int) -> float:
    """Hand points of ``side`` minus the mean of the other sides."""
    others = [row["total"] for s, row in enumerate(hand) if s != side]
    return hand[side]["total"] - sum(others) / len(others)


def summarize(match: Match, run: RunResult) -> dict:
    """The report of a run: per agent win rates, margins and category rates, with CIs."""
    num_agents = len(match.agents)
    per_deal = {
        k: np.zeros((len(run.deals), num_agents)) for k in ("wins", "side_games", "margin", "side_hands", "points")
    }
    per_game: dict[str, list[list[float]]] = {k: [[] for _ in range(num_agents)] for k in ("wins", "margin", "hands")}
    categories = [
        {c: {"won": 0, "tied": 0, "lost": 0} for c in (*CATEGORY_COUNTS, "settebello")} for _ in range(num_agents)
    ]
    scope = np.zeros(num_agents)
    extras: list[dict[str, float]] = [{} for _ in range(num_agents)]
    total_hands = total_games = 0
    game_seconds = 0.0
    forfeits = []
    for i, records in enumerate(run.deals):
        for rec in records:
            total_games += 1
            total_hands += len(rec["hands"])
            game_seconds += rec["seconds"]
            if rec["forfeit"] is not None:
                forfeits.append({"deal": rec["deal"], "rotation": rec["rotation"], **rec["forfeit"]})
            for side, a in enumerate(rec["lineup"]):
                won = float(rec["winner"] == side)
                margin = sum(hand_margin(h, side) for h in rec["hands"])
                per_deal["wins"][i, a] += won
                per_deal["side_games"][i, a] += 1
                per_deal["margin"][i, a] += margin
                per_deal["side_hands"][i, a] += len(rec["hands"])
                per_deal["points"][i, a] += sum(h[side]["total"] for h in rec["hands"])
                per_game["wins"][a].append(won)
                per_game["margin"][a].append(margin)
                per_game["hands"][a].append(len(rec["hands"]))
                for h in rec["hands"]:
                    for cat, outcome in hand_outcomes(h, side).items():
                        categories[a][cat][outcome] += 1
                    scope[a] += h[side]["num_scope"]
                    for key, value in h[side].items():
                        if key not in KNOWN_SCORE_KEYS:
                            extras[a][key] = extras[a].get(key, 0.0) + value
    agents = []
    for a, spec in enumerate(match.agents):
        hands = per_deal["side_hands"][:, a].sum()
        games = per_deal["side_games"][:, a].sum()
        row = {
            "agent": spec,
            "games": int(games),
            "wins": int(per_deal["wins"][:, a].sum()),
            "hands": int(hands),
            "win_rate": _clip01(ratio_ci(per_deal["wins"][:, a], per_deal["side_games"][:, a])),
            "win_rate_plain": wilson_ci(per_deal["wins"][:, a].sum(), games),
            "margin_per_hand": ratio_ci(per_deal["margin"][:, a], per_deal["side_hands"][:, a]),
            "margin_per_hand_plain": ratio_ci(per_game["margin"][a], per_game["hands"][a]),
            "points_per_hand": float(per_deal["points"][:, a].sum() / hands) if hands else math.nan,
            "scope_per_hand": float(scope[a] / hands) if hands else math.nan,
            "categories": {
                cat: {k: (v / hands if hands else math.nan) for k, v in counts.items()}
                for cat, counts in categories[a].items()
            },
            "extras_per_hand": {k: v / hands for k, v in sorted(extras[a].items())} if hands else {},
            "forfeits": sum(1 for f in forfeits if f["agent"] == spec),
        }
        agents.append(row)
    return {
        "agents": agents,
        "config": {
            "agents": list(match.agents),
            "rules": match.rules.name,
            "players": match.num_players,
            "seed": match.seed,
            "deals_requested": run.requested,
            "rotations": match.num_sides,
        },
        "deals": len(run.deals),
        "games": total_games,
        "hands": total_hands,
        "interrupted": run.interrupted,
        "wall_seconds": run.wall_seconds,
        "game_seconds": game_seconds,
        "seconds_per_1000_hands": 1000 * game_seconds / total_hands if total_hands else math.nan,
        "forfeits": forfeits,
    }


# --- ratings ---------------------------------------------------------------------------

ELO_PER_NATURAL_UNIT = 400 / math.log(10)
"""Bradley-Terry strengths in natural log units times this are Elo points."""


def bradley_terry(wins: np.ndarray, prior: float = 0.5, iters: int = 2000, tol: float = 1e-10) -> np.ndarray:
    """Log-strengths (mean zero) of the Bradley-Terry model by the MM algorithm (Hunter 2004).

    Args:
        wins: ``wins[i, j]`` games ``i`` won against ``j``.
        prior: pseudo-wins added both ways between every pair that met, so an undefeated
            agent still gets a finite rating.
    """
    w = np.asarray(wins, dtype=float).copy()
    k = len(w)
    met = (w + w.T) > 0
    w = w + prior * met
    games = w + w.T
    total_wins = w.sum(axis=1)
    p = np.ones(k)
    for _ in range(iters):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1), p)
        new = np.maximum(new, 1e-12)
        new /= math.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    theta = np.log(p)
    return theta - theta.mean()


def pair_deal_wins(run: RunResult) -> np.ndarray:
    """Per deal of a two-agent run, the wins of its first and of its second agent over all rotations."""
    w = np.zeros((len(run.deals), 2))
    for d, records in enumerate(run.deals):
        for rec in records:
            if rec["winner"] is not None:
                w[d, rec["lineup"][rec["winner"]]] += 1
    return w


def elo_ratings(
    specs: Sequence[str], per_deal_wins: dict[tuple[int, int], np.ndarray], seed: int = 0, bootstrap: int = 200
) -> tuple[list[dict], np.ndarray]:
    """Bradley-Terry ratings in Elo points (mean zero) with 95% intervals from a bootstrap over deals.

    Args:
        specs: the agents, in the order of the indices of ``per_deal_wins``.
        per_deal_wins: for each pair ``(i, j)`` that played, :func:`pair_deal_wins` of its run.
        seed: seed of the bootstrap's resampling.
        bootstrap: resamples of the deals.

    Returns:
        The ratings, best first (an agent that played no game has NaN ratings and comes last),
        and ``wins[i, j]``, the games ``i`` won against ``j``.
    """
    k = len(specs)
    wins = np.zeros((k, k))
    for (i, j), w in per_deal_wins.items():
        wins[i, j] += w[:, 0].sum()
        wins[j, i] += w[:, 1].sum()
    theta = bradley_terry(wins)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(bootstrap):
        bw = np.zeros((k, k))
        for (i, j), w in per_deal_wins.items():
            if len(w) == 0:
                continue
            pick = w[rng.integers(len(w), size=len(w))]
            bw[i, j] += pick[:, 0].sum()
            bw[j, i] += pick[:, 1].sum()
        samples.append(bradley_terry(bw))
    samples_arr = np.array(samples) * ELO_PER_NATURAL_UNIT if samples else np.full((1, k), math.nan)
    ratings = []
    for a in range(k):
        played = bool(wins[a].sum() + wins[:, a].sum())
        ratings.append(
            {
                "agent": specs[a],
                "elo": float(theta[a] * ELO_PER_NATURAL_UNIT) if played else math.nan,
                "lo": float(np.percentile(samples_arr[:, a], 2.5)) if played else math.nan,
                "hi": float(np.percentile(samples_arr[:, a], 97.5)) if played else math.nan,
                "wins": int(wins[a].sum()),
                "games": int(wins[a].sum() + wins[:, a].sum()),
            }
        )
    ratings.sort(key=lambda r: -r["elo"] if not math.isnan(r["elo"]) else math.inf)
    return ratings, wins
