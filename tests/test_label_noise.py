"""benchmarks/label_noise.py: where a search label's noise lies, and each network's regret on the same positions."""

from __future__ import annotations

import json

import pytest
from benchscripts import load_benchmark

SMALL = ["--steps", "2", "--labeller", "fsearch:worlds=4", "--reference", "fsearch:worlds=8"]


def test_a_second_network_is_scored_on_the_same_positions(tmp_path, capsys):
    """The zoo's network against itself: the same choices, so its paired difference is exactly zero; the
    regrets are those of choices, never below zero."""
    module = load_benchmark("label_noise")
    out = tmp_path / "probe.json"
    assert module.main(["zoo:standard-2p", *SMALL, "--network", "zoo:standard-2p", "--json", str(out)]) == 0
    found = json.loads(out.read_text())
    results = found["results"]
    assert found["positions"] > 0 and found["networks"] == {"regret_n0": "zoo:standard-2p"}
    assert results["regret_n0"] == results["regret_net"]
    assert results["regret_n0_minus_net"] == {"mean": 0.0, "half_width": 0.0}
    assert all(results[k]["mean"] >= 0.0 for k in ("regret_net", "regret_labeller", "regret_c0"))
    by_hand = found["by_cards_in_hand"]
    assert sum(v["positions"] for v in by_hand.values()) == found["positions"]
    assert all(1 <= int(k) <= 10 and v["regret_n0"] == v["regret_net"] for k, v in by_hand.items())
    assert found["command"].startswith("python benchmarks/label_noise.py zoo:standard-2p --steps 2")


def test_a_network_of_another_game_is_refused_in_one_line(capsys):
    module = load_benchmark("label_noise")
    with pytest.raises(SystemExit):
        module.main(["zoo:standard-2p", *SMALL, "--network", "zoo:french52-8p"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--network zoo:french52-8p plays french_52 x 8, not the checkpoint's game" in err
