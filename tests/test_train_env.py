"""The single-agent training env: rewards reach the learner, observations are the AEC ones
from the learner's seat, seats are drawn at random, masks work through SB3's VecEnvs."""

from collections import Counter

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from agents.random_agent import RandomAgent  # noqa: E402
from scopa_env import scopa_v0  # noqa: E402
from scopa_env.engine.game import Game  # noqa: E402
from scopa_env.engine.observation import ObservationLayout, write_observation  # noqa: E402
from train.env import ScopaGymEnv, observe_view  # noqa: E402
from train.opponents import Curriculum, OpponentSampler, normalize_weights  # noqa: E402


def random_episode(env: ScopaGymEnv, rng: np.random.Generator, seed=None):
    """Play one episode with a random legal learner; yields (obs, reward, terminated, info) per step."""
    obs, info = env.reset(seed=seed)
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated, "the env never truncates"
        yield obs, reward, terminated, info
        if terminated:
            return


def expected_hand_reward(hand: list[dict], side: int, mode: str) -> float:
    totals = [row["total"] for row in hand]
    if mode == "points":
        others = [t for s, t in enumerate(totals) if s != side]
        return totals[side] - sum(others) / len(others)
    best = max(totals)
    return 0.0 if totals.count(best) > 1 else (1.0 if totals[side] == best else -1.0)


@pytest.mark.parametrize("reward", ["game", "points"])
def test_learner_gets_the_losing_reward_when_an_opponent_ends_the_hand(reward):
    """The hand's last card is often an opponent's: the learner must still receive its result."""
    env = ScopaGymEnv(opponents="greedy", episode="hand", reward=reward)
    rng = np.random.default_rng(0)
    opponent_ended_losses = 0
    for ep in range(150):
        steps = list(random_episode(env, rng, seed=ep))
        total = sum(r for _, r, _, _ in steps)
        info = steps[-1][3]
        last_seat = env.game.history[-1][0]
        expected = expected_hand_reward(info["hand_scores"][-1], info["side"], reward)
        assert total == pytest.approx(expected), f"episode {ep}: learner got {total}, hand result says {expected}"
        if last_seat != env.seat and expected < 0:
            opponent_ended_losses += 1
    assert opponent_ended_losses > 10, "the test must cover losses ended by an opponent's card"


def test_game_episode_reward_is_plus_minus_one_and_points_sum_to_the_game_margin():
    rng = np.random.default_rng(1)
    env = ScopaGymEnv(opponents="random", episode="game", reward="game")
    for ep in range(10):
        rewards = [r for _, r, _, _ in random_episode(env, rng, seed=ep)]
        assert all(r == 0 for r in rewards[:-1]), "game reward comes only at the end"
        side = env.game.side_of[env.seat]
        assert rewards[-1] == (1.0 if env.game.winner == side else -1.0)
    env = ScopaGymEnv(opponents="random", episode="game", reward="points")
    for ep in range(5):
        steps = list(random_episode(env, rng, seed=ep))
        info = steps[-1][3]
        margin = sum(expected_hand_reward(h, info["side"], "points") for h in info["hand_scores"])
        assert sum(r for _, r, _, _ in steps) == pytest.approx(margin), "every hand's margin is delivered"


@pytest.mark.parametrize("mode", ["select", "move"])
@pytest.mark.parametrize("n", [2, 4])
def test_observation_and_mask_are_the_aec_envs_from_the_learners_seat(mode, n):
    env = ScopaGymEnv(num_players=n, opponents="random", action_mode=mode, episode="game", reward="points")
    raw = scopa_v0.raw_env(num_players=n, action_mode=mode)
    raw.reset(seed=0)
    rng = np.random.default_rng(2)
    checked = 0
    for ep in range(3):
        obs, _ = env.reset(seed=ep)
        done = False
        while not done:
            # Put the AEC env in the same position and ask it for the learner's observation.
            raw.game, raw._pending_card, raw._selected, raw._legal_ids = env.game, env._pending, env._selected, None
            if env._pending is not None:  # the named card's outcomes, which the AEC env keeps while it is pending
                raw._pending_outcomes = env.game.card_outcomes(env._pending)
            raw.agent_selection = raw.possible_agents[env.game.current]
            aec = raw.observe(f"player_{env.seat}")
            assert env.game.current == env.seat, "the learner is asked only on its own turn"
            np.testing.assert_array_equal(obs, aec["observation"], err_msg="observation differs from the AEC env's")
            np.testing.assert_array_equal(env.action_masks(), aec["action_mask"].astype(bool), err_msg="mask differs")
            layout = ObservationLayout(n)
            hand = np.flatnonzero(obs[layout["hand"]])
            assert set(hand) == {c for c in range(40) if env.game.hands[env.seat] >> c & 1}, "hand is the learner's"
            checked += 1
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, _, done, _, _ = env.step(action)
    assert checked > 50


