"""The AEC env's fast paths (scopa_env/aec/scopa_v0.py, observation.observation_array) give what
a straightforward recomputation from the game gives: every observation, mask, reward and
termination, over many seeded random games in both action modes.

Speed itself is measured by ``scopa bench`` (``scopa_env/bench/env.py``), never asserted here.
"""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env import scopa_v0
from scopa_env.engine.actions import confirm_action, move_enumeration, select_options
from scopa_env.engine.observation import ObservationLayout, write_observation
from scopa_env.fast.observers import observation_array, observers_for

# (preset, players, action modes, episode, reward, episodes)
CASES = [
    ("standard", 2, ("move", "select"), "hand", "game", 12),
    ("standard", 3, ("move", "select"), "hand", "points", 6),
    ("standard", 4, ("move", "select"), "game", "points", 1),
    ("standard", 6, ("select",), "hand", "game", 3),
    ("asso_pigliatutto", 2, ("move", "select"), "hand", "points", 4),
    ("chkobba", 2, ("move", "select"), "hand", "game", 4),
    ("scopa_bazzica", 2, ("move", "select"), "hand", "points", 4),
    ("sbarazzina", 4, ("select",), "hand", "points", 3),
    ("piva", 2, ("select",), "game", "points", 1),
    ("cirulla", 3, ("move", "select"), "hand", "points", 4),
    ("chiamarsi_fuori", 2, ("move", "select"), "game", "game", 2),
    ("french_52", 8, ("select",), "hand", "points", 2),
]


def _reference_ids(env) -> list[int]:
    """The legal ids of the player to move, from the game's legal pairs alone."""
    game = env.game
    pairs = game.action_pairs()
    if env.action_mode == "move":
        return sorted(move_enumeration(env.rules).ids(pairs, game.table))
    if env._pending_card is None:
        return sorted({c for c, _ in pairs})
    outcomes = [m for c, m in pairs if c == env._pending_card]
    nxt, can_confirm, _ = select_options(outcomes, env._selected)
    return sorted(nxt + [confirm_action(env.rules)] if can_confirm else nxt)


def _reference_observation(env, agent: str) -> tuple[np.ndarray, np.ndarray]:
    """``agent``'s observation and mask recomputed with :func:`write_observation`."""
    game = env.game
    seat = env.possible_agents.index(agent)
    layout = ObservationLayout.for_rules(env.num_players, env.rules)
    mine = seat == game.current
    obs = write_observation(
        game,
        seat,
        layout,
        np.empty(layout.size, dtype=np.float32),
        select_card=env._pending_card if mine else None,
        select_captured=env._selected if mine else 0,
    )
    mask = np.zeros(env.num_actions, dtype=np.int8)
    if mine and not env.terminations[agent]:
        mask[_reference_ids(env)] = 1
    return obs, mask


def _reference_rewards(env, hand_result) -> dict[str, float]:
    """This step's rewards from the hand result (None: a step that ended no hand)."""
    if hand_result is None:
        return dict.fromkeys(env.agents, 0.0)
    game = env.game
    totals = [row["total"] for row in hand_result.hand_score]
    if env.rules.declarations:
        totals = [t + sum(d.values()) for t, d in zip(totals, hand_result.declared)]
    over = env.episode == "hand" or game.winner is not None
    out = {}
    for i, agent in enumerate(env.agents):
        side = game.side_of[i]
        if env.reward_mode == "points":
            others = [t for s, t in enumerate(totals) if s != side]
            out[agent] = float(totals[side] - sum(others) / len(others))
        elif not over:
            out[agent] = 0.0
        elif env.episode == "game":
            out[agent] = 1.0 if game.winner == side else -1.0
        else:
            best = max(totals)
            out[agent] = 0.0 if totals.count(best) > 1 else (1.0 if totals[side] == best else -1.0)
    return out


def _check_array(a: np.ndarray, dtype, size: int, where: str) -> None:
    assert a.dtype == dtype and a.shape == (size,), where
    assert a.flags.owndata and a.flags.writeable and a.flags.c_contiguous, f"{where}: not a plain new array"


