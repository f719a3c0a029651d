"""Warm start for PPO: behaviour cloning of a compiled teacher, value included (``pretrain: heuristic``).

Before PPO starts, the learner's seat is played by a compiled teacher (``greedy`` or
``heuristic``, :meth:`scopa_env.fast.BatchedScopa.choose`) against the run's opponents for
``pretrain_steps`` decisions; the policy is then fitted to the teacher's decisions
(cross-entropy over the legal actions, the same masks as in training) and the value head
to the returns those games earned (the run's reward, shaped when ``reward_shaping`` is on),
for ``pretrain_epochs`` passes. PPO then improves on the teacher against the opponents
instead of rediscovering from random play what a capture is worth.

"select" mode only: the teacher's move ``(card, captured)`` becomes the actions the env
expects: the card, then the captured cards in ascending id order, then confirm while the
choice is still open (the env plays the move as soon as only one outcome is left).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
import torch

from scopa_env.engine.actions import CONFIRM

TEACHERS = ("greedy", "heuristic")

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``policy(obs (B, size), masks (B, A) bool) -> actions (B,)``."""


@dataclass
class TeacherData:
    """Decisions of the teacher: observations, masks, actions and the returns that followed."""

    obs: np.ndarray  # float32 (T, size)
    masks: np.ndarray  # bool (T, A)
    actions: np.ndarray  # int64 (T,)
    returns: np.ndarray  # float32 (T,)


def collect_teacher(
    venv, teacher: str, steps: int, gamma: float, progress=None, actor: BatchPolicy | None = None
) -> TeacherData:
    """Play ``steps`` learner decisions in ``venv`` (a fast vec env, possibly wrapped, whose
    innermost env has ``.batch``), labelled with the compiled ``teacher``'s actions.

    Without ``actor`` the teacher plays them. With ``actor`` (the clone so far: DAgger's
    later rounds) the actor plays and the teacher labels the positions the actor reaches:
    a card choice gets the teacher's card; a capture choice gets the teacher's next capture
    only while the actor is still on the teacher's move (other capture choices are not kept).
    Returns are those of the games as played.
    """
    if teacher not in TEACHERS:
        raise ValueError(f"pretrain teacher must be one of {list(TEACHERS)}, got {teacher!r}")
    inner = venv
    while not hasattr(inner, "batch"):
        inner = inner.venv
    batch = inner.batch
    n = venv.num_envs
    phase = batch.layout["phase"].start + 1  # 1 while choosing captures
    obs = venv.reset()
    plans: list[list[int] | None] = [None] * n  # the teacher's remaining captures, None: off its move
    episode: list[list[tuple[int, float]]] = [[] for _ in range(n)]  # (index in data, reward) per row
    data_obs, data_masks, data_actions, data_kept = [], [], [], []
    returns = np.zeros(steps + n, np.float32)
    t = 0
    while t < steps:
        masks = np.asarray(venv.action_masks(), bool)
        choices = batch.choose(teacher)
        labels = np.full(n, -1, np.int64)
        for i in range(n):
            if obs[i, phase] == 0:  # choosing a card: the teacher's move from here
                card, captured = choices[i]
                plans[i] = [b for b in range(40) if captured >> b & 1]
                labels[i] = card
            elif plans[i] is not None:
                labels[i] = plans[i][0] if plans[i] else CONFIRM
            if labels[i] >= 0 and not masks[i, labels[i]]:
                raise RuntimeError(f"teacher action {labels[i]} is not legal in game {i}")
        actions = labels if actor is None else np.asarray(actor(obs.copy(), masks), np.int64)
        for i in range(n):  # follow the plan while the actions agree with it
            if plans[i] is not None and actions[i] != labels[i]:
                plans[i] = None
            elif plans[i] and obs[i, phase] == 1:
                plans[i].pop(0)
        kept = labels >= 0
        data_obs.append(obs.copy())
        data_masks.append(masks.copy())
        data_actions.append(labels)
        data_kept.append(kept)
        obs, rewards, dones, _ = venv.step(actions)
        for i in range(n):
            episode[i].append((t + i, float(rewards[i])))
            if dones[i]:
                _fill_returns(returns, episode[i], gamma)
                episode[i] = []
        t += n
        if progress is not None:
            progress(n)
    # Decisions of unfinished episodes keep the return so far as their target (a small bias at the end).
    for rows in episode:
        _fill_returns(returns, rows, gamma)
    keep = np.concatenate(data_kept)
    return TeacherData(
        np.concatenate(data_obs)[keep],
        np.concatenate(data_masks)[keep],
        np.concatenate(data_actions)[keep],
        returns[:t][keep],
    )


def _fill_returns(returns: np.ndarray, rows: list[tuple[int, float]], gamma: float) -> None:
    g = 0.0
    for k, r in reversed(rows):
        g = r + gamma * g
        returns[k] = g


def merge(a: TeacherData, b: TeacherData) -> TeacherData:
    """Both datasets in one (DAgger's aggregation)."""
    return TeacherData(*(np.concatenate([getattr(a, f.name), getattr(b, f.name)]) for f in fields(TeacherData)))


def clone(
    policy, data: TeacherData, epochs: int, batch_size: int, vf_coef: float, seed: int, lr: float = 1e-3
) -> dict[str, float]:
    """Fit an SB3 (maskable) actor-critic ``policy`` to the teacher's actions and returns.

    Returns the last epoch's mean losses and the share of the teacher's actions the policy's
    most likely action matches.
    """
    rng = np.random.default_rng(seed)
    obs = torch.as_tensor(data.obs)
    masks = torch.as_tensor(data.masks)
    actions = torch.as_tensor(data.actions)
    returns = torch.as_tensor(data.returns)
    policy.set_training_mode(True)
    for group in policy.optimizer.param_groups:  # PPO sets its own learning rate again at each update
        group["lr"] = lr
    stats: dict[str, float] = {}
    for _ in range(epochs):
        order = rng.permutation(len(actions))
        sums = {"bc_loss": 0.0, "value_loss": 0.0, "agreement": 0.0}
        for start in range(0, len(order), batch_size):
            idx = torch.as_tensor(order[start : start + batch_size])
            values, log_prob, _ = policy.evaluate_actions(obs[idx], actions[idx], action_masks=masks[idx])
            bc_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns[idx])
            loss = bc_loss + vf_coef * value_loss
            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            policy.optimizer.step()
            with torch.no_grad():
                logits = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy()).distribution.logits
                agree = (logits.argmax(1) == actions[idx]).float().mean()
            k = len(idx)
            sums["bc_loss"] += bc_loss.item() * k
            sums["value_loss"] += value_loss.item() * k
            sums["agreement"] += agree.item() * k
        stats = {key: v / len(order) for key, v in sums.items()}
    policy.set_training_mode(False)
    return stats
