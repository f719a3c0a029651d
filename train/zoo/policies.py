"""PPO and DQN entries of the zoo: a Stable-Baselines3-path checkpoint as plain arrays and JSON.

A PPO or DQN entry holds the same three files as a DMC entry::

    meta.json      the checkpoint's metadata (train/checkpoint.py: algo, action_mode,
                   num_players, rules, net_arch, policy_net, observation_size, num_actions)
    weights.npz    the network's state dict as float32 arrays, read with allow_pickle=False
    card.json      the model card (train/zoo/__init__.py)

Loading checks ``meta.json`` (:func:`train.checkpoint.check_meta`: the game, the sizes, the
parameter bound), builds the network it describes, compares every array's name and shape in
``weights.npz`` with that network's from the file's headers (:func:`train.limits.read_npz`)
before reading any data, and then puts the weights in. Nothing in the files is executed, as
for the DMC entries; the ``.pt`` files of a run folder are never shipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from train.checkpoint import check_finite, check_meta, load_state
from train.limits import read_json, read_npz, shown

ALGOS = ("ppo", "dqn")
"""Algorithms whose checkpoints a zoo entry may hold besides DMC."""
WEIGHTS_FILE = "weights.npz"
META_FILE = "meta.json"
META_KEYS = (
    "algo",
    "action_mode",
    "num_players",
    "rules",
    "net_arch",
    "policy_net",
    "observation_size",
    "num_actions",
    "timestep",
    "run",
)
"""The keys of a checkpoint's ``meta.json`` an entry keeps."""


def build_network(meta: dict[str, Any], where: str | Path):
    """The untrained network a checked PPO or DQN ``meta`` describes (PPO: the MaskablePPO policy;
    DQN: the Q-network)."""
    from train.checkpoint import build_ppo_policy

    setup = check_meta(meta, where)
    if meta["algo"] == "ppo":
        return build_ppo_policy(meta, where)
    from train.sb3.networks import QNetwork

    return QNetwork(setup.observation_size, setup.num_actions, list(meta["net_arch"]))


def read_entry_meta(folder: Path) -> dict[str, Any]:
    """An entry's ``meta.json``, a PPO or DQN one (named in the error otherwise)."""
    file = folder / META_FILE
    meta = read_json(file)
    if not isinstance(meta, dict) or meta.get("algo") not in ALGOS:
        algo = meta.get("algo") if isinstance(meta, dict) else None
        raise ValueError(f"{file}: not a PPO or DQN entry (algo {shown(algo)})")
    return meta


def load_network(folder: Path):
    """The network of a PPO or DQN entry, in evaluation mode, and its metadata.

    Raises:
        ValueError: a bad ``meta.json``, or weights whose names or shapes are not the network's
            (one line naming the file).
    """
    import torch

    meta = read_entry_meta(folder)
    net = build_network(meta, folder / META_FILE)
    expected = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    file = folder / WEIGHTS_FILE

    def check(shapes: dict) -> None:
        got = {k: tuple(shape) for k, (shape, _) in shapes.items()}
        if set(got) != set(expected):
            missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
            raise ValueError(
                f"{file}: the arrays are not the network meta.json describes (missing {shown(missing)}, "
                f"unexpected {shown(extra)})"
            )
        wrong = [k for k in sorted(got) if got[k] != expected[k]]
        if wrong:
            k = wrong[0]
            raise ValueError(f"{file}: {k} has shape {got[k]}, the network needs {expected[k]}")

    arrays = read_npz(file, check)
    check_finite(arrays, str(file))
    load_state(net, {k: torch.as_tensor(np.asarray(v, np.float32)) for k, v in arrays.items()}, str(file))
    if meta["algo"] == "ppo":
        net.set_training_mode(False)
    else:
        net.eval()
    return net, meta


def batch_policy(net, meta: dict[str, Any]):
    """The masked greedy batch policy (``(B, size)``, ``(B, A)`` -> ``(B,)``) of a loaded entry."""
    from train.checkpoint import ppo_batch_policy

    return ppo_batch_policy(net) if meta["algo"] == "ppo" else net.greedy_actions


def single_policy(net, meta: dict[str, Any]):
    """The masked greedy :data:`train.sb3.policy_agent.PolicyFn` of a loaded entry."""
    from train.checkpoint import ppo_predictor

    return ppo_predictor(net) if meta["algo"] == "ppo" else net.greedy_action


def export_checkpoint(src: str | Path, dest: Path) -> dict[str, Any]:
    """Write ``dest/weights.npz`` and ``dest/meta.json`` from a run's PPO or DQN checkpoint folder
    (loaded the kit's way: weights only, checked); returns the metadata written."""
    from train.sb3.policy_agent import _open

    folder, meta = _open(src, None)
    if meta["algo"] not in ALGOS:
        raise ValueError(f"{src}: a {meta['algo']} checkpoint, not PPO or DQN")
    if meta["algo"] == "ppo":
        from train.checkpoint import load_ppo_policy

        net = load_ppo_policy(folder, meta)
    else:
        from train.checkpoint import load_dqn

        net = load_dqn(folder, meta)
    kept = {k: meta[k] for k in META_KEYS if k in meta}
    kept.setdefault("policy_net", "mlp")
    dest.mkdir(parents=True, exist_ok=True)
    arrays = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    np.savez(dest / WEIGHTS_FILE, **arrays)
    (dest / META_FILE).write_text(json.dumps(kept, indent=2) + "\n")
    return kept


__all__ = ["ALGOS", "batch_policy", "build_network", "export_checkpoint", "load_network", "single_policy"]
