"""Decisions per second of DMC's training loop: its actors in the learner's process, or in Ray workers.

::

    python benchmarks/dmc_workers.py                                  # configs/dmc_expert.yaml, 0 (one process), 1 and 2 workers
    python benchmarks/dmc_workers.py --workers 0,1,2,4,8,14 --seconds 120 --out runs/dmc_workers_gpu.json

Every mode trains on the same config and seed (its first stage: search labels on 96 positions per
step, so the actors and the labellers are the bottleneck): ``0`` is the single process of
``train/dmc/learner.py``, ``N`` N synchronous Ray workers (``train/dmc/workers.py``), ``Na`` N workers a round
ahead (``sync: false``). Each mode has its own learner (network, Adam, buffers: the buffers are
smaller than the config's, 50,000 samples and 100,000 labels, so that every mode fits in memory at
once; the learner's cost does not depend on their size). After two warm-up rounds (the workers'
compiled code loads), the modes take turns, ``--passes`` times, each running whole rounds (actors,
then the learner's updates, as in ``train``) for ``seconds / passes`` seconds, so that a change in
the machine's load falls on every mode alike. A mode a round ahead waits for its last round at the
end of each turn and drops it (counted in its time, not in its decisions). The script prints the
rates and their ratios to the single process, measured in the same run, and writes a result record
(``benchmarks/results/dmc_workers.json`` by default; ``python benchmarks/render_results.py`` shows it
in docs/results.md).

Needs Ray's core (``pip install "ray>=2.60,<3"``) for any mode but ``0``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "dmc_expert.yaml"
OUT = ROOT / "benchmarks" / "results" / "dmc_workers.json"
SMALL_BUFFERS = ["buffer_size=50000", "label_buffer_size=100000"]
TITLE = "DMC with its actors in Ray workers"
ABOUT = (
    "Decisions per second of DMC's training loop with its actors and search labellers in the learner's process "
    '(`workers: 0`) or in Ray worker processes (`workers: N`, train/dmc/workers.py; docs/training.md "Scaling out '
    'with Ray"), measured by `benchmarks/dmc_workers.py`: the modes take turns in one run, so the ratios compare '
    "them under the same load."
)


def parse_modes(text: str) -> list[tuple[int, bool]]:
    """``"0,1,2,2a"`` -> ``[(0, True), (1, True), (2, True), (2, False)]`` (workers, sync)."""
    modes = []
    for part in text.split(","):
        part = part.strip()
        ahead = part.endswith("a")
        digits = part[:-1] if ahead else part
        if not digits.isdigit() or (ahead and int(digits) == 0):
            raise SystemExit(
                f"dmc_workers: --workers: {part!r} is not a worker count (0, 1, 2, ... or 2a: a round ahead)"
            )
        modes.append((int(digits), not ahead))
    return modes


def mode_name(workers: int, sync: bool) -> str:
    if workers == 0:
        return "one process"
    return f"{workers} Ray worker{'s' if workers > 1 else ''}" + ("" if sync else ", a round ahead")


class Mode:
    """One mode's pool of actors, learner and counters."""

    def __init__(self, config: Path, overrides: list[str], workers: int, sync: bool) -> None:
        from train.dmc.config import DmcConfig
        from train.dmc.learner import InProcess, build_learner, seed_and_device

        extra = [f"workers={workers}", f"sync={'true' if sync else 'false'}"]
        self.cfg = DmcConfig.load(config, [*SMALL_BUFFERS, *overrides, *extra])
        self.eff = self.cfg.for_stage(0)
        self.name = mode_name(workers, sync)
        device = seed_and_device(self.cfg)
        if workers:
            from train.dmc.workers import RayActors

            self.pool = RayActors(self.cfg)
        else:
            self.pool = InProcess()
        self.seg = self.pool.start(self.cfg, self.eff, 0)
        self.learner = build_learner(self.cfg, self.pool.obs_size, self.pool.features.size, device, None)
        self.state = {"timestep": 0, "updates": 0, "labels": 0}
        self.decisions = self.labels = self.updates = 0
        self.seconds = 0.0

    def round(self) -> tuple[int, int, int]:
        from train.dmc.learner import learn, teacher_share

        new, new_labels = self.pool.collect(self.cfg, self.seg, self.learner, teacher_share(self.cfg, 0))
        updates, _, _ = learn(self.cfg, self.eff, 0, self.seg, self.learner, self.state, new + new_labels)
        return new, new_labels, updates

    def run_for(self, seconds: float) -> None:
        """Whole rounds for ``seconds`` (the round played ahead, if any, is waited for and dropped)."""
        import torch

        torch.set_num_threads(self.cfg.torch_threads)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            new, new_labels, updates = self.round()
            self.decisions += new
            self.labels += new_labels
            self.updates += updates
        if hasattr(self.pool, "drain"):
            self.pool.drain()
        self.seconds += time.perf_counter() - start

    def row(self, base: float | None) -> dict:
        rate = self.decisions / self.seconds
        return {
            "mode": self.name,
            "workers": self.cfg.workers,
            "sync": self.cfg.sync,
            "seconds": round(self.seconds, 1),
            "decisions": self.decisions,
            "decisions_per_second": round(rate, 1),
            "labels_per_second": round(self.labels / self.seconds, 1),
            "updates": self.updates,
            "ratio": round(rate / base, 3) if base else None,
        }


def start_ray(config: Path, overrides: list[str], workers: int) -> bool:
    """One Ray for every mode (their workers are all up at once, the idle ones waiting): a local one with a
    CPU for each worker, or the cluster of ``ray_address``. False when Ray was already up."""
    import ray

    from train.dmc.config import DmcConfig
    from train.dmc.workers import RAY_MISSING, connect, ray_available

    if not ray_available():
        raise SystemExit(f"dmc_workers: {RAY_MISSING}")
    cfg = DmcConfig.load(config, [*SMALL_BUFFERS, *overrides])
    if cfg.ray_address or ray.is_initialized():
        return connect(cfg)
    cpus = max(os.cpu_count() or 1, workers * cfg.worker_cpus)
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    return True


