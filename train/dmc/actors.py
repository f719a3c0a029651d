"""The actors of the deep Monte-Carlo learner (:mod:`train.dmc`): games, samples, labels, buffers, network.

:class:`Actors` steps one batch of the compiled core (:class:`~scopa_env.fast.BatchedScopa`,
"move" mode) with a scoring function, keeps each decision until its hand's return is known,
and labels some positions with the compiled search (:class:`Labeller`); :class:`Buffer` holds
the recent samples the learner draws minibatches from; :func:`build_network` is the
``Q(state, move)`` network they score with and :func:`numpy_weights` its weights as arrays.
The learner's process uses them (:mod:`train.dmc`), and so do the Ray workers that play the
games for it with ``workers: N`` (:mod:`train.dmc.workers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from train.dmc.agent import best_of, flatten_legal, move_features
from train.dmc.config import DmcConfig

__all__ = ["RETURN_SLOTS", "Actors", "Buffer", "FrozenActors", "Labeller", "build_network", "numpy_weights"]

RETURN_SLOTS = 16
"""Hands remembered per game while their decisions wait for the return (a hand is short)."""


# --- actors ---------------------------------------------------------------------------


class Actors:
    """One batch of the compiled core and the decisions waiting for their hand's return.

    Args:
        opponent: None for self-play (every seat's decisions are samples), else the compiled
            opponents (only the learner's decisions are samples).
    """

    def __init__(self, cfg: DmcConfig, num_games: int, opponent: Any, seeds: np.ndarray, rng: np.random.Generator):
        from scopa_env.fast import BatchedScopa
        from scopa_env.fast.batch import default_legal_width

        setup = cfg.setup.with_modes(episode="game")  # "move" ids, hand-point rewards, whole games
        self.batch = BatchedScopa(
            num_games,
            opponent=opponent,
            learner_seat="random" if opponent is not None else 0,
            legal_width=max(128, default_legal_width(setup.rules)),
            setup=setup,
        )
        self.batch.reset(seeds)
        self.rng = rng
        self.features = move_features(self.batch.rules, cfg.num_players, cfg.heuristic_features)
        n = num_games
        self.serial = np.zeros(n, np.int64)  # hand number of each row
        self.returns = np.zeros((n, RETURN_SLOTS, cfg.num_players), np.float32)
        self.filled = np.full((n, RETURN_SLOTS), -1, np.int64)
        self.pending: list[tuple[np.ndarray, ...]] = []
        self.labels: list[tuple[np.ndarray, ...]] = []
        self.hands = 0

    def label(self, obs: np.ndarray, rows: np.ndarray, cols: np.ndarray, feats: np.ndarray, labeller) -> None:
        """Label every legal move of ``labeller.positions`` random games with the search's value
        (``labeller.differences``: games with a choice, each other move against the search's best;
        ``labeller.exact_only``: games the search solves exactly)."""
        from scopa_env.fast.search import search_values

        n = self.batch.num_games
        pool = np.flatnonzero(self.batch.legal_count > 1) if labeller.differences else np.arange(n)
        if labeller.exact_only:
            from scopa_env.fast.search import exact_games

            pool = pool[exact_games(self.batch, labeller.C)[pool]]
        if pool.size == 0:
            return
        games = np.sort(self.rng.choice(pool, size=min(labeller.positions, pool.size), replace=False))
        seeds = self.rng.integers(0, 2**62, len(games))
        values = search_values(self.batch, games, seeds, labeller.C, labeller.threads)
        where = np.full(n, -1, np.int64)
        where[games] = np.arange(len(games))
        sel = np.flatnonzero(where[rows] >= 0)
        target = values[where[rows[sel]], cols[sel]].astype(np.float32)
        if not labeller.differences:
            self.labels.append((obs[rows[sel]], feats[sel], target))
            return
        # each game's best move by the search (ties: the lowest column), then one pair (best, other) with
        # the value gap for every other legal move of the game
        g = rows[sel]
        order = np.lexsort((-target, g))
        first = order[np.r_[True, g[order][1:] != g[order][:-1]]]
        best = np.full(n, -1, np.int64)
        best[g[first]] = first
        other = np.flatnonzero(np.arange(len(sel)) != best[g])
        b = best[g[other]]
        f = feats[sel]
        self.labels.append((obs[g[other]], f[b], target[b] - target[other], f[other]))

    def take_labels(self) -> tuple[np.ndarray, ...] | None:
        """The labels made since the last call (``(obs, move features, value)``; with differences
        ``(obs, best move's features, value gap, other move's features)``), or None."""
        if not self.labels:
            return None
        out = tuple(np.concatenate(x) for x in zip(*self.labels))
        self.labels = []
        return out

    def act(self, score_fn, epsilon: float, teacher: str, teacher_share: float, labeller=None) -> None:
        """One step of every game: pick moves, remember the samples, (label some), step, note hand returns."""
        b = self.batch
        obs = b.obs.copy()
        rows, cols, ids = flatten_legal(b.legal_ids, b.legal_count)
        h = None
        if self.features.heuristic:
            from scopa_env.fast.features import heuristic_move_scores

            h = heuristic_move_scores(b)[rows, cols]
        feats = self.features(obs, rows, ids, h)
        if labeller is not None and labeller.positions > 0:
            self.label(obs, rows, cols, feats, labeller)
        q = score_fn(obs, rows, feats)
        choice = best_of(q, rows, cols, b.legal_ids.shape)
        n = b.num_games
        explore = self.rng.random(n) < epsilon
        if explore.any():
            choice[explore] = (self.rng.random(int(explore.sum())) * b.legal_count[explore]).astype(np.int64)
        actions = b.legal_ids[np.arange(n), choice]
        if teacher and teacher_share > 0:
            from train.fast_eval import compiled_move_ids

            taught = (self.rng.random(n) < teacher_share) & ~explore
            if taught.any():
                actions = np.where(taught, compiled_move_ids(b, teacher), actions)
        # the chosen move's features: its row in the flattened list
        start = np.concatenate([[0], np.cumsum(b.legal_count)[:-1]])
        picked = start + np.argmax(b.legal_ids == actions[:, None], axis=1)
        self.pending.append((obs, feats[picked], np.arange(n), b.to_play.copy(), self.serial.copy()))
        self.step(actions)

    def step(self, actions: np.ndarray) -> None:
        """Play ``actions`` in every game and note the returns of the hands that ended."""
        b = self.batch
        b.step(actions)
        ended = np.flatnonzero(b.hand_ended)
        if ended.size:
            slot = self.serial[ended] % RETURN_SLOTS
            self.returns[ended, slot] = b.rewards[ended]
            self.filled[ended, slot] = self.serial[ended]
            self.serial[ended] += 1
            self.hands += ended.size

    def collect(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(obs, move features, return)`` of every decision whose hand has ended; the rest wait."""
        if not self.pending:
            return _empty(self.batch.layout.size, self.features.size)
        obs, feats, rows, seats, serial = (np.concatenate(x) for x in zip(*self.pending))
        slot = serial % RETURN_SLOTS
        done = self.filled[rows, slot] == serial
        ret = self.returns[rows[done], slot[done], seats[done]]
        keep = ~done
        self.pending = [(obs[keep], feats[keep], rows[keep], seats[keep], serial[keep])] if keep.any() else []
        return obs[done], feats[done], ret


class FrozenActors(Actors):
    """Actor games against a frozen agent that plays from Python between the core's steps.

    The core plays no seat: in every step the learner moves in the games where a seat of its side is
    to play (row ``i`` holds side ``i % sides``, so every side is played equally often; in a partnership
    game both partners' seats, as in the evaluation) and the frozen agent
    (:func:`train.fast_eval.side_moves`: a compiled player, an ``fsearch`` spec searched only where it
    is to play, or a batch policy) in the others; only the learner's decisions are samples. A DMC run
    whose ``opponents`` is an ``fsearch`` spec plays its opponent games here, as does the
    exploitability proxy (:mod:`train.dmc.exploit`).
    """

    def __init__(
        self,
        cfg: DmcConfig,
        num_games: int,
        player,
        seeds: np.ndarray,
        rng: np.random.Generator,
        threads: int | None = None,
    ):
        super().__init__(cfg, num_games, None, seeds, rng)
        self.player = player
        self.threads = threads
        """Threads of a searching player (None: every core; its moves do not depend on it)."""
        self.sides = self.batch.rules.num_sides(cfg.num_players)
        self.side = np.arange(num_games) % self.sides
        self.search_rng = np.random.default_rng(rng.integers(0, 2**62))

    def act(self, score_fn, epsilon: float, teacher: str, teacher_share: float, labeller=None) -> None:
        from train.fast_eval import side_moves

        if (teacher and teacher_share > 0) or labeller is not None:
            raise ValueError("FrozenActors play without a teacher and without search labels")
        b = self.batch
        mine = b.to_play % self.sides == self.side
        actions = np.zeros(b.num_games, np.int64)
        if not mine.all():
            actions[~mine] = side_moves(b, self.player, ~mine, self.search_rng, self.threads)[~mine]
        games = np.flatnonzero(mine)
        if games.size:
            obs = b.obs[games].copy()
            legal_ids, count = b.legal_ids[games], b.legal_count[games]
            rows, cols, ids = flatten_legal(legal_ids, count)
            h = None
            if self.features.heuristic:
                from scopa_env.fast.features import heuristic_move_scores

                h = heuristic_move_scores(b)[games[rows], cols]
            feats = self.features(obs, rows, ids, h)
            choice = best_of(score_fn(obs, rows, feats), rows, cols, legal_ids.shape)
            explore = self.rng.random(games.size) < epsilon
            if explore.any():
                choice[explore] = (self.rng.random(int(explore.sum())) * count[explore]).astype(np.int64)
            actions[games] = legal_ids[np.arange(games.size), choice]
            start = np.concatenate([[0], np.cumsum(count)[:-1]])
            self.pending.append((obs, feats[start + choice], games, b.to_play[games].copy(), self.serial[games].copy()))
        self.step(actions)


def _empty(obs_size: int, feat_size: int):
    return np.zeros((0, obs_size), np.float32), np.zeros((0, feat_size), np.float32), np.zeros(0, np.float32)


class Buffer:
    """The most recent ``capacity`` samples (a ring), drawn uniformly for minibatches."""

    def __init__(self, capacity: int, obs_size: int, feat_size: int, pairs: bool = False) -> None:
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.feats = np.zeros((capacity, feat_size), np.float32)
        self.ret = np.zeros(capacity, np.float32)
        self.other = np.zeros((capacity, feat_size), np.float32) if pairs else None
        """With ``pairs``: the second move of each sample (``ret`` is then the value gap)."""
        self.capacity, self.size, self.pos = capacity, 0, 0

    def add(self, obs: np.ndarray, feats: np.ndarray, ret: np.ndarray, other: np.ndarray | None = None) -> None:
        for start in range(0, len(ret), self.capacity):
            end = start + self.capacity
            r = ret[start:end]
            idx = (self.pos + np.arange(len(r))) % self.capacity
            self.obs[idx], self.feats[idx], self.ret[idx] = obs[start:end], feats[start:end], r
            if self.other is not None:
                self.other[idx] = other[start:end]
            self.pos = int((self.pos + len(r)) % self.capacity)
            self.size = min(self.capacity, self.size + len(r))


@dataclass
class Labeller:
    """What one actor batch labels per step: ``positions`` games, searched with settings ``C``."""

    positions: int
    C: np.ndarray
    threads: int
    differences: bool = False
    exact_only: bool = False


# --- the network ---------------------------------------------------------------------------


def build_network(obs_size: int, feat_size: int, trunk: list[int], head: list[int]):
    """``Q(obs, move)``: a state trunk, then a head over (trunk output, move features)."""
    import torch
    from torch import nn

    class QNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            sizes = [obs_size, *trunk]
            self.trunk = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
            sizes = [trunk[-1] + feat_size, *head, 1]
            self.head = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

        def forward(self, obs: torch.Tensor, rows: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
            h = obs
            for layer in self.trunk:
                h = torch.relu(layer(h))
            x = torch.cat([h[rows], feats], dim=1)
            for k, layer in enumerate(self.head):
                x = layer(x)
                if k < len(self.head) - 1:
                    x = torch.relu(x)
            return x.squeeze(-1)

    return QNet()


def numpy_weights(net) -> dict[str, np.ndarray]:
    """The network's weights as float32 numpy arrays (what `weights.npz` holds and the play-time net loads)."""
    return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}
