"""Deep Monte-Carlo (train/dmc/learner.py), its checkpoints and agents (train/dmc/agent.py), and the zoo."""

from __future__ import annotations

import csv
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from benchscripts import load_benchmark
from test_agents import positions, reshuffle_hidden

from agents.matches import Match, play_game
from agents.registry import make_agent
from scopa_env.engine.actions import move_enumeration
from scopa_env.engine.cards import parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import get_rules
from scopa_env.fast import BatchedScopa
from train.config import ConfigError
from train.dmc.agent import BatchPolicy, DmcAgent, NumpyQNet, load_dmc, load_dmc_batch_policy, move_features
from train.dmc.config import DmcConfig
from train.dmc.learner import train

ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "name": "tiny",
    "selfplay_games": 8,
    "opponent_games": 8,
    "opponents": {"greedy": 1.0},
    "trunk": [32],
    "net_arch": [16],
    "batch_size": 64,
    "buffer_size": 2048,
    "rollout_steps": 4,
    "teacher_steps": 500,
    "total_timesteps": 1500,
    "eval_every": 700,
    "eval_pairs": 3,
    "eval_opponents": ["random", "greedy"],
    "final_eval_pairs": 2,
    "progress_bar": False,
    "torch_threads": 1,
}


def tiny_config(tmp_path, **overrides) -> DmcConfig:
    return DmcConfig.from_dict({**TINY, "runs_dir": str(tmp_path), **overrides})


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dmc")
    return train(tiny_config(tmp))


def random_net(num_players: int = 2, seed: int = 0) -> NumpyQNet:
    rng = np.random.default_rng(seed)
    layout = ObservationLayout.for_rules(num_players, get_rules("standard"))
    feats = move_features(get_rules("standard"), num_players)
    sizes = [(layout.size, 24), (24 + feats.size, 12), (12, 1)]
    weights = {}
    for name, (a, b) in zip(("trunk.0", "head.0", "head.1"), sizes):
        weights[f"{name}.weight"] = rng.normal(0, 1 / np.sqrt(a), (b, a)).astype(np.float32)
        weights[f"{name}.bias"] = rng.normal(0, 0.1, b).astype(np.float32)
    return NumpyQNet(weights)


# --- the run folder ------------------------------------------------------------------


def test_tiny_run_writes_the_run_folder(tiny_run):
    """A run writes the usual folder: config, TensorBoard, evaluations.csv with the category rates, checkpoints, report."""
    for name in (
        "config.yaml",
        "evaluations.csv",
        "report.md",
        "final_eval.json",
        "latest/weights.npz",
        "best/meta.json",
    ):
        assert (tiny_run / name).exists(), f"{name} missing from the run folder"
    assert any((tiny_run / "tb").iterdir()), "no TensorBoard events"
    rows = list(csv.DictReader((tiny_run / "evaluations.csv").open()))
    assert {r["opponent"] for r in rows} == {"random", "greedy"}
    assert {"learner_primiera", "learner_settebello", "learner_coins", "learner_cards", "learner_scope"} <= set(rows[0])
    assert [int(r["timestep"]) for r in rows if r["opponent"] == "random"][0] == 0, "the untrained net is evaluated"
    state = json.loads((tiny_run / "latest" / "state.json").read_text())
    assert state["timestep"] >= TINY["total_timesteps"]
    assert state["updates"] > 0, "the learner never updated"


def test_kept_weights_replay_the_evaluations_afterwards(tmp_path, capsys):
    """keep_evaluated keeps every evaluation's weights; benchmarks/snapshot_curve.py replays them on
    the same deals to the same margins, goes on where it stopped, and refuses other deals."""

    run = train(tiny_config(tmp_path, keep_evaluated=True, final_eval_pairs=0))
    kept = sorted((run / "evaluated").iterdir())
    rows = [r for r in csv.DictReader((run / "evaluations.csv").open()) if r["opponent"] == "greedy"]
    assert [int(p.name) for p in kept] == [int(r["timestep"]) for r in rows]
    last, latest = np.load(kept[-1] / "weights.npz"), np.load(run / "latest" / "weights.npz")
    assert all(np.array_equal(last[k], latest[k]) for k in latest.files), "the last kept weights are not the run's"

    curve = load_benchmark("snapshot_curve")
    seed, pairs = str(DmcConfig().eval_seed), str(TINY["eval_pairs"])
    assert curve.main([str(run), "--opponent", "greedy", "--pairs", pairs, "--seed", seed]) == 0
    replayed = list(csv.DictReader((run / "evaluations_greedy.csv").open()))
    keys = ("timestep", "margin", "win_rate", "cpu_hours")
    assert [[float(r[k]) for k in keys] for r in replayed] == [[float(r[k]) for k in keys] for r in rows]
    capsys.readouterr()
    assert curve.main([str(run), "--opponent", "greedy", "--pairs", pairs, "--seed", seed]) == 0
    assert "0 to play" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="measured with --pairs"):
        curve.main([str(run), "--opponent", "greedy", "--pairs", "5", "--seed", seed])

    # a network opponent (the run's own first kept weights) plays as a batch policy; a bad one is one line
    assert curve.main([str(run), "--opponent", f"dmc:{kept[0]}", "--pairs", "2", "--seed", seed]) == 0
    (first,) = [
        r
        for r in csv.DictReader(next(run.glob("evaluations_dmc*.csv")).open())
        if int(r["timestep"]) == int(kept[0].name)
    ]
    assert float(first["margin"]) == 0.0, "the same weights on both sides of duplicate deals tie"
    for bad, message in (
        ("zoo:nope", "no zoo agent 'nope'"),
        ("mystery", "fsearch specs and dmc:, zoo:, netsearch: agents, not 'mystery'"),
        ("zoo:scopone-4p-v4", "was trained for 4 players under 'scopone', not 2"),
    ):
        with pytest.raises(SystemExit, match=message):
            curve.main([str(run), "--opponent", bad, "--pairs", "2", "--seed", seed])


