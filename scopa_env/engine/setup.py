"""One validated game setup: the rules, the player count and the modes, and what they fix.

Every environment of the kit (the AEC env :mod:`scopa_env.aec.scopa_v0`, the compiled core's
:class:`~scopa_env.fast.batch.BatchedScopa`, the OpenSpiel game :mod:`scopa_env.openspiel`, the
training envs and agents) plays one game given by ``(rules, num_players, action_mode, episode,
reward)``. :meth:`GameSetup.of` is the one place that resolves a preset name and checks those
values (a one-line ``ValueError`` naming the bad one); the :class:`GameSetup` it returns is
immutable, hashable and cached (the same arguments give the same object), and derives once what
each layer used to derive again: the deal schedule, the sides, the observation layout, the
"move" enumeration and the action count::

    setup = GameSetup.of("scopone", 4)
    setup.layout.size, setup.num_actions, setup.side_of   # (464, 16200, (0, 1, 0, 1))
    setup.with_modes(action_mode="select").num_actions    # 41

The derived values are computed on first use: ``moves`` (:func:`~scopa_env.engine.actions.move_enumeration`)
raises the ``ValueError`` that points to "select" mode for rules too wide for "move" mode only when
it is read. Plain Python of the engine layer: nothing here imports the layers above.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass

from scopa_env.engine.actions import MoveEnumeration, confirm_action, move_enumeration, num_select_actions
from scopa_env.engine.modes import ACTION_MODES, EPISODES, REWARDS
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import Rules, get_rules

_MODES = (("action_mode", ACTION_MODES), ("episode", EPISODES), ("reward", REWARDS))
"""Each mode field and its values, in the order they are checked."""


@dataclass(frozen=True)
class GameSetup:
    """The rules, the player count and the modes of one game, checked; see the module docstring.

    Build it with :meth:`GameSetup.of` (which also takes a preset name and caches); the constructor
    takes a :class:`~scopa_env.engine.rules.Rules` and checks the rest the same way.
    """

    rules: Rules
    num_players: int
    action_mode: str = "move"
    """``"move"`` or ``"select"`` (:data:`~scopa_env.engine.modes.ACTION_MODES`)."""
    episode: str = "game"
    """``"game"`` or ``"hand"`` (:data:`~scopa_env.engine.modes.EPISODES`)."""
    reward: str = "game"
    """``"game"`` or ``"points"`` (:data:`~scopa_env.engine.modes.REWARDS`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.rules, Rules):
            raise ValueError(
                f"GameSetup needs a Rules object, got {type(self.rules).__name__} (GameSetup.of resolves a preset name)"
            )
        n = self.num_players
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise ValueError(f"num_players must be an int, got {n!r}")
        object.__setattr__(self, "num_players", int(n))
        self.rules.check_players(self.num_players)
        for name, allowed in _MODES:
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")

    @classmethod
    def of(
        cls,
        rules: Rules | str | None,
        num_players: int,
        action_mode: str = "move",
        episode: str = "game",
        reward: str = "game",
    ) -> GameSetup:
        """The checked setup of ``rules`` (a :class:`~scopa_env.engine.rules.Rules`, a preset name as
        :func:`~scopa_env.engine.rules.get_rules` reads it, or ``None``: the standard game) played by
        ``num_players`` in these modes; one object per distinct game (cached).

        A one-line ``ValueError`` names an unknown preset, a player count the rules do not deal for
        (:meth:`~scopa_env.engine.rules.Rules.check_players`) or a mode outside its values.
        """
        rules = get_rules(rules)
        if isinstance(num_players, bool) or not isinstance(num_players, numbers.Integral):
            raise ValueError(f"num_players must be an int, got {num_players!r}")
        for name, value in (("action_mode", action_mode), ("episode", episode), ("reward", reward)):
            if not isinstance(value, str):  # unhashable values must not reach the cache
                raise ValueError(f"{name} must be one of {dict(_MODES)[name]}, got {value!r}")
        return _cached(rules, int(num_players), action_mode, episode, reward)

    def with_modes(
        self, action_mode: str | None = None, episode: str | None = None, reward: str | None = None
    ) -> GameSetup:
        """The setup of the same game in other modes (``None``: keep this one's)."""
        return GameSetup.of(
            self.rules,
            self.num_players,
            self.action_mode if action_mode is None else action_mode,
            self.episode if episode is None else episode,
            self.reward if reward is None else reward,
        )

    # --- derived once --------------------------------------------------------------------

    @functools.cached_property
    def schedule(self) -> tuple[int, ...]:
        """Cards each player gets in each deal of a hand (:meth:`Rules.schedule`)."""
        return self.rules.schedule(self.num_players)

    @functools.cached_property
    def side_of(self) -> tuple[int, ...]:
        """Side of each seat (:meth:`Rules.sides`)."""
        return self.rules.sides(self.num_players)

    @functools.cached_property
    def num_sides(self) -> int:
        """Number of sides: 2 in partnerships, else one per seat."""
        return self.rules.num_sides(self.num_players)

    @functools.cached_property
    def layout(self) -> ObservationLayout:
        """The observation layout (:meth:`ObservationLayout.for_rules`)."""
        return ObservationLayout.for_rules(self.num_players, self.rules)

    @property
    def observation_size(self) -> int:
        """Length of the observation vector."""
        return self.layout.size

    @functools.cached_property
    def moves(self) -> MoveEnumeration | None:
        """The "move" enumeration of the rules in "move" mode (its ``ValueError`` for rules too wide
        for "move" mode raised here), ``None`` in "select" mode."""
        return move_enumeration(self.rules) if self.action_mode == "move" else None

    @functools.cached_property
    def num_actions(self) -> int:
        """Size of the action space: the moves in "move" mode, the card ids and CONFIRM in "select" mode."""
        moves = self.moves
        return len(moves) if moves is not None else num_select_actions(self.rules)

    @property
    def confirm(self) -> int:
        """ "select" mode's CONFIRM action (40; 52 for the 52-card deck)."""
        return confirm_action(self.rules)

    # --- immutable value -----------------------------------------------------------------

    def __copy__(self) -> GameSetup:
        return self

    def __deepcopy__(self, memo) -> GameSetup:
        return self

    def __reduce__(self):
        # rebuilt through the cache; the derived values are not pickled
        return (_cached, (self.rules, self.num_players, self.action_mode, self.episode, self.reward))


@functools.lru_cache(maxsize=128)
def _cached(rules: Rules, num_players: int, action_mode: str, episode: str, reward: str) -> GameSetup:
    return GameSetup(rules, num_players, action_mode, episode, reward)


def resolve_setup(setup: GameSetup | None, defaults: dict[str, object], **given: object) -> GameSetup:
    """The :class:`GameSetup` of a constructor that takes the game's arguments (``given``: ``rules``,
    ``num_players`` and modes, whose defaults are ``defaults``) or a ready ``setup``.

    Without ``setup`` it is ``GameSetup.of(**given)``; with one, each given argument must keep its
    default or agree with the setup (else a one-line ``ValueError`` naming it).
    """
    if setup is None:
        return GameSetup.of(**given)  # type: ignore[arg-type]
    if not isinstance(setup, GameSetup):
        raise ValueError(f"setup must be a GameSetup, got {type(setup).__name__}")
    for name, value in given.items():
        have = getattr(setup, name)
        same = value in (have, have.name) if name == "rules" else value == have
        if not same and value != defaults[name]:
            raise ValueError(f"setup= fixes {name}={have!r}, but {name}={value!r} was also given")
    return setup
