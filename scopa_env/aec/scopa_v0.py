"""Scopa as a PettingZoo AEC environment.

::

    from scopa_env import scopa_v0
    env = scopa_v0.env(num_players=2, rules="standard", action_mode="move")
    env.reset(seed=42)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:
            mask = obs["action_mask"]
            action = int(env.np_random.choice(mask.nonzero()[0]))
        env.step(action)

=====================  ===================================================================
Agents                 ``player_0`` .. ``player_{n-1}`` in turn order (n = 2, 3, 4, 6)
Sides                  2-3 players each for themselves; 4 and 6 in two teams: even and
                       odd seats (partners opposite / alternating). Teammates get the
                       same reward.
Action space           "move": ``Discrete(N)``, N = 16,200 for the standard rules (see
                       :mod:`scopa_env.engine.actions`; N per variant in docs/rules.md, which
                       also documents Chkobba's first-card decision and the Ace's
                       take-all id); "select": ``Discrete(41)`` (``Discrete(53)`` for
                       the 52-card deck, whose N is over "move" mode's limit)
Observation space      ``Dict(observation=Box(float32, (size,)), action_mask=Box(int8, (N,)))``;
                       the layout table is in :mod:`scopa_env.engine.observation` (size 376 for 2
                       players)
Rewards                ``reward="game"``: +1 to the winning side, -1 to the others at the
                       end of the episode (``episode="hand"``: +1 to the side with strictly
                       most hand points, -1 to the others, 0 for all on a tie).
                       ``reward="points"``: at every hand end, the side's hand points minus
                       the mean of the other sides' (the hand-point margin).
Episode                ``episode="game"``: hands until a side reaches the target (default);
                       ``episode="hand"``: one hand.
Infos                  At each hand end every agent's info holds ``hand_score`` (per-side
                       dicts of :func:`scopa_env.engine.scoring.score_hand`), ``piles`` and
                       ``scope`` (rules with game-winning or reset items also ``events``,
                       see :attr:`scopa_env.engine.game.HandResult.events`; rules with
                       declarations also ``declared``, per side the bazzica/bazzicotto
                       points of the hand, which the "points" reward includes; Cirulla
                       also ``table_bonus``, per side the scope of the dealer's bonus); at the game end also
                       ``final_scores``, ``winner`` (side) and ``win_reason`` ("target" or
                       the item that won). An agent's info is kept until that agent acts
                       again.
=====================  ===================================================================

Declarations (``bazzica_points`` rules: ``scopa_bazzica``, ``sbarazzina``, ``piva``): while
``PlayerView.declaring``, the player to move decides, before any card of the deal is
played, whether to declare: the self-mask move of the hand's highest card declares (and
shows the hand), its plain move passes; in "move" mode those are the ids of
``Move(card, itself=True)`` and ``Move(card)``, in "select" mode "name the card, then
name it again (declare) or CONFIRM (pass)". The mask offers them only at that moment.
The observation then has ``revealed`` planes and a ``declaring`` flag (see
:mod:`scopa_env.engine.observation`). Cirulla's hand bonuses are declared the same way, but
at the holder's first turn of each deal, after the earlier players' cards of that round
(:attr:`~scopa_env.engine.rules.Rules.declare_at_turn`); the same player then plays a card.

Chiamarsi fuori (``claim_out`` rules): on every card-play turn the mask also offers the
claim, the self-mask move of the hand's highest card (:meth:`Game.claim_pair`; "select"
mode: name that card, then name it again); it ends the game, won by the claimer's side
if its certain points reach the target, else lost (``info["win_reason"]``: ``"claim"``
or ``"false_claim"``).

Keyword arguments: ``num_players`` (2, 3, 4, 6), ``rules`` (preset name or
:class:`~scopa_env.engine.rules.Rules`), ``episode`` ("game" | "hand"), ``reward`` ("game" |
"points"), ``action_mode`` ("move" | "select"), ``render_mode`` (None, "ansi", "human"); or
``setup``, a :class:`~scopa_env.engine.setup.GameSetup` giving the game's arguments at once
(``env.setup`` is the env's own, checked by :meth:`GameSetup.of <scopa_env.engine.setup.GameSetup.of>`).

``reset(seed=...)`` makes the deals (and so the episode) reproducible; a seed is ``None`` or an
int in ``[0, 2**63)``, as for every env of the kit (:mod:`scopa_env.engine.bounds`). ``reset(options=
{"deal": {...}})`` starts from an explicit deal: the keyword arguments of
:meth:`scopa_env.engine.game.Game.from_deal` (``hands``, ``table``, ``stock``, ``dealer`` ...).
``reset(options={"dealer": k})`` picks the first dealer (default: the last seat, so
``player_0`` leads).

``raw_env.step`` raises ``ValueError`` (listing the legal moves) on an illegal or
out-of-range action, and ``RuntimeError`` when called before ``reset`` or after every
agent is done (call ``reset`` for a new episode); ``env()`` adds PettingZoo's standard
wrappers, which end the game with -1 for the offender instead. PettingZoo has no environment registry to join;
import this module directly.

Version history: v0 (first release).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from scopa_env.aec.turns import FEW_IDS, Turns, turns_for
from scopa_env.engine.actions import TAKE_ALL, move_enumeration, select_options
from scopa_env.engine.bounds import SEED_LIMIT, check_seed
from scopa_env.engine.cards import NUM_CARDS, cards_of, format_card
from scopa_env.engine.game import Game
from scopa_env.engine.observation import observation_bounds
from scopa_env.engine.render import render_game
from scopa_env.engine.rules import Move, Rules
from scopa_env.engine.setup import GameSetup, resolve_setup
from scopa_env.fast.seeding import generator

RENDER_MODES = (None, "ansi", "human")

_GAME_DEFAULTS = {"rules": None, "num_players": 2, "action_mode": "move", "episode": "game", "reward": "game"}
"""The game's arguments of :class:`raw_env` and their defaults (``setup=`` gives them all at once)."""


