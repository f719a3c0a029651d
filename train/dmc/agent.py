"""The move-scoring network of :mod:`train.dmc` at play time: numpy only, no torch, no pickle.

A DMC checkpoint is a folder with ``weights.npz`` (plain float32 arrays, read with
``allow_pickle=False``) and ``meta.json`` (the rules, player count, layer sizes and the
feature version). The network scores every legal move of a position on its own,
``Q(observation, move features)``, and the agent plays the move with the highest score:

===================  =====  ======================================================
move feature         width  meaning
===================  =====  ======================================================
``card``             40     one-hot of the played card (52 wide, as the next two, with the
                            52-card deck of ``french_52``)
``captured``         40     the captured cards (all 0: a trail)
``table_after``      40     the table after the move (``table - captured`` or ``table + card``)
``num_captured``     1      captured cards / 10
``sweep``            1      1 if the move empties the table (a scopa-shaped capture)
``table_after_sum``  1      sum of the ranks left on the table / 40
``table_after_n``    1      cards left on the table / 10
``sweep_unseen``     1      unseen cards of the rank that would sweep the table after the
                            move (the rank equal to its sum, up to 10; 13 with 52 cards) / 4
``next_sweeps``      1      chance that the next seat holds one of them (hypergeometric
                            over the unseen cards and that seat's hand size)
===================  =====  ======================================================

With ``heuristic_features`` (a key of the checkpoint's metadata) three more come last, from the
``heuristic`` baseline's score of the move (:meth:`agents.heuristic.HeuristicAgent.scores`; on
the compiled core its twin, :func:`scopa_env.fast.features.heuristic_move_scores`), which reads
only the mover's information:

===================  =====  ======================================================
``h_score``          1      the heuristic's score / 10
``h_gap``            1      (score - the best legal move's score) / 10
``h_top``            1      1 if no legal move scores higher
===================  =====  ======================================================

The sweep features read the standard capture rule (a card takes a set of cards summing to its
rank); under variants with other captures they are a hint the network weighs, not a rule.

The state half is the env's observation vector (:mod:`scopa_env.engine.observation`), which holds
only what the seat to move may see; the move half is computed from that observation's
``table`` plane and the move id, so the agent decides from its information set alone.

Agents by name: ``dmc:PATH`` (a checkpoint folder or a run folder, whose ``best`` is used).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from agents.base import TrainedAgent
from scopa_env.engine.actions import TAKE_ALL
from scopa_env.engine.cards import RANK_OF
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import ALLOWED_PLAYER_COUNTS, Move, Rules, move_of
from scopa_env.engine.setup import GameSetup
from train.checkpoint import check_finite
from train.dmc.endgame import PREFIX as ENDGAME
from train.dmc.endgame import EndgameNet, check_endgame_layers, endgame_features, endgame_problem
from train.limits import (
    dmc_parameters,
    is_int,
    layer_widths,
    need_sizes,
    parameters_problem,
    read_json,
    read_npz,
    shown,
)

FEATURE_VERSION = 2
"""Bumped whenever :class:`MoveFeatures` changes; a checkpoint with another version is refused."""
WEIGHTS_FILE = "weights.npz"
META_FILE = "meta.json"
ALGO = "dmc"


class MoveFeatures:
    """Per-move feature rows for "move"-mode ids of one rules object (see the module table)."""

    def __init__(self, rules: Rules, num_players: int, heuristic: bool = False) -> None:
        rules.check_backend("features")  # a field declared features=False (scopa_env/engine/rules.py) is refused
        setup = GameSetup.of(rules, num_players)  # "move" mode
        moves = setup.moves
        self.heuristic = heuristic
        n = len(moves)
        self.num_moves = n
        self.card = np.array([c for c, _ in moves.pairs], np.int64)
        masks = np.array([0 if m == TAKE_ALL else m for _, m in moves.pairs], np.int64)
        self.take_all = np.array([m == TAKE_ALL for _, m in moves.pairs], bool)
        self.mask = masks
        k = self.num_cards = rules.num_card_ids  # 40, or 52 for the 52-card deck (french_52)
        self.rank = np.array(RANK_OF[:k], np.float32)
        self.max_rank = max(rules.ranks)  # 10, or 13 (the King) for the 52-card deck
        layout = setup.layout
        self.table_slice = layout["table"]
        self.unseen_slice = layout["unseen"]
        self.next_hand = layout["hand_counts"].start + 1  # seat +1's cards / hand size
        self.hand_size = rules.hand_size
        self.size = 3 * k + 6 + (3 if heuristic else 0)
        from scopa_env.fast import features as compiled  # numba: imported when a network is made

        self._rows = compiled.move_feature_rows
        spec = [k, self.table_slice.start, self.unseen_slice.start, self.next_hand, self.hand_size, self.max_rank]
        self.spec = np.array([*spec, heuristic], np.int64)  # in the order of scopa_env/fast/features.py's MF_*
        assert len(self.spec) == compiled.MF_SIZE

    def __call__(
        self, obs: np.ndarray, rows: np.ndarray, ids: np.ndarray, h_scores: np.ndarray | None = None
    ) -> np.ndarray:
        """Features of move ``ids[k]`` in the position ``obs[rows[k]]``: float32 ``(len(ids), size)``.

        ``h_scores``: the heuristic's score of each move (needed with ``heuristic`` features). The
        compiled :func:`scopa_env.fast.features.move_feature_rows` computes them.
        """
        if self.heuristic:
            if h_scores is None:
                raise ValueError("these move features need the heuristic's scores (h_scores)")
            h = np.ascontiguousarray(h_scores, np.float64)
        else:
            h = _NO_SCORES
        out = np.empty((len(ids), self.size), np.float32)
        self._rows(
            np.ascontiguousarray(obs, np.float32),
            np.ascontiguousarray(rows, np.int64),
            np.ascontiguousarray(ids, np.int64),
            h,
            self.card,
            self.mask,
            self.take_all,
            self.rank,
            self.spec,
            out,
        )
        return out


_NO_SCORES = np.zeros(0, np.float64)


@functools.lru_cache(maxsize=16)
def move_features(rules: Rules, num_players: int, heuristic: bool = False) -> MoveFeatures:
    return MoveFeatures(rules, num_players, heuristic)


def flatten_legal(legal_ids: np.ndarray, legal_count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, ids)`` of every legal move of a padded ``(B, W)`` id list."""
    valid = np.arange(legal_ids.shape[1])[None, :] < np.asarray(legal_count)[:, None]
    rows, cols = np.nonzero(valid)
    return rows, cols, legal_ids[rows, cols]


