"""House rules as plug-ins: a capture rule or a scoring extra registered by name, from outside the kit.

A house rule package adds a rule with one call at import time, and a :class:`~scopa_env.engine.rules.Rules`
names it in :attr:`~scopa_env.engine.rules.Rules.house_rules`::

    from scopa_env.engine import house_rules
    from scopa_env.engine.cards import RANK_MASK, RANK_OF
    from scopa_env.engine.rules import get_rules

    def king_takes_a_picture(card, table, rules):
        # a King may also take any single picture card (8, 9 or 10)
        if RANK_OF[card] == 10:
            pictures = table & (RANK_MASK[8] | RANK_MASK[9] | RANK_MASK[10])
            return [1 << c for c in range(40) if pictures >> c & 1]
        return ()

    house_rules.register_capture_rule("king_takes_a_picture", king_takes_a_picture)
    rules = get_rules("standard,house_rules=king_takes_a_picture")

* :func:`register_capture_rule`: ``extra_captures(card, table_mask, rules)`` gives the table-card
  masks the played card may *also* capture (on top of the standard ones, before
  ``max_capture_cards`` and ``fewest_cards`` filter them); it is not called on an empty table.
  The engine's :func:`~scopa_env.engine.captures.legal_pairs` then leaves its fast path
  (:attr:`Rules.plain_captures` is False), and "move" mode enumerates what the rule can produce:
  ``possible(card, rules)`` if given, else ``extra_captures`` on the fullest table (every other
  card of the deck), which covers every rule whose captures are sets of table cards that stay
  available when more cards lie on the table.
* :func:`register_scoring_extra`: ``points(pile_mask, rules)`` gives the hand points a side earns
  from its captured pile, reported under the rule's name in the hand's score dict and added to
  its ``total`` (:func:`~scopa_env.engine.scoring.score_masks`).

``backends`` declares which backends besides the Python engine and the AEC env play the rule,
from :data:`PLUGIN_BACKENDS`; every other backend refuses rules that name it, by name
(:func:`check_backend`, called by :meth:`Rules.check_backend
<scopa_env.engine.rules.Rules.check_backend>` and :func:`scopa_env.fast.batch.check_supported`).
A declaration is taken as given: the compiled core and the batched search run no plug-in code, so
declare ``fast`` or ``search`` only for a rule they need not see or that a compiled twin of your own plays.
The registry is per process: a plug-in package must be imported in every process that builds its
rules (workers included). Names are unique; :func:`unregister` is for tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

CAPTURE = "capture"
"""Kind of a capture rule (:func:`register_capture_rule`)."""
SCORING = "scoring"
"""Kind of a scoring extra (:func:`register_scoring_extra`)."""
PLUGIN_BACKENDS = ("fast", "openspiel", "features", "search")
"""Backends a plug-in may declare (see :class:`~scopa_env.engine.rules.Support`); the engine and the
AEC env play every plug-in. ``search`` runs on the compiled core, so it needs ``fast``."""
BACKEND_REFUSALS = {
    "fast": "the compiled core does not play",
    "french": "the compiled core does not play",
    "search": "the batched compiled search does not value",
    "openspiel": "the OpenSpiel game does not play",
    "features": "the learners' move features do not describe",
}
"""How each backend (:data:`~scopa_env.engine.rules.BACKENDS` but the engine and the env) refuses a house rule."""
NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
"""A house rule's name: lowercase, an identifier, at most 40 characters (it is a score key and an option value)."""
RESERVED_NAMES = frozenset(
    {
        # the hand score's keys (scoring.score_masks, scopa_env.fast.SCORE_FIELDS) and the game's events
        "cards",
        "coins",
        "settebello",
        "primiera",
        "scope",
        "total",
        "primiera_value",
        "seven_majority",
        "double_game",
        "re_bello",
        "seven_of_cups",
        "palle_del_cane",
        "napola",
        "scaletta_bassa",
        "scaletta_alta",
        "piccola",
        "grande",
        "piva",
        "napoleone",
        "scala",
        "all_coins",
        "coins_reset",
        "bazzica",
        "bazzicotto",
        "bonus_3",
        "bonus_10",
        "standard",
        "none",
    }
)
"""Names a house rule may not take: the score keys and events the engine reports (a scoring extra's
points appear under its name), ``none`` (the empty list in option strings) and ``standard``."""


