"""One validated game setup (:class:`scopa_env.engine.setup.GameSetup`) and the layers that share it."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from scopa_env.aec import scopa_v0
from scopa_env.engine.actions import move_enumeration, num_select_actions
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import get_rules
from scopa_env.engine.setup import GameSetup
from scopa_env.fast.batch import BatchedScopa, compiled_rules
from scopa_env.openspiel.setup import parse_params
from train.env import ActionCoder, ScopaGymEnv

GAMES = [("standard", 2), ("standard", 3), ("scopone", 4), ("standard", 6), ("scopa_bazzica", 2), ("cirulla", 2)]


# --- GameSetup.of ---------------------------------------------------------------------------


def test_a_name_and_its_rules_give_the_same_cached_setup():
    by_name = GameSetup.of("scopone", 4)
    assert GameSetup.of(get_rules("scopone"), 4) is by_name, "a name and its Rules: one object"
    assert GameSetup.of("scopone", np.int64(4)) is by_name, "a numpy int is the same player count"
    assert GameSetup.of(None, 2) is GameSetup.of("standard", 2) is GameSetup.of(get_rules(None), 2)
    assert GameSetup.of("standard,target=21", 2) is GameSetup.of("standard,target=21", 2), "options too"
    assert by_name.rules is get_rules("scopone") and by_name.num_players == 4 and type(by_name.num_players) is int
    assert (by_name.action_mode, by_name.episode, by_name.reward) == ("move", "game", "game"), "the defaults"
    other = GameSetup.of("scopone", 4, "select", "hand", "points")
    assert other is not by_name and other != by_name and len({by_name, other, GameSetup.of("scopone", 4)}) == 2


def test_the_setup_is_an_immutable_value():
    setup = GameSetup.of("standard", 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setup.num_players = 3  # type: ignore[misc]
    assert copy.deepcopy(setup) is setup and copy.copy(setup) is setup
    assert pickle.loads(pickle.dumps(setup)) is setup, "unpickled through the cache"
    assert GameSetup(get_rules("standard"), 2) == setup and hash(GameSetup(get_rules("standard"), 2)) == hash(setup)


@pytest.mark.parametrize(
    "args, message",
    [
        (("no_such_preset", 2), "unknown rules preset 'no_such_preset'"),
        (("standard", 8), r"rules 'standard' allow num_players in \(2, 3, 4, 6\), got 8"),
        (("french_52", 2), r"rules 'french_52' allow num_players in \(8,\), got 2"),
        (("standard", "2"), "num_players must be an int, got '2'"),
        (("standard", True), "num_players must be an int, got True"),
        (("standard", 2.0), "num_players must be an int, got 2.0"),
        (("standard", 2, "cards"), r"action_mode must be one of \('move', 'select'\), got 'cards'"),
        (("standard", 2, "move", "match"), r"episode must be one of \('game', 'hand'\), got 'match'"),
        (("standard", 2, "move", "game", "money"), r"reward must be one of \('game', 'points'\), got 'money'"),
        (("standard", 2, ["move"]), r"action_mode must be one of .*got \['move'\]"),
        ((42, 2), "rules must be a preset name or a Rules object, got int"),
    ],
)
def test_a_bad_game_is_a_one_line_value_error_naming_it(args, message):
    with pytest.raises(ValueError, match=message) as info:
        GameSetup.of(*args)
    assert "\n" not in str(info.value), "one line"


def test_the_constructor_checks_too_and_wants_rules():
    with pytest.raises(ValueError, match="allow num_players"):
        GameSetup(get_rules("scopone"), 3)
    with pytest.raises(ValueError, match="episode must be one of"):
        GameSetup(get_rules("standard"), 2, episode="set")
    with pytest.raises(ValueError, match="GameSetup.of resolves a preset name"):
        GameSetup("standard", 2)  # type: ignore[arg-type]


# --- what it derives --------------------------------------------------------------------------


@pytest.mark.parametrize("name, n", GAMES)
def test_the_derived_facts_are_the_engines(name, n):
    rules = get_rules(name)
    setup = GameSetup.of(name, n)
    assert setup.layout == ObservationLayout.for_rules(n, rules)
    assert setup.observation_size == ObservationLayout.for_rules(n, rules).size
    assert setup.moves is move_enumeration(rules)
    assert setup.num_actions == len(move_enumeration(rules))
    assert setup.schedule == rules.schedule(n)
    assert setup.side_of == rules.sides(n) and setup.num_sides == rules.num_sides(n) == max(setup.side_of) + 1
    select = setup.with_modes(action_mode="select")
    assert select is GameSetup.of(rules, n, "select") and select.moves is None
    assert select.num_actions == num_select_actions(rules) and select.layout == setup.layout
    assert setup.with_modes(reward="points") is GameSetup.of(name, n, reward="points")
    assert setup.layout is setup.layout and setup.moves is setup.moves, "computed once"


def test_move_mode_too_wide_raises_when_the_moves_are_read(monkeypatch):
    """Rules over the "move" cap still make a setup (the select mode works); reading its moves, or
    building an env in "move" mode, raises the error that points to "select"."""
    import scopa_env.engine.actions as actions

    monkeypatch.setattr(actions, "MAX_MOVE_ACTIONS", 16_199)
    rules = get_rules("standard").replace(name="standard_over_the_cap")
    setup = GameSetup.of(rules, 2)
    assert setup.layout.size == 376
    with pytest.raises(ValueError, match="'select'"):
        setup.moves  # noqa: B018
    with pytest.raises(ValueError, match="'select'"):
        scopa_v0.raw_env(rules=rules, action_mode="move")
    assert scopa_v0.raw_env(rules=rules, action_mode="select").num_actions == 41


# --- the layers share it ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, n", [("standard", 2), ("standard", 3), ("scopone", 4), ("scopa_bazzica", 2), ("escoba", 2)]
)
@pytest.mark.parametrize("mode", ["move", "select"])
def test_env_batch_and_openspiel_share_one_setup(name, n, mode):
    env = scopa_v0.raw_env(num_players=n, rules=name, action_mode=mode, episode="hand", reward="points")
    batch = BatchedScopa(2, n, name, action_mode=mode, episode="hand", reward="points")
    spiel = parse_params({"rules": name, "players": n, "action_mode": mode, "episode": "hand", "reward": "points"})
    gym_env = ScopaGymEnv(n, name, episode="hand", reward="points", action_mode=mode)
    setup = GameSetup.of(name, n, mode, "hand", "points")
    # parse_params keeps its own cache of parameter sets: after a long run its setup may be an equal
    # one built before GameSetup's cache evicted it, so it is compared by value
    assert env.setup is batch.setup is gym_env.setup is setup and spiel.game_setup == setup
    assert env.layout is batch.layout is gym_env.layout is setup.layout and spiel.layout == setup.layout
    assert env.num_actions == batch.num_actions == spiel.num_actions == gym_env.action_space.n == setup.num_actions
    assert env.observation_space("player_0")["observation"].shape == (setup.observation_size,)
    assert batch.obs.shape == (2, setup.observation_size) and gym_env.observation_space.shape == (
        setup.observation_size,
    )
    assert batch.moves is spiel.moves is setup.moves, "one enumeration (None in select mode)"
    assert (env.rules, env.num_players, batch.rules, batch.num_players) == (setup.rules, n, setup.rules, n)
    assert spiel.schedule == setup.schedule and spiel.side_of == setup.side_of and spiel.num_sides == setup.num_sides


def test_constructors_take_a_setup():
    setup = GameSetup.of("scopone", 4, "move", "hand", "points")
    env = scopa_v0.raw_env(setup=setup)
    assert env.setup is setup and env.num_players == 4 and env.rules.name == "scopone"
    assert (env.action_mode, env.episode, env.reward_mode) == ("move", "hand", "points")
    batch = BatchedScopa(3, setup=setup)
    assert batch.setup is setup and (batch.action_mode, batch.num_players) == ("move", 4)
    assert ScopaGymEnv(setup=setup, opponents="random").setup is setup
    assert scopa_v0.raw_env(num_players=4, rules="scopone", setup=setup).setup is setup, "agreeing arguments"
    with pytest.raises(ValueError, match="setup= fixes num_players=4, but num_players=3 was also given"):
        scopa_v0.raw_env(num_players=3, setup=setup)
    with pytest.raises(ValueError, match="setup= fixes num_players=4, but num_players=3 was also given"):
        BatchedScopa(2, 3, setup=setup)
    with pytest.raises(ValueError, match="setup= fixes rules=.*, but rules='standard' was also given"):
        ScopaGymEnv(rules="standard", setup=setup)
    with pytest.raises(ValueError, match="setup must be a GameSetup"):
        scopa_v0.raw_env(setup="scopone")  # type: ignore[arg-type]
    assert compiled_rules(setup)[0] is compiled_rules(setup.rules, 4)[0], "one cache for both calls"
    coder = ActionCoder(setup)
    assert coder.moves is setup.moves and coder.num_actions == setup.num_actions
    assert ActionCoder(setup, "select").num_actions == 41 == ActionCoder(get_rules("scopone"), "select").num_actions


def test_the_env_checks_through_the_setup():
    """The env's own errors are the setup's (one message per bad value, whatever the layer)."""
    for make in (
        lambda **kw: scopa_v0.raw_env(**kw),
        lambda **kw: BatchedScopa(2, **kw),
        lambda **kw: ScopaGymEnv(**kw),
    ):
        with pytest.raises(ValueError, match=r"rules 'standard' allow num_players in \(2, 3, 4, 6\), got 8"):
            make(num_players=8)
        with pytest.raises(ValueError, match="unknown rules preset 'nope'"):
            make(rules="nope")
        with pytest.raises(ValueError, match="episode must be one of"):
            make(episode="match")
