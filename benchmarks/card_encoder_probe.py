"""Does a card-wise encoder, or a move feature, fit the search's move values better than DMC's flat network? A supervised probe.

    scopa dataset --games 800 --out runs/probe/train.parquet --search fsearch:worlds=64 --seed 0
    scopa dataset --games 200 --out runs/probe/test.parquet --search fsearch:worlds=64 --seed 1
    scopa dataset --games 200 --out runs/probe/test256.parquet --search fsearch:worlds=256 --seed 1
    python benchmarks/card_encoder_probe.py runs/probe/train.parquet runs/probe/test256.parquet \
        --searched-again runs/probe/test.parquet --epochs 10 --fractions 0.25,0.5

The networks regress every legal move's search value (the labels of ``scopa dataset``, docs/datasets.md:
the mean hand-point margin after the move over the search's worlds) from the mover's observation and
the move, with the same loss, optimiser, batches and epochs, and are scored on the held-out games:

* ``flat``: the DMC learner's network (:mod:`train.dmc`, ``configs/dmc_expert.yaml``): a 512-unit trunk
  on the flat observation, a 256-256 head on (trunk, the move's features of :class:`train.dmc.agent.MoveFeatures`
  with the heuristic's three);
* ``cards``: the observation read card by card (a network that sees the cards as a set):
  every card gets its flags in the card planes (hand, table, own pile, other piles, played by each
  seat, unseen) with its rank and suit, one shared MLP embeds each card, the state is the sum of the
  embeddings in each plane (a set per plane, Deep Sets: Zaheer et al. 2017) with the non-card
  entries, and a move is the embedding of its card, the sums over its captured cards and over the
  table it leaves, with the same scalar features as ``flat``;
* ``flat_wide`` (``--networks flat,flat_wide``): ``flat`` with a 1024-unit trunk and a 512-512 head (is
  the capacity the bound?);
* ``flat_threats`` (``--networks flat,flat_threats``): ``flat`` with six more move features, the next
  seat's threats on the table the move leaves (:func:`threat_features`: the chance it can capture, take
  the settebello, sweep, take a seven, the cards its best capture takes): issue 48's first lever, "move
  features that state what a one-ply search would find", tried here before it goes into the learners;
* ``flat_kept`` (``--networks flat,flat_kept``): ``flat`` with the cards the mover keeps after the move
  (its hand less the played card, one 0/1 per card id) among the move features, so that the head sees
  which card is left for later without working it out from the trunk's output; ``flat_both``: the
  threats and the kept cards;
* ``flat_all`` (``--networks flat,flat_all``): ``flat`` with the same six features over every other
  seat at once (:func:`threat_features` with the hand of all of them together: what some opponent may
  take from the table the move leaves before the mover plays again, the table's changes in between
  left out); ``flat_next_all``: the next seat's six and these six.

The 52-card game for 8 players, with the 256-world search as labeller and 1,024 worlds held out::

    scopa dataset --games 240 --players 8 --rules french_52 --search fsearch --seed 0 --out runs/probe52/train.parquet
    scopa dataset --games 40 --players 8 --rules french_52 --search fsearch:worlds=1024 --seed 1 \
        --out runs/probe52/test1024.parquet
    scopa dataset --games 40 --players 8 --rules french_52 --search fsearch --seed 1 --out runs/probe52/test256.parquet
    python benchmarks/card_encoder_probe.py runs/probe52/train.parquet runs/probe52/test1024.parquet \
        --searched-again runs/probe52/test256.parquet --networks flat,flat_threats --loss differences

The training labels are those of the DMC recipe's labelling search (``fsearch:worlds=64``); the held-out
games are labelled by a search of 256 worlds, closer to what the labels estimate, and the same games
labelled with 64 worlds (``--searched-again``) are scored too: how well the labelling search itself
ranks the moves, the level a network fitted to its labels would reach with no error of its own.
``--fractions`` fits both networks on shares of the training games too (is the data the bound?).

Scores: the mean squared error over moves, the share of positions (two moves or more) where the
network's best move is the search's, and the regret (the search's value of its best move minus that
of the network's, points per hand). A 95% interval on each difference comes from a bootstrap over the held-out games.
The datasets' game (rules and players) is read from the files, which must agree; the card-wise
network reads the 40-card deck only. This is a probe for the DMC recipe's next network, not a general tool.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.dataset import load_dataset
from scopa_env.bench.results import load_average, result_record, write_record
from scopa_env.engine.cards import RANK_OF, SETTEBELLO, SUIT_OF
from scopa_env.engine.rules import get_rules
from train.dmc.agent import MoveFeatures

CARDS = 40
"""The card-wise network's deck (the flat ones read the dataset's: 52 wide in ``french_52``)."""
NAMES = {
    "cards": "the card-wise network",
    "flat_wide": "a wider flat network",
    "flat_threats": "the flat network with the next seat's threats",
    "flat_kept": "the flat network with the cards the mover keeps",
    "flat_both": "the flat network with the threats and the kept cards",
    "flat_all": "the flat network with every other seat's threats",
    "flat_next_all": "the flat network with the next seat's and every other seat's threats",
}
TITLES = {
    "cards": "Card-wise network",
    "flat_wide": "Wider flat network",
    "flat_threats": "Threat features",
    "flat_kept": "Kept-card features",
    "flat_both": "Threat and kept-card features",
    "flat_all": "every other seat's threats",
    "flat_next_all": "both threat sets",
}
THREATS = ("p_capture", "p_settebello", "p_sweep", "p_seven", "e_cards", "capturing_share")
"""The next seat's threats after each move (:func:`threat_features`), a candidate for the learners' move features."""


def _none_held(unseen: np.ndarray, held: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """The chance that a hand of ``hand`` cards drawn from ``unseen`` cards holds none of ``held`` of them
    (hypergeometric: ``C(unseen - held, hand) / C(unseen, hand)``), elementwise."""
    out = np.ones(unseen.shape, np.float64)
    for i in range(int(hand.max(initial=0))):
        live = i < hand
        num = np.maximum(unseen - held - i, 0)
        den = np.maximum(unseen - i, 1)
        out = np.where(live, out * num / den, out)
    return out


def threat_features(after: np.ndarray, unseen: np.ndarray, next_hand: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """float32 ``(M, len(THREATS))``: what the next seat may take from the table a move leaves.

    ``after``: the table after each move (``(M, k)`` 0/1 over the deck's card ids), ``unseen``: the
    mover's unseen cards (``(M, k)``), ``next_hand``: the next seat's hand size, ``ranks``: each card
    id's rank. A card of rank r takes the table's cards of rank r (one of them), or else a set summing
    to r (the standard capture rule; the largest such set is counted). Over the unseen cards and the
    next seat's hand size (hypergeometric, every unseen card equally likely in that hand), the columns
    are the chance that the next seat can capture at all, take the settebello, sweep the table, take a
    seven, the expected number of cards its best capture takes (/ 4) and the share of the unseen cards
    that capture.

    A prototype for the probe: its subset sums restate the standard capture rule, which
    ``tests/test_card_probe.py`` holds to the engine's captures. The learners' version belongs in the
    compiled core's move features (``scopa_env/fast/features.py``), reading the core's own captures.
    """
    m, k = after.shape
    top = int(ranks.max())
    onehot = np.zeros((k, top + 1), np.float64)
    onehot[np.arange(k), ranks] = 1.0
    on_table = after @ onehot  # (M, top + 1): table cards per rank
    out_of_sight = unseen @ onehot
    table_sum = after @ ranks.astype(np.float64)
    table_n = after.sum(1)
    full = (1 << (top + 1)) - 1
    # Subset sums of the table (bit s: some set of table cards sums to s), with and without the settebello;
    # most cards a set of each sum takes (-1: none).
    reach = np.ones(m, np.int64)
    reach_wo7 = np.ones(m, np.int64)
    most = np.full((m, top + 1), -1, np.int64)
    most[:, 0] = 0
    for c in range(k):
        has = after[:, c] > 0.5
        if not has.any():
            continue
        r = int(ranks[c])
        reach = np.where(has, reach | ((reach << r) & full), reach)
        if c != SETTEBELLO:
            reach_wo7 = np.where(has, reach_wo7 | ((reach_wo7 << r) & full), reach_wo7)
        shifted = np.where(most[:, : top + 1 - r] >= 0, most[:, : top + 1 - r] + 1, -1)
        most[:, r:] = np.where(has[:, None], np.maximum(most[:, r:], shifted), most[:, r:])
    seven_on = after[:, SETTEBELLO] > 0.5 if SETTEBELLO < k else np.zeros(m, bool)
    capture = np.zeros((m, top + 1), bool)
    sweep = np.zeros((m, top + 1), bool)
    settebello = np.zeros((m, top + 1), bool)
    taken = np.zeros((m, top + 1), np.float64)
    for r in range(1, top + 1):
        single = on_table[:, r] > 0
        by_sum = ~single & ((reach >> r) & 1).astype(bool)
        capture[:, r] = single | by_sum
        sweep[:, r] = (single & (table_n == 1)) | (~single & (table_sum == r) & (table_n > 0))
        taken[:, r] = np.where(single, 1.0, np.where(by_sum, most[:, r], 0.0))
        if r == 7:
            settebello[:, r] = seven_on
        elif r > 7:
            settebello[:, r] = seven_on & ~single & ((reach_wo7 >> (r - 7)) & 1).astype(bool)
    pool = unseen.sum(1)
    hand = np.maximum(np.rint(next_hand), 0).astype(np.int64)

    def chance(ranks_taking: np.ndarray) -> np.ndarray:
        return 1.0 - _none_held(pool, (out_of_sight * ranks_taking).sum(1), hand)

    e_cards = np.zeros(m)
    for v in range(1, int(taken.max(initial=0)) + 1):
        e_cards += chance(taken >= v)
    seven = np.zeros((m, top + 1), bool)
    seven[:, 7] = on_table[:, 7] > 0
    cols = (
        chance(capture),
        chance(settebello),
        chance(sweep),
        chance(seven),
        e_cards / 4,
        (out_of_sight * capture).sum(1) / np.maximum(pool, 1),
    )
    return np.stack(cols, axis=1).astype(np.float32)


PLANES = ("hand", "table", "own_pile", "other_piles", "played", "unseen")
"""The card planes a card's flags come from (``played`` is one plane per seat)."""


def load(path: str | Path) -> dict[str, np.ndarray]:
    """A dataset file as flat arrays: one row per position (obs) and per legal move (rows into obs)."""
    data = load_dataset(path)
    meta = data.meta
    rules = get_rules(meta["rules"])
    k = rules.num_card_ids
    b = data.batch()
    mask = b["move_mask"]
    rows = np.nonzero(mask)[0]
    features = MoveFeatures(rules, meta["players"])
    ids = b["move_id"][mask]
    h = b["move_features"][mask][:, -3:]  # h_score, h_gap, h_top: the heuristic's three, as DMC's
    base = features(b["obs"], rows, ids)
    feats = np.concatenate([base, h], axis=1).astype(np.float32)
    captured = ((b["move_captured"][mask][:, None] >> np.arange(k)) & 1).astype(np.float32)
    layout = meta["obs_layout"]
    obs = b["obs"].astype(np.float32)
    counts = layout["hand_counts"]
    next_hand = obs[rows, counts[0] + 1] * rules.hand_size
    others_hand = obs[rows, counts[0] + 1 : counts[1]].sum(1) * rules.hand_size  # every seat but the mover's
    after = base[:, 2 * k : 3 * k].astype(np.float64)
    unseen = obs[rows, slice(*layout["unseen"])].astype(np.float64)
    ranks = np.array(RANK_OF[:k], np.int64)
    # the next seat's six, then every other seat's six (flat_all, flat_next_all)
    threats = np.concatenate(
        [threat_features(after, unseen, next_hand, ranks), threat_features(after, unseen, others_hand, ranks)], axis=1
    )
    return {
        "obs": obs,
        "layout": layout,
        "game": b["game"].astype(np.int64),
        "rows": rows.astype(np.int64),
        "card": b["move_card"][mask].astype(np.int64),
        "captured": captured,
        "feats": feats,
        "threats": threats,
        "kept": obs[rows, slice(*layout["hand"])] - np.eye(k, dtype=np.float32)[b["move_card"][mask]],
        "value": b["search_value"][mask].astype(np.float32),
        "game_name": f"{meta['rules']} x {meta['players']}",
    }


class FlatQ(nn.Module):
    """DMC's network: trunk on the observation, head on (trunk, move features)."""

    def __init__(
        self,
        obs_size: int,
        feat_size: int,
        trunk: int = 512,
        head: int = 256,
        threats: int = 0,
        kept: int = 0,
        threat_from: int = 0,
    ) -> None:
        super().__init__()
        self.threats, self.kept = threats > 0, kept > 0
        self.threat_cols = slice(threat_from, threat_from + threats)
        """The columns of the ``threats`` array read (:func:`load`: the next seat's six, then every other seat's)."""
        self.trunk = nn.Sequential(nn.Linear(obs_size, trunk), nn.ReLU())
        self.head = nn.Sequential(
            nn.Linear(trunk + feat_size + threats + kept, head),
            nn.ReLU(),
            nn.Linear(head, head),
            nn.ReLU(),
            nn.Linear(head, 1),
        )

    def forward(self, obs, rows, card, captured, feats, threats, kept):
        extra = [threats[:, self.threat_cols]] if self.threats else []
        move = torch.cat([feats, *extra, *([kept] if self.kept else [])], dim=1)
        return self.head(torch.cat([self.trunk(obs)[rows], move], dim=1)).squeeze(1)


class CardQ(nn.Module):
    """The card-wise network (module docstring): a shared card encoder, per-plane set sums, a move head."""

    def __init__(self, layout: dict, feat_size: int, width: int = 64) -> None:
        super().__init__()
        self.slices = [slice(*layout[p]) for p in PLANES]
        self.extra = slice(layout["scope"][0], None)  # scope, scores, counts, seats, phase: after the card planes
        self.num_flags = sum((s.stop - s.start) // CARDS for s in self.slices)
        identity = np.zeros((CARDS, 11 + 4), np.float32)
        identity[np.arange(CARDS), np.array(RANK_OF[:CARDS])] = 1.0
        identity[np.arange(CARDS), 11 + np.array(SUIT_OF[:CARDS])] = 1.0
        self.register_buffer("identity", torch.from_numpy(identity))
        self.encode = nn.Sequential(
            nn.Linear(self.num_flags + identity.shape[1], 128), nn.ReLU(), nn.Linear(128, width), nn.ReLU()
        )
        extra = layout["phase"][1] - layout["scope"][0]
        self.state = nn.Sequential(nn.Linear(self.num_flags * width + extra, 256), nn.ReLU())
        self.scalar = slice(3 * CARDS, None)  # MoveFeatures' entries after the three card-wide blocks
        self.head = nn.Sequential(
            nn.Linear(256 + 3 * width + feat_size - 3 * CARDS, 256),
            nn.ReLU(),
            nn.Linear(256, 256),
            nn.ReLU(),
            nn.Linear(256, 1),
        )

    def embed(self, obs):
        """Every card's flags ``(B, 40, P)`` and its embedding ``(B, 40, W)``: one encoder for every card."""
        flags = torch.cat([obs[:, s].reshape(len(obs), -1, CARDS) for s in self.slices], dim=1)  # (B, P, 40)
        flags = flags.transpose(1, 2)  # (B, 40, P)
        ident = self.identity.expand(len(obs), -1, -1)
        return flags, self.encode(torch.cat([flags, ident], dim=2))

    def forward(self, obs, rows, card, captured, feats, threats, kept):
        flags, emb = self.embed(obs)
        pooled = torch.einsum("bcp,bcw->bpw", flags, emb).reshape(len(obs), -1)
        state = self.state(torch.cat([pooled, obs[:, self.extra]], dim=1))[rows]
        e = emb[rows]  # (M, 40, W)
        played = e[torch.arange(len(rows)), card]
        took = torch.einsum("mc,mcw->mw", captured, e)
        after = feats[:, 2 * CARDS : 3 * CARDS]
        left = torch.einsum("mc,mcw->mw", after, e)
        return self.head(torch.cat([state, played, took, left, feats[:, self.scalar]], dim=1)).squeeze(1)


MOVE_KEYS = ("card", "captured", "feats", "threats", "kept", "value")
"""The per-move arrays of :func:`load`'s dict (the others are per position, or the layout)."""


def select(d: dict, positions: np.ndarray) -> dict:
    """``d`` cut to ``positions`` (sorted indices into ``d['obs']``), with their moves, rows renumbered."""
    take = np.isin(d["rows"], positions)
    renumber = np.full(len(d["obs"]), -1, np.int64)
    renumber[positions] = np.arange(len(positions))
    out = {k: d[k][take] for k in MOVE_KEYS}
    return out | {
        "obs": d["obs"][positions],
        "game": d["game"][positions],
        "rows": renumber[d["rows"][take]],
        "layout": d["layout"],
        "game_name": d["game_name"],
    }


def tensors(d: dict, positions: np.ndarray) -> tuple:
    """The inputs and labels of ``positions`` (sorted indices into ``d['obs']``) as tensors."""
    cut = select(d, positions)
    t = torch.from_numpy
    return tuple(t(cut[k]) for k in ("obs", "rows", "card", "captured", "feats", "threats", "kept")), t(cut["value"])


def subset(d: dict, share: float, seed: int) -> dict:
    """The positions of a random ``share`` of ``d``'s games, rows renumbered."""
    games = np.unique(d["game"])
    keep = np.random.default_rng(seed).choice(games, max(1, round(share * len(games))), replace=False)
    return select(d, np.nonzero(np.isin(d["game"], keep))[0])


def position_centred(values: torch.Tensor, rows: torch.Tensor, positions: int) -> torch.Tensor:
    """Each move's value less the mean of its position's moves."""
    total = torch.zeros(positions).index_add_(0, rows, values)
    count = torch.zeros(positions).index_add_(0, rows, torch.ones_like(values))
    return values - (total / count)[rows]


def train(model: nn.Module, d: dict, epochs: int, batch: int, seed: int, lr: float, loss_kind: str = "values") -> float:
    """Fit ``model`` to the search values (``loss_kind`` "values": their MSE; "differences": the MSE of
    each move's value less its position's mean, the recipe's difference labels); returns the CPU seconds."""
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps = epochs * ((len(d["obs"]) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    start = time.process_time()
    for epoch in range(epochs):
        order = rng.permutation(len(d["obs"]))
        total = n = 0.0
        for lo in range(0, len(order), batch):
            x, y = tensors(d, np.sort(order[lo : lo + batch]))
            pred = model(*x)
            if loss_kind == "differences":
                rows, positions = x[1], len(x[0])
                loss = nn.functional.mse_loss(
                    position_centred(pred, rows, positions), position_centred(y, rows, positions)
                )
            else:
                loss = nn.functional.mse_loss(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(y)
            n += len(y)
        print(f"  epoch {epoch + 1}/{epochs}: train mse {total / n:.4f}", flush=True)
    return time.process_time() - start


def predict(model: nn.Module, d: dict) -> np.ndarray:
    """The model's value of every move of ``d``."""
    with torch.no_grad():
        x, _ = tensors(d, np.arange(len(d["obs"])))
        return model(*x).numpy()


def per_position(pred: np.ndarray, d: dict) -> dict[str, np.ndarray]:
    """Per held-out position: squared error sum, move count, agreement and regret (NaN below two moves)."""
    rows, value = d["rows"], d["value"]
    n = len(d["obs"])
    sq = np.bincount(rows, (pred - value) ** 2, n)
    count = np.bincount(rows, minlength=n)
    agree = np.full(n, np.nan)
    regret = np.full(n, np.nan)
    starts = np.searchsorted(rows, np.arange(n))
    for i in np.nonzero(count >= 2)[0]:
        lo, hi = starts[i], starts[i] + count[i]
        best, chosen = int(np.argmax(value[lo:hi])), int(np.argmax(pred[lo:hi]))
        agree[i] = float(value[lo + chosen] >= value[lo + best] - 1e-6)
        regret[i] = value[lo + best] - value[lo + chosen]
    return {"sq": sq, "count": count, "agree": agree, "regret": regret}


def metrics(p: dict, games: np.ndarray, pick: np.ndarray | None = None) -> dict[str, float]:
    """MSE, agreement and regret over the positions of games ``pick`` (all by default, a bootstrap draw)."""
    if pick is None:
        sel = np.ones(len(games), bool)
        weight = np.ones(len(games))
    else:
        weight = np.bincount(pick, minlength=games.max() + 1)[games].astype(float)
        sel = weight > 0
    multi = sel & ~np.isnan(p["agree"])
    return {
        "mse": float((p["sq"] * weight).sum() / (p["count"] * weight).sum()),
        "agreement": float(np.nansum(p["agree"][multi] * weight[multi]) / weight[multi].sum()),
        "regret": float(np.nansum(p["regret"][multi] * weight[multi]) / weight[multi].sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train")
    parser.add_argument("test")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch", type=int, default=256, help="positions per gradient step")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument(
        "--loss",
        choices=("values", "differences"),
        default="values",
        help="fit the values, or each move's value less its position's mean (only the ranking counts)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap draws over the held-out games")
    parser.add_argument(
        "--networks", default="flat,cards", help=f"networks to fit: flat (always) and any of {', '.join(NAMES)}"
    )
    parser.add_argument(
        "--searched-again",
        metavar="PATH",
        help="the test games labelled by another search (e.g. fewer worlds): scored as a network would be",
    )
    parser.add_argument(
        "--fractions",
        help="also fit each network on these shares of the training games, e.g. 0.25,0.5 (is data the bound?)",
    )
    parser.add_argument("--json", help="write the scores here (raw)")
    parser.add_argument("--record", help="write the scores as a results record (benchmarks/results/, docs/results.md)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    machine_load = {"start": load_average()}
    tr, te = load(args.train), load(args.test)
    if tr["game_name"] != te["game_name"]:
        raise SystemExit(f"{args.test} holds {te['game_name']}, not the training file's {tr['game_name']}")
    print(f"train: {len(tr['obs']):,} positions, {len(tr['rows']):,} moves; test: {len(te['obs']):,} positions")
    obs_size, feat_size = tr["obs"].shape[1], tr["feats"].shape[1]
    found: dict = {"game": tr["game_name"]}
    per: dict = {}
    if args.searched_again:
        other = load(args.searched_again)
        if not all(np.array_equal(other[k], te[k]) for k in ("obs", "rows", "card", "captured")):
            raise SystemExit(f"{args.searched_again} does not hold the positions and moves of {args.test}")
        found["searched_again"] = metrics(per_position(other["value"], te), te["game"])
        print(f"the other search's labels: {found['searched_again']}", flush=True)
    every = {
        "flat": lambda: FlatQ(obs_size, feat_size),
        "cards": lambda: CardQ(tr["layout"], feat_size),
        "flat_wide": lambda: FlatQ(obs_size, feat_size, trunk=1024, head=512),
        "flat_threats": lambda: FlatQ(obs_size, feat_size, threats=len(THREATS)),
        "flat_kept": lambda: FlatQ(obs_size, feat_size, kept=tr["kept"].shape[1]),
        "flat_both": lambda: FlatQ(obs_size, feat_size, threats=len(THREATS), kept=tr["kept"].shape[1]),
        "flat_all": lambda: FlatQ(obs_size, feat_size, threats=len(THREATS), threat_from=len(THREATS)),
        "flat_next_all": lambda: FlatQ(obs_size, feat_size, threats=2 * len(THREATS)),
    }
    names = args.networks.split(",")
    unknown = sorted(set(names) - set(every))
    if unknown or "flat" not in names:
        raise SystemExit(f"--networks: name flat and any of {', '.join(every)}; got {args.networks!r}")
    if "cards" in names and tr["captured"].shape[1] != CARDS:
        raise SystemExit(f"--networks: the card-wise network reads the 40-card deck, not {tr['game_name']}")
    shares = [float(x) for x in args.fractions.split(",")] if args.fractions else []
    for name in names:
        torch.manual_seed(args.seed)  # the same seed gives the same weights, batches and scores
        model = every[name]()
        params = sum(p.numel() for p in model.parameters())
        print(f"{name}: {params:,} parameters", flush=True)
        cpu = train(model, tr, args.epochs, args.batch, args.seed, args.lr, args.loss)
        per[name] = per_position(predict(model, te), te)
        found[name] = metrics(per[name], te["game"]) | {"parameters": params, "train_cpu_seconds": round(cpu, 1)}
        print(f"{name}: {found[name]}", flush=True)
        for share in shares:
            sub = subset(tr, share, args.seed)
            print(f"{name} on {share:.0%} of the training games ({len(sub['obs']):,} positions)", flush=True)
            torch.manual_seed(args.seed)
            model = every[name]()
            train(model, sub, args.epochs, args.batch, args.seed, args.lr, args.loss)
            scores = metrics(per_position(predict(model, te), te), te["game"])
            found.setdefault("fractions", {}).setdefault(name, {})[str(share)] = scores
            print(f"  {scores}", flush=True)
    games = np.unique(te["game"])
    for name in [n for n in names if n != "flat"]:
        rng = np.random.default_rng(args.seed)
        diffs = {k: [] for k in ("mse", "agreement", "regret")}
        for _ in range(args.boot):
            pick = rng.choice(games, len(games))
            a, b = metrics(per[name], te["game"], pick), metrics(per["flat"], te["game"], pick)
            for k in diffs:
                diffs[k].append(a[k] - b[k])
        found[f"{name}_minus_flat"] = {
            k: {
                "mean": found[name][k] - found["flat"][k],
                "lo": float(np.quantile(v, 0.025)),
                "hi": float(np.quantile(v, 0.975)),
            }
            for k, v in diffs.items()
        }
        print(f"{name} - flat (95% bootstrap over held-out games):", json.dumps(found[f"{name}_minus_flat"]))
    if args.json:
        out = found | {"args": vars(args), "train_positions": len(tr["obs"]), "test_positions": len(te["obs"])}
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    if args.record:
        machine_load["end"] = load_average()
        write_record(as_record(found, args, len(tr["obs"]), len(te["obs"]), machine_load), args.record)


def as_record(found: dict, args, train_positions: int, test_positions: int, load: dict) -> dict:
    """The scores as a results record: a row per network and share of the training games. Under the
    difference loss a network's values have no level, so their MSE is left out."""
    scored = ("agreement", "regret") if args.loss == "differences" else ("mse", "agreement", "regret")
    game = found["game"]

    def kept(scores: dict) -> dict:
        return {k: v for k, v in scores.items() if k != "mse" or "mse" in scored}

    rows = []
    if "searched_again" in found:
        rows.append(
            {"network": "the labels' own search (the same games searched again)", **kept(found["searched_again"])}
        )
    names = args.networks.split(",")
    for name in names:
        for share, scores in sorted(found.get("fractions", {}).get(name, {}).items(), key=lambda kv: float(kv[0])):
            rows.append({"network": name, "share": float(share), **kept(scores)})
        rows.append({"network": name, "share": 1.0, **kept(found[name])})
    others = [n for n in names if n != "flat"]
    headers = {"mse": "test MSE", "agreement": "agreement", "regret": "regret"}
    return result_record(
        " ".join(["python", "benchmarks/card_encoder_probe.py", *sys.argv[1:]]),
        rows,
        what=f"{' and '.join(NAMES[n] for n in others)} against DMC's flat one, fitted to the search values of "
        f"{train_positions:,} positions of heuristic self-play ({game}) ({args.epochs} epochs, {args.loss} loss, the same "
        f"batches and seed) and scored on {test_positions:,} held-out positions: "
        + ("mean squared error over moves, " if "mse" in scored else "")
        + "agreement (the network's best move is the held-out search's) and regret (the held-out search's "
        "value lost by the network's choice, points per hand)",
        columns=[
            ("network", "network"),
            ("share", "share of the training games"),
            ("parameters", "parameters"),
            ("train_cpu_seconds", "training CPU-seconds"),
            *((k, headers[k]) for k in scored),
        ],
        load=load,
        id=f"network-probe-{'-'.join(others)}-{args.loss}"
        + ("" if game == "standard x 2" else f"-{game.replace(' x ', '-')}"),
        title=" and ".join(TITLES[n] for n in others)
        + f" against the flat one, {args.loss} loss"
        + ("" if game == "standard x 2" else f", {game.replace(' x ', ', ')} players"),
        machine="this project's shared 2-core CPU machine",
        facts=[
            {
                "what": f"{name} - flat, all the training games (95% bootstrap over {args.boot} draws of held-out games)",
                "value": "; ".join(
                    f"{k} {d['mean']:+.4f} [{d['lo']:+.4f}, {d['hi']:+.4f}]"
                    for k, d in found[f"{name}_minus_flat"].items()
                    if k in scored
                ),
            }
            for name in others
        ],
    )


if __name__ == "__main__":
    main()