@dataclass(frozen=True)
class HouseRule:
    """One registered plug-in (see the module docstring)."""

    name: str
    kind: str
    """:data:`CAPTURE` or :data:`SCORING`."""
    function: Callable
    """``extra_captures(card, table_mask, rules)`` or ``points(pile_mask, rules)``."""
    backends: frozenset[str]
    """Backends of :data:`PLUGIN_BACKENDS` that declare support."""
    possible: Callable | None = None
    """Capture rules: ``possible(card, rules)``, every mask the rule may give ``card`` in some position."""
    description: str = ""
    """One line for listings (``scopa presets``)."""

    def extra_captures(self, card: int, table: int, rules) -> list[int]:
        """The masks the rule adds for ``card`` on ``table``, checked: non-empty sets of table cards."""
        out = []
        for mask in self.function(card, table, rules):
            if isinstance(mask, bool) or not hasattr(mask, "__index__"):
                raise ValueError(f"house rule {self.name!r} gave {mask!r} for card {card}: not a card bitmask")
            mask = mask.__index__()
            if mask <= 0 or mask & ~table:
                raise ValueError(
                    f"house rule {self.name!r} gave the mask {mask:#x} for card {card} on the table {table:#x}: "
                    "a capture is a non-empty set of table cards"
                )
            out.append(mask)
        return out

    def possible_captures(self, card: int, rules) -> list[int]:
        """Every mask the rule may give ``card`` ("move" mode's enumeration): ``possible`` if given,
        else the rule's captures on the fullest table (every other card of the deck)."""
        if self.possible is None:
            return self.extra_captures(card, rules.deck_mask & ~(1 << card), rules)
        out = []
        for mask in self.possible(card, rules):
            mask = int(mask)
            if mask <= 0 or mask >> card & 1 or mask & ~rules.deck_mask:
                raise ValueError(
                    f"house rule {self.name!r}: possible() gave the mask {mask:#x} for card {card}: "
                    "a capture is a non-empty set of other cards of the deck"
                )
            out.append(mask)
        return out

    def points(self, pile: int, rules) -> int:
        """The scoring extra's points for ``pile``, checked to be an int."""
        value = self.function(pile, rules)
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise ValueError(f"house rule {self.name!r} scored {value!r}: points must be an int")
        return value.__index__()

    def plays_on(self, backend: str) -> bool:
        """Whether ``backend`` plays the rule: the engine and the env always, the rest as declared
        (``french``, the compiled core's 52-card deck, with ``fast``)."""
        if backend in ("engine", "env"):
            return True
        return ("fast" if backend == "french" else backend) in self.backends


_REGISTRY: dict[str, HouseRule] = {}


def register_capture_rule(
    name: str,
    extra_captures: Callable[[int, int, object], Iterable[int]],
    *,
    backends: Iterable[str] = (),
    possible: Callable[[int, object], Iterable[int]] | None = None,
    description: str = "",
) -> HouseRule:
    """Register a capture rule: ``extra_captures(card, table_mask, rules)`` gives the table-card masks
    ``card`` may also capture. ``backends``: of :data:`PLUGIN_BACKENDS`, those that play it (none by
    default: the Python engine and the AEC env only). ``possible(card, rules)``: every mask it may give
    ``card`` in some position, for "move" mode (default: its captures on the fullest table)."""
    return _register(HouseRule(name, CAPTURE, extra_captures, _backends(name, backends), possible, description))


def register_scoring_extra(
    name: str,
    points: Callable[[int, object], int],
    *,
    backends: Iterable[str] = (),
    description: str = "",
) -> HouseRule:
    """Register a scoring extra: ``points(pile_mask, rules)`` gives the hand points a side earns from its
    captured pile, reported under ``name``. ``backends`` as in :func:`register_capture_rule`."""
    return _register(HouseRule(name, SCORING, points, _backends(name, backends), None, description))


def unregister(name: str) -> None:
    """Remove a registered house rule, for tests: rules objects naming it no longer play, and no new one can
    name it. What the engine derived from such rules objects and cached (their "move" ids, their
    :class:`~scopa_env.engine.setup.GameSetup`) is not forgotten, so a test that registers a different rule
    gives it a name of its own."""
    get(name)
    del _REGISTRY[name]


def get(name: str) -> HouseRule:
    """The registered house rule ``name``; an unknown name raises a one-line ``ValueError`` listing them."""
    rule = _REGISTRY.get(name) if isinstance(name, str) else None
    if rule is None:
        raise ValueError(f"unknown house rule {name!r}; registered: {', '.join(sorted(_REGISTRY)) or 'none'}")
    return rule


