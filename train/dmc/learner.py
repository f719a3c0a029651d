"""Deep Monte-Carlo (DMC): a move-scoring network trained on the compiled core.

The method of DouZero (Zha et al., 2021, "DouZero: Mastering DouDizhu with Self-Play Deep
Reinforcement Learning"): a network ``Q(state, move)`` scores every legal move from the
state's features and the move's own features, the actors play the best-scoring move
(epsilon-greedy), and ``Q`` is regressed on the Monte-Carlo return that followed, with no
bootstrapping. Scopa's legal moves are few (rarely more than ten), so scoring them one by
one is cheap; the move features are in :mod:`train.dmc.agent`.

Here the return of a decision is the hand-point margin of the acting side in that hand
(its hand points minus the other sides' mean, the env's ``reward: points``); games are
played whole to the target, so the scores in the observation take every value they take
in play. Actors run in two batches of the compiled core (:class:`~scopa_env.fast.BatchedScopa`,
"move" mode), stepped in the same process between learner updates:

* **self-play**: the network plays every seat, and every decision is a sample;
* **against the baselines**: the network holds one seat, the compiled ``opponents``
  (``heuristic``, ``greedy``, a mixture) the others; the learner's decisions are samples.

Early in training a ``teacher`` (the compiled heuristic) plays a share of the acting
seats' moves (``teacher_start``, decaying to 0 over ``teacher_steps`` decisions): the
network first learns the value of the teacher's play, and playing greedily on it is
already a policy-improvement step over the teacher.

Everything runs in one process from one seed (actors, sampling, minibatches, torch), so a
seed gives the same metrics on CPU for a given ``torch_threads``. With ``workers: N`` the actors
and their labellers run in N Ray worker processes instead (:mod:`train.dmc.workers`; the loop takes
their rounds through the same two calls, ``start`` and ``collect``, as :class:`InProcess`'s), and a
seed and a worker count give the same run. ``scopa train
configs/dmc_standard.yaml`` runs it; the run folder is the usual one (config.yaml, tb/,
evaluations.csv with the per-category rates, latest/ and best/ checkpoints, report.md with
curves). ``scopa train --resume runs/<name>`` continues from ``latest`` (the network, the
optimizer and the counters; the actors start fresh games and the replay buffer refills).

The module reads in the order a run goes: the config (:mod:`train.dmc.config`), seeding and
the run folder, the actors (their games, samples and buffers: :mod:`train.dmc.actors`), the
learner, the loop (:func:`train`), evaluation, then logging, checkpoints and the report, and what
resuming checks. ``scopa train`` comes in through :func:`train.dmc.dmc_dispatch`.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import json
import math
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from train.config import ConfigError, check_resume_budget
from train.dmc.actors import RETURN_SLOTS, Actors, Buffer, FrozenActors, Labeller, build_network, numpy_weights
from train.dmc.agent import ALGO, FEATURE_VERSION, META_FILE, WEIGHTS_FILE, BatchPolicy, NumpyQNet
from train.dmc.config import COMPILED, DmcConfig, is_dmc_config, is_dmc_run

__all__ = [
    "RETURN_SLOTS",
    "COMPILED",
    "DmcConfig",
    "is_dmc_config",
    "is_dmc_run",
    "train",
    "Actors",
    "Labeller",
    "Buffer",
    "build_network",
    "numpy_weights",
    "checkpoint_meta",
    "final_evaluation",
    "write_dmc_report",
]

STATE_FILE = "state.json"
OPTIMIZER_FILE = "optimizer.pt"
ONLINE_FILE = "online.npz"
CSV_FILE = "evaluations.csv"
EVALUATED_DIR = "evaluated"  # keep_evaluated: the weights of every evaluation, by decisions
FINAL_EVAL_SEED = 20_261_122

# --- seeding and the run folder -----------------------------------------------------------


def opponent_curve_file(run_dir: Path, opponent: str) -> Path:
    """Where a run's curve against an opponent it was not evaluated against in training is kept
    (``benchmarks/snapshot_curve.py`` plays it from ``evaluated/``): ``evaluations_<opponent>.csv``."""
    return Path(run_dir) / f"evaluations_{re.sub(r'[^A-Za-z0-9]+', '_', opponent).strip('_')}.csv"


def seed_and_device(cfg: DmcConfig):
    """Seed torch, set its threads and pick the device (the numpy generators come from the seed in
    :func:`start_segment`)."""
    import torch

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    device = torch.device(
        "cuda" if cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available()) else "cpu"
    )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: cuda, but torch sees no CUDA device (use device: auto or cpu)")
    return device


def open_run_folder(cfg: DmcConfig, resume: bool) -> tuple[Path, dict]:
    """The run folder (made, with its ``config.yaml``) and the run's counters (``latest``'s on a resume).

    A new run refuses a folder that already holds one.
    """
    run_dir = Path(cfg.runs_dir) / cfg.name
    state = {
        "timestep": 0,
        "updates": 0,
        "last_eval": 0,
        "best_score": -math.inf,
        "best_timestep": -1,
        "wall_seconds": 0.0,
        "cpu_seconds": 0.0,
        "hands": 0,
        "labels": 0,
    }
    if cfg.init_weights and not resume:  # the starting network's CPU-hours (its own start's too), from its meta.json
        meta = cfg.initial_network()[1]
        hours = meta.get("cpu_hours_with_init", meta.get("cpu_hours", 0.0))
        state["init_cpu_hours"] = float(hours) if isinstance(hours, (int, float)) and math.isfinite(hours) else 0.0
    if resume:
        state.update(json.loads((run_dir / "latest" / STATE_FILE).read_text()))
    elif (run_dir / "latest").exists() or (run_dir / CSV_FILE).exists():
        raise ConfigError(
            f"run folder {str(run_dir)!r} already holds a run: resume it with `scopa train --resume {run_dir}` "
            "or pick another name (name=...)"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg.dump(run_dir / "config.yaml")
    return run_dir, state


# --- actors ---------------------------------------------------------------------------


def search_threads(cfg: DmcConfig) -> int:
    """Threads of the run's compiled search (its labeller's and an ``fsearch`` opponent's): ``label_threads``,
    at most the cores."""
    from scopa_env.fast.batch import max_threads

    return min(cfg.label_threads, max_threads())


def _labellers(cfg: DmcConfig, actors: list[Actors]) -> list[Labeller | None]:
    """``label_positions`` shared among the actor batches in proportion to their games."""
    if not cfg.label_positions:
        return [None] * len(actors)
    C = cfg.label_config()
    total = sum(a.batch.num_games for a in actors)
    threads = search_threads(cfg)
    differences = cfg.label_loss == "differences"
    return [
        Labeller(round(cfg.label_positions * a.batch.num_games / total), C, threads, differences, cfg.label_exact_only)
        for a in actors
    ]


@dataclass
class Segment:
    """What a run, a stage or a resume starts afresh: new games, empty buffers and the generator of both.

    A resumed run (or a stage) draws new games: its generator continues from the seed and the step count.
    """

    rng: np.random.Generator
    actors: list[Actors]
    labellers: list[Labeller | None]
    buffer: Buffer
    label_buffer: Buffer | None

    @property
    def hands(self) -> int:
        """Hands the actors of this segment finished."""
        return sum(a.hands for a in self.actors)


def start_segment(cfg: DmcConfig, eff: DmcConfig, timestep: int) -> Segment:
    """The actors, labellers, buffers and generator of a run (or a stage, ``eff``) starting at ``timestep``."""
    rng = np.random.default_rng([cfg.seed, timestep])
    actors: list[Actors] = []
    # the stage's actor mix: a stage may move the games between self-play and the opponents
    for games, opponent in ((eff.selfplay_games, None), (eff.opponent_games, cfg.opponents)):
        if games:
            seeds = rng.integers(0, 2**62, games)
            actor_rng = np.random.default_rng(rng.integers(0, 2**62))
            if opponent is not None and cfg.search_opponent is not None:  # the search, from Python
                actors.append(FrozenActors(cfg, games, cfg.search_opponent, seeds, actor_rng, search_threads(cfg)))
            else:
                actors.append(Actors(cfg, games, opponent, seeds, actor_rng))
    size, feat_size = actors[0].batch.layout.size, actors[0].features.size
    label_buffer = (
        Buffer(eff.label_buffer_size, size, feat_size, pairs=eff.label_loss == "differences")
        if eff.label_positions
        else None
    )
    return Segment(rng, actors, _labellers(eff, actors), Buffer(cfg.buffer_size, size, feat_size), label_buffer)


def teacher_share(cfg: DmcConfig, timestep: int) -> float:
    """Share of the acting seats' moves the teacher plays at ``timestep`` decisions (linear decay to 0)."""
    return cfg.teacher_start * max(0.0, 1.0 - timestep / cfg.teacher_steps) if cfg.teacher else 0.0