def best_of(q: np.ndarray, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Column of the highest score per row (ties: the lowest column, i.e. the lowest move id)."""
    table = np.full(shape, -np.inf, np.float64)
    table[rows, cols] = q
    return np.argmax(table, axis=1)


class NumpyQNet:
    """``Q(obs, move)`` in numpy: a state trunk, then a head over (trunk output, move features).

    Args:
        weights: ``trunk.{i}.weight/bias`` and ``head.{i}.weight/bias`` arrays (torch's Linear layout).
    """

    endgame: EndgameNet | None = None
    """The checkpoint's endgame network (:mod:`train.dmc.endgame`), which scores the moves of the last
    round in its place (:meth:`move_scores`), or ``None``."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.trunk = _layers(weights, "trunk")
        self.head = _layers(weights, "head")
        if not self.trunk or not self.head:
            raise ValueError("weights hold no trunk.* or head.* layers")

    def state(self, obs: np.ndarray) -> np.ndarray:
        h = obs
        for w, b in self.trunk:
            h = np.maximum(h @ w.T + b, 0.0)
        return h

    def scores(self, obs: np.ndarray, rows: np.ndarray, feats: np.ndarray) -> np.ndarray:
        h = np.concatenate([self.state(obs)[rows], feats], axis=1)
        for k, (w, b) in enumerate(self.head):
            h = h @ w.T + b
            if k < len(self.head) - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0]

    def move_scores(self, obs: np.ndarray, rows: np.ndarray, ids: np.ndarray, feats: np.ndarray) -> np.ndarray:
        """The score of move ``ids[k]`` (with features ``feats[k]``) in position ``obs[rows[k]]``: the
        network's, or the endgame network's in the last round where the checkpoint has one."""
        q = self.scores(obs, rows, feats)
        return q if self.endgame is None else self.endgame.override(obs, rows, ids, q)


def _layers(weights: dict[str, np.ndarray], prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    i = 0
    while f"{prefix}.{i}.weight" in weights:
        out.append((weights[f"{prefix}.{i}.weight"], weights[f"{prefix}.{i}.bias"]))
        i += 1
    return out


class BatchPolicy:
    """The network's greedy move for a batch of "move"-mode positions (for the compiled core).

    ``policy(obs, legal_ids, legal_count) -> ids`` (``uses_legal_ids`` tells
    :func:`train.fast_eval.evaluate_fast` to pass the id lists instead of dense masks).
    """

    uses_legal_ids = True

    def __init__(self, net: NumpyQNet, features: MoveFeatures) -> None:
        self.net = net
        self.features = features
        self.needs_batch = features.heuristic
        """Whether a call needs ``batch=`` (the compiled heuristic's scores are read from it)."""

    def __call__(
        self, obs: np.ndarray, legal_ids: np.ndarray, legal_count: np.ndarray, batch=None, rows=None
    ) -> np.ndarray:
        """The move ids; with ``rows`` (a bool mask) only those games are decided, the others get
        their first legal id (:data:`agents.compiled.LegalPolicy`'s ``needs_rows``)."""
        table = None
        if self.needs_batch:
            if batch is None:
                raise ValueError("this policy reads the compiled heuristic's scores: pass batch=")
            from scopa_env.fast.features import heuristic_move_scores

            table = heuristic_move_scores(batch)
        if rows is None:
            return self._decide(obs, legal_ids, legal_count, table)
        games = np.flatnonzero(rows)
        out = legal_ids[:, 0].copy()
        if games.size:
            h = None if table is None else table[games]
            out[games] = self._decide(obs[games], legal_ids[games], legal_count[games], h)
        return out

    def _decide(self, obs, legal_ids, legal_count, table) -> np.ndarray:
        rows, cols, ids = flatten_legal(legal_ids, legal_count)
        h = None if table is None else table[rows, cols]
        q = self.net.move_scores(obs, rows, ids, self.features(obs, rows, ids, h))
        best = best_of(q, rows, cols, legal_ids.shape)
        return legal_ids[np.arange(len(legal_ids)), best]


class DmcAgent(TrainedAgent):
    """An agent that plays a DMC checkpoint's greedy move from its :class:`PlayerView`."""

    def __init__(self, net: NumpyQNet, meta: dict, name: str = "dmc", seed=None) -> None:
        super().__init__(seed)
        self.net = net
        self.meta = meta
        self.setup = GameSetup.of(meta["rules"], int(meta["num_players"]))  # "move" mode
        """The game the network was trained for: :class:`~scopa_env.engine.setup.GameSetup`."""
        self.rules = self.setup.rules
        self.num_players = self.setup.num_players
        self.layout = self.setup.layout
        self.features = move_features(self.rules, self.num_players, bool(meta.get("heuristic_features", False)))
        self.moves = self.setup.moves
        self.scorer = None
        if self.features.heuristic:
            from agents.heuristic import HeuristicAgent

            self.scorer = HeuristicAgent()
        self.name = name

    def compiled_policy(self, num_players: int, rules) -> BatchPolicy | None:
        """The network as a batch policy of the compiled core, for its own game only (``None`` for
        another): the hook :mod:`agents.compiled` plays ``dmc:`` and ``zoo:`` agents by."""
        if self.mismatch(num_players, rules):
            return None
        policy = BatchPolicy(self.net, self.features)
        policy.needs_rows = True  # the loop passes the games it needs: the others are not computed
        return policy

    def check_game(self, num_players: int, rules: Rules) -> None:
        """Refuse a game with other rules or another player count, naming both."""
        problem = self.mismatch(num_players, rules)
        if problem:
            raise ValueError(problem)

    def act(self, view: PlayerView) -> Move:
        self.check_game(view.num_players, view.rules)
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        return move_of(*pairs[int(np.argmax(self.q_values(view, pairs)))])

    def q_values(self, view: PlayerView, pairs: list[tuple[int, int]]) -> np.ndarray:
        """The network's score of each legal ``(card, captured_mask)`` pair (in ``pairs`` order)."""
        from train.env import observe_view

        obs = observe_view(view, self.layout)[None, :]
        ids = np.array(self.moves.ids(pairs, view.table), np.int64)
        rows = np.zeros(len(ids), np.int64)
        h = None
        if self.scorer is not None:  # the compiled heuristic where it plays the view, else the Python one
            from scopa_env.fast.features import view_heuristic_scores

            h = view_heuristic_scores(view, ids)
            if h is None:
                h = np.asarray(self.scorer.scores(view, pairs), np.float64)
        return self.net.move_scores(obs, rows, ids, self.features(obs, rows, ids, h))

    def __repr__(self) -> str:
        return f"DmcAgent({self.name})"


def find_dmc_checkpoint(path: str | Path) -> Path:
    """The checkpoint folder named by ``path``: a checkpoint, or a run folder (its ``best``)."""
    p = Path(path)
    if p.is_dir() and not (p / META_FILE).exists() and (p / "best" / META_FILE).exists():
        p = p / "best"
    if not p.exists():
        raise FileNotFoundError(f"no checkpoint at {str(path)!r}")
    if not (p / META_FILE).is_file() or not (p / WEIGHTS_FILE).is_file():
        raise FileNotFoundError(
            f"{str(path)!r} is not a DMC checkpoint folder (needs {META_FILE} and {WEIGHTS_FILE}); use runs/<name>/best"
        )
    return p


def check_dmc_meta(meta: object, where: str | Path) -> tuple[Rules, int, MoveFeatures]:
    """Check a DMC ``meta.json`` entry by entry (:mod:`train.limits`' strict checks); returns the rules,
    the player count and the move features.

    Raises:
        ValueError: a missing or bad entry, or a network over :data:`~train.limits.MAX_PARAMETERS`, named
            with the file.
    """
    if not isinstance(meta, dict) or meta.get("algo") != ALGO:
        raise ValueError(
            f"{where}: not a DMC checkpoint (algo {meta.get('algo') if isinstance(meta, dict) else None!r})"
        )
    missing = [k for k in ("rules", "num_players", "feature_version") if k not in meta]
    if missing:
        raise ValueError(f"{where}: missing keys {missing}")
    version = meta["feature_version"]
    if not is_int(version) or version != FEATURE_VERSION:
        raise ValueError(f"{where}: feature_version is {shown(version)}, this kit reads {FEATURE_VERSION}; retrain it")
    if not isinstance(meta["rules"], str):
        raise ValueError(f"{where}: rules must be a rules preset name, got {shown(meta['rules'])}")
    n = meta["num_players"]
    if not is_int(n) or n not in ALLOWED_PLAYER_COUNTS:
        raise ValueError(f"{where}: num_players must be one of {list(ALLOWED_PLAYER_COUNTS)}, got {shown(n)}")
    if not isinstance(meta.get("heuristic_features", False), bool):
        raise ValueError(f"{where}: heuristic_features must be true or false, got {shown(meta['heuristic_features'])}")
    try:
        setup = GameSetup.of(meta["rules"], n)
        rules = setup.rules
        features = move_features(rules, n, meta.get("heuristic_features", False))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    problem = endgame_problem(meta, rules, n)
    if problem:
        raise ValueError(f"{where}: {problem}")
    obs_size = setup.observation_size
    if "observation_size" in meta and (not is_int(meta["observation_size"]) or meta["observation_size"] != obs_size):
        raise ValueError(
            f"{where}: observation_size is {shown(meta['observation_size'])} but {n} players under "
            f"{rules.name!r} need {obs_size}"
        )
    sizes = {key: need_sizes(meta, key, where) for key in ("trunk", "net_arch") if key in meta}
    if len(sizes) == 2:
        problem = parameters_problem(
            dmc_parameters(obs_size, features.size, sizes["trunk"], sizes["net_arch"]), "the network"
        )
        if problem:
            raise ValueError(f"{where}: {problem}")
    return rules, n, features


def _check_layers(shapes: dict, meta: dict, obs_size: int, feature_size: int, file: Path) -> None:
    """The ``trunk.{i}``/``head.{i}`` arrays chain from the observation (and the move features) to one score,
    as wide as ``meta.json``'s ``trunk`` and ``net_arch`` say (checked from their headers, before any data)."""
    widths: dict[str, list[int]] = {}
    try:
        widths["trunk"] = layer_widths(shapes, "trunk", obs_size)
        widths["head"] = layer_widths(shapes, "head", (widths["trunk"] or [0])[-1] + feature_size)
    except ValueError as exc:
        raise ValueError(f"{file}: {exc}") from None
    if not widths["trunk"] or not widths["head"]:
        raise ValueError(f"{file}: weights hold no trunk.* or head.* layers")
    if widths["head"][-1] != 1:
        raise ValueError(f"{file}: the last head layer must give 1 score, gives {widths['head'][-1]}")
    expected = {f"{p}.{i}.{k}" for p in ("trunk", "head") for i in range(len(widths[p])) for k in ("weight", "bias")}
    try:
        setup = GameSetup.of(meta["rules"], int(meta["num_players"]))
        expected |= check_endgame_layers(shapes, meta, setup.rules, setup.num_players)[0]
    except ValueError as exc:
        raise ValueError(f"{file}: {exc}") from None
    extra = sorted(set(shapes) - expected)
    if extra:
        raise ValueError(f"{file}: unexpected arrays {shown(extra)}")
    for key, got in (("trunk", widths["trunk"]), ("net_arch", widths["head"][:-1])):
        if key in meta and meta[key] != got:
            raise ValueError(f"{file}: layers {got} wide, but meta.json's {key} says {shown(meta[key])}")
    problem = parameters_problem(sum(math.prod(s) for s, _ in shapes.values()), "the network")
    if problem:
        raise ValueError(f"{file}: {problem}")


def load_dmc(path: str | Path) -> tuple[NumpyQNet, dict]:
    """The network and metadata of a DMC checkpoint (:func:`load_dmc_weights`, as a numpy network)."""
    weights, meta = load_dmc_weights(path)
    net = NumpyQNet(weights)
    if ENDGAME in meta:
        setup = GameSetup.of(meta["rules"], int(meta["num_players"]))
        net.endgame = EndgameNet(weights, endgame_features(setup.rules, setup.num_players))
    return net, meta


def load_dmc_weights(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """The network and metadata of a DMC checkpoint (weights and JSON only; nothing is executed).

    ``meta.json`` is checked first (:func:`check_dmc_meta`), then the shape of every array of
    ``weights.npz`` from its header (:func:`train.limits.read_npz`), and only then are the
    weights read: a crafted checkpoint is refused in one line before anything large is allocated.
    """
    folder = find_dmc_checkpoint(path)
    meta_path = folder / META_FILE
    try:
        meta = read_json(meta_path)
    except ValueError as exc:
        raise ValueError(f"{meta_path}: not a readable JSON file ({str(exc).removeprefix(f'{meta_path}: ')})") from None
    rules, n, features = check_dmc_meta(meta, meta_path)
    obs_size = GameSetup.of(rules, n).observation_size
    weights_path = folder / WEIGHTS_FILE
    weights = read_npz(weights_path, lambda shapes: _check_layers(shapes, meta, obs_size, features.size, weights_path))
    weights = {k: np.asarray(v, np.float32) for k, v in weights.items()}
    check_finite(weights, str(weights_path))
    try:
        net = NumpyQNet(weights)
        probe = np.zeros((1, obs_size), np.float32)
        net.scores(probe, np.zeros(1, np.int64), np.zeros((1, features.size), np.float32))
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{weights_path}: weights do not fit the network ({exc})") from None
    return weights, meta


def load_dmc_agent(path: str, seed=None) -> DmcAgent:
    net, meta = load_dmc(path)
    return DmcAgent(net, meta, name=f"dmc:{path}", seed=seed)


def load_dmc_batch_policy(path: str | Path) -> tuple[BatchPolicy, dict]:
    net, meta = load_dmc(path)
    setup = GameSetup.of(meta["rules"], int(meta["num_players"]))
    features = move_features(setup.rules, setup.num_players, bool(meta.get("heuristic_features")))
    return BatchPolicy(net, features), meta
