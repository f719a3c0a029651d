"""The training config: one dataclass, loaded from YAML and ``key=value`` overrides.

Every field is documented below; ``scopa train --help-config`` prints them. Unknown keys
(with a "did you mean" for a near miss), wrong types, bad choices and values out of range
(:attr:`RunConfig.RANGES`) raise :class:`ConfigError` before anything is written or
trained, naming the key; a bad ``key=value`` override is blamed on the command line, not
on the file.

Sizes are checked against what the machine can hold (the limits of :mod:`train.limits`):
a network of at most 50,000,000 parameters, buffers within half of the machine's memory,
at most 4,096 games at once and 10^12 steps; each rule is stated once, in the docstring of
the key it bounds.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import math
import textwrap
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, TypeVar, Union

import yaml

from scopa_env.engine.modes import ACTION_MODES, EPISODES, REWARDS
from scopa_env.engine.rules import ALLOWED_PLAYER_COUNTS
from scopa_env.engine.setup import GameSetup
from train.limits import (
    MAX_ENVS,
    MAX_EVAL_PAIRS,
    MAX_LAYERS,
    MAX_TIMESTEPS,
    MAX_WIDTH,
    memory_problem,
    mlp_parameters,
    parameters_problem,
    ppo_parameters,
    shown,
)

ALGOS = ("ppo", "dqn")
ALGO_NAMES = (*ALGOS, "dmc")
"""What ``algo`` may say: a ``dmc`` config goes to :mod:`train.dmc.config` before this module reads it."""

IDENTITY_KEYS = ("algo", "num_players", "rules", "action_mode", "net_arch", "policy_net")
"""Keys a checkpoint is tied to: resuming with a different value is refused."""

RESUME_KEYS = (
    "total_timesteps",
    "eval_every",
    "eval_pairs",
    "eval_opponents",
    "progress_bar",
    "torch_threads",
    "final_eval_pairs",
)
"""Keys that may change when resuming (budgets and evaluation); the others must match."""


class ConfigError(ValueError):
    """A bad config: the message says where (file or command line) and which key.

    Args:
        message: the whole one-line message.
        key: the config key at fault, when there is one.
        detail: the message without its "where" prefix (to blame another source).
    """

    def __init__(self, message: str, key: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.key, self.detail = key, detail


def check_resume_budget(run_dir: str | Path, done: int, saved_total: int, new_total: int) -> None:
    """Refuse a resume whose ``total_timesteps`` is below the steps the run has already done.

    Such a resume would train nothing, yet rewrite ``config.yaml`` with the smaller budget and write
    the report again, leaving a folder whose config does not reproduce its report. The saved budget
    itself is always accepted (a run may end a little past it: PPO and DMC collect whole rounds).

    Raises:
        ConfigError: one line naming the steps already done.
    """
    if new_total < done and new_total != saved_total:
        raise ConfigError(
            f"cannot resume {str(run_dir)!r} with total_timesteps={new_total:,}: it has already trained "
            f"{done:,} steps; give total_timesteps={done} or more to train on"
        )


def _bad(source: str, key: str, detail: str) -> ConfigError:
    return ConfigError(f"{source}: {detail}", key=key, detail=detail)


class Range(NamedTuple):
    """Allowed values of a number key: ``low`` to ``high``, each end included unless ``open``."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below and not (isinstance(value, float) and math.isnan(value))

    def describe(self) -> str:
        low, high = (f"{v:g}" if isinstance(v, float) else str(v) for v in (self.low, self.high))
        if self.high == math.inf:
            return f"{'>' if self.low_open else '>='} {low}"
        return f"in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"


SEED_RANGE = Range(0, 2**31 - 1)
"""Seeds NumPy's legacy generator accepts (SB3 seeds it), with room for ``seed + timestep``."""
STEPS_RANGE = Range(1, MAX_TIMESTEPS)
"""Counts of env steps or decisions (:data:`train.limits.MAX_TIMESTEPS`)."""
PAIRS_RANGE = Range(1, MAX_EVAL_PAIRS)
"""Duplicate deals of one evaluation (:data:`train.limits.MAX_EVAL_PAIRS`)."""
EPOCHS_RANGE = Range(1, 1000)
"""Passes over the data (more are a typo, not a plan)."""


MAX_YAML_DEPTH = 32
"""Nesting a config value may have (lists in mappings in lists...); no config key needs more than 3."""


