"""The run folder and everything both algorithms share: evaluation, checkpoints, opponents.

::

    runs/<name>/
        config.yaml          the resolved config
        tb/                  TensorBoard logs: charts/, losses/, eval/<opponent>/
        evaluations.csv      one row per (evaluation, opponent)
        latest/, best/       checkpoints (model + meta.json; latest/ also state.json)
        pool/step_<N>/       self-play checkpoints (with ``selfplay: true``)
        report.md, *.png     the final report (``train/report.py``)

:class:`Run` is driven by the training loop through :meth:`Run.on_step`, which runs the
periodic evaluation against every ``eval_opponents`` baseline, saves ``latest`` and
``best``, advances the curriculum and feeds the self-play pool. The algorithm is seen
through a :class:`Learner`: its masked greedy policy, a save function and the VecEnv.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from train.checkpoint import META_FILE, write_meta
from train.config import IDENTITY_KEYS, RESUME_KEYS, ConfigError, TrainConfig, check_resume_budget
from train.evaluation import evaluate_agent, flat_metrics
from train.fast_eval import evaluate_fast, fast_eval_applies
from train.opponents import Curriculum
from train.sb3.policy_agent import PolicyAgent, PolicyFn

STATE_FILE = "state.json"
CSV_FILE = "evaluations.csv"
CSV_COLUMNS = (
    "timestep",
    "opponent",
    "win_rate",
    "win_rate_lo",
    "win_rate_hi",
    "margin",
    "margin_lo",
    "margin_hi",
    "learner_primiera",
    "learner_settebello",
    "learner_coins",
    "learner_cards",
    "learner_scope",
    "opponent_primiera",
    "opponent_settebello",
    "opponent_coins",
    "opponent_cards",
    "opponent_scope",
    "games",
    "hands",
    "forfeits",
)


class Learner(Protocol):
    """What :class:`Run` needs from an algorithm."""

    def policy(self, obs, mask) -> int: ...

    def policy_batch(self, obs, masks) -> np.ndarray: ...

    def save(self, folder: Path) -> None: ...

    def env_method(self, name: str, *args) -> None: ...


@dataclass
class RunState:
    """Progress saved with ``latest`` (restored on resume)."""

    timestep: int = 0
    last_eval: int = 0
    last_selfplay: int = 0
    best_score: float = -math.inf
    best_timestep: int = -1
    curriculum_stage: int = 0
    curriculum_history: list = field(default_factory=list)
    pool: list = field(default_factory=list)
    wall_seconds: float = 0.0


class Run:
    """A run folder being written. See the module docstring.

    Args:
        cfg: the resolved config.
        resume: continue the run in the folder (else the folder must not hold a run yet).
    """

    def __init__(self, cfg: TrainConfig, resume: bool = False) -> None:
        self.cfg = cfg
        self.dir = Path(cfg.runs_dir) / cfg.name
        self.state = RunState()
        if resume:
            self.state = RunState(**json.loads((self.dir / "latest" / STATE_FILE).read_text()))
        else:
            if (self.dir / "latest").exists() or (self.dir / CSV_FILE).exists():
                raise ConfigError(
                    f"run folder {str(self.dir)!r} already holds a run: resume it with "
                    f"`scopa train --resume {self.dir}` or pick another name (name=...)"
                )
            self.dir.mkdir(parents=True, exist_ok=True)
        cfg.dump(self.dir / "config.yaml")
        self.curriculum = (
            Curriculum(list(cfg.curriculum), cfg.curriculum_threshold, self.state.curriculum_stage)
            if cfg.curriculum
            else None
        )
        if self.curriculum is not None:
            self.curriculum.history = [tuple(h) for h in self.state.curriculum_history]
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(self.dir / "tb"))
        self._start = time.time()
        self._wall0 = self.state.wall_seconds
        self._speed_t = time.time()
        self._speed_step = self.state.timestep
        self.bar = None

    # --- opponents ----------------------------------------------------------------

    def initial_opponents(self) -> Any:
        """The opponent mixture the envs start with (the curriculum stage when one is on)."""
        return self.curriculum.current if self.curriculum is not None else self.cfg.opponents

    def restore_envs(self, learner: Learner) -> None:
        """After a resume: put the self-play pool back into the envs."""
        for spec in self.state.pool:
            learner.env_method("add_pool_checkpoint", spec)

    # --- the periodic hook -----------------------------------------------------------

    def start_progress(self) -> None:
        if self.cfg.progress_bar:
            from tqdm import tqdm

            self.bar = tqdm(
                total=self.cfg.total_timesteps,
                initial=min(self.state.timestep, self.cfg.total_timesteps),
                unit="step",
                desc=self.cfg.name,
                dynamic_ncols=True,
                smoothing=0.05,
            )

    def on_step(self, timestep: int, learner: Learner, final: bool = False) -> None:
        """Call after env steps; evaluates / saves when due (and always when ``final``)."""
        cfg = self.cfg
        if self.bar is not None:
            self.bar.update(max(0, timestep - self.bar.n))
        self.state.timestep = timestep
        if cfg.selfplay and timestep - self.state.last_selfplay >= cfg.selfplay_every:
            self.state.last_selfplay = timestep
            folder = self.dir / "pool" / f"step_{timestep}"
            self.save_checkpoint(folder, learner)
            spec = f"{cfg.algo}:{folder}"
            self.state.pool = (self.state.pool + [spec])[-cfg.selfplay_pool_size :]
            learner.env_method("add_pool_checkpoint", spec)
        if final or timestep - self.state.last_eval >= cfg.eval_every:
            self.state.last_eval = timestep
            self.evaluate(timestep, learner)

    def log_speed(self, timestep: int) -> None:
        now = time.time()
        if now - self._speed_t >= 5.0:
            sps = (timestep - self._speed_step) / (now - self._speed_t)
            self.writer.add_scalar("charts/steps_per_second", sps, timestep)
            self._speed_t, self._speed_step = now, timestep

    # --- evaluation and checkpoints --------------------------------------------------

    def agent(self, policy: PolicyFn) -> PolicyAgent:
        cfg = self.cfg
        return PolicyAgent(policy, cfg.num_players, cfg.rules, cfg.action_mode, name=LEARNER_NAME)

    def evaluate(self, timestep: int, learner: Learner) -> dict[str, dict[str, float]]:
        cfg = self.cfg
        agent = self.agent(learner.policy)
        results = {}
        rows = []
        for opp in cfg.eval_opponents:
            if fast_eval_applies(cfg, opp):
                report = evaluate_fast(
                    learner.policy_batch, opp, cfg.eval_pairs, cfg.rules, cfg.eval_seed, cfg.action_mode
                )
            else:
                report = evaluate_agent(agent, opp, cfg.eval_pairs, cfg.num_players, cfg.rules, cfg.eval_seed)
            m = flat_metrics(report)
            results[opp] = m
            for k, v in m.items():
                self.writer.add_scalar(f"eval/{opp}/{k}", v, timestep)
            rows.append({"timestep": timestep, "opponent": opp, **m})
        self._append_csv(rows)
        if self.bar is not None and results:
            self.bar.set_postfix({f"{o[:9]}": f"{m['margin']:+.2f}" for o, m in results.items()})
        self.state.wall_seconds = self._wall0 + time.time() - self._start
        best_opp = cfg.best_eval_opponent
        if best_opp in results and results[best_opp]["margin"] > self.state.best_score:
            self.state.best_score = results[best_opp]["margin"]
            self.state.best_timestep = timestep
            self.save_checkpoint(self.dir / "best", learner)
        if self.curriculum is not None and self.curriculum.current in results:
            if self.curriculum.update(results[self.curriculum.current]["win_rate"], timestep):
                learner.env_method("set_opponents", self.curriculum.current)
            self.state.curriculum_stage = self.curriculum.stage
            self.state.curriculum_history = [list(h) for h in self.curriculum.history]
            self.writer.add_scalar("charts/curriculum_stage", self.curriculum.stage, timestep)
        self.save_checkpoint(self.dir / "latest", learner, with_state=True)
        self.writer.flush()
        return results

    def save_checkpoint(self, folder: Path, learner: Learner, with_state: bool = False) -> None:
        tmp = folder.with_name(folder.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        learner.save(tmp)
        write_meta(tmp, self.meta())
        if with_state:
            (tmp / STATE_FILE).write_text(json.dumps(self.state.__dict__, indent=2) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)

    def meta(self) -> dict:
        cfg = self.cfg
        setup = cfg.setup
        return {
            **{k: getattr(cfg, k) for k in IDENTITY_KEYS},
            "observation_size": setup.observation_size,
            "num_actions": setup.num_actions,
            "timestep": self.state.timestep,
            "run": cfg.name,
        }

    def _append_csv(self, rows: list[dict]) -> None:
        path = self.dir / CSV_FILE
        new = not path.exists()
        with path.open("a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
            if new:
                writer.writeheader()
            writer.writerows(rows)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.writer.close()


LEARNER_NAME = "learner"


def resume_config(run_dir: str | Path, config_path: str | None, overrides: list[str]) -> TrainConfig:
    """The config of a run to resume, refusing another config or action space.

    Only the keys of :data:`~train.config.RESUME_KEYS` may differ from the saved config.
    """
    run_dir = Path(run_dir)
    saved_path = run_dir / "config.yaml"
    if not run_dir.is_dir():
        raise ConfigError(f"no run folder {str(run_dir)!r}")
    if not saved_path.is_file():
        raise ConfigError(
            f"{str(run_dir)!r} is not a run folder: it has no config.yaml (scopa train CONFIG writes one)"
        )
    if not (run_dir / "latest" / META_FILE).is_file():
        raise ConfigError(
            f"{str(run_dir)!r} has no checkpoint to resume: {run_dir / 'latest' / META_FILE} is missing (latest/ is "
            f"written at the first evaluation, after eval_every steps); start it again with "
            f"`scopa train {saved_path}`"
        )
    saved = TrainConfig.load(saved_path)
    saved_dict = saved.to_dict()
    if config_path is not None:
        new = TrainConfig.load(config_path, overrides)
    else:
        from train.config import parse_overrides

        extra = parse_overrides(overrides)
        new = TrainConfig.from_dict({**saved_dict, **extra}, str(saved_path), overrides=extra)
    new.name, new.runs_dir = saved.name, saved.runs_dir
    changed = [k for k, v in new.to_dict().items() if v != saved_dict[k] and k not in RESUME_KEYS]
    if changed:
        diffs = ", ".join(f"{k}: {saved_dict[k]!r} -> {getattr(new, k)!r}" for k in changed)
        raise ConfigError(
            f"cannot resume {str(run_dir)!r} with a different config ({diffs}); only "
            f"{', '.join(RESUME_KEYS)} may change. Start a new run (name=...) instead."
        )
    # the run goes on in the folder given, also when it was copied or moved since it started
    new.name, new.runs_dir = run_dir.name, str(run_dir.parent)
    from train.checkpoint import MODEL_FILES, SB3_ZIP, read_meta, sb3_zip_refusal

    latest = run_dir / "latest"
    try:
        meta = read_meta(latest)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    model = MODEL_FILES.get(new.algo)
    if model and not (latest / model).is_file():
        if (latest / SB3_ZIP).is_file():
            raise ConfigError(sb3_zip_refusal(latest))
        raise ConfigError(f"{latest}: no {model} to resume from")
    mismatch = [k for k in IDENTITY_KEYS if meta.get(k) != getattr(new, k)]
    if mismatch:
        raise ConfigError(
            f"the checkpoint in {str(run_dir)!r} was trained with "
            + ", ".join(f"{k}={meta.get(k)!r}" for k in mismatch)
            + f" but the config says {', '.join(f'{k}={getattr(new, k)!r}' for k in mismatch)}: refusing to resume"
        )
    check_resume_budget(run_dir, steps_done(latest, meta), saved.total_timesteps, new.total_timesteps)
    return new


def steps_done(latest: Path, meta: dict) -> int:
    """The steps a run's ``latest`` checkpoint has trained: its ``state.json`` (what a resume starts
    from), else its ``meta.json``; 0 when neither says."""
    try:
        return int(json.loads((latest / STATE_FILE).read_text())["timestep"])
    except (OSError, ValueError, KeyError, TypeError):
        try:
            return int(meta.get("timestep", 0))
        except (ValueError, TypeError):
            return 0
