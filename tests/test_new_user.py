"""What a new user tries first: ``gymnasium.make``."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


# --- 1. gymnasium.make ---------------------------------------------------------------------------


def test_make_registers_without_torch():
    """``gymnasium.make("train.env:scopa_rl/Scopa-v0")`` works in a fresh process and imports no torch."""
    code = (
        "import sys, gymnasium as gym\n"
        "env = gym.make('train.env:scopa_rl/Scopa-v0')\n"
        "env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, 'torch' in sys.modules)\n"
    )
    done = run_python("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ScopaGymEnv", "False"], f"registered env, no torch: {done.stdout!r}"


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"episode": "game", "num_players": 4}, {"rules": "piva", "episode": "game"}, {"action_mode": "move"}],
    ids=["default", "scopone-game", "piva", "move"],
)
def test_made_env_passes_gymnasium_and_sb3_checkers(kwargs):
    """What ``make`` returns passes both env checkers with warnings turned into errors."""
    pytest.importorskip("stable_baselines3")
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    import train.env  # noqa: F401  (registers the id)

    env = gym.make("scopa_rl/Scopa-v0", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
        sb3_check_env(env.unwrapped)
    assert np.isfinite(env.observation_space.high).all(), "the registered env's Box is bounded"


def test_direct_env_keeps_its_defaults():
    """``ScopaGymEnv()`` (what ``scopa train`` builds) still raises on illegal actions and leaves scores unbounded."""
    from train.env import ScopaGymEnv

    env = ScopaGymEnv()
    assert env.illegal_action == "raise"
    assert np.isinf(env.observation_space.high[env.layout["scores"]]).all(), "no clipping unless asked"
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="legal actions"):
        env.step(illegal)


def test_score_bound_clips_the_scores_entries():
    """Past ``score_bound`` times the target the scores entries are clipped, so observations stay in the Box."""
    from train.env import ScopaGymEnv

    env = ScopaGymEnv(episode="game", score_bound=2.0)
    env.reset(seed=1)
    env.game.scores[:] = [5 * env.rules.target, env.rules.target]
    obs = env._observe()
    assert obs[env.layout["scores"]].tolist() == [2.0, 1.0], "own side's 5x target shows as 2.0"
    assert env.observation_space.contains(obs)
    with pytest.raises(ValueError, match="score_bound"):
        ScopaGymEnv(score_bound=float("inf"))