def collect(cfg: DmcConfig, seg: Segment, learner: Learner, share: float) -> tuple[int, int]:
    """``rollout_steps`` steps of every actor batch; the finished samples (and labels) go to the buffers.

    Returns the new samples with a return and the new labelled moves.
    """
    learner.net.eval()
    for _ in range(cfg.rollout_steps):
        for a, labeller in zip(seg.actors, seg.labellers):
            a.act(learner.score, cfg.epsilon, cfg.teacher, share, labeller)
    new = new_labels = 0
    for a in seg.actors:
        obs, feats, ret = a.collect()
        seg.buffer.add(obs, feats, ret)
        new += len(ret)
        labels = a.take_labels()
        if labels is not None:
            seg.label_buffer.add(*labels)
            new_labels += len(labels[2])
    return new, new_labels


# --- the learner ----------------------------------------------------------------------------


@dataclass
class Learner:
    """The network being trained, its optimizer, and the weight average (``ema``) that is evaluated and saved."""

    net: Any
    optimizer: Any
    ema_net: Any
    device: Any

    @property
    def played(self):
        """What is evaluated and saved: the weight average when ``ema`` is on, else the network."""
        return self.ema_net if self.ema_net is not None else self.net

    @property
    def online(self):
        """With ``ema`` on, the learner's own weights (saved in ``latest`` to resume from); else None."""
        return self.net if self.ema_net is not None else None

    def score(self, obs: np.ndarray, rows: np.ndarray, feats: np.ndarray) -> np.ndarray:
        """``Q`` of the flattened legal moves, as the actors ask for it."""
        import torch

        with torch.no_grad():
            q = self.net(
                torch.from_numpy(obs).to(self.device),
                torch.from_numpy(rows).to(self.device),
                torch.from_numpy(feats).to(self.device),
            )
        return q.cpu().numpy()