def test_same_seed_same_metrics(tiny_run, tmp_path):
    """Reproducible: the same config and seed give the same evaluations (CPU)."""
    again = train(tiny_config(tmp_path, name="tiny_again", final_eval_pairs=0))
    first = [r for r in csv.DictReader((tiny_run / "evaluations.csv").open())]
    second = [r for r in csv.DictReader((again / "evaluations.csv").open())]
    keys = ("timestep", "opponent", "margin", "win_rate", "learner_scope")
    assert [[r[k] for k in keys] for r in first] == [[r[k] for k in keys] for r in second]
    w1 = np.load(tiny_run / "latest" / "weights.npz")
    w2 = np.load(again / "latest" / "weights.npz")
    assert all(np.array_equal(w1[k], w2[k]) for k in w1.files), "same seed, different weights"


def test_resume_continues_from_latest(tiny_run, tmp_path):
    """--resume picks up the counters of latest/ and trains on to the new budget."""
    import shutil

    run = tmp_path / "tiny"
    shutil.copytree(tiny_run, run)
    before = json.loads((run / "latest" / "state.json").read_text())["timestep"]
    cfg = tiny_config(tmp_path, total_timesteps=before + 600, final_eval_pairs=0)
    train(cfg, resume=True, report=False)
    after = json.loads((run / "latest" / "state.json").read_text())
    assert after["timestep"] >= before + 600 and after["updates"] > 0


def test_init_weights_start_a_new_run_from_a_trained_network(tiny_run, tmp_path):
    """init_weights: the new run's network (and its weight average) start from the checkpoint's arrays, and its
    checkpoints name that start and add its CPU-hours to their own."""
    import torch

    from train.dmc.learner import build_learner

    cfg = tiny_config(tmp_path, name="init", init_weights=str(tiny_run / "best"), final_eval_pairs=0)
    start = np.load(tiny_run / "best" / "weights.npz", allow_pickle=False)
    feats = move_features(get_rules("standard"), 2)
    obs_size = ObservationLayout.for_rules(2, get_rules("standard")).size
    learner = build_learner(cfg, obs_size, feats.size, torch.device("cpu"), None)
    for k, v in learner.net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), start[k], err_msg=k)
    fresh = build_learner(tiny_config(tmp_path), obs_size, feats.size, torch.device("cpu"), None)
    assert any(not np.array_equal(v.numpy(), start[k]) for k, v in fresh.net.state_dict().items())
    run = train(cfg, report=False)
    meta = json.loads((run / "latest" / "meta.json").read_text())
    first = json.loads((tiny_run / "best" / "meta.json").read_text())
    assert meta["init_weights"] == str(tiny_run / "best")
    assert meta["cpu_hours_with_init"] >= first["cpu_hours"] + meta["cpu_hours"] - 1e-4


def test_init_weights_count_the_whole_chain_of_starts(tiny_run, tmp_path):
    """A run started from a network that was itself started from another counts both starts' CPU-hours
    (the start's cpu_hours_with_init, not only its own cpu_hours)."""
    import shutil

    start = tmp_path / "second_leg"
    shutil.copytree(tiny_run / "best", start)
    meta = json.loads((start / "meta.json").read_text())
    meta["cpu_hours_with_init"] = meta["cpu_hours"] + 5.0  # as if it had started from a 5 CPU-hour network
    (start / "meta.json").write_text(json.dumps(meta))
    run = train(tiny_config(tmp_path, name="third", init_weights=str(start), final_eval_pairs=0), report=False)
    third = json.loads((run / "latest" / "meta.json").read_text())
    assert third["cpu_hours_with_init"] >= meta["cpu_hours_with_init"] + third["cpu_hours"] - 1e-4


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"trunk": [48]}, r"does not fit this run: trunk \[32\] \(this config: \[48\]\)"),
        ({"num_players": 4}, r"does not fit this run: num_players 2 \(this config: 4\)"),
        ({"heuristic_features": True}, "does not fit this run: heuristic_features False"),
    ],
)
def test_init_weights_must_fit_the_run(tiny_run, tmp_path, overrides, message):
    with pytest.raises(ConfigError, match=message):
        tiny_config(tmp_path, init_weights=str(tiny_run / "best"), **overrides)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no/such/folder", "init_weights: no checkpoint at 'no/such/folder'"),
        ("zoo:no-such-entry", "init_weights: .*no-such-entry"),
        ("zoo:ppo-standard-2p", "init_weights: zoo:ppo-standard-2p is not a DMC network"),
        ("zoo:scopone-4p-v2", r"rules 'scopone' \(this config: 'standard'\), num_players 4"),
    ],
)
def test_init_weights_refuses_what_it_cannot_start_from(tmp_path, spec, message):
    with pytest.raises(ConfigError, match=message):
        tiny_config(tmp_path, init_weights=spec)


