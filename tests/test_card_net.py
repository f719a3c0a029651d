"""The card-wise policy network (``policy_net: cards``)."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from scopa_env.engine.observation import ObservationLayout  # noqa: E402
from scopa_env.engine.rules import get_rules  # noqa: E402
from train.config import ConfigError, TrainConfig  # noqa: E402
from train.sb3.card_net import card_layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("n, rules", [(2, "standard"), (4, "standard"), (3, "scopa_bazzica"), (2, "cirulla")])
def test_card_layout_reads_every_entry_once(n, rules):
    layout = ObservationLayout.for_rules(n, get_rules(rules))
    lay = card_layout(layout)
    assert sorted(lay["planes"] + lay["globals"]) == list(range(layout.size))
    assert len(lay["planes"]) == 40 * layout.num_planes


def test_cards_network_is_for_ppo_in_select_mode(tmp_path):
    base = ROOT / "configs" / "quickstart.yaml"
    with pytest.raises(ConfigError, match="policy_net cards"):
        TrainConfig.load(base, [f"runs_dir={tmp_path}", "policy_net=cards", "algo=dqn"])
    with pytest.raises(ConfigError, match="policy_net cards"):
        TrainConfig.load(base, [f"runs_dir={tmp_path}", "policy_net=cards", "algo=ppo", "action_mode=move"])
    with pytest.raises(ConfigError, match="policy_net"):
        TrainConfig.load(base, [f"runs_dir={tmp_path}", "policy_net=transformer"])


def test_cards_policy_trains_saves_and_plays_legal_moves(tiny_fast_config):
    from train.sb3.policy_agent import load_batch_policy
    from train.sb3.trainer import train

    cfg = tiny_fast_config("name=cards", "algo=ppo", "policy_net=cards", "eval_opponents=[greedy]")
    run = train(cfg, report=False)
    policy, meta = load_batch_policy(run.dir / "best")
    assert meta["policy_net"] == "cards"
    from scopa_env.fast import BatchedScopa

    b = BatchedScopa(64, 2, "standard", episode="hand", reward="points", opponent="greedy", learner_seat="random")
    b.reset(np.arange(64))
    for _ in range(30):
        masks = b.dense_move_mask().astype(bool)
        actions = policy(b.obs.copy(), masks)
        assert masks[np.arange(64), actions].all(), "the loaded policy picks legal actions only"
        b.step(actions)
