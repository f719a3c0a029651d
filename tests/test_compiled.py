"""The compiled loop of the agents layer (agents/compiled.py): who has a compiled form, and what it plays."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.compiled import (
    COMPILED_BASELINES,
    ENGINE_COMPILED,
    compiled_lineup,
    compiled_player,
    evaluate_fast_sides,
    play_deals_compiled,
    rules_problem,
)
from agents.matches import Match, run_deals
from agents.stats import summarize

ROOT = Path(__file__).resolve().parents[1]


def test_the_baselines_are_the_cores_players():
    from scopa_env.fast.batch import OPPONENT_KINDS

    assert COMPILED_BASELINES == OPPONENT_KINDS


def test_compiled_forms_of_specs_and_networks():
    """Baselines and fsearch specs play by name, a network through its hook; the others say why not, in one line."""
    assert compiled_player("greedy", 2, "standard") == "greedy"
    assert compiled_player("fsearch:worlds=8", 2, "standard") == "fsearch:worlds=8"
    policy = compiled_player("zoo:standard-2p", 2, "standard")
    assert callable(policy) and getattr(policy, "needs_rows", False)
    for spec, game, message in (
        ("search", (2, "standard"), "'search' has no compiled form"),
        ("oracle", (2, "standard"), "sees every card"),
        ("fsearch:inference=true", (2, "standard"), "inference"),
        ("fsearch", (2, "cirulla"), "does not value the decisions"),
        ("zoo:standard-2p", (3, "standard"), "no compiled form for 3 players"),
    ):
        with pytest.raises(ValueError, match=message) as err:
            compiled_player(spec, *game)
        assert "\n" not in str(err.value)
    players, why = compiled_lineup(["greedy", "search", "greedy"], 3, "standard")
    assert players is None and "search" in why
    players, why = compiled_lineup(["greedy", "random", "random"], 3, "standard")
    assert why is None and players == ["greedy", "random", "random"]


def test_rules_the_core_lacks_are_named(monkeypatch):
    """Every shipped preset plays on the core today; a rule it lacks is named in one line."""
    import scopa_env.fast.batch as batch

    assert rules_problem("standard", 2) is None and rules_problem("cirulla", 2) is None

    def lacks(rules, num_players=None):
        raise NotImplementedError(
            f"scopa_env.fast does not support rules preset {rules.name!r}: field x=1 (...); use the Python engine"
        )

    monkeypatch.setattr(batch, "check_supported", lacks)
    assert rules_problem("escoba", 2) == "scopa_env.fast does not support rules preset 'escoba': field x=1 (...)"
    players, why = compiled_lineup(["greedy", "random"], 2, "escoba")
    assert players is None and "field x=1" in why


@pytest.mark.parametrize("rules", ["standard", "cirulla"])
def test_a_games_hand_totals_add_up_to_its_scores(rules):
    """The compiled records' hands count what the harness's count (Cirulla's declared hand bonuses
    too), so their totals add up to the final scores, as they do on the harness."""
    match = Match(("greedy", "heuristic"), 2, rules, 3)
    for run in (run_deals(match, 12, progress=False), play_deals_compiled(match, ["greedy", "heuristic"], 12)):
        for records in run.deals:
            for rec in records:
                totals = [sum(h[s]["total"] for h in rec["hands"]) for s in range(2)]
                assert totals == rec["scores"], (rec["deal"], rec["rotation"], totals, rec["scores"])


def test_the_policy_plays_one_side_in_each_rotation_of_three():
    """With three sides the evaluated policy plays side r in rotation r (one side, the opponent the
    others), so the record's lineup says who played: a policy that always plays the first legal
    move is seen losing to heuristic on every side it played."""

    def first_legal(obs, legal_ids, legal_count):
        return legal_ids[:, 0]

    report = evaluate_fast_sides(first_legal, "heuristic", 6, 3, "standard", seed=2)
    assert report["config"]["engine"] == ENGINE_COMPILED
    learner, opponent = report["agents"]
    assert learner["games"] == 18 and opponent["games"] == 36, "one side of three per game is the learner's"
    assert learner["margin_per_hand"]["mean"] < 0 < opponent["margin_per_hand"]["mean"]


def test_the_compiled_loop_matches_the_harness_in_distribution():
    """heuristic against random on 3 sides: the two engines' margins differ by less than their noise
    (the deals differ: each engine shuffles the seeds its own way), and a real gap would show."""
    match = Match(("heuristic", "random", "random"), 3, "standard", 11)
    harness = summarize(match, run_deals(match, 40, progress=False))["agents"][0]["margin_per_hand"]
    compiled = summarize(match, play_deals_compiled(match, ["heuristic", "random", "random"], 40))
    c = compiled["agents"][0]["margin_per_hand"]
    se = np.hypot(harness["hi"] - harness["lo"], c["hi"] - c["lo"]) / (2 * 1.96)
    assert abs(c["mean"] - harness["mean"]) < 3 * se, (harness, c)  # a z-test of the difference, at 3 sigma


def test_threads_do_not_change_the_games():
    """The same deals on one thread and on two (batches and the search): the same records."""
    from scopa_env.fast.batch import max_threads

    if max_threads() < 2:
        pytest.skip("one core")
    match = Match(("fsearch:worlds=4", "zoo:standard-2p"), 2, "standard", 5)
    players = [compiled_player(s, 2, "standard") for s in match.agents]
    one = play_deals_compiled(match, players, 6, batch_size=4, threads=1)
    two = play_deals_compiled(match, players, 6, batch_size=4, threads=2)
    strip = [[{k: v for k, v in r.items() if k != "seconds"} for r in d] for d in one.deals]
    assert strip == [[{k: v for k, v in r.items() if k != "seconds"} for r in d] for d in two.deals]


def test_agents_import_nothing_from_train():
    """Importing the agents layer and playing a compiled pair of baselines loads no module of train
    (a network's hook comes with the agent its entry point builds)."""
    code = (
        "import sys\n"
        "import agents.compiled, agents.leaderboard\n"
        "from agents.matches import Match\n"
        "m = Match(('greedy', 'random'), 2, 'standard', 0)\n"
        "agents.compiled.play_deals_compiled(m, ['greedy', 'random'], 2)\n"
        "print(sorted(n for n in sys.modules if n == 'train' or n.startswith(('train.', 'scopa_app'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    for path in (ROOT / "agents").rglob("*.py"):
        text = path.read_text()
        for line in text.splitlines():
            words = line.split()
            assert not (words[:1] in (["import"], ["from"]) and words[1].split(".")[0] in ("train", "scopa_app")), (
                f"{path.relative_to(ROOT)}: {line.strip()}"
            )


def test_a_ctrl_c_keeps_no_half_played_deal(monkeypatch):
    import agents.compiled as compiled

    calls = {"n": 0}
    real = compiled.play_batch

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(compiled, "play_batch", interrupted)
    run = play_deals_compiled(Match(("greedy", "random"), 2, "standard", 0), ["greedy", "random"], 3)
    assert run.interrupted and run.deals == [] and run.requested == 3
    assert np.isfinite(run.wall_seconds)
