"""Deep Monte-Carlo (DMC): a move-scoring network trained on the compiled core.

The method of DouZero (Zha et al., 2021, "DouZero: Mastering DouDizhu with Self-Play Deep
Reinforcement Learning"): a network ``Q(state, move)`` scores every legal move from the
state's features and the move's own features, the actors play the best-scoring move
(epsilon-greedy), and ``Q`` is regressed on the Monte-Carlo return that followed, with no
bootstrapping. Scopa's legal moves are few (rarely more than ten), so scoring them one by
one is cheap; the move features are in :mod:`train.dmc_agent`.

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
seed gives the same metrics on CPU for a given ``torch_threads``. ``scopa train
configs/dmc_standard.yaml`` runs it; the run folder is the usual one (config.yaml, tb/,
evaluations.csv with the per-category rates, latest/ and best/ checkpoints, report.md with
curves). ``scopa train --resume runs/<name>`` continues from ``latest`` (the network, the
optimizer and the counters; the actors start fresh games and the replay buffer refills).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import yaml

from train.config import RESUME_KEYS, ConfigError, RunConfig, parse_overrides
from train.dmc_agent import (
    ALGO,
    FEATURE_VERSION,
    META_FILE,
    WEIGHTS_FILE,
    BatchPolicy,
    NumpyQNet,
    best_of,
    flatten_legal,
    move_features,
)

COMPILED = ("random", "greedy", "heuristic")
STATE_FILE = "state.json"
OPTIMIZER_FILE = "optimizer.pt"
ONLINE_FILE = "online.npz"
CSV_FILE = "evaluations.csv"
FINAL_EVAL_SEED = 20_261_122
RETURN_SLOTS = 16
"""Hands remembered per game while their decisions wait for the return (a hand is short)."""


@dataclass
class DmcConfig(RunConfig):
    """Everything a DMC run needs (:class:`~train.config.RunConfig`'s keys and these)."""

    algo: str = ALGO
    """Always "dmc" (the key that sends a config here)."""
    action_mode: str = "move"
    """DMC scores "move" ids (one per (card, capture)); "select" is not supported."""
    episode: str = "game"
    """Actors play whole games to the target; each decision's return is its hand's margin."""
    gamma: float = 1.0
    """Returns are the undiscounted hand margin (must be 1)."""
    opponents: Any = field(default_factory=lambda: {"heuristic": 1.0})
    """Compiled opponents of the baseline actors: "random", "greedy", "heuristic" or a mixture."""
    selfplay_games: int = 256
    """Games in the self-play batch (the network plays every seat); 0: none."""
    opponent_games: int = 256
    """Games in the batch against ``opponents`` (the network holds one random seat); 0: none."""
    heuristic_features: bool = False
    """Give the network the ``heuristic`` baseline's score of each move as three more move features
    (:mod:`train.dmc_agent`); the agent then computes that score at play time too."""
    label_positions: int = 0
    """Positions per actor step (over both batches) whose every legal move is labelled with its
    value under the compiled search ``label_search``; the learner regresses those labels next to
    the Monte-Carlo returns (expert iteration, the search as the expert). 0: none."""
    label_search: str = "fsearch:worlds=64"
    """The labelling search, an ``fsearch`` spec (:mod:`agents.fast_search`)."""
    label_weight: float = 1.0
    """Weight of the label loss (a minibatch of labels per minibatch of returns)."""
    label_buffer_size: int = 400_000
    """Recent labelled moves the label minibatches are drawn from."""
    label_threads: int = 2
    """Threads of the labelling search (at most the cores); the labels do not depend on it."""
    label_loss: str = "values"
    """What the network fits of a labelled position: "values" regresses every move's value; "differences"
    regresses, for every other legal move, its value's gap to the search's best move,
    ``Q(s, best) - Q(s, a)`` on ``S(s, best) - S(s, a)`` (the ranking that decides the move; the level
    comes from the returns alone), and labels only positions with a choice."""
    trunk: list = field(default_factory=lambda: [512])
    """Hidden layers of the state trunk (the observation alone, computed once per position)."""
    net_arch: list = field(default_factory=lambda: [256, 256])
    """Hidden layers of the head over (trunk output, move features)."""
    learning_rate: float = 3e-4
    """Adam step size."""
    batch_size: int = 2048
    """Samples per gradient step."""
    sample_reuse: float = 2.0
    """Gradient samples per collected sample (updates per round = (new returns + new labels) * reuse /
    batch_size)."""
    buffer_size: int = 200_000
    """Recent samples the minibatches are drawn from."""
    rollout_steps: int = 16
    """Actor steps of both batches between two learner rounds."""
    epsilon: float = 0.02
    """Probability that an acting seat plays a uniformly random legal move."""
    teacher: str = "heuristic"
    """Compiled player that plays a share of the moves early on ("" for none)."""
    teacher_start: float = 0.5
    """Share of the acting seats' moves the teacher plays at step 0."""
    teacher_steps: int = 3_000_000
    """Decisions over which the teacher's share decays linearly to 0."""
    max_grad_norm: float = 10.0
    """Gradient norm clip."""
    learning_rate_end: float | None = None
    """Learning rate at ``total_timesteps``, reached linearly from ``learning_rate`` (None: constant)."""
    ema: float = 0.0
    """Decay of an exponential moving average of the weights, per update; the average is what is
    evaluated and saved (it smooths the noise of Monte-Carlo targets). 0: off, e.g. 0.999."""
    total_timesteps: int = 20_000_000
    """Decisions (samples) to train on."""
    stages: list = field(default_factory=list)
    """Later stages of the run: ``[{at: DECISIONS, KEY: VALUE, ...}, ...]`` with keys of ``STAGE_KEYS``
    (the labels and the learning-rate schedule). From ``at`` decisions on, the keys take these values
    as if the run were resumed there with them (``scopa train --resume RUN KEY=VALUE ...``): new games
    drawn from the seed and the step, empty buffers, and the learning rate's linear schedule running
    from this stage's start value at 0 decisions to its ``learning_rate_end`` at the stage's end (the
    next ``at``, or ``total_timesteps``), as a resumed run's does. A run with stages and the same run
    made of plain runs and resumes train the same weights (tested)."""
    torch_threads: int = 2
    """``torch.set_num_threads``; a seed reproduces a run for the same value."""
    device: str = "auto"
    """"auto" (cuda when present, else cpu), "cpu" or "cuda"; the actors' scoring runs there too."""
    eval_every: int = 1_000_000
    """Decisions between evaluations (and saves of ``latest`` and ``best``)."""
    eval_opponents: list = field(default_factory=lambda: ["greedy", "heuristic"])
    """Compiled baselines evaluated against on duplicate deals (the compiled core)."""
    eval_pairs: int = 1000
    """Duplicate deals per opponent and evaluation (every rotation, whole games)."""
    final_eval_pairs: int = 10_000
    """Duplicate deals per opponent in the final evaluation of ``best`` (report.md)."""
    progress_bar: bool = True
    """Show a progress bar with ETA."""

    CHOICES: ClassVar[dict[str, tuple]] = {
        **RunConfig.CHOICES,
        "algo": (ALGO,),
        "action_mode": ("move",),
        "reward": ("points",),
        "device": ("auto", "cpu", "cuda"),
        "teacher": ("",) + COMPILED,
        "label_loss": ("values", "differences"),
    }
    POSITIVE_KEYS: ClassVar[tuple[str, ...]] = (
        "total_timesteps",
        "torch_threads",
        "eval_every",
        "eval_pairs",
        "batch_size",
        "buffer_size",
        "rollout_steps",
        "teacher_steps",
        "label_buffer_size",
        "label_threads",
    )
    UNIT_KEYS: ClassVar[tuple[str, ...]] = ("epsilon", "teacher_start", "ema")
    STAGE_KEYS: ClassVar[tuple[str, ...]] = (
        "label_positions",
        "label_search",
        "label_weight",
        "label_buffer_size",
        "label_threads",
        "label_loss",
        "learning_rate",
        "learning_rate_end",
    )
    KEYS_LABEL: ClassVar[str] = " for algo dmc"
    # a resume may change what a stage may (the labels, the learning-rate schedule) and the stages: a second
    # stage of a run (denser labels, a lower rate) continues the same network and optimizer
    RESUME_KEYS: ClassVar[tuple[str, ...]] = (*RESUME_KEYS, "device", *STAGE_KEYS, "stages")

    @classmethod
    def load(cls, path: str | Path | None, overrides: list[str] | None = None) -> DmcConfig:
        data: dict[str, Any] = {}
        if path is not None:
            p = Path(path)
            if not p.is_file():
                raise ConfigError(f"config file {str(path)!r} not found")
            try:
                data = yaml.safe_load(p.read_text()) or {}
            except yaml.YAMLError as exc:
                raise ConfigError(f"{path}: not valid YAML ({exc})") from None
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: expected a mapping of keys to values")
            data.setdefault("name", p.stem)
        cfg = cls.from_dict(data, str(path) if path else "config")
        extra = parse_overrides(overrides or [])
        return cls.from_dict({**cfg.to_dict(), **extra}, "command line") if extra else cfg

    def validate(self, source: str = "config") -> None:
        super().validate(source)
        fixed = {"gamma": 1.0, "selfplay": False}
        for key, value in fixed.items():
            if getattr(self, key) != value:
                raise ConfigError(f"{source}: {key} must be {value!r} for algo dmc, got {getattr(self, key)!r}")
        for key in ("selfplay_games", "opponent_games", "final_eval_pairs", "label_positions"):
            if getattr(self, key) < 0:
                raise ConfigError(f"{source}: {key} must be >= 0, got {getattr(self, key)!r}")
        if self.selfplay_games + self.opponent_games < 1:
            raise ConfigError(f"{source}: selfplay_games + opponent_games must be at least 1")
        if not self.learning_rate > 0 or not math.isfinite(self.learning_rate):
            raise ConfigError(f"{source}: learning_rate must be a positive number, got {self.learning_rate!r}")
        if self.learning_rate_end is not None and not (
            self.learning_rate_end > 0 and math.isfinite(self.learning_rate_end)
        ):
            raise ConfigError(
                f"{source}: learning_rate_end must be a positive number or null, got {self.learning_rate_end!r}"
            )
        if not (self.label_weight >= 0 and math.isfinite(self.label_weight)):
            raise ConfigError(f"{source}: label_weight must be a number >= 0, got {self.label_weight!r}")
        if self.label_positions:
            self.label_config()
        if self.ema >= 1.0:
            raise ConfigError(f"{source}: ema must be in [0, 1), got {self.ema!r}")
        self._check_stages(source)
        if not self.sample_reuse > 0:
            raise ConfigError(f"{source}: sample_reuse must be positive, got {self.sample_reuse!r}")
        if not self.max_grad_norm > 0:
            raise ConfigError(f"{source}: max_grad_norm must be positive, got {self.max_grad_norm!r}")
        if not self.trunk or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in self.trunk):
            raise ConfigError(f"{source}: trunk must be a non-empty list of positive ints, got {self.trunk!r}")
        if self.seed < 0:
            raise ConfigError(f"{source}: seed must be >= 0, got {self.seed!r}")
        from train.opponents import normalize_weights

        wrong = [s for s in normalize_weights(self.opponents) if s not in COMPILED]
        if wrong:
            raise ConfigError(
                f"{source}: opponents {wrong} are not compiled players; dmc plays against {list(COMPILED)}"
            )
        wrong = [s for s in self.eval_opponents if s not in COMPILED]
        if wrong:
            raise ConfigError(
                f"{source}: eval_opponents {wrong} are not compiled players; evaluate others after training with "
                f"`scopa eval dmc:runs/{self.name}/best AGENT`"
            )
        from scopa_env.engine.rules import get_rules
        from scopa_env.fast.batch import check_supported

        try:
            check_supported(get_rules(self.rules))
        except NotImplementedError as exc:
            raise ConfigError(f"{source}: dmc trains on the compiled core: {exc}") from None
        if self.label_positions:
            from scopa_env.fast.search import check_searchable

            try:
                check_searchable(self.rules)
            except NotImplementedError as exc:
                raise ConfigError(f"{source}: label_positions: {exc}") from None

    def _check_stages(self, source: str) -> None:
        if not isinstance(self.stages, list):
            raise ConfigError(f"{source}: stages must be a list of mappings, got {self.stages!r}")
        last = 0
        for k, stage in enumerate(self.stages):
            where = f"{source}: stages[{k}]"
            if not isinstance(stage, dict):
                raise ConfigError(f"{where} must be a mapping like {{at: 12000000, label_loss: differences}}")
            at = stage.get("at")
            if isinstance(at, bool) or not isinstance(at, int) or not last < at < self.total_timesteps:
                raise ConfigError(
                    f"{where}: at must be an int of decisions after the previous stage's ({last:,}) and before "
                    f"total_timesteps ({self.total_timesteps:,}), got {at!r}"
                )
            last = at
            wrong = sorted(set(stage) - {"at", *self.STAGE_KEYS}, key=str)
            if wrong:
                raise ConfigError(
                    f"{where}: key(s) {wrong} cannot change in a stage; these can: {', '.join(self.STAGE_KEYS)}"
                )
        for k in range(1, len(self.stages) + 1):
            self.for_stage(k, f"{source}: stages[{k - 1}]")

    def stage_index(self, timestep: int) -> int:
        """How many stages have begun at ``timestep`` decisions (0: the config's own values)."""
        return sum(1 for stage in self.stages if stage["at"] <= timestep)

    def for_stage(self, k: int, source: str = "config") -> DmcConfig:
        """The config in force during stage ``k`` (stage 0: this config; stage ``k``: ``stages[:k]`` applied)."""
        if k == 0:
            return self
        values = {key: v for stage in self.stages[:k] for key, v in stage.items() if key != "at"}
        return type(self).from_dict({**self.to_dict(), **values, "stages": []}, source)

    def stage_end(self, k: int) -> int:
        """The decision count where stage ``k`` ends (the next stage's ``at``, or ``total_timesteps``)."""
        return self.stages[k]["at"] if k < len(self.stages) else self.total_timesteps

    def label_config(self, source: str = "config") -> np.ndarray:
        """The settings array of ``label_search`` (:func:`scopa_env.fast.search.search_config`)."""
        from agents.registry import make_agent

        spec = self.label_search
        if not isinstance(spec, str) or spec.partition(":")[0].strip() != "fsearch":
            raise ConfigError(
                f"{source}: label_search must be an fsearch spec (e.g. 'fsearch:worlds=64'), got {spec!r}"
            )
        try:
            return make_agent(spec).C
        except ValueError as exc:
            raise ConfigError(f"{source}: label_search: {exc}") from None

    def check_agents(self) -> None:
        """Every agent here is a compiled player, checked by :meth:`validate`."""


