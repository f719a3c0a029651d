"""The endgame network of a DMC checkpoint (train/dmc/endgame.py) and its fit (train/dmc/endgame_fit.py)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from scopa_env.engine.captures import legal_pairs
from scopa_env.engine.cards import SETTEBELLO, SUIT_OF
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import get_rules
from train.dmc import endgame_fit
from train.dmc.agent import load_dmc, load_dmc_agent
from train.dmc.endgame import ENDGAME_VERSION, EndgameFeatures
from train.zoo import checked_path

RULES = get_rules("standard")
SLICES = ObservationLayout(2).slices


def last_round_positions(hands: int = 40, seed: int = 5):
    """Observations and legal ids of the last-round positions of heuristic-played hands (compiled core)."""
    from agents.compiled import side_moves
    from scopa_env.fast import BatchedScopa
    from train.dmc.agent import flatten_legal

    batch = BatchedScopa(hands, 2, "standard", action_mode="move", episode="hand")
    batch.reset(np.arange(hands, dtype=np.int64) + seed)
    rng = np.random.default_rng(seed)
    open_ = np.ones(hands, bool)
    out = []
    while open_.any():
        g = np.flatnonzero(open_)
        obs = batch.obs[g].copy()
        rows, cols, ids = flatten_legal(batch.legal_ids[g], batch.legal_count[g])
        out.append((obs, rows, ids))
        batch.step(side_moves(batch, "heuristic", open_, rng, threads=1))
        open_ &= ~batch.hand_ended
    return out


def mask_of(plane: np.ndarray) -> int:
    return sum(1 << int(c) for c in np.flatnonzero(plane > 0.5))


def test_the_rows_are_the_afterstate_and_the_replies_of_the_python_rules():
    """Each row is the position after the move, read from the observation, and the one-ply replies of the
    other hand and of the mover's remaining cards come from the Python engine's captures: "a card can
    capture ... a combination of cards whose values add up to the value of the card played" and "if a card
    can capture either a single card or a combination, it must capture the single card" (pagat.com's Scopa
    page), here checked move by move against scopa_env.engine.captures.legal_pairs."""
    features = EndgameFeatures(RULES, 2)
    checked = 0
    for obs, rows, ids in last_round_positions():
        x = features(obs, rows, ids)
        for j in range(len(ids)):
            o = obs[rows[j]]
            card, taken = int(features.card[ids[j]]), int(features.mask[ids[j]])
            hand, table = mask_of(o[SLICES["hand"]]), mask_of(o[SLICES["table"]])
            other = mask_of(o[SLICES["unseen"]])
            hand_after = hand & ~(1 << card)
            table_after = table | (1 << card) if taken == 0 else table & ~taken
            assert mask_of(x[j, 0:40]) == hand_after and mask_of(x[j, 40:80]) == other
            assert mask_of(x[j, 80:120]) == table_after
            assert mask_of(x[j, 120:160]) == mask_of(o[SLICES["own_pile"]]) | (taken | (1 << card) if taken else 0)
            assert x[j, 280] == (taken != 0 and table_after == 0) and x[j, 281] == (taken != 0)
            for base, cards in ((280 + 26, other), (280 + 33, hand_after)):
                caps = [(c, m) for c, m in legal_pairs(cards, table_after, RULES) if m]
                assert x[j, base] == bool(caps)
                assert x[j, base + 1] == any(m == table_after for _, m in caps)
                assert x[j, base + 2] == any(((m | 1 << c) >> SETTEBELLO) & 1 for c, m in caps)
                most = max(((m | 1 << c).bit_count() for c, m in caps), default=0)
                assert x[j, base + 3] == pytest.approx(most / 4)
                coins = max(
                    (sum(SUIT_OF[b] == 0 for b in range(40) if (m | 1 << c) >> b & 1) for c, m in caps), default=0
                )
                assert x[j, base + 4] == pytest.approx(coins / 4)
            checked += 1
    assert checked > 200


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A tiny fit (a smoke run of the recipe): the zoo network of the standard game with an endgame network."""
    out = tmp_path_factory.mktemp("eg") / "net"
    argv = ["zoo:standard-2p", str(out), "--games", "200", "--val-games", "60", "--epochs", "2"]
    assert endgame_fit.main([*argv, "--width", "32", "--depth", "2", "--batch", "64"]) == 0
    return out