def test_resume_may_add_search_labels(tiny_run, tmp_path):
    """A second stage of a run: --resume may change the labels and the learning-rate schedule (and the
    labels then flow), but not the network or the games."""
    import shutil

    from train.dmc.learner import resume_config

    run = tmp_path / "tiny"
    shutil.copytree(tiny_run, run)
    before = json.loads((run / "latest" / "state.json").read_text())
    stage2 = [
        f"total_timesteps={before['timestep'] + 600}",
        "label_positions=4",
        "label_search=fsearch:worlds=4,exact_cards=4",
        "learning_rate=0.0001",
        "learning_rate_end=0.00003",
    ]
    cfg = resume_config(run, None, stage2)
    assert cfg.label_positions == 4 and cfg.learning_rate_end == 0.00003
    assert Path(cfg.runs_dir) / cfg.name == run, "a copied run must go on in the copy, not where it started"
    train(cfg, resume=True, report=False)
    after = json.loads((run / "latest" / "state.json").read_text())
    assert before["labels"] == 0 and after["labels"] > 0, "the resumed stage labelled no positions"
    with pytest.raises(ConfigError, match="trunk"):
        resume_config(run, None, ["trunk=[64]"])


@pytest.mark.parametrize("preset, field", [("chkobba", "first_card_choice"), ("piva", "bazzica_points")])
def test_search_labels_refuse_decisions_the_search_does_not_value(preset, field, tmp_path):
    """The batched search values card plays only: labels on rules with other decisions are refused early,
    and the batch forms refuse them too (they would mislabel those decisions)."""
    from scopa_env.fast.search import search_config, search_values

    with pytest.raises(ConfigError, match=field):
        tiny_config(tmp_path, rules=preset, label_positions=4)
    batch = BatchedScopa(2, 2, rules=preset, action_mode="move")
    batch.reset(np.arange(2))
    with pytest.raises(NotImplementedError, match=field):
        search_values(batch, np.arange(2), np.arange(2), search_config())


def test_search_labels_are_learned(tmp_path):
    """With label_positions, the compiled search labels every legal move of some positions; the labels
    fill their buffer, their loss is logged, and a seed still reproduces the run."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    overrides = dict(label_positions=4, label_search="fsearch:worlds=4,exact_cards=4", final_eval_pairs=0)
    run = train(tiny_config(tmp_path, name="labels", **overrides), report=False)
    state = json.loads((run / "latest" / "state.json").read_text())
    assert state["labels"] > 4 * 10, "too few labelled moves"
    events = EventAccumulator(str(run / "tb"))
    events.Reload()
    assert "losses/label_mse" in events.Tags()["scalars"]
    again = train(tiny_config(tmp_path, name="labels_again", **overrides), report=False)
    w1, w2 = np.load(run / "latest" / "weights.npz"), np.load(again / "latest" / "weights.npz")
    assert all(np.array_equal(w1[k], w2[k]) for k in w1.files), "same seed, different weights"
    plain = np.load(
        train(tiny_config(tmp_path, name="plain", final_eval_pairs=0), report=False) / "latest" / "weights.npz"
    )
    assert not all(np.array_equal(w1[k], plain[k]) for k in w1.files), "the labels changed nothing"


def test_actor_labels_are_the_search_values():
    """Each label is the search's value of that very move: relabelling with the same seeds gives the same
    numbers, matched move by move through the legal ids."""
    from scopa_env.fast.search import search_values
    from train.dmc.actors import Actors, Labeller

    cfg = DmcConfig.from_dict({**TINY, "label_positions": 3})
    actors = Actors(cfg, 6, None, np.arange(6), np.random.default_rng(0))
    labeller = Labeller(3, cfg.label_config(), 1)
    legal_before = actors.batch.legal_ids.copy()
    state = np.random.default_rng(0).bit_generator.state
    actors.act(lambda obs, rows, feats: np.zeros(len(rows), np.float32), 0.0, "", 0.0, labeller)
    obs, feats, target = actors.take_labels()
    rng = np.random.default_rng(0)
    rng.bit_generator.state = state
    games = np.sort(rng.choice(6, size=3, replace=False))
    seeds = rng.integers(0, 2**62, 3)
    # the batch has moved on: label the same positions in a fresh actor from the same seeds
    fresh = Actors(cfg, 6, None, np.arange(6), np.random.default_rng(0))
    expected = search_values(fresh.batch, games, seeds, labeller.C)
    counts = fresh.batch.legal_count[games]
    assert np.array_equal(fresh.batch.legal_ids, legal_before)
    assert len(target) == counts.sum()
    want = np.concatenate([expected[j, :n] for j, n in enumerate(counts)]).astype(np.float32)
    assert np.array_equal(target, want)
    assert obs.shape[0] == feats.shape[0] == len(target)


def test_difference_labels_pair_each_move_with_the_search_best():
    """label_loss=differences: only positions with a choice are searched, and every other legal move is
    paired with the search's best move of its position, the target being their value gap (>= 0), matched
    move by move against the search's own values from the same seeds."""
    from scopa_env.fast.search import search_values
    from train.dmc.actors import Actors, Labeller

    cfg = DmcConfig.from_dict({**TINY, "label_positions": 4, "label_loss": "differences"})
    actors = Actors(cfg, 12, None, np.arange(12), np.random.default_rng(0))
    labeller = Labeller(4, cfg.label_config(), 1, differences=True)
    b = actors.batch
    features = actors.features
    pool = np.flatnonzero(b.legal_count > 1)
    assert pool.size >= 4, "the test needs positions with a choice"
    state = np.random.default_rng(0).bit_generator.state
    from train.dmc.agent import flatten_legal

    rows, cols, ids = flatten_legal(b.legal_ids, b.legal_count)
    all_feats = features(b.obs, rows, ids, None)
    legal_before, counts_before = b.legal_ids.copy(), b.legal_count.copy()
    actors.act(lambda obs, rows, feats: np.zeros(len(rows), np.float32), 0.0, "", 0.0, labeller)
    obs, best_feats, gap, other_feats = actors.take_labels()
    rng = np.random.default_rng(0)
    rng.bit_generator.state = state
    games = np.sort(rng.choice(pool, size=4, replace=False))
    seeds = rng.integers(0, 2**62, 4)
    fresh = Actors(cfg, 12, None, np.arange(12), np.random.default_rng(0))
    assert np.array_equal(fresh.batch.legal_ids, legal_before)
    values = search_values(fresh.batch, games, seeds, labeller.C)
    want_gap, want_best, want_other = [], [], []
    for j, g in enumerate(games):
        n = counts_before[g]
        v = values[j, :n].astype(np.float32)
        k = int(np.argmax(v))
        f = all_feats[rows == g]
        for c in range(n):
            if c != k:
                want_gap.append(v[k] - v[c])
                want_best.append(f[k])
                want_other.append(f[c])
    assert len(gap) == sum(counts_before[games] - 1) == len(obs)
    assert np.array_equal(gap, np.asarray(want_gap, np.float32)) and (gap >= 0).all()
    assert np.array_equal(best_feats, np.asarray(want_best)) and np.array_equal(other_feats, np.asarray(want_other))


