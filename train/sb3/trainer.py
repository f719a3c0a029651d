"""``train(cfg)``: seed everything, open the run folder, train with the configured algorithm, report."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from train.config import TrainConfig
from train.run import Run


def seed_everything(seed: int, threads: int) -> None:
    """The one seeding block: Python, NumPy's global state (for libraries that use it) and torch."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)


def train(cfg: TrainConfig, resume: bool = False, report: bool = True) -> Run:
    """Train (or resume) the run of ``cfg``; returns the finished :class:`~train.run.Run`.

    With ``progress_bar`` on, one line first says what runs and where (the envs, the model and
    the first evaluation take a while before the bar appears).
    """
    if cfg.progress_bar:
        print(announce(cfg, resume), flush=True)
    cfg.check_agents()
    seed_everything(cfg.seed, cfg.torch_threads)
    run = Run(cfg, resume=resume)
    try:
        if cfg.algo == "ppo":
            from train.sb3.ppo import train_ppo

            train_ppo(cfg, run, resume)
        else:
            from train.sb3.dqn import train_dqn

            train_dqn(cfg, run, resume)
    finally:
        run.close()
    if report:
        from train.report import write_report

        write_report(run.dir, final_pairs=cfg.final_eval_pairs, progress=cfg.progress_bar)
    return run


def announce(cfg: TrainConfig, resume: bool = False) -> str:
    """The line printed before training starts."""
    if cfg.curriculum:
        opponents = f"the curriculum {' -> '.join(cfg.curriculum)}"
    elif isinstance(cfg.opponents, dict):
        opponents = ", ".join(f"{spec} {weight:g}" for spec, weight in cfg.opponents.items())
    elif isinstance(cfg.opponents, list):
        opponents = ", ".join(cfg.opponents)
    else:
        opponents = str(cfg.opponents)
    return (
        f"{'Resuming' if resume else 'Training'} {cfg.name}: {cfg.algo}, {cfg.action_mode} mode, against "
        f"{opponents}, {cfg.total_timesteps:,} steps, evaluated every {cfg.eval_every:,} against "
        f"{', '.join(cfg.eval_opponents)}; writing {Path(cfg.runs_dir) / cfg.name}/. Setting up; the progress "
        "bar follows."
    )
