"""benchmarks/endgame_distill.py: fitting the exact last round offline, keeping the rest of the play."""

from __future__ import annotations

import json

import numpy as np
import pytest
from benchscripts import load_benchmark

distill = load_benchmark("endgame_distill")


@pytest.fixture(scope="module")
def data():
    return distill.collect(120, 5, 0.5)


def test_exact_values_only_on_the_last_round(data):
    """A position's moves are all valued (the search solves it exactly) or none is (a kept position); the
    valued ones are few per hand (the last round: at most six decisions), the kept ones many."""
    rows, valued = data["rows"], ~np.isnan(data["values"])
    per_position = np.bincount(rows, weights=valued) / np.bincount(rows)
    assert set(np.unique(per_position)) <= {0.0, 1.0}
    exact_positions = int((per_position == 1).sum())
    assert 0 < exact_positions <= 6 * 120 and (per_position == 0).sum() > exact_positions
    assert data["obs"].shape[0] == rows.max() + 1 and data["feats"].shape[0] == rows.size


def test_retain_keeps_the_start_scores_where_it_is_asked(data, tmp_path):
    """With --retain the kept positions' scores stay nearer the start's than without: the weight works."""
    from train.dmc.agent import load_dmc
    from train.zoo import checked_path

    start = str(checked_path("standard-2p"))
    mid = np.isnan(data["values"])
    drift = {}
    for retain in (0.0, 10.0):
        out = tmp_path / f"r{retain}"
        distill.fit(start, data, out, retain, 3e-4, 6, 0)
        net, _ = load_dmc(out / "epoch_6")
        base, _ = load_dmc(start)
        obs, rows, feats = data["obs"], data["rows"], data["feats"]
        q, q0 = net.scores(obs, rows, feats), base.scores(obs, rows, feats)
        drift[retain] = float(np.abs(q - q0)[mid].mean())
    assert drift[10.0] < 0.5 * drift[0.0]


def test_main_writes_checkpoints_that_play(tmp_path):
    from train.fast_eval import fast_side

    out = tmp_path / "run"
    assert distill.main(["zoo:standard-2p", str(out), "--games", "40", "--epochs", "1"]) == 0
    assert json.loads((out / "distill.json").read_text())["epochs"][0]["epoch"] == 1
    policy, meta = fast_side(f"dmc:{out / 'epoch_1'}")
    assert meta["rules"] == "standard" and callable(policy)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["zoo:scopone-4p-v4", "x"], "not a standard 2-player network"),
        (["fsearch", "x"], "must be a dmc:PATH or zoo:NAME"),
        (["zoo:nope", "x"], "nope"),
        (["zoo:standard-2p", "x", "--mid-share", "2"], "--mid-share in"),
    ],
)
def test_bad_input_is_one_line(argv, message):
    with pytest.raises(SystemExit, match=message):
        distill.main(argv)
