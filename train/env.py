"""A single-agent Gymnasium view of Scopa: the learner holds one seat, opponents the rest.

::

    from train.env import ScopaGymEnv
    env = ScopaGymEnv(opponents="greedy", action_mode="select", episode="hand", reward="points")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(env.action_masks().nonzero()[0][0]))

=====================  ===================================================================
Learner seat           drawn uniformly each episode (``learner_seat=None``), teams included
                       (with 4 or 6 players the partners are opponents' agents too)
Observation            ``Box(float32)``: exactly the AEC env's ``observation`` from the
                       learner's seat (:func:`scopa_env.engine.observation.write_observation`)
Action mask            :meth:`ScopaGymEnv.action_masks` (bool), as sb3-contrib's
                       ``MaskablePPO`` expects; it also works through ``SubprocVecEnv``
Actions                "move": ``Discrete(16200)``; "select": ``Discrete(41)``, or
                       ``Discrete(53)`` with the 52-card deck of ``french_52`` (see
                       :mod:`scopa_env.engine.actions`; that preset has no "move" mode)
Rewards                as :mod:`scopa_env.aec.scopa_v0`: ``reward="points"`` gives the hand-point
                       margin at every hand end; ``reward="game"`` +1/-1 (0 for a tied hand)
                       at the episode end
Episode                ``episode="hand"`` or ``"game"``
=====================  ===================================================================

The env drives :class:`scopa_env.engine.game.Game` directly: after the learner's move the
opponents play until it is the learner's turn again or the episode is over, and every
hand end on the way is credited to the learner in that same step. In particular a hand
ended by an opponent's card still delivers the learner's (possibly negative) reward; the
public PettingZoo+SB3 tutorial drops it.

Opponents are :class:`agents.base.Agent` objects acting on ``Game.view(seat)``; which agent
sits where is drawn each episode from an :class:`~train.opponents.OpponentSampler`.

Illegal actions: with ``illegal_action="raise"`` (the default for code) they raise
``ValueError`` listing the legal ones; with ``"lose"`` (what SB3's ``check_env``, which
samples unmasked actions, needs) the episode ends with ``illegal_reward`` and
``info["illegal_action"] = True``. A masked learner never takes either path.

Game scores (the ``scores`` entries, points / target) have no upper bound: tied sides past
the target play on. ``score_bound=b`` makes the Box finite: those entries are clipped to
``[0, b]`` (``[-b, b]`` under piva), which only a game far past its target reaches.

Gymnasium: importing this module registers :data:`ENV_ID` (``"scopa_rl/Scopa-v0"``)::

    import gymnasium as gym
    env = gym.make("train.env:scopa_rl/Scopa-v0", opponents="greedy")  # imports train.env first

What ``gym.make`` returns differs from ``ScopaGymEnv()`` in two defaults only
(:data:`REGISTERED_DEFAULTS`): ``illegal_action="lose"`` (the env checkers of Gymnasium and
SB3 step random, unmasked actions) and ``score_bound=SCORE_BOUND``; every keyword of
:class:`ScopaGymEnv` can be passed to ``make``. ``scopa train`` builds its envs directly and
is not affected.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from scopa_env.engine.actions import confirm_action, move_enumeration, num_select_actions, select_options
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.modes import ACTION_MODES
from scopa_env.engine.observation import ObservationLayout, observation_bounds, write_observation
from scopa_env.engine.rules import Rules
from scopa_env.engine.setup import GameSetup, resolve_setup
from train.opponents import OpponentSampler

ILLEGAL_ACTION_MODES = ("raise", "lose")

ENV_ID = "scopa_rl/Scopa-v0"
"""The Gymnasium id of :class:`ScopaGymEnv` (registered when this module is imported)."""
SCORE_BOUND = 4.0
"""The registered env's bound on the ``scores`` entries: four times the target."""
_GAME_DEFAULTS = {"rules": None, "num_players": 2, "action_mode": "select", "episode": "hand", "reward": "points"}
"""The game's arguments of :class:`ScopaGymEnv` and their defaults (``setup=`` gives them all at once)."""
REGISTERED_DEFAULTS: dict[str, Any] = {"illegal_action": "lose", "score_bound": SCORE_BOUND}
"""Keywords ``gym.make(ENV_ID)`` passes to :class:`ScopaGymEnv` unless the caller overrides them."""


