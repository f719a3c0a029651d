"""The RLlib backend (train/rllib): config checks, the env RLlib sees, checkpoint agents, and a
tiny RLlib training run.

The tests of the first part need no ray; those marked below skip when RLlib is not installed
(``pip install -e ".[rllib]"``); CI runs them in their own step with the extra installed.
"""

from __future__ import annotations

import csv
import json
import socket
import time

import numpy as np
import pytest

from agents.registry import make_agent
from train.config import ConfigError
from train.rllib import RAY_MISSING, run, validate_config
from train.rllib.agent import save_checkpoint
from train.rllib.env import make_aec_env
from train.rllib.trainer import ClusterUnreachable, check_address
from train.run import CSV_COLUMNS

TINY = {
    "opponents": {"greedy": 1, "self": 1},
    "selfplay": True,
    "selfplay_every": 200,
    "total_timesteps": 400,
    "train_batch_size": 200,
    "minibatch_size": 64,
    "num_epochs": 1,
    "net_arch": [16],
    "num_cpus": 1,
    "eval_every": 400,
    "eval_opponents": ["random", "greedy"],
    "eval_pairs": 2,
    "algorithm_checkpoint": False,
    "progress": False,
}


def env_config(**kw) -> dict:
    base = {"num_players": 2, "rules": "standard", "episode": "hand", "reward": "points", "action_mode": "select"}
    return {**base, "opponents": "greedy", **kw}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- no ray needed -------------------------------------------------------------------------


def test_unknown_key_lists_the_valid_ones():
    with pytest.raises(ConfigError) as err:
        validate_config({"name": "x", "n_envs": 8})
    msg = str(err.value)
    assert "n_envs" in msg and "num_env_runners" in msg and "num_learners" in msg, msg


@pytest.mark.parametrize(
    "key, value",
    [
        ("policies", "each"),
        ("action_mode", "cards"),
        ("num_env_runners", -1),
        ("gamma", 1.5),
        ("backend", "sb3"),
        ("opponents", {"greedy": -1}),
        ("net_arch", []),
        ("total_timesteps", 0),
    ],
)
def test_bad_values_are_rejected(key, value):
    with pytest.raises(ConfigError, match=key if key != "opponents" else "opponent"):
        validate_config({"name": "x", key: value})


def test_numbers_read_as_the_sb3_path_reads_them():
    """YAML reads ``2e6`` as a string; both backends take it as the int 2,000,000, and refuse 2.5 steps."""
    assert validate_config({"name": "x", "total_timesteps": "2e6"}).total_timesteps == 2_000_000
    with pytest.raises(ConfigError, match="total_timesteps must be an int"):
        validate_config({"name": "x", "total_timesteps": 2.5})


def test_defaults_are_valid_and_modules_follow_policies():
    assert validate_config({"name": "x"}).module_ids == ["learner"]
    cfg = validate_config({"name": "x", "policies": "per_seat", "num_players": 4})
    assert cfg.seat_modules == ["seat_0", "seat_1", "seat_2", "seat_3"], cfg.seat_modules


def test_missing_ray_is_one_line_naming_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("train.rllib.ray_available", lambda: False)
    assert run(dict(TINY), tmp_path / "r") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and RAY_MISSING in err and '".[rllib]"' in err, err


def test_unreachable_address_fails_fast_naming_it():
    address = f"127.0.0.1:{closed_port()}"
    start = time.monotonic()
    with pytest.raises(ClusterUnreachable, match=address):
        check_address(address, timeout=2.0)
    assert time.monotonic() - start < 5.0, "the address check must not wait for Ray's own long timeouts"
    with pytest.raises(ClusterUnreachable, match="not HOST:PORT"):
        check_address("nowhere", timeout=1.0)


@pytest.mark.parametrize("action_mode", ["select", "move"])
@pytest.mark.parametrize("num_players", [2, 4])
def test_rllib_sees_only_learner_seats(action_mode, num_players):
    """Opponent seats are played inside the env; RLlib is asked to move only for learner seats."""
    env = make_aec_env(env_config(num_players=num_players, action_mode=action_mode, episode="game"))
    rng = np.random.default_rng(0)
    for episode in range(3):
        env.reset(seed=episode)
        learners = {f"player_{s}" for s in env.learner_seats()}
        assert len(learners) == 1, f"greedy opponents leave exactly one learner seat, got {learners}"
        total = 0.0
        while env.agents:
            agent = env.agent_selection
            assert agent in learners, f"{agent} is an opponent seat but was handed to the learner"
            obs, reward, term, trunc, _ = env.last()
            total += reward
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert env.opponent_moves > 0
    assert total != 0.0 or num_players > 2, "a learner playing a full game gets hand-point rewards"