def build_learner(cfg: DmcConfig, obs_size: int, feat_size: int, device, resume_from: Path | None) -> Learner:
    """A fresh network (or ``init_weights``') and Adam, or those of ``resume_from`` (a ``latest`` checkpoint)."""
    import torch

    net = build_network(obs_size, feat_size, list(cfg.trunk), list(cfg.net_arch)).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    initial = cfg.initial_network() if resume_from is None else None
    if initial is not None:  # init_weights: a trained network to start from (Adam starts afresh)
        net.load_state_dict({k: torch.from_numpy(v) for k, v in initial[0].items()})
    ema_net = copy.deepcopy(net).requires_grad_(False) if cfg.ema else None
    if resume_from is not None:
        online = resume_from / ONLINE_FILE if (resume_from / ONLINE_FILE).exists() else resume_from / WEIGHTS_FILE
        for target, path in ((net, online), (ema_net, resume_from / WEIGHTS_FILE)):
            if target is not None:
                weights = np.load(path, allow_pickle=False)
                target.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
        optimizer.load_state_dict(torch.load(resume_from / OPTIMIZER_FILE, weights_only=True))
    return Learner(net, optimizer, ema_net, device)


def learning_rate(cfg: DmcConfig, eff: DmcConfig, stage: int, timestep: int) -> float:
    """The stage's rate, linear from its ``learning_rate`` at 0 decisions to its ``learning_rate_end`` at its end."""
    if eff.learning_rate_end is None:
        return eff.learning_rate
    frac = min(1.0, timestep / cfg.stage_end(stage))
    return eff.learning_rate + (eff.learning_rate_end - eff.learning_rate) * frac


def learn(
    cfg: DmcConfig, eff: DmcConfig, stage: int, seg: Segment, learner: Learner, state: dict, new_samples: int
) -> tuple[int, list[float], list[float]]:
    """The learner's round: as many updates as the new samples (returns and labels) times ``sample_reuse`` fill.

    Returns the number of updates, their losses and their label losses.
    """
    learner.net.train()
    # every update draws a minibatch of returns (and one of labels): the new samples of both set the count
    ready = seg.buffer.size >= cfg.batch_size
    updates = max(1, round(new_samples * cfg.sample_reuse / cfg.batch_size)) if ready else 0
    lr = learning_rate(cfg, eff, stage, state["timestep"])
    for group in learner.optimizer.param_groups:
        group["lr"] = lr
    losses: list[float] = []
    label_losses: list[float] = []
    for _ in range(updates):
        loss, label_loss = gradient_step(cfg, eff, seg, learner)
        if label_loss is not None:
            label_losses.append(label_loss)
        losses.append(loss)
        state["updates"] += 1
    return updates, losses, label_losses