def test_exact_only_labels_come_from_the_positions_the_search_solves():
    """label_exact_only: only positions with at most the search's exact_cards left to play are labelled, each
    with the search's exact value of every legal move; the other positions of the batch give no label."""
    from scopa_env.fast import core
    from scopa_env.fast.search import exact_games
    from train.dmc.actors import Actors, Labeller

    cfg = DmcConfig.from_dict({**TINY, "label_positions": 64, "label_exact_only": True, "label_search": "fsearch"})
    actors = Actors(cfg, 64, None, np.arange(64), np.random.default_rng(0))
    labeller = Labeller(64, cfg.label_config(), 1, exact_only=True)
    nothing = lambda obs, rows, feats: np.zeros(len(rows), np.float32)  # noqa: E731
    seen_exact = labelled = 0
    for _ in range(60):
        b = actors.batch
        exact = exact_games(b, labeller.C)
        left = b._S[:, core.COL_IN_HANDS] + 40 - b._S[:, core.COL_STOCK_POS]
        assert np.array_equal(exact, left <= 6)
        counts = b.legal_count.copy()
        seen_exact += int(exact.sum())
        actors.act(nothing, 0.0, "", 0.0, labeller)
        labels = actors.take_labels()
        if labels is None:
            assert not exact.any()
            continue
        # every exact position was labelled (64 asked, fewer there), one label per legal move
        assert len(labels[2]) == counts[exact].sum()
        labelled += len(labels[2])
    assert seen_exact > 0 and labelled > 0, "the games never reached their last cards"


def test_exact_labels_match_the_search_move_by_move():
    """The exact labels are the search's values, which for the last 6 cards of a 2-player hand are exact: the
    same position searched with another seed gives the same values."""
    from scopa_env.fast.search import exact_games, search_values
    from train.dmc.actors import Actors

    cfg = DmcConfig.from_dict({**TINY, "label_search": "fsearch"})
    actors = Actors(cfg, 32, None, np.arange(32), np.random.default_rng(1))
    C = cfg.label_config()
    for _ in range(200):
        games = np.flatnonzero(exact_games(actors.batch, C) & (actors.batch.legal_count > 1))
        if games.size:
            break
        actors.act(lambda obs, rows, feats: np.zeros(len(rows), np.float32), 0.0, "", 0.0, None)
    assert games.size, "the games never reached their last cards with a choice"
    one = search_values(actors.batch, games, np.arange(games.size), C)
    other = search_values(actors.batch, games, np.arange(games.size) + 1000, C)
    assert np.array_equal(one, other)


def test_difference_labels_train_and_reproduce(tmp_path):
    """A run with label_loss=differences fills its pair buffer, logs the label loss, differs from the
    value labels, and a seed reproduces it."""
    overrides = dict(
        label_positions=4, label_search="fsearch:worlds=4,exact_cards=4", final_eval_pairs=0, label_loss="differences"
    )
    run = train(tiny_config(tmp_path, name="diff", **overrides), report=False)
    assert json.loads((run / "latest" / "state.json").read_text())["labels"] > 10
    again = train(tiny_config(tmp_path, name="diff_again", **overrides), report=False)
    w1, w2 = np.load(run / "latest" / "weights.npz"), np.load(again / "latest" / "weights.npz")
    assert all(np.array_equal(w1[k], w2[k]) for k in w1.files), "same seed, different weights"
    values = train(tiny_config(tmp_path, name="values", **{**overrides, "label_loss": "values"}), report=False)
    w3 = np.load(values / "latest" / "weights.npz")
    assert not all(np.array_equal(w1[k], w3[k]) for k in w1.files), "the two label losses trained the same"