@pytest.mark.parametrize(
    ("preset", "n", "mode", "episode", "reward", "episodes"),
    [(p, n, m, e, r, k) for p, n, modes, e, r, k in CASES for m in modes],
)
def test_env_equals_the_straightforward_recomputation(preset, n, mode, episode, reward, episodes):
    """Every agent's observation and mask at every step equal :func:`write_observation` and
    the legal ids recomputed from the game; rewards, cumulative rewards and terminations
    equal those recomputed from the hand result; every returned array is a new array that
    later steps leave as it was."""
    env = scopa_v0.raw_env(num_players=n, rules=preset, action_mode=mode, episode=episode, reward=reward)
    size = ObservationLayout.for_rules(n, env.rules).size
    rng = np.random.default_rng(7)
    steps = 0
    for ep in range(episodes):
        env.reset(seed=100 * n + ep)
        kept: list[tuple[np.ndarray, bytes]] = []
        cumulative = dict.fromkeys(env.agents, 0.0)
        for agent in env.agent_iter(20_000):
            where = f"{preset}, {n} players, {mode}, episode {ep}, step {steps}"
            for other in env.agents:  # the player to move and the others
                got = env.observe(other)
                obs, mask = _reference_observation(env, other)
                assert got["observation"].tobytes() == obs.tobytes(), f"{where}: {other}'s observation differs"
                assert np.array_equal(got["action_mask"], mask), f"{where}: {other}'s mask differs"
                _check_array(got["observation"], np.float32, size, where)
                _check_array(got["action_mask"], np.int8, env.num_actions, where)
                kept.append((got["observation"], got["observation"].tobytes()))
                kept.append((got["action_mask"], got["action_mask"].tobytes()))
            obs, cum, term, trunc, _ = env.last()
            assert cum == cumulative[agent], f"{where}: cumulative reward"
            if term or trunc:
                env.step(None)
                continue
            ids = np.flatnonzero(obs["action_mask"])
            assert env._legal_action_ids() and sorted(env._legal_action_ids()) == ids.tolist(), where
            env.step(int(ids[rng.integers(len(ids))]))
            steps += 1
            # A "select" step that leaves a choice pending played nothing.
            expected = _reference_rewards(env, env.game.hand_result if env._pending_card is None else None)
            assert env.rewards == expected, f"{where}: rewards {env.rewards} != {expected}"
            cumulative[agent] = 0.0
            for a in env.agents:
                cumulative[a] += expected[a]
            assert env._cumulative_rewards == cumulative, f"{where}: cumulative rewards"
            over = env.game.winner is not None or (episode == "hand" and env.game.hand_result is not None)
            assert all(env.terminations[a] == over for a in env.agents), f"{where}: terminations"
        assert not env.agents, f"{preset}: the episode ended"
        for array, data in kept:
            assert array.tobytes() == data, f"{preset}, episode {ep}: a returned array changed later"
    assert steps > 0


def _observers(layout: ObservationLayout, path: str) -> tuple:
    """The layout's observers on ``path``: "compiled" (the ahead-of-time core.observe, which
    the install builds) or "python" (the generated straight-line code)."""
    from scopa_env.fast.observers import _compile_observer

    observers = tuple(
        _compile_observer(layout, seat, ahead_of_time=path == "compiled") for seat in range(layout.num_players)
    )
    assert path != "compiled" or observers[0].__name__ == "observe_compiled", (
        "the ahead-of-time observers are not built or stale (pip install -e . builds them)"
    )
    assert observers[0].__name__ == f"observe_{path}"
    return observers


PATHS = ("compiled", "python")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("preset", "n"), [(p, n) for p, n, *_ in CASES])
def test_observation_array_equals_write_observation(preset, n, path):
    """The env's fast observation, on either path, equals :func:`write_observation` for every
    seat, with and without a pending "select" choice, over whole random hands, with game points
    of either sign."""
    from scopa_env.engine.game import Game

    env = scopa_v0.raw_env(num_players=n, rules=preset)
    layout = ObservationLayout.for_rules(n, env.rules)
    observers = _observers(layout, path)
    rng = np.random.default_rng(n)
    for seed in range(3):
        game = Game(n, env.rules, seed=seed, auto_next_hand=False)
        if seed:  # game points so far, below 0 too (Piva)
            game.scores = [(-1) ** j * (2 * j + seed) for j in range(game.num_sides)]
        while not game.hand_over and game.winner is None:
            pairs = game.action_pairs()
            card, captured = pairs[rng.integers(len(pairs))]
            for seat in range(n):
                for select in ((None, 0), (card, 0), (card, captured & -captured)):
                    want = write_observation(game, seat, layout, np.empty(layout.size, np.float32), *select)
                    got = observers[seat](game, *select)
                    assert got.tobytes() == want.tobytes(), f"{preset}, seed {seed}, seat {seat}, {select}"
                    default = observation_array(game, seat, layout, *select)  # the layout's own: compiled where built
                    assert default.tobytes() == want.tobytes(), f"{preset}, seed {seed}, seat {seat}, {select}"
            game.play_pair(card, captured)


