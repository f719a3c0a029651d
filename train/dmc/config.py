"""The configuration of a deep Monte-Carlo run (:mod:`train.dmc`): every key documented once, checked up front.

:class:`DmcConfig` adds the keys of DMC to :class:`~train.config.RunConfig`'s (the run
folder, the rules, the seed, the evaluation opponents); ``algo: dmc`` in a YAML file under
``configs/`` sends it here (:func:`is_dmc_config`). A run may change a few keys part-way
through (``stages``): :meth:`DmcConfig.for_stage` gives the config in force in each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from agents.compiled import COMPILED_BASELINES as COMPILED
from train.config import (
    RESUME_KEYS,
    STEPS_RANGE,
    ConfigError,
    Range,
    RunConfig,
    check_layers,
    parse_overrides,
    read_yaml,
)
from train.dmc.agent import ALGO, move_features
from train.limits import MAX_ENVS, MAX_EVAL_PAIRS, dmc_parameters, memory_problem

# COMPILED: the compiled players DMC trains and evaluates against (and its ``teacher``), the kit's
# compiled baselines (agents.compiled.COMPILED_BASELINES), named once there.


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
    """Opponents of the baseline actors: "random", "greedy", "heuristic" or a mixture of them (played
    inside the core's step), or one ``fsearch`` spec, e.g. ``"fsearch:worlds=32"`` (the compiled search,
    played from Python between the steps on ``label_threads`` threads; no teacher, search labels or
    workers then). The network holds one seat of each opponent game, its side's seats in a
    partnership game."""
    selfplay_games: int = 256
    """Games in the self-play batch (the network plays every seat); 0: none; at most 4,096."""
    opponent_games: int = 256
    """Games in the batch against ``opponents`` (the network holds one random seat); 0: none; at most 4,096."""
    heuristic_features: bool = False
    """Give the network the ``heuristic`` baseline's score of each move as three more move features
    (:mod:`train.dmc.agent`); the agent then computes that score at play time too."""
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
    """Threads of the labelling search, and of an ``fsearch`` opponent's (at most the cores); the labels
    and the search's moves do not depend on it."""
    label_exact_only: bool = False
    """Label only positions that ``label_search`` solves exactly (at most its ``exact_cards`` cards left to
    play): exact labels of the last cards, cheap to compute, with the rest of the game learnt from the
    returns alone."""
    label_loss: str = "values"
    """What the network fits of a labelled position: "values" regresses every move's value; "differences"
    regresses, for every other legal move, its value's gap to the search's best move,
    ``Q(s, best) - Q(s, a)`` on ``S(s, best) - S(s, a)`` (the ranking that decides the move; the level
    comes from the returns alone), and labels only positions with a choice."""
    trunk: list = field(default_factory=lambda: [512])
    """Hidden layers of the state trunk (the observation alone, computed once per position): 1 to 16 layers
    of 1 to 16,384 units, and trunk and head together at most 50,000,000 parameters (train/limits.py)."""
    net_arch: list = field(default_factory=lambda: [256, 256])
    """Hidden layers of the head over (trunk output, move features); bounded as ``trunk``."""
    learning_rate: float = 3e-4
    """Adam step size."""
    batch_size: int = 2048
    """Samples per gradient step (at most ``buffer_size``)."""
    sample_reuse: float = 2.0
    """Gradient samples per collected sample (updates per round = (new returns + new labels) * reuse /
    batch_size)."""
    buffer_size: int = 200_000
    """Recent samples the minibatches are drawn from; this buffer and the label buffer (observation and
    move features, 4 bytes each) must fit in half of the machine's memory."""
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
    """"auto" (cuda when present, else cpu), "cpu" or "cuda"; the actors' scoring runs there too (with
    ``workers``, the learner's only: the workers score on their CPUs)."""
    workers: int = 0
    """Ray worker processes that play the actor games and label their positions (:mod:`train.dmc.workers`,
    docs/training.md "Scaling out with Ray"): 0 keeps them in the learner's process (the default); N splits
    each batch's games among N workers, at most the larger of ``selfplay_games`` and ``opponent_games``.
    Needs Ray's core (``pip install "ray>=2.60,<3"``). A seed and a worker count give the same run."""
    sync: bool = True
    """With ``workers``: the learner waits for every worker's round and trains on it before the next round
    starts, so every round is played with the newest weights (as in one process); false hands each worker the
    next round, with the weights of before this round's training, while the learner trains (one round stale)."""
    ray_address: str = ""
    """With ``workers``: the Ray to run them on: "" starts one on this machine; "auto" joins the cluster
    started here with ``ray start --head``; "HOST:PORT" (the head's GCS port) or "ray://HOST:10001" another's."""
    worker_cpus: int = 1
    """CPUs Ray reserves for each worker, and the threads of its torch scoring."""
    eval_every: int = 1_000_000
    """Decisions between evaluations (and saves of ``latest`` and ``best``)."""
    eval_opponents: list = field(default_factory=lambda: ["greedy", "heuristic"])
    """Compiled baselines evaluated against on duplicate deals (the compiled core)."""
    eval_pairs: int = 1000
    """Duplicate deals per opponent and evaluation (every rotation, whole games)."""
    final_eval_pairs: int = 10_000
    """Duplicate deals per opponent in the final evaluation of ``best`` (report.md)."""
    keep_evaluated: bool = False
    """Keep the weights of every evaluation in ``evaluated/<decisions>/`` (weights.npz and meta.json), so
    that a learning curve can be measured afterwards against another opponent
    (``benchmarks/snapshot_curve.py``) without charging those games to the run's CPU-hours."""
    init_weights: str = ""
    """Start from a DMC network's weights instead of random ones: a checkpoint folder, a run folder (its
    ``best``) or ``zoo:NAME`` (checked against its card's hash). It must play the same game with the same
    move features and layer widths (``trunk``, ``net_arch``); the network and its weight average start
    from it, Adam starts afresh. A network trained this way costs the starting network's CPU-hours too."""
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
        "worker_cpus",
    )
    UNIT_KEYS: ClassVar[tuple[str, ...]] = ("epsilon", "teacher_start", "ema")
    STAGE_KEYS: ClassVar[tuple[str, ...]] = (
        "selfplay_games",
        "opponent_games",
        "label_positions",
        "label_search",
        "label_weight",
        "label_buffer_size",
        "label_threads",
        "label_loss",
        "label_exact_only",
        "learning_rate",
        "learning_rate_end",
    )
    RANGES: ClassVar[dict[str, Range]] = {
        **RunConfig.RANGES,
        "selfplay_games": Range(0, MAX_ENVS),
        "opponent_games": Range(0, MAX_ENVS),
        "batch_size": STEPS_RANGE,
        "buffer_size": STEPS_RANGE,
        "label_buffer_size": STEPS_RANGE,
        "teacher_steps": STEPS_RANGE,
        "rollout_steps": Range(1, 1_000_000),
        "label_threads": Range(1, 1024),
        "final_eval_pairs": Range(0, MAX_EVAL_PAIRS),
        "workers": Range(0, MAX_ENVS),
        "worker_cpus": Range(1, 1024),
    }
    KEYS_LABEL: ClassVar[str] = " for algo dmc"
    # a resume may change what a stage may (the labels, the learning-rate schedule) and the stages: a second
    # stage of a run (denser labels, a lower rate) continues the same network and optimizer
    RESUME_KEYS: ClassVar[tuple[str, ...]] = (
        *RESUME_KEYS,
        "device",
        *STAGE_KEYS,
        "stages",
        "workers",
        "sync",
        "ray_address",
        "worker_cpus",
    )

    @classmethod
    def load(cls, path: str | Path | None, overrides: list[str] | None = None) -> DmcConfig:
        data: dict[str, Any] = {}
        if path is not None:
            data = read_yaml(path) or {}
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: expected a mapping of keys to values")
            data.setdefault("name", Path(path).stem)
        cfg = cls.from_dict(data, str(path) if path else "config")
        extra = parse_overrides(overrides or [])
        return cls.from_dict({**cfg.to_dict(), **extra}, "command line") if extra else cfg

    @property
    def search_opponent(self) -> str | None:
        """The ``fsearch`` spec of ``opponents`` where it names one search alone (the opponent games
        are then played against it from Python between the core's steps), else None."""
        from agents.compiled import is_fsearch
        from train.opponents import normalize_weights

        specs = list(normalize_weights(self.opponents))
        return specs[0].strip() if len(specs) == 1 and is_fsearch(specs[0]) else None

    def _check_search_opponent(self, source: str) -> None:
        """An ``fsearch`` opponent: a spec the compiled search plays for this game, in the learner's
        process, with none of what its games cannot have (a teacher, search labels, Ray workers)."""
        from agents.compiled import check_fsearch

        spec = self.search_opponent
        try:
            check_fsearch(spec, self.rules)
        except ValueError as exc:
            raise ConfigError(f"{source}: opponents: {exc}") from None
        stages = [stage for stage in self.stages if isinstance(stage, dict)]
        for key, off in (("teacher", ""), ("label_positions", 0), ("workers", 0)):
            if getattr(self, key) != off or any(stage.get(key, off) != off for stage in stages):
                raise ConfigError(
                    f"{source}: opponents {spec!r} plays its games in the learner's process without a teacher, "
                    f"search labels or workers: set {key}: {off!r}"
                )

    def validate(self, source: str = "config") -> None:
        from train.opponents import check_fair_specs

        try:  # before the choices: the oracle sees every card, one line says so
            check_fair_specs([self.teacher], "the DMC teacher (the learner only ever sees views)")
        except ValueError as exc:
            raise ConfigError(f"{source}: teacher: {exc}") from None
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
        if self.batch_size > self.buffer_size:
            raise ConfigError(
                f"{source}: batch_size ({self.batch_size:,}) must be at most buffer_size ({self.buffer_size:,})"
            )
        obs_size, _ = self.sizes(source)
        feats = self._feature_size(source)
        label_row = obs_size + (2 if self.label_loss == "differences" else 1) * feats + 1
        nbytes = 4 * (self.buffer_size * (obs_size + feats + 1) + self.label_buffer_size * label_row)
        problem = memory_problem(nbytes, "the sample buffers (buffer_size and label_buffer_size)")
        if problem:
            raise ConfigError(f"{source}: buffer_size: {problem}")
        if self.seed < 0:
            raise ConfigError(f"{source}: seed must be >= 0, got {self.seed!r}")
        self._check_workers(source)
        self.initial_network(source)
        from train.opponents import normalize_weights

        try:
            specs = normalize_weights(self.opponents)
        except ValueError as exc:
            raise ConfigError(f"{source}: opponents: {exc}") from None
        if self.search_opponent is not None:
            self._check_search_opponent(source)
        else:
            wrong = [s for s in specs if s not in COMPILED]
            if wrong:
                raise ConfigError(
                    f"{source}: opponents {wrong} are not compiled players; dmc plays against {list(COMPILED)} "
                    "or one fsearch spec"
                )
        wrong = [s for s in self.eval_opponents if s not in COMPILED]
        if wrong:
            raise ConfigError(
                f"{source}: eval_opponents {wrong} are not compiled players; evaluate others after training with "
                f"`scopa eval dmc:runs/{self.name}/best AGENT`"
            )
        from scopa_env.engine import house_rules
        from scopa_env.fast.batch import check_supported

        rules = self.setup.rules
        try:
            check_supported(rules)
        except NotImplementedError as exc:
            raise ConfigError(f"{source}: dmc trains on the compiled core: {exc}") from None
        if self.label_positions:
            from scopa_env.fast.search import check_searchable

            try:
                check_searchable(rules)
                house_rules.check_backend(rules.house_rules, "search", rules.name)  # declared by each plug-in
            except NotImplementedError as exc:
                raise ConfigError(f"{source}: label_positions: {exc}") from None

    def initial_network(self, source: str = "config") -> tuple[dict[str, np.ndarray], dict] | None:
        """The arrays and ``meta.json`` of ``init_weights`` (None when unset), once its game, move features and
        layer widths are this config's; a missing, damaged or mismatched checkpoint is one ConfigError."""
        if not self.init_weights:
            return None
        from train.dmc.agent import load_dmc_weights

        spec = self.init_weights
        try:
            if spec.startswith("zoo:"):
                from train.zoo import algo_of, checked_path

                if algo_of(spec[4:]) != ALGO:
                    raise ValueError(f"{spec} is not a DMC network")
                weights, meta = load_dmc_weights(checked_path(spec[4:]))
            else:
                weights, meta = load_dmc_weights(spec)
        except (ValueError, FileNotFoundError, KeyError) as exc:
            raise ConfigError(f"{source}: init_weights: {exc}") from None
        want = {
            "rules": self.rules,
            "num_players": self.num_players,
            "heuristic_features": self.heuristic_features,
            "trunk": list(self.trunk),
            "net_arch": list(self.net_arch),
        }
        got = {"heuristic_features": False, **{k: meta[k] for k in want if k in meta}}
        wrong = [f"{k} {got.get(k)!r} (this config: {v!r})" for k, v in want.items() if got.get(k) != v]
        if wrong:
            raise ConfigError(f"{source}: init_weights {spec!r} does not fit this run: {', '.join(wrong)}")
        return weights, meta

    def _check_workers(self, source: str) -> None:
        check_ray_address(self.ray_address, source)
        if not self.workers:
            return
        most = max(self.selfplay_games, self.opponent_games)
        if self.workers > most:
            raise ConfigError(
                f"{source}: workers ({self.workers}) must be at most the larger of selfplay_games and "
                f"opponent_games ({most}): every worker plays some of the games"
            )

    def _feature_size(self, source: str) -> int:
        try:
            return move_features(self.setup.rules, self.num_players, self.heuristic_features).size
        except ValueError as exc:
            raise ConfigError(f"{source}: dmc's move features: {exc}") from None

    def network_parameters(self, source: str = "config") -> int:
        """Parameters of the state trunk and the head (:func:`train.limits.dmc_parameters`)."""
        check_layers(self.trunk, "trunk", source)
        obs_size, _ = self.sizes(source)
        return dmc_parameters(obs_size, self._feature_size(source), self.trunk, self.net_arch)

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