def test_a_stage_is_a_resume(tmp_path):
    """A config with a stage trains the same weights as the plain run to the stage's start resumed with the
    stage's keys: new games, empty buffers, and the learning-rate schedule of a resumed run."""
    from train.dmc.learner import resume_config

    stage = {
        "label_positions": 4,
        "label_search": "fsearch:worlds=4,exact_cards=4",
        "label_loss": "differences",
        "learning_rate": 0.001,
        "learning_rate_end": 0.0002,
    }
    base = dict(final_eval_pairs=0, learning_rate_end=0.0001, eval_every=400)
    staged = train(tiny_config(tmp_path, name="staged", stages=[{"at": 700, **stage}], **base), report=False)
    first = train(tiny_config(tmp_path, name="two", total_timesteps=700, **base), report=False)
    overrides = ["total_timesteps=1500", *(f"{k}={v}" for k, v in stage.items())]
    resumed = train(resume_config(first, None, overrides), resume=True, report=False)
    w1, w2 = np.load(staged / "latest" / "weights.npz"), np.load(resumed / "latest" / "weights.npz")
    assert all(np.array_equal(w1[k], w2[k]) for k in w1.files), "the stage and the resume trained differently"
    s1, s2 = (json.loads((r / "latest" / "state.json").read_text()) for r in (staged, resumed))
    assert s1["timestep"] == s2["timestep"] and s1["labels"] == s2["labels"] > 0
    plain = np.load(train(tiny_config(tmp_path, name="plain", **base), report=False) / "latest" / "weights.npz")
    assert not all(np.array_equal(w1[k], plain[k]) for k in w1.files), "the stage changed nothing"


def test_a_stage_may_move_the_games_between_self_play_and_the_opponents(tmp_path):
    """A stage's selfplay_games and opponent_games are the actor mix from its start: the segment it
    starts has that many games of each, and a stage with no games at all is refused in one line."""
    from train.dmc.learner import start_segment

    cfg = tiny_config(tmp_path, stages=[{"at": 700, "selfplay_games": 0, "opponent_games": 3}])
    assert cfg.selfplay_games > 0, "the tiny config should start with self-play games"
    before = start_segment(cfg, cfg.for_stage(0), 0)
    after = start_segment(cfg, cfg.for_stage(1), 700)
    assert [a.batch.num_games for a in before.actors] == [cfg.selfplay_games, cfg.opponent_games]
    assert [a.batch.num_games for a in after.actors] == [3]
    assert after.actors[0].batch.learner_seat == "random", "the stage's only games should be against opponents"
    with pytest.raises(ConfigError, match="selfplay_games \\+ opponent_games must be at least 1"):
        tiny_config(tmp_path, stages=[{"at": 700, "selfplay_games": 0, "opponent_games": 0}])


def test_an_fsearch_opponent_plays_the_opponent_games(tmp_path):
    """``opponents: "fsearch:..."``: the opponent games are played against the compiled search, the
    network in one seat of each (every seat equally often over the batch), and only the network's
    decisions are samples; the run trains end to end."""
    from train.dmc.actors import FrozenActors
    from train.dmc.learner import start_segment

    spec = "fsearch:worlds=2"
    base = {"opponents": spec, "teacher": "", "label_threads": 1}
    cfg = tiny_config(tmp_path, **base, opponent_games=6, num_players=3, eval_opponents=["greedy"])
    seg = start_segment(cfg, cfg.for_stage(0), 0)
    frozen = seg.actors[1]
    assert isinstance(frozen, FrozenActors) and (frozen.player, frozen.threads) == (spec, 1)
    assert frozen.side.tolist() == [0, 1, 2, 0, 1, 2], "the network's seat should cycle over the games"
    searched = []
    for _ in range(6):
        mine = frozen.batch.to_play % 3 == frozen.side
        searched.append(int((~mine).sum()))
        before = sum(len(p[2]) for p in frozen.pending)
        frozen.act(lambda obs, rows, feats: np.zeros(len(rows), np.float32), 0.0, "", 0.0)
        assert sum(len(p[2]) for p in frozen.pending) - before == int(mine.sum()), (
            "only the network's moves are samples"
        )
    assert sum(searched) > 0, "the search never played"
    run = train(tiny_config(tmp_path, name="vs_search", **base, total_timesteps=400), report=False)
    assert json.loads((run / "latest" / "state.json").read_text())["timestep"] >= 400


@pytest.mark.parametrize(
    "override, message",
    [
        ({"teacher": "heuristic"}, "set teacher: ''"),
        ({"label_positions": 4}, "set label_positions: 0"),
        ({"stages": [{"at": 700, "label_positions": 4}]}, "set label_positions: 0"),
        ({"opponents": "fsearch:worlds=0"}, "opponents: fsearch worlds must be"),
        ({"opponents": {"fsearch": 1.0, "greedy": 1.0}}, "not compiled players"),
    ],
)
def test_an_fsearch_opponent_refuses_what_its_games_cannot_have(override, message, tmp_path):
    with pytest.raises(ConfigError) as err:
        tiny_config(tmp_path, **{"opponents": "fsearch:worlds=2", "teacher": "", **override})
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "stages, message",
    [
        ("x", "stages must be a list"),
        ([{"at": 0}], "at must be an int of decisions"),
        ([{"at": 900}, {"at": 800}], "stages[1]: at must be an int of decisions after the previous"),
        ([{"at": 5000}], "before total_timesteps"),
        ([{"at": 700, "trunk": [8]}], "stages[0]: key(s) ['trunk'] cannot change in a stage"),
        ([{"at": 700, "label_loss": "ranks"}], "label_loss must be one of"),
        ([{"at": 700, "learning_rate": -1}], "learning_rate must be"),
    ],
)
def test_bad_stages_are_one_line_errors(stages, message, tmp_path):
    with pytest.raises(ConfigError) as err:
        tiny_config(tmp_path, stages=stages)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_cli_trains_a_dmc_config(scopa_cli, tmp_path):
    """`scopa train CONFIG` sends `algo: dmc` configs here; a bad key is a one-line error."""
    cfg = tmp_path / "d.yaml"
    cfg.write_text("algo: dmc\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in TINY.items() if k != "name"))
    bad = scopa_cli("train", str(cfg), f"runs_dir={tmp_path}", "epsilonn=0.1")
    assert bad.returncode == 2 and "unknown key(s) ['epsilonn']" in bad.stderr and "Traceback" not in bad.stderr
    ok = scopa_cli("train", str(cfg), f"runs_dir={tmp_path}", "total_timesteps=300", "eval_every=300", "--no-report")
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "d" / "best" / "weights.npz").exists()


