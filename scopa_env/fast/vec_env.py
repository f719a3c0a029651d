"""Vectorized single-learner Scopa on the compiled core: a Gymnasium ``VectorEnv`` and an SB3 ``VecEnv``.

In every sub-environment the learner holds one seat (``learner_seat``: a seat, or
``"random"`` for one drawn per game) and every other seat, partners included, is a
compiled opponent (``"random"``, ``"greedy"``, ``"heuristic"``, or a mixture such as
``{"greedy": 0.5, "heuristic": 0.5}`` drawn per game at every reset) that moves inside
:meth:`~scopa_env.fast.batch.BatchedScopa.step`, so each step returns at the learner's
next turn. Episodes auto-reset in the same step.

=====================  =========================================================================
Observation            :class:`ScopaVectorEnv`: ``Dict(observation=Box(float32, (size,)),
                       action_mask=Box(int8, (A,)))`` per sub-env, as the AEC env's;
                       :class:`ScopaSB3VecEnv`: the ``Box`` alone, masks from ``action_masks()``
Actions                ``Discrete(41)`` ("select"; 53 for ``french_52``) or ``Discrete(N_moves)`` ("move"); dense
                       "move" masks cost more than the game itself: prefer "select"
Reward                 the learner's reward of :mod:`scopa_env.aec.scopa_v0` (``reward="game"``:
                       +-1 at the end; ``"points"``: the hand-point margin at each hand end)
Termination            the game (or hand, ``episode="hand"``) ended; never truncated
Infos                  at an episode end: final observation (Gymnasium ``final_obs``, SB3
                       ``terminal_observation``), ``winner`` (side), ``final_scores`` and
                       ``opponent`` (the finished game's opponent kind: Gymnasium its index
                       in ``OPPONENT_KINDS``, SB3 its name); at a
                       hand end: ``hand_score`` (``(sides, 23)``, fields
                       :data:`~scopa_env.fast.core.SCORE_FIELDS`) and ``learner_side``
=====================  =========================================================================

Illegal actions raise ``ValueError`` naming the sub-environment (nothing is coerced).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from scopa_env.engine.bounds import SEED_LIMIT, SEED_RULE, check_seed
from scopa_env.engine.game import sides_for
from scopa_env.engine.observation import observation_bounds
from scopa_env.engine.rules import Rules
from scopa_env.fast.batch import OPPONENT_KINDS, BatchedScopa


def check_seeds(seed: int | list[int] | np.ndarray | None, n: int) -> int | list[int] | None:
    """``seed`` once it follows the seed rule (:func:`scopa_env.engine.bounds.check_seed`): ``None``, an
    int (sub-environment ``i`` gets ``seed + i``, which must stay below 2**63 too) or ``n`` ints."""
    if seed is None or isinstance(seed, (int, np.integer, bool, np.bool_, float)):
        seed = check_seed(seed)
        if seed is not None and seed + n - 1 >= SEED_LIMIT:
            raise ValueError(
                f"seed {seed} gives sub-environment {n - 1} the seed {seed + n - 1}; every seed must be {SEED_RULE}"
            )
        return seed
    if not isinstance(seed, (list, tuple, np.ndarray)) or len(seed) != n:
        raise ValueError(f"seed must be an int or {n} ints (one per sub-environment), got {seed!r}")
    return [check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]


def _seeds(seed: int | list[int] | None, n: int, rng: np.random.Generator) -> np.ndarray:
    seed = check_seeds(seed, n)
    if seed is None:
        return rng.integers(0, 2**63 - 1, size=n, dtype=np.int64)
    if isinstance(seed, int):
        return seed + np.arange(n, dtype=np.int64)
    if any(s is None for s in seed):
        raise ValueError(f"seed must be an int or {n} ints (one per sub-environment), got {seed!r}")
    return np.array(seed, np.int64)


class _Learner:
    """What both vector envs share: the batch, spaces and the learner's view of a step."""

    def _setup(
        self,
        num_envs: int,
        num_players: int,
        rules: Rules | str | None,
        opponent: str | dict[str, float],
        learner_seat: int | str,
        action_mode: str,
        episode: str,
        reward: str,
    ) -> None:
        if opponent is None:
            raise ValueError(f"opponent must be one of {OPPONENT_KINDS} or a dict of them to weights, got None")
        self.batch = BatchedScopa(
            num_envs,
            num_players,
            rules,
            action_mode=action_mode,
            episode=episode,
            reward=reward,
            opponent=opponent,
            learner_seat=learner_seat,
        )
        self.side_of = np.array(sides_for(num_players, self.batch.rules), np.int64)
        self._rows = np.arange(num_envs)
        low, high = observation_bounds(self.batch.layout, self.batch.rules)
        self.box = spaces.Box(low=low, high=high, dtype=np.float32)
        self.num_actions = self.batch.num_actions
        self._np_rng = np.random.default_rng()

    def action_masks(self) -> np.ndarray:
        """bool ``(num_envs, A)``: the learner's legal actions (for sb3_contrib's MaskablePPO)."""
        return self.batch.dense_move_mask().astype(bool)