def check_ray_address(address: str, source: str = "config") -> None:
    """The form of ``ray_address`` ("", "auto", "HOST:PORT" or "ray://HOST:PORT"), checked without a network."""
    if address in ("", "auto"):
        return
    hostport = address.split("://", 1)[1] if address.startswith("ray://") else address
    host, sep, port = hostport.rstrip("/").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536 or "://" in hostport:
        raise ConfigError(
            f"{source}: ray_address must be '' (a local Ray), 'auto', 'HOST:PORT' or 'ray://HOST:PORT', got {address!r}"
        )


def is_dmc_config(config_path: str | None, overrides: list[str]) -> bool:
    """Whether ``config_path`` (with ``overrides``) says ``algo: dmc``."""
    if config_path is None or not Path(config_path).is_file():
        return False
    try:
        data = read_yaml(config_path) or {}
    except ConfigError:  # the config's own loader says what is wrong with it
        return False
    if not isinstance(data, dict):
        return False
    try:
        data.update(parse_overrides(overrides))
    except ConfigError:
        return False
    return data.get("algo") == ALGO


def is_dmc_run(run_dir: str | Path) -> bool:
    """Whether the run folder ``run_dir`` holds a DMC run (its ``config.yaml`` says ``algo: dmc``)."""
    p = Path(run_dir) / "config.yaml"
    if not p.is_file():
        return False
    try:
        data = read_yaml(p) or {}
    except ConfigError:
        return False
    return isinstance(data, dict) and data.get("algo") == ALGO
