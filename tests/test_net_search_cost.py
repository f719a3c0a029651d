"""benchmarks/net_search_cost.py: the cost of a network inside the compiled search, beside fsearch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchscripts import load_benchmark

pytest.importorskip("torch")  # the zoo network's checkpoint loads through the train extra

from scopa_env.bench.results import missing_fields  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def script():
    return load_benchmark("net_search_cost")


def test_the_record_derives_the_world_costs_from_the_measured_ones(tmp_path, capsys):
    """The fsearch row is the unit of every ratio; the leaf-value row is worlds x moves positions at the
    measured batched cost, and the rollout row that times the plies left after the move."""
    out = tmp_path / "cost.json"
    assert script().main(["--positions", "6", "--worlds", "4", "--record", str(out)]) == 0
    assert "x" in capsys.readouterr().out
    document = json.loads(out.read_text())
    (record,) = document["records"]
    assert not missing_fields(record)
    rows = {row["what"]: row for row in record["rows"]}
    fsearch = rows["fsearch (the default: 256 worlds)"]
    assert fsearch["ratio_to_fsearch"] == 1.0 and fsearch["ms"] > 0
    facts = record["measured"]
    assert facts["positions"] == 6 and facts["mean_legal_moves"] > 1
    leaf = rows["network as the leaf value of 4 worlds, one ply down"]
    rollout = rows["network as the rollout policy of 4 worlds"]
    per_position = facts["network_ms_per_position_batched"]
    assert leaf["ms"] == pytest.approx(4 * facts["mean_legal_moves"] * per_position)
    assert rollout["ms"] == pytest.approx(leaf["ms"] * (facts["mean_cards_left"] - 1))
    for row in record["rows"]:
        assert row["ratio_to_fsearch"] == pytest.approx(row["ms"] / fsearch["ms"])
        assert row["ratio_to_budget"] == pytest.approx(row["ms"] / 10.0)


def test_a_bad_checkpoint_is_one_line(tmp_path, capsys):
    assert script().main(["--positions", "2", "--worlds", "2", "--checkpoint", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("net_search_cost: ") and "\n" not in err
