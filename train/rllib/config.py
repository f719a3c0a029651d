"""The config of an RLlib run (``backend: rllib`` in a ``scopa train`` YAML).

The keys shared with the SB3 path (:class:`train.config.RunConfig`: ``num_players``,
``rules``, ``episode``, ``reward``, ``action_mode``, ``opponents``, ``selfplay*``,
``eval_*``, ``net_arch``, ...) are the same fields, checked the same way; the others are
RLlib's PPO hyper-parameters and say where Ray runs and how wide. :func:`validate_config`
rejects unknown keys and bad values before ray is imported, listing the valid keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from train.config import ConfigError, RunConfig

BACKEND = "rllib"


@dataclass
class RllibConfig(RunConfig):
    """Everything an RLlib run needs (:class:`~train.config.RunConfig`'s keys and these); the
    resolved copy is saved as ``runs/<name>/config.yaml``."""

    CHOICES: ClassVar[dict[str, tuple]] = {
        **RunConfig.CHOICES,
        "backend": (BACKEND,),
        "policies": ("shared", "per_seat"),
    }
    POSITIVE_KEYS: ClassVar[tuple[str, ...]] = (
        *RunConfig.POSITIVE_KEYS,
        "train_batch_size",
        "minibatch_size",
        "num_epochs",
        "num_envs_per_env_runner",
    )
    UNIT_KEYS: ClassVar[tuple[str, ...]] = (*RunConfig.UNIT_KEYS, "gamma", "lambda_")
    KEYS_LABEL: ClassVar[str] = " for backend rllib"

    backend: str = BACKEND
    """Must be "rllib" (``scopa train`` dispatches on it)."""
    policies: str = "shared"
    """"shared": one policy for every learner seat; "per_seat": one policy per seat (``seat_<i>``)."""
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
    algorithm_checkpoint: bool = True
    """Also save RLlib's full Algorithm checkpoint (``algorithm/``: learner, optimizer, env runner
    state) at each evaluation, restorable with ``Algorithm.from_checkpoint``."""
    progress: bool = True
    """Print one line per training iteration."""

    def validate(self, source: str = "config") -> None:
        super().validate(source)
        for key in ("num_env_runners", "num_learners", "num_gpus_per_learner", "num_cpus", "num_cpus_per_env_runner"):
            if getattr(self, key) < 0:
                raise ConfigError(f"{source}: {key} must be >= 0, got {getattr(self, key)!r}")
        if self.address_timeout <= 0:
            raise ConfigError(f"{source}: address_timeout must be positive, got {self.address_timeout!r}")
        if self.minibatch_size > self.train_batch_size:
            raise ConfigError(f"{source}: minibatch_size {self.minibatch_size} is larger than train_batch_size")

    def agent_specs(self) -> list[str]:
        from train.rllib.env import LIVE

        return [s for s in super().agent_specs() if s != LIVE]

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
    if isinstance(data, dict):
        data = {"backend": BACKEND, **data}
    return RllibConfig.from_dict(data, source)


def check_agents(cfg: RllibConfig) -> None:
    """Build every opponent and eval agent once: unknown names and missing checkpoints fail here."""
    cfg.check_agents()


def describe_fields() -> str:
    """Every key of :class:`RllibConfig` with its default and docstring (for ``--help-config`` and docs/rllib.md)."""
    return RllibConfig.describe_fields()