@pytest.mark.parametrize(
    "override, message",
    [
        ({"epsilon": 2}, "epsilon must be in [0, 1]"),
        ({"learning_rate": -1}, "learning_rate must be in (0, 1]"),
        ({"opponents": "ppo:x"}, "not compiled players"),
        ({"eval_opponents": ["search"]}, "not compiled players"),
        ({"gamma": 0.9}, "gamma must be 1.0"),
        ({"action_mode": "select"}, "action_mode must be one of ['move']"),
        ({"device": "tpu"}, "device must be one of"),
        ({"seed": -1}, "seed must be in [0, "),
        ({"selfplay_games": 0, "opponent_games": 0}, "at least 1"),
        ({"label_positions": 4, "label_search": "search"}, "label_search must be an fsearch spec"),
        ({"label_positions": 4, "label_search": "fsearch:worlds=0"}, "label_search: fsearch worlds must be"),
        ({"label_positions": -1}, "label_positions must be >= 0"),
    ],
)
def test_config_errors_name_the_key(tmp_path, override, message):
    with pytest.raises(ConfigError, match=None) as exc:
        tiny_config(tmp_path, **override)
    assert message in str(exc.value)


# --- the network never plays an illegal move ---------------------------------------------


@pytest.mark.parametrize("num_players", [2, 4])
def test_batch_policy_picks_a_legal_move_everywhere(num_players):
    """Over whole self-play games on the compiled core the network's move is always a legal id."""
    policy = BatchPolicy(random_net(num_players), move_features(get_rules("standard"), num_players))
    batch = BatchedScopa(64, num_players, action_mode="move", episode="game", legal_width=128)
    batch.reset(np.arange(64))
    for _ in range(300):
        actions = policy(batch.obs, batch.legal_ids, batch.legal_count)
        for i, a in enumerate(actions):
            assert a in batch.legal_ids[i, : batch.legal_count[i]], f"game {i}: {a} is not legal"
        batch.step(actions)  # would raise ValueError on an illegal id


def test_agent_plays_legal_whole_games():
    """The view-based agent plays whole Python-engine games (illegal moves would forfeit)."""
    layout = ObservationLayout.for_rules(2, get_rules("standard"))
    agent = DmcAgent(random_net(), {"rules": "standard", "num_players": 2, "observation_size": layout.size})
    match = Match(("a", "b"), 2, "standard", 0)
    for deal in range(3):
        rec = play_game(match, deal, 0, [agent, make_agent("greedy", seed=1)])
        assert rec["forfeit"] is None, rec["forfeit"]
        assert rec["winner"] is not None


def test_agent_refuses_other_rules_or_player_counts():
    agent = DmcAgent(random_net(), {"rules": "standard", "num_players": 2})
    game = Game(4, seed=1)
    with pytest.raises(ValueError, match="trained for 2 players with rules 'standard', not 4 players"):
        agent.act(game.view(game.current))


def test_decision_ignores_hidden_cards():
    """Permuting the hidden cards (other hands, stock order) never changes the network's move."""
    agent = DmcAgent(random_net(seed=3), {"rules": "standard", "num_players": 2})
    rng = np.random.default_rng(5)
    for game in positions(2, 12, seed=7):
        other = reshuffle_hidden(game, game.current, rng)
        assert game.hands != other.hands or game.stock != other.stock
        assert agent.act(game.view(game.current)) == agent.act(other.view(game.current))


def test_move_features_read_the_table():
    """A capture that empties the table is flagged as a sweep; a trail adds the card to the table."""
    rules = get_rules("standard")
    feats = move_features(rules, 2)
    layout = ObservationLayout.for_rules(2, rules)
    obs = np.zeros((1, layout.size), np.float32)
    table = parse_cards("3c 4c")
    for c in table:
        obs[0, layout["table"].start + c] = 1.0
    moves = move_enumeration(rules)
    seven = parse_cards("7b")[0]
    sweep = moves.index[(seven, (1 << table[0]) | (1 << table[1]))]
    trail = moves.index[(seven, 0)]
    f = feats(obs, np.zeros(2, np.int64), np.array([sweep, trail]))
    k = 40
    assert f[0, 3 * k + 1] == 1.0 and f[0, 2 * k : 3 * k].sum() == 0, "7 takes 3+4: the table is empty, a sweep"
    assert f[1, 3 * k + 1] == 0.0 and f[1, 2 * k + seven] == 1.0 and f[1, 2 * k : 3 * k].sum() == 3
    assert f[1, 3 * k + 2] == pytest.approx((3 + 4 + 7) / 40)
    assert f[0, 3 * k + 4] == 0.0 and f[1, 3 * k + 4] == 0.0, "an empty table or a sum of 14 cannot be swept"