def gradient_step(cfg: DmcConfig, eff: DmcConfig, seg: Segment, learner: Learner) -> tuple[float, float | None]:
    """One Adam step on a minibatch of returns (and one of labels); returns the loss and the label loss."""
    import torch

    net, device, rng, buffer, label_buffer = learner.net, learner.device, seg.rng, seg.buffer, seg.label_buffer
    idx = rng.integers(0, buffer.size, cfg.batch_size)
    obs_t = torch.from_numpy(buffer.obs[idx]).to(device)
    feats_t = torch.from_numpy(buffer.feats[idx]).to(device)
    target = torch.from_numpy(buffer.ret[idx]).to(device)
    rows_t = torch.arange(cfg.batch_size, device=device)
    loss = torch.nn.functional.mse_loss(net(obs_t, rows_t, feats_t), target)
    label_value = None
    if label_buffer is not None and label_buffer.size >= cfg.batch_size and eff.label_weight > 0:
        idx = rng.integers(0, label_buffer.size, cfg.batch_size)
        label_obs = torch.from_numpy(label_buffer.obs[idx]).to(device)
        label_target = torch.from_numpy(label_buffer.ret[idx]).to(device)
        if label_buffer.other is None:
            label_q = net(label_obs, rows_t, torch.from_numpy(label_buffer.feats[idx]).to(device))
        else:  # Q(s, best) - Q(s, other): one trunk pass, both moves through the head
            both = np.concatenate([label_buffer.feats[idx], label_buffer.other[idx]])
            q2 = net(label_obs, torch.cat([rows_t, rows_t]), torch.from_numpy(both).to(device))
            label_q = q2[: cfg.batch_size] - q2[cfg.batch_size :]
        label_loss = torch.nn.functional.mse_loss(label_q, label_target)
        label_value = label_loss.item()
        loss = loss + eff.label_weight * label_loss
    learner.optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
    learner.optimizer.step()
    if learner.ema_net is not None:
        with torch.no_grad():
            for p_avg, p in zip(learner.ema_net.parameters(), net.parameters()):
                p_avg.mul_(cfg.ema).add_(p, alpha=1.0 - cfg.ema)
    return loss.item(), label_value


# --- the run ---------------------------------------------------------------------------


def train(cfg: DmcConfig, resume: bool = False, report: bool = True) -> Path:
    """Train (or resume) a DMC run; returns the run folder."""
    # --- setup: seeding, where the actors run (here, or in Ray workers: train/dmc/workers.py), run folder, actors
    # (a stage, like a resume, starts with new games and empty buffers), learner, logs
    device = seed_and_device(cfg)
    pool = InProcess()
    if cfg.workers:
        from train.dmc.workers import RayActors

        pool = RayActors(cfg)  # joins Ray and starts the workers
    run_dir, state = open_run_folder(cfg, resume)
    stage = cfg.stage_index(state["timestep"])
    eff = cfg.for_stage(stage)
    seg = pool.start(cfg, eff, state["timestep"])
    features = pool.features
    learner = build_learner(cfg, pool.obs_size, features.size, device, run_dir / "latest" if resume else None)
    log = RunLog(cfg, run_dir, state, device)
    if cfg.workers:
        log.message(pool.describe())
    if state["timestep"] == 0:
        evaluate(cfg, learner.played, features, run_dir, log, state, 0)

    # --- the loop: actors, then learner, then logs and evaluations -------------------------------
    while state["timestep"] < cfg.total_timesteps:
        if cfg.stage_index(state["timestep"]) != stage:
            stage = cfg.stage_index(state["timestep"])
            eff = cfg.for_stage(stage)
            state["hands"] += seg.hands
            seg = pool.start(cfg, eff, state["timestep"])
            log.message(f"dmc: stage {stage} from {state['timestep']:,} decisions: {cfg.stages[stage - 1]}")
        share = teacher_share(cfg, state["timestep"])
        new, new_labels = pool.collect(cfg, seg, learner, share)
        state["labels"] += new_labels
        state["timestep"] += new
        updates, losses, label_losses = learn(cfg, eff, stage, seg, learner, state, new + new_labels)
        log.round(state, updates, losses, label_losses, share, seg.hands + state["hands"])
        if state["timestep"] - state["last_eval"] >= cfg.eval_every or state["timestep"] >= cfg.stage_end(stage):
            log.clock(state)
            evaluate(cfg, learner.played, features, run_dir, log, state, state["timestep"])
            save_latest(run_dir, learner, cfg, state)

    # --- the end: the last checkpoint and the report ---------------------------------------------
    state["hands"] += seg.hands
    log.clock(state)
    save_latest(run_dir, learner, cfg, state)
    log.close()
    pool.close()
    if report and cfg.final_eval_pairs > 0:
        write_dmc_report(run_dir, cfg.final_eval_pairs, progress=cfg.progress_bar)
    return run_dir