def nesting_depth(value: Any) -> int:
    """How deeply lists and mappings nest in ``value`` (a scalar: 0), counted without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth += 1
            deepest = max(deepest, depth)
            if depth <= MAX_YAML_DEPTH:  # deeper is refused anyway: stop counting
                stack.extend((x, depth) for x in item)
    return deepest


def read_yaml(path: str | Path) -> Any:
    """A YAML config file's contents, with one-line errors naming it (too deep, a number too long).

    Too deep is more than :data:`MAX_YAML_DEPTH` levels, whatever the interpreter's recursion limit
    (a parse that succeeds under a raised limit is refused alike)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {str(path)!r} not found")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(exc).split())[:200]})") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid YAML (nested too deeply)") from None
    except ValueError:  # Python's limit on the digits of an int
        raise ConfigError(f"{path}: not valid YAML (a number too long to read)") from None
    if nesting_depth(data) > MAX_YAML_DEPTH:
        raise ConfigError(f"{path}: not valid YAML (nested too deeply)")
    return data


_Config = TypeVar("_Config", bound="RunConfig")


@dataclass
class RunConfig:
    """The keys every training backend shares (the SB3 path's :class:`TrainConfig` and
    RLlib's :class:`train.rllib.config.RllibConfig`): the game, the opponents, the budget,
    the network size and the evaluation. They mean the same on both."""

    CHOICES: ClassVar[dict[str, tuple]] = {
        "episode": EPISODES,
        "reward": REWARDS,
        "action_mode": ACTION_MODES,
        "num_players": ALLOWED_PLAYER_COUNTS,
    }
    """Keys with a fixed set of values."""
    POSITIVE_KEYS: ClassVar[tuple[str, ...]] = (
        "total_timesteps",
        "torch_threads",
        "eval_every",
        "eval_pairs",
        "selfplay_every",
        "selfplay_pool_size",
    )
    """Keys that must be at least 1."""
    UNIT_KEYS: ClassVar[tuple[str, ...]] = ("selfplay_fraction",)
    """Keys whose value must lie in [0, 1]."""
    RANGES: ClassVar[dict[str, Range]] = {
        "seed": SEED_RANGE,
        "eval_seed": SEED_RANGE,
        "learning_rate": Range(0, 1, low_open=True),
        "gamma": Range(0, 1),
        "total_timesteps": STEPS_RANGE,
        "eval_every": STEPS_RANGE,
        "selfplay_every": STEPS_RANGE,
        "eval_pairs": PAIRS_RANGE,
        "selfplay_pool_size": Range(1, 100),
        "torch_threads": Range(1, 1024),
    }
    """Other number keys with a range (checked with the key named)."""
    KEYS_LABEL: ClassVar[str] = ""
    """Said after "unknown key(s) [...]" (which backend's keys these are)."""

    name: str = ""
    """Run name: the run folder is ``<runs_dir>/<name>``. Default: the config file's stem."""
    runs_dir: str = "runs"
    """Folder holding the run folders."""
    seed: int = 0
    """Seeds Python, NumPy, torch, the envs and the model (with RLlib: its env runners and
    modules): on the SB3 path, same seed and config, same metrics on CPU."""
    num_players: int = 2
    """2, 3, 4 or 6 (4 and 6 in teams; the learner's partners are played by opponents); 8 for
    ``french_52``, each for themselves."""
    rules: str = "standard"
    """Rules preset name (see ``scopa_env.engine.rules.PRESETS``)."""
    episode: str = "hand"
    """"hand": one hand per episode; "game": hands until a side reaches the target."""
    reward: str = "points"
    """"points": the hand-point margin at each hand end; "game": +1/-1 at the episode end."""
    action_mode: str = "select"
    """"select": Discrete(41), card then captured cards (Discrete(53) with the 52-card deck of
    ``french_52``); "move": one id per move, Discrete(16200) (72,752 for ``french_52``)."""
    opponents: Any = "random"
    """Opponent of every other seat: an agent spec (``greedy``, ``ppo:runs/x/best``,
    ``rllib:runs/y/best``) or a ``{spec: weight}`` mixture drawn per seat and episode. With
    RLlib the spec ``self`` puts the live learner in that seat too."""
    selfplay: bool = False
    """Add frozen snapshots of the learner to the opponents (a pool of past versions)."""
    selfplay_fraction: float = 0.5
    """Probability that an opponent seat is played by a pool snapshot (once the pool has one)."""
    selfplay_pool_size: int = 5
    """How many of the latest snapshots the pool keeps (1 to 100: each holds a network)."""
    selfplay_every: int = 50_000
    """Env steps between two snapshots added to the pool."""
    total_timesteps: int = 200_000
    """Learner env steps (decisions) to train for (RLlib counts them across all env runners); at most
    10^12, as every other count of steps."""
    torch_threads: int = 1
    """``torch.set_num_threads`` (RLlib: in the driver): 1 keeps runs reproducible and polite on shared CPUs."""
    net_arch: list = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy, value and (DQN) Q networks: 1 to 16 layers of 1 to 16,384 units,
    and at most 50,000,000 parameters in all (PPO: actor and critic together), counted before anything
    is built (train/limits.py, the same bound as a checkpoint's)."""
    learning_rate: float = 3e-4
    """Adam step size."""
    gamma: float = 0.995
    """Discount factor."""
    eval_every: int = 20_000
    """Env steps between evaluations (also when ``latest`` and ``best`` are saved)."""
    eval_opponents: list = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    """Baselines evaluated against, each logged under ``eval/<opponent>/``."""
    eval_pairs: int = 50
    """Duplicate deals per opponent and evaluation (each played in both seatings, full games); at most 10^6."""
    eval_seed: int = 1_000_003
    """Seed of the evaluation deals (the same deals at every evaluation, on both backends)."""
    best_opponent: str = ""
    """Opponent whose hand-point margin picks the ``best`` checkpoint (default: the last eval opponent)."""

    # --- loading -----------------------------------------------------------------

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_dict(
        cls: type[_Config], data: dict[str, Any], source: str = "config", overrides: dict[str, Any] | None = None
    ) -> _Config:
        """A checked config from a mapping (a loaded YAML plus overrides).

        Args:
            data: every key given (the file's, then the overrides').
            source: where ``data`` comes from, for messages (the file name).
            overrides: the keys given on the command line (``key=value``): a problem with one
                of them is blamed on the command line instead of ``source``.

        Raises:
            ConfigError: unknown key (with the closest valid one and the list), wrong type or value.
        """
        overrides = overrides or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a mapping of keys to values, got {type(data).__name__}")
        unknown = sorted(set(data) - set(cls.field_names()), key=str)
        if unknown:
            guesses = [g for k in unknown for g in difflib.get_close_matches(str(k), cls.field_names(), n=1)]
            hint = f" (did you mean {', '.join(guesses)}?)" if guesses else ""
            where = "command line" if all(k in overrides for k in unknown) else source
            raise ConfigError(
                f"{where}: unknown key(s) {unknown}{hint}{cls.KEYS_LABEL}; valid keys: {', '.join(cls.field_names())}"
            )
        hints = typing.get_type_hints(cls)
        data = {k: _coerce_number(v, hints[k]) for k, v in data.items()}
        cfg = cls(**data)
        try:
            cfg.validate(source)
        except ConfigError as exc:
            if exc.key in overrides and exc.detail:
                shown = yaml.safe_dump(overrides[exc.key], default_flow_style=True).strip().removesuffix("...").strip()
                raise ConfigError(
                    f"command line ({exc.key}={shown}): {exc.detail}", key=exc.key, detail=exc.detail
                ) from None
            raise
        return cfg

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def dump(self, path: str | Path) -> None:
        Path(path).write_text(yaml.safe_dump(self.to_dict(), sort_keys=False))

    # --- checking ------------------------------------------------------------------

    def validate(self, source: str = "config") -> None:
        """Types, choices, ranges, the rules and player count, the opponent weights, the names."""
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not _type_ok(value, hints[f.name]):
                raise _bad(source, f.name, f"{f.name} must be {_type_name(hints[f.name])}, got {value!r}")
            if f.name in self.CHOICES and value not in self.CHOICES[f.name]:
                allowed = ALGO_NAMES if f.name == "algo" else self.CHOICES[f.name]
                raise _bad(source, f.name, f"{f.name} must be one of {list(allowed)}, got {value!r}")
        for key in self.POSITIVE_KEYS:
            if getattr(self, key) < 1:
                raise _bad(source, key, f"{key} must be positive, got {getattr(self, key)!r}")
        for key in self.UNIT_KEYS:
            if getattr(self, key) not in Range(0, 1):
                raise _bad(source, key, f"{key} must be in [0, 1], got {getattr(self, key)!r}")
        for key, allowed in self.RANGES.items():
            if getattr(self, key) not in allowed:
                raise _bad(source, key, f"{key} must be {allowed.describe()}, got {getattr(self, key)!r}")
        check_layers(self.net_arch, "net_arch", source)
        try:
            _ = self.setup  # the preset, and a player count it deals for (the modes are checked above)
        except ValueError as exc:
            raise _bad(source, "rules", str(exc)) from None
        problem = parameters_problem(self.network_parameters(source), "the network")
        if problem:
            raise _bad(source, "net_arch", f"net_arch: {problem}")
        from train.opponents import normalize_weights

        try:
            normalize_weights(self.opponents)
        except ValueError as exc:
            raise _bad(source, "opponents", f"opponents: {exc}") from None
        if not all(isinstance(s, str) for s in self.eval_opponents):
            raise _bad(
                source, "eval_opponents", f"eval_opponents must be a list of agent specs, got {self.eval_opponents!r}"
            )
        from train.opponents import check_fair_specs

        try:  # the oracle sees every card: no opponent of the learner, not even for its evaluations
            check_fair_specs(self.eval_opponents, "an evaluation opponent of a training run")
        except ValueError as exc:
            raise _bad(source, "eval_opponents", f"eval_opponents: {exc}") from None
        if self.best_opponent and self.best_opponent not in self.eval_opponents:
            raise _bad(source, "best_opponent", f"best_opponent {self.best_opponent!r} is not in eval_opponents")
        if not self.name or "/" in self.name:
            raise _bad(source, "name", f"name must be a non-empty folder name, got {self.name!r}")

    @property
    def setup(self) -> GameSetup:
        """The game this config trains on, its rules, player count and modes: built here, where a run reads
        its config, and handed to what the run builds (:class:`~scopa_env.engine.setup.GameSetup`; the same
        object on every read, as :meth:`GameSetup.of` caches).

        Raises:
            ValueError: an unknown preset, or a player count it does not deal for (:meth:`validate` names the key).
        """
        return GameSetup.of(self.rules, self.num_players, self.action_mode, self.episode, self.reward)

    def sizes(self, source: str = "config") -> tuple[int, int]:
        """``(observation size, number of actions)`` of the game this config trains on (rules checked)."""
        setup = self.setup
        try:  # rules with more moves than "move" mode's ids: refused here, not at the env
            return setup.observation_size, setup.num_actions
        except ValueError as exc:
            raise _bad(source, "action_mode", str(exc)) from None

    def network_parameters(self, source: str = "config") -> int:
        """Parameters of the policy network ``net_arch`` describes (an MLP from observation to actions)."""
        obs_size, actions = self.sizes(source)
        return mlp_parameters([obs_size, *self.net_arch, actions])

    def agent_specs(self) -> list[str]:
        """Every agent the run builds from a spec: opponents and evaluation baselines."""
        from train.opponents import normalize_weights

        return list(normalize_weights(self.opponents)) + list(self.eval_opponents)

    def check_agents(self) -> None:
        """Build every agent of :meth:`agent_specs` once: unknown names and missing checkpoints fail here."""
        from agents.registry import make_agent

        for spec in dict.fromkeys(self.agent_specs()):
            try:
                make_agent(spec)
            except (ValueError, FileNotFoundError) as exc:
                raise ConfigError(f"agent {spec!r}: {exc}") from None

    @property
    def best_eval_opponent(self) -> str:
        return self.best_opponent or (self.eval_opponents[-1] if self.eval_opponents else "")

    @classmethod
    def describe_fields(cls) -> str:
        """Every key with its default and docstring (for ``--help-config`` and the docs)."""
        docs: dict[str, str] = {}
        for klass in reversed([k for k in cls.__mro__ if dataclasses.is_dataclass(k)]):
            body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
            for node, nxt in zip(body, body[1:]):
                if (
                    isinstance(node, ast.AnnAssign)
                    and isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant)
                ):
                    docs[node.target.id] = " ".join(str(nxt.value.value).split())
        defaults = {f.name: _default(f) for f in dataclasses.fields(cls)}
        return "\n".join(f"{k} (default {defaults[k]!r}): {docs.get(k, '')}" for k in cls.field_names())