class ActionCoder:
    """Legal action ids and their meaning for one rules object and action mode.

    The same logic as :class:`scopa_env.aec.scopa_v0.raw_env`, over ``(card, captured_mask)``
    pairs, so that the env and checkpoint agents (which see a :class:`PlayerView`) share it.
    In "select" mode a move can take several actions: ``pending`` is the hand card chosen
    and ``selected`` the table cards chosen so far.

    ``rules`` may be a :class:`~scopa_env.engine.setup.GameSetup`, whose action mode (and
    enumeration) is used unless ``action_mode`` names another.
    """

    def __init__(self, rules: Rules | GameSetup, action_mode: str | None = None) -> None:
        if isinstance(rules, GameSetup):
            setup = rules if action_mode is None else rules.with_modes(action_mode=action_mode)
            self.action_mode = setup.action_mode
            self.moves = setup.moves
            self.num_actions = setup.num_actions
            self.confirm = setup.confirm
            return
        if action_mode not in ACTION_MODES:
            raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
        self.action_mode = action_mode
        self.moves = move_enumeration(rules) if action_mode == "move" else None
        self.num_actions = len(self.moves) if self.moves is not None else num_select_actions(rules)
        self.confirm = confirm_action(rules)
        """"select" mode's CONFIRM: 40, or 52 with the 52-card deck."""

    def legal_ids(self, pairs: list[tuple[int, int]], pending: int | None, selected: int) -> list[int]:
        if self.moves is not None:
            index = self.moves.index
            return [index[p] for p in pairs]
        if pending is None:
            return sorted({c for c, _ in pairs})
        nxt, can_confirm, _ = select_options([m for c, m in pairs if c == pending], selected)
        return nxt + [self.confirm] if can_confirm else nxt

    def resolve(
        self, pairs: list[tuple[int, int]], action: int, pending: int | None, selected: int
    ) -> tuple[tuple[int, int] | None, int | None, int]:
        """``(pair or None, pending, selected)`` after a legal ``action``: the move to play
        now, or ``None`` and the new selection state while a "select" choice goes on."""
        if self.moves is not None:
            return self.moves.pairs[action], None, 0
        if pending is None:
            outcomes = [m for c, m in pairs if c == action]
            if len(outcomes) == 1:
                return (action, outcomes[0]), None, 0
            return None, action, 0
        if action == self.confirm:
            return (pending, selected), None, 0
        selected |= 1 << action
        _, _, candidates = select_options([m for c, m in pairs if c == pending], selected)
        if len(candidates) == 1:
            return (pending, candidates[0]), None, 0
        return None, pending, selected


class _ViewAsGame:
    """The attributes of :class:`Game` that :func:`write_observation` reads, from a
    :class:`PlayerView` (other hands are only counted, so they are filler bits)."""

    def __init__(self, view: PlayerView) -> None:
        self.rules = view.rules
        self.num_players = view.num_players
        self.num_sides = view.num_sides
        self.side_of = view.side_of
        self.hands = [view.hand if s == view.seat else (1 << k) - 1 for s, k in enumerate(view.hand_counts)]
        self.table = view.table
        self.piles = view.piles
        self.played = view.played
        self.scope = view.scope
        self.scores = view.scores
        self.stock = range(view.stock_count)
        self.dealer = view.dealer
        self.current = view.current
        self.last_capturer = view.last_capturer
        self.revealed = list(view.revealed) or [0] * view.num_players
        self.declare_queue = list(view.declare_queue)
        self.wild_rank = view.wild_rank


def observe_view(
    view: PlayerView, layout: ObservationLayout, select_card: int | None = None, select_captured: int = 0
) -> np.ndarray:
    """The AEC observation vector of ``view.seat``, built from its information set only."""
    out = np.empty(layout.size, dtype=np.float32)
    return write_observation(_ViewAsGame(view), view.seat, layout, out, select_card, select_captured)


