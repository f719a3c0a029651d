"""The DMC learner's move features, compiled (:func:`scopa_env.fast.features.move_feature_rows`),
held equal to the numpy version the shipped networks were trained on (kept here as the oracle).

The sweep threat reads the standard capture rule of pagat.com's Scopa page (pagat-scopa.txt):
"a card played can capture ... a set of two or more cards whose values add up to the value of the
card played", and "if a player captures all the cards from the table, this is called a scopa".
"""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.engine.cards import RANK_OF
from scopa_env.fast import BatchedScopa
from scopa_env.fast.features import heuristic_move_scores
from train.dmc.agent import flatten_legal, move_features


def finite_scores(h_scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    bad = ~np.isfinite(h_scores)
    if not bad.any():
        return h_scores
    low = np.full(int(rows.max(initial=-1)) + 1, np.inf)
    np.minimum.at(low, rows[~bad], h_scores[~bad])
    low = np.where(np.isfinite(low), low, 1.0)
    return np.where(bad, low[rows] - 1.0, h_scores)


def numpy_features(f, obs, rows, ids, h_scores=None) -> np.ndarray:
    """The numpy implementation of train/dmc/agent.py's MoveFeatures (feature version 2), verbatim."""
    k = f.num_cards
    n = len(f.card)
    captured_all = ((f.mask[:, None] >> np.arange(k, dtype=np.int64)) & 1).astype(np.float32)
    card_onehot = np.zeros((n, k), np.float32)
    card_onehot[np.arange(n), f.card] = 1.0
    ranks = np.array(RANK_OF[:k], np.int64)
    rank_onehot = np.zeros((k, f.max_rank + 1), np.float32)
    rank_onehot[np.arange(k), ranks] = 1.0
    table = obs[rows, f.table_slice]
    captured = captured_all[ids]
    take_all = f.take_all[ids]
    if take_all.any():
        captured = captured.copy()
        captured[take_all] = table[take_all]
    card = card_onehot[ids]
    trail = ~captured.any(axis=1)
    after = np.where(trail[:, None], table + card, table - captured)
    n_after = after.sum(axis=1)
    out = np.empty((len(ids), f.size), np.float32)
    out[:, :k] = card
    out[:, k : 2 * k] = captured
    out[:, 2 * k : 3 * k] = after
    out[:, 3 * k] = captured.sum(axis=1) / 10.0
    out[:, 3 * k + 1] = (~trail) & (n_after == 0)
    out[:, 3 * k + 2] = after @ f.rank / 40.0
    out[:, 3 * k + 3] = n_after / 10.0
    sweep_rank = np.rint(after @ f.rank).astype(np.int64)
    sweep_rank[(n_after == 0) | (sweep_rank > f.max_rank)] = 0
    unseen = obs[rows, f.unseen_slice]
    by_rank = unseen @ rank_onehot
    k_threat = np.where(sweep_rank > 0, by_rank[np.arange(len(ids)), sweep_rank], 0.0)
    out[:, 3 * k + 4] = k_threat / 4.0
    total = unseen.sum(axis=1)
    held = np.rint(obs[rows, f.next_hand] * f.hand_size)
    miss = np.ones(len(ids), np.float64)
    for i in range(int(held.max(initial=0))):
        live = i < held
        denom = np.maximum(total - i, 1.0)
        miss = np.where(live, miss * np.clip(total - k_threat - i, 0.0, None) / denom, miss)
    out[:, 3 * k + 5] = np.where(k_threat > 0, 1.0 - miss, 0.0)
    if f.heuristic:
        h_scores = finite_scores(h_scores, rows)
        best = np.full(int(rows.max(initial=-1)) + 1, -np.inf)
        np.maximum.at(best, rows, h_scores)
        gap = h_scores - best[rows]
        out[:, 3 * k + 6] = h_scores / 10.0
        out[:, 3 * k + 7] = gap / 10.0
        out[:, 3 * k + 8] = gap >= -1e-9
    return out


GAMES = [("standard", 2), ("scopone_scientifico", 4), ("scopone", 4), ("cirulla", 2), ("escoba", 2), ("french_52", 8)]


@pytest.mark.parametrize(("rules_name", "num_players"), GAMES, ids=[f"{r}-{n}p" for r, n in GAMES])
def test_compiled_move_features_are_the_numpy_ones(rules_name, num_players):
    """Over random whole games of each family, every legal move's features are the numpy version's,
    bit for bit, with and without the heuristic's scores (which include its -inf on Cirulla's passes)."""
    n = 64
    batch = BatchedScopa(n, num_players, rules_name, action_mode="move", episode="game")
    batch.reset(np.arange(n))
    plain = move_features(batch.rules, num_players)
    with_h = move_features(batch.rules, num_players, heuristic=True)
    rng = np.random.default_rng(1)
    sweeps = threats = 0
    for _ in range(40):
        rows, cols, ids = flatten_legal(batch.legal_ids, batch.legal_count)
        obs = batch.obs.copy()
        got = plain(obs, rows, ids)
        np.testing.assert_array_equal(got, numpy_features(plain, obs, rows, ids))
        h = heuristic_move_scores(batch)[rows, cols]
        np.testing.assert_array_equal(with_h(obs, rows, ids, h), numpy_features(with_h, obs, rows, ids, h))
        k = plain.num_cards
        sweeps += int(got[:, 3 * k + 1].sum())
        threats += int((got[:, 3 * k + 5] > 0).sum())
        pick = (rng.random(n) * batch.legal_count).astype(np.int64)
        batch.step(batch.legal_ids[np.arange(n), pick])
    assert sweeps > 0 and threats > 0  # the games met sweeps and sweep threats


def test_heuristic_features_need_the_scores():
    feats = move_features(BatchedScopa(1, 2, "standard", action_mode="move").rules, 2, heuristic=True)
    with pytest.raises(ValueError, match="heuristic's scores"):
        feats(np.zeros((1, 10), np.float32), np.zeros(1, np.int64), np.zeros(1, np.int64))
