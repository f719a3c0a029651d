"""Agents by name: ``make_agent("greedy")``, ``make_agent("search:ply_budget=4000")``, ``ppo:PATH``.

Spec grammar::

    NAME                      a built-in agent: random, greedy, heuristic, search, fsearch
                              (and oracle, which cheats: :data:`CHEATING_CLASSES`)
    NAME:key=value,key=value  a built-in agent with keyword arguments (ints, floats, true/false)
    PREFIX:ARGUMENT           an agent from a registered factory, e.g. a checkpoint ``ppo:runs/x.pt``

Prefixes come from the ``scopa.agents`` entry points of the installed packages (this kit's
``pyproject.toml`` declares ``ppo``, ``dqn``, ``dmc``, ``zoo``, ``netsearch``, ``rllib`` and
``openspiel``): each names a factory ``factory(argument, seed=None) -> Agent``, imported the first
time a spec uses its prefix, so nothing is imported or registered ahead of use and another
package adds its own agents by declaring an entry point in the same group.
:func:`register_agent_factory` adds one at run time (tests, notebooks).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from agents.base import Agent
from agents.fast_search import FastSearchAgent
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.oracle import CHEATING_LABEL, OracleAgent
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
"""Names of the built-in fair agents (each decides from its seat's view only)."""

CHEATING_CLASSES: dict[str, type[Agent]] = {"oracle": OracleAgent}
"""Built-in agents that see every card (the ``oracle``, the benchmark's ceiling): built by name
like the others, labelled ``NAME (cheating)`` wherever they are listed or tabled
(:func:`agent_label`), and refused as training opponents, ranked leaderboard rows and opponents
of a human (:func:`check_fair`)."""
CHEATING_NAMES: tuple[str, ...] = tuple(CHEATING_CLASSES)

_FACTORIES: dict[str, AgentFactory] = {}

ENTRY_POINT_GROUP = "scopa.agents"
"""The entry-point group of agent factories (``[project.entry-points."scopa.agents"]``)."""

EXTRA_OF: dict[str, str] = {
    "ppo": "train",
    "dqn": "train",
    "rllib": "rllib",
    "openspiel": "openspiel",
}
"""Prefixes whose factory needs an optional extra, named in the error when it is missing."""


@functools.cache
def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _factory(prefix: str) -> AgentFactory | None:
    """The factory of ``prefix``: one registered at run time, else its entry point (loaded once)."""
    if prefix in _FACTORIES:
        return _FACTORIES[prefix]
    ep = _entry_points().get(prefix)
    if ep is None:
        return None
    try:
        factory = ep.load()
    except ImportError as exc:
        extra = EXTRA_OF.get(prefix, "train")
        raise ValueError(f"'{prefix}:' agents need the '{extra}' extra (pip install -e '.[{extra}]'): {exc}") from None
    _FACTORIES[prefix] = factory
    return factory


def prefixes() -> list[str]:
    """Every agent prefix: the installed entry points and those registered at run time."""
    return sorted(set(_FACTORIES) | set(_entry_points()))


def register_agent_factory(prefix: str, factory: AgentFactory) -> None:
    """Make ``PREFIX:ARGUMENT`` specs build agents with ``factory(ARGUMENT, seed=seed, **kwargs)``.

    The factory raises ``ValueError`` or ``FileNotFoundError`` with a one-line message for a
    missing or wrong checkpoint. Registering a built-in name is an error; registering the
    same prefix again replaces the factory.
    """
    if not prefix or ":" in prefix or prefix in AGENT_CLASSES or prefix in CHEATING_CLASSES:
        raise ValueError(f"cannot register agent prefix {prefix!r}: it is empty, has ':' or is a built-in agent")
    _FACTORIES[prefix] = factory


def known_specs() -> list[str]:
    """Built-in names and registered prefixes, for messages and ``--help``; the cheating ones last, labelled."""
    return list(AGENT_NAMES) + [f"{p}:PATH" for p in prefixes()] + [agent_label(n) for n in CHEATING_NAMES]


def is_cheating(agent) -> bool:
    """Whether a spec or an agent sees more than its seat's view (``cheating`` or ``needs_full_state``)."""
    if isinstance(agent, str):
        name = agent.strip().partition(":")[0]
        if name in CHEATING_CLASSES:
            return True
        cls = AGENT_CLASSES.get(name)
        return cls is not None and bool(getattr(cls, "cheating", False) or getattr(cls, "needs_full_state", False))
    return bool(getattr(agent, "cheating", False) or getattr(agent, "needs_full_state", False))


def agent_label(spec: str) -> str:
    """``spec`` as listings and tables show it: ``"oracle (cheating)"`` for a cheating agent, else ``spec``."""
    return f"{spec} ({CHEATING_LABEL})" if is_cheating(spec) else spec


def check_fair(agent, role: str) -> None:
    """Refuse a cheating agent (a spec or an agent) in ``role`` with one line.

    Raises:
        ValueError: ``agent`` sees every card (:func:`is_cheating`); ``role`` says what it cannot be,
            e.g. ``"a training opponent"``.
    """
    if is_cheating(agent):
        name = agent if isinstance(agent, str) else getattr(agent, "spec", type(agent).__name__)
        raise ValueError(
            f"agent {name!r} sees every card ({CHEATING_LABEL}, the benchmark's ceiling): it cannot be {role}"
        )


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
    cls = AGENT_CLASSES.get(name) or CHEATING_CLASSES.get(name)
    if cls is not None:
        options = dict(kwargs)
        if sep:
            options.update(parse_options(rest, spec))
        try:
            return cls(seed=seed, **options)
        except TypeError as exc:
            raise ValueError(f"bad options for agent {name!r} in {spec!r}: {exc}") from None
    factory = _factory(name)
    if factory is not None:
        if not rest:
            raise ValueError(f"agent spec {spec!r} needs an argument after '{name}:' (e.g. a checkpoint path)")
        return factory(rest, seed=seed, **kwargs)
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
