"""The Scopa AEC env as RLlib sees it: opponent seats played inside, learner seats outside.

::

    aec = OpponentSeats(scopa_v0.raw_env(action_mode="select"), opponents={"greedy": 1})
    env = PettingZooEnv(aec)            # RLlib's wrapper: ray.rllib.env.wrappers.pettingzoo_env

=====================  ===================================================================
Learner seats          one seat drawn uniformly each episode, plus every seat whose drawn
                       opponent is ``"self"`` (the live learner plays it too)
Opponent seats         an :class:`agents.base.Agent` drawn per seat and episode from the
                       ``opponents`` mixture (baselines, ``ppo:``/``rllib:`` checkpoints)
                       or, with probability ``pool_fraction``, a frozen self-play snapshot
                       of the learner; it plays inside ``step`` and never reaches RLlib
Observation / mask      the AEC env's ``{"observation", "action_mask"}`` of the seat to move
Rewards                the AEC env's, unchanged: a learner seat's reward is accumulated over
                       the opponents' moves and delivered at its next observation (or at
                       the end), so a hand ended by an opponent's card still counts
=====================  ===================================================================

The wrapper is a plain PettingZoo ``BaseWrapper`` around the ``raw_env`` (whose ``step``
raises on an illegal action, so a sampling bug cannot go unnoticed). Opponent seats that
are done are stepped out of ``agents`` here, so RLlib's ``PettingZooEnv`` only ever sees
learner seats. No ray import in this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from agents.base import Agent
from train.env import ActionCoder
from train.opponents import OpponentSampler

LIVE = "self"
"""Opponent spec meaning "this seat is played by the live learner too" (shared self-play)."""

SNAPSHOT_PREFIX = "pool:"
"""Specs of in-memory self-play snapshots: ``pool:iter_<N>``."""


class _LiveSeat(Agent):
    """Marker agent: the seat is played by the learner through RLlib."""

    name = LIVE

    def act(self, view):  # pragma: no cover - never asked to move
        raise RuntimeError("a live learner seat is played by RLlib, not inside the env")


class SnapshotSampler(OpponentSampler):
    """:class:`~train.opponents.OpponentSampler` whose pool holds in-memory snapshot agents too."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.snapshots: dict[str, Agent] = {}

    def add_snapshot(self, spec: str, agent: Agent) -> None:
        agent.spec = spec
        self.snapshots[spec] = agent
        self.add_checkpoint(spec)
        self.snapshots = {s: a for s, a in self.snapshots.items() if s in self.pool}

    def agent(self, spec: str) -> Agent:
        if spec == LIVE:
            return _LiveSeat()
        if spec in self.snapshots:
            return self.snapshots[spec]
        return super().agent(spec)