@pytest.mark.parametrize("mode", ["move", "select"])
def test_env_and_layout_pickle_and_copy_with_their_compiled_observers(mode):
    """The compiled observers travel with a pickled or copied env (and layout) as the
    layout's fields: the copy observes what the original observes."""
    import copy
    import pickle

    env = scopa_v0.env(num_players=3, action_mode=mode)
    env.reset(seed=5)
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    for other in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        for agent in env.possible_agents:
            a, b = other.observe(agent), env.observe(agent)
            assert a["observation"].tobytes() == b["observation"].tobytes(), agent
            assert np.array_equal(a["action_mask"], b["action_mask"]), agent
    layout = env.unwrapped.layout
    again = pickle.loads(pickle.dumps(layout))
    assert again == layout and len(observers_for(again)) == 3


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("preset", "n"), [(p, n) for p, n, *_ in CASES])
def test_env_observation_hides_the_hidden_cards(preset, n, path):
    """Permute the cards the observer cannot see (other hands but revealed cards, the stock
    order) at points of random hands: every seat's observation from either of the env's fast
    paths stays the same, with and without a pending "select" choice."""
    from scopa_env.engine.cards import cards_of, mask_of
    from scopa_env.engine.game import Game

    env = scopa_v0.raw_env(num_players=n, rules=preset)
    rules = env.rules
    observers = _observers(env.layout, path)
    rng = np.random.default_rng(n + 1)
    checked = 0
    for seed in range(3):
        game = Game(n, rules, seed=seed, auto_next_hand=False)
        step = 0
        while not game.hand_over and game.winner is None:
            pairs = game.action_pairs()
            card, captured = pairs[rng.integers(len(pairs))]
            if step % 4 == 0:
                revealed = list(game.revealed) if rules.declarations else [0] * n
                for seat in range(n):
                    others = [s for s in range(n) if s != seat]
                    hidden = [c for s in others for c in cards_of(game.hands[s] & ~revealed[s])] + list(game.stock)
                    shuffled = [int(c) for c in rng.permutation(hidden)]
                    world, pos = game.clone(), 0
                    for s in others:
                        k = (game.hands[s] & ~revealed[s]).bit_count()
                        world.hands[s] = revealed[s] | mask_of(shuffled[pos : pos + k])
                        pos += k
                    world.stock = shuffled[pos:]
                    for select in ((None, 0), (card, captured & -captured)):
                        a = observers[seat](game, *select)
                        b = observers[seat](world, *select)
                        assert a.tobytes() == b.tobytes(), f"{preset}, seed {seed}, step {step}, seat {seat}"
                    checked += 1
            game.play_pair(card, captured)
            step += 1
    assert checked > 0


def test_generated_observers_take_only_integers_from_the_layout():
    """The observers are code generated from the layout's numbers: a field that is not an int
    (a crafted pickle's, say) raises TypeError before any code is built or run."""
    import dataclasses

    from scopa_env.fast.observers import _compile_observer

    layout = ObservationLayout(2)
    assert callable(_compile_observer(layout, 0))
    crafted = dataclasses.replace(layout)
    object.__setattr__(crafted, "cards", "40); import os  #")
    with pytest.raises(TypeError):
        _compile_observer(crafted, 0)
    with pytest.raises(TypeError):
        _compile_observer(layout, "0")


def _trace(env, episodes: int) -> list:
    """Everything an env shows over seeded random games: each ``last()`` (observation and
    mask bytes, reward, done flags, info) and each ``observe`` of the others."""
    rng = np.random.default_rng(11)
    trace = []
    for ep in range(episodes):
        env.reset(seed=ep)
        for agent in env.agent_iter(20_000):
            obs, reward, term, trunc, info = env.last()
            trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
            trace.append(repr(info))
            trace += [env.observe(a)["observation"].tobytes() for a in env.agents if a != agent]
            if term or trunc:
                env.step(None)
                continue
            ids = np.flatnonzero(obs["action_mask"])
            env.step(int(ids[rng.integers(len(ids))]))
    return trace


