"""`scopa bench`'s plumbing (issue 19): rows come out as they are measured, each with its
ratio to the reference loop measured around its own step, and the command says how long it takes
and shows its progress. No timing is asserted."""

from __future__ import annotations

import json
import math

import scopa_env.bench.env as bench
from scopa_app.cli import main


def fake_measurements(monkeypatch, refs):
    """Engine and env rows with fixed values; the reference rate takes the next value of ``refs``."""
    monkeypatch.setattr(bench, "bench_engine", lambda seconds, num_players: {"moves_per_s": 100.0 * num_players})
    monkeypatch.setattr(
        bench,
        "bench_env",
        lambda seconds, action_mode, rounds: {"env_steps_per_s": 50.0, "floor_steps_per_s": 100.0, "ratio": 0.5},
    )
    it = iter(refs)
    monkeypatch.setattr(bench, "reference_rate", lambda seconds: (next(it), 2 * next(it)))


def test_rows_stream_with_their_reference(monkeypatch):
    fake_measurements(monkeypatch, [10.0] * 200)
    seen: list[str] = []
    events: list[str] = []

    def extra(seconds, progress):
        progress("compiled core")
        yield ("fast: one", 20.0, "steps/s")
        events.append(f"after first row: {len(seen)} rows shown")
        yield ("fast: one /cpu", 20.0, "steps/s")
        yield ("fast: cold start", 500.0, "ms")

    rows = bench.run_all(0.06, [extra], on_row=lambda row: seen.append(row.name))
    assert [r.name for r in rows] == seen, "on_row gets every row, in order"
    assert events == [f"after first row: {seen.index('fast: one') + 1} rows shown"], "rows are shown as they come"
    by_name = {r.name: r for r in rows}
    assert by_name["engine random play, 2 players"].vs_ref == 200.0 / 10.0
    assert by_name["fast: one /cpu"].vs_ref == 20.0 / 20.0, "/cpu rows use the reference's CPU rate"
    assert by_name["fast: cold start"].vs_ref == 0.5 * 10.0, "times are multiplied by the reference rate"
    assert math.isnan(by_name["env / floor, move mode"].vs_ref), "same-run ratios need no reference"


def test_each_step_has_its_own_reference(monkeypatch):
    # before/after pairs (wall, cpu draws alternate): first step 10 and 30 -> 20; later steps 40.
    fake_measurements(monkeypatch, [10.0, 0.0, 30.0, 0.0] + [40.0] * 200)
    rows = bench.run_all(0.06)
    assert rows[0].vs_ref == 200.0 / 20.0, "the mean of the reference just before and just after the step"
    assert rows[1].vs_ref == 400.0 / 40.0


def test_dmc_workers_record_keeps_the_turns_played_so_far(tmp_path):
    """benchmarks/dmc_workers.py writes its record after every turn, so a run stopped by a time
    limit (as the lent GPU machine's was) keeps the modes it measured, marked partial."""
    import argparse
    from types import SimpleNamespace

    from benchscripts import load_benchmark

    module = load_benchmark("dmc_workers")

    cfg = SimpleNamespace(selfplay_games=64, opponent_games=192, label_positions=96, workers=0, sync=True)

    def mode(workers: int, seconds: float, decisions: int):
        m = module.Mode.__new__(module.Mode)
        m.cfg, m.name = SimpleNamespace(**{**vars(cfg), "workers": workers}), module.mode_name(workers, True)
        m.decisions, m.labels, m.updates, m.seconds = decisions, decisions // 2, 3, seconds
        return m

    out = tmp_path / "dmc_workers.json"
    args = argparse.Namespace(
        config=module.CONFIG, workers="0,2", seconds=10.0, passes=1, ray_address="", machine="m", note=None,
        out=out, overrides=[],
    )  # fmt: skip
    built = [mode(0, 10.0, 1000), mode(2, 0.0, 0)]
    module.write(args, built, {"start": [1, 1, 1], "end": [1, 1, 1]}, complete=False)
    record = json.loads(out.read_text())["records"][0]
    assert [r["mode"] for r in record["rows"]] == ["one process"], "only modes with a timed turn have rows"
    assert "partial" in record["command_note"]
    built[1].decisions, built[1].seconds = 3000, 10.0
    module.write(args, built, {"start": [1, 1, 1], "end": [1, 1, 1]}, complete=True)
    record = json.loads(out.read_text())["records"][0]
    assert [r["ratio"] for r in record["rows"]] == [1.0, 3.0]
    assert "command_note" not in record


def test_bench_says_how_long_and_shows_progress(capsys, monkeypatch):
    import scopa_env.bench.fast as fast_bench

    monkeypatch.setattr(fast_bench, "bench_rows", lambda seconds, progress=None: progress("compiled core") or [])
    assert main(["bench", "--seconds", "0.02"]) == 0
    captured = capsys.readouterr()
    first, *steps = captured.err.strip().splitlines()
    assert first.startswith("scopa bench: about") and "seconds" in first, captured.err
    assert len(steps) == 5 and "Python engine" in steps[0] and "compiled core" in steps[-1], captured.err
    assert "engine random play, 2 players" in captured.out


def test_env_floor_parts_time_every_call_of_the_loop_and_sum_to_its_total():
    """benchmarks/env_floor_rounds.py --parts splits the issue's loop (issue 50, item 4) into its
    calls: every step is counted once, on the env and on the floor, and the parts (the clock reads
    between them aside) add up to no more than the loop's whole time."""
    from benchscripts import load_benchmark

    module = load_benchmark("env_floor_rounds")
    medians = module.measure_parts("move", rounds=2, seconds=0.02)
    for side in ("floor", "env"):
        parts = medians[side]
        assert set(parts) == {*module.PARTS, "total"}
        assert all(value >= 0 for value in parts.values()), parts
        assert parts["step"] > 0 and parts["sample"] > 0 and parts["hand_end"] > 0, parts
        assert sum(parts[p] for p in module.PARTS) <= parts["total"] * 1.0001, parts
    assert medians["env"]["reset"] > 0
