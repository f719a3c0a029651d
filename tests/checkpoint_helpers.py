"""A PPO checkpoint folder as training writes it, for the tests that load, damage or refuse one
(``tests/test_checkpoints.py``, ``tests/test_cli.py``, ``tests/test_web.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest


def ppo_meta(**changes) -> dict:
    meta = {
        "algo": "ppo",
        "num_players": 2,
        "rules": "standard",
        "action_mode": "select",
        "net_arch": [16],
        "policy_net": "mlp",
        "observation_size": 376,
        "num_actions": 41,
        "timestep": 0,
        "run": "test",
    }
    return {**meta, **changes}


def make_ppo_checkpoint(folder: Path, **changes):
    """A PPO checkpoint folder as training writes it; returns the policy."""
    pytest.importorskip("sb3_contrib")
    from train.checkpoint import build_ppo_policy, save_ppo, write_meta

    meta = ppo_meta(**changes)
    policy = build_ppo_policy(meta)
    folder.mkdir(parents=True, exist_ok=True)
    save_ppo(folder, policy)
    write_meta(folder, meta)
    return policy
