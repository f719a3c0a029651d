"""Trained policies as agents: ``ppo:PATH`` and ``dqn:PATH`` in :func:`agents.registry.make_agent`.

A checkpoint is a folder (``runs/<name>/best``, ``runs/<name>/latest``) holding the weights
(``policy.pt`` for PPO, ``model.pt`` for DQN) and ``meta.json``: the algorithm, the action
mode, the player count, the rules preset and the network; :mod:`train.checkpoint` loads it
without running code from the files. ``PATH`` may also be a run folder (its ``best``
checkpoint is used).

The agent sees only its :class:`~scopa_env.engine.game.PlayerView`; it rebuilds the AEC observation
from it (:func:`train.env.observe_view`) and picks the masked greedy action of the policy.
In "select" mode one move takes several policy calls (card, then captured cards).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from agents.base import TrainedAgent
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move, move_of
from scopa_env.engine.setup import GameSetup
from train.checkpoint import (  # noqa: F401  (META_FILE, MODEL_FILES, write_meta: re-exported for older imports)
    META_FILE,
    MODEL_FILES,
    find_checkpoint,
    load_dqn,
    load_ppo_policy,
    ppo_batch_policy,
    ppo_predictor,
    read_meta,
    write_meta,
)

PolicyFn = Callable[[np.ndarray, np.ndarray], int]
"""``policy(observation, bool_mask) -> action id`` (masked, deterministic)."""


class PolicyAgent(TrainedAgent):
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
        self.setup = GameSetup.of(rules, num_players, action_mode)
        """The game the policy was trained for: :class:`~scopa_env.engine.setup.GameSetup`."""
        self.rules = self.setup.rules
        self.num_players = self.setup.num_players
        self.layout = self.setup.layout
        self.coder = ActionCoder(self.setup)
        self.name = name

    def act(self, view: PlayerView) -> Move:
        from train.env import observe_view

        problem = self.mismatch(view.num_players, view.rules)
        if problem:
            raise ValueError(problem)
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        pending, selected = None, 0
        mask = np.zeros(self.coder.num_actions, dtype=bool)
        for _ in range(64):  # a move takes at most 1 + 40 + 1 "select" actions (1 + 52 + 1 with the 52-card deck)
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


def load_policy(path: str | Path, algo: str | None = None) -> tuple[PolicyFn, dict]:
    """The masked greedy policy of a checkpoint and its metadata (weights only, see :mod:`train.checkpoint`).

    Raises:
        FileNotFoundError: no checkpoint there.
        ValueError: another kind of checkpoint than ``algo``, or a broken or refused file (named).
    """
    folder, meta = _open(path, algo)
    if meta["algo"] == "ppo":
        return ppo_predictor(load_ppo_policy(folder, meta)), meta
    return load_dqn(folder, meta).greedy_action, meta


def load_batch_policy(path: str | Path) -> tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], dict]:
    """The masked greedy policy of a checkpoint over a batch (``(B, size)``, ``(B, A)`` -> ``(B,)``), and its metadata."""
    folder, meta = _open(path, None)
    if meta["algo"] == "ppo":
        return ppo_batch_policy(load_ppo_policy(folder, meta)), meta
    return load_dqn(folder, meta).greedy_actions, meta


def _open(path: str | Path, algo: str | None) -> tuple[Path, dict]:
    folder = find_checkpoint(path)
    meta = read_meta(folder)
    if algo is not None and meta["algo"] != algo:
        prefix = "rllib" if meta["algo"].startswith("rllib") else meta["algo"]
        raise ValueError(f"{str(path)!r} is a {meta['algo']} checkpoint, not {algo}: use '{prefix}:{path}'")
    if meta["algo"] not in MODEL_FILES:
        prefix = "rllib" if meta["algo"].startswith("rllib") else meta["algo"]
        raise ValueError(f"{str(path)!r} is a {meta['algo']} checkpoint: use '{prefix}:{path}'")
    return folder, meta


def load_checkpoint_agent(path: str, seed=None, algo: str | None = None) -> PolicyAgent:
    policy, meta = load_policy(path, algo)
    return PolicyAgent(
        policy, meta["num_players"], meta["rules"], meta["action_mode"], name=f"{meta['algo']}:{path}", seed=seed
    )


def load_ppo_agent(path: str, seed=None) -> PolicyAgent:
    """Factory of ``ppo:PATH`` agent specs (the ``scopa.agents`` entry point ``ppo``)."""
    return load_checkpoint_agent(path, seed, "ppo")


def load_dqn_agent(path: str, seed=None) -> PolicyAgent:
    """Factory of ``dqn:PATH`` agent specs (the ``scopa.agents`` entry point ``dqn``)."""
    return load_checkpoint_agent(path, seed, "dqn")