@pytest.mark.parametrize("mode", ["select", "move"])
@pytest.mark.parametrize(
    ("preset", "n", "episode"),
    [
        ("standard", 2, "hand"),
        ("scopone", 4, "hand"),
        ("scopa_corse", 2, "hand"),
        ("chkobba", 2, "hand"),
        ("scopa_bazzica", 2, "hand"),
        ("standard", 3, "game"),
    ],
)
def test_env_plays_the_same_with_the_compiled_captures(preset, n, episode, mode):
    """An env whose card-play turns ask the compiled core (where built) for the named card's one
    capture ("select": :func:`scopa_env.fast.core.card_capture`) or the hand's legal ids ("move":
    :func:`~scopa_env.fast.core.plain_move_ids`) plays every seeded game exactly as one asking
    the rules' Python (``Game.card_outcomes``, ``Game.legal_pairs``): every observation, mask,
    reward and info. Decisions (Chkobba's first card, declarations) and the optional capture's
    choice stay the rules'. The install builds the extension; a missing one fails."""
    from scopa_env.aec.turns import turns_for

    compiled = scopa_v0.env(num_players=n, rules=preset, action_mode=mode, episode=episode)
    assert compiled.unwrapped.turns.compiled, (
        "the ahead-of-time extension is not built or stale (pip install -e . builds it)"
    )
    python = scopa_v0.env(num_players=n, rules=preset, action_mode=mode, episode=episode)
    python.unwrapped.turns = turns_for(python.unwrapped.setup, compiled=False)
    assert not python.unwrapped.turns.compiled
    episodes = 1 if episode == "game" else 6
    a, b = _trace(compiled, episodes), _trace(python, episodes)
    assert len(a) > 500 and a == b


def test_compiled_captures_only_where_the_rules_are_theirs():
    """The env asks the compiled core only under the standard capture pattern in the 40-card
    deck without a claim or a wildcard; the Ace's take-all, sums to 15, the 52-card deck,
    Chiamarsi fuori and Cirulla keep the rules' Python in both modes. A pickled env looks its
    helpers up again."""
    import pickle

    from scopa_env.aec import turns
    from scopa_env.engine.rules import get_rules
    from scopa_env.fast import aot

    for preset in ("asso_pigliatutto", "scopa_di_quindici_1", "french_52", "chiamarsi_fuori", "cirulla"):
        n = get_rules(preset).player_counts[0]
        for mode in ("select", "move"):
            env = scopa_v0.raw_env(n, rules=preset, action_mode=mode if preset != "french_52" else "select")
            assert not env.turns.compiled, (preset, mode)
    select, move = scopa_v0.raw_env(action_mode="select"), scopa_v0.raw_env(action_mode="move")
    assert select.turns.compiled == (aot.card_capture() is not None and aot.move_ids() is not None)
    assert isinstance(select.turns, turns.CompiledSelectTurns if select.turns.compiled else turns.SelectTurns)
    assert move.turns.compiled == (aot.move_ids() is not None)
    assert isinstance(move.turns, turns.CompiledMoveTurns if move.turns.compiled else turns.MoveTurns)
    for env in (select, move):
        again = pickle.loads(pickle.dumps(env))
        assert type(again.turns) is type(env.turns) and again.turns is not env.turns


@pytest.mark.parametrize("mode", ["move", "select"])
def test_envs_share_their_rules_tables_not_their_adapters(mode):
    """Each env builds its own engine adapter (scopa_env/aec/turns.py), whose compiled output buffer
    is its own (envs may step in threads); what every env of the rules reads is made once and shared,
    read only: a "select" hand's ids and mask (each observe hands out a new copy of the mask)."""
    a, b = (scopa_v0.raw_env(action_mode=mode) for _ in range(2))
    assert a.turns is not b.turns and a.turns.tables is b.turns.tables
    if a.turns.compiled:
        assert a.turns.out is not b.turns.out
    if mode == "move":
        return
    a.reset(seed=0)
    agent = a.agent_selection
    first, again = a.observe(agent)["action_mask"], a.observe(agent)["action_mask"]
    ids, shared = a.turns.tables.hand(a.game.hands[a.game.current])
    assert not shared.flags.writeable and np.array_equal(first, shared) and np.array_equal(again, shared)
    assert first.flags.writeable and not np.shares_memory(first, shared)
    assert ids == np.flatnonzero(first).tolist() == sorted(a._legal_action_ids())


