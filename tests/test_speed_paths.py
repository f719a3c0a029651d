"""Fast paths that must not change a result: each is held equal to the slower reference it replaced.

Speed itself is measured by ``scopa bench`` (``scopa_env/bench.py``), never asserted here.
"""

from __future__ import annotations

import numpy as np
import pytest

# --- PPO's rollout step (train/masked_policy.py) ------------------------------------------


def _policies(num_actions: int, obs_size: int = 24, card_net: bool = False):
    """A :class:`MaskedPolicy` (or the card-wise one) and the stock policy, or the same
    policy called through the stock ``forward``: same weights either way."""
    th = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train.masked_policy import MaskedPolicy

    th.manual_seed(0)
    if card_net:
        from train.card_net import CardPolicy, card_policy_kwargs

        kwargs = card_policy_kwargs(2, "standard", embed=8, trunk=16)
        obs_space = spaces.Box(-np.inf, np.inf, (376,), np.float32)
        fast = CardPolicy(obs_space, spaces.Discrete(num_actions), lambda _: 3e-4, **kwargs)
        return fast, lambda *a, **k: MaskableActorCriticPolicy.forward(fast, *a, **k), 376
    obs_space = spaces.Box(-np.inf, np.inf, (obs_size,), np.float32)
    fast = MaskedPolicy(obs_space, spaces.Discrete(num_actions), lambda _: 3e-4, net_arch=[16])
    stock = MaskableActorCriticPolicy(obs_space, spaces.Discrete(num_actions), lambda _: 3e-4, net_arch=[16])
    stock.load_state_dict(fast.state_dict())
    return fast, stock, obs_size


@pytest.mark.parametrize(
    ("num_actions", "card_net"), [(41, False), (300, False), (41, True)], ids=["select", "wide", "cards"]
)
def test_masked_policy_rollout_step_equals_the_stock_distribution(num_actions, card_net):
    """MaskedPolicy.forward gives the stock MaskableCategorical's actions, values and
    log-probabilities bit for bit, sampled (same torch seed) and deterministic, with masks
    that leave one legal action, a few, or all of them, and without a mask."""
    import torch as th

    fast, stock, obs_size = _policies(num_actions, card_net=card_net)
    rng = np.random.default_rng(1)
    for trial in range(12):
        batch = 1 + trial % 5
        obs = th.as_tensor(rng.random((batch, obs_size), dtype=np.float32) * 4 - 2)
        density = (0.0, 0.05, 0.5, 1.0)[trial % 4]
        masks = rng.random((batch, num_actions)) < density
        masks[np.arange(batch), rng.integers(num_actions, size=batch)] = True  # at least one legal action
        for deterministic in (False, True):
            for mask in (masks, None) if trial < 2 else (masks,):
                seed = 100 + trial
                with th.no_grad():
                    th.manual_seed(seed)
                    a1, v1, lp1 = fast(obs, deterministic=deterministic, action_masks=mask)
                    th.manual_seed(seed)
                    a2, v2, lp2 = stock(obs, deterministic=deterministic, action_masks=mask)
                where = f"trial {trial}, deterministic={deterministic}, mask={'none' if mask is None else density}"
                assert th.equal(a1, a2), f"actions differ ({where}): {a1} vs {a2}"
                assert th.equal(v1, v2), f"values differ ({where})"
                assert th.equal(lp1, lp2), f"log-probabilities differ ({where}): {lp1} vs {lp2}"
                if mask is not None:
                    assert masks[np.arange(batch), a1.numpy()].all(), f"an illegal action was drawn ({where})"
