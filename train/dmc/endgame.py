"""A second network for the last round of the 2-player game: numpy only at play time.

In the 2-player game the stock is empty in the last round, so the cards the mover cannot see are
the other hand: the rest of the hand is a small game of perfect information, which the compiled
search solves exactly. The DMC network reads it poorly (a tenth of a point lost per decision
there, ``benchmarks/endgame_regret.py``). A DMC checkpoint may carry an *endgame network*
(``endgame.{i}.weight/bias`` arrays in ``weights.npz``, an ``endgame`` entry in ``meta.json``)
fitted to the exact values of those positions (:mod:`train.dmc.endgame_fit`). When the stock is
empty it scores the moves instead of the main network; no search runs at play time.

It reads each move's *afterstate* and a one-ply look at the replies, computed in the compiled
core (:func:`scopa_env.fast.features.endgame_feature_rows`, whose replies come from the core's
capture enumeration):

====================  =====  ======================================================
feature               width  meaning
====================  =====  ======================================================
``hand_after``        40     the mover's hand after the move
``other_hand``        40     the unseen cards: the other hand, once the stock is empty
``table_after``       40     the table after the move
``own_pile_after``    40     the mover's captured cards after the move
``other_pile``        40     the other side's captured cards
``card``              40     the played card
``captured``          40     the cards it takes (all 0: a trail)
``sweep``             1      the move clears the table
``capture``           1      the move takes cards (so the mover is the last to capture)
``last_capturer``     3      who captured last before the move (the observation's entry)
``counts``            5      cards in the mover's hand / 3, the other hand / 3, on the table / 10,
                             in the two piles / 20
``coins``             2      coins in the two piles / 5
``primiera``          12     per suit, the best primiera value in the mover's pile, the other
                             pile, and the cards still in play, / 21
``scope``             2      the two sides' scope this hand / 5
``replies``           7      over the other hand's moves on the table after the move: any
                             capture, a sweep, the settebello taken, the most cards, coins and
                             best primiera card one move takes, how many of its cards capture
``own_replies``       7      the same over the mover's remaining cards
====================  =====  ======================================================
"""

from __future__ import annotations

import functools
import math

import numpy as np

from scopa_env.engine.actions import TAKE_ALL
from scopa_env.engine.cards import PRIMIERA_BY_RANK, RANK_OF, SUIT_OF
from scopa_env.engine.rules import Rules
from scopa_env.engine.setup import GameSetup
from train.limits import is_int, layer_widths, need_sizes, parameters_problem, shown

ENDGAME_VERSION = 1
"""Bumped whenever :class:`EndgameFeatures` changes; a checkpoint with another version is refused."""
PREFIX = "endgame"
"""The arrays' prefix in ``weights.npz``."""