class ScopaGymEnv(gym.Env):
    """Scopa from one seat, the others played by opponents. See the module docstring.

    Args:
        num_players: 2, 3, 4 or 6 (8 for ``french_52``).
        rules: preset name or :class:`~scopa_env.engine.rules.Rules`.
        episode: "hand" or "game".
        reward: "points" (hand-point margin at each hand end) or "game" (+1/-1 at the end).
        action_mode: "move" or "select".
        opponents: an :class:`~train.opponents.OpponentSampler`, an agent spec such as
            ``"greedy"``, or a ``{spec: weight}`` mixture.
        learner_seat: a fixed seat, or ``None`` for a uniformly random seat each episode.
        illegal_action: "raise" or "lose" (see the module docstring).
        illegal_reward: the reward of an illegal action under "lose".
        score_bound: ``None`` (the ``scores`` entries are unbounded) or a bound ``b > 0``: they are
            clipped to ``[0, b]`` (``[-b, b]`` under piva) and the Box says so (see the module docstring).
        setup: instead of ``num_players``, ``rules`` and the modes, a
            :class:`~scopa_env.engine.setup.GameSetup` (``env.setup`` is the env's own).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        num_players: int = 2,
        rules: Rules | str | None = None,
        episode: str = "hand",
        reward: str = "points",
        action_mode: str = "select",
        opponents: OpponentSampler | str | dict[str, float] = "random",
        learner_seat: int | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        score_bound: float | None = None,
        *,
        setup: GameSetup | None = None,
    ) -> None:
        super().__init__()
        self.setup = resolve_setup(
            setup,
            _GAME_DEFAULTS,
            rules=rules,
            num_players=num_players,
            action_mode=action_mode,
            episode=episode,
            reward=reward,
        )
        """The game (rules, player count, modes) and what it fixes: :class:`~scopa_env.engine.setup.GameSetup`."""
        self.rules = self.setup.rules
        num_players, episode, reward = self.setup.num_players, self.setup.episode, self.setup.reward
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}")
        if score_bound is not None and (isinstance(score_bound, bool) or not 0 < score_bound < np.inf):
            raise ValueError(f"score_bound must be None or a finite number > 0, got {score_bound!r}")
        if learner_seat is not None and not 0 <= learner_seat < num_players:
            raise ValueError(f"learner_seat must be None or a seat in 0..{num_players - 1}, got {learner_seat!r}")
        self.num_players = num_players
        self.episode = episode
        self.reward_mode = reward
        self.coder = ActionCoder(self.setup)
        self.action_mode = self.setup.action_mode
        self.learner_seat = learner_seat
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.opponents = opponents if isinstance(opponents, OpponentSampler) else OpponentSampler(opponents)
        self.layout = self.setup.layout
        low, high = observation_bounds(self.layout, self.rules)
        self._score_clip: tuple[float, float] | None = None
        if score_bound is not None:
            scores = self.layout["scores"]
            self._score_clip = (-float(score_bound) if self.rules.piva else 0.0, float(score_bound))
            low[scores], high[scores] = self._score_clip
        self.observation_space = spaces.Box(low=low, high=high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.coder.num_actions)
        self.game: Game | None = None
        self.seat = 0
        self._seats: list[Any] = []
        self._over = True

    # --- opponents (also reachable through VecEnv.env_method) ----------------------

    def set_opponents(self, weights: str | dict[str, float]) -> None:
        """Replace the opponent mixture (from the next episode on)."""
        self.opponents.set_weights(weights)

    def add_pool_checkpoint(self, path: str) -> None:
        """Add a past checkpoint of the learner to the self-play pool."""
        self.opponents.add_checkpoint(path)

    # --- episode -----------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        n = self.num_players
        self.seat = int(rng.integers(n)) if self.learner_seat is None else self.learner_seat
        # The dealer is random too, so the learner does not always lead (or always follow).
        dealer = int(rng.integers(n))
        self.game = Game(n, self.rules, seed=rng, dealer=dealer, auto_next_hand=self.episode == "game")
        self._seats = [None if s == self.seat else self.opponents.sample(rng) for s in range(n)]
        self._pending: int | None = None
        self._selected = 0
        self._legal: list[int] | None = None
        self._over = False
        self._hand_scores: list[list[dict]] = []
        self._episode_reward = 0.0
        self._play_opponents()  # no hand can end before the learner's first card
        return self._observe(), {"seat": self.seat, "opponents": self._opponent_names()}

    def step(self, action):
        if self._over:
            raise RuntimeError("step() after the episode ended; call reset()")
        legal = self._legal_ids()
        if isinstance(action, np.ndarray):
            action = action.item()
        action = int(action)
        if action not in legal:
            if self.illegal_action == "raise":
                raise ValueError(
                    f"action {action} is illegal for the learner (seat {self.seat}); legal actions: {legal}"
                )
            self._over = True
            return self._observe(), self.illegal_reward, True, False, {"illegal_action": True, "seat": self.seat}
        pair, self._pending, self._selected = self.coder.resolve(
            self.game.legal_pairs(), action, self._pending, self._selected
        )
        self._legal = None
        reward = 0.0
        if pair is not None:
            reward += self._play(*pair)
            if not self._over:
                reward += self._play_opponents()
        info: dict[str, Any] = {"seat": self.seat}
        if self._over:
            info["hand_scores"] = self._hand_scores
            info["side"] = self.game.side_of[self.seat]
            if self.episode == "game":
                info["final_scores"] = list(self.game.scores)
                info["winner"] = self.game.winner
        return self._observe(), float(reward), self._over, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner as a bool array (all False once the episode is over)."""
        mask = np.zeros(self.coder.num_actions, dtype=bool)
        if not self._over:
            mask[self._legal_ids()] = True
        return mask

    # --- internals ---------------------------------------------------------------

    def _opponent_names(self) -> list[str | None]:
        return [None if a is None else getattr(a, "spec", a.name) for a in self._seats]

    def _legal_ids(self) -> list[int]:
        if self._legal is None:
            self._legal = self.coder.legal_ids(self.game.legal_pairs(), self._pending, self._selected)
        return self._legal

    def _observe(self) -> np.ndarray:
        out = np.empty(self.layout.size, dtype=np.float32)
        write_observation(self.game, self.seat, self.layout, out, self._pending, self._selected)
        if self._score_clip is not None:
            scores = out[self.layout["scores"]]
            np.clip(scores, *self._score_clip, out=scores)
        return out

    def _play_opponents(self) -> float:
        """Let the other seats play until the learner's turn or the episode end."""
        reward = 0.0
        game = self.game
        while not self._over and game.current != self.seat:
            move = self._seats[game.current].act(game.view(game.current))
            reward += self._play(move.card, move.mask)
        return reward

    def _play(self, card: int, mask: int) -> float:
        """Play one move for the seat to move; the learner's reward from a hand end, if any."""
        game = self.game
        game.play_pair(card, mask)
        result = game.hand_result
        if result is None:
            return 0.0
        self._hand_scores.append(result.hand_score)
        totals = [row["total"] for row in result.hand_score]
        side = game.side_of[self.seat]
        self._over = self.episode == "hand" or game.winner is not None
        if self.reward_mode == "points":
            others = [t for s, t in enumerate(totals) if s != side]
            return float(totals[side] - sum(others) / len(others))
        if not self._over:
            return 0.0
        if self.episode == "game":
            return 1.0 if game.winner == side else -1.0
        best = max(totals)
        if totals.count(best) > 1:
            return 0.0
        return 1.0 if totals[side] == best else -1.0