def rows_of(built: list[Mode]) -> list[dict]:
    """The rows of the modes that have had a timed turn, with their ratios to the single process."""
    timed = [m for m in built if m.seconds > 0]
    base = next((m.decisions / m.seconds for m in timed if m.cfg.workers == 0), None)
    return [m.row(base) for m in timed]


def write(args: argparse.Namespace, built: list[Mode], load: dict, complete: bool) -> None:
    """Write the result record of the turns played so far (after every turn, so that a run stopped
    by a time limit keeps what it measured; ``complete`` is false until every pass has run)."""
    from scopa_env.bench.results import missing_fields, result_record

    cfg = built[0].cfg
    parts = ["python benchmarks/dmc_workers.py"]
    if Path(args.config).resolve() != CONFIG:
        parts.append(f"--config {args.config}")
    parts.append(f"--workers {args.workers} --seconds {args.seconds:g} --passes {args.passes}")
    if args.ray_address:
        parts.append(f"--ray-address {args.ray_address}")
    command = " ".join(parts + list(args.overrides))
    record = result_record(
        command,
        rows_of(built),
        what=(
            f"decisions per second of DMC's training loop ({Path(args.config).name}'s first stage: "
            f"{cfg.selfplay_games} self-play and {cfg.opponent_games} opponent games, "
            f"{cfg.label_positions} labelled positions per step) with its actors and labellers in the "
            "learner's process or in Ray workers, the modes taking turns in one run"
        ),
        columns=[
            ("mode", "mode"),
            ("decisions_per_second", "decisions/s"),
            ("labels_per_second", "labelled moves/s"),
            ("ratio", "ratio to one process"),
            ("seconds", "timed seconds"),
            ("updates", "updates"),
        ],
        load=load,
        machine=args.machine or f"{platform.machine()}, {os.cpu_count()} cores (shared)",
    )
    record["title"] = f"{Path(args.config).name}: one process against Ray workers"
    notes = [args.note] if args.note else []
    if not complete:
        notes.append("partial: the run stopped before every mode had played all its passes")
    if notes:
        record["command_note"] = "; ".join(notes)
    missing = missing_fields(record)
    if missing:
        raise ValueError(f"a result record needs {', '.join(missing)}")
    data = {"title": TITLE, "about": ABOUT, "records": [record]}
    args.out.write_text(json.dumps(data, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=CONFIG, help="a DMC config (default configs/dmc_expert.yaml)")
    parser.add_argument(
        "--workers", default="0,1,2", help="modes: worker counts, 0 = one process, Na = N a round ahead"
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="timed seconds per mode (default 60)")
    parser.add_argument("--passes", type=int, default=3, help="turns each mode takes (default 3)")
    parser.add_argument("--ray-address", default="", help="Ray to run the workers on ('' starts a local one)")
    parser.add_argument("--machine", default=None, help="what the machine is, for the record")
    parser.add_argument("--note", default=None, help="what to say of the conditions, for the record")
    parser.add_argument("--out", type=Path, default=OUT, help="result record to write ('' for none)")
    parser.add_argument("overrides", nargs="*", help="config overrides KEY=VALUE (e.g. worker_cpus=2)")
    args = parser.parse_args(argv)
    modes = parse_modes(args.workers)
    if args.seconds <= 0 or args.passes < 1:
        raise SystemExit("dmc_workers: --seconds must be positive and --passes at least 1")
    from scopa_env.bench.results import load_average
    from train.config import ConfigError

    overrides = [*args.overrides, f"ray_address={args.ray_address!r}"] if args.ray_address else list(args.overrides)
    load_start = load_average()
    print(f"dmc_workers: {args.config} {' '.join(overrides)}; load average {load_start}", flush=True)
    built: list[Mode] = []
    owns_ray = False
    try:
        if any(workers for workers, _ in modes):
            owns_ray = start_ray(args.config, overrides, sum(workers for workers, _ in modes))
        for workers, sync in modes:
            print(f"  starting {mode_name(workers, sync)} ...", flush=True)
            built.append(Mode(args.config, overrides, workers, sync))
        for mode in built:  # warm-up: the workers load their compiled code, the buffers fill
            for _ in range(2):
                mode.round()
            if hasattr(mode.pool, "drain"):
                mode.pool.drain()
        for k in range(args.passes):
            for mode in built:
                mode.run_for(args.seconds / args.passes)
                rate = mode.decisions / mode.seconds
                print(
                    f"  pass {k + 1}: {mode.name}: {rate:,.0f} decisions/s so far (load {load_average()})", flush=True
                )
                if str(args.out):
                    write(args, built, {"start": load_start, "end": load_average()}, complete=False)
    except ConfigError as exc:
        print(f"dmc_workers: error: {exc}", file=sys.stderr)
        return 2
    finally:
        for mode in built:
            mode.pool.close()
        if owns_ray:
            import ray

            ray.shutdown()
    load_end = load_average()
    rows = rows_of(built)
    for r in rows:
        ratio = f"  x{r['ratio']:.2f} of one process" if r["ratio"] else ""
        print(
            f"{r['mode']:>28}: {r['decisions_per_second']:>8,.0f} decisions/s, {r['labels_per_second']:>8,.0f} labels/s{ratio}"
        )
    print(f"load average: {load_start} at the start, {load_end} at the end")
    if str(args.out):
        write(args, built, {"start": load_start, "end": load_end}, complete=True)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