class ScopaVectorEnv(VectorEnv, _Learner):
    """Gymnasium vector env: one learner seat per game against compiled opponents. See the module docstring.

    Args:
        num_envs: games stepped together.
        num_players: 2, 3, 4 or 6 (8: ``french_52``).
        rules: preset name or :class:`~scopa_env.engine.rules.Rules` (unsupported: ``NotImplementedError``).
        opponent: ``"random"``, ``"greedy"``, ``"heuristic"``, or a mixture
            ``{kind: weight}`` (each game draws its opponents' kind at every reset).
        learner_seat: the learner's seat, or ``"random"``.
        action_mode, episode, reward: as in :mod:`scopa_env.aec.scopa_v0`.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        rules: Rules | str | None = None,
        opponent: str | dict[str, float] = "random",
        learner_seat: int | str = 0,
        action_mode: str = "select",
        episode: str = "game",
        reward: str = "game",
    ) -> None:
        self._setup(num_envs, num_players, rules, opponent, learner_seat, action_mode, episode, reward)
        self.num_envs = num_envs
        self.single_observation_space = spaces.Dict(
            {
                "observation": self.box,
                "action_mask": spaces.Box(low=0, high=1, shape=(self.num_actions,), dtype=np.int8),
            }
        )
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

    def _obs(self) -> dict[str, np.ndarray]:
        return {"observation": self.batch.obs.copy(), "action_mask": self.batch.dense_move_mask()}

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        seed = check_seeds(seed, self.num_envs)
        if seed is not None:
            self._np_rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else None)
        self.batch.reset(_seeds(seed, self.num_envs, self._np_rng))
        return self._obs(), {}

    def step(self, actions):
        b = self.batch
        b.step(actions)
        learner = b.to_play  # the learner's seat (after an auto-reset, the new game's)
        terminated = b.terminated
        seat = np.where(terminated, b.final_obs_seat, learner)
        rewards = b.rewards[self._rows, seat].astype(np.float32)
        infos: dict[str, Any] = {}
        if terminated.any():
            infos["final_obs"] = np.array(
                [{"observation": b.final_obs[i].copy()} if terminated[i] else None for i in self._rows], dtype=object
            )
            infos["_final_obs"] = terminated
            infos["winner"] = np.where(terminated, b.winner, -1)
            infos["_winner"] = terminated
            infos["opponent"] = np.where(terminated, b.final_opponent, -1)
            infos["_opponent"] = terminated
            infos["final_scores"] = np.where(terminated[:, None], b.final_scores, 0)
            infos["_final_scores"] = terminated
        hand_ended = b.hand_ended
        if hand_ended.any():
            infos["hand_score"] = np.where(hand_ended[:, None, None], b.hand_score, 0.0)
            infos["_hand_score"] = hand_ended
            infos["learner_side"] = self.side_of[seat]
            infos["_learner_side"] = hand_ended
        return self._obs(), rewards, terminated, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        return _Learner.action_masks(self)


try:  # Stable-Baselines3 is an optional dependency (the "train" extra)
    from stable_baselines3.common.vec_env import VecEnv as _SB3VecEnv
except ImportError:  # pragma: no cover - exercised only without the extra

    class _SB3VecEnv:  # type: ignore[no-redef]
        def __init__(self, *args, **kwargs) -> None:
            raise ImportError("ScopaSB3VecEnv needs stable-baselines3: pip install 'scopa-rl[train]'")


class ScopaSB3VecEnv(_SB3VecEnv, _Learner):
    """Stable-Baselines3 ``VecEnv`` with ``action_masks()`` (works with sb3_contrib's MaskablePPO).

    Arguments as :class:`ScopaVectorEnv`. Observations are the ``Box`` part only.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        rules: Rules | str | None = None,
        opponent: str | dict[str, float] = "random",
        learner_seat: int | str = 0,
        action_mode: str = "select",
        episode: str = "game",
        reward: str = "game",
    ) -> None:
        self._setup(num_envs, num_players, rules, opponent, learner_seat, action_mode, episode, reward)
        self.render_mode = None
        super().__init__(num_envs, self.box, spaces.Discrete(self.num_actions))
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        if seeds is not None:
            seeds = [s if s is not None else int(self._np_rng.integers(2**62)) for s in seeds]
            self._np_rng = np.random.default_rng(seeds)  # later resets without a seed follow from it
        self.batch.reset(_seeds(seeds, self.num_envs, self._np_rng))
        self._reset_seeds()
        return self.batch.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        b = self.batch
        b.step(self._actions)
        terminated = b.terminated
        seat = np.where(terminated, b.final_obs_seat, b.to_play)
        rewards = b.rewards[self._rows, seat].astype(np.float32)
        hand_ended = b.hand_ended
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(hand_ended):
            infos[i]["hand_score"] = b.hand_score[i].copy()
            infos[i]["learner_side"] = int(self.side_of[seat[i]])
        for i in np.flatnonzero(terminated):
            infos[i]["terminal_observation"] = b.final_obs[i].copy()
            infos[i]["winner"] = int(b.winner[i])
            infos[i]["opponent"] = OPPONENT_KINDS[int(b.final_opponent[i])]
            infos[i]["final_scores"] = b.final_scores[i].tolist()
            infos[i]["TimeLimit.truncated"] = False
        return b.obs.copy(), rewards, terminated, infos

    def action_masks(self) -> np.ndarray:
        return _Learner.action_masks(self)

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self, attr_name)  # AttributeError for unknown names, as SB3 expects
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"ScopaSB3VecEnv sub-environments have no settable attribute {attr_name!r}")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        idx = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        raise AttributeError(f"ScopaSB3VecEnv sub-environments have no method {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)


__all__ = ["ScopaSB3VecEnv", "ScopaVectorEnv"]
