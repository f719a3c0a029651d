"""Evaluations on Ray (``--ray [ADDRESS]``, agents/ray_deals.py): the same games wherever a deal is played.

Every deal's seed and its agents' seeds come from the master seed and the deal's number, so a run on
a Ray cluster must give the report, the row and the ratings of a local run, and a leaderboard stopped
on Ray goes on from the pairs it kept. The checks of the option (its address, a missing ray) need no
ray; the runs skip when ray, an optional dependency (``pip install "ray>=2.60,<3"``, in the ``all``
extra), is missing. They share one local Ray of 2 CPUs and play a few deals of cheap agents.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import time

import pytest
from benchscripts import load_benchmark

import agents.leaderboard as lb
import agents.ray_deals as ray_deals
from agents.matches import Match, deal_chunks, play_deals, run_deals
from agents.ray_deals import RAY_MISSING, RayCluster, check_address
from agents.suites import LadderEntry, load_suite
from agents.tournament import evaluate, tournament
from scopa_app.cli import build_parser, main

TIMING = ("wall_seconds", "game_seconds", "seconds_per_1000_hands")
"""Report keys that measure the run, not the games."""


def games_of(report: dict) -> dict:
    """A report without its clocks: what the games decided."""
    return {k: v for k, v in report.items() if k not in TIMING}


def tiny_suite(deals: int = 3):
    """standard-2p-v1's first deals and a cheap rated ladder (as tests/test_leaderboard.py's)."""
    suite = load_suite("standard-2p-v1")
    ladder = (LadderEntry("random", 650.0), LadderEntry("greedy", 1000.0), LadderEntry("heuristic", 1100.0))
    return dataclasses.replace(suite, ladder=ladder, tiers={"full": suite.tiers["full"], "quick": deals})


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    return lines[0]


# --- no ray needed ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["eval", "tournament", "leaderboard"])
def test_the_option_is_off_by_default_and_takes_an_optional_address(command):
    agents = ["greedy"] if command == "leaderboard" else ["greedy", "random"]
    parser = build_parser()
    assert parser.parse_args([command, *agents]).ray is None, "the plain run is the default"
    assert parser.parse_args([command, *agents, "--ray"]).ray == "", "--ray alone: a local Ray"
    assert parser.parse_args([command, *agents, "--ray", "auto"]).ray == "auto"


@pytest.mark.parametrize("address", ["greedy", "http://10.0.0.5:6379", "10.0.0.5:99999", "10.0.0.5", "ray://:1"])
def test_what_is_no_ray_address_is_refused_in_one_line(address):
    with pytest.raises(ValueError, match="not a Ray cluster's address") as info:
        check_address(address)
    assert "\n" not in str(info.value) and address in str(info.value)


def test_an_unreachable_address_is_refused_fast():
    address = f"127.0.0.1:{closed_port()}"
    start = time.monotonic()
    with pytest.raises(ValueError, match="cannot reach the Ray cluster"):
        check_address(address, timeout=1.0)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "greedy", "random", "--games", "1"],
        ["tournament", "greedy", "random", "--games", "1", "--png", ""],
        ["leaderboard", "greedy", "--quick"],
    ],
    ids=["eval", "tournament", "leaderboard"],
)
def test_a_bad_address_or_a_missing_ray_is_one_line_before_any_game(argv, capsys, monkeypatch):
    played = []
    monkeypatch.setattr("agents.matches.play_deals", lambda *a: played.append(a))
    address = f"127.0.0.1:{closed_port()}"
    assert main([*argv, "--no-progress", "--ray", address]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"--ray {address}: cannot reach the Ray cluster" in line, line
    monkeypatch.setattr(ray_deals, "ray_available", lambda: False)
    assert main([*argv, "--no-progress", "--ray"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.endswith(RAY_MISSING) and 'pip install "ray>=2.60,<3"' in line, line
    assert not played, "a deal was played before the cluster was checked"


def test_the_published_leaderboard_refuses_a_bad_address_in_one_line(capsys):
    bench = load_benchmark("leaderboard")
    address = f"127.0.0.1:{closed_port()}"
    assert bench.main(["--suite", "standard-2p-v1", "--quick", "--no-progress", "--ray", address]) == 2
    assert "cannot reach the Ray cluster" in one_line(capsys.readouterr().err)


def test_eval_fast_and_ray_are_two_runs(capsys):
    assert main(["eval", "greedy", "random", "--fast", "--ray", "--games", "1"]) == 2
    assert "drop --ray or --fast" in one_line(capsys.readouterr().err)


def test_chunks_cover_every_deal_once_in_order():
    for deals, workers in [(1, 1), (7, 2), (100, 2), (1000, 16)]:
        chunks = deal_chunks(list(range(deals)), workers)
        assert [d for c in chunks for d in c] == list(range(deals)), (deals, workers)
        assert max(map(len, chunks)) <= 8


def test_the_results_page_estimates_each_suites_full_tier(tmp_path):
    """Leaderboards at a glance: the quick run's CPU-hours, its ceiling measured apart included, scaled to the
    full tier's deals (what docs/benchmark.md sends a cluster's user to)."""
    from scopa_env.bench.results import result_record

    rating = {"mean": 1100.0, "lo": 1090.0, "hi": 1110.0}
    rows = [
        {"agent": "oracle (cheating)", "role": "ceiling", "rating": None, "rating_text": "-", "command": "c"},
        {"agent": "a", "role": "anchor", "rating": rating, "rating_text": "1100 [1090, 1110]"},
    ]
    record = result_record("cmd", rows, what="w", commit="1" * 40, date="2026-01-02")
    gap = {"agent": "a", "deals": 200, "margin_per_hand": rating, "win_rate": {"mean": 0.9, "lo": 0.8, "hi": 1.0}}
    record |= {"title": "Leaderboard standard-2p-v1", "suite": "standard-2p-v1", "tier": "quick", "deals": 200}
    record |= {"cpu_hours": 0.5, "ceiling": {"gap": gap, "cpu_hours": 0.3, "spec": "oracle"}}
    data = {"title": "Leaderboard: standard-2p-v1", "about": "", "records": [record]}
    (tmp_path / "leaderboard-standard-2p-v1.json").write_text(json.dumps(data))
    page = load_benchmark("render_results").render(tmp_path)
    line = next(x for x in page.splitlines() if x.startswith("| standard-2p-v1 |"))
    assert "| about 40 (10,000 deals) |" in line, line
    assert "(estimated)" in page and "benchmark.md#running-on-a-ray-cluster" in page


# --- on a local Ray of 2 CPUs --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    """One local Ray of 2 CPUs for this module; the cluster handle joins it (and leaves it up)."""
    ray = pytest.importorskip("ray", reason='ray is an optional dependency: pip install "ray>=2.60,<3"')
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    handle = RayCluster()
    assert handle.cpus == 2 and not handle.owns
    yield handle
    ray.shutdown()


def test_eval_and_tournament_on_ray_are_the_local_games(cluster):
    """Chunks of deals on two Ray workers: the report of one local process, for 2 and 3 players."""
    for players in (2, 3):
        local = evaluate(["greedy", "random"], games=5, players=players, seed=7)
        remote = evaluate(["greedy", "random"], games=5, players=players, seed=7, cluster=cluster)
        assert games_of(remote) == games_of(local), f"{players} players: Ray changed the games"
    agents = ["random", "greedy", "heuristic"]
    local = tournament(agents, games=3, seed=1, bootstrap=20)
    remote = tournament(agents, games=3, seed=1, bootstrap=20, cluster=cluster)
    assert remote["ratings"] == local["ratings"] and remote["wins"] == local["wins"]
    assert [games_of(p) for p in remote["pairs"]] == [games_of(p) for p in local["pairs"]]


@pytest.mark.parametrize("engine, played_on", [("python", "python harness"), ("auto", "compiled core")])
def test_a_leaderboard_row_on_ray_is_the_local_row(cluster, engine, played_on):
    """On the harness (chunks of deals) and on the compiled core (a task per rotation and batch)."""
    suite = tiny_suite(3)
    local = lb.rate_agent(suite, "greedy", "quick", engine=engine)
    remote = lb.rate_agent(suite, "greedy", "quick", engine=engine, cluster=cluster)
    assert json.dumps(remote["row"], sort_keys=True) == json.dumps(local["row"], sort_keys=True), "Ray changed the row"
    assert {e["engine"] for e in remote["row"]["references"]} == {played_on}
    assert remote["timing"]["workers"] == 2 and "local Ray" in remote["timing"]["ray"]
    assert remote["timing"]["cpu_seconds"] > 0, "the workers' CPU time is counted"


def test_a_ladder_stopped_on_ray_goes_on_from_the_pairs_it_kept(cluster, tmp_path, monkeypatch):
    """Stopped in its second pair, a ladder kept the first; run again, it takes that pair back and plays the
    rest, and the scale is a local run's."""
    suite = tiny_suite(2)
    local = lb.rate_ladder(suite, "quick", engine="python")
    plays = []
    real_run = RayCluster.run

    def stopped_at_the_second_pair(self, *args, **kwargs):
        plays.append(1)
        if len(plays) == 2:
            raise KeyboardInterrupt
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(RayCluster, "run", stopped_at_the_second_pair)
    with pytest.raises(KeyboardInterrupt):
        lb.rate_ladder(suite, "quick", engine="python", state_dir=tmp_path, cluster=cluster)
    assert len(list(tmp_path.glob("*.json"))) == 1, "the first pair is kept, the stopped one is not"
    monkeypatch.setattr(RayCluster, "run", real_run)
    again = lb.rate_ladder(suite, "quick", engine="python", state_dir=tmp_path, cluster=cluster)
    assert again["timing"]["reused_pairs"] == 1
    assert again["ratings"] == local["ratings"] and again["pairs"][1:] == local["pairs"][1:]


