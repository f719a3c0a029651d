"""Agents by name: ``make_agent("greedy")``, ``make_agent("search:ply_budget=4000")``, ``ppo:PATH``.

Spec grammar::

    NAME                      a built-in agent: random, greedy, heuristic, search, fsearch
    NAME:key=value,key=value  a built-in agent with keyword arguments (ints, floats, true/false)
    PREFIX:ARGUMENT           an agent from a registered factory, e.g. a checkpoint ``ppo:runs/x.pt``

Later work registers checkpoint loaders with :func:`register_agent_factory`; until then a
known prefix such as ``ppo:`` names the extra and module that will provide it.
"""

from __future__ import annotations

from collections.abc import Callable

from agents.base import Agent
from agents.fast_search import FastSearchAgent
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent
from agents.search import SearchAgent

AgentFactory = Callable[..., Agent]

AGENT_CLASSES: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "search": SearchAgent,
    "fsearch": FastSearchAgent,
}
AGENT_NAMES: tuple[str, ...] = tuple(AGENT_CLASSES)
"""Names of the built-in agents."""

_FACTORIES: dict[str, AgentFactory] = {}

PLANNED_PREFIXES: dict[str, str] = {
    "ppo": "trained PPO checkpoints (module train.ppo, install the 'train' extra: pip install -e '.[train]')",
    "dqn": "trained DQN checkpoints (module train.dqn, install the 'train' extra: pip install -e '.[train]')",
    "rllib": "RLlib checkpoints (module train.rllib, install the 'train' extra: pip install -e '.[train]')",
    "dmc": "deep Monte-Carlo checkpoints (module train.dmc_agent; import train to register it)",
    "zoo": "the trained agents shipped with the kit (module train.zoo; import train to register it)",
    "netsearch": "the compiled search mixed with a DMC network (module train.net_search; import train to register it)",
}
"""Prefixes that later modules provide, with where they come from (for the error message)."""


def register_agent_factory(prefix: str, factory: AgentFactory) -> None:
    """Make ``PREFIX:ARGUMENT`` specs build agents with ``factory(ARGUMENT, seed=seed, **kwargs)``.

    The factory raises ``ValueError`` or ``FileNotFoundError`` with a one-line message for a
    missing or wrong checkpoint. Registering a built-in name is an error; registering the
    same prefix again replaces the factory.
    """
    if not prefix or ":" in prefix or prefix in AGENT_CLASSES:
        raise ValueError(f"cannot register agent prefix {prefix!r}: it is empty, has ':' or is a built-in agent")
    _FACTORIES[prefix] = factory


def known_specs() -> list[str]:
    """Built-in names and registered prefixes, for messages and ``--help``."""
    return list(AGENT_NAMES) + [f"{p}:PATH" for p in sorted(_FACTORIES)]


def make_agent(spec: str, seed=None, **kwargs) -> Agent:
    """Build an agent from a spec (see the module docstring).

    Raises:
        ValueError: unknown name or prefix (the message lists the known ones), bad options.
    """
    if isinstance(spec, Agent):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(
            f"agent spec must be a non-empty string, got {spec!r}; known agents: {', '.join(known_specs())}"
        )
    name, sep, rest = spec.strip().partition(":")
    if name in AGENT_CLASSES:
        options = dict(kwargs)
        if sep:
            options.update(parse_options(rest, spec))
        try:
            return AGENT_CLASSES[name](seed=seed, **options)
        except TypeError as exc:
            raise ValueError(f"bad options for agent {name!r} in {spec!r}: {exc}") from None
    if name in _FACTORIES:
        if not rest:
            raise ValueError(f"agent spec {spec!r} needs an argument after '{name}:' (e.g. a checkpoint path)")
        return _FACTORIES[name](rest, seed=seed, **kwargs)
    if name in PLANNED_PREFIXES:
        raise ValueError(f"no loader registered for '{name}:' agents; they come from {PLANNED_PREFIXES[name]}")
    raise ValueError(f"unknown agent {spec!r}; known agents: {', '.join(known_specs())}")


def parse_options(text: str, spec: str = "") -> dict:
    """``"a=1,b=0.5,c=true"`` -> ``{"a": 1, "b": 0.5, "c": True}``."""
    out: dict = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad agent option {item!r} in {spec!r}: expected key=value")
        out[key.strip()] = _parse_value(raw.strip())
    return out


def _parse_value(raw: str):
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw
