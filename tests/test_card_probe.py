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