class OpponentSeats(BaseWrapper):
    """Plays the opponent seats of a Scopa ``raw_env`` inside ``step``. See the module docstring.

    Args:
        env: a :class:`scopa_env.aec.scopa_v0.raw_env`.
        opponents: agent spec, list or ``{spec: weight}`` mixture; ``"self"`` is the live learner.
        pool_fraction: probability that an opponent seat is a self-play snapshot (once there is one).
        pool_size: snapshots kept.
    """

    def __init__(self, env, opponents: Any = "random", pool_fraction: float = 0.0, pool_size: int = 5) -> None:
        super().__init__(env)
        self.sampler = SnapshotSampler(opponents, pool_fraction=pool_fraction, pool_size=pool_size)
        self.coder = ActionCoder(env.unwrapped.rules, env.unwrapped.action_mode)
        self._rng: np.random.Generator | None = None
        self.seat_agents: list[Agent | None] = []
        self.opponent_moves = 0

    # --- self-play pool (called on every env runner by the trainer) -------------------

    def add_snapshot(self, spec: str, agent: Agent) -> None:
        self.sampler.add_snapshot(spec, agent)

    def set_opponents(self, weights) -> None:
        self.sampler.set_weights(weights)

    # --- episode -------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng((seed, 1))
        elif self._rng is None:
            self._rng = np.random.default_rng()
        rng = self._rng
        raw = self.env.unwrapped
        n = raw.num_players
        learner = int(rng.integers(n))
        # The dealer is random too, so the learner does not always lead (as in train.env).
        options = {"dealer": int(rng.integers(n)), **(options or {})}
        self.env.reset(seed=None if seed is None else int(rng.integers(2**31)), options=options)
        self.seat_agents = [None if s == learner else self.sampler.sample(rng) for s in range(n)]
        self.seat_agents = [None if isinstance(a, _LiveSeat) else a for a in self.seat_agents]
        self._advance()

    def step(self, action) -> None:
        self.env.step(action)
        self._advance()

    def learner_seats(self) -> list[int]:
        return [s for s, a in enumerate(self.seat_agents) if a is None]

    def opponent_names(self) -> list[str | None]:
        return [None if a is None else getattr(a, "spec", a.name) for a in self.seat_agents]

    # --- internals -----------------------------------------------------------------------

    def _advance(self) -> None:
        """Play opponent seats (and step out finished ones) until a learner seat is selected."""
        raw = self.env.unwrapped
        while raw.agents:
            agent_id = raw.agent_selection
            seat = raw.possible_agents.index(agent_id)
            opponent = self.seat_agents[seat]
            if opponent is None:
                return
            if raw.terminations[agent_id] or raw.truncations[agent_id]:
                self.env.step(None)
                continue
            move = opponent.act(raw.game.view(seat))
            self._play(move.card, move.mask)
            self.opponent_moves += 1

    def _play(self, card: int, mask: int) -> None:
        """Step the env with the action ids of one move (several in "select" mode)."""
        raw = self.env.unwrapped
        pairs = raw.game.legal_pairs()
        if (card, mask) not in pairs:
            raise ValueError(f"opponent chose an illegal move ({card}, {mask}); legal: {pairs}")
        pending, selected = None, 0
        while True:
            legal = self.coder.legal_ids(pairs, pending, selected)
            if self.coder.moves is not None:
                action = self.coder.moves.index[(card, mask)]
            elif pending is None:
                action = card
            elif selected == mask and self.coder.confirm in legal:
                action = self.coder.confirm  # 40, or 52 with the 52-card deck
            else:
                confirm = self.coder.confirm
                action = next(c for c in legal if c != confirm and mask >> c & 1 and not selected >> c & 1)
            self.env.step(action)
            pair, pending, selected = self.coder.resolve(pairs, action, pending, selected)
            if pair is not None:
                return


def make_aec_env(env_config: dict) -> OpponentSeats:
    """The wrapped AEC env of one env runner slot, from the trainer's ``env_config``."""
    from scopa_env import scopa_v0

    raw = scopa_v0.raw_env(
        num_players=env_config["num_players"],
        rules=env_config["rules"],
        episode=env_config["episode"],
        reward=env_config["reward"],
        action_mode=env_config["action_mode"],
    )
    return OpponentSeats(
        raw,
        opponents=env_config["opponents"],
        pool_fraction=env_config.get("pool_fraction", 0.0),
        pool_size=env_config.get("pool_size", 5),
    )


def make_rllib_env(env_config: dict):
    """RLlib's ``PettingZooEnv`` around :func:`make_aec_env` (the env creator registered with ray)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(make_aec_env(dict(env_config)))


def scopa_envs(env_runner) -> list[OpponentSeats]:
    """The :class:`OpponentSeats` wrappers inside one RLlib env runner (none on a runner without envs)."""
    vec = getattr(env_runner, "env", None)
    out = []
    for e in getattr(vec, "envs", None) or []:
        inner = getattr(e.unwrapped, "env", None)
        if isinstance(inner, OpponentSeats):
            out.append(inner)
    return out
