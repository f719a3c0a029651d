"""benchmarks/value_of_information.py: the oracle's ceiling split into the hands and the stock's order."""

from __future__ import annotations

import json

import pytest
from benchscripts import load_benchmark

from scopa_env.bench.results import missing_fields


@pytest.mark.slow  # three specs, one with 256-rollout oracle moves, on one deal of the suite
def test_the_record_derives_the_shares_from_the_kept_reports(tmp_path):
    """Each row links the report it was played into (the suite's own deals and seed), and the shares are
    the hands-only oracle's margin over the full oracle's and inference's over the hands-only oracle's."""
    script = load_benchmark("value_of_information")
    record_path = tmp_path / "record.json"
    argv = ["--suite", "standard-2p-v1", "--pairs", "1", "--out-dir", str(tmp_path), "--record", str(record_path)]
    assert script.main(argv) == 0
    (record,) = json.loads(record_path.read_text())["records"]
    assert not missing_fields(record)
    margins = {}
    for row in record["rows"]:
        report = json.loads(open(row["data"]).read())
        assert report["deals"] == 1 and report["config"]["seed"] == 2503735878
        assert report["config"]["agents"] == [row["agent"], "fsearch"]
        margins[row["agent"]] = report["agents"][0]["margin_per_hand"]["mean"]
    full, hands, inference = (margins[spec] for spec in script.SPECS.values())
    shares = [row["share"] for row in record["rows"]]
    assert shares[0] == ""
    assert shares[1] == (f"{hands / full:.0%} of the ceiling" if full > 0 else "")
    assert shares[2] == (f"{inference / hands:.0%} of the hands' share" if hands > 0 else "")