def is_dmc_config(config_path: str | None, overrides: list[str]) -> bool:
    """Whether ``config_path`` (with ``overrides``) says ``algo: dmc``."""
    if config_path is None or not Path(config_path).is_file():
        return False
    try:
        data = yaml.safe_load(Path(config_path).read_text()) or {}
    except yaml.YAMLError:
        return False
    if not isinstance(data, dict):
        return False
    try:
        data.update(parse_overrides(overrides))
    except ConfigError:
        return False
    return data.get("algo") == ALGO


def is_dmc_run(run_dir: str | Path) -> bool:
    p = Path(run_dir) / "config.yaml"
    if not p.is_file():
        return False
    data = yaml.safe_load(p.read_text()) or {}
    return isinstance(data, dict) and data.get("algo") == ALGO


# --- the network -------------------------------------------------------------------


def build_network(obs_size: int, feat_size: int, trunk: list[int], head: list[int]):
    """``Q(obs, move)``: a state trunk, then a head over (trunk output, move features)."""
    import torch
    from torch import nn

    class QNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            sizes = [obs_size, *trunk]
            self.trunk = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
            sizes = [trunk[-1] + feat_size, *head, 1]
            self.head = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

        def forward(self, obs: torch.Tensor, rows: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
            h = obs
            for layer in self.trunk:
                h = torch.relu(layer(h))
            x = torch.cat([h[rows], feats], dim=1)
            for k, layer in enumerate(self.head):
                x = layer(x)
                if k < len(self.head) - 1:
                    x = torch.relu(x)
            return x.squeeze(-1)

    return QNet()


def numpy_weights(net) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}