def test_a_time_limit_on_ray_keeps_what_finished(cluster, capsys):
    """Stopped at once: the chunks that finish within the grace are kept, whole and as a local run plays them."""
    match = Match(("greedy", "random"))
    run = run_deals(match, 40, progress=False, time_limit=0.0, cluster=cluster)
    assert run.interrupted and "stopping" in capsys.readouterr().err
    played = {records[0]["deal"]: records for records in run.deals}
    assert len(played) == len(run.deals) and all(len(records) == 2 for records in run.deals)
    for deal, records in played.items():
        local = play_deals(match, [deal])[0]
        assert [dict(r, seconds=0) for r in records] == [dict(r, seconds=0) for r in local], f"deal {deal}"


def test_scopa_eval_with_ray_writes_the_local_report(cluster, tmp_path, capsys):
    paths = {}
    for name, extra in (("local", []), ("ray", ["--ray"])):
        paths[name] = tmp_path / f"{name}.json"
        argv = ["eval", "greedy", "random", "--games", "4", "--seed", "3", "--no-progress", "--json", str(paths[name])]
        assert main([*argv, *extra]) == 0, capsys.readouterr().err
    local, remote = (json.loads(paths[k].read_text()) for k in ("local", "ray"))
    assert games_of(remote) == games_of(local)
