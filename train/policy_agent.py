"""Trained policies as agents: ``ppo:PATH`` and ``dqn:PATH`` in :func:`agents.registry.make_agent`.

A checkpoint is a folder (``runs/<name>/best``, ``runs/<name>/latest``) holding the model
(``model.zip`` for PPO, ``model.pt`` for DQN) and ``meta.json``: the algorithm, the action
mode, the player count, the rules preset and the observation size. ``PATH`` may also be a
run folder (its ``best`` checkpoint is used).

The agent sees only its :class:`~scopa_env.game.PlayerView`; it rebuilds the AEC observation
from it (:func:`train.env.observe_view`) and picks the masked greedy action of the policy.
In "select" mode one move takes several policy calls (card, then captured cards).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agents.base import Agent
from scopa_env.game import PlayerView
from scopa_env.observation import ObservationLayout
from scopa_env.rules import Move, get_rules, move_of

META_FILE = "meta.json"
MODEL_FILES = {"ppo": "model.zip", "dqn": "model.pt"}

PolicyFn = Callable[[np.ndarray, np.ndarray], int]
"""``policy(observation, bool_mask) -> action id`` (masked, deterministic)."""


class PolicyAgent(Agent):
    """An agent that plays a policy over the env's observation and action ids.

    Args:
        policy: the masked policy (see :data:`PolicyFn`).
        num_players: the player count the policy was trained for.
        rules: preset name or rules.
        action_mode: "move" or "select".
        name: shown in reports.
    """

    def __init__(self, policy: PolicyFn, num_players: int, rules, action_mode: str, name: str = "policy", seed=None):
        super().__init__(seed)
        from train.env import ActionCoder

        self.policy = policy
        self.rules = get_rules(rules)
        self.num_players = num_players
        self.layout = ObservationLayout.for_rules(num_players, self.rules)
        self.coder = ActionCoder(self.rules, action_mode)
        self.name = name

    def act(self, view: PlayerView) -> Move:
        from train.env import observe_view

        if view.num_players != self.num_players or view.rules != self.rules:
            raise ValueError(
                f"{self.name} was trained for {self.num_players} players with rules {self.rules.name!r}, "
                f"not {view.num_players} players with {view.rules.name!r}"
            )
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        pending, selected = None, 0
        mask = np.zeros(self.coder.num_actions, dtype=bool)
        for _ in range(64):  # a move takes at most 1 + 40 + 1 "select" actions
            obs = observe_view(view, self.layout, pending, selected)
            mask[:] = False
            mask[self.coder.legal_ids(pairs, pending, selected)] = True
            action = int(self.policy(obs, mask))
            if not mask[action]:
                raise ValueError(f"{self.name} chose the illegal action {action}")
            pair, pending, selected = self.coder.resolve(pairs, action, pending, selected)
            if pair is not None:
                return move_of(*pair)
        raise RuntimeError("select-mode choice did not finish")

    def __repr__(self) -> str:
        return f"PolicyAgent({self.name})"


def write_meta(folder: Path, meta: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")


def find_checkpoint(path: str | Path) -> Path:
    """The checkpoint folder named by ``path`` (a checkpoint or a run folder)."""
    p = Path(path)
    if p.is_dir() and not (p / META_FILE).exists() and (p / "best" / META_FILE).exists():
        p = p / "best"
    if not p.exists():
        raise FileNotFoundError(f"no checkpoint at {str(path)!r}")
    if not (p / META_FILE).exists():
        raise FileNotFoundError(f"{str(path)!r} is not a checkpoint folder (no {META_FILE}); use runs/<name>/best")
    return p


def read_meta(path: str | Path) -> dict:
    return json.loads((find_checkpoint(path) / META_FILE).read_text())


def load_policy(path: str | Path, algo: str | None = None) -> tuple[PolicyFn, dict]:
    """The masked greedy policy of a checkpoint and its metadata."""
    folder = find_checkpoint(path)
    meta = json.loads((folder / META_FILE).read_text())
    if algo is not None and meta["algo"] != algo:
        raise ValueError(f"{str(path)!r} is a {meta['algo']} checkpoint, not {algo}: use '{meta['algo']}:{path}'")
    model_file = folder / MODEL_FILES[meta["algo"]]
    if meta["algo"] == "ppo":
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(model_file, device="cpu")

        def policy(obs: np.ndarray, mask: np.ndarray) -> int:
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            return int(action)

    else:
        from train.dqn import load_q_network

        qnet = load_q_network(model_file)
        policy = qnet.greedy_action
    return policy, meta


def load_batch_policy(path: str | Path) -> tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], dict]:
    """The masked greedy policy of a checkpoint over a batch (``(B, size)``, ``(B, A)`` -> ``(B,)``), and its metadata."""
    folder = find_checkpoint(path)
    meta = json.loads((folder / META_FILE).read_text())
    model_file = folder / MODEL_FILES[meta["algo"]]
    if meta["algo"] == "ppo":
        from sb3_contrib import MaskablePPO

        return ppo_batch_policy(MaskablePPO.load(model_file, device="cpu")), meta
    from train.dqn import load_q_network

    return load_q_network(model_file).greedy_actions, meta


def ppo_batch_policy(model) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        return actions

    return policy


def load_checkpoint_agent(path: str, seed=None, algo: str | None = None) -> PolicyAgent:
    policy, meta = load_policy(path, algo)
    return PolicyAgent(
        policy, meta["num_players"], meta["rules"], meta["action_mode"], name=f"{meta['algo']}:{path}", seed=seed
    )


def register() -> None:
    """Register the ``ppo:`` and ``dqn:`` prefixes in the agent registry."""
    from agents.registry import register_agent_factory

    register_agent_factory("ppo", lambda path, seed=None: load_checkpoint_agent(path, seed, "ppo"))
    register_agent_factory("dqn", lambda path, seed=None: load_checkpoint_agent(path, seed, "dqn"))