def registered() -> tuple[str, ...]:
    """Names of the registered house rules, sorted."""
    return tuple(sorted(_REGISTRY))


def capture_rules(names: Iterable[str]) -> tuple[HouseRule, ...]:
    """The capture rules among ``names`` (registered names, e.g. :attr:`Rules.house_rules`), in order."""
    return tuple(r for r in map(get, names) if r.kind == CAPTURE)


def scoring_extras(names: Iterable[str]) -> tuple[HouseRule, ...]:
    """The scoring extras among ``names``, in order."""
    return tuple(r for r in map(get, names) if r.kind == SCORING)


def refusal(names: Iterable[str], backend: str, preset: str = "") -> str | None:
    """The one-line refusal of the first of ``names`` that ``backend`` does not play, or ``None``."""
    for name in names:
        if not get(name).plays_on(backend):
            of = f" of rules preset {preset!r}" if preset else ""
            declare = "search" if backend == "search" else "fast" if backend == "french" else backend
            return (
                f"{BACKEND_REFUSALS.get(backend, backend + ' does not play')} house rule {name!r}{of} "
                f"(registered without backends=({declare!r},) in scopa_env.engine.house_rules); use the Python engine"
            )
    return None


def check_backend(names: Iterable[str], backend: str, preset: str = "") -> None:
    """Raise ``NotImplementedError`` (:func:`refusal`) unless ``backend`` plays every house rule in ``names``."""
    message = refusal(names, backend, preset)
    if message is not None:
        raise NotImplementedError(message)


def describe(names: Iterable[str]) -> str:
    """``"name (capture rule: description), ..."`` for listings; ``""`` for none."""
    parts = []
    for rule in map(get, names):
        what = "capture rule" if rule.kind == CAPTURE else "scoring extra"
        parts.append(f"{rule.name} ({what}{': ' + rule.description if rule.description else ''})")
    return ", ".join(parts)


def _backends(name: str, backends: Iterable[str]) -> frozenset[str]:
    if isinstance(backends, str):
        backends = (backends,)
    out = frozenset(backends)
    unknown = sorted(out - set(PLUGIN_BACKENDS))
    if unknown:
        raise ValueError(f"house rule {name!r}: unknown backend(s) {unknown}; known: {', '.join(PLUGIN_BACKENDS)}")
    if "search" in out and "fast" not in out:
        raise ValueError(f"house rule {name!r}: backend 'search' runs on the compiled core, so it needs 'fast' too")
    return out


def _same(a: Callable | None, b: Callable | None) -> bool:
    """The same function, or its new definition after a reload of its module (same module and name)."""
    if a is b:
        return True
    key = ("__module__", "__qualname__")
    return (
        a is not None
        and b is not None
        and all(getattr(a, k, None) is not None and getattr(a, k, None) == getattr(b, k, None) for k in key)
        and "<locals>" not in a.__qualname__
        and "<lambda>" not in a.__qualname__
    )


def _register(rule: HouseRule) -> HouseRule:
    name = rule.name
    if not isinstance(name, str) or not NAME.fullmatch(name) or name in RESERVED_NAMES:
        raise ValueError(
            f"bad house rule name {name!r}: use a lowercase identifier of at most 40 characters "
            f"([a-z][a-z0-9_]*), not a score key ({', '.join(sorted(RESERVED_NAMES))})"
        )
    if not callable(rule.function) or (rule.possible is not None and not callable(rule.possible)):
        raise ValueError(f"house rule {name!r}: the rule's function must be callable, got {rule.function!r}")
    old = _REGISTRY.get(name)
    if old is not None:
        if old.kind != rule.kind or not _same(old.function, rule.function) or not _same(old.possible, rule.possible):
            raise ValueError(
                f"house rule {name!r} is already registered ({old.kind}, {getattr(old.function, '__qualname__', '?')}); "
                "choose another name"
            )
        if old == rule:
            return old
    _REGISTRY[name] = rule
    return rule


__all__ = [
    "CAPTURE",
    "PLUGIN_BACKENDS",
    "SCORING",
    "HouseRule",
    "capture_rules",
    "check_backend",
    "describe",
    "get",
    "refusal",
    "register_capture_rule",
    "register_scoring_extra",
    "registered",
    "scoring_extras",
    "unregister",
]