def test_move_features_count_the_sweep_threat():
    """Trailing a 2 on 3+4 leaves 9 on the table: the unseen Nines threaten a sweep by the next seat."""
    from math import comb

    rules = get_rules("standard")
    feats = move_features(rules, 2)
    layout = ObservationLayout.for_rules(2, rules)
    obs = np.zeros((1, layout.size), np.float32)
    table, hand = parse_cards("3c 4c"), parse_cards("2b 6s Kd")
    for c in table:
        obs[0, layout["table"].start + c] = 1.0
    for c in hand:
        obs[0, layout["hand"].start + c] = 1.0
    unseen = [c for c in range(40) if c not in table + hand and c != parse_cards("Kc")[0]]  # a King in a pile
    for c in unseen:
        obs[0, layout["unseen"].start + c] = 1.0
    obs[0, layout["hand_counts"].start + 1] = 1.0  # the next seat holds 3 cards
    moves = move_enumeration(rules)
    two, six = parse_cards("2b 6s")
    f = feats(obs, np.zeros(2, np.int64), np.array([moves.index[(two, 0)], moves.index[(six, 0)]]))
    k = 40
    assert f[0, 3 * k + 4] == pytest.approx(4 / 4), "the sum is 9 and all four Nines are unseen"
    u = len(unseen)
    assert f[0, 3 * k + 5] == pytest.approx(1 - comb(u - 4, 3) / comb(u, 3), rel=1e-5)
    assert f[1, 3 * k + 4] == 0.0, "3 + 4 + 6 = 13 cannot be swept"


# --- checkpoints load weights and JSON only -------------------------------------------------


def test_checkpoint_round_trip(tiny_run):
    net, meta = load_dmc(tiny_run / "best")
    assert meta["algo"] == "dmc" and meta["rules"] == "standard" and meta["num_players"] == 2
    agent = make_agent(f"dmc:{tiny_run}")
    assert isinstance(agent, DmcAgent)


def test_pickled_weights_are_refused_without_running(tiny_run, tmp_path):
    """A weights file carrying a pickled object is refused by np.load(allow_pickle=False); nothing runs."""
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(tiny_run / "best", bad)
    marker = tmp_path / "ran"
    payload = np.array([_Boom(str(marker))], dtype=object)
    with zipfile.ZipFile(bad / "weights.npz", "w") as zf:
        with zf.open("trunk.0.weight.npy", "w") as fh:
            np.lib.format.write_array(fh, payload, allow_pickle=True)
    with pytest.raises(ValueError, match="weights.npz: not a readable weights file"):
        load_dmc(bad)
    assert not marker.exists(), "loading the checkpoint ran code from it"


class _Boom:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: (d / "meta.json").write_text("{not json"), "meta.json: not a readable JSON file"),
        (lambda d: (d / "meta.json").write_text('{"algo": "ppo"}'), "not a DMC checkpoint"),
        (lambda d: (d / "weights.npz").write_bytes(b"PK\x03\x04trunc"), "weights.npz: not a readable weights file"),
        (lambda d: (d / "weights.npz").unlink(), "is not a DMC checkpoint folder"),
    ],
)
def test_damaged_checkpoints_name_the_file(tiny_run, tmp_path, damage, message):
    import shutil

    bad = tmp_path / "ckpt"
    shutil.copytree(tiny_run / "best", bad)
    damage(bad)
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        load_dmc(bad)


# --- the zoo ------------------------------------------------------------------------------------


def zoo_names() -> list[str]:
    from train import zoo

    return zoo.names()


def dmc_zoo_names() -> list[str]:
    """The zoo's DMC entries (its PPO and DQN entries are tested in tests/test_ppo_zoo.py)."""
    from train import zoo

    return [name for name in zoo.names() if zoo.algo_of(name) == "dmc"]


def test_the_zoo_ships_the_standard_agent():
    assert "standard-2p" in zoo_names()


@pytest.mark.slow  # plays each zoo agent for its card
@pytest.mark.parametrize("name", dmc_zoo_names())
def test_zoo_agent_card_matches_and_plays(name):
    """Every zoo checkpoint loads, its card matches its file (hash, game), and it plays legal games."""
    from train import zoo
    from train.fast_eval import evaluate_fast_sides

    card = zoo.card(name)
    folder = zoo.path_of(name)
    assert card["weights_sha256"] == zoo.weights_sha256(folder)
    net, meta = load_dmc(folder)
    assert (meta["rules"], meta["num_players"]) == (card["rules"], card["num_players"])
    assert (folder / "weights.npz").stat().st_size < 5_000_000, "a zoo checkpoint is a few MB at most"
    for opp in ("random", "greedy", "heuristic"):
        assert any(r["opponent"] == opp for r in card["results"]), f"the card has no result against {opp}"
    agent = make_agent(f"zoo:{name}")
    match = Match(("zoo", "greedy"), card["num_players"], card["rules"], 0)
    rec = play_game(match, 0, 0, [agent if s % 2 == 0 else make_agent("greedy") for s in range(card["num_players"])])
    assert rec["forfeit"] is None
    policy, _ = load_dmc_batch_policy(folder)
    report = evaluate_fast_sides(policy, "random", 4, card["num_players"], card["rules"], seed=1)
    assert report["games"] == 4 * match.num_sides, "every deal is played once per rotation of the sides"


def test_zoo_refuses_a_damaged_file(tmp_path, monkeypatch):
    import shutil

    from train import zoo

    name = zoo_names()[0]
    copy = tmp_path / name
    shutil.copytree(zoo.path_of(name), copy)
    w = dict(np.load(copy / "weights.npz"))
    first = sorted(w)[0]
    w[first] = w[first] + 1.0
    np.savez(copy / "weights.npz", **w)
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    with pytest.raises(ValueError, match="does not match the SHA-256 on its card"):
        zoo.load_zoo_agent(name)


