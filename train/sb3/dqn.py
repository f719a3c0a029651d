"""Masked DQN in plain torch (Stable-Baselines3 has no masked DQN), CleanRL style.

Masks enter in two places, and nowhere else can an illegal action slip in:

* **acting**: the greedy action is the argmax over legal actions only, and epsilon
  exploration draws uniformly among legal actions (:func:`masked_argmax`, :func:`act`);
* **the target**: the replay buffer stores the *next* state's legal-action mask
  (bit-packed: 16,200 actions take 2 KB), and the bootstrap max runs over legal next
  actions only; a terminal next state has no legal action and bootstraps nothing
  (:func:`td_target`). With ``double_dqn`` the online net picks the legal argmax and
  the target net values it.

Read :func:`train_dqn` top to bottom: envs, networks, the loop (act, store, learn,
update the target, evaluate).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from train.checkpoint import MODEL_FILES, TRAIN_STATE_FILE, load_q_network, load_weights
from train.config import TrainConfig
from train.env import make_vec_env
from train.run import Run
from train.sb3.callbacks import HandStats
from train.sb3.networks import QNetwork, masked_argmax

__all__ = ["QNetwork", "masked_argmax", "load_q_network", "td_target", "ReplayBuffer", "act", "train_dqn"]


def td_target(
    rewards: torch.Tensor,
    dones: torch.Tensor,
    next_obs: torch.Tensor,
    next_mask: torch.Tensor,
    q_net: QNetwork,
    target_net: QNetwork,
    gamma: float,
    double: bool,
) -> torch.Tensor:
    """``r + gamma * (1 - done) * max_{a' legal} Q_target(s', a')`` (double DQN: a' from ``q_net``)."""
    with torch.no_grad():
        target_q = target_net(next_obs)
        if double:
            best = masked_argmax(q_net(next_obs), next_mask)
            next_v = target_q.gather(1, best.unsqueeze(1)).squeeze(1)
        else:
            next_v = target_q.masked_fill(~next_mask, -torch.inf).max(dim=1).values
        next_v = torch.where(next_mask.any(dim=1), next_v, torch.zeros_like(next_v))
        return rewards + gamma * (1.0 - dones) * next_v


class ReplayBuffer:
    """A ring buffer of transitions with the next state's legal-action mask (bit-packed)."""

    def __init__(self, size: int, obs_size: int, num_actions: int) -> None:
        self.size, self.num_actions = size, num_actions
        self.obs = np.zeros((size, obs_size), dtype=np.float32)
        self.next_obs = np.zeros((size, obs_size), dtype=np.float32)
        self.actions = np.zeros(size, dtype=np.int64)
        self.rewards = np.zeros(size, dtype=np.float32)
        self.dones = np.zeros(size, dtype=np.float32)
        self.next_masks = np.zeros((size, (num_actions + 7) // 8), dtype=np.uint8)
        self.pos = 0
        self.full = False

    def __len__(self) -> int:
        return self.size if self.full else self.pos

    def add(self, obs, next_obs, action: int, reward: float, done: bool, next_mask: np.ndarray) -> None:
        i = self.pos
        self.obs[i], self.next_obs[i], self.actions[i] = obs, next_obs, action
        self.rewards[i], self.dones[i] = reward, float(done)
        self.next_masks[i] = np.packbits(next_mask.astype(bool))
        self.pos = (i + 1) % self.size
        self.full = self.full or self.pos == 0

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
        idx = rng.integers(len(self), size=batch_size)
        masks = np.unpackbits(self.next_masks[idx], axis=1, count=self.num_actions).astype(bool)
        return {
            "obs": torch.from_numpy(self.obs[idx]),
            "next_obs": torch.from_numpy(self.next_obs[idx]),
            "actions": torch.from_numpy(self.actions[idx]),
            "rewards": torch.from_numpy(self.rewards[idx]),
            "dones": torch.from_numpy(self.dones[idx]),
            "next_mask": torch.from_numpy(masks),
        }


def act(q_net: QNetwork, obs: np.ndarray, masks: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Epsilon-greedy over legal actions for a batch of envs."""
    with torch.no_grad():
        greedy = masked_argmax(q_net(torch.from_numpy(obs)), torch.from_numpy(masks)).numpy()
    actions = greedy.copy()
    for i in np.nonzero(rng.random(len(obs)) < epsilon)[0]:
        actions[i] = rng.choice(np.flatnonzero(masks[i]))
    return actions


def linear_schedule(start: float, end: float, duration: float, t: int) -> float:
    return end if duration <= 0 else max(end, start + (end - start) * t / duration)


class DQNLearner:
    """The view of the DQN that :class:`train.run.Run` needs."""

    def __init__(self, q_net: QNetwork, target_net: QNetwork, optimizer, venv) -> None:
        self.q_net, self.target_net, self.optimizer, self.venv = q_net, target_net, optimizer, venv

    def policy(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return self.q_net.greedy_action(obs, mask)

    def policy_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.q_net.greedy_actions(obs, masks)

    def save(self, folder: Path) -> None:
        net = self.q_net
        torch.save(
            {
                "state_dict": net.state_dict(),
                "obs_size": net.obs_size,
                "num_actions": net.num_actions,
                "net_arch": net.net_arch,
            },
            folder / MODEL_FILES["dqn"],
        )
        torch.save(
            {"target": self.target_net.state_dict(), "optimizer": self.optimizer.state_dict()},
            folder / TRAIN_STATE_FILE,
        )

    def env_method(self, name: str, *args) -> None:
        self.venv.env_method(name, *args)


def warm_start(cfg: TrainConfig, run: Run, learner: DQNLearner):
    """Fit the Q-network to the teacher's decisions (:func:`train.sb3.pretrain.clone_q`), logged under
    ``pretrain/``, copy it to the target network, and evaluate it at step 0. Returns the teacher's
    data (kept for ``demo_weight``)."""
    from tqdm import tqdm

    from train.sb3.pretrain import clone_q, collect_teacher

    bar = tqdm(total=cfg.pretrain_steps, unit="step", desc=f"{cfg.pretrain} plays", disable=not cfg.progress_bar)
    data = collect_teacher(learner.venv, cfg.pretrain, cfg.pretrain_steps, cfg.gamma, bar.update)
    bar.close()
    for epoch in tqdm(range(cfg.pretrain_epochs), desc="fitting Q", unit="epoch", disable=not cfg.progress_bar):
        stats = clone_q(
            learner.q_net, data, 1, cfg.batch_size, cfg.seed + epoch, lr=cfg.pretrain_lr, margin=cfg.pretrain_margin
        )
        for key, value in stats.items():
            run.writer.add_scalar(f"pretrain/{key}", value, epoch)
    learner.target_net.load_state_dict(learner.q_net.state_dict())
    run.evaluate(0, learner)
    return data


def demo_margin_loss(q_net: QNetwork, demo, cfg: TrainConfig, rng: np.random.Generator) -> torch.Tensor:
    """DQfD's large-margin loss on a batch of the teacher's decisions (see :func:`train.sb3.pretrain.clone_q`)."""
    idx = rng.integers(len(demo.actions), size=cfg.batch_size)
    mask = torch.from_numpy(demo.masks[idx])
    act = torch.from_numpy(demo.actions[idx]).unsqueeze(1)
    q = q_net(torch.from_numpy(demo.obs[idx]))
    bonus = torch.full_like(q, cfg.pretrain_margin).scatter(1, act, 0.0)
    return ((q + bonus).masked_fill(~mask, -torch.inf).max(1).values - q.gather(1, act).squeeze(1)).mean()


def _scalar(writer, key: str, value: float, step: int) -> None:
    writer.add_scalar(key, value, step)


def train_dqn(cfg: TrainConfig, run: Run, resume: bool = False) -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks

    # --- envs ------------------------------------------------------------------------
    venv = make_vec_env(cfg, run.initial_opponents(), seed=cfg.seed + run.state.timestep)
    obs_size = venv.observation_space.shape[0]
    num_actions = int(venv.action_space.n)
    rng = np.random.default_rng(cfg.seed + run.state.timestep)

    # --- networks ----------------------------------------------------------------------
    q_net = QNetwork(obs_size, num_actions, cfg.net_arch)
    target_net = QNetwork(obs_size, num_actions, cfg.net_arch)
    optimizer = torch.optim.Adam(q_net.parameters(), lr=cfg.learning_rate)
    if resume:
        q_net.load_state_dict(load_q_network(run.dir / "latest" / MODEL_FILES["dqn"]).state_dict())
        extra = load_weights(run.dir / "latest" / TRAIN_STATE_FILE)
        target_net.load_state_dict(extra["target"])
        optimizer.load_state_dict(extra["optimizer"])
    else:
        target_net.load_state_dict(q_net.state_dict())
    learner = DQNLearner(q_net, target_net, optimizer, venv)
    run.restore_envs(learner)
    demo = warm_start(cfg, run, learner) if cfg.pretrain and not resume else None
    # The replay buffer is not saved: a resumed run refills it for learning_starts steps.
    rb = ReplayBuffer(cfg.buffer_size, obs_size, num_actions)
    stats = HandStats()
    writer = run.writer

    # --- the loop ----------------------------------------------------------------------
    obs = venv.reset()
    masks = get_action_masks(venv)
    start = global_step = run.state.timestep
    run.start_progress()
    episode_rewards: list[float] = []
    while global_step < cfg.total_timesteps:
        epsilon = linear_schedule(
            cfg.exploration_initial_eps,
            cfg.exploration_final_eps,
            cfg.exploration_fraction * cfg.total_timesteps,
            global_step,
        )
        actions = act(q_net, obs, masks, epsilon, rng)
        next_obs, rewards, dones, infos = venv.step(actions)
        next_masks = get_action_masks(venv)
        for i, info in enumerate(infos):
            if dones[i]:
                # The VecEnv already reset this env: store the real last observation, no legal action.
                rb.add(obs[i], info["terminal_observation"], actions[i], rewards[i], True, np.zeros(num_actions, bool))
                stats.add_info(info)
                if "episode" in info:
                    episode_rewards.append(info["episode"]["r"])
            else:
                rb.add(obs[i], next_obs[i], actions[i], rewards[i], False, next_masks[i])
        obs, masks = next_obs, next_masks
        prev_step, global_step = global_step, global_step + cfg.n_envs

        # --- learn ---------------------------------------------------------------------
        if global_step - start > cfg.learning_starts and len(rb) >= cfg.batch_size:
            for _ in range(global_step // cfg.train_freq - prev_step // cfg.train_freq):
                batch = rb.sample(cfg.batch_size, rng)
                target = td_target(
                    batch["rewards"],
                    batch["dones"],
                    batch["next_obs"],
                    batch["next_mask"],
                    q_net,
                    target_net,
                    cfg.gamma,
                    cfg.double_dqn,
                )
                q = q_net(batch["obs"]).gather(1, batch["actions"].unsqueeze(1)).squeeze(1)
                loss = F.smooth_l1_loss(q, target)
                if demo is not None and cfg.demo_weight > 0:
                    loss = loss + cfg.demo_weight * demo_margin_loss(q_net, demo, cfg, rng)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(q_net.parameters(), cfg.max_grad_norm)
                optimizer.step()
            if global_step // 1000 != prev_step // 1000:
                writer.add_scalar("losses/td_loss", loss.item(), global_step)
                writer.add_scalar("losses/q_values", q.mean().item(), global_step)
        if global_step // cfg.target_update_interval != prev_step // cfg.target_update_interval:
            for tp, p in zip(target_net.parameters(), q_net.parameters()):
                tp.data.copy_(cfg.tau * p.data + (1.0 - cfg.tau) * tp.data)

        # --- log, evaluate, checkpoint ---------------------------------------------------
        if global_step // 1000 != prev_step // 1000:
            writer.add_scalar("charts/epsilon", epsilon, global_step)
            if episode_rewards:
                writer.add_scalar("charts/ep_rew_mean", float(np.mean(episode_rewards)), global_step)
                episode_rewards.clear()
            stats.record(functools.partial(_scalar, writer, step=global_step))
        run.log_speed(global_step)
        run.on_step(global_step, learner)
    run.on_step(global_step, learner, final=run.state.last_eval != global_step)
    venv.close()
