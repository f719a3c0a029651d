"""Training on the compiled core (``vec_env: fast``) and the potential-based reward shaping."""

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from scopa_env.engine.observation import ObservationLayout  # noqa: E402
from scopa_env.engine.rules import get_rules  # noqa: E402
from train.config import ConfigError  # noqa: E402
from train.sb3.fast import PileShaping, make_fast_vec_env, pile_potential  # noqa: E402


@pytest.mark.parametrize(
    "override, message",
    [
        ("opponents=heuristic_typo", "not compiled"),
        ("selfplay=true", "selfplay"),
        ("curriculum=[random,greedy]", "curriculum"),
    ],
)
def test_fast_configs_the_core_cannot_play_are_refused_before_training(tiny_fast_config, override, message):
    with pytest.raises(ConfigError, match=message):
        tiny_fast_config(*override.split(","), "eval_opponents=[random,greedy]")


@pytest.mark.parametrize(
    "rules, mode", [pytest.param("chkobba", "select", marks=pytest.mark.slow), ("chiamarsi_fuori", "select"),
                    pytest.param("piva", "select", marks=pytest.mark.slow), ("cirulla", "select"), ("cirulla", "move")]
)  # fmt: skip
def test_fast_configs_take_the_decision_presets(tiny_fast_config, rules, mode):
    """The compiled core plays the first card, the claim, the declarations and Cirulla (issue 18),
    Cirulla in "move" mode too (271,737 ids)."""
    cfg = tiny_fast_config(f"rules={rules}", f"action_mode={mode}", "eval_opponents=[random,greedy]")
    venv = make_fast_vec_env(cfg, "greedy", seed=0)
    venv.reset()
    assert venv.action_masks().shape[1] == (41 if mode == "select" else 271_737)
    assert venv.action_masks().any(axis=1).all(), f"{rules}: a game with no legal action"
    _, rewards, _, _ = venv.step(np.array([np.flatnonzero(m)[0] for m in venv.action_masks()]))
    assert rewards.shape == (venv.num_envs,)


def test_fast_configs_take_four_players_each_for_themselves(tiny_fast_config):
    """The booklet's 4 players each for themselves (four sides) train on the compiled core (issue 18):
    the learner's observation has a pile plane for each of the three other sides."""
    cfg = tiny_fast_config("rules=booklet", "num_players=4", "action_mode=select", "eval_opponents=[random,greedy]")
    venv = make_fast_vec_env(cfg, "greedy", seed=0)
    obs = venv.reset()
    layout = ObservationLayout.for_rules(4, get_rules("booklet"))
    assert obs.shape == (venv.num_envs, layout.size), f"observation {obs.shape}, layout {layout.size}"
    assert obs[:, layout["other_piles"]].shape[1] == 3 * 40, "not one pile plane per other side"
    _, rewards, _, _ = venv.step(np.array([np.flatnonzero(m)[0] for m in venv.action_masks()]))
    assert rewards.shape == (venv.num_envs,)


def random_episodes(venv, episodes: int, seed: int, phi=None):
    """Random legal play: the return of each finished episode, minus ``phi`` of its first observation."""
    rng = np.random.default_rng(seed)
    obs = venv.reset()
    start = phi(obs) if phi else np.zeros(venv.num_envs)
    sums = np.zeros(venv.num_envs)
    finished = []
    while len(finished) < episodes:
        masks = venv.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, _ = venv.step(actions)
        sums += rewards
        for i in np.flatnonzero(dones):
            finished.append(sums[i] + start[i])
            sums[i] = 0.0
        if phi:
            start = np.where(dones, phi(obs), start)  # after a done, obs starts the next episode
    return np.array(finished[:episodes])


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_shaping_leaves_every_episode_return_unchanged(tiny_fast_config, episode):
    """With gamma = 1 the shaping terms telescope: the shaped return is the game's own minus
    phi of the episode's first observation (what the opponents took before the learner's first
    decision), which no action of the learner changes."""
    cfg = tiny_fast_config(f"episode={episode}", "reward=points")
    plain = make_fast_vec_env(cfg, "greedy", seed=7)
    shaped = PileShaping(make_fast_vec_env(cfg, "greedy", seed=7), cfg.num_players, cfg.rules, gamma=1.0)
    a = random_episodes(plain, 40, seed=3)
    b = random_episodes(shaped, 40, seed=3, phi=shaped.potential)
    assert np.allclose(a, b, atol=1e-4), f"shaped {b} vs plain {a}"
    assert np.any(a != 0)


def test_shaping_pays_a_capture_when_it_is_made():
    layout = ObservationLayout(2)
    prim = (16, 12, 13, 14, 15, 18, 21, 10, 10, 10)
    empty = np.zeros((1, layout.size), np.float32)
    assert pile_potential(empty, layout, prim)[0] == 0.0, "phi is 0 on empty piles"
    took_settebello = empty.copy()
    took_settebello[0, layout["own_pile"].start + 6] = 1  # the Seven of coins, card 6
    gain = pile_potential(took_settebello, layout, prim)[0]
    assert gain > 1.0, "the settebello is a whole point, plus a card, a coin and primiera"
    lost = empty.copy()
    lost[0, layout["other_piles"].start + 6] = 1
    assert pile_potential(lost, layout, prim)[0] == pytest.approx(-gain), "the opponent's capture is my loss"
    scopa = empty.copy()
    scopa[0, layout["scope"].start] = 2
    assert pile_potential(scopa, layout, prim)[0] == 2.0, "each scopa is a point"