def test_seeded_resets_draw_as_numpys_default_rng(monkeypatch):
    """A seeded reset's generator (scopa_env/fast/seeding.py: PCG64 on the compiled seed hash) is
    a new generator in the state of ``np.random.default_rng(seed)``: the same draws, the same deal
    as ``Game(seed=seed)``, and what else a seed sequence offers (spawn, pickling, copying,
    ``entropy``) is ``SeedSequence(seed)``'s. Without the extension it is ``default_rng`` itself."""
    import copy
    import pickle

    from scopa_env.engine.game import Game
    from scopa_env.fast import seeding

    assert seeding.generator(1).bit_generator.seed_seq.__class__ is seeding._SeedWords, (
        "the ahead-of-time extension is not built or stale (pip install -e . builds it)"
    )
    seeds = [
        0,
        1,
        2**32 - 1,
        2**32,
        2**63 - 1,
        *range(2, 200),
        *np.random.default_rng(1).integers(0, 2**63, 200).tolist(),
    ]
    for seed in seeds:
        ours, numpys = seeding.generator(seed), np.random.default_rng(seed)
        assert ours.bit_generator.state == numpys.bit_generator.state, seed
        assert ours.integers(0, 1 << 62, 4).tolist() == numpys.integers(0, 1 << 62, 4).tolist(), seed
    env = scopa_v0.raw_env(num_players=3)
    env.reset(seed=5)
    first = env.np_random
    assert env.game.hands == Game(3, seed=5).hands and env.game.stock == Game(3, seed=5).stock
    env.reset(seed=5)
    assert env.np_random is not first, "a seeded reset makes a new generator, as default_rng did"
    gen = seeding.generator(7)
    assert gen.bit_generator.seed_seq.entropy == 7
    assert [g.integers(1 << 30) for g in gen.spawn(2)] == [
        g.integers(1 << 30) for g in np.random.default_rng(7).spawn(2)
    ]
    for made in (pickle.loads(pickle.dumps(gen)), copy.deepcopy(gen)):
        assert made.bit_generator.state == gen.bit_generator.state
        assert isinstance(made.bit_generator.seed_seq, np.random.SeedSequence)
    monkeypatch.setattr(seeding, "_words", None)  # no extension: numpy's own
    assert isinstance(seeding.generator(3).bit_generator.seed_seq, np.random.SeedSequence)


@pytest.mark.parametrize("mode", ["move", "select"])
def test_plain_reset_equals_reset_with_the_default_options(mode):
    """``reset(seed=...)`` without options (its short path) starts the episode that ``reset`` with
    the default options (``{"dealer": last seat}``, the general path) starts: the same deal, the
    same first observation and mask, and the same play after it (to the game's end with
    ``episode="game"``, whose later hands the game deals itself), for every player count."""
    for n, episode, seeds in ((2, "hand", 5), (3, "hand", 5), (4, "hand", 5), (2, "game", 1)):
        plain, general = (scopa_v0.env(num_players=n, action_mode=mode, episode=episode) for _ in range(2))
        for seed in range(seeds):
            plain.reset(seed=seed)
            general.reset(seed=seed, options={"dealer": n - 1})
            assert plain.unwrapped.game.hands == general.unwrapped.game.hands, (n, seed)
            assert plain.unwrapped.game.stock == general.unwrapped.game.stock, (n, seed)
            rng = np.random.default_rng(seed)
            for agent in plain.agent_iter():
                assert agent == general.agent_selection
                got, want = plain.last(), general.last()
                for key in ("observation", "action_mask"):
                    assert np.array_equal(got[0][key], want[0][key]), (n, seed, key)
                assert got[1:] == want[1:], (n, seed)
                if got[2] or got[3]:
                    action = None
                else:
                    legal = np.flatnonzero(got[0]["action_mask"])
                    action = int(legal[rng.integers(len(legal))])
                plain.step(action)
                general.step(action)
            assert not general.agents


def _python_twin(env):
    """An env of the same setup whose adapter asks the rules' Python on every turn."""
    from scopa_env.aec.turns import turns_for

    twin = scopa_v0.env(setup=env.unwrapped.setup)
    twin.unwrapped.turns = turns_for(twin.unwrapped.setup, compiled=False)
    return twin


