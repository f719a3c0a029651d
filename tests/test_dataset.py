"""The search-labelled dataset: written, read back and replayed (agents/dataset.py, train/dataset.py, scopa dataset)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")  # the data extra
pq = pytest.importorskip("pyarrow.parquet")

from agents.dataset import (  # noqa: E402
    FORMAT_VERSION,
    META_KEY,
    MOVE_FEATURES,
    SAMPLE_PATH,
    build_table,
    load_dataset,
    load_sample,
    move_features,
    search_agent,
    write_dataset,
)
from agents.heuristic import HeuristicAgent  # noqa: E402
from agents.matches import agent_seed, deal_seed  # noqa: E402
from scopa_app.cli import main  # noqa: E402
from scopa_env.engine.actions import move_enumeration  # noqa: E402
from scopa_env.engine.game import Game  # noqa: E402
from scopa_env.engine.observation import ObservationLayout, write_observation  # noqa: E402
from scopa_env.engine.rules import get_rules, move_of  # noqa: E402

TINY = dict(agent="heuristic", search="fsearch:worlds=4", rules="standard", players=2, seed=3)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("ds") / "tiny.parquet"
    write_dataset(path, 2, **TINY)
    return path


def test_round_trip_matches_a_replay(tiny):
    """Every row read back is the position a replay of its game reaches: the observation, the legal
    moves (ids decode to the pairs), the features, the search values (same seeds), the played move
    and the hand's margin for the mover's side."""
    data = load_dataset(tiny)
    b = data.batch()
    rules = get_rules("standard")
    layout = ObservationLayout.for_rules(2, rules)
    enum = move_enumeration(rules)
    scorer = HeuristicAgent(seed=0)
    r = 0
    for g in range(2):
        game = Game(2, rules, seed=deal_seed(3, g), auto_next_hand=False)
        search = search_agent("fsearch:worlds=4")
        search.reset(agent_seed(3, g, 1, 0))
        assert int(b["deal_seed"][r]) == deal_seed(3, g), "deal_seed column"
        while True:
            hand_start = r
            while not game.hand_over:
                seat = game.current
                view = game.view(seat)
                pairs = view.legal_pairs()
                n = len(pairs)
                assert (b["game"][r], b["hand"][r], b["seat"][r]) == (g, game.hand_number, seat), f"row {r}"
                assert b["num_moves"][r] == n and b["move_mask"][r].sum() == n, f"row {r}: move count"
                obs = write_observation(game, seat, layout, np.empty(layout.size, np.float32))
                np.testing.assert_array_equal(b["obs"][r], obs, err_msg=f"row {r}: observation")
                got = list(zip(b["move_card"][r, :n].tolist(), b["move_captured"][r, :n].tolist(), strict=True))
                assert got == pairs, f"row {r}: legal pairs"
                assert [enum.pair(int(a), view.table) for a in b["move_id"][r, :n]] == pairs, f"row {r}: move ids"
                values, exact = search.move_values(view)
                np.testing.assert_allclose(b["search_value"][r, :n], values, rtol=1e-6, err_msg=f"row {r}: values")
                assert b["search_exact"][r] == exact, f"row {r}: exact flag"
                feats = move_features(view, pairs, scorer.scores(view, pairs))
                np.testing.assert_array_equal(b["move_features"][r, :n], feats, err_msg=f"row {r}: features")
                assert not b["move_mask"][r, n:].any() and (b["move_id"][r, n:] == -1).all(), f"row {r}: padding"
                game.play(move_of(*pairs[b["played"][r]]))
                r += 1
            score = game.hand_result.hand_score
            for k in range(hand_start, r):
                side = b["side"][k]
                want = score[side]["total"] - score[1 - side]["total"]
                assert b["outcome"][k] == want, f"row {k}: the hand's margin for side {side}"
            if game.winner is not None:
                break
            game.next_hand()
    assert r == len(data), "every row is a decision of the replayed games"


def test_same_seed_same_file_other_seed_other_table(tiny, tmp_path):
    again = write_dataset(tmp_path / "again.parquet", 2, **TINY)
    assert again.read_bytes() == tiny.read_bytes(), "the same arguments write the same bytes"
    other = build_table(1, **{**TINY, "seed": 4})
    assert not other.equals(pq.read_table(tiny).slice(0, other.num_rows)), "another seed deals other games"


def test_metadata_and_schema(tiny):
    data = load_dataset(tiny)
    meta = data.meta
    assert meta["format_version"] == FORMAT_VERSION and meta["games"] == 2, meta
    assert (meta["rules"], meta["players"], meta["agent"], meta["search"], meta["seed"]) == (
        "standard",
        2,
        "heuristic",
        "fsearch:worlds=4",
        3,
    ), meta
    assert meta["move_features"] == [name for name, _ in MOVE_FEATURES], "feature names in the metadata"
    layout = ObservationLayout.for_rules(2, get_rules("standard"))
    assert meta["obs_layout"] == {k: [s.start, s.stop] for k, s in layout.slices.items()}, "observation layout"
    assert data.table.schema.field("obs").type.list_size == layout.size, "observation width"


def test_batches_cover_every_row_once(tiny):
    data = load_dataset(tiny)
    seen = []
    for batch in data.batches(batch_size=50, shuffle=True, seed=1):
        assert batch["move_features"].shape[:2] == batch["move_mask"].shape, "features padded like the mask"
        assert batch["move_mask"].shape[1] == batch["num_moves"].max(), "padded to the widest position"
        seen.extend(zip(batch["game"].tolist(), batch["hand"].tolist(), batch["ply"].tolist(), strict=True))
    assert sorted(seen) == sorted(set(seen)) and len(seen) == len(data), "each position once"
    full = data.batch(width=20)
    assert full["search_value"].shape == (len(data), 20), "a fixed width"
    with pytest.raises(ValueError, match="narrower"):
        data.batch(width=1)


def test_the_search_can_play(tmp_path):
    """With the search spec as the agent, the search plays its best-valued move."""
    table = build_table(1, **{**TINY, "agent": "fsearch:worlds=4"})
    from agents.dataset import PositionDataset

    b = PositionDataset(table, {}).batch()
    values = np.where(b["move_mask"], b["search_value"], -np.inf)
    np.testing.assert_array_equal(b["played"], values.argmax(axis=1), err_msg="the best value is played")


def test_torch_batches_match_numpy(tiny):
    torch = pytest.importorskip("torch")
    from train.dataset import torch_batches

    data = load_dataset(tiny)
    for nb, tb in zip(data.batches(64), torch_batches(tiny, 64), strict=True):
        assert set(nb) == set(tb), "the same keys"
        for k in nb:
            assert isinstance(tb[k], torch.Tensor), k
            want = nb[k].view(np.int64) if nb[k].dtype == np.uint64 else nb[k]
            np.testing.assert_array_equal(tb[k].numpy(), want, err_msg=k)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"games": 0}, r"games must be an int in \[1"),
        ({"agent": "nobody"}, "unknown agent 'nobody'"),
        ({"search": "greedy"}, "must be an fsearch spec"),
        ({"search": "fsearch:time_limit=0.1"}, "time_limit"),
        ({"rules": "chkobba"}, "cannot label rules 'chkobba'"),
        ({"players": 5}, "num_players"),
        ({"seed": -1}, "seed must be"),
    ],
)
def test_bad_options_are_refused(options, match):
    games = options.pop("games", 1)
    with pytest.raises(ValueError, match=match):
        build_table(games, **{**TINY, **options})


def test_bad_files_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no dataset file"):
        load_dataset(tmp_path / "missing.parquet")
    (tmp_path / "text.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="not a Parquet file"):
        load_dataset(tmp_path / "text.parquet")
    plain = pa.table({"a": [1]})
    pq.write_table(plain, tmp_path / "plain.parquet")
    with pytest.raises(ValueError, match="not a scopa dataset"):
        load_dataset(tmp_path / "plain.parquet")
    meta = json.dumps({"format_version": FORMAT_VERSION + 1}).encode()
    pq.write_table(plain.replace_schema_metadata({META_KEY: meta}), tmp_path / "future.parquet")
    with pytest.raises(ValueError, match="format version"):
        load_dataset(tmp_path / "future.parquet")


def test_command_writes_and_refuses_in_one_line(tmp_path, capsys):
    out = tmp_path / "cli.parquet"
    argv = ["dataset", "--games", "1", "--search", "fsearch:worlds=2", "--seed", "5", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    assert load_dataset(out).meta["seed"] == 5 and "wrote" in capsys.readouterr().out, "the file and its line"
    for extra, message in [
        (["--out", str(tmp_path / "nowhere" / "x.parquet")], "does not exist"),
        (["--out", str(tmp_path)], "is a folder"),
        (["--out", str(out), "--agent", "nobody"], "unknown agent"),
        (["--out", str(out), "--rules", "scopa_bazzica"], "cannot label rules"),
    ]:
        assert main([*argv, *extra]) == 2, extra
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith("scopa dataset: error:") and message in err, err
    assert main([*argv[:2], "0", *argv[3:], "--out", str(out)]) == 2, "--games 0"
    assert "--games must be in" in capsys.readouterr().err


def test_shipped_sample():
    """The sample in agents/data/ is the one docs/datasets.md's command writes (its metadata says so)."""
    assert SAMPLE_PATH.stat().st_size < 5_000_000, "a few MB at most"
    data = load_sample()
    assert (data.meta["rules"], data.meta["players"], data.meta["games"]) == ("standard", 2, 200), data.meta
    assert (data.meta["agent"], data.meta["search"], data.meta["seed"]) == ("heuristic", "fsearch:worlds=16", 0)
    first = build_table(1, agent="heuristic", search="fsearch:worlds=16", rules="standard", players=2, seed=0)
    assert data.table.slice(0, first.num_rows).equals(first), "its first game is what the command writes"
    assert data.table.column("game")[first.num_rows].as_py() == 1, "and nothing more of it"