@pytest.mark.parametrize("action_mode", ["select", "move"])
def test_the_52_card_game_for_8_players(action_mode, tmp_path):
    """french_52 (wikipedia, "Playing with French-suited cards"): greedy plays seven seats inside the
    env, the learner the eighth; CONFIRM is 52 in "select" mode, 72,752 ids in "move" mode; a
    checkpoint's meta sizes the network as the env does."""
    from train.rllib.trainer import RllibRun

    env = make_aec_env(env_config(num_players=8, rules="french_52", action_mode=action_mode))
    rng = np.random.default_rng(1)
    env.reset(seed=1)
    assert len(env.learner_seats()) == 1
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"].shape == ((53,) if action_mode == "select" else (72_752,))
    while env.agents:
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.opponent_moves >= 7 * 6, "the seven greedy seats played their 2 deals of 3 cards"
    cfg = validate_config({"name": "m", "rules": "french_52", "num_players": 8, "action_mode": action_mode})
    meta = RllibRun(cfg, tmp_path / "m").meta()
    assert (meta["observation_size"], meta["num_actions"]) == (1144, 53 if action_mode == "select" else 72_752)


def test_self_opponent_makes_every_seat_a_learner_seat():
    env = make_aec_env(env_config(opponents="self"))
    env.reset(seed=1)
    assert env.learner_seats() == [0, 1] and env.opponent_names() == [None, None]


@pytest.mark.parametrize("rules", ["standard", "cirulla", "scopa_bazzica"])
def test_checkpoint_meta_sizes_the_observation_as_the_env_does(tmp_path, rules):
    """A checkpoint's network is rebuilt from ``meta["observation_size"]``, so it must be the env's
    (Cirulla's observation has the wildcard's declared rank, Bazzica's the revealed hands)."""
    from train.rllib.trainer import RllibRun

    meta = RllibRun(validate_config({"name": "m", "rules": rules}), tmp_path / "m").meta()
    env = make_aec_env(env_config(rules=rules))
    env.reset(seed=0)
    assert meta["observation_size"] == env.observe(env.agent_selection)["observation"].shape[0]


def _random_states(meta: dict) -> dict:
    from train.rllib.network import ActorCritic

    net = ActorCritic(meta["observation_size"], meta["num_actions"], meta["net_arch"])
    return {"learner": {f"net.{k}": v.numpy() for k, v in net.state_dict().items()}}


META = {
    "num_players": 2,
    "rules": "standard",
    "action_mode": "select",
    "net_arch": [8],
    "policies": "shared",
    "seat_modules": ["learner", "learner"],
    "observation_size": 376,
    "num_actions": 41,
}


def test_checkpoint_agent_plays_a_hand(tmp_path):
    """``rllib:RUN_DIR`` loads ``best/`` (torch only) and plays legal moves from its PlayerView."""
    from scopa_env.engine.game import Game

    save_checkpoint(tmp_path / "best", _random_states(META), META)
    agents = [make_agent(f"rllib:{tmp_path}", seed=0), make_agent("random", seed=1)]
    game = Game(2, "standard", seed=3, auto_next_hand=False)
    while not game.hand_over:
        move = agents[game.current].act(game.view(game.current))
        assert (move.card, move.mask) in game.legal_pairs(), move
        game.play_pair(move.card, move.mask)
    assert game.hand_result is not None


def test_wrong_or_missing_checkpoint_is_a_one_line_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        make_agent(f"rllib:{tmp_path / 'nothing'}")
    (tmp_path / "ppo").mkdir()
    (tmp_path / "ppo" / "meta.json").write_text(json.dumps({"algo": "ppo"}))
    with pytest.raises(ValueError, match="use 'ppo:") as err:
        make_agent(f"rllib:{tmp_path / 'ppo'}")
    assert "\n" not in str(err.value)
    save_checkpoint(tmp_path / "bad", _random_states(META), {**META, "net_arch": [9]})
    with pytest.raises(ValueError, match="not a loadable RLlib checkpoint") as err:
        make_agent(f"rllib:{tmp_path / 'bad'}")
    assert "\n" not in str(err.value)


