"""Deep Monte-Carlo's actors and search labellers in Ray worker processes (``workers: N``).

The learner of :mod:`train.dmc` steps its actor games (and labels their positions with the
compiled search) in its own process by default. With ``workers: N`` (N >= 1) each of the two
actor batches (self-play, against the opponents) is split into N slices, and N Ray actor
processes, :class:`DmcWorker`, each play their slice of both batches:

* every round the learner puts the acting network's weights (a dict of float32 numpy arrays,
  nothing else) in Ray's object store once, and every worker plays ``rollout_steps`` steps of
  its games with them, labels its share of ``label_positions``, and returns the finished
  samples ``(observations, move features, returns)`` and its labels as numpy arrays;
* the learner adds them to its buffers in worker order and trains, as the single process does.

The run's generator draws every game's seed and every worker's own generator from the seed and
the step count, so a seed and a worker count give the same run; one worker plays exactly the
single process's games (the test compares the weights).

``sync: true`` (the default): round k is played with the weights the learner has after
training on round k-1, as in the single process, and the workers wait while the learner
trains. ``sync: false``: each worker is handed round k+1 (with the weights of before round
k's training) before the learner waits for round k, so the workers play while the learner
trains, on weights one round old. The learner still takes the rounds whole and in worker
order, so this mode reproduces too. A new stage (``stages``) drops the round played ahead.

``ray_address``: "" starts a Ray of the run's own on this machine; "auto" joins the cluster
started here with ``ray start --head``; "HOST:PORT" (the head's GCS port) or "ray://HOST:10001"
joins a cluster from another machine. The kit's packages are shipped to the cluster's nodes
(Ray's ``py_modules``); their dependencies must be installed there.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from train.config import ConfigError
from train.dmc.actors import Actors, Buffer, Labeller, build_network, numpy_weights
from train.dmc.config import DmcConfig

RAY_MISSING = 'workers need ray, which is not installed: pip install "ray>=2.60,<3"'
START_SECONDS = 300.0
"""How long the workers may take to start (on a cluster: to find free CPUs) before the run stops."""
ADDRESS_SECONDS = 5.0
"""How long the cluster address may take to answer."""
BATCHES = ("selfplay", "opponent")


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


# --- what each worker plays -----------------------------------------------------------------------


@dataclass
class Slice:
    """One worker's part of one actor batch: its games' seeds and the seed of its own generator."""

    batch: str
    """"selfplay" or "opponent"."""
    seeds: np.ndarray
    rng_seed: int
    label_positions: int


def plan_segment(cfg: DmcConfig, eff: DmcConfig, timestep: int, workers: int) -> tuple[np.random.Generator, list]:
    """The run's generator at ``timestep`` and each worker's slices of the actor batches.

    The draws are those of :func:`train.dmc.start_segment` (each batch's game seeds, then one
    generator seed per worker instead of one per batch), so one worker plays the single process's games.
    """
    rng = np.random.default_rng([cfg.seed, timestep])
    total = eff.selfplay_games + eff.opponent_games
    plan: list[list[Slice]] = [[] for _ in range(workers)]
    for batch, games in zip(BATCHES, (eff.selfplay_games, eff.opponent_games)):
        if not games:
            continue
        seeds = rng.integers(0, 2**62, games)
        rng_seeds = rng.integers(0, 2**62, workers)
        for w, part in enumerate(np.array_split(seeds, workers)):
            if part.size:
                positions = round(eff.label_positions * part.size / total) if eff.label_positions else 0
                plan[w].append(Slice(batch, part, int(rng_seeds[w]), positions))
    return rng, plan


class DmcWorker:
    """A worker process: its slices of the actor batches, a CPU copy of the network, the labelling search.

    Made a Ray actor by :class:`RayActors` (``ray.remote``); the methods take and return plain
    data (config dicts, numpy arrays).
    """

    def __init__(self, config: dict, index: int) -> None:
        import torch

        self.cfg = DmcConfig.from_dict(config, f"worker {index}")
        self.index = index
        torch.set_num_threads(self.cfg.worker_cpus)
        self.net = None
        self.actors: list[Actors] = []
        self.labellers: list[Labeller | None] = []

    def ready(self) -> str:
        """Where the worker runs (host and process id), once it has started."""
        import socket

        return f"{socket.gethostname()}:{os.getpid()}"

    def start(self, stage_config: dict, slices: list[Slice]) -> None:
        """New games for a run, a stage or a resume (the config in force, ``stage_config``)."""
        cfg = self.cfg
        eff = DmcConfig.from_dict(stage_config, f"worker {self.index}")
        self.actors, self.labellers = [], []
        for part in slices:
            opponent = None if part.batch == "selfplay" else cfg.opponents
            rng = np.random.default_rng(part.rng_seed)
            self.actors.append(Actors(cfg, len(part.seeds), opponent, part.seeds, rng))
            labeller = None
            if eff.label_positions:
                from scopa_env.fast.batch import max_threads

                threads = min(eff.label_threads, max_threads())
                differences = eff.label_loss == "differences"
                labeller = Labeller(
                    part.label_positions, eff.label_config(), threads, differences, eff.label_exact_only
                )
            self.labellers.append(labeller)
        if self.net is None and self.actors:
            a = self.actors[0]
            self.net = build_network(a.batch.layout.size, a.features.size, list(cfg.trunk), list(cfg.net_arch))
            self.net.eval()

    def play(self, weights: dict[str, np.ndarray], share: float) -> dict[str, Any]:
        """``rollout_steps`` steps of every game with ``weights``; the finished samples, the labels, the hands."""
        import torch

        self.net.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
        cfg = self.cfg
        for _ in range(cfg.rollout_steps):
            for a, labeller in zip(self.actors, self.labellers):
                a.act(self.score, cfg.epsilon, cfg.teacher, share, labeller)
        samples = [a.collect() for a in self.actors]
        labels = [x for x in (a.take_labels() for a in self.actors) if x is not None]
        return {
            "samples": tuple(np.concatenate(x) for x in zip(*samples)),
            "labels": tuple(np.concatenate(x) for x in zip(*labels)) if labels else None,
            "hands": sum(a.hands for a in self.actors),
        }

    def score(self, obs: np.ndarray, rows: np.ndarray, feats: np.ndarray) -> np.ndarray:
        """``Q`` of the flattened legal moves (as :meth:`train.dmc.Learner.score` on the CPU)."""
        import torch

        with torch.no_grad():
            q = self.net(torch.from_numpy(obs), torch.from_numpy(rows), torch.from_numpy(feats))
        return q.cpu().numpy()


# --- the learner's side ---------------------------------------------------------------------------


@dataclass
class RemoteSegment:
    """The learner's part of a segment (:class:`train.dmc.Segment`): its generator and buffers; the games
    are in the workers."""

    rng: np.random.Generator
    buffer: Buffer
    label_buffer: Buffer | None
    hands: int = 0
    """Hands the workers finished in this segment."""


def connect(cfg: DmcConfig) -> bool:
    """``ray.init`` for ``cfg.ray_address``; False when Ray was already initialized (the caller keeps it)."""
    import ray

    if cfg.ray_address and cfg.ray_address != "auto":
        from train.rllib.trainer import ClusterUnreachable, check_address

        try:
            check_address(cfg.ray_address, ADDRESS_SECONDS)
        except ClusterUnreachable as exc:
            raise ConfigError(f"ray_address: {exc}") from None
    if ray.is_initialized():
        return False
    if not cfg.ray_address:
        # a Ray of the run's own (never one found through RAY_ADDRESS); room for every worker
        cpus = max(os.cpu_count() or 1, cfg.workers * cfg.worker_cpus)
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        return True
    import agents
    import scopa_env
    import train

    modules = [str(Path(m.__file__).parent) for m in (scopa_env, agents, train)]
    try:
        ray.init(address=cfg.ray_address, runtime_env={"py_modules": modules}, log_to_driver=False)
    except Exception as exc:  # ray raises several types (ConnectionError, RuntimeError, ...)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        hint = ""
        if "RAY_AUTH_MODE" not in os.environ:  # Ray 2.60 starts clusters with token authentication
            hint = " (if the cluster uses token authentication: export RAY_AUTH_MODE=token and its RAY_AUTH_TOKEN)"
        raise ConfigError(
            f"ray_address: cannot connect to the Ray cluster at {cfg.ray_address!r}: {first}{hint}"
        ) from None
    return True


class RayActors:
    """The workers of a run: started (and Ray joined) on creation, closed by :meth:`close`."""

    def __init__(self, cfg: DmcConfig) -> None:
        if not ray_available():
            raise ConfigError(RAY_MISSING)
        import ray

        from train.dmc.agent import move_features

        self.cfg = cfg
        setup = cfg.setup
        self.obs_size = setup.observation_size
        self.features = move_features(setup.rules, setup.num_players, cfg.heuristic_features)
        self.owns_ray = connect(cfg)
        self.inflight: list | None = None
        remote = ray.remote(num_cpus=cfg.worker_cpus)(DmcWorker)
        self.workers = [remote.remote(cfg.to_dict(), i) for i in range(cfg.workers)]
        try:
            self.hosts = ray.get([w.ready.remote() for w in self.workers], timeout=START_SECONDS)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise ConfigError(
                f"workers: {cfg.workers} workers of {cfg.worker_cpus} CPU(s) each did not start within "
                f"{START_SECONDS:g}s; does the Ray cluster have {cfg.workers * cfg.worker_cpus} free CPUs?"
            ) from None

    def describe(self) -> str:
        where = self.cfg.ray_address or "a local Ray"
        mode = "synchronous" if self.cfg.sync else "one round ahead"
        hosts = len({h.rpartition(":")[0] for h in self.hosts})
        return f"dmc: {len(self.workers)} Ray worker(s) on {where} ({mode}), {hosts} host(s)"

    def start(self, cfg: DmcConfig, eff: DmcConfig, timestep: int) -> RemoteSegment:
        """New games in every worker (a run, a stage or a resume); the round played ahead, if any, is dropped."""
        import ray

        self.drain()
        rng, plan = plan_segment(cfg, eff, timestep, len(self.workers))
        ray.get([w.start.remote(eff.to_dict(), slices) for w, slices in zip(self.workers, plan)])
        label_buffer = (
            Buffer(eff.label_buffer_size, self.obs_size, self.features.size, pairs=eff.label_loss == "differences")
            if eff.label_positions
            else None
        )
        return RemoteSegment(rng, Buffer(cfg.buffer_size, self.obs_size, self.features.size), label_buffer)

    def drain(self) -> None:
        """Wait for the round played ahead (``sync: false``), if any, and drop it."""
        import ray

        if self.inflight is not None:
            ray.get(self.inflight)
            self.inflight = None

    def _submit(self, weights, share: float) -> list:
        return [w.play.remote(weights, share) for w in self.workers]

    def collect(self, cfg: DmcConfig, seg: RemoteSegment, learner, share: float) -> tuple[int, int]:
        """One round of every worker (as :func:`train.dmc.collect`): samples and labels into the buffers in
        worker order; returns the new samples and the new labelled moves."""
        import ray

        weights = ray.put(numpy_weights(learner.net))
        current = self.inflight if self.inflight is not None else self._submit(weights, share)
        self.inflight = None if cfg.sync else self._submit(weights, share)
        new = new_labels = 0
        hands = 0
        for result in ray.get(current):
            obs, feats, ret = result["samples"]
            seg.buffer.add(obs, feats, ret)
            new += len(ret)
            if result["labels"] is not None:
                seg.label_buffer.add(*result["labels"])
                new_labels += len(result["labels"][2])
            hands += result["hands"]
        seg.hands = hands
        return new, new_labels

    def close(self) -> None:
        """Stop the workers (and the Ray this run started)."""
        import ray

        for w in self.workers:
            ray.kill(w)
        self.workers = []
        self.inflight = None
        if self.owns_ray:
            ray.shutdown()
            self.owns_ray = False
