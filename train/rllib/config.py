"""The config of an RLlib run (``backend: rllib`` in a ``scopa train`` YAML).

The keys shared with the SB3 path (``num_players``, ``rules``, ``episode``, ``reward``,
``action_mode``, ``opponents``, ``selfplay*``, ``eval_*``, ``net_arch``, PPO
hyper-parameters) mean the same there and here; the others say where Ray runs and how
wide. :func:`validate_config` rejects unknown keys and bad values before ray is
imported, listing the valid keys.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from train.config import ConfigError

BACKEND = "rllib"
CHOICES: dict[str, tuple] = {
    "backend": (BACKEND,),
    "episode": ("hand", "game"),
    "reward": ("points", "game"),
    "action_mode": ("select", "move"),
    "num_players": (2, 3, 4, 6),
    "policies": ("shared", "per_seat"),
}
POSITIVE_KEYS = (
    "total_timesteps",
    "train_batch_size",
    "minibatch_size",
    "num_epochs",
    "num_envs_per_env_runner",
    "eval_every",
    "eval_pairs",
    "selfplay_every",
    "selfplay_pool_size",
    "torch_threads",
)
UNIT_KEYS = ("gamma", "lambda_", "selfplay_fraction")
"""Keys whose value must lie in [0, 1]."""


@dataclass
class RllibConfig:
    """Everything an RLlib run needs; the resolved copy is saved as ``runs/<name>/config.yaml``."""

    backend: str = BACKEND
    """Must be "rllib" (``scopa train`` dispatches on it)."""
    name: str = ""
    """Run name: the run folder is ``<runs_dir>/<name>`` (set by ``scopa train`` from the file name)."""
    runs_dir: str = "runs"
    """Folder holding the run folders."""
    seed: int = 0
    """Seeds RLlib (env runners, modules) and the env draws."""
    num_players: int = 2
    """2, 3, 4 or 6 (4 and 6 in teams; the learner's partners are played by opponents)."""
    rules: str = "standard"
    """Rules preset name (see ``scopa_env.rules.PRESETS``)."""
    episode: str = "hand"
    """"hand": one hand per episode; "game": hands until a side reaches the target."""
    reward: str = "points"
    """"points": the hand-point margin at each hand end; "game": +1/-1 at the episode end."""
    action_mode: str = "select"
    """"select": Discrete(41), card then captured cards; "move": one id per move, Discrete(16200)."""
    opponents: Any = "random"
    """Opponent of every other seat, drawn per seat and episode: an agent spec (``greedy``,
    ``ppo:runs/x/best``, ``rllib:runs/y/best``), a list, or a ``{spec: weight}`` mixture. The spec
    ``self`` puts the live learner in that seat too (self-play against the current policy)."""
    policies: str = "shared"
    """"shared": one policy for every learner seat; "per_seat": one policy per seat (``seat_<i>``)."""
    selfplay: bool = False
    """Add frozen snapshots of the learner to the opponents (a pool of past versions)."""
    selfplay_fraction: float = 0.5
    """Probability that an opponent seat is played by a pool snapshot (once the pool has one)."""
    selfplay_pool_size: int = 5
    """How many of the latest snapshots the pool keeps."""
    selfplay_every: int = 50_000
    """Env steps between two snapshots added to the pool."""
    total_timesteps: int = 200_000
    """Env steps (learner decisions) to train for; RLlib counts them across all env runners."""
    net_arch: list = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and the value networks."""
    learning_rate: float = 3e-4
    """Adam step size."""
    gamma: float = 0.995
    """Discount factor."""
    lambda_: float = 0.95
    """GAE lambda."""
    clip_param: float = 0.2
    """PPO policy ratio clip."""
    entropy_coeff: float = 0.01
    """Entropy bonus."""
    vf_loss_coeff: float = 0.5
    """Value loss weight."""
    grad_clip: float = 0.5
    """Gradient norm clip."""
    train_batch_size: int = 4000
    """Env steps per training iteration and learner (RLlib's ``train_batch_size_per_learner``)."""
    minibatch_size: int = 256
    """PPO minibatch size."""
    num_epochs: int = 4
    """PPO passes over each batch."""
    address: str = ""
    """Ray cluster to join: "" starts a local Ray (``ray.init()`` defaults); "HOST:PORT" (the head's
    GCS port, 6379 by default), "ray://HOST:10001" (Ray Client) or "auto" join an existing cluster."""
    address_timeout: float = 5.0
    """Seconds to wait for the cluster address to answer before failing."""
    num_env_runners: int = 0
    """Remote env runner actors sampling in parallel; 0 samples in the driver process."""
    num_envs_per_env_runner: int = 1
    """Envs stepped together in each env runner (one batched forward pass for all)."""
    num_cpus_per_env_runner: float = 1.0
    """CPUs Ray reserves for each env runner."""
    num_learners: int = 0
    """Remote learner actors (data-parallel PPO updates); 0 updates in the driver process."""
    num_gpus_per_learner: float = 0.0
    """GPUs per learner (0: CPU)."""
    num_cpus: int = 0
    """CPUs of the local Ray started when ``address`` is empty; 0: Ray's default (all)."""
    torch_threads: int = 1
    """``torch.set_num_threads`` in the driver: 1 keeps runs polite on shared CPUs."""
    eval_every: int = 20_000
    """Env steps between evaluations (also when ``latest`` and ``best`` are saved)."""
    eval_opponents: list = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    """Baselines evaluated against, each logged under ``eval/<opponent>/`` (as the SB3 path)."""
    eval_pairs: int = 50
    """Duplicate deals per opponent and evaluation (each played in both seatings, full games)."""
    eval_seed: int = 1_000_003
    """Seed of the evaluation deals (the same deals at every evaluation, and as the SB3 path)."""
    best_opponent: str = ""
    """Opponent whose hand-point margin picks the ``best`` checkpoint (default: the last eval opponent)."""
    algorithm_checkpoint: bool = True
    """Also save RLlib's full Algorithm checkpoint (``algorithm/``: learner, optimizer, env runner
    state) at each evaluation, restorable with ``Algorithm.from_checkpoint``."""
    progress: bool = True
    """Print one line per training iteration."""

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def best_eval_opponent(self) -> str:
        return self.best_opponent or (self.eval_opponents[-1] if self.eval_opponents else "")

    @property
    def module_ids(self) -> list[str]:
        """The trained RLlib modules: ``learner``, or ``seat_<i>`` per seat."""
        if self.policies == "shared":
            return ["learner"]
        return [f"seat_{i}" for i in range(self.num_players)]

    @property
    def seat_modules(self) -> list[str]:
        """The module id of each seat."""
        return [self.module_ids[0] if self.policies == "shared" else f"seat_{i}" for i in range(self.num_players)]


def validate_config(data: dict[str, Any], source: str = "config") -> RllibConfig:
    """A checked :class:`RllibConfig` from a mapping (a loaded YAML plus overrides).

    Raises:
        ConfigError: unknown key (the message lists the valid ones), wrong type or value.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of keys to values, got {type(data).__name__}")
    valid = RllibConfig.field_names()
    unknown = sorted(set(data) - set(valid))
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {unknown} for backend rllib; valid keys: {', '.join(valid)}")
    data = dict(data)
    data.setdefault("backend", BACKEND)
    cfg = RllibConfig(**data)
    defaults = RllibConfig()
    for f in dataclasses.fields(cfg):
        value, default = getattr(cfg, f.name), getattr(defaults, f.name)
        if f.name != "opponents" and not _same_type(value, default):  # opponents: checked below
            raise ConfigError(f"{source}: {f.name} must be {_type_name(default)}, got {value!r}")
        if f.name in CHOICES and value not in CHOICES[f.name]:
            raise ConfigError(f"{source}: {f.name} must be one of {list(CHOICES[f.name])}, got {value!r}")
    for key in POSITIVE_KEYS:
        if getattr(cfg, key) < 1:
            raise ConfigError(f"{source}: {key} must be positive, got {getattr(cfg, key)!r}")
    for key in ("num_env_runners", "num_learners", "num_gpus_per_learner", "num_cpus", "num_cpus_per_env_runner"):
        if getattr(cfg, key) < 0:
            raise ConfigError(f"{source}: {key} must be >= 0, got {getattr(cfg, key)!r}")
    for key in UNIT_KEYS:
        if not 0.0 <= getattr(cfg, key) <= 1.0:
            raise ConfigError(f"{source}: {key} must be in [0, 1], got {getattr(cfg, key)!r}")
    if cfg.address_timeout <= 0:
        raise ConfigError(f"{source}: address_timeout must be positive, got {cfg.address_timeout!r}")
    if cfg.minibatch_size > cfg.train_batch_size:
        raise ConfigError(f"{source}: minibatch_size {cfg.minibatch_size} is larger than train_batch_size")
    if not cfg.net_arch or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in cfg.net_arch):
        raise ConfigError(f"{source}: net_arch must be a non-empty list of positive ints, got {cfg.net_arch!r}")
    from scopa_env.rules import get_rules

    try:
        get_rules(cfg.rules).check_players(cfg.num_players)
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    from train.opponents import normalize_weights

    try:
        normalize_weights(cfg.opponents)
    except ValueError as exc:
        raise ConfigError(f"{source}: opponents: {exc}") from None
    if not all(isinstance(s, str) for s in cfg.eval_opponents):
        raise ConfigError(f"{source}: eval_opponents must be a list of agent specs, got {cfg.eval_opponents!r}")
    if cfg.best_opponent and cfg.best_opponent not in cfg.eval_opponents:
        raise ConfigError(f"{source}: best_opponent {cfg.best_opponent!r} is not in eval_opponents")
    if not cfg.name or "/" in cfg.name:
        raise ConfigError(f"{source}: name must be a non-empty folder name, got {cfg.name!r}")
    return cfg


def check_agents(cfg: RllibConfig) -> None:
    """Build every opponent and eval agent once: unknown names and missing checkpoints fail here."""
    import train  # noqa: F401  (registers ppo:/dqn:)
    from agents.registry import make_agent
    from train.opponents import normalize_weights
    from train.rllib.env import LIVE

    specs = [s for s in normalize_weights(cfg.opponents) if s != LIVE] + list(cfg.eval_opponents)
    for spec in dict.fromkeys(specs):
        try:
            make_agent(spec)
        except (ValueError, FileNotFoundError) as exc:
            raise ConfigError(f"agent {spec!r}: {exc}") from None


def _same_type(value: Any, default: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, (str, list)):
        return isinstance(value, type(default))
    return True


def _type_name(default: Any) -> str:
    for kind, text in (
        (bool, "true or false"),
        (float, "a number"),
        (int, "an int"),
        (str, "a string"),
        (list, "a list"),
    ):
        if isinstance(default, kind):
            return text
    return "valid"


def describe_fields() -> str:
    """Every key with its default and docstring (for ``--help-config`` and docs/rllib.md)."""
    import ast
    import inspect

    body = ast.parse(inspect.getsource(RllibConfig)).body[0].body
    docs = {
        node.target.id: " ".join(str(nxt.value.value).split())
        for node, nxt in zip(body, body[1:])
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
    }
    defaults = RllibConfig().to_dict()
    return "\n".join(f"{k} (default {defaults[k]!r}): {docs.get(k, '')}" for k in RllibConfig.field_names())
