"""Evaluation with duplicate deals: skill separated from the luck of the cards.

This module gathers the harness under one name (``from agents.evaluate import ...`` keeps
working); each part lives in its own module, and code in the kit imports from there:

* :mod:`agents.matches`: playing deals in seat rotations: :class:`Match`, :func:`play_game`,
  :func:`hand_rows`, :func:`run_deals` (across worker processes), :class:`RunResult`, the
  seeds :func:`deal_seed` and :func:`agent_seed`.
* :mod:`agents.stats`: :func:`summarize` (the report of a run), confidence intervals clustered
  by deal (:func:`ratio_ci`, :func:`wilson_ci`), per-hand outcomes and margins, and the
  Bradley-Terry ratings of a tournament (:func:`bradley_terry`).
* :mod:`agents.tournament`: one call from agent specs to a report: :func:`evaluate` (one
  match) and :func:`tournament` (every pair, rated).
* :mod:`agents.report`: rich tables (:func:`render_report`, :func:`render_tournament`) and
  the CSV and JSON files (:func:`write_csv`, :func:`write_json`).
* :mod:`agents.plots`: :func:`plot_ratings` (matplotlib, imported only when it draws).
"""

from __future__ import annotations

from agents.matches import (
    MAX_HANDS,
    Match,
    RunResult,
    _numeric,  # noqa: F401  (train/fast_eval.py used it from here)
    _seat_agents,  # noqa: F401  (a test used it from here)
    agent_seed,
    deal_seed,
    hand_rows,
    play_deals,
    play_game,
    run_deals,
)
from agents.plots import plot_ratings
from agents.report import render_report, render_tournament, report_rows, write_csv, write_json
from agents.stats import (
    CATEGORY_COUNTS,
    ELO_PER_NATURAL_UNIT,
    KNOWN_SCORE_KEYS,
    Z95,
    bradley_terry,
    hand_margin,
    hand_outcomes,
    ratio_ci,
    summarize,
    wilson_ci,
)
from agents.tournament import evaluate, tournament

__all__ = [
    "CATEGORY_COUNTS",
    "ELO_PER_NATURAL_UNIT",
    "KNOWN_SCORE_KEYS",
    "MAX_HANDS",
    "Z95",
    "Match",
    "RunResult",
    "agent_seed",
    "bradley_terry",
    "deal_seed",
    "evaluate",
    "hand_margin",
    "hand_outcomes",
    "hand_rows",
    "play_deals",
    "play_game",
    "plot_ratings",
    "ratio_ci",
    "render_report",
    "render_tournament",
    "report_rows",
    "run_deals",
    "summarize",
    "tournament",
    "wilson_ci",
    "write_csv",
    "write_json",
]
