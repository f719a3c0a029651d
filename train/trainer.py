"""``train(cfg)``: seed everything, open the run folder, train with the configured algorithm, report."""

from __future__ import annotations

import random

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
    """Train (or resume) the run of ``cfg``; returns the finished :class:`~train.run.Run`."""
    cfg.check_agents()
    seed_everything(cfg.seed, cfg.torch_threads)
    run = Run(cfg, resume=resume)
    try:
        if cfg.algo == "ppo":
            from train.ppo import train_ppo

            train_ppo(cfg, run, resume)
        else:
            from train.dqn import train_dqn

            train_dqn(cfg, run, resume)
    finally:
        run.close()
    if report:
        from train.report import write_report

        write_report(run.dir, final_pairs=cfg.final_eval_pairs, progress=cfg.progress_bar)
    return run
