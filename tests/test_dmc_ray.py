"""DMC's actors and labellers in Ray workers (train/dmc/workers.py, ``workers: N``).

The config checks and the split of the games need no ray; the runs skip when ray, an optional
dependency (``pip install "ray>=2.60,<3"``, in the ``all`` extra), is missing; CI runs them with the
main suite.
"""

from __future__ import annotations

import csv
import json
import socket

import numpy as np
import pytest
import test_dmc

from train.config import ConfigError
from train.dmc.config import DmcConfig
from train.dmc.learner import start_segment, train
from train.dmc.workers import RAY_MISSING, plan_segment

# test_dmc's tiny run, shorter: the runs here are made several times over
TINY = {**test_dmc.TINY, "total_timesteps": 1200, "eval_every": 600, "final_eval_pairs": 0}
LABELS = {"label_positions": 4, "label_search": "fsearch:worlds=4,exact_cards=4", "label_threads": 1}


def tiny_config(tmp_path, **overrides) -> DmcConfig:
    return DmcConfig.from_dict({**TINY, "runs_dir": str(tmp_path), **overrides})


def weights(run) -> dict[str, np.ndarray]:
    with np.load(run / "latest" / "weights.npz", allow_pickle=False) as w:
        return {k: w[k] for k in w.files}


def same_weights(a, b) -> bool:
    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)


def evaluations(run) -> list[list[str]]:
    """The evaluations' results (not their clocks)."""
    keys = ("timestep", "opponent", "margin", "win_rate", "learner_scope")
    return [[r[k] for k in keys] for r in csv.DictReader((run / "evaluations.csv").open())]


# --- no ray needed ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "override, message",
    [
        ({"workers": -1}, "workers must be in [0, 4096], got -1"),
        ({"workers": 9}, "workers (9) must be at most the larger of selfplay_games and opponent_games (8)"),
        ({"workers": 1.5}, "workers must be an int"),
        ({"worker_cpus": 0}, "worker_cpus must be positive"),
        ({"sync": "yes"}, "sync must be true or false"),
        ({"ray_address": "headnode"}, "ray_address must be '' (a local Ray), 'auto', 'HOST:PORT' or 'ray://HOST:PORT'"),
        ({"ray_address": "10.0.0.5:99999"}, "got '10.0.0.5:99999'"),
        ({"ray_address": "http://10.0.0.5:6379"}, "ray_address must be"),
    ],
)
def test_bad_worker_keys_are_one_line_errors(override, message, tmp_path):
    with pytest.raises(ConfigError) as err:
        tiny_config(tmp_path, **override)
    text = str(err.value)
    assert message in text and "\n" not in text, text


@pytest.mark.parametrize("address", ["", "auto", "10.0.0.5:6379", "ray://head.example:10001", "[::1]:6379"])
def test_good_ray_addresses_pass(address, tmp_path):
    assert tiny_config(tmp_path, ray_address=address).ray_address == address


def test_without_ray_workers_name_the_package(tmp_path, monkeypatch):
    """Workers without ray installed: the run stops at once with one line naming the package to install, before
    it makes its run folder (the config itself is valid, and the plain run needs no ray)."""
    from train.dmc import workers

    monkeypatch.setattr(workers, "ray_available", lambda: False)
    cfg = tiny_config(tmp_path, workers=2)
    with pytest.raises(ConfigError) as err:
        train(cfg)
    assert str(err.value) == RAY_MISSING and 'pip install "ray>=2.60,<3"' in RAY_MISSING
    assert not (tmp_path / "tiny").exists()


