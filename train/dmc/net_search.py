"""Search that uses the learned network: ``netsearch:CHECKPOINT[,weight=W,<fsearch options>]``.

At the root, every legal move gets two estimates of the hand-point margin that follows it:

* the compiled search's mean over its sampled worlds (:mod:`agents.fast_search`, ``fsearch``:
  greedy rollouts to the end of the hand, exact from ``exact_cards`` cards left), and
* the DMC network's ``Q(observation, move)`` (:mod:`train.dmc.agent`), trained on the same
  target, the hand-point margin of the mover's side.

The agent plays the move with the best ``(1 - weight) * search + weight * Q``: the mixing of a
learned value with rollout outcomes at the leaves of AlphaGo (Silver et al., 2016, "Mastering
the game of Go with deep neural networks and tree search", which mixed them half and half),
here at depth one, with the network standing in for what the rollout players get wrong. Where
the search solves the position exactly (the last cards), its value is the truth and is used
alone. Where the compiled search does not play (Cirulla's declarations, wildcard and shown
hands), the search's values are those of the Python search ``fsearch`` falls back to there
(:meth:`agents.fast_search.FastSearchAgent.fallback_values`). ``weight=0`` is the search alone,
``weight=1`` the network alone.

Specs: ``netsearch:zoo:standard-2p`` (weight 0.5, fsearch's defaults),
``netsearch:runs/NAME/best,weight=0.3,worlds=64``. The checkpoint part ends at the first
comma; the options after it are ``weight`` and any ``fsearch`` option. Like both parts, the
agent reads only the seat's view.

:class:`NetSearchBatchPolicy` is the same decision for a batch of the compiled core
(``scopa eval --fast netsearch:... OPPONENT``).
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.fast_search import FastSearchAgent
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move, get_rules, move_of
from train.dmc.agent import BatchPolicy, DmcAgent, flatten_legal, load_dmc, move_features
from train.zoo import dmc_folder

PREFIX = "netsearch"
DEFAULT_WEIGHT = 0.5


def parse_spec(argument: str) -> tuple[str, float, dict]:
    """``"CHECKPOINT,weight=W,k=v"`` -> ``(checkpoint, weight, fsearch options)``; bad input raises ``ValueError``."""
    from agents.registry import parse_options

    checkpoint, _, rest = argument.partition(",")
    if not checkpoint.strip():
        raise ValueError(
            f"{PREFIX}:{argument}: name a DMC checkpoint or zoo agent first, e.g. {PREFIX}:zoo:standard-2p"
        )
    options = parse_options(rest, f"{PREFIX}:{argument}")
    weight = options.pop("weight", DEFAULT_WEIGHT)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
        raise ValueError(f"{PREFIX}: weight must be a number in [0, 1], got {weight!r}")
    return checkpoint.strip(), float(weight), options


def _load(checkpoint: str):
    return load_dmc(dmc_folder(checkpoint))


def blend(search: np.ndarray, q: np.ndarray, weight: float, exact: bool | np.ndarray) -> np.ndarray:
    """``(1 - weight) * search + weight * q``, the search alone where ``exact``."""
    mixed = (1.0 - weight) * search + weight * q
    return np.where(exact, search, mixed)


class NetSearchAgent(Agent):
    """The search and the network mixed at the root (see the module docstring)."""

    def __init__(self, checkpoint: str, weight: float = DEFAULT_WEIGHT, seed=None, **search_options) -> None:
        super().__init__(seed)
        net, meta = _load(checkpoint)
        self.net = DmcAgent(net, meta, name=checkpoint)
        try:
            self.search = FastSearchAgent(seed=self.rng, **search_options)
        except TypeError as exc:
            raise ValueError(f"bad fsearch options for {PREFIX}: {exc}") from None
        self.weight = weight
        self.name = f"{PREFIX}:{checkpoint}"

    def check_game(self, num_players: int, rules) -> None:
        self.net.check_game(num_players, rules)

    def act(self, view: PlayerView) -> Move:
        self.net.check_game(view.num_players, view.rules)
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        if len(pairs) == 1:
            return move_of(*pairs[0])
        if self.weight == 1.0 and self.search.skips_inexact(view):
            # the blend would be the network's values alone: the search is needed only where it is exact
            return move_of(*pairs[int(np.argmax(self.net.q_values(view, pairs)))])
        searched = self.search.move_values(view)
        if searched is None:  # a position the compiled search does not play: fsearch's Python fallback
            searched = self.search.fallback_values(view)
        values, exact = searched
        q = self.net.q_values(view, pairs)
        return move_of(*pairs[int(np.argmax(blend(values, q, self.weight, exact)))])

    def __repr__(self) -> str:
        return f"NetSearchAgent({self.name}, weight={self.weight})"


class NetSearchBatchPolicy(BatchPolicy):
    """:class:`NetSearchAgent`'s decision for the games of a compiled batch where ``rows`` is set
    (elsewhere the network's move): ``policy(obs, legal_ids, legal_count, batch=, rows=)``."""

    needs_rows = True

    def __init__(self, checkpoint: str, weight: float, options: dict, seed: int = 0) -> None:
        from agents.compiled import fsearch_config

        net, meta = _load(checkpoint)
        self.meta = meta
        rules = get_rules(meta["rules"])
        super().__init__(net, move_features(rules, int(meta["num_players"]), bool(meta.get("heuristic_features"))))
        self.needs_batch = True
        spec = "fsearch:" + ",".join(f"{k}={v}" for k, v in options.items())
        self.C = fsearch_config(spec)
        self.weight = weight
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs, legal_ids, legal_count, batch=None, rows=None) -> np.ndarray:
        from scopa_env.fast import core
        from scopa_env.fast.batch import max_threads
        from scopa_env.fast.search import C_EXACT_CARDS, search_values

        if batch is None:
            raise ValueError("this policy searches the compiled batch: pass batch=")
        flat_rows, cols, ids = flatten_legal(legal_ids, legal_count)
        h = None
        if self.features.heuristic:
            from scopa_env.fast.features import heuristic_move_scores

            h = heuristic_move_scores(batch)[flat_rows, cols]
        q = np.full(legal_ids.shape, -np.inf)
        q[flat_rows, cols] = self.net.move_scores(obs, flat_rows, ids, self.features(obs, flat_rows, ids, h))
        games = np.flatnonzero(np.ones(len(legal_ids), bool) if rows is None else rows)
        games = games[np.asarray(legal_count)[games] > 1]
        if games.size:
            seeds = self.rng.integers(0, 2**62, games.size)
            S = batch._S[games]
            plies = S[:, core.COL_IN_HANDS] + batch._P[core.P_DECK_SIZE] - S[:, core.COL_STOCK_POS]
            exact = plies <= self.C[C_EXACT_CARDS]
            if self.weight == 1.0:  # the network's values alone where the search is not exact: search the rest
                games, seeds, exact = games[exact], seeds[exact], exact[exact]
        if games.size:
            values = search_values(batch, games, seeds, self.C, threads=max_threads())
            exact = exact[:, None]
            legal = np.isfinite(q[games])
            q[games] = np.where(legal, blend(values, np.where(legal, q[games], 0.0), self.weight, exact), -np.inf)
        return legal_ids[np.arange(len(legal_ids)), np.argmax(q, axis=1)]


def load_batch_policy(argument: str, seed: int = 0) -> tuple[NetSearchBatchPolicy, dict]:
    checkpoint, weight, options = parse_spec(argument)
    policy = NetSearchBatchPolicy(checkpoint, weight, options, seed)
    return policy, policy.meta


def make_net_search_agent(argument: str, seed=None) -> NetSearchAgent:
    """Factory of ``netsearch:CHECKPOINT[:weight=..,...]`` agent specs (the ``scopa.agents`` entry point)."""
    checkpoint, weight, options = parse_spec(argument)
    return NetSearchAgent(checkpoint, weight, seed=seed, **options)
