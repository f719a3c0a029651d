"""Checkpoints from untrusted or damaged files: a PPO checkpoint is a state dict and JSON; a crafted
Stable-Baselines3 ``model.zip`` runs no code in any loader here (the agents, ``scopa eval``, the
web server, the converter, resuming a run); a broken file or folder, or a DQN model naming sizes
it cannot hold, is one line naming the file and the problem."""

from __future__ import annotations

import base64
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from checkpoint_helpers import make_ppo_checkpoint, ppo_meta
from cli_helpers import one_line_error


class Payload:
    """Unpickling this creates ``marker``: proof that loading a file ran code from it."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def make_sb3_zip(folder: Path, marker: Path, policy) -> None:
    """An SB3-style ``model.zip``: real weights, and a ``data`` entry whose pickled object runs code."""
    import io

    import torch

    weights = io.BytesIO()
    torch.save(policy.state_dict(), weights)
    evil = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    data = {"policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": evil}, "n_steps": 64}
    with zipfile.ZipFile(folder / "model.zip", "w") as zf:
        zf.writestr("data", json.dumps(data))
        zf.writestr("policy.pth", weights.getvalue())
    (folder / "policy.pt").unlink(missing_ok=True)


@pytest.fixture
def hostile_zip(tmp_path):
    """A PPO folder whose only model is a crafted SB3 ``model.zip``; returns (folder, marker, policy)."""
    folder, marker = tmp_path / "ckpt", tmp_path / "PWNED"
    policy = make_ppo_checkpoint(folder)
    make_sb3_zip(folder, marker, policy)
    return folder, marker, policy


def same_actions(policy_fn, reference, n: int = 32, seed: int = 0) -> bool:
    rng = np.random.default_rng(seed)
    obs = rng.random((n, 376), dtype=np.float32)
    masks = rng.random((n, 41)) < 0.4
    masks[np.arange(n), rng.integers(41, size=n)] = True
    expected, _ = reference.predict(obs, action_masks=masks, deterministic=True)
    return bool((policy_fn(obs, masks) == expected).all())


def test_ppo_checkpoint_round_trip(tmp_path):
    """PPO checkpoints are a state dict and JSON; the loaded policy acts as the saved one and plays legally."""
    from agents.evaluate import evaluate
    from train.sb3.policy_agent import load_batch_policy

    policy = make_ppo_checkpoint(tmp_path / "ckpt")
    assert not (tmp_path / "ckpt" / "model.zip").exists(), "no pickling model.zip is written"
    loaded, meta = load_batch_policy(tmp_path / "ckpt")
    assert meta["policy_net"] == "mlp" and same_actions(loaded, policy), "the weights came back"
    report = evaluate([f"ppo:{tmp_path / 'ckpt'}", "random"], games=1)
    assert report["forfeits"] == [], "the checkpoint agent plays legal moves"


def test_crafted_sb3_zip_runs_code_under_sb3_but_not_here(hostile_zip, scopa_cli):
    """Issue 17.1: MaskablePPO.load unpickles ':serialized:' entries; every loader here refuses the zip."""
    folder, marker, _ = hostile_zip
    # The file is really hostile: Stable-Baselines3's own loader runs its code (in a child process).
    subprocess.run(
        [sys.executable, "-c", f"from sb3_contrib import MaskablePPO; MaskablePPO.load({str(folder / 'model.zip')!r})"],
        capture_output=True,
        timeout=300,
    )
    assert marker.exists(), "the crafted zip must run code under MaskablePPO.load, or this test proves nothing"
    marker.unlink()

    from agents.registry import make_agent

    with pytest.raises(ValueError, match="refused") as info:
        make_agent(f"ppo:{folder}")
    message = str(info.value)
    assert "python -m train.checkpoint" in message and "\n" not in message, message
    assert "policy_class" in message, "the message names the pickled entries"

    result = scopa_cli("eval", f"ppo:{folder}", "random", "--games", "1")
    assert result.returncode == 2 and "refused" in one_line_error(result.stderr), result.stderr
    assert not marker.exists(), "no loader ran code from the checkpoint"


def test_web_server_refuses_a_crafted_checkpoint_at_start(hostile_zip):
    pytest.importorskip("fastapi")
    from scopa_app.web.server import create_app

    folder, marker, _ = hostile_zip
    with pytest.raises(ValueError, match="refused"):
        create_app(default_opponent=f"ppo:{folder}")
    assert not marker.exists()


def test_converter_reads_only_the_weights(hostile_zip):
    from agents.registry import make_agent
    from train.checkpoint import main as convert
    from train.sb3.policy_agent import load_batch_policy

    folder, marker, policy = hostile_zip
    assert convert([str(folder)]) == 0
    assert (folder / "policy.pt").is_file() and not marker.exists(), "converting never unpickles the data entry"
    loaded, _ = load_batch_policy(folder)
    assert same_actions(loaded, policy), "the converted policy is the zip's"
    make_agent(f"ppo:{folder}")


def test_weights_file_with_python_objects_is_refused(tmp_path):
    import torch

    from agents.registry import make_agent

    folder, marker = tmp_path / "ckpt", tmp_path / "PWNED"
    make_ppo_checkpoint(folder)
    torch.save({"weight": Payload(marker)}, folder / "policy.pt")
    with pytest.raises(ValueError, match="holds Python objects besides weights") as info:
        make_agent(f"ppo:{folder}")
    assert str(folder / "policy.pt") in str(info.value), "the message names the file"
    assert not marker.exists()


@pytest.mark.parametrize(
    "damage, words",
    [
        ("truncate", "not a readable weights file"),
        ("meta_json", "meta.json: not valid JSON"),
        ("meta_list", "meta.json: expected a JSON object"),
        ("net_arch", "net_arch must be"),
        ("num_actions", "num_actions is 16200"),
        ("no_weights", "no policy.pt"),
        ("shape", "does not fit the network"),
    ],
)
def test_broken_checkpoints_name_the_file_and_the_problem(tmp_path, damage, words):
    from agents.registry import make_agent
    from train.checkpoint import write_meta

    folder = tmp_path / "ckpt"
    make_ppo_checkpoint(folder)
    weights, meta = folder / "policy.pt", folder / "meta.json"
    if damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:100])
    elif damage == "meta_json":
        meta.write_text('{"algo": "ppo", "num_players": 2,,}')
    elif damage == "meta_list":
        meta.write_text("[1, 2]")
    elif damage == "net_arch":
        write_meta(folder, ppo_meta(net_arch=[10**9]))
    elif damage == "num_actions":
        write_meta(folder, ppo_meta(num_actions=16200))
    elif damage == "no_weights":
        weights.unlink()
    elif damage == "shape":
        write_meta(folder, ppo_meta(net_arch=[32]))
    with pytest.raises((ValueError, FileNotFoundError)) as info:
        make_agent(f"ppo:{folder}")
    message = str(info.value)
    assert words in message and "\n" not in message, message
    assert str(folder) in message, f"the message names the checkpoint: {message}"


@pytest.mark.parametrize(
    "sizes, ok",
    [
        ({"obs_size": 8, "num_actions": 72_752, "net_arch": [4]}, True),  # french_52 in "move" mode
        ({"obs_size": 8, "num_actions": 524_289, "net_arch": [4]}, False),  # over MAX_MOVE_ACTIONS
        ({"obs_size": 8, "num_actions": 41, "net_arch": [1 << 17]}, False),  # a layer that wide
        ({"obs_size": 8, "num_actions": 41, "net_arch": "64"}, False),
    ],
)
def test_dqn_model_sizes_are_checked_before_a_network_is_built(tmp_path, sizes, ok):
    """A DQN ``model.pt`` names its sizes; they are bounded before any tensor is allocated."""
    import torch

    from train.checkpoint import load_q_network
    from train.sb3.networks import QNetwork

    file = tmp_path / "model.pt"
    state = QNetwork(8, sizes["num_actions"], [4]).state_dict() if ok else {}
    torch.save({"state_dict": state, **sizes}, file)
    if ok:
        assert load_q_network(file)(torch.zeros(1, 8)).shape == (1, 72_752)
    else:
        with pytest.raises(ValueError, match="bad network sizes") as info:
            load_q_network(file)
        assert str(file) in str(info.value) and "\n" not in str(info.value)


def test_resume_refuses_an_sb3_zip(hostile_zip, tmp_path):
    from train.config import ConfigError, TrainConfig
    from train.run import resume_config

    folder, marker, _ = hostile_zip
    run = tmp_path / "runs" / "old"
    (run / "latest").mkdir(parents=True)
    for name in ("meta.json", "model.zip"):
        (run / "latest" / name).write_bytes((folder / name).read_bytes())
    cfg = TrainConfig.load(None, ["name=old", f"runs_dir={tmp_path / 'runs'}", "algo=ppo", "net_arch=[16]"])
    cfg.dump(run / "config.yaml")
    with pytest.raises(ConfigError, match="refused"):
        resume_config(run, None, [])
    assert not marker.exists()