def test_the_fit_writes_a_checkpoint_that_plays_its_network_in_the_last_round_only(fitted):
    """The checkpoint keeps the start's trunk and head: before the last round it scores every move as the
    start does; in the last round (the stock empty) its endgame network scores them."""
    report = json.loads((fitted / "endgame_fit.json").read_text())
    assert [e["epoch"] for e in report["epochs"]] == [1, 2] and report["epochs"][-1]["val_regret"] >= 0
    meta = json.loads((fitted / "meta.json").read_text())
    assert meta["endgame"]["version"] == ENDGAME_VERSION and meta["endgame"]["arch"] == [32, 32]
    net, _ = load_dmc(fitted)
    start, _ = load_dmc(checked_path("standard-2p"))
    assert net.endgame is not None and start.endgame is None
    agent = load_dmc_agent(str(fitted))
    stock = SLICES["stock"].start
    seen = {True: 0, False: 0}
    for obs, rows, ids in last_round_positions(hands=20, seed=9):
        feats = agent.features(obs, rows, ids, np.zeros(len(ids)))
        last = obs[rows, stock] == 0
        mine, theirs = net.move_scores(obs, rows, ids, feats), start.move_scores(obs, rows, ids, feats)
        assert np.array_equal(mine[~last], theirs[~last])
        assert not last.any() or not np.allclose(mine[last], theirs[last])
        seen[True] += int(last.any())
        seen[False] += int((~last).any())
    assert seen[True] and seen[False]


def test_regret_is_the_gap_to_the_best_move_per_position():
    """The validation regret: per position, the exact value of the best move less that of the top-scored one
    (ties: the first)."""
    y = np.array([1.0, 3.0, 2.0, 0.0, 0.0])
    rows = np.array([0, 0, 0, 1, 1])
    assert endgame_fit.regret(np.array([5.0, 1.0, 2.0, 1.0, 1.0]), y, rows) == (1.0, 0.5)
    assert endgame_fit.regret(np.array([0.0, 9.0, 2.0, 1.0, 1.0]), y, rows) == (0.0, 1.0)


def corrupt(fitted, tmp_path, edit_meta=None, edit_weights=None):
    bad = tmp_path / "bad"
    shutil.copytree(fitted, bad)
    if edit_meta:
        meta = json.loads((bad / "meta.json").read_text())
        edit_meta(meta)
        (bad / "meta.json").write_text(json.dumps(meta))
    if edit_weights:
        with np.load(bad / "weights.npz") as z:
            arrays = dict(z)
        edit_weights(arrays)
        np.savez(bad / "weights.npz", **arrays)
    return bad


@pytest.mark.parametrize(
    ("edit_meta", "edit_weights", "message"),
    [
        (lambda m: m["endgame"].update(version=99), None, "endgame.version is 99"),
        (lambda m: m.update(endgame=[1]), None, "endgame must be an object"),
        (lambda m: m["endgame"].update(arch=[64, 32]), None, r"endgame layers \[32, 32\] wide"),
        (lambda m: m.update(num_players=4, observation_size=None) or m.pop("observation_size"), None, "2-player game"),
        (None, lambda a: a.update({"endgame.0.weight": a["endgame.0.weight"][:, :7]}), "the layer takes 320 inputs"),
        (lambda m: m.pop("endgame"), None, "unexpected arrays"),
        (None, lambda a: [a.pop(k) for k in list(a) if k.startswith("endgame.")], "no endgame.* layers"),
    ],
)
def test_a_bad_endgame_network_is_refused_in_one_line(fitted, tmp_path, edit_meta, edit_weights, message):
    bad = corrupt(fitted, tmp_path, edit_meta, edit_weights)
    with pytest.raises(ValueError, match=message) as info:
        load_dmc(bad)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["zoo:scopone-4p-v4", "OUT"], "not a network of the standard 2-player game"),
        (["heuristic", "OUT"], "dmc:PATH or zoo:NAME"),
        (["zoo:standard-2p", "OUT", "--games", "0"], "must be positive"),
        (["zoo:standard-2p", "OUT", "--lr", "0"], "--lr must be positive"),
    ],
)
def test_bad_fit_arguments_are_one_line(tmp_path, argv, message):
    argv = [str(tmp_path / a) if a == "OUT" else a for a in argv]
    with pytest.raises(SystemExit, match=message):
        endgame_fit.main(argv)


def test_a_start_with_an_endgame_network_is_refused(fitted, tmp_path):
    with pytest.raises(SystemExit, match="already has an endgame network"):
        endgame_fit.main([f"dmc:{fitted}", str(tmp_path / "again"), "--games", "10"])