# --- actors ---------------------------------------------------------------------------


class Actors:
    """One batch of the compiled core and the decisions waiting for their hand's return.

    Args:
        opponent: None for self-play (every seat's decisions are samples), else the compiled
            opponents (only the learner's decisions are samples).
    """

    def __init__(self, cfg: DmcConfig, num_games: int, opponent: Any, seeds: np.ndarray, rng: np.random.Generator):
        from scopa_env.fast import BatchedScopa

        self.batch = BatchedScopa(
            num_games,
            cfg.num_players,
            cfg.rules,
            action_mode="move",
            episode="game",
            reward="points",
            opponent=opponent,
            learner_seat="random" if opponent is not None else 0,
            legal_width=128,
        )
        self.batch.reset(seeds)
        self.rng = rng
        self.features = move_features(self.batch.rules, cfg.num_players, cfg.heuristic_features)
        n = num_games
        self.serial = np.zeros(n, np.int64)  # hand number of each row
        self.returns = np.zeros((n, RETURN_SLOTS, cfg.num_players), np.float32)
        self.filled = np.full((n, RETURN_SLOTS), -1, np.int64)
        self.pending: list[tuple[np.ndarray, ...]] = []
        self.labels: list[tuple[np.ndarray, ...]] = []
        self.hands = 0

    def label(self, obs: np.ndarray, rows: np.ndarray, cols: np.ndarray, feats: np.ndarray, labeller) -> None:
        """Label every legal move of ``labeller.positions`` random games with the search's value
        (``labeller.differences``: games with a choice, each other move against the search's best)."""
        from scopa_env.fast.search import search_values

        n = self.batch.num_games
        pool = np.flatnonzero(self.batch.legal_count > 1) if labeller.differences else np.arange(n)
        if pool.size == 0:
            return
        games = np.sort(self.rng.choice(pool, size=min(labeller.positions, pool.size), replace=False))
        seeds = self.rng.integers(0, 2**62, len(games))
        values = search_values(self.batch, games, seeds, labeller.C, labeller.threads)
        where = np.full(n, -1, np.int64)
        where[games] = np.arange(len(games))
        sel = np.flatnonzero(where[rows] >= 0)
        target = values[where[rows[sel]], cols[sel]].astype(np.float32)
        if not labeller.differences:
            self.labels.append((obs[rows[sel]], feats[sel], target))
            return
        # each game's best move by the search (ties: the lowest column), then one pair (best, other) with
        # the value gap for every other legal move of the game
        g = rows[sel]
        order = np.lexsort((-target, g))
        first = order[np.r_[True, g[order][1:] != g[order][:-1]]]
        best = np.full(n, -1, np.int64)
        best[g[first]] = first
        other = np.flatnonzero(np.arange(len(sel)) != best[g])
        b = best[g[other]]
        f = feats[sel]
        self.labels.append((obs[g[other]], f[b], target[b] - target[other], f[other]))

    def take_labels(self) -> tuple[np.ndarray, ...] | None:
        """The labels made since the last call (``(obs, move features, value)``; with differences
        ``(obs, best move's features, value gap, other move's features)``), or None."""
        if not self.labels:
            return None
        out = tuple(np.concatenate(x) for x in zip(*self.labels))
        self.labels = []
        return out

    def act(self, score_fn, epsilon: float, teacher: str, teacher_share: float, labeller=None) -> None:
        """One step of every game: pick moves, remember the samples, (label some), step, note hand returns."""
        b = self.batch
        obs = b.obs.copy()
        rows, cols, ids = flatten_legal(b.legal_ids, b.legal_count)
        h = None
        if self.features.heuristic:
            from scopa_env.fast.features import heuristic_move_scores

            h = heuristic_move_scores(b)[rows, cols]
        feats = self.features(obs, rows, ids, h)
        if labeller is not None and labeller.positions > 0:
            self.label(obs, rows, cols, feats, labeller)
        q = score_fn(obs, rows, feats)
        choice = best_of(q, rows, cols, b.legal_ids.shape)
        n = b.num_games
        explore = self.rng.random(n) < epsilon
        if explore.any():
            choice[explore] = (self.rng.random(int(explore.sum())) * b.legal_count[explore]).astype(np.int64)
        actions = b.legal_ids[np.arange(n), choice]
        if teacher and teacher_share > 0:
            from train.fast_eval import compiled_move_ids

            taught = (self.rng.random(n) < teacher_share) & ~explore
            if taught.any():
                actions = np.where(taught, compiled_move_ids(b, teacher), actions)
        # the chosen move's features: its row in the flattened list
        start = np.concatenate([[0], np.cumsum(b.legal_count)[:-1]])
        picked = start + np.argmax(b.legal_ids == actions[:, None], axis=1)
        self.pending.append((obs, feats[picked], np.arange(n), b.to_play.copy(), self.serial.copy()))
        b.step(actions)
        ended = np.flatnonzero(b.hand_ended)
        if ended.size:
            slot = self.serial[ended] % RETURN_SLOTS
            self.returns[ended, slot] = b.rewards[ended]
            self.filled[ended, slot] = self.serial[ended]
            self.serial[ended] += 1
            self.hands += ended.size

    def collect(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(obs, move features, return)`` of every decision whose hand has ended; the rest wait."""
        if not self.pending:
            return _empty(self.batch.layout.size, self.features.size)
        obs, feats, rows, seats, serial = (np.concatenate(x) for x in zip(*self.pending))
        slot = serial % RETURN_SLOTS
        done = self.filled[rows, slot] == serial
        ret = self.returns[rows[done], slot[done], seats[done]]
        keep = ~done
        self.pending = [(obs[keep], feats[keep], rows[keep], seats[keep], serial[keep])] if keep.any() else []
        return obs[done], feats[done], ret


def _empty(obs_size: int, feat_size: int):
    return np.zeros((0, obs_size), np.float32), np.zeros((0, feat_size), np.float32), np.zeros(0, np.float32)


class Buffer:
    """The most recent ``capacity`` samples (a ring), drawn uniformly for minibatches."""

    def __init__(self, capacity: int, obs_size: int, feat_size: int, pairs: bool = False) -> None:
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.feats = np.zeros((capacity, feat_size), np.float32)
        self.ret = np.zeros(capacity, np.float32)
        self.other = np.zeros((capacity, feat_size), np.float32) if pairs else None
        """With ``pairs``: the second move of each sample (``ret`` is then the value gap)."""
        self.capacity, self.size, self.pos = capacity, 0, 0

    def add(self, obs: np.ndarray, feats: np.ndarray, ret: np.ndarray, other: np.ndarray | None = None) -> None:
        for start in range(0, len(ret), self.capacity):
            end = start + self.capacity
            r = ret[start:end]
            idx = (self.pos + np.arange(len(r))) % self.capacity
            self.obs[idx], self.feats[idx], self.ret[idx] = obs[start:end], feats[start:end], r
            if self.other is not None:
                self.other[idx] = other[start:end]
            self.pos = int((self.pos + len(r)) % self.capacity)
            self.size = min(self.capacity, self.size + len(r))


# --- the run ---------------------------------------------------------------------------


def train(cfg: DmcConfig, resume: bool = False, report: bool = True) -> Path:
    """Train (or resume) a DMC run; returns the run folder."""
    import torch

    # --- seeding and device -------------------------------------------------------------
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    device = torch.device(
        "cuda" if cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available()) else "cpu"
    )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: cuda, but torch sees no CUDA device (use device: auto or cpu)")
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
    if resume:
        state.update(json.loads((run_dir / "latest" / STATE_FILE).read_text()))
    elif (run_dir / "latest").exists() or (run_dir / CSV_FILE).exists():
        raise ConfigError(
            f"run folder {str(run_dir)!r} already holds a run: resume it with `scopa train --resume {run_dir}` "
            "or pick another name (name=...)"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg.dump(run_dir / "config.yaml")

    def start_segment(eff: DmcConfig):
        """The actors, labellers, buffers and generator of a run (or a stage) starting at this step."""
        # a resumed run draws new games: its generator continues from the seed and the step count
        rng = np.random.default_rng([cfg.seed, state["timestep"]])
        actors: list[Actors] = []
        for games, opponent in ((cfg.selfplay_games, None), (cfg.opponent_games, cfg.opponents)):
            if games:
                seeds = rng.integers(0, 2**62, games)
                actors.append(Actors(cfg, games, opponent, seeds, np.random.default_rng(rng.integers(0, 2**62))))
        size, feat_size = actors[0].batch.layout.size, actors[0].features.size
        label_buffer = (
            Buffer(eff.label_buffer_size, size, feat_size, pairs=eff.label_loss == "differences")
            if eff.label_positions
            else None
        )
        return rng, actors, _labellers(eff, actors), Buffer(cfg.buffer_size, size, feat_size), label_buffer

    # --- actors (a stage, like a resume, starts with new games and empty buffers) ----------------
    stage = cfg.stage_index(state["timestep"])
    eff = cfg.for_stage(stage)
    rng, actors, labellers, buffer, label_buffer = start_segment(eff)
    layout = actors[0].batch.layout
    features = actors[0].features

    # --- learner --------------------------------------------------------------------------------
    net = build_network(layout.size, features.size, list(cfg.trunk), list(cfg.net_arch)).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    ema_net = None
    if cfg.ema:
        import copy

        ema_net = copy.deepcopy(net).requires_grad_(False)
    if resume:
        latest = run_dir / "latest"
        online = latest / ONLINE_FILE if (latest / ONLINE_FILE).exists() else latest / WEIGHTS_FILE
        for target, path in ((net, online), (ema_net, latest / WEIGHTS_FILE)):
            if target is not None:
                weights = np.load(path, allow_pickle=False)
                target.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
        optimizer.load_state_dict(torch.load(latest / OPTIMIZER_FILE, weights_only=True))
    played = ema_net if ema_net is not None else net  # what is evaluated and saved

    def score(obs: np.ndarray, rows: np.ndarray, feats: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            q = net(
                torch.from_numpy(obs).to(device),
                torch.from_numpy(rows).to(device),
                torch.from_numpy(feats).to(device),
            )
        return q.cpu().numpy()

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir / "tb"))
    bar = None
    if cfg.progress_bar:
        from tqdm import tqdm

        print(f"dmc: training {cfg.name} for {cfg.total_timesteps:,} decisions on {device} ...", flush=True)
        bar = tqdm(
            total=cfg.total_timesteps,
            initial=state["timestep"],
            unit="dec",
            desc=cfg.name,
            dynamic_ncols=True,
            smoothing=0.05,
        )
    wall0, cpu0 = time.time() - state["wall_seconds"], time.process_time() - state["cpu_seconds"]
    losses: list[float] = []
    label_losses: list[float] = []
    if state["timestep"] == 0:
        _evaluate(cfg, played, features, run_dir, writer, state, 0, bar)

    # --- the loop: actors, then learner -------------------------------------------------------
    while state["timestep"] < cfg.total_timesteps:
        if cfg.stage_index(state["timestep"]) != stage:
            stage = cfg.stage_index(state["timestep"])
            eff = cfg.for_stage(stage)
            state["hands"] += sum(a.hands for a in actors)
            rng, actors, labellers, buffer, label_buffer = start_segment(eff)
            message = f"dmc: stage {stage} from {state['timestep']:,} decisions: {cfg.stages[stage - 1]}"
            bar.write(message) if bar is not None else print(message, flush=True)
        t = state["timestep"]
        share = cfg.teacher_start * max(0.0, 1.0 - t / cfg.teacher_steps) if cfg.teacher else 0.0
        net.eval()
        for _ in range(cfg.rollout_steps):
            for a, labeller in zip(actors, labellers):
                a.act(score, cfg.epsilon, cfg.teacher, share, labeller)
        new = new_labels = 0
        for a in actors:
            obs, feats, ret = a.collect()
            buffer.add(obs, feats, ret)
            new += len(ret)
            labels = a.take_labels()
            if labels is not None:
                label_buffer.add(*labels)
                new_labels += len(labels[2])
        state["labels"] += new_labels
        state["timestep"] += new
        net.train()
        # every update draws a minibatch of returns (and one of labels): the new samples of both set the count
        ready = buffer.size >= cfg.batch_size
        updates = max(1, round((new + new_labels) * cfg.sample_reuse / cfg.batch_size)) if ready else 0
        lr = eff.learning_rate
        if eff.learning_rate_end is not None:
            frac = min(1.0, state["timestep"] / cfg.stage_end(stage))
            lr = eff.learning_rate + (eff.learning_rate_end - eff.learning_rate) * frac
        for group in optimizer.param_groups:
            group["lr"] = lr
        for _ in range(updates):
            idx = rng.integers(0, buffer.size, cfg.batch_size)
            obs_t = torch.from_numpy(buffer.obs[idx]).to(device)
            feats_t = torch.from_numpy(buffer.feats[idx]).to(device)
            target = torch.from_numpy(buffer.ret[idx]).to(device)
            rows_t = torch.arange(cfg.batch_size, device=device)
            loss = torch.nn.functional.mse_loss(net(obs_t, rows_t, feats_t), target)
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
                label_losses.append(label_loss.item())
                loss = loss + eff.label_weight * label_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            if ema_net is not None:
                with torch.no_grad():
                    for p_avg, p in zip(ema_net.parameters(), net.parameters()):
                        p_avg.mul_(cfg.ema).add_(p, alpha=1.0 - cfg.ema)
            losses.append(loss.item())
            state["updates"] += 1
        if bar is not None:
            bar.update(state["timestep"] - bar.n)
        if losses and state["updates"] % 50 < updates:
            step = state["timestep"]
            writer.add_scalar("losses/q_mse", float(np.mean(losses)), step)
            if label_losses:
                writer.add_scalar("losses/label_mse", float(np.mean(label_losses)), step)
                writer.add_scalar("charts/labelled_moves", state["labels"], step)
                label_losses = []
            writer.add_scalar("charts/teacher_share", share, step)
            writer.add_scalar("charts/hands", sum(a.hands for a in actors) + state["hands"], step)
            elapsed = time.time() - wall0
            writer.add_scalar("charts/decisions_per_second", step / max(elapsed, 1e-9), step)
            losses = []
        if state["timestep"] - state["last_eval"] >= cfg.eval_every or state["timestep"] >= cfg.stage_end(stage):
            state["wall_seconds"] = time.time() - wall0
            state["cpu_seconds"] = time.process_time() - cpu0
            _evaluate(cfg, played, features, run_dir, writer, state, state["timestep"], bar)
            _save(run_dir / "latest", played, cfg, state, optimizer, online=net if ema_net is not None else None)
    state["hands"] += sum(a.hands for a in actors)
    state["wall_seconds"] = time.time() - wall0
    state["cpu_seconds"] = time.process_time() - cpu0
    _save(run_dir / "latest", played, cfg, state, optimizer, online=net if ema_net is not None else None)
    if bar is not None:
        bar.close()
    writer.close()
    if report and cfg.final_eval_pairs > 0:
        write_dmc_report(run_dir, cfg.final_eval_pairs, progress=cfg.progress_bar)
    return run_dir


@dataclass
class Labeller:
    """What one actor batch labels per step: ``positions`` games, searched with settings ``C``."""

    positions: int
    C: np.ndarray
    threads: int
    differences: bool = False


def _labellers(cfg: DmcConfig, actors: list[Actors]) -> list[Labeller | None]:
    """``label_positions`` shared among the actor batches in proportion to their games."""
    if not cfg.label_positions:
        return [None] * len(actors)
    from scopa_env.fast.batch import max_threads

    C = cfg.label_config()
    total = sum(a.batch.num_games for a in actors)
    threads = min(cfg.label_threads, max_threads())
    differences = cfg.label_loss == "differences"
    return [Labeller(round(cfg.label_positions * a.batch.num_games / total), C, threads, differences) for a in actors]


def _evaluate(cfg: DmcConfig, net, features, run_dir: Path, writer, state: dict, step: int, bar) -> dict:
    """Duplicate deals against every eval opponent; log, write the CSV, save ``best``."""
    from train.evaluation import flat_metrics
    from train.fast_eval import evaluate_fast_sides
    from train.run import CSV_COLUMNS

    policy = BatchPolicy(NumpyQNet(numpy_weights(net)), features)
    results = {}
    rows = []
    for opp in cfg.eval_opponents:
        report = evaluate_fast_sides(policy, opp, cfg.eval_pairs, cfg.num_players, cfg.rules, cfg.eval_seed)
        m = flat_metrics(report)
        results[opp] = m
        for k, v in m.items():
            writer.add_scalar(f"eval/{opp}/{k}", v, step)
        rows.append({"timestep": step, "opponent": opp, **m})
    path = run_dir / CSV_FILE
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=(*CSV_COLUMNS, "cpu_hours"))
        if new:
            w.writeheader()
        w.writerows({**r, "cpu_hours": state["cpu_seconds"] / 3600} for r in rows)
    writer.add_scalar("charts/cpu_hours", state["cpu_seconds"] / 3600, step)
    writer.flush()
    if bar is not None:
        bar.set_postfix({o[:9]: f"{m['margin']:+.3f}" for o, m in results.items()})
    else:
        print(f"step {step:,}: " + ", ".join(f"{o} {m['margin']:+.3f}" for o, m in results.items()), flush=True)
    state["last_eval"] = step
    best_opp = cfg.best_eval_opponent
    if best_opp in results and results[best_opp]["margin"] > state["best_score"]:
        state["best_score"] = results[best_opp]["margin"]
        state["best_timestep"] = step
        _save(run_dir / "best", net, cfg, state)
    return results


def checkpoint_meta(cfg: DmcConfig, state: dict) -> dict:
    from scopa_env.engine.observation import ObservationLayout
    from scopa_env.engine.rules import get_rules

    return {
        "algo": ALGO,
        "feature_version": FEATURE_VERSION,
        "rules": cfg.rules,
        "num_players": cfg.num_players,
        "action_mode": "move",
        "observation_size": ObservationLayout.for_rules(cfg.num_players, get_rules(cfg.rules)).size,
        "heuristic_features": cfg.heuristic_features,
        "trunk": list(cfg.trunk),
        "net_arch": list(cfg.net_arch),
        "timestep": state["timestep"],
        "seed": cfg.seed,
        "run": cfg.name,
        "cpu_hours": round(state["cpu_seconds"] / 3600, 4),
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


# --- report -------------------------------------------------------------------------------------


def final_evaluation(run_dir: str | Path, pairs: int, progress: bool = False) -> list[dict]:
    """``best`` against every eval opponent on ``pairs`` fresh duplicate deals (``final_eval.json``)."""
    from train.dmc_agent import load_dmc_batch_policy
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


# --- command line ----------------------------------------------------------------------------------


def dmc_dispatch(config_path: str | None, overrides: list[str], resume: str | None, report: bool = True) -> int | None:
    """Run a DMC config or resume a DMC run; None when neither is one (``scopa train`` goes on)."""
    if not (is_dmc_config(config_path, overrides) or (resume and is_dmc_run(resume))):
        return None
    try:
        if resume:
            cfg = _resume_config(Path(resume), config_path, overrides)
        else:
            cfg = DmcConfig.load(config_path, overrides)
    except ConfigError as exc:
        print(f"scopa train: error: {exc}", file=sys.stderr)
        return 2
    run_dir = train(cfg, resume=bool(resume), report=report)
    print(f"run folder: {run_dir}" + (f" (report: {run_dir / 'report.md'})" if report else ""))
    return 0


def _resume_config(run_dir: Path, config_path: str | None, overrides: list[str]) -> DmcConfig:
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
    # the run goes on in the folder given, also when it was copied or moved since it started
    new.name, new.runs_dir = run_dir.name, str(run_dir.parent)
    return new