def test_observe_view_matches_write_observation():
    """Checkpoint agents rebuild the observation from the PlayerView alone."""
    rng = np.random.default_rng(3)
    for n in (2, 3, 4):
        game = Game(n, seed=n)
        layout = ObservationLayout(n)
        for _ in range(30):
            seat = game.current
            out = np.empty(layout.size, dtype=np.float32)
            np.testing.assert_array_equal(
                observe_view(game.view(seat), layout), write_observation(game, seat, layout, out)
            )
            pairs = game.legal_pairs()
            game.play_pair(*pairs[int(rng.integers(len(pairs)))])


def test_seat_is_random_each_episode_and_opponents_fill_the_rest():
    for n in (2, 4):
        env = ScopaGymEnv(num_players=n, opponents="random")
        seats = Counter()
        for ep in range(200):
            env.reset(seed=ep)
            seats[env.seat] += 1
            assert env._seats[env.seat] is None and all(
                a is not None for i, a in enumerate(env._seats) if i != env.seat
            )
        assert set(seats) == set(range(n)), f"every seat must be drawn with {n} players: {seats}"
        assert min(seats.values()) > 200 / n / 2
    env = ScopaGymEnv(learner_seat=1)
    assert {env.reset(seed=s)[1]["seat"] for s in range(20)} == {1}


def test_seeded_reset_replays_the_episode():
    a, b = ScopaGymEnv(opponents="greedy"), ScopaGymEnv(opponents="greedy")
    for seed in range(5):
        oa, _ = a.reset(seed=seed)
        ob, _ = b.reset(seed=seed)
        np.testing.assert_array_equal(oa, ob)
        done = False
        while not done:
            act = int(np.flatnonzero(a.action_masks())[0])
            oa, ra, done, _, _ = a.step(act)
            ob, rb, _, _, _ = b.step(act)
            np.testing.assert_array_equal(oa, ob)
            assert ra == rb


def test_illegal_actions_raise_or_lose_but_are_never_coerced():
    env = ScopaGymEnv()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)
    env = ScopaGymEnv(illegal_action="lose", illegal_reward=-2.0)
    env.reset(seed=0)
    _, r, terminated, _, info = env.step(illegal)
    assert (r, terminated, info["illegal_action"]) == (-2.0, True, True)
    assert not env.action_masks().any()


def test_sb3_check_env():
    from stable_baselines3.common.env_checker import check_env

    for mode in ("select", "move"):
        check_env(ScopaGymEnv(action_mode=mode, illegal_action="lose"))


def test_action_masks_through_subproc_vec_env():
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = SubprocVecEnv([lambda: ScopaGymEnv(opponents="greedy") for _ in range(2)], start_method="spawn")
    try:
        venv.seed(0)
        venv.reset()
        rng = np.random.default_rng(0)
        for _ in range(40):
            masks = get_action_masks(venv)
            assert masks.shape == (2, 41) and masks.any(axis=1).all()
            venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        venv.env_method("set_opponents", {"random": 1.0})
    finally:
        venv.close()


def test_opponent_mixture_curriculum_and_pool():
    assert normalize_weights("greedy") == {"greedy": 1.0}
    assert normalize_weights(["random", "greedy"]) == {"random": 1.0, "greedy": 1.0}
    with pytest.raises(ValueError):
        normalize_weights({"greedy": -1})
    sampler = OpponentSampler({"random": 3, "greedy": 1})
    rng = np.random.default_rng(0)
    names = Counter(sampler.sample(rng).name for _ in range(400))
    assert 250 < names["random"] < 350, f"3:1 mixture, got {names}"
    sampler.add_checkpoint("x")
    sampler.add_checkpoint("y")
    assert sampler.pool == ["x", "y"]
    sampler.pool_size = 1
    sampler.add_checkpoint("z")
    assert sampler.pool == ["z"]
    cur = Curriculum(["random", "greedy", "heuristic"], threshold=0.6)
    assert not cur.update(0.5, 100) and cur.current == "random"
    assert cur.update(0.7, 200) and cur.current == "greedy"
    assert cur.update(0.9, 300) and not cur.update(0.9, 400) and cur.current == "heuristic"
    assert cur.history == [(200, 1), (300, 2)]


def test_policy_agent_plays_legal_moves_in_both_modes():
    from agents.evaluate import evaluate
    from agents.registry import register_agent_factory
    from train.sb3.policy_agent import PolicyAgent

    for mode in ("select", "move"):
        rng = np.random.default_rng(0)

        def policy(obs, mask, rng=rng):
            return int(rng.choice(np.flatnonzero(mask)))

        register_agent_factory(
            "testpolicy",
            lambda arg, seed=None, mode=mode, policy=policy: PolicyAgent(
                policy, 2, "standard", mode, name="testpolicy"
            ),
        )
        report = evaluate(["testpolicy:x", "random"], games=3)
        assert report["forfeits"] == [], f"{mode}: {report['forfeits']}"
    assert isinstance(RandomAgent(), RandomAgent)
