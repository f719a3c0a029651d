"""The PPO warm start: the compiled teacher's decisions as "select" actions, and cloning them."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from scopa_env.fast.vec_env import ScopaSB3VecEnv  # noqa: E402
from train.config import ConfigError, TrainConfig  # noqa: E402
from train.sb3.pretrain import clone, collect_teacher  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def venv(opponent: str, n: int = 32) -> ScopaSB3VecEnv:
    v = ScopaSB3VecEnv(n, 2, "standard", opponent=opponent, learner_seat="random", episode="hand", reward="points")
    v.seed(11)
    return v


def test_the_teacher_plays_as_itself():
    """Every recorded action is legal (collect_teacher checks each against the mask), and the
    teacher's results are its own: greedy crushes random, heuristic against heuristic is even."""
    strong = collect_teacher(venv("random"), "greedy", 6000, gamma=1.0)
    assert strong.returns.mean() > 1.0, "greedy's hand margin against random"
    even = collect_teacher(venv("heuristic"), "heuristic", 6000, gamma=1.0)
    assert abs(even.returns.mean()) < 0.5, "the heuristic against itself"
    assert strong.masks[np.arange(len(strong.actions)), strong.actions].all()
    captures = (strong.obs[:, 375] == 1).sum()  # "select" phase: choosing captures
    assert captures > 0, "capture choices are decisions too"


@pytest.mark.slow  # clones the heuristic for real
def test_cloning_learns_the_teachers_choices():
    from sb3_contrib import MaskablePPO

    v = venv("greedy")
    data = collect_teacher(v, "greedy", 4000, gamma=1.0)
    model = MaskablePPO("MlpPolicy", v, policy_kwargs={"net_arch": [64]}, seed=0, device="cpu")
    first = clone(model.policy, data, 1, 128, 0.5, seed=0)
    later = clone(model.policy, data, 12, 128, 0.5, seed=1)
    assert later["bc_loss"] < first["bc_loss"] and later["agreement"] > 0.8


def test_unknown_teacher_is_refused():
    with pytest.raises(ValueError, match="teacher"):
        collect_teacher(venv("greedy"), "search", 100, gamma=1.0)


def test_pretrain_needs_ppo_select_and_the_compiled_core(tmp_path):
    base = ROOT / "configs" / "quickstart.yaml"
    with pytest.raises(ConfigError, match="pretrain needs"):
        TrainConfig.load(base, [f"runs_dir={tmp_path}", "pretrain=heuristic", "algo=ppo"])
    with pytest.raises(ConfigError, match="pretrain"):
        TrainConfig.load(base, [f"runs_dir={tmp_path}", "pretrain=search", "algo=ppo", "vec_env=fast"])


def test_a_warm_started_run_evaluates_the_clone_at_step_zero(tiny_fast_config):
    from train.run import CSV_FILE
    from train.sb3.trainer import train

    cfg = tiny_fast_config(
        "name=warm",
        "algo=ppo",
        "pretrain=greedy",
        "pretrain_steps=2000",
        "pretrain_epochs=2",
        "pretrain_rounds=2",
        "eval_every=1024",
        "eval_pairs=4",
    )
    run = train(cfg, report=False)
    rows = (run.dir / CSV_FILE).read_text().splitlines()
    assert rows[1].startswith("0,"), "the clone is evaluated before PPO's first step"
    assert len(rows) == 3, "then once at the end"


def test_dagger_rounds_label_the_positions_the_clone_reaches():
    """With an actor, the teacher labels every card choice and the capture choices of its own move."""
    v = venv("greedy")
    rng = np.random.default_rng(0)

    def actor(obs, masks):
        return np.array([rng.choice(np.flatnonzero(m)) for m in masks])

    data = collect_teacher(v, "heuristic", 4000, gamma=1.0, actor=actor)
    assert data.masks[np.arange(len(data.actions)), data.actions].all(), "labels are legal"
    card_choices = data.obs[:, 375] == 0
    assert card_choices.mean() > 0.5 and len(data.actions) <= 4000 + 32
    assert (data.actions[card_choices] < 40).all(), "a card choice is labelled with a card"