@pytest.mark.parametrize(
    ("preset", "n", "episode", "reward"),
    [
        ("standard", 2, "hand", "game"),
        ("standard", 3, "game", "points"),
        ("scopone", 4, "hand", "points"),
        ("scopone_scientifico", 4, "hand", "game"),
        ("hurrikan_last_sweep", 2, "game", "game"),
        ("napola", 2, "hand", "points"),
        ("small", 2, "game", "points"),
    ],
)
def test_env_plays_the_same_in_the_compiled_row(preset, n, episode, reward):
    """A "move" env of rules without decisions plays each hand's cards in one row of the compiled core
    (scopa_env/aec/turns.py RowMoveTurns, the batch's own play code) and lets the Python engine deal
    and score: every seeded game shows exactly what an env on the rules' Python shows, every
    observation (the others' too), mask, reward and info, over hands and whole games."""
    from scopa_env.aec.turns import RowMoveTurns

    row = scopa_v0.env(num_players=n, rules=preset, action_mode="move", episode=episode, reward=reward)
    assert isinstance(row.unwrapped.turns, RowMoveTurns), (
        "the ahead-of-time extension is not built or stale (pip install -e . builds it)"
    )
    python = _python_twin(row)
    episodes = 1 if episode == "game" else 5
    a, b = _trace(row, episodes), _trace(python, episodes)
    assert len(a) > 100 and a == b


def _play_both(envs, steps: int, rng) -> None:
    """``steps`` random legal moves, the same in each env (their games equal)."""
    for _ in range(steps):
        last = [e.last() for e in envs]
        assert all(np.array_equal(o["action_mask"], last[0][0]["action_mask"]) for o, *_ in last)
        ids = np.flatnonzero(last[0][0]["action_mask"])
        action = None if last[0][2] or last[0][3] else int(ids[rng.integers(len(ids))])
        for e in envs:
            e.step(action)


def _position(game) -> tuple:
    return (
        list(game.hands),
        list(game.played),
        list(game.piles),
        list(game.scope),
        list(game.scope_points),
        game.table,
        game.current,
        game.last_capturer,
        list(game.stock),
        list(game.history),
        game.hand_result,
    )


def test_reading_the_game_mid_hand_brings_it_level_and_it_plays_on():
    """``env.game`` read in the middle of a hand played in the row is the position reached (hands,
    piles, table, stock, history ...); the hand then plays on through that game, so a change the
    reader makes counts. ``state()`` and the others' observations read the row and keep it."""
    row = scopa_v0.env(num_players=2, action_mode="move", episode="game")
    python = _python_twin(row)
    rng = np.random.default_rng(3)
    for e in (row, python):
        e.reset(seed=21)
    _play_both((row, python), 7, rng)
    turns = row.unwrapped.turns
    assert turns.live
    assert np.array_equal(row.unwrapped.state(), python.unwrapped.state()) and turns.live
    game = row.unwrapped.game
    assert not turns.live
    assert _position(game) == _position(python.unwrapped.game)
    _play_both((row, python), 20, rng)
    assert _position(row.unwrapped.game) == _position(python.unwrapped.game)
    # the reader's change counts: the env plays on through the game it handed out
    for e in (row, python):
        g = e.unwrapped.game
        g.scores[0] += 5
    _play_both((row, python), 60, rng)
    assert row.unwrapped.game.scores == python.unwrapped.game.scores


def test_a_pickled_or_copied_env_plays_on_from_the_rows_position():
    """An env pickled or deep-copied in the middle of a row-played hand carries the position reached and
    plays on as the original does."""
    import copy
    import pickle

    env = scopa_v0.env(num_players=4, rules="scopone", action_mode="move", episode="hand")
    rng = np.random.default_rng(5)
    env.reset(seed=8)
    _play_both((env,), 9, rng)
    assert env.unwrapped.turns.live
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    _play_both((env, *clones), 27, rng)
    assert all(_position(c.unwrapped.game) == _position(env.unwrapped.game) for c in clones)


def test_the_row_only_where_the_rules_have_no_decisions():
    """The row plays "move" mode's card plays only where the compiled captures apply and the rules have
    no decision (Chkobba's first card, declarations, Cirulla's bonuses); elsewhere, and in "select"
    mode, the env keeps its other adapters."""
    from scopa_env.aec import turns
    from scopa_env.engine.rules import get_rules

    for preset, expected in (("standard", True), ("scopone", True), ("napola", True)):
        n = get_rules(preset).player_counts[0]
        assert isinstance(scopa_v0.raw_env(n, rules=preset, action_mode="move").turns, turns.RowMoveTurns) == expected
    for preset in ("chkobba", "scopa_bazzica", "cirulla", "asso_pigliatutto", "chiamarsi_fuori"):
        n = get_rules(preset).player_counts[0]
        assert not isinstance(scopa_v0.raw_env(n, rules=preset, action_mode="move").turns, turns.RowMoveTurns), preset
    assert not isinstance(scopa_v0.raw_env(action_mode="select").turns, turns.RowMoveTurns)
