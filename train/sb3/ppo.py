"""Masked PPO (sb3-contrib ``MaskablePPO``) on the single-agent Scopa env.

Masks are used everywhere: in rollouts (``MaskablePPO`` calls the envs' ``action_masks``),
in the loss (the stored masks), and in evaluation and play (``predict(obs, action_masks=...)``
through :class:`train.sb3.policy_agent.PolicyAgent`).

Read :func:`train_ppo` top to bottom: envs, model (new or resumed), learn, done.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from train.checkpoint import ppo_batch_policy, restore_ppo, save_ppo
from train.config import TrainConfig
from train.env import make_vec_env
from train.run import Run
from train.sb3.callbacks import RunCallback, make_logger

PRETRAIN_BATCH = 256
"""Minibatch of the warm start's supervised passes."""


class PPOLearner:
    """The view of a MaskablePPO model that :class:`train.run.Run` needs."""

    def __init__(self, model, venv) -> None:
        self.model = model
        self.venv = venv

    def policy(self, obs: np.ndarray, mask: np.ndarray) -> int:
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    def policy_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return ppo_batch_policy(self.model)(obs, masks)

    def save(self, folder: Path) -> None:
        # Weights and optimizer state only (train/checkpoint.py), never SB3's pickling model.zip.
        save_ppo(folder, self.model.policy)

    def env_method(self, name: str, *args) -> None:
        self.venv.env_method(name, *args)


def train_ppo(cfg: TrainConfig, run: Run, resume: bool = False) -> None:
    from sb3_contrib import MaskablePPO

    # --- envs ------------------------------------------------------------------------
    venv = make_vec_env(cfg, run.initial_opponents(), seed=cfg.seed + run.state.timestep)

    # --- model (new, or the resumed run's weights and optimizer put into a new one) -------
    from train.sb3.masked_policy import MaskedPolicy

    policy, policy_kwargs = MaskedPolicy, {"net_arch": list(cfg.net_arch)}
    if cfg.policy_net == "cards":
        from train.sb3.card_net import CardPolicy, card_policy_kwargs

        policy, policy_kwargs = CardPolicy, card_policy_kwargs(cfg.num_players, cfg.rules, trunk=cfg.net_arch[0])
    model = MaskablePPO(
        policy,
        venv,
        learning_rate=cfg.learning_rate,
        n_steps=cfg.n_steps,
        batch_size=cfg.batch_size,
        n_epochs=cfg.n_epochs,
        gamma=cfg.gamma,
        gae_lambda=cfg.gae_lambda,
        clip_range=cfg.clip_range,
        ent_coef=cfg.ent_coef,
        vf_coef=cfg.vf_coef,
        max_grad_norm=cfg.max_grad_norm,
        policy_kwargs=policy_kwargs,
        seed=cfg.seed,
        device="cpu",
    )
    if resume:
        restore_ppo(run.dir / "latest", model.policy)
        model.num_timesteps = run.state.timestep
    model.set_logger(make_logger(str(run.dir / "tb")))
    learner = PPOLearner(model, venv)
    run.restore_envs(learner)
    if cfg.pretrain and not resume:
        warm_start(cfg, run, learner)

    # --- learn -------------------------------------------------------------------------
    remaining = cfg.total_timesteps - run.state.timestep
    run.start_progress()
    if remaining > 0:
        model.learn(remaining, callback=RunCallback(run, learner), reset_num_timesteps=not resume)
    run.on_step(int(model.num_timesteps), learner, final=run.state.last_eval != model.num_timesteps)
    venv.close()


def warm_start(cfg: TrainConfig, run: Run, learner: PPOLearner) -> None:
    """Behaviour cloning (or, with ``pretrain_temperature``, distillation) of the teacher with DAgger
    rounds (:mod:`train.sb3.pretrain`), logged under ``pretrain/``, then an evaluation at step 0."""
    from tqdm import tqdm

    from train.sb3.pretrain import clone, collect_teacher, merge

    data = None
    epoch = 0
    for rnd in range(cfg.pretrain_rounds):
        actor = None if rnd == 0 else learner.policy_batch
        who = cfg.pretrain if rnd == 0 else "clone"
        bar = tqdm(
            total=cfg.pretrain_steps, unit="step", desc=f"round {rnd + 1}: {who} plays", disable=not cfg.progress_bar
        )
        more = collect_teacher(learner.venv, cfg.pretrain, cfg.pretrain_steps, cfg.gamma, bar.update, actor)
        bar.close()
        data = more if data is None else merge(data, more)
        for _ in tqdm(range(cfg.pretrain_epochs), desc="cloning", unit="epoch", disable=not cfg.progress_bar):
            stats = clone(
                learner.model.policy,
                data,
                1,
                PRETRAIN_BATCH,
                cfg.vf_coef,
                cfg.seed + epoch,
                lr=cfg.pretrain_lr,
                temperature=cfg.pretrain_temperature,
            )
            for key, value in stats.items():
                run.writer.add_scalar(f"pretrain/{key}", value, epoch)
            epoch += 1
    run.evaluate(0, learner)