class EndgameFeatures:
    """The endgame network's rows for "move"-mode ids of the 2-player game (the module's table)."""

    def __init__(self, rules: Rules, num_players: int) -> None:
        if num_players != 2:
            raise ValueError(f"the endgame network plays the 2-player game, not {num_players} players")
        if rules.num_card_ids != 40:
            raise ValueError(f"the endgame network plays the 40-card deck, not {rules.name!r}'s")
        rules.check_backend("features")
        setup = GameSetup.of(rules, num_players)
        from scopa_env.fast import features as compiled  # numba: imported when a network is made
        from scopa_env.fast.batch import compiled_rules

        pairs = setup.moves.pairs
        self.card = np.array([c for c, _ in pairs], np.int64)
        self.mask = np.array([0 if m == TAKE_ALL else m for _, m in pairs], np.int64)
        self.take_all = np.array([m == TAKE_ALL for _, m in pairs], bool)
        self.suit = np.array(SUIT_OF[:40], np.int64)
        self.prim = np.array([PRIMIERA_BY_RANK[r] for r in RANK_OF[:40]], np.float32)
        layout = setup.layout
        names = ("hand", "table", "own_pile", "other_piles", "unseen", "last_capturer", "scope")
        self.spec = np.array([layout[name].start for name in names], np.int64)
        assert len(self.spec) == compiled.EG_SIZE
        self.stock = layout["stock"].start
        self.P = compiled_rules(rules, num_players)[0]
        self.size = compiled.EG_PLANES * 40 + compiled.EG_SCALARS + 2 * compiled.EG_REPLIES
        self._rows = compiled.endgame_feature_rows

    def last_round(self, obs: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Whether each move's position ``obs[rows[k]]`` is in the last round (the stock is empty)."""
        return obs[rows, self.stock] == 0

    def __call__(self, obs: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Rows of move ``ids[k]`` in the position ``obs[rows[k]]``: float32 ``(len(ids), size)``."""
        out = np.empty((len(ids), self.size), np.float32)
        self._rows(
            np.ascontiguousarray(obs, np.float32),
            np.ascontiguousarray(rows, np.int64),
            np.ascontiguousarray(ids, np.int64),
            self.card,
            self.mask,
            self.take_all,
            self.suit,
            self.prim,
            self.P,
            self.spec,
            out,
        )
        return out


@functools.lru_cache(maxsize=4)
def endgame_features(rules: Rules, num_players: int) -> EndgameFeatures:
    return EndgameFeatures(rules, num_players)


class EndgameNet:
    """The endgame network in numpy: ``score(afterstate row)``, a plain ReLU MLP."""

    def __init__(self, weights: dict[str, np.ndarray], features: EndgameFeatures) -> None:
        self.layers = []
        i = 0
        while f"{PREFIX}.{i}.weight" in weights:
            self.layers.append((weights[f"{PREFIX}.{i}.weight"], weights[f"{PREFIX}.{i}.bias"]))
            i += 1
        if not self.layers:
            raise ValueError("weights hold no endgame.* layers")
        self.features = features

    def scores(self, x: np.ndarray) -> np.ndarray:
        h = x
        for k, (w, b) in enumerate(self.layers):
            h = h @ w.T + b
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0]

    def override(self, obs: np.ndarray, rows: np.ndarray, ids: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``q`` with the scores of the moves of last-round positions replaced by this network's."""
        last = self.features.last_round(obs, rows)
        if last.any():
            q = np.array(q, np.float64)
            q[last] = self.scores(self.features(obs, rows[last], ids[last]))
        return q


def endgame_problem(meta: dict, rules: Rules, num_players: int) -> str | None:
    """What is wrong with ``meta.json``'s ``endgame`` entry (``None``: nothing, or no entry)."""
    entry = meta.get(PREFIX)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        return f"{PREFIX} must be an object, got {shown(entry)}"
    version = entry.get("version")
    if not is_int(version) or version != ENDGAME_VERSION:
        return f"{PREFIX}.version is {shown(version)}, this kit reads {ENDGAME_VERSION}; refit it"
    try:
        need_sizes(entry, "arch", "endgame")
        EndgameFeatures(rules, num_players)
    except ValueError as exc:
        return str(exc)
    return None


def check_endgame_layers(shapes: dict, meta: dict, rules: Rules, num_players: int) -> tuple[set[str], int]:
    """The ``endgame.{i}`` arrays chain from the endgame rows to one score, as wide as ``meta.json``'s
    ``endgame.arch`` says (from their headers); returns their names and parameter count.

    Raises:
        ValueError: a bad shape or count, named.
    """
    names = {k for k in shapes if k.startswith(PREFIX + ".")}
    entry = meta.get(PREFIX)
    if entry is None:
        return set(), 0
    outs = layer_widths(shapes, PREFIX, EndgameFeatures(rules, num_players).size)
    if not outs or outs[-1] != 1:
        raise ValueError(f"meta.json has an {PREFIX} entry, but weights hold no {PREFIX}.* layers ending in 1 score")
    if entry["arch"] != outs[:-1]:
        raise ValueError(f"{PREFIX} layers {outs[:-1]} wide, but meta.json's {PREFIX}.arch says {shown(entry['arch'])}")
    expected = {f"{PREFIX}.{i}.{k}" for i in range(len(outs)) for k in ("weight", "bias")}
    if names - expected:
        raise ValueError(f"unexpected arrays {shown(sorted(names - expected))}")
    count = sum(math.prod(shapes[n][0]) for n in expected)
    problem = parameters_problem(count, "the endgame network")
    if problem:
        raise ValueError(problem)
    return expected, count
