"""train/dmc/ensemble.py: one DMC network whose score is the mean of several networks' scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from train.dmc.agent import load_dmc
from train.dmc.ensemble import build, main

OBS, FEATS = 376, 126  # the standard 2-player game's observation and move features (no heuristic's three)


def checkpoint(folder: Path, seed: int, trunk=(8,), head=(4, 3), **meta) -> Path:
    """A small DMC checkpoint of the standard 2-player game with random weights (biases too)."""
    rng = np.random.default_rng(seed)
    weights = {}
    feats = FEATS + 3 * bool(meta.get("heuristic_features"))  # the heuristic's three come last
    for prefix, sizes in (("trunk", [OBS, *trunk]), ("head", [trunk[-1] + feats, *head, 1])):
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            weights[f"{prefix}.{i}.weight"] = rng.standard_normal((b, a)).astype(np.float32) / np.sqrt(a)
            weights[f"{prefix}.{i}.bias"] = rng.standard_normal(b).astype(np.float32)
    folder.mkdir(parents=True)
    np.savez(folder / "weights.npz", **weights)
    base = {
        "algo": "dmc",
        "feature_version": 2,
        "rules": "standard",
        "num_players": 2,
        "action_mode": "move",
        "observation_size": OBS,
        "heuristic_features": False,
        "trunk": list(trunk),
        "net_arch": list(head),
        "timestep": 1000 * seed,
        "cpu_hours": 0.25 * seed,
    }
    (folder / "meta.json").write_text(json.dumps(base | meta))
    return folder


@pytest.mark.parametrize("head", [(4, 3), (5,)])
def test_the_ensemble_scores_the_members_mean(tmp_path, head):
    """Members of different widths (heads of one and two hidden layers) give one network whose score of every move
    is the mean of theirs."""
    members = [
        checkpoint(tmp_path / "a", 1, trunk=(8,), head=head),
        checkpoint(tmp_path / "b", 2, trunk=(5,), head=tuple(h + 2 for h in head)),
        checkpoint(tmp_path / "c", 3, trunk=(6,), head=head),
    ]
    meta = build(tmp_path / "ens", [str(m) for m in members])
    net, read = load_dmc(tmp_path / "ens")
    assert read == meta and meta["trunk"] == [19] and meta["net_arch"] == [sum(h + d for d in (0, 2, 0)) for h in head]
    assert meta["cpu_hours"] == pytest.approx(1.5) and [m["timestep"] for m in meta["ensemble"]] == [1000, 2000, 3000]
    rng = np.random.default_rng(0)
    obs = rng.random((6, OBS)).astype(np.float32)
    rows = np.array([0, 0, 1, 2, 3, 3, 4, 5])
    feats = rng.random((len(rows), FEATS)).astype(np.float32)
    want = np.mean([load_dmc(m)[0].scores(obs, rows, feats) for m in members], axis=0)
    np.testing.assert_allclose(net.scores(obs, rows, feats), want, rtol=1e-5, atol=1e-5)
    assert np.ptp(want) > 0.1, "the moves' scores differ, so the check can fail"


def test_members_of_other_games_or_depths_are_refused(tmp_path):
    a = checkpoint(tmp_path / "a", 1)
    other = checkpoint(tmp_path / "b", 2, heuristic_features=True)
    deeper = checkpoint(tmp_path / "c", 3, head=(4, 3, 2))
    with pytest.raises(ValueError, match="heuristic_features differ"):
        build(tmp_path / "x", [str(a), str(other)])
    with pytest.raises(ValueError, match="as many trunk layers and as many head layers"):
        build(tmp_path / "y", [str(a), str(deeper)])
    with pytest.raises(ValueError, match="at least two"):
        build(tmp_path / "z", [str(a)])
    build(tmp_path / "ens", [str(a), str(a)])
    with pytest.raises(ValueError, match="already holds a checkpoint"):
        build(tmp_path / "ens", [str(a), str(a)])


def test_the_command_line_names_the_problem_in_one_line(tmp_path, capsys):
    a = checkpoint(tmp_path / "a", 1)
    with pytest.raises(SystemExit) as exc:
        main([str(tmp_path / "out"), str(a), str(tmp_path / "missing")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no checkpoint at") and "\n" not in err
    assert main([str(tmp_path / "out"), str(a), str(a)]) == 0
    assert json.loads(capsys.readouterr().out)["trunk"] == [16]