def test_cli_bad_workers_is_one_line(scopa_cli, tmp_path):
    result = scopa_cli("train", "configs/dmc_standard.yaml", f"runs_dir={tmp_path}", "workers=100000")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "workers must be in [0, 4096]" in lines[0], result.stderr


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_the_workers_split_every_game_once(workers, tmp_path):
    """Every game of both batches goes to exactly one worker, every worker plays some, and one worker draws the
    single process's games and generators (so it plays the same run)."""
    cfg = tiny_config(tmp_path, selfplay_games=5, opponent_games=8, **LABELS)
    rng, plan = plan_segment(cfg, cfg, 0, workers)
    assert len(plan) == workers and all(plan)
    for batch, games in (("selfplay", 5), ("opponent", 8)):
        seeds = np.concatenate([s.seeds for slices in plan for s in slices if s.batch == batch])
        assert len(seeds) == games and len(set(seeds.tolist())) == games
    rng_seeds = [s.rng_seed for slices in plan for s in slices]
    assert len(set(rng_seeds)) == len(rng_seeds), "two slices share a generator"
    positions = sum(s.label_positions for slices in plan for s in slices)
    assert abs(positions - LABELS["label_positions"]) <= len(rng_seeds) / 2
    again_rng, again = plan_segment(cfg, cfg, 0, workers)
    assert again_rng.integers(0, 2**62) == rng.integers(0, 2**62), "the learner's generator is not the seed's"
    assert [[s.seeds.tolist() for s in slices] for slices in again] == [[s.seeds.tolist() for s in x] for x in plan]
    if workers == 1:
        seg = start_segment(cfg, cfg, 0)
        for actors, part in zip(seg.actors, plan[0]):
            assert actors.rng.integers(0, 2**62) == np.random.default_rng(part.rng_seed).integers(0, 2**62)
        assert seg.rng.integers(0, 2**62) == plan_segment(cfg, cfg, 0, 1)[0].integers(0, 2**62)
        assert [a.batch.num_games for a in seg.actors] == [len(s.seeds) for s in plan[0]]


# --- with ray ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session():
    """One local Ray for the runs of this module (a run joins a Ray that is already up and leaves it up)."""
    ray = pytest.importorskip("ray", reason='ray is an optional dependency: pip install "ray>=2.60,<3"')
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_one_worker_trains_checkpoints_and_is_the_single_process(ray_session, tmp_path):
    """One worker plays the single process's games with its weights, so the run (search labels included)
    is the same; it writes the usual checkpoints and counts the hands its worker finished."""
    run = train(tiny_config(tmp_path, name="one", workers=1, **LABELS), report=False)
    for name in ("config.yaml", "evaluations.csv", "latest/weights.npz", "latest/meta.json", "best/weights.npz"):
        assert (run / name).exists(), name
    state = json.loads((run / "latest" / "state.json").read_text())
    assert state["timestep"] >= TINY["total_timesteps"] and state["updates"] > 0
    assert state["labels"] > 0 and state["hands"] > 0
    assert json.loads((run / "latest" / "meta.json").read_text())["algo"] == "dmc"
    plain = train(tiny_config(tmp_path, name="plain", **LABELS), report=False)
    assert same_weights(run, plain), "one Ray worker trained other weights than the single process"
    assert evaluations(run) == evaluations(plain)
    assert json.loads((plain / "latest" / "state.json").read_text())["hands"] == state["hands"]


def test_two_synchronous_workers_reproduce(ray_session, tmp_path):
    """The same seed and two synchronous workers: the same evaluations and weights twice; a different split of
    the games than one worker's, so a different run."""
    first = train(tiny_config(tmp_path, name="two", workers=2), report=False)
    again = train(tiny_config(tmp_path, name="two_again", workers=2), report=False)
    assert evaluations(first) == evaluations(again)
    assert same_weights(first, again), "same seed and worker count, different weights"
    one = train(tiny_config(tmp_path, name="one", workers=1), report=False)
    assert not same_weights(first, one)


def test_workers_ahead_by_a_round_train_through_a_stage(ray_session, tmp_path):
    """sync: false plays each round on weights one round old: another run than the synchronous one, still
    reproducible, and a stage (new games, labels from there on) restarts the workers."""
    stages = [{"at": 600, **LABELS}]
    ahead = train(tiny_config(tmp_path, name="ahead", workers=2, sync=False, stages=stages), report=False)
    state = json.loads((ahead / "latest" / "state.json").read_text())
    assert state["timestep"] >= TINY["total_timesteps"] and state["labels"] > 0
    again = train(tiny_config(tmp_path, name="ahead_again", workers=2, sync=False, stages=stages), report=False)
    assert same_weights(ahead, again), "workers ahead by a round: same seed, different weights"
    synchronous = train(tiny_config(tmp_path, name="sync", workers=2, stages=stages), report=False)
    assert not same_weights(ahead, synchronous), "playing a round ahead changed nothing"


def test_an_unreachable_cluster_is_one_line(ray_session, scopa_cli, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = scopa_cli(
        "train", "configs/dmc_standard.yaml", f"runs_dir={tmp_path}", "workers=1", f"ray_address=127.0.0.1:{port}"
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot reach the Ray cluster at '127.0.0.1:{port}'" in lines[0], result.stderr
    assert not (tmp_path / "dmc_standard").exists(), "a run folder was made for a run that could not start"