def env(**kwargs) -> AECEnv:
    """The environment with PettingZoo's standard wrappers (illegal moves end the game)."""
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):  # noqa: N801 (PettingZoo naming)
    """Scopa AEC environment without wrappers. See the module docstring.

    The episode's bookkeeping (agents, rewards, infos, the "select" choice in progress) is this
    class's; what the game answers on each turn (observations, legal ids and masks, the move of
    an action) comes from :attr:`turns`, the engine adapter built once from :attr:`setup`
    (:mod:`scopa_env.aec.turns`).
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "scopa_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(
        self,
        num_players: int = 2,
        rules: Rules | str | None = None,
        episode: str = "game",
        reward: str = "game",
        action_mode: str = "move",
        render_mode: str | None = None,
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
        if render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {RENDER_MODES}, got {render_mode!r}")
        self.rules = self.setup.rules
        num_players = self.num_players = self.setup.num_players
        self.episode = self.setup.episode
        self.reward_mode = self.setup.reward
        self.action_mode = self.setup.action_mode
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        self.agents = []
        self.layout = self.setup.layout
        # "move" mode: rules too wide for it raise the ValueError naming "select" here
        self.num_actions = self.setup.num_actions
        self._move_mode = self.action_mode == "move"
        self.turns: Turns = turns_for(self.setup)
        """The engine adapter: observations, legal ids and masks, moves (:func:`scopa_env.aec.turns.turns_for`)."""
        low, high = observation_bounds(self.layout, self.rules)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=low, high=high, dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(self.num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        state_size = self.layout.cards * (num_players + 2 + self.layout.num_sides) + self.layout.size
        self.state_space = spaces.Box(low=0, high=np.inf, shape=(state_size,), dtype=np.float32)
        self._np_random: np.random.Generator | None = None
        self._game: Game | None = None
        self._row_ok = False
        """Whether this episode's hands may be played in the adapter's compiled row (until someone
        reads :attr:`game`, who may then change it: the game plays on in Python until the next reset)."""
        self._turn_state()

    def _turn_state(self) -> None:
        """The state of the turn in progress, cleared for a new episode (tests and tools that swap
        ``game`` in clear ``_legal_ids``)."""
        self._legal_ids: list[int] | None = None
        """The legal ids of the player to move, once worked out (until the next step)."""
        self._card_turn = False
        """Whether ``_legal_ids`` are a card-play turn's, every hand card's ("select" mode: the adapter
        may then settle the named card's capture)."""
        self._pending_card: int | None = None
        """ "select" mode: the card named, while the choice of its captures goes on."""
        self._selected = 0
        """ "select" mode: the table cards selected so far for the named card (a mask)."""
        self._pending_outcomes: list[int] = []
        """ "select" mode: the named card's captured masks (its legal moves)."""

    @property
    def game(self) -> Game | None:
        """The game being played (the Python engine's :class:`~scopa_env.engine.game.Game`). Where the
        adapter plays the hand's cards in a compiled row (:class:`~scopa_env.aec.turns.RowMoveTurns`),
        reading it brings it level first, and the episode then plays on through it, so that what the
        reader does to it counts."""
        game = self._synced()
        self._row_ok = False
        self.turns.stop()
        return game

    @game.setter
    def game(self, game: Game | None) -> None:
        self._game = game
        self._row_ok = False
        self.turns.stop()

    def _synced(self) -> Game | None:
        """The game, level with the plays made in the adapter's row (which keeps playing)."""
        game = self._game
        if self.turns.live:
            self.turns.sync(game)
        return game

    def __getstate__(self) -> dict:
        # The adapter holds the compiled core's functions, which do not pickle: made again on load
        # (the game brought level with its row first).
        self._synced()
        return {k: v for k, v in self.__dict__.items() if k != "turns"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.turns = turns_for(self.setup)

    # --- spaces & codes ------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def decode_action(self, action: int) -> Move:
        """The :class:`~scopa_env.engine.rules.Move` of a "move"-mode action id."""
        return move_enumeration(self.rules).decode(int(action), self._table())

    def encode_action(self, move: Move) -> int:
        """The "move"-mode action id of a move."""
        return move_enumeration(self.rules).encode(move, self._table())

    def _table(self) -> int | None:
        """The table for take-all ids (``ace_takes_all`` rules), once a game is running."""
        game = self._synced()
        return None if game is None else game.table

    # --- episode -----------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            if type(seed) is not int or not 0 <= seed < SEED_LIMIT:
                seed = check_seed(seed)  # an int in [0, 2**63): the rule of every env (scopa_env/engine/bounds.py)
            self._np_random = generator(seed)  # np.random.default_rng(seed)'s draws, built faster
        elif self._np_random is None:
            self._np_random = np.random.default_rng()
        self.np_random = self._np_random
        auto = self.episode == "game"
        if not options:  # the usual reset: a shuffled deal, the first dealer the last seat
            self._game = Game(self.num_players, self.rules, seed=self._np_random, auto_next_hand=auto)
            self._start()
            return
        options = dict(options)
        unknown = set(options) - {"deal", "dealer"}
        if unknown:
            # PettingZoo's api_test passes arbitrary options, so unknown keys warn instead of raising.
            msg = f"ignoring unknown reset option(s) {sorted(unknown)}; valid: 'deal', 'dealer'"
            warnings.warn(msg, stacklevel=2)
        if "deal" in options:
            deal = dict(options["deal"])
            if len(deal.get("hands", ())) != self.num_players:
                raise ValueError(f"options['deal']['hands'] must give {self.num_players} hands")
            self._game = Game.from_deal(**deal, rules=self.rules, seed=self._np_random, auto_next_hand=auto)
        else:
            self._game = Game(
                self.num_players, self.rules, seed=self._np_random, dealer=options.get("dealer"), auto_next_hand=auto
            )
        self._start()

    def _start(self) -> None:
        """The episode's bookkeeping once :meth:`reset` has its game."""
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._turn_state()
        self._rewards_set = False
        """Whether the last step gave someone a reward (then the next step clears ``rewards``)."""
        self.agent_selection = self.possible_agents[self._game.current]
        self._row_ok = True
        self.turns.start(self._game)

    # --- observation ------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        try:
            seat = self._seat_of[agent]
        except KeyError:
            seat = self.possible_agents.index(agent)  # raises ValueError naming the agent
        turns = self.turns
        if turns.live:  # the hand is played in the adapter's compiled row
            if seat != turns.current:
                return {"observation": turns.row_observation(seat), "action_mask": turns.no_actions()}
            # The usual call: the mover's observation, mask and legal ids, written by the last play's
            # compiled call (or now).
            found = turns.row_card_turn(seat)
            if found is not None:
                obs, mask, self._legal_ids = found
                self._card_turn = True
                return {"observation": obs, "action_mask": mask}
            game = self._synced()
        else:
            game = self._game
        if seat != game.current:
            return {"observation": turns.observe(game, seat), "action_mask": turns.no_actions()}
        if (
            self._legal_ids is None
            and self._pending_card is None
            and not (game.hand_over or game.winner is not None or game.declare_queue or game.deciding)
        ):
            # The usual call (last()'s): the mover's card-play turn (Game.card_turn, spelled out), first
            # asked: the adapter's observation, mask and legal ids at once.
            obs, mask, self._legal_ids = turns.card_turn(game, seat)
            self._card_turn = True
            return {"observation": obs, "action_mask": mask}
        obs = turns.observe(game, seat, self._pending_card, self._selected)
        if self.terminations[agent]:
            return {"observation": obs, "action_mask": turns.no_actions()}
        return {"observation": obs, "action_mask": turns.mask(self._legal_action_ids())}

    def _legal_action_ids(self) -> list[int]:
        """Legal action ids of the player to move (kept until the next step)."""
        ids = self._legal_ids
        if ids is None:
            ids = self._legal_ids = self._compute_legal_ids()
        return ids

    def _compute_legal_ids(self) -> list[int]:
        game = self._synced()
        if self._move_mode:
            return self.turns.legal_ids(game)
        if self._pending_card is None:
            self._card_turn = card_turn = game.card_turn
            if card_turn:  # every hand card is playable: no capture is worked out yet
                return self.turns.hand(game.hands[game.current])
            return sorted({c for c, _ in game.action_pairs()})
        nxt, can_confirm, _ = select_options(self._pending_outcomes, self._selected)
        return nxt + [self.turns.confirm] if can_confirm else nxt

    def action_mask(self) -> np.ndarray:
        """Mask of the agent to move (the same as in its observation)."""
        return self.observe(self.agent_selection)["action_mask"]

    def state(self) -> np.ndarray:
        """Full-information state for centralized critics: every hand, the table, every
        pile and the stock (as a set) as 40-wide planes (52-wide for the 52-card deck), then the observation of the
        player to move."""
        g = self._synced()
        planes = list(g.hands) + [g.table] + list(g.piles) + [sum(1 << c for c in g.stock)]
        head = np.concatenate([_plane(m, self.layout.cards) for m in planes])
        return np.concatenate([head, self.observe(self.agent_selection)["observation"]])

    # --- step --------------------------------------------------------------------

    def step(self, action: int | None) -> None:
        if not self.agents:  # none before the first reset (no game yet) and after every agent is done
            if self._game is None:
                raise RuntimeError("step() before reset(): call env.reset() to start an episode")
            raise RuntimeError(
                "step() after the episode ended (every agent is done): call env.reset() to start a new one"
            )
        game = self._game
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        ids = self._legal_ids
        if ids is None:
            ids = self._legal_action_ids()
        kind = type(action)
        if kind is not int:
            action = int(action) if kind is np.int64 else self._as_action(action)  # sample() gives an np.int64
        if action not in ids:
            raise self._illegal(action)
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_set:  # most steps reward nobody: the zero dict is rebuilt only after one that did
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_set = False
        if self.infos[agent]:  # an empty info (most steps') stays as it is
            self.infos[agent] = {}
        self._legal_ids = None
        if self._move_mode:
            turns = self.turns
            card, captured = turns.pairs[action]
            if turns.live:  # the hand is played in the adapter's compiled row
                if turns.play(card, captured):
                    turns.sync(game)  # its last card: the game ends the hand
                    self._after_hand()
                else:
                    self.agent_selection = self.possible_agents[turns.current]
                if self.render_mode == "human":
                    self.render()
                return
            game.play_pair(card, game.table if captured == TAKE_ALL else captured)
            played = True
        elif self._pending_card is None:  # "select", naming a hand card: played at once if it has one capture
            outcomes = self.turns.outcomes(game, action, self._card_turn)
            played = len(outcomes) == 1
            if played:
                game.play_pair(action, outcomes[0])
            else:
                self._pending_card, self._selected, self._pending_outcomes = action, 0, outcomes
        else:
            played = self._choose(game, action)
        if played:
            if game.hand_result is None:
                self.agent_selection = self.possible_agents[game.current]
            else:
                self._after_hand()
        if self.render_mode == "human":
            self.render()

    def _choose(self, game: Game, action: int) -> bool:
        """ "select" mode, a card named: take the table card ``action`` too, or CONFIRM the cards
        selected so far; whether that played the move (else the choice goes on)."""
        card = self._pending_card
        if action == self.turns.confirm:
            captured = self._selected
        else:
            self._selected |= 1 << action
            _, _, candidates = select_options(self._pending_outcomes, self._selected)
            if len(candidates) != 1:
                return False
            captured = candidates[0]  # the selection leaves one capture
        self._pending_card, self._selected = None, 0
        game.play_pair(card, captured)
        return True

    def _as_action(self, action) -> int:
        """A non-int ``action`` as an int id: a numpy int as its int, anything else refused."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an int in 0..{self.num_actions - 1}, got {action!r}")
        return int(action)

    def _illegal(self, action: int) -> ValueError:
        """The one-line error for an int ``action`` that is not among the legal ids."""
        if not 0 <= action < self.num_actions:
            return ValueError(f"action {action} is out of range 0..{self.num_actions - 1}; {self._legal_text()}")
        return ValueError(f"action {action} ({self._describe(action)}) is illegal now; {self._legal_text()}")

    def _describe(self, action: int) -> str:
        return self.turns.describe(action, self._synced().table)

    def _legal_text(self) -> str:
        ids = self._legal_action_ids()
        return "legal actions: " + ", ".join(f"{a} ({self._describe(a)})" for a in ids)

    def _after_hand(self) -> None:
        """After a play that ended a hand: infos, rewards, terminations and the next agent."""
        g = self._game
        result = g.hand_result
        totals = [row["total"] for row in result.hand_score]
        info = {"hand_score": result.hand_score, "piles": result.piles, "scope": result.scope}
        if g.rules.needs_events:
            info["events"] = list(result.events)
        if g.rules.table_bonus:
            info["table_bonus"] = list(result.table_bonus)
        if g.rules.declarations:
            info["declared"] = list(result.declared)
            # Declarations scored at once, outside hand_score's total: count them in the hand margin.
            totals = [t + sum(d.values()) for t, d in zip(totals, result.declared)]
        over = self.episode == "hand" or g.winner is not None
        if over:
            info["final_scores"] = list(g.scores)
            info["winner"] = g.winner
            if g.winner is not None:
                info["win_reason"] = g.win_reason
        self._rewards_set = True
        for i, a in enumerate(self.agents):
            side = g.side_of[i]
            self.infos[a] = dict(info)
            if self.reward_mode == "points":
                others = [t for s, t in enumerate(totals) if s != side]
                self.rewards[a] = float(totals[side] - sum(others) / len(others))
            elif over:
                self.rewards[a] = self._game_reward(side, totals)
        if over:
            self.terminations = dict.fromkeys(self.agents, True)
        elif self._row_ok:  # the game dealt the next hand: its card plays go on in the adapter's row
            self.turns.start(g)
        self.agent_selection = self.possible_agents[g.current]
        self._accumulate_rewards()

    def _game_reward(self, side: int, hand_totals: list[int]) -> float:
        g = self._game
        if self.episode == "game":
            return 1.0 if g.winner == side else -1.0
        best = max(hand_totals)
        if hand_totals.count(best) > 1:
            return 0.0
        return 1.0 if hand_totals[side] == best else -1.0

    # --- rendering ---------------------------------------------------------------

    def render(self) -> str | None:
        if self.render_mode is None:
            from gymnasium.logger import warn

            warn("render() called with render_mode=None")
            return None
        text = render_game(self._synced())
        if self._pending_card is not None:
            text += (
                f"\n  selecting: {format_card(self._pending_card, self.rules.ranks_per_suit)} takes "
                f"{cards_of(self._selected)}"
            )
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def _plane(mask: int, width: int = NUM_CARDS) -> np.ndarray:
    return np.unpackbits(
        np.frombuffer(mask.to_bytes((width + 7) // 8, "little"), dtype=np.uint8), count=width, bitorder="little"
    ).astype(np.float32)


__all__ = ["FEW_IDS", "env", "raw_env"]
