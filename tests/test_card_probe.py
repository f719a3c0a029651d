"""benchmarks/card_encoder_probe.py: the card-wise network against DMC's flat one on search labels."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from benchscripts import load_benchmark

pytest.importorskip("pyarrow")  # the data extra: the probe reads `scopa dataset` files

from agents.dataset import write_dataset  # noqa: E402
from scopa_env.bench.results import missing_fields  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def probe():
    return load_benchmark("card_encoder_probe")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("probe")
    common = dict(agent="heuristic", rules="standard", players=2)
    return (
        write_dataset(folder / "train.parquet", 2, search="fsearch:worlds=4", seed=0, **common),
        write_dataset(folder / "test.parquet", 1, search="fsearch:worlds=4", seed=1, **common),
        write_dataset(folder / "test8.parquet", 1, search="fsearch:worlds=8", seed=1, **common),
    )


def run(module, monkeypatch, capsys, *args: str) -> str:
    monkeypatch.setattr(sys, "argv", ["card_encoder_probe.py", *args])
    module.main()
    return capsys.readouterr().out


def test_the_card_network_reads_each_card_with_one_encoder(files):
    """A card's embedding depends on that card's flags and identity only (one encoder for all 40), and the
    state sees the cards as sets: the network scores every move of a position."""
    import torch

    module = probe()
    data = module.load(files[0])
    torch.manual_seed(0)
    net = module.CardQ(data["layout"], data["feats"].shape[1])
    x, y = module.tensors(data, np.arange(8))
    q = net(*x)
    assert q.shape == y.shape and torch.isfinite(q).all()
    obs = x[0].clone()
    hand = slice(*data["layout"]["hand"])
    card = int(torch.nonzero(obs[0, hand])[0, 0])  # a card in the first position's hand
    moved = obs.clone()
    moved[0, hand.start + card] = 0.0  # that card leaves the hand
    with torch.no_grad():
        _, before = net.embed(obs)
        _, after = net.embed(moved)
    others = [c for c in range(module.CARDS) if c != card]
    assert torch.equal(before[0, others], after[0, others]), "no other card's embedding moves"
    assert not torch.equal(before[0, card], after[0, card]), "the card's own embedding does"
    assert torch.equal(before[1:], after[1:]), "nor any other position's"


def test_probe_is_reproducible_and_scores_a_second_labelling(files, tmp_path, monkeypatch, capsys):
    module = probe()
    train, test, test8 = (str(f) for f in files)
    outs = []
    for k in range(2):
        out = tmp_path / f"r{k}.json"
        run(module, monkeypatch, capsys, train, test8, "--searched-again", test, "--epochs", "1", "--boot", "20",
            "--fractions", "0.5", "--json", str(out))  # fmt: skip
        found = json.loads(out.read_text())
        del found["args"]  # the output path differs
        for name in ("flat", "cards"):
            del found[name]["train_cpu_seconds"]
        outs.append(found)
    assert outs[0] == outs[1], "the same seed gives the same scores"
    found = outs[0]
    for name in ("flat", "cards", "searched_again"):
        assert 0.0 <= found[name]["agreement"] <= 1.0 and found[name]["regret"] >= 0.0
    assert set(found["fractions"]) == {"flat", "cards"} and "0.5" in found["fractions"]["flat"]
    diff = found["cards_minus_flat"]["mse"]
    assert diff["lo"] <= diff["hi"]
    # a labelling of the same games scored against itself is perfect
    run(module, monkeypatch, capsys, train, test, "--searched-again", test, "--epochs", "1", "--boot", "5",
        "--json", str(tmp_path / "self.json"), "--record", str(tmp_path / "record.json"))  # fmt: skip
    record = json.loads((tmp_path / "record.json").read_text())
    assert missing_fields(record) == [] and record["command"].startswith("python benchmarks/card_encoder_probe.py ")
    assert [(r["network"], r["share"]) for r in record["rows"][1:]] == [("flat", 1.0), ("cards", 1.0)]
    assert json.loads((tmp_path / "self.json").read_text())["searched_again"] == {
        "mse": 0.0,
        "agreement": 1.0,
        "regret": 0.0,
    }


def test_a_second_labelling_of_other_games_is_refused(files, monkeypatch, capsys):
    module = probe()
    train, test, _ = (str(f) for f in files)
    with pytest.raises(SystemExit, match="does not hold the positions"):
        run(module, monkeypatch, capsys, train, test, "--searched-again", train, "--epochs", "1")


def test_difference_loss_sees_only_each_positions_ranking():
    """``--loss differences`` fits each move's value less its position's mean: a constant added to every
    move of one position changes nothing."""
    import torch

    module = probe()
    rows = torch.tensor([0, 0, 0, 1, 1])
    values = torch.tensor([1.0, 2.0, 6.0, -1.0, 1.0])
    centred = module.position_centred(values, rows, 2)
    assert torch.allclose(centred, torch.tensor([-2.0, -1.0, 3.0, -1.0, 1.0]))
    shifted = values + torch.tensor([5.0, 5.0, 5.0, -3.0, -3.0])
    assert torch.allclose(module.position_centred(shifted, rows, 2), centred)


def exact_threats(module, table: list[int], unseen: list[int], hand: int, rules) -> np.ndarray:
    """The threat features of ``table`` by enumerating every hand of ``hand`` unseen cards, with the
    rules' own legal captures (scopa_env/engine/captures.py)."""
    from itertools import combinations

    from scopa_env.engine.captures import legal_pairs
    from scopa_env.engine.cards import RANK_OF, SETTEBELLO

    tmask = sum(1 << c for c in table)
    caps = {c: [m for _, m in legal_pairs(1 << c, tmask, rules) if m] for c in unseen}
    total = np.zeros(5)
    hands = list(combinations(unseen, hand))
    for held in hands:
        ms = [m for c in held for m in caps[c]]
        sevens_on = any(RANK_OF[c] == 7 for c in table)
        total += (
            bool(ms),
            any(m >> SETTEBELLO & 1 for m in ms),
            any(m == tmask for m in ms),
            sevens_on and any(RANK_OF[c] == 7 for c in held),
            max((m.bit_count() for m in ms), default=0) / 4,
        )
    return total / len(hands)


