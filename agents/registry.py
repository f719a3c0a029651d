"""Agents by name: ``make_agent("greedy")``, ``make_agent("search:ply_budget=4000")``, ``ppo:PATH``.

Spec grammar::

    NAME                      a built-in agent: random, greedy, heuristic, search, fsearch
                              (and oracle, which cheats: :data:`CHEATING_CLASSES`)
    NAME:key=value,key=value  a built-in agent with keyword arguments (ints, floats, true/false)
    PREFIX:ARGUMENT           an agent from a registered factory, e.g. a checkpoint ``ppo:runs/x.pt``
    module:Class              a user's subclass of :class:`agents.base.Agent`, importable from the
                              current folder or an installed package (:func:`user_class`)

Prefixes come from the ``scopa.agents`` entry points of the installed packages (this kit's
``pyproject.toml`` declares ``ppo``, ``dqn``, ``dmc``, ``zoo``, ``netsearch``, ``rllib`` and
``openspiel``): each names a factory ``factory(argument, seed=None) -> Agent``, imported the first
time a spec uses its prefix, so nothing is imported or registered ahead of use and another
package adds its own agents by declaring an entry point in the same group.
:func:`register_agent_factory` adds one at run time (tests, notebooks).

A ``module:Class`` spec whose module is no agent prefix is a user's own class: it is imported (the
current folder is searched, as ``python -m`` would), checked against the agent interface once, before
any game (a subclass of :class:`~agents.base.Agent`, nothing abstract left, ``act(self, view)``, a
constructor that takes ``seed``), and played as ``Class(seed=seed)``. Every command that names an
agent (``scopa eval``, ``tournament``, ``leaderboard``, ``play --opponent``, ``web --opponent``) builds
it here.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import os
import re
import sys
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


ARGUMENT_OF: dict[str, str] = {"zoo": "NAME", "openspiel": "BOT", "netsearch": "CHECKPOINT"}
"""What follows the prefix in the specs of :func:`known_specs` where it is not a ``PATH``."""


def known_specs() -> list[str]:
    """Built-in names and registered prefixes, for messages and ``--help``; the cheating ones last, labelled."""
    return (
        list(AGENT_NAMES)
        + [f"{p}:{ARGUMENT_OF.get(p, 'PATH')}" for p in prefixes()]
        + [agent_label(n) for n in CHEATING_NAMES]
    )


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
        valid = _options_of(cls)
        unknown = [] if valid is None else sorted(set(options) - set(kwargs) - set(valid))
        if unknown:
            takes = f"{name} takes {', '.join(valid)}" if valid else f"{name} takes no options"
            raise ValueError(
                f"bad options for agent {name!r} in {spec!r}: no option {', '.join(map(repr, unknown))}; {takes}"
            )
        try:
            return cls(seed=seed, **options)
        except TypeError as exc:
            raise ValueError(f"bad options for agent {name!r} in {spec!r}: {exc}") from None
    if is_user_class(spec):
        return user_class(spec.strip())(seed=seed, **kwargs)
    factory = _factory(name)
    if factory is not None:
        if not rest:
            raise ValueError(f"agent spec {spec!r} needs an argument after '{name}:' (e.g. a checkpoint path)")
        return factory(rest, seed=seed, **kwargs)
    raise ValueError(f"unknown agent {spec!r}; known agents: {', '.join(known_specs())}, or module:Class")


def _options_of(cls: type) -> list[str] | None:
    """The keyword options ``cls(seed=..., **options)`` takes; None where it cannot be said (``**kwargs``)."""
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.name != "seed" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


# --- a user's own class: module:Class ------------------------------------------------------------

USER_CLASS = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
"""The form of a ``module:Class`` spec."""

KIT_PACKAGES = ("scopa_env", "agents", "train", "scopa_app")
"""The kit's top-level packages: their agents are played by their specs, never as ``module:Class``."""

AGENT_INTERFACE = "act(self, view) -> Move (agents.base.Agent)"


def is_user_class(spec) -> bool:
    """Whether ``spec`` is a ``module:Class`` of a user's: that form, and its module no agent name or prefix."""
    if not isinstance(spec, str) or not USER_CLASS.match(spec.strip()):
        return False
    module = spec.strip().partition(":")[0]
    return module not in AGENT_CLASSES and module not in CHEATING_CLASSES and module not in prefixes()


def search_working_folder() -> None:
    """Let ``import`` find the modules of the current folder (appended, as the last place searched)."""
    folder = os.getcwd()
    if folder not in sys.path:
        sys.path.append(folder)


@functools.cache
def user_class(spec: str) -> type[Agent]:
    """The class a ``module:Class`` spec names, checked against the agent interface (once per spec).

    Raises:
        ValueError: one line: the module cannot be imported or fails to, it has no such name, the
            name is not a subclass of :class:`~agents.base.Agent`, something abstract is left, ``act``
            does not take one view, or ``Class(seed=0)`` fails.
    """
    module, _, name = spec.partition(":")
    if module.split(".")[0] in KIT_PACKAGES:
        top = module.split(".")[0]
        own = [f for f in (f"{top}.py", top) if os.path.exists(f)]
        mine = f" (your ./{own[0]} cannot be imported under the kit's package name: rename it)" if own else ""
        raise ValueError(f"{spec}: the kit's own agents are played by their specs: {', '.join(known_specs())}{mine}")
    search_working_folder()
    try:  # loaded as an entry point's object reference is (the module alone: its name is checked below)
        loaded = EntryPoint(name="user", value=module, group=ENTRY_POINT_GROUP).load()
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module == exc.name or module.startswith(exc.name + ".")):
            raise ValueError(f"{spec}: importing {module} failed: ModuleNotFoundError: {exc}") from None
        raise ValueError(
            f"unknown agent {spec!r}: no agent prefix {module!r} and no importable module ({exc}); "
            f"known agents: {', '.join(known_specs())}, or module:Class"
        ) from None
    except Exception as exc:  # the user's module failed to run: theirs to fix, said in one line
        raise ValueError(f"{spec}: importing {module} failed: {type(exc).__name__}: {exc}") from None
    if not hasattr(loaded, name):
        classes = sorted(k for k, v in vars(loaded).items() if isinstance(v, type) and issubclass(v, Agent))
        close = difflib.get_close_matches(name, classes, n=1)
        hint = f"; did you mean {module}:{close[0]}?" if close else ""
        if not close and classes:
            hint = f"; its agent classes: {', '.join(classes)}"
        raise ValueError(f"{spec}: the module {module} ({getattr(loaded, '__file__', '?')}) has no {name!r}{hint}")
    cls = getattr(loaded, name)
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise ValueError(f"{spec} is a {type(cls).__name__}, not a subclass of agents.base.Agent (the agent interface)")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise ValueError(f"{spec} does not implement the agent interface: it lacks {missing}")
    try:
        agent = cls(seed=0)
    except Exception as exc:  # the user's constructor: any failure is theirs, said in one line
        raise ValueError(f"{spec}(seed=0) failed: {type(exc).__name__}: {exc}") from None
    try:
        signature = inspect.signature(agent.act)
    except (TypeError, ValueError):  # no signature to read (a builtin): it plays as it is
        return cls
    try:
        signature.bind(None)
    except TypeError:
        raise ValueError(
            f"{spec}.act{signature} does not take one view: the agent interface is {AGENT_INTERFACE}"
        ) from None
    return cls


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
