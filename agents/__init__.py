"""Agents: one interface (:class:`~agents.base.Agent`), baselines and the evaluation harness.

Built-in agents (by name in :func:`~agents.registry.make_agent`):

* ``random``: uniform over legal moves (:mod:`agents.random_agent`);
* ``greedy``: best immediate capture with fixed weights (:mod:`agents.greedy`);
* ``heuristic``: the published strategy with card counting (:mod:`agents.heuristic`);
* ``search``: determinized search with rollouts (:mod:`agents.search`);
* ``openspiel:ismcts``: OpenSpiel's ISMCTS bot (:mod:`agents.openspiel_bot`, the ``openspiel`` extra);
* ``oracle``: search of the true deal, every card seen: *cheating*, the benchmark's ceiling (:mod:`agents.oracle`).
"""

from agents.base import Agent
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent
from agents.registry import AGENT_NAMES, make_agent, register_agent_factory
from agents.search import SearchAgent

__all__ = [
    "AGENT_NAMES",
    "Agent",
    "GreedyAgent",
    "HeuristicAgent",
    "RandomAgent",
    "SearchAgent",
    "make_agent",
    "register_agent_factory",
]