@pytest.mark.parametrize("preset", ["standard", "french_52"])
def test_threat_features_are_the_next_seats_chances(preset):
    """pagat-scopa.txt: "If the played card does not match the value of any single face up card, but is
    equal to the sum of the values of a set of two or more cards, the player captures that set of
    cards", and "If the played card matches both a single card and the sum of a set of cards, the
    single card must be captured, not the set." Each threat feature is the chance, over every hand the
    next seat may hold, that the rules' own captures (which the rule tests hold to those texts) do it."""
    from scopa_env.engine.cards import RANK_OF, SETTEBELLO
    from scopa_env.engine.rules import get_rules

    module = probe()
    rules = get_rules(preset)
    k = rules.num_card_ids
    ranks = np.array(RANK_OF[:k], np.int64)
    rng = np.random.default_rng(7)
    seen = set()
    for trial in range(40):
        order = [int(c) for c in rng.permutation(k)]
        table = order[: int(rng.integers(0, 5))]
        if trial % 2 and SETTEBELLO not in table:
            table = [*table[1:], SETTEBELLO]
        rest = [c for c in order if c not in table]
        unseen, hand = rest[: int(rng.integers(4, 10))], int(rng.integers(1, 4))
        after, out_of_sight = np.zeros((1, k)), np.zeros((1, k))
        after[0, table], out_of_sight[0, unseen] = 1.0, 1.0
        got = module.threat_features(after, out_of_sight, np.array([float(hand)]), ranks)[0]
        want = exact_threats(module, table, unseen, hand, rules)
        np.testing.assert_allclose(got[:5], want, atol=1e-5, err_msg=f"table {table}, unseen {unseen}, hand {hand}")
        seen.update(np.flatnonzero((want > 0) & (want < 1)).tolist())
    assert seen == set(range(5)), "every feature was met strictly between 0 and 1"


def test_the_probe_reads_the_8_player_game_and_fits_the_threats(tmp_path, monkeypatch, capsys):
    module = probe()
    common = dict(agent="heuristic", rules="french_52", players=8, search="fsearch:worlds=4")
    train = write_dataset(tmp_path / "train.parquet", 1, seed=0, **common)
    test = write_dataset(tmp_path / "test.parquet", 1, seed=1, **common)
    data = module.load(train)
    hand = data["obs"][data["rows"], slice(*data["layout"]["hand"])]
    assert ((data["kept"] == 0) | (data["kept"] == 1)).all(), "the played card was in the hand"
    np.testing.assert_array_equal(data["kept"].sum(1), hand.sum(1) - 1)
    assert (data["kept"][np.arange(len(data["card"])), data["card"]] == 0).all()
    # every other seat's threats (columns 6-11) hold the next seat's hand and more: each chance and the
    # expected cards taken are at least the next seat's, the capturing share of the unseen cards the same
    six = len(module.THREATS)
    nxt, every = data["threats"][:, :six], data["threats"][:, six:]
    assert (every[:, :5] >= nxt[:, :5] - 1e-6).all() and (every[:, :5] > nxt[:, :5] + 1e-6).any()
    np.testing.assert_allclose(every[:, 5], nxt[:, 5])
    out = tmp_path / "r.json"
    run(module, monkeypatch, capsys, str(train), str(test), "--networks", "flat,flat_threats,flat_kept,flat_all,flat_next_all",
        "--epochs", "1", "--boot", "5", "--loss", "differences", "--json", str(out))  # fmt: skip
    found = json.loads(out.read_text())
    assert found["game"] == "french_52 x 8"
    assert found["flat_threats"]["parameters"] == found["flat"]["parameters"] + 256 * six
    assert found["flat_all"]["parameters"] == found["flat"]["parameters"] + 256 * six
    assert found["flat_next_all"]["parameters"] == found["flat"]["parameters"] + 256 * 2 * six
    assert found["flat_kept"]["parameters"] == found["flat"]["parameters"] + 256 * 52
    assert 0.0 <= found["flat_threats"]["agreement"] <= 1.0 and found["flat_threats"]["regret"] >= 0.0
    with pytest.raises(SystemExit, match="40-card deck"):
        run(module, monkeypatch, capsys, str(train), str(test), "--networks", "flat,cards", "--epochs", "1")
    standard = write_dataset(tmp_path / "standard.parquet", 1, seed=1, agent="heuristic", rules="standard",
                             players=2, search="fsearch:worlds=4")  # fmt: skip
    with pytest.raises(SystemExit, match="not the training file's french_52 x 8"):
        run(module, monkeypatch, capsys, str(train), str(standard), "--epochs", "1")
