"""PPO and DQN distilled from the zoo's network: the zoo teacher, the warm starts, the recipes at a
tiny budget, and the PPO/DQN entries of the zoo (loading, hash, refusing another game)."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from scopa_env.fast.vec_env import ScopaSB3VecEnv  # noqa: E402
from train.config import ConfigError, TrainConfig  # noqa: E402
from train.sb3.pretrain import ZooTeacher, clone, clone_q, collect_teacher  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEACHER = "zoo:standard-2p"
ENTRIES = ("ppo-standard-2p", "dqn-standard-2p")
CAPTURE_PHASE = 375  # the observation's "choosing captures" flag (2 players)


def venv(opponent: str, n: int = 32, seed: int = 11) -> ScopaSB3VecEnv:
    v = ScopaSB3VecEnv(n, 2, "standard", opponent=opponent, learner_seat="random", episode="hand", reward="points")
    v.seed(seed)
    return v


# --- the zoo network as a teacher ------------------------------------------------------------------


def test_the_zoo_teacher_values_exactly_the_legal_actions():
    """On positions a random player reaches, card and capture choices alike, the teacher has a value
    for every legal "select" action and for no other."""
    v = venv("greedy")
    teacher = ZooTeacher(TEACHER, 2, "standard")
    rng = np.random.default_rng(0)
    obs = v.reset()
    captures = 0
    for _ in range(120):
        masks = np.asarray(v.action_masks(), bool)
        values = teacher.action_values(v.batch, obs)
        assert (np.isfinite(values) == masks).all()
        captures += int((obs[:, CAPTURE_PHASE] == 1).sum())
        obs, _, _, _ = v.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    assert captures > 20, "capture choices were valued too"


def test_the_zoo_teacher_plays_as_the_zoo_agent():
    """Played through the "select" actions, the teacher is the zoo's network: it beats greedy by far
    (the zoo card: +0.88 points per hand on whole games), where greedy against itself is even."""
    strong = collect_teacher(venv("greedy"), TEACHER, 6000, gamma=1.0)
    even = collect_teacher(venv("greedy"), "greedy", 6000, gamma=1.0)
    assert strong.returns.mean() > even.returns.mean() + 0.3
    assert strong.values is not None and strong.values.shape == strong.masks.shape
    assert strong.masks[np.arange(len(strong.actions)), strong.actions].all()
    assert (strong.masks.sum(axis=1) > 1).all(), "forced actions are left out"
    best = np.argmax(np.where(strong.masks, strong.values.astype(np.float32), -np.inf), axis=1)
    assert (best == strong.actions).mean() > 0.99, "the label is the teacher's best action"


def test_dagger_with_the_zoo_teacher_labels_capture_choices_off_its_move():
    v = venv("greedy")
    rng = np.random.default_rng(1)

    def actor(obs, masks):
        return np.array([rng.choice(np.flatnonzero(m)) for m in masks])

    data = collect_teacher(v, TEACHER, 4000, gamma=1.0, actor=actor)
    assert data.masks[np.arange(len(data.actions)), data.actions].all()
    assert (data.obs[:, CAPTURE_PHASE] == 1).sum() > 10, "the random actor's capture choices are labelled"


def test_distilling_and_q_fitting_learn_the_teachers_choices():
    from sb3_contrib import MaskablePPO

    from train.sb3.networks import QNetwork

    v = venv("greedy")
    data = collect_teacher(v, TEACHER, 3000, gamma=1.0)
    model = MaskablePPO("MlpPolicy", v, policy_kwargs={"net_arch": [64]}, seed=0, device="cpu")
    first = clone(model.policy, data, 1, 128, 0.5, seed=0, temperature=0.1)
    later = clone(model.policy, data, 5, 128, 0.5, seed=1, temperature=0.1)
    assert later["bc_loss"] < first["bc_loss"] and later["agreement"] > first["agreement"]
    q = QNetwork(data.obs.shape[1], data.masks.shape[1], [64])
    first = clone_q(q, data, 1, 128, seed=0)
    later = clone_q(q, data, 5, 128, seed=1)
    assert later["q_loss"] < first["q_loss"] and later["agreement"] > first["agreement"]


@pytest.mark.parametrize(
    "teacher, match",
    [
        ("zoo:nothing-here", "no zoo agent 'nothing-here'"),
        ("zoo:scopone-4p", "trained for 4 players"),
        ("search", "unknown teacher"),
    ],
)
def test_a_teacher_that_cannot_teach_the_game_is_refused(teacher, match, tmp_path):
    with pytest.raises(ConfigError, match=match):
        TrainConfig.load(ROOT / "configs" / "ppo_vs_heuristic.yaml", [f"runs_dir={tmp_path}", f"pretrain={teacher}"])


# --- the recipes at a tiny budget --------------------------------------------------------------------

TINY = [
    "total_timesteps=512",
    "n_envs=8",
    "n_steps=32",
    "batch_size=64",
    "net_arch=[32]",
    "eval_every=256",
    "eval_pairs=2",
    "final_eval_pairs=2",
    "learning_starts=64",
    "buffer_size=512",
    "target_update_interval=64",
    "pretrain_steps=512",
    "pretrain_epochs=1",
    "progress_bar=false",
]


@pytest.mark.parametrize("config", ["ppo_vs_heuristic", "dqn_vs_greedy"])
def test_the_recipe_distils_the_zoo_network_and_trains(config, tmp_path):
    """Each recipe's config at a tiny budget: the zoo teacher's warm start, an evaluation of the
    clone at step 0, training, and a checkpoint that loads as an agent."""
    from agents.registry import make_agent
    from train.run import CSV_FILE
    from train.sb3.trainer import train

    cfg = TrainConfig.load(ROOT / "configs" / f"{config}.yaml", [f"runs_dir={tmp_path}", *TINY])
    assert cfg.pretrain == TEACHER
    run = train(cfg, report=False)
    rows = (run.dir / CSV_FILE).read_text().splitlines()
    assert rows[1].startswith("0,"), "the clone is evaluated before training"
    assert make_agent(f"{cfg.algo}:{run.dir}").mismatch(2, "standard") is None


# --- the PPO and DQN entries of the zoo -------------------------------------------------------------


@pytest.mark.parametrize("name", ENTRIES)
def test_the_zoo_ships_the_entry_with_its_card(name):
    from train import zoo

    card = zoo.card(name)
    folder = zoo.path_of(name)
    assert sorted(p.name for p in folder.iterdir()) == ["card.json", "meta.json", "weights.npz"], "weights and JSON"
    assert card["weights_sha256"] == zoo.weights_sha256(folder)
    assert card["algo"] == name.split("-")[0] and (card["rules"], card["num_players"]) == ("standard", 2)
    for opp in ("random", "greedy", "heuristic"):
        row = next(r for r in card["results"] if r["opponent"] == opp)
        assert row["deal_pairs"] == 10_000 and set(row["per_hand"]["learner"]) >= {"primiera", "scope"}
    assert card["cpu_hours"] > 0 and card["config"].startswith("configs/")


@pytest.mark.parametrize("name", ENTRIES)
def test_a_zoo_entry_plays_legal_games(name):
    from agents.matches import Match, play_game
    from agents.registry import make_agent
    from train.fast_eval import evaluate_fast
    from train.zoo import load_zoo_batch_policy

    agent = make_agent(f"zoo:{name}")
    assert agent.name == f"zoo:{name}"
    match = Match(("zoo", "greedy"), 2, "standard", 0)
    rec = play_game(match, 0, 0, [agent, make_agent("greedy")])
    assert rec["forfeit"] is None
    policy, meta = load_zoo_batch_policy(name)
    report = evaluate_fast(policy, "random", 4, "standard", 1, meta["action_mode"])
    assert report["agents"][0]["games"] == 8


@pytest.mark.parametrize("name", ENTRIES)
def test_a_zoo_entry_is_refused_for_another_game_before_any_game(name, scopa_cli):
    from agents.registry import make_agent

    assert "not 4 players with 'scopone'" in make_agent(f"zoo:{name}").mismatch(4, "scopone")
    result = scopa_cli("eval", f"zoo:{name}", "greedy", "--players", "4", "--rules", "scopone", "--games", "1")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "trained for 2 players" in lines[0], result.stderr


def test_scopa_eval_fast_plays_a_ppo_entry(scopa_cli, tmp_path):
    out = tmp_path / "r.json"
    result = scopa_cli(
        "eval", "--fast", "zoo:ppo-standard-2p", "greedy", "--games", "4", "--no-progress", "--json", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["agents"][0]["agent"] == "zoo:ppo-standard-2p"


def test_scopa_eval_fast_says_where_a_ppo_entry_meets_fsearch(scopa_cli):
    """--fast plays the select-mode networks against the compiled baselines only: one line that says to drop it."""
    result = scopa_cli("eval", "--fast", "zoo:ppo-standard-2p", "fsearch", "--games", "1", "--no-progress")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not 'fsearch'" in lines[0] and "drop --fast" in lines[0], result.stderr


def test_a_damaged_entry_is_refused(tmp_path, monkeypatch):
    from train import zoo

    copy = tmp_path / "ppo-standard-2p"
    shutil.copytree(zoo.path_of("ppo-standard-2p"), copy)
    arrays = dict(np.load(copy / "weights.npz"))
    first = sorted(arrays)[0]
    arrays[first] = arrays[first] + 1.0
    np.savez(copy / "weights.npz", **arrays)
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    with pytest.raises(ValueError, match="does not match the SHA-256 on its card"):
        zoo.load_zoo_agent("ppo-standard-2p")


def test_weights_that_are_not_the_network_are_refused(tmp_path):
    """Arrays are matched to the network meta.json describes, by name and shape, before any is read."""
    from train import zoo
    from train.zoo.policies import load_network

    copy = tmp_path / "e"
    shutil.copytree(zoo.path_of("dqn-standard-2p"), copy)
    arrays = dict(np.load(copy / "weights.npz"))
    first = sorted(arrays)[0]
    arrays[first] = np.zeros((3, 3), np.float32)
    np.savez(copy / "weights.npz", **arrays)
    with pytest.raises(ValueError, match=f"{first} has shape"):
        load_network(copy)


def test_the_default_opponent_stays_the_strongest_entry():
    from scopa_app.play import default_opponent

    assert default_opponent("standard", 2) == "zoo:standard-2p-v3"