class InProcess:
    """The actors in the learner's process (``workers: 0``): :func:`start_segment` and :func:`collect`.

    ``train/dmc/workers.py``'s ``RayActors`` has the same methods for actors in Ray workers.
    """

    def __init__(self) -> None:
        self.obs_size = 0
        self.features = None

    def start(self, cfg: DmcConfig, eff: DmcConfig, timestep: int) -> Segment:
        seg = start_segment(cfg, eff, timestep)
        self.obs_size, self.features = seg.actors[0].batch.layout.size, seg.actors[0].features
        return seg

    def collect(self, cfg: DmcConfig, seg: Segment, learner: Learner, share: float) -> tuple[int, int]:
        return collect(cfg, seg, learner, share)

    def close(self) -> None:
        """Nothing to stop."""


# --- evaluation -------------------------------------------------------------------------------


def evaluate(cfg: DmcConfig, net, features, run_dir: Path, log: RunLog, state: dict, step: int) -> dict:
    """Duplicate deals against every eval opponent on the compiled core; log them, save ``best``."""
    from train.evaluation import flat_metrics
    from train.fast_eval import evaluate_fast_sides

    policy = BatchPolicy(NumpyQNet(numpy_weights(net)), features)
    results = {}
    for opp in cfg.eval_opponents:
        report = evaluate_fast_sides(policy, opp, cfg.eval_pairs, cfg.num_players, cfg.rules, cfg.eval_seed)
        results[opp] = flat_metrics(report)
    log.evaluation(run_dir, results, state, step)
    state["last_eval"] = step
    if cfg.keep_evaluated:
        _save(run_dir / EVALUATED_DIR / f"{step:010d}", net, cfg, state)
    best_opp = cfg.best_eval_opponent
    if best_opp in results and results[best_opp]["margin"] > state["best_score"]:
        state["best_score"] = results[best_opp]["margin"]
        state["best_timestep"] = step
        _save(run_dir / "best", net, cfg, state)
    return results


def final_evaluation(run_dir: str | Path, pairs: int, progress: bool = False) -> list[dict]:
    """``best`` against every eval opponent on ``pairs`` fresh duplicate deals (``final_eval.json``)."""
    from train.dmc.agent import load_dmc_batch_policy
    from train.evaluation import flat_metrics
    from train.fast_eval import evaluate_fast_sides

    run_dir = Path(run_dir)
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    policy, meta = load_dmc_batch_policy(run_dir / "best")
    rows = []
    for opp in cfg["eval_opponents"]:
        report = evaluate_fast_sides(
            policy, opp, pairs, cfg["num_players"], cfg["rules"], FINAL_EVAL_SEED, progress=progress
        )
        m = flat_metrics(report)
        rows.append({"opponent": opp, "timestep": meta["timestep"], **m})
        if progress:
            print(f"final eval vs {opp}: margin {m['margin']:+.3f} [{m['margin_lo']:+.3f}, {m['margin_hi']:+.3f}]")
    (run_dir / "final_eval.json").write_text(json.dumps(rows, indent=2) + "\n")
    return rows


# --- logging, checkpoints and the report ----------------------------------------------------