def test_compiled_heuristic_scores_are_the_python_agents():
    """The heuristic-score move features read on the compiled core equal the Python agent's scores."""
    from test_fast_heuristic import python_best

    from agents.heuristic import HeuristicAgent
    from scopa_env.fast.features import heuristic_move_scores

    batch = BatchedScopa(16, 2, action_mode="move", legal_width=128)
    batch.reset(np.arange(16) + 100)
    rng = np.random.default_rng(0)
    moves, agent, compared = batch.moves, HeuristicAgent(), 0
    for _ in range(40):
        scores = heuristic_move_scores(batch)
        for i in range(16):
            table = batch.state(i)["table"]
            _, expected = python_best(batch, i, agent)
            for k in range(batch.legal_count[i]):
                pair = moves.pair(int(batch.legal_ids[i, k]), table)
                assert scores[i, k] == pytest.approx(expected[pair], abs=1e-9), f"game {i}, move {pair}"
                compared += 1
        batch.step(batch.legal_ids[np.arange(16), (rng.random(16) * batch.legal_count).astype(int)])
    assert compared > 500


@pytest.mark.parametrize(
    "rules, players, expected",
    [("standard", 2, "zoo:standard-2p-v3"), ("scopone", 4, "zoo:scopone-4p-v4"), ("standard", 4, "heuristic")],
)
def test_the_default_opponent_is_the_zoo_agent_for_the_game(rules, players, expected):
    """The terminal game and the web page default to the zoo's agent for the game, else the heuristic."""
    from scopa_app.play import default_opponent, new_terminal_game

    assert default_opponent(rules, players) == expected
    tg = new_terminal_game(rules=rules, players=players, seed=1, input_fn=lambda _: "q", output_fn=lambda _: None)
    assert set(tg.specs.values()) == {expected}


def test_a_zoo_agent_refuses_another_game():
    agent = make_agent("zoo:standard-2p")
    assert agent.mismatch(2, "standard") is None
    assert "not 4 players with 'scopone'" in agent.mismatch(4, "scopone")


DMC_CONFIGS = sorted(
    p for p in (ROOT / "configs").glob("*.yaml") if re.search(r"^algo: dmc\b", p.read_text(), re.MULTILINE)
)
DMC_TINY = [f"{k}={json.dumps(v)}" for k, v in TINY.items() if k not in ("name", "opponents")]


def test_there_are_the_dmc_configs():
    assert {p.stem for p in DMC_CONFIGS} >= {"dmc_standard", "dmc_scopone"}


@pytest.mark.slow  # one training run per shipped DMC config (test_cli_trains_a_dmc_config is the quick one)
@pytest.mark.parametrize("config", DMC_CONFIGS, ids=[p.stem for p in DMC_CONFIGS])
def test_every_dmc_config_trains_with_a_tiny_budget(config, tmp_path, scopa_cli):
    """The shipped recipes run end to end (their own game, features, opponents and stages) at a tiny budget:
    a config's stages start at the same fractions of it (a larger one, so that a round falls in a stage)."""
    import yaml

    data = yaml.safe_load(config.read_text())
    budget = 1500 if data.get("stages") else 400
    tiny = DMC_TINY
    if data.get("init_weights"):  # the network it starts from sets the widths: its full-width
        # network plays the evaluations, so they play one deal against one opponent
        skip = ("trunk=", "net_arch=", "eval_pairs=", "eval_opponents=")
        tiny = [o for o in DMC_TINY if not o.startswith(skip)] + ["eval_pairs=1", 'eval_opponents=["random"]']
    stages = [{**st, "at": budget * st["at"] // data["total_timesteps"]} for st in data.get("stages", [])]
    extra = [f"stages={yaml.safe_dump(stages, default_flow_style=True, width=10**6).strip()}"] if stages else []
    result = scopa_cli("train", str(config), f"runs_dir={tmp_path}", *tiny, f"total_timesteps={budget}", *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    if stages:
        assert "dmc: stage 1 from" in result.stdout + result.stderr, "the stages did not start"
    run = tmp_path / config.stem
    for name in ("report.md", "margin.png", "best/weights.npz", "latest/state.json"):
        assert (run / name).exists(), f"{name} missing from the run folder"


def test_heuristic_features_stay_finite_where_the_heuristic_always_declares():
    """Wikipedia, Cirulla: the hand bonuses "must be declared before the player holding them has
    played their first card". The heuristic scores a pass on a bonus it holds ``-inf`` (it always
    declares); the move features a network reads stay finite and still rank the pass last."""
    from scopa_env.fast.features import heuristic_move_scores
    from train.dmc.agent import flatten_legal

    n = 256
    batch = BatchedScopa(n, 2, "cirulla", action_mode="move", episode="game")
    batch.reset(np.arange(n))
    feats = move_features(batch.rules, 2, heuristic=True)
    rng = np.random.default_rng(0)
    passes = 0
    for _ in range(60):
        rows, cols, ids = flatten_legal(batch.legal_ids, batch.legal_count)
        h = heuristic_move_scores(batch)[rows, cols]
        out = feats(batch.obs.copy(), rows, ids, h)
        assert np.isfinite(out).all()
        bad = ~np.isfinite(h)
        passes += int(bad.sum())
        for r in np.unique(rows[bad]):
            mine = rows == r
            assert h[mine & ~bad].size == 0 or out[mine & bad, -3].max() < out[mine & ~bad, -3].min()
        pick = (rng.random(n) * batch.legal_count).astype(np.int64)
        batch.step(batch.legal_ids[np.arange(n), pick])
    assert passes > 0  # the declarations were met