def test_a_zoo_entry_from_a_fit_counts_both_trainings(fitted, tmp_path, monkeypatch):
    """python -m train.zoo.make NAME OUT makes a zoo entry of a fit: its card names the start's recipe and the
    fit's command, counts the CPU-hours of both, and the entry loads with its endgame network."""
    from train import zoo
    from train.zoo import make

    start = json.loads((checked_path("standard-2p") / "card.json").read_text())
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    monkeypatch.setattr(make, "ZOO_DIR", tmp_path)
    assert make.main(["eg-test", str(fitted), "--pairs", "2"]) == 0
    card = json.loads((tmp_path / "eg-test" / "card.json").read_text())
    fit = json.loads((fitted / "endgame_fit.json").read_text())
    assert card["config"] == start["config"] and card["network"]["endgame"] == [32, 32]
    assert card["cpu_hours"] == pytest.approx(start["cpu_hours"] + fit["cpu_hours"], abs=1e-4)
    assert card["endgame"]["command"].startswith("python -m train.dmc.endgame_fit zoo:standard-2p OUT --games 200")
    assert {r["opponent"] for r in card["results"]} == {"random", "greedy", "heuristic"}
    assert zoo.load_zoo_agent("eg-test").net.endgame is not None


def test_a_fit_can_go_on_from_another_endgame_network(fitted, tmp_path, monkeypatch):
    """--init starts the MLP from a checkpoint's endgame network (its layers set the width and depth), and
    the new entry counts that network's moves and CPU-hours beside its own; so do its zoo card and page."""
    out = tmp_path / "more"
    argv = ["zoo:standard-2p", str(out), "--init", f"dmc:{fitted}", "--games", "100", "--val-games", "40"]
    assert endgame_fit.main([*argv, "--epochs", "1", "--batch", "64", "--lr", "1e-9", "--seed", "3"]) == 0
    first = json.loads((fitted / "meta.json").read_text())["endgame"]
    entry = json.loads((out / "meta.json").read_text())["endgame"]
    report = json.loads((out / "endgame_fit.json").read_text())
    assert entry["arch"] == first["arch"] == [32, 32]
    assert entry["init"]["spec"] == f"dmc:{fitted}" and entry["init"]["moves"] == first["moves"]
    assert entry["moves"] > first["moves"]
    assert entry["cpu_hours"] == pytest.approx(first["cpu_hours"] + report["fit_cpu_hours"], abs=1e-4)
    with np.load(fitted / "weights.npz") as a, np.load(out / "weights.npz") as b:
        for k in a.files:  # a learning rate of 1e-9 leaves the start where it was
            assert np.allclose(a[k], b[k], atol=1e-5), k
    from train import zoo
    from train.zoo import make, page

    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path / "zoo")
    monkeypatch.setattr(make, "ZOO_DIR", tmp_path / "zoo")
    assert make.main(["eg-more", str(out), "--pairs", "2"]) == 0
    card = json.loads((tmp_path / "zoo" / "eg-more" / "card.json").read_text())
    assert card["endgame"]["init"]["spec"] == f"dmc:{fitted}" and f"--init dmc:{fitted}" in card["endgame"]["command"]
    (line,) = page._endgame_lines(card)
    assert f"going on from `dmc:{fitted}`'s endgame network ({first['moves']:,} moves" in line


@pytest.mark.parametrize(
    ("init", "extra", "message"),
    [
        ("zoo:standard-2p", [], "has no endgame network"),
        ("FITTED", ["--width", "64"], r"is \[32, 32\] wide; leave out --width and --depth"),
        ("zoo:scopone-4p-v4", [], "not a network of the standard 2-player game"),
        ("greedy", [], "--init must be a dmc:PATH or zoo:NAME"),
    ],
)
def test_a_bad_init_is_refused_in_one_line(fitted, tmp_path, init, extra, message):
    init = f"dmc:{fitted}" if init == "FITTED" else init
    with pytest.raises(SystemExit, match=message) as info:
        endgame_fit.main(["zoo:standard-2p", str(tmp_path / "x"), "--init", init, *extra])
    assert "\n" not in str(info.value)


def test_the_labels_can_fall_on_the_positions_a_network_reaches():
    """--driver plays the labelled hands with a network instead of heuristic (DAgger's idea: label the
    positions the network itself reaches): the same deals then reach other last-round positions, every
    one still valued exactly."""
    from train.dmc.agent import load_dmc_batch_policy

    policy, _ = load_dmc_batch_policy(checked_path("standard-2p"))
    by_heuristic, by_network = (
        endgame_fit.collect(60, 5, progress=False),
        endgame_fit.collect(60, 5, progress=False, driver=policy),
    )
    assert len(by_network["y"]) > 100 and np.isfinite(by_network["y"]).all()
    assert by_network["x"].shape != by_heuristic["x"].shape or not np.array_equal(by_network["x"], by_heuristic["x"])


def test_a_bad_driver_is_refused_in_one_line(tmp_path):
    for driver, message in (("fsearch", "--driver must be random, greedy, heuristic"), ("zoo:nope", "zoo:nope")):
        with pytest.raises(SystemExit, match=message) as info:
            endgame_fit.main(["zoo:standard-2p", str(tmp_path / "x"), "--driver", driver, "--games", "10"])
        assert "\n" not in str(info.value)