@dataclass
class TrainConfig(RunConfig):
    """Everything a Stable-Baselines3 run needs (:class:`RunConfig`'s keys and these); the
    resolved copy is saved as ``runs/<name>/config.yaml``."""

    algo: str = "ppo"
    """"ppo" (sb3-contrib MaskablePPO) or "dqn" (the masked DQN of ``train/sb3/dqn.py``)."""
    curriculum: list = field(default_factory=list)
    """Opponent stages (e.g. [random, greedy, heuristic]); empty: off. Replaces ``opponents``
    while on; the stage advances when the eval win rate against it reaches ``curriculum_threshold``."""
    curriculum_threshold: float = 0.6
    """Game win rate against the current curriculum stage that moves to the next one."""
    n_envs: int = 8
    """Parallel envs (each one game): 1 to 4,096."""
    vec_env: str = "dummy"
    """"dummy" (one process), "subproc" (one process per env) or "fast" (the compiled core:
    ``n_envs`` games stepped together, compiled opponents only; see :mod:`train.sb3.fast`)."""
    reward_shaping: bool = False
    """Potential-based shaping from the captured piles (:class:`train.sb3.fast.PileShaping`);
    the best policy is unchanged, evaluation is unshaped."""
    policy_net: str = "mlp"
    """PPO's network: "mlp" (``net_arch`` hidden layers) or "cards" (``select`` mode only: the
    card-wise pointer network of :mod:`train.sb3.card_net`, ``net_arch[0]`` wide)."""
    pretrain: str = ""
    """Warm start (:mod:`train.sb3.pretrain`): "" (none), "greedy" or "heuristic" (compiled teachers) or
    ``zoo:NAME`` (a DMC network of the zoo trained for this game, e.g. ``zoo:standard-2p``), whose
    decisions and returns the policy and value (DQN: the Q-network) are fitted to before training
    starts (``vec_env: fast`` and ``action_mode: select``)."""
    pretrain_steps: int = 300_000
    """Teacher decisions to collect for the warm start."""
    pretrain_epochs: int = 8
    """Passes over them."""
    pretrain_rounds: int = 1
    """DAgger rounds: after the first (the teacher plays), each round lets the clone play
    ``pretrain_steps`` more decisions, labels them with the teacher's choice, and fits again
    on everything so far (``pretrain_epochs`` passes)."""
    pretrain_lr: float = 0.001
    """Adam step size of the warm start's supervised passes."""
    pretrain_temperature: float = 0.0
    """PPO with a ``zoo:`` teacher: 0 fits the policy to the teacher's action; above 0 to its whole
    choice, ``softmax(teacher values / pretrain_temperature)`` over the legal actions (distillation;
    the values are in points per hand)."""
    pretrain_margin: float = 0.1
    """DQN: the large margin (points) by which the warm start holds the teacher's action above the others."""
    demo_weight: float = 0.0
    """DQN: weight of the large-margin loss on the warm start's teacher decisions kept during training
    (as DQfD does; 0: the warm start's data is dropped once it is fitted)."""
    batch_size: int = 256
    """PPO minibatch size, at most the rollout (``n_steps * n_envs``); DQN batch size per gradient step,
    at most ``buffer_size``."""
    n_steps: int = 256
    """PPO: steps per env per rollout (rollout = n_steps * n_envs; its observations and action masks
    must fit in half of the machine's memory)."""
    n_epochs: int = 4
    """PPO: passes over each rollout."""
    gae_lambda: float = 0.95
    """PPO: GAE lambda."""
    clip_range: float = 0.2
    """PPO: policy ratio clip."""
    ent_coef: float = 0.01
    """PPO: entropy bonus."""
    vf_coef: float = 0.5
    """PPO: value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient norm clip (PPO and DQN)."""
    buffer_size: int = 100_000
    """DQN: replay buffer transitions (the next state's action mask is stored bit-packed); the buffer
    (``buffer_size`` x observation size x 4 bytes x 2, and the masks) must fit in half of the machine's
    memory (train/limits.py MEMORY_FRACTION)."""
    learning_starts: int = 5_000
    """DQN: env steps of random play before learning starts."""
    train_freq: int = 4
    """DQN: env steps between gradient steps."""
    target_update_interval: int = 2_000
    """DQN: env steps between target network updates."""
    tau: float = 1.0
    """DQN: target update rate (1.0 = hard copy)."""
    exploration_fraction: float = 0.3
    """DQN: fraction of training over which epsilon decays."""
    exploration_initial_eps: float = 1.0
    """DQN: epsilon at the start (random among legal actions)."""
    exploration_final_eps: float = 0.05
    """DQN: epsilon after the decay."""
    double_dqn: bool = True
    """DQN: double-DQN target (online net picks the legal argmax, target net values it)."""
    final_eval_pairs: int = 200
    """Duplicate deals per opponent in the final evaluation of ``best`` written to ``report.md``."""
    progress_bar: bool = True
    """Show a progress bar with ETA."""

    CHOICES: ClassVar[dict[str, tuple]] = {
        **RunConfig.CHOICES,
        "algo": ALGOS,
        "vec_env": ("dummy", "subproc", "fast"),
        "policy_net": ("mlp", "cards"),
    }
    POSITIVE_KEYS: ClassVar[tuple[str, ...]] = (
        *RunConfig.POSITIVE_KEYS,
        "n_envs",
        "batch_size",
        "n_steps",
        "n_epochs",
        "buffer_size",
        "train_freq",
        "target_update_interval",
        "pretrain_steps",
        "pretrain_epochs",
        "pretrain_rounds",
    )
    UNIT_KEYS: ClassVar[tuple[str, ...]] = (
        *RunConfig.UNIT_KEYS,
        "curriculum_threshold",
        "gae_lambda",
        "tau",
        "exploration_fraction",
        "exploration_initial_eps",
        "exploration_final_eps",
    )
    RANGES: ClassVar[dict[str, Range]] = {
        **RunConfig.RANGES,
        "clip_range": Range(0, math.inf, low_open=True),
        "ent_coef": Range(0),
        "vf_coef": Range(0),
        "max_grad_norm": Range(0, math.inf, low_open=True),
        "learning_starts": Range(0, MAX_TIMESTEPS),
        "final_eval_pairs": Range(0, MAX_EVAL_PAIRS),
        "n_envs": Range(1, MAX_ENVS),
        "n_steps": STEPS_RANGE,
        "buffer_size": STEPS_RANGE,
        "train_freq": STEPS_RANGE,
        "target_update_interval": STEPS_RANGE,
        "pretrain_steps": STEPS_RANGE,
        "n_epochs": EPOCHS_RANGE,
        "pretrain_epochs": EPOCHS_RANGE,
        "pretrain_rounds": EPOCHS_RANGE,
        "pretrain_lr": Range(0, 1, low_open=True),
        "pretrain_temperature": Range(0),
        "pretrain_margin": Range(0),
        "demo_weight": Range(0),
    }

    @classmethod
    def load(cls, path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
        """A config from a YAML file (or the defaults when ``path`` is None) and ``key=value`` overrides."""
        data: dict[str, Any] = {}
        if path is not None:
            data = read_yaml(path) or {}
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: expected a mapping of keys to values")
            data.setdefault("name", Path(path).stem)
        extra = parse_overrides(overrides or [])
        data.update(extra)
        return cls.from_dict(data, str(path) if path else "config", overrides=extra)

    def validate(self, source: str = "config") -> None:
        super().validate(source)
        self._check_memory(source)
        if not all(isinstance(s, str) for s in self.curriculum):
            raise _bad(source, "curriculum", f"curriculum must be a list of agent specs, got {self.curriculum!r}")
        if self.curriculum and not set(self.curriculum) <= set(self.eval_opponents):
            raise _bad(source, "curriculum", "every curriculum stage must be in eval_opponents (to measure the switch)")
        if self.policy_net == "cards" and (self.algo != "ppo" or self.action_mode != "select"):
            raise _bad(
                source,
                "policy_net",
                "policy_net cards is PPO's card-wise network for action_mode select, "
                f"got algo={self.algo!r}, action_mode={self.action_mode!r}",
            )
        if self.pretrain:
            from train.sb3.pretrain import teacher_problem

            problem = teacher_problem(self.pretrain, self.setup)
            if problem:
                raise _bad(source, "pretrain", problem)
            if self.action_mode != "select" or self.vec_env != "fast":
                raise _bad(
                    source,
                    "pretrain",
                    "pretrain needs action_mode select and vec_env fast (the teacher plays on the compiled core), "
                    f"got action_mode={self.action_mode!r}, vec_env={self.vec_env!r}",
                )
        if self.vec_env == "fast":
            from train.sb3.fast import fast_config_problem

            problem = fast_config_problem(self)
            if problem:
                raise _bad(source, "vec_env", f"vec_env fast: {problem}")

    def network_parameters(self, source: str = "config") -> int:
        """Parameters of the network(s) trained: PPO's actor and critic, or DQN's Q-network."""
        obs_size, actions = self.sizes(source)
        if self.algo == "ppo":
            return ppo_parameters(obs_size, actions, self.net_arch, self.policy_net)
        return mlp_parameters([obs_size, *self.net_arch, actions])

    def _check_memory(self, source: str) -> None:
        """The buffers fit in the machine's memory and each batch in its buffer (see the key docstrings)."""
        obs_size, actions = self.sizes(source)
        if self.algo == "dqn":
            if self.batch_size > self.buffer_size:
                raise _bad(
                    source,
                    "batch_size",
                    f"batch_size ({self.batch_size:,}) must be at most buffer_size ({self.buffer_size:,})",
                )
            per_transition = 2 * obs_size * 4 + (actions + 7) // 8 + 16  # obs, next obs, packed mask, the rest
            problem = memory_problem(
                self.buffer_size * per_transition, f"a replay buffer of {self.buffer_size:,} transitions"
            )
            if problem:
                raise _bad(source, "buffer_size", f"buffer_size: {problem}")
        else:
            rollout = self.n_steps * self.n_envs
            if self.batch_size > rollout:
                raise _bad(
                    source,
                    "batch_size",
                    f"batch_size ({self.batch_size:,}) must be at most the rollout n_steps * n_envs ({rollout:,})",
                )
            problem = memory_problem(rollout * (obs_size + actions + 8) * 4, f"a rollout of {rollout:,} steps")
            if problem:
                raise _bad(source, "n_steps", f"n_steps * n_envs: {problem}")

    def agent_specs(self) -> list[str]:
        return super().agent_specs() + list(self.curriculum)


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["seed=3", "opponents={greedy: 1}"]`` -> ``{"seed": 3, "opponents": {"greedy": 1}}`` (YAML values)."""
    out: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"override {item!r} is not key=value; valid keys: {', '.join(TrainConfig.field_names())}")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            raise ConfigError(f"override {shown(item)}: bad value ({' '.join(str(exc).split())[:200]})") from None
        except RecursionError:
            raise ConfigError(f"override {key.strip()}=...: bad value (nested too deeply)") from None
        except ValueError:  # Python's limit on the digits of an int
            raise ConfigError(f"override {key.strip()}=...: bad value (a number too long to read)") from None
        if nesting_depth(value) > MAX_YAML_DEPTH:
            raise ConfigError(f"override {key.strip()}=...: bad value (nested too deeply)")
        out[key.strip()] = value
    return out


def check_layers(value: Any, key: str, source: str) -> None:
    """``value`` is a list of 1 to :data:`~train.limits.MAX_LAYERS` ints from 1 to :data:`~train.limits.MAX_WIDTH`."""
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= MAX_LAYERS
        or not all(_type_ok(h, int) and 1 <= h <= MAX_WIDTH for h in value)
    ):
        raise _bad(
            source,
            key,
            f"{key} must be a list of 1 to {MAX_LAYERS} layer widths from 1 to {MAX_WIDTH:,}, got {shown(value)}",
        )


def _coerce_number(value: Any, hint: Any) -> Any:
    """``2e6`` (a float, or a string as YAML reads it) for an int field -> 2000000; ints for floats."""
    if hint in (int, float) and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return value
    if hint is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _type_ok(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if origin in (Union, types.UnionType):
        return any(_type_ok(value, h) for h in typing.get_args(hint))
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (list, dict) or origin in (list, dict):
        return isinstance(value, origin or hint)
    return isinstance(value, hint)


def _type_name(hint: Any) -> str:
    return {int: "an int", float: "a number", bool: "true or false", str: "a string", list: "a list"}.get(
        hint, str(hint)
    )


def describe_fields() -> str:
    """Every key of :class:`TrainConfig` with its default and docstring (for ``--help-config``)."""
    return TrainConfig.describe_fields()


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]
