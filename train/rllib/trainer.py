"""The RLlib training loop: masked PPO on the Scopa AEC env, evaluated like the SB3 path.

::

    runs/<name>/
        config.yaml          the resolved config (backend: rllib)
        tb/                  TensorBoard logs: charts/, losses/<module>/, eval/<opponent>/
        evaluations.csv      one row per (evaluation, opponent): the SB3 path's columns
        metrics.jsonl        one line per training iteration (RLlib's scalars)
        latest/, best/       checkpoints for ``rllib:PATH`` (model.pt + meta.json; latest/ also state.json)
        pool/step_<N>/       self-play snapshots (with ``selfplay: true``)
        algorithm/           RLlib's own Algorithm checkpoint (``algorithm_checkpoint: true``)

Read top to bottom: connect to Ray, build the PPO config (env, modules, mapping, scale),
then train until ``total_timesteps`` env steps, snapshotting into the self-play pool and
evaluating on the duplicate deals of :mod:`agents.evaluate` as the run goes.
Imports ray: :func:`train.rllib.run` checks that it is installed first.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from train.config import ConfigError
from train.rllib.config import RllibConfig, check_agents

ENV_NAME = "scopa_v0_rllib"
STATE_FILE = "state.json"
LOSS_KEYS = ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "curr_kl_coeff", "vf_explained_var", "total_loss")


class ClusterUnreachable(RuntimeError):
    """The configured Ray address does not answer; the message names it."""


# --- Ray -------------------------------------------------------------------------------------


def check_address(address: str, timeout: float) -> None:
    """Fail fast unless ``HOST:PORT`` (or ``ray://HOST:PORT``) accepts a TCP connection."""
    if address == "auto":
        return  # ray.init looks the local cluster up itself and fails at once if there is none
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterUnreachable(f"Ray cluster address {address!r} is not HOST:PORT, ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ClusterUnreachable(
            f"cannot reach the Ray cluster at {address!r} within {timeout:g}s ({exc.strerror or exc})"
        ) from None


def connect(cfg: RllibConfig) -> bool:
    """``ray.init()``: a local Ray by default, or the cluster at ``cfg.address``.

    Returns False when Ray was already initialized by the caller (who then shuts it down).
    """
    import ray

    if cfg.address:
        check_address(cfg.address, cfg.address_timeout)
    if ray.is_initialized():
        return False
    if not cfg.address:
        # "local": always a new Ray of our own, never a cluster found through RAY_ADDRESS or a
        # leftover /tmp/ray/ray_current_cluster (join one on purpose with address: auto).
        ray.init(address="local", num_cpus=cfg.num_cpus or None, include_dashboard=False, log_to_driver=False)
        return True
    import agents
    import scopa_env
    import train

    # Ship the kit's code to the cluster, so the nodes run the driver's version of it.
    modules = [Path(m.__file__).parent for m in (scopa_env, agents, train)]
    try:
        ray.init(address=cfg.address, runtime_env={"py_modules": [str(m) for m in modules]}, log_to_driver=False)
    except Exception as exc:  # ray raises several types (ConnectionError, RuntimeError, ...)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        hint = ""
        if "RAY_AUTH_MODE" not in os.environ:
            # Recent Ray (2.60 here) starts clusters with token authentication; a driver must opt in.
            hint = " (if the cluster uses token authentication: export RAY_AUTH_MODE=token and its RAY_AUTH_TOKEN)"
        raise ClusterUnreachable(f"cannot connect to the Ray cluster at {cfg.address!r}: {first}{hint}") from None
    return True


def build_algorithm(cfg: RllibConfig):
    """The RLlib PPO algorithm: env, masked modules, agent-to-module mapping, scale."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from train.rllib.env import make_rllib_env
    from train.rllib.module import MaskedActorCriticModule

    register_env(ENV_NAME, make_rllib_env)
    seat_modules = cfg.seat_modules

    def policy_mapping_fn(agent_id: str, episode: Any = None, **kwargs) -> str:
        return seat_modules[int(agent_id.rsplit("_", 1)[1])]

    env_config = {
        "num_players": cfg.num_players,
        "rules": cfg.rules,
        "episode": cfg.episode,
        "reward": cfg.reward,
        "action_mode": cfg.action_mode,
        "opponents": cfg.opponents,
        "pool_fraction": cfg.selfplay_fraction if cfg.selfplay else 0.0,
        "pool_size": cfg.selfplay_pool_size,
    }
    module_spec = MultiRLModuleSpec(
        rl_module_specs={
            mid: RLModuleSpec(module_class=MaskedActorCriticModule, model_config={"net_arch": list(cfg.net_arch)})
            for mid in cfg.module_ids
        }
    )
    config = (
        PPOConfig()
        # RLlib's env check steps unmasked random actions, which the raw env rejects.
        .environment(ENV_NAME, env_config=env_config, disable_env_checking=True)
        .framework("torch")
        .env_runners(
            num_env_runners=cfg.num_env_runners,
            num_envs_per_env_runner=cfg.num_envs_per_env_runner,
            num_cpus_per_env_runner=cfg.num_cpus_per_env_runner,
        )
        .learners(num_learners=cfg.num_learners, num_gpus_per_learner=cfg.num_gpus_per_learner)
        .multi_agent(
            policies=set(cfg.module_ids), policy_mapping_fn=policy_mapping_fn, policies_to_train=cfg.module_ids
        )
        .rl_module(rl_module_spec=module_spec)
        .training(
            lr=cfg.learning_rate,
            gamma=cfg.gamma,
            lambda_=cfg.lambda_,
            clip_param=cfg.clip_param,
            entropy_coeff=cfg.entropy_coeff,
            vf_loss_coeff=cfg.vf_loss_coeff,
            grad_clip=cfg.grad_clip,
            grad_clip_by="global_norm",
            train_batch_size_per_learner=cfg.train_batch_size,
            minibatch_size=cfg.minibatch_size,
            num_epochs=cfg.num_epochs,
        )
        .debugging(seed=cfg.seed)
    )
    return config.build_algo()


def module_states(algo, cfg: RllibConfig) -> dict[str, dict]:
    """The trained modules' weights (numpy state dicts), from the learners."""
    weights = algo.learner_group.get_weights(module_ids=cfg.module_ids)
    return {mid: weights[mid] for mid in cfg.module_ids}


# --- the run ----------------------------------------------------------------------------------


class RllibRun:
    """The run folder being written and the loop's bookkeeping. See the module docstring."""

    def __init__(self, cfg: RllibConfig, run_dir: Path) -> None:
        self.cfg = cfg
        self.dir = run_dir
        check_run_dir(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
        self.state = {
            "timestep": 0,
            "iteration": 0,
            "last_eval": 0,
            "last_selfplay": 0,
            "best_score": -math.inf,
            "best_timestep": -1,
            "pool": [],
            "wall_seconds": 0.0,
        }
        self.writer = _tensorboard(run_dir / "tb")
        self.start = time.time()

    def meta(self) -> dict:
        cfg = self.cfg
        setup = cfg.setup
        return {
            "backend": "rllib",
            "num_players": cfg.num_players,
            "rules": cfg.rules,
            "action_mode": cfg.action_mode,
            "net_arch": list(cfg.net_arch),
            "policies": cfg.policies,
            "seat_modules": cfg.seat_modules,
            "observation_size": setup.observation_size,
            "num_actions": setup.num_actions,
            "timestep": self.state["timestep"],
            "iteration": self.state["iteration"],
            "run": cfg.name,
        }

    def scalar(self, key: str, value: float, step: int) -> None:
        if self.writer is not None and value is not None and math.isfinite(value):
            self.writer.add_scalar(key, value, step)

    def log_iteration(self, result: dict) -> dict:
        """Write one line of metrics.jsonl and the charts/ and losses/ scalars of an iteration."""
        runners = result.get("env_runners", {})
        learners = result.get("learners", {})
        step = self.state["timestep"]
        row: dict[str, Any] = {
            "iteration": self.state["iteration"],
            "timestep": step,
            "seconds": round(time.time() - self.start, 3),
            "episode_return_mean": _num(runners.get("episode_return_mean")),
            "episode_len_mean": _num(runners.get("episode_len_mean")),
            "num_episodes": _num(runners.get("num_episodes")),
        }
        for mid, ret in (runners.get("module_episode_returns_mean") or {}).items():
            row[f"{mid}/episode_return_mean"] = _num(ret)
        for mid in self.cfg.module_ids:
            for key in LOSS_KEYS:
                if key in learners.get(mid, {}):
                    row[f"{mid}/{key}"] = _num(learners[mid][key])
        with (self.dir / "metrics.jsonl").open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        for key, value in row.items():
            if key in ("iteration", "timestep"):
                continue
            prefix = "losses/" if "/" in key and key.split("/", 1)[1] in LOSS_KEYS else "charts/"
            self.scalar(prefix + key, value, step)
        return row

    def evaluate(self, algo) -> dict[str, dict[str, float]]:
        """Duplicate-deal evaluation against every ``eval_opponents`` baseline; saves latest and best."""
        from train.evaluation import evaluate_agent, flat_metrics
        from train.rllib.agent import agent_from_states
        from train.run import CSV_COLUMNS

        cfg, step = self.cfg, self.state["timestep"]
        states = module_states(algo, cfg)
        learner = agent_from_states(states, self.meta(), name="learner")
        results, rows = {}, []
        for opp in cfg.eval_opponents:
            m = flat_metrics(evaluate_agent(learner, opp, cfg.eval_pairs, cfg.num_players, cfg.rules, cfg.eval_seed))
            results[opp] = m
            for k, v in m.items():
                self.scalar(f"eval/{opp}/{k}", v, step)
            rows.append({"timestep": step, "opponent": opp, **m})
        path = self.dir / "evaluations.csv"
        new = not path.exists()
        with path.open("a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
            if new:
                writer.writeheader()
            writer.writerows(rows)
        self.state["last_eval"] = step
        self.state["wall_seconds"] = time.time() - self.start
        best_opp = cfg.best_eval_opponent
        if best_opp in results and results[best_opp]["margin"] > self.state["best_score"]:
            self.state["best_score"] = results[best_opp]["margin"]
            self.state["best_timestep"] = step
            self.save(self.dir / "best", states)
        self.save(self.dir / "latest", states, with_state=True)
        if cfg.algorithm_checkpoint:
            algo.save_to_path(str((self.dir / "algorithm").resolve()))
        if self.writer is not None:
            self.writer.flush()
        return results

    def snapshot(self, algo) -> str:
        """Freeze the learner into the self-play pool of every env runner (and on disk)."""
        from train.rllib.agent import agent_from_states
        from train.rllib.env import SNAPSHOT_PREFIX, scopa_envs

        step = self.state["timestep"]
        states = module_states(algo, self.cfg)
        meta = self.meta()
        self.save(self.dir / "pool" / f"step_{step}", states)
        spec = f"{SNAPSHOT_PREFIX}step_{step}"

        def add(env_runner) -> int:
            envs = scopa_envs(env_runner)
            for env in envs:
                env.add_snapshot(spec, agent_from_states(states, meta, name=spec))
            return len(envs)

        added = sum(algo.env_runner_group.foreach_env_runner(add, local_env_runner=True))
        self.state["last_selfplay"] = step
        self.state["pool"] = (self.state["pool"] + [spec])[-self.cfg.selfplay_pool_size :]
        return f"{spec} ({added} envs)"

    def save(self, folder: Path, states: dict[str, dict], with_state: bool = False) -> None:
        from train.rllib.agent import save_checkpoint

        tmp = folder.with_name(folder.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        save_checkpoint(tmp, states, self.meta())
        if with_state:
            (tmp / STATE_FILE).write_text(json.dumps(self.state, indent=2) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def train(cfg: RllibConfig, run_dir: Path) -> int:
    """Train, evaluate and checkpoint; returns the exit status (0)."""
    import ray
    import torch

    check_agents(cfg)
    check_run_dir(run_dir)
    torch.set_num_threads(cfg.torch_threads)
    started = connect(cfg)
    run = None
    algo = None
    say = print if cfg.progress else (lambda *a, **k: None)
    try:
        algo = build_algorithm(cfg)
        run = RllibRun(cfg, run_dir)
        state = run.state
        say(
            f"rllib: {cfg.name}: {cfg.num_env_runners} env runner(s) x {cfg.num_envs_per_env_runner} env(s), "
            f"{cfg.num_learners} remote learner(s), modules {cfg.module_ids}, run folder {run_dir}"
        )
        while state["timestep"] < cfg.total_timesteps:
            result = algo.train()
            state["iteration"] += 1
            state["timestep"] = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
            row = run.log_iteration(result)
            say(
                f"iter {state['iteration']:>4}  steps {state['timestep']:>9,}/{cfg.total_timesteps:,}  "
                f"return {row['episode_return_mean']:+.3f}  {row['seconds']:.0f}s"
            )
            if cfg.selfplay and state["timestep"] - state["last_selfplay"] >= cfg.selfplay_every:
                say(f"  self-play snapshot {run.snapshot(algo)}")
            if state["timestep"] - state["last_eval"] >= cfg.eval_every or state["timestep"] >= cfg.total_timesteps:
                results = run.evaluate(algo)
                say(
                    "  eval "
                    + "  ".join(f"{o}: win {m['win_rate']:.2f} margin {m['margin']:+.2f}" for o, m in results.items())
                )
    finally:
        if run is not None:
            run.close()
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()
    say(f"rllib: done: {state['timestep']:,} steps in {time.time() - run.start:.0f}s; checkpoints in {run_dir}")
    return 0


def check_run_dir(run_dir: Path) -> None:
    """Refuse a run folder that already holds a run (before Ray starts)."""
    if (run_dir / "latest").exists() or (run_dir / "evaluations.csv").exists():
        raise ConfigError(f"run folder {str(run_dir)!r} already holds a run: pick another name (name=...)")


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _tensorboard(folder: Path):
    """A TensorBoard writer, or None without the tensorboard package (CSV and JSONL are always written)."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        print("rllib: tensorboard is not installed; writing evaluations.csv and metrics.jsonl only", file=sys.stderr)
        return None
    return SummaryWriter(str(folder))