def test_fast_run_trains_logs_and_is_reproducible(tiny_fast_config):
    from train.sb3.trainer import train

    dirs = [train(tiny_fast_config(f"name={n}", "reward_shaping=true"), report=False).dir for n in ("a", "b")]
    rows = [(d / "evaluations.csv").read_text() for d in dirs]
    assert rows[0] == rows[1], "same seed and config, same evaluation metrics"
    assert (dirs[0] / "best" / "meta.json").exists() and any((dirs[0] / "tb").iterdir())


def test_fast_ppo_run_trains(tiny_fast_config):
    from train.sb3.trainer import train

    cfg = tiny_fast_config("name=ppo", "algo=ppo")
    run = train(cfg, report=False)
    assert (run.dir / "latest" / "meta.json").exists()
    assert run.state.timestep >= cfg.total_timesteps


def random_batch_policy(seed: int):
    rng = np.random.default_rng(seed)
    return lambda obs, masks: np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def test_fast_evaluation_plays_each_deal_from_both_seats():
    """Duplicate deals: both seatings of a deal start from the same cards, and the report counts both."""
    from scopa_env.fast import BatchedScopa
    from train.fast_eval import evaluate_fast

    seeds = np.arange(16) + 99
    states = []
    for seat in (0, 1):
        b = BatchedScopa(16, 2, "standard", episode="game", reward="game", opponent="greedy", learner_seat=seat)
        b.reset(seeds)
        states.append([(b.state(i)["deal_order"], b.state(i)["dealer"]) for i in range(16)])
    assert states[0] == states[1], "the learner's seat does not change the deal"

    report = evaluate_fast(random_batch_policy(0), "greedy", 60, seed=5)
    me, opp = report["agents"]
    assert me["games"] == opp["games"] == 120
    assert me["margin_per_hand"]["hi"] < 0, "a random learner loses to greedy"
    again = evaluate_fast(random_batch_policy(0), "greedy", 60, seed=5)
    assert again["agents"][0]["margin_per_hand"] == me["margin_per_hand"], "seeded: the same report"


def test_fast_evaluation_of_random_against_random_is_even():
    from train.fast_eval import evaluate_fast

    me = evaluate_fast(random_batch_policy(1), "random", 150, seed=3)["agents"][0]
    assert me["margin_per_hand"]["lo"] < 0 < me["margin_per_hand"]["hi"]


def test_fast_evaluation_refuses_an_empty_run():
    from train.fast_eval import evaluate_fast

    with pytest.raises(ValueError, match="num_deals"):
        evaluate_fast(random_batch_policy(0), "greedy", 0)


@pytest.mark.slow  # trains, then evaluates in a second process
def test_scopa_eval_fast_plays_a_checkpoint_on_the_compiled_core(tmp_path, tiny_fast_config, scopa_cli):
    from train.sb3.trainer import train

    run = train(tiny_fast_config("name=cli", "algo=ppo"), report=False)

    def scopa(*args):
        return scopa_cli("eval", *args, "--no-progress")

    ok = scopa(f"ppo:{run.dir}/best", "greedy", "--games", "20", "--fast", "--json", str(tmp_path / "r.json"))
    assert ok.returncode == 0, ok.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["agents"][0]["agent"] == f"ppo:{run.dir}/best" and report["agents"][0]["games"] == 40
    for args, message in [
        (("search", "greedy"), "compiled baseline"),
        ((f"ppo:{run.dir}/best", "search"), "compiled"),
        ((f"ppo:{run.dir}/best", "greedy", "--rules", "escoba"), "escoba"),
    ]:
        bad = scopa(*args, "--fast")
        assert bad.returncode == 2 and message in bad.stderr, bad.stderr


def test_every_checkpoint_prefix_is_registered_by_importing_train():
    """``ppo:``, ``dqn:`` and ``rllib:`` specs reach their loaders (a missing path names itself)."""
    import train  # noqa: F401
    from agents.registry import make_agent

    for prefix in ("ppo", "dqn", "rllib"):
        with pytest.raises(FileNotFoundError, match="no-such-run"):
            make_agent(f"{prefix}:no-such-run/best")


def test_a_seeded_fast_vec_env_resets_the_same_way_every_time():
    """After ``seed``, the first reset and every later (unseeded) reset are reproducible."""
    from scopa_env.fast.vec_env import ScopaSB3VecEnv

    runs = []
    for _ in range(2):
        v = ScopaSB3VecEnv(4, 2, "standard", opponent="greedy", learner_seat="random")
        v.seed(5)
        runs.append([v.reset().copy() for _ in range(3)])
    for a, b in zip(*runs):
        assert np.array_equal(a, b)
    assert not np.array_equal(runs[0][0], runs[0][1]), "a later reset deals new games"