class RunLog:
    """The run's logs: TensorBoard (``losses/``, ``charts/``, ``eval/``), the progress bar (or plain
    lines) and the clocks of the run (wall and CPU time, continued over resumes)."""

    def __init__(self, cfg: DmcConfig, run_dir: Path, state: dict, device) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(run_dir / "tb"))
        self.bar = None
        if cfg.progress_bar:
            from tqdm import tqdm

            print(f"dmc: training {cfg.name} for {cfg.total_timesteps:,} decisions on {device} ...", flush=True)
            self.bar = tqdm(
                total=cfg.total_timesteps,
                initial=state["timestep"],
                unit="dec",
                desc=cfg.name,
                dynamic_ncols=True,
                smoothing=0.05,
            )
        self.wall0 = time.time() - state["wall_seconds"]
        self.cpu0 = time.process_time() - state["cpu_seconds"]
        self.losses: list[float] = []
        self.label_losses: list[float] = []

    def message(self, text: str) -> None:
        """A line above the progress bar (or printed)."""
        self.bar.write(text) if self.bar is not None else print(text, flush=True)

    def round(
        self, state: dict, updates: int, losses: list[float], label_losses: list[float], share: float, hands: int
    ) -> None:
        """After a learner round: move the bar; about every 50 updates, write the mean losses and the charts."""
        self.losses += losses
        self.label_losses += label_losses
        if self.bar is not None:
            self.bar.update(state["timestep"] - self.bar.n)
        if self.losses and state["updates"] % 50 < updates:
            step = state["timestep"]
            self.writer.add_scalar("losses/q_mse", float(np.mean(self.losses)), step)
            if self.label_losses:
                self.writer.add_scalar("losses/label_mse", float(np.mean(self.label_losses)), step)
                self.writer.add_scalar("charts/labelled_moves", state["labels"], step)
                self.label_losses = []
            self.writer.add_scalar("charts/teacher_share", share, step)
            self.writer.add_scalar("charts/hands", hands, step)
            elapsed = time.time() - self.wall0
            self.writer.add_scalar("charts/decisions_per_second", step / max(elapsed, 1e-9), step)
            self.losses = []

    def evaluation(self, run_dir: Path, results: dict[str, dict], state: dict, step: int) -> None:
        """An evaluation's metrics per opponent: TensorBoard ``eval/``, a row each in ``evaluations.csv``, the bar."""
        from train.run import CSV_COLUMNS

        for opp, m in results.items():
            for k, v in m.items():
                self.writer.add_scalar(f"eval/{opp}/{k}", v, step)
        path = run_dir / CSV_FILE
        new = not path.exists()
        with path.open("a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=(*CSV_COLUMNS, "cpu_hours"))
            if new:
                w.writeheader()
            w.writerows(
                {"timestep": step, "opponent": opp, **m, "cpu_hours": state["cpu_seconds"] / 3600}
                for opp, m in results.items()
            )
        self.writer.add_scalar("charts/cpu_hours", state["cpu_seconds"] / 3600, step)
        self.writer.flush()
        if self.bar is not None:
            self.bar.set_postfix({o[:9]: f"{m['margin']:+.3f}" for o, m in results.items()})
        else:
            print(f"step {step:,}: " + ", ".join(f"{o} {m['margin']:+.3f}" for o, m in results.items()), flush=True)

    def clock(self, state: dict) -> None:
        """The run's wall and CPU seconds so far into ``state``."""
        state["wall_seconds"] = time.time() - self.wall0
        state["cpu_seconds"] = time.process_time() - self.cpu0

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.writer.close()


def checkpoint_meta(cfg: DmcConfig, state: dict) -> dict:
    return {
        "algo": ALGO,
        "feature_version": FEATURE_VERSION,
        "rules": cfg.rules,
        "num_players": cfg.num_players,
        "action_mode": "move",
        "observation_size": cfg.setup.observation_size,
        "heuristic_features": cfg.heuristic_features,
        "trunk": list(cfg.trunk),
        "net_arch": list(cfg.net_arch),
        "timestep": state["timestep"],
        "seed": cfg.seed,
        "run": cfg.name,
        "cpu_hours": round(state["cpu_seconds"] / 3600, 4),
        **(
            {  # a network trained from another costs that one's CPU-hours too
                "init_weights": cfg.init_weights,
                "cpu_hours_with_init": round(state["cpu_seconds"] / 3600 + state.get("init_cpu_hours", 0.0), 4),
            }
            if cfg.init_weights
            else {}
        ),
    }


def _save(folder: Path, net, cfg: DmcConfig, state: dict, optimizer=None, online=None) -> None:
    """A checkpoint: ``weights.npz`` + ``meta.json`` (+ optimizer and state for ``latest``), atomically."""
    import torch

    tmp = folder.with_name(folder.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    np.savez(tmp / WEIGHTS_FILE, **numpy_weights(net))
    (tmp / META_FILE).write_text(json.dumps(checkpoint_meta(cfg, state), indent=2) + "\n")
    if online is not None:  # with ema on, the learner's own weights (to resume from)
        np.savez(tmp / ONLINE_FILE, **numpy_weights(online))
    if optimizer is not None:
        torch.save(optimizer.state_dict(), tmp / OPTIMIZER_FILE)
        (tmp / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)


def save_latest(run_dir: Path, learner: Learner, cfg: DmcConfig, state: dict) -> None:
    """``latest``: the played weights, the optimizer and the counters (and the online weights with ``ema``)."""
    _save(run_dir / "latest", learner.played, cfg, state, learner.optimizer, online=learner.online)


def write_dmc_report(run_dir: str | Path, final_pairs: int, progress: bool = False) -> Path:
    """Curves (PNG), the final evaluation of ``best`` and ``report.md``."""
    from train.report import final_table, plot_curves

    run_dir = Path(run_dir)
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    state = json.loads((run_dir / "latest" / STATE_FILE).read_text())
    images = plot_curves(run_dir)
    lines = [
        f"# Run `{run_dir.name}` (deep Monte-Carlo)",
        "",
        f"- {cfg['num_players']} players, rules `{cfg['rules']}`; self-play games {cfg['selfplay_games']}, "
        f"games against `{cfg['opponents']}` {cfg['opponent_games']}; teacher `{cfg['teacher']}` "
        f"from {cfg['teacher_start']} over {cfg['teacher_steps']:,} decisions",
        f"- trained on {state['timestep']:,} decisions ({state['updates']:,} updates) in "
        f"{state['wall_seconds'] / 60:.1f} min wall, {state['cpu_seconds'] / 3600:.2f} CPU-hours (seed {cfg['seed']}); "
        f"best checkpoint at {state['best_timestep']:,} (margin vs `{cfg['best_opponent'] or cfg['eval_opponents'][-1]}`)",
        *(
            [
                f"- search labels: every legal move of {cfg['label_positions']} positions per actor step valued by "
                f"`{cfg['label_search']}` (weight {cfg['label_weight']}); {state.get('labels', 0):,} labelled moves"
            ]
            if cfg.get("label_positions")
            else []
        ),
        f"- reproduce: `scopa train {run_dir / 'config.yaml'} name={run_dir.name}_again`",
        "",
    ]
    if final_pairs > 0:
        rows = final_evaluation(run_dir, final_pairs, progress)
        lines += final_table(rows, f"{final_pairs} duplicate deals per opponent, every rotation, whole games")
    lines += ["## Learning curves", ""] + [f"![{name}]({name})" for name in images] + [""]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines))
    return path


