"""Training on the compiled core (``vec_env: fast``) and potential-based reward shaping.

``vec_env: fast`` replaces the ``n_envs`` Python envs by one
:class:`~scopa_env.fast.vec_env.ScopaSB3VecEnv`: ``n_envs`` games stepped together in
compiled code, the learner in a random seat of each, every other seat played by a
compiled opponent (``random``, ``greedy``, ``heuristic`` or a weighted mixture of them,
drawn per game). Observations, masks and rewards are the Python env's (the differential
test in ``tests/test_fast.py`` checks it), so checkpoints, evaluation and play do not
change; only the opponents are limited to the compiled ones (no checkpoints, no
self-play pool, no curriculum) and the rules to those the core supports.

``reward_shaping: true`` adds :class:`PileShaping`, potential-based shaping (Ng, Harada and
Russell, 1999): every step also pays ``gamma * phi(next) - phi(now)``, where ``phi`` is a
smooth guess of the hand's point margin from the captured piles in the observation (the
settebello and scope exactly, cards, coins and primiera through a ``tanh`` of the lead),
and ``phi`` is 0 at the end of an episode. With ``gamma = 1`` the shaped return of an
episode differs from the true one by ``-phi(first observation)`` only (0, or what the
opponents captured before the learner's first decision), which no action of the learner
changes, so the best policy does not change; the learner just hears about a capture
when it is made instead of at the end of the hand.
Evaluation always uses the unshaped game.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from agents.compiled import COMPILED_BASELINES
from scopa_env.engine.cards import COINS, NUM_CARDS, NUM_RANKS, RANK_OF, SUIT_OF
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.setup import GameSetup

COMPILED_OPPONENTS = COMPILED_BASELINES
"""Opponent specs the compiled core plays itself (:data:`agents.compiled.COMPILED_BASELINES`)."""

CARDS_SCALE, COINS_SCALE, PRIMIERA_SCALE = 5.0, 2.5, 15.0
"""Leads (in cards, coins, primiera points) at which ``tanh`` gives about 0.76 of the point."""


def fast_config_problem(cfg) -> str | None:
    """Why ``cfg`` cannot train on the compiled core, or ``None`` when it can."""
    from train.opponents import normalize_weights

    wrong = [s for s in normalize_weights(cfg.opponents) if s not in COMPILED_OPPONENTS]
    if wrong:
        return f"opponents {wrong} are not compiled; vec_env: fast plays only {list(COMPILED_OPPONENTS)}"
    if cfg.selfplay:
        return "selfplay needs checkpoint opponents; vec_env: fast plays only compiled opponents"
    if cfg.curriculum:
        return "curriculum is not supported with vec_env: fast; use an opponents mixture"
    from scopa_env.fast import check_supported

    try:
        check_supported(cfg.setup.rules)
    except NotImplementedError as exc:
        return str(exc)
    return None


def make_fast_vec_env(cfg, opponents: Any, seed: int) -> VecEnv:
    """``cfg.n_envs`` compiled games, seeded with ``seed + i``, with the infos the trainer logs."""
    from scopa_env.fast.vec_env import ScopaSB3VecEnv
    from train.opponents import normalize_weights

    weights = normalize_weights(opponents)
    opponent: str | dict[str, float] = next(iter(weights)) if len(weights) == 1 else weights
    venv = ScopaSB3VecEnv(
        cfg.n_envs,
        cfg.num_players,
        cfg.rules,
        opponent=opponent,
        learner_seat="random",
        action_mode=cfg.action_mode,
        episode=cfg.episode,
        reward=cfg.reward,
    )
    venv.seed(seed)
    return HandScoreInfos(venv)


class HandScoreInfos(VecEnvWrapper):
    """Puts the compiled core's hand scores into the infos as the Python env does (``hand_scores``, ``side``)."""

    def reset(self) -> np.ndarray:
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        batch = self.venv.batch
        for i, info in enumerate(infos):
            if "hand_score" in info:
                info["hand_scores"] = [batch.hand_score_dicts(i)]
                info["side"] = info["learner_side"]
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()


def pile_potential(obs: np.ndarray, layout: ObservationLayout, primiera_values: tuple[int, ...]) -> np.ndarray:
    """``phi`` of :class:`PileShaping` for a batch of observations ``(B, size)`` (float64 ``(B,)``).

    Own side minus the mean of the other sides of: the settebello (card 6), scope (the raw
    counts), and ``tanh`` of the leads in cards, coins (cards 0-9; with the 52-card deck also
    its diamond pictures 40-42) and primiera (best card of each suit on the rules' scale, one
    value per rank: 10 or 13 of them).
    """
    obs = np.asarray(obs, np.float64)
    own = obs[:, layout["own_pile"]]
    width = own.shape[1]
    others = obs[:, layout["other_piles"]].reshape(len(obs), -1, width)
    ranks = len(primiera_values)
    if width == NUM_CARDS:  # ids in suit, rank order
        prim = np.tile(np.asarray(primiera_values, np.float64), 4)
        coin_ids: Any = slice(0, NUM_RANKS)
        by_suit: Any = None
    else:  # the 52-card deck: each suit's Jack, Queen and King after the 40
        prim = np.array([primiera_values[RANK_OF[c] - 1] for c in range(width)], np.float64)
        coin_ids = np.array([c for c in range(width) if SUIT_OF[c] == COINS])
        by_suit = np.array(sorted(range(width), key=lambda c: (SUIT_OF[c], RANK_OF[c])))

    def primiera(piles: np.ndarray) -> np.ndarray:  # (..., cards) -> (...)
        values = piles * prim
        if by_suit is not None:
            values = values[..., by_suit]
        return values.reshape(*piles.shape[:-1], 4, ranks).max(-1).sum(-1)

    cards = own.sum(1) - others.sum(2).mean(1)
    coins = own[:, coin_ids].sum(1) - others[:, :, coin_ids].sum(2).mean(1)
    sette = own[:, 6] - others[:, :, 6].mean(1)
    prim_lead = primiera(own) - primiera(others).mean(1)
    scope = obs[:, layout["scope"]]
    scope_lead = scope[:, 0] - scope[:, 1:].mean(1)
    return (
        np.tanh(cards / CARDS_SCALE)
        + np.tanh(coins / COINS_SCALE)
        + sette
        + np.tanh(prim_lead / PRIMIERA_SCALE)
        + scope_lead
    )


class PileShaping(VecEnvWrapper):
    """Potential-based reward shaping from the piles (see the module docstring).

    Args:
        venv: the learner's vector env (observations from the learner's seat).
        num_players: for the observation layout.
        rules: preset name or rules (its primiera scale).
        gamma: the learner's discount (the shaping term is ``gamma * phi' - phi``).
    """

    def __init__(self, venv: VecEnv, num_players: int, rules: Any, gamma: float) -> None:
        super().__init__(venv)
        setup = GameSetup.of(rules, num_players)
        self.layout = setup.layout
        self.primiera = tuple(setup.rules.primiera_values)
        self.gamma = float(gamma)
        self.phi = np.zeros(venv.num_envs)

    def potential(self, obs: np.ndarray) -> np.ndarray:
        return pile_potential(obs, self.layout, self.primiera)

    def reset(self) -> np.ndarray:
        obs = self.venv.reset()
        self.phi = self.potential(obs)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        nxt = self.potential(obs)  # after a done, obs is the next episode's first observation
        shaped = rewards + self.gamma * np.where(dones, 0.0, nxt) - self.phi
        self.phi = nxt
        return obs, shaped.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()