def make_env_fn(cfg, rank: int, opponents: Any, illegal_action: str = "raise"):
    """A picklable constructor of env number ``rank`` of a :class:`~train.config.TrainConfig` (for VecEnvs)."""

    def make() -> gym.Env:
        from stable_baselines3.common.monitor import Monitor

        sampler = OpponentSampler(
            opponents,
            pool_fraction=cfg.selfplay_fraction if cfg.selfplay else 0.0,
            pool_size=cfg.selfplay_pool_size,
        )
        env = ScopaGymEnv(
            num_players=cfg.num_players,
            rules=cfg.rules,
            episode=cfg.episode,
            reward=cfg.reward,
            action_mode=cfg.action_mode,
            opponents=sampler,
            illegal_action=illegal_action,
        )
        return Monitor(env)

    return make


def make_vec_env(cfg, opponents: Any, seed: int):
    """``cfg.n_envs`` envs, env ``i`` seeded with ``seed + i``: Python envs in a Dummy- or
    SubprocVecEnv, or games of the compiled core (``vec_env: fast``, see :mod:`train.sb3.fast`);
    wrapped in :class:`train.sb3.fast.PileShaping` when ``reward_shaping`` is on."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from train.sb3.fast import PileShaping, make_fast_vec_env

    if cfg.vec_env == "fast":
        venv = make_fast_vec_env(cfg, opponents, seed)
    else:
        fns = [make_env_fn(cfg, i, opponents) for i in range(cfg.n_envs)]
        venv = SubprocVecEnv(fns, start_method="spawn") if cfg.vec_env == "subproc" else DummyVecEnv(fns)
        venv.seed(seed)
    if cfg.reward_shaping:
        venv = PileShaping(venv, cfg.num_players, cfg.rules, cfg.gamma)
    return venv


def register_envs() -> None:
    """Register :data:`ENV_ID` with Gymnasium (done on import; calling it again does nothing)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="train.env:ScopaGymEnv", kwargs=dict(REGISTERED_DEFAULTS))


register_envs()