def test_masked_logits_give_illegal_actions_zero_probability():
    import torch

    from train.rllib.network import ActorCritic

    net = ActorCritic(5, 7, [4])
    mask = torch.tensor([[1, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1]], dtype=torch.int8)
    probs = torch.softmax(net.masked_logits(torch.randn(2, 5), mask), -1)
    assert torch.all(probs[mask == 0] == 0), probs
    assert torch.allclose(probs.sum(-1), torch.ones(2))


# --- with ray ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_local():
    pytest.importorskip("ray.rllib", reason='RLlib is an optional dependency: pip install -e ".[rllib]"')
    import ray

    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"policies": "per_seat", "action_mode": "move", "episode": "game"},
        {"rules": "french_52", "num_players": 8},
    ],
    ids=["shared", "per_seat", "french_52"],
)
def test_masked_actions_are_never_sampled(ray_local, overrides):
    """RLlib's own sampling loop, exploring with the masked module: every action is legal."""
    from train.rllib.trainer import build_algorithm

    cfg = validate_config({"name": "x", **TINY, **overrides})
    algo = build_algorithm(cfg)
    try:
        episodes = algo.env_runner.sample(num_timesteps=300, random_actions=False)
        checked, modules = 0, set()
        for episode in episodes:
            for agent_id, sa in episode.agent_episodes.items():
                masks = sa.get_observations()["action_mask"]
                actions = np.asarray(sa.get_actions())
                assert np.all(masks[np.arange(len(actions)), actions] == 1), f"{agent_id} took a masked action"
                checked += len(actions)
                modules.add(sa.module_id)
        assert checked >= 250, checked
        assert modules <= set(cfg.module_ids), modules
    finally:
        algo.stop()


def test_tiny_training_run_of_the_52_card_game(ray_local, tmp_path):
    """french_52 with 8 players trains and is evaluated (a deal in 8 rotations of whole games)."""
    run_dir = tmp_path / "rllib_f52"
    cfg = {**TINY, "rules": "french_52", "num_players": 8, "opponents": {"greedy": 1}, "selfplay": False}
    assert run({**cfg, "eval_opponents": ["random"], "eval_pairs": 1}, run_dir) == 0
    with (run_dir / "evaluations.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {r["opponent"] for r in rows} == {"random"}
    meta = json.loads((run_dir / "best" / "meta.json").read_text())
    assert (meta["num_players"], meta["num_actions"], meta["observation_size"]) == (8, 53, 1144)


def test_tiny_training_run_writes_the_metrics(ray_local, tmp_path):
    run_dir = tmp_path / "rllib_tiny"
    assert run(dict(TINY), run_dir) == 0
    with (run_dir / "evaluations.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows and list(rows[0]) == list(CSV_COLUMNS), "evaluations.csv has the SB3 path's columns"
    assert {r["opponent"] for r in rows} == {"random", "greedy"}
    for r in rows:
        for key in (
            "win_rate",
            "margin",
            "learner_primiera",
            "learner_settebello",
            "learner_coins",
            "learner_cards",
            "learner_scope",
        ):
            assert r[key] != "" and not np.isnan(float(r[key])), (key, r)
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    assert len(lines) >= 2 and "learner/policy_loss" in json.loads(lines[-1]), lines[-1]
    assert list((run_dir / "tb").iterdir()), "TensorBoard events are written"
    assert (run_dir / "pool").is_dir(), "self-play snapshots are saved"
    agent = make_agent(f"rllib:{run_dir / 'latest'}")
    assert agent.name.startswith("rllib:")


def test_unreachable_cluster_fails_fast_through_run(capsys, tmp_path):
    pytest.importorskip("ray.rllib", reason='RLlib is an optional dependency: pip install -e ".[rllib]"')
    address = f"127.0.0.1:{closed_port()}"
    start = time.monotonic()
    assert run({**TINY, "address": address, "address_timeout": 1.0}, tmp_path / "r") == 2
    err = capsys.readouterr().err.strip()
    assert address in err and len(err.splitlines()) == 1, err
    assert time.monotonic() - start < 10.0