# --- resuming --------------------------------------------------------------------------------------


def resume_config(run_dir: Path, config_path: str | None, overrides: list[str]) -> DmcConfig:
    """The config that resumes the DMC run in ``run_dir`` (``scopa train --resume``): its saved config with
    ``config_path`` or ``overrides`` applied, of which only :attr:`DmcConfig.RESUME_KEYS` may change."""
    if not (run_dir / "latest" / STATE_FILE).is_file():
        raise ConfigError(f"{str(run_dir)!r} has no latest/ checkpoint to resume")
    saved = DmcConfig.load(run_dir / "config.yaml")
    new = DmcConfig.load(config_path, overrides) if config_path else DmcConfig.load(run_dir / "config.yaml", overrides)
    new.name, new.runs_dir = saved.name, saved.runs_dir
    changed = [
        f.name
        for f in dataclasses.fields(new)
        if getattr(new, f.name) != getattr(saved, f.name) and f.name not in DmcConfig.RESUME_KEYS
    ]
    if changed:
        raise ConfigError(
            f"cannot resume {str(run_dir)!r} with a different {', '.join(changed)}; only "
            f"{', '.join(DmcConfig.RESUME_KEYS)} may change"
        )
    try:
        done = int(json.loads((run_dir / "latest" / STATE_FILE).read_text())["timestep"])
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"{run_dir / 'latest' / STATE_FILE}: not a DMC state file (no timestep)") from None
    check_resume_budget(run_dir, done, saved.total_timesteps, new.total_timesteps)
    # the run goes on in the folder given, also when it was copied or moved since it started
    new.name, new.runs_dir = run_dir.name, str(run_dir.parent)
    return new
