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
from types import FunctionType
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from scopa_env.engine.actions import TAKE_ALL, move_enumeration, select_options
from scopa_env.engine.bounds import check_seed
from scopa_env.engine.cards import NUM_CARDS, cards_of, format_card
from scopa_env.engine.game import Game
from scopa_env.engine.observation import observation_bounds
from scopa_env.engine.render import render_game
from scopa_env.engine.rules import Move, Rules
from scopa_env.engine.setup import GameSetup, resolve_setup
from scopa_env.fast.observers import observers_for
from scopa_env.fast.seeding import generator

RENDER_MODES = (None, "ansi", "human")
FEW_IDS = 8
"""Up to this many legal ids the mask is written item by item, above it with one numpy index."""
HAND_IDS_LIMIT = 1 << 15
"""Most hands whose card ids and mask the "select" envs keep, shared by the envs of one action count
(the legal ids of a card-play turn; read only): every hand of up to three cards of the 40-card deck
(10,700) or of the 52-card deck (23,478), so after a while no card-play turn builds one."""
_HAND_IDS: dict[int, dict[int, tuple[list[int], np.ndarray]]] = {}
"""Per action count, :data:`HAND_IDS_LIMIT`'s cache: a hand's card ids and their mask."""
MOVE_IDS_BUFFER = 1024
"""Legal ids the compiled "move" path writes at most (a hand with more goes through the rules' Python)."""
FEW_VIEWS = 64
"""Below this many ids the compiled path reads its output through a view made once (not a new slice)."""
_I8 = np.dtype(np.int8)
_SEED_LIMIT = 2**63
"""An int seed below it and not negative passes :func:`check_seed` as it is (the seed rule)."""
_NUMPY_INTS = frozenset({np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})
"""Numpy's int scalar types (``Discrete.sample`` gives an ``np.int64``)."""
_INT64 = np.int64
"""``Discrete.sample``'s type: :meth:`raw_env.step` reads it as its int at once."""


_zeros = np.zeros
"""The mask maker of :meth:`raw_env.observe` (one global lookup instead of two)."""


_GAME_DEFAULTS = {"rules": None, "num_players": 2, "action_mode": "move", "episode": "game", "reward": "game"}
"""The game's arguments of :class:`raw_env` and their defaults (``setup=`` gives them all at once)."""


def _bound(function, defaults: tuple):
    """``function`` (a generated observer, :mod:`scopa_env.fast.observers`) with its last parameters'
    defaults set to ``defaults``: called with the leading arguments alone, it spreads no tuple per call."""
    return FunctionType(function.__code__, function.__globals__, function.__name__, defaults, function.__closure__)


def env(**kwargs) -> AECEnv:
    """The environment with PettingZoo's standard wrappers (illegal moves end the game)."""
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):  # noqa: N801 (PettingZoo naming)
    """Scopa AEC environment without wrappers. See the module docstring."""

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
        self._observers = observers_for(self.layout)
        self._moves = self.setup.moves  # "move" mode: rules too wide for it raise the ValueError naming "select"
        self.num_actions = self.setup.num_actions
        self._confirm = self.setup.confirm
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
        self.game: Game | None = None
        self._hand_ids = _HAND_IDS.setdefault(self.num_actions, {})
        """Per hand (a card mask) of a "select" card-play turn: its legal ids and their mask (shared)."""
        self._hand_mask: tuple = (None, None)
        """The ``_hand_ids`` entry last looked up: :meth:`observe` copies its mask while its ids are the legal ids."""
        self._card_ids = False
        self._link_compiled()

    def _link_compiled(self) -> None:
        """Look up the compiled core's helpers for this env's card-play turns, where the rules'
        captures are theirs (the standard pattern in the 40-card deck, no claim and no wildcard,
        which :meth:`Game.card_outcomes` and :meth:`Game.action_pairs` would add) and the extension
        is built and fresh (:mod:`scopa_env.fast.aot`): in "select" mode the named card's one
        capture (:func:`~scopa_env.fast.core.card_capture`), in "move" mode the hand's legal ids
        (:func:`~scopa_env.fast.core.plain_move_ids`). Else (None) the rules' Python decides."""
        self._card_capture = self._move_ids = None
        self._capture_flags: tuple = ()
        self._priority = self._optional = 0
        self._outcome_ids: tuple | None = None
        self._observe_moves: tuple | None = None
        rules = self.rules
        if not rules.plain_captures or rules.num_card_ids != NUM_CARDS or rules.claim_out or rules.bonus_wildcard:
            return
        from scopa_env.fast import aot

        self._capture_flags = (int(rules.single_card_priority), int(rules.capture_optional))
        self._priority, self._optional = self._capture_flags
        if self._moves is None:
            self._card_capture = aot.card_capture()
            return
        fast = self._move_ids = self._compiled_move_ids(self._moves)
        if fast is not None and self._observers.moves is not None:
            # One compiled call writes the observation, the legal ids and their mask (observers_for's
            # moves), with plain_move_ids' arguments (checked in _compiled_move_ids): per seat the
            # observer with its arguments after the game and the mask bound as defaults (_bound), the
            # mask's length, the output's views and the output.
            _, (priority, optional, pairs, starts, out), out, views = fast
            bound = (out, priority, optional, pairs, starts)
            self._observe_moves = (tuple(_bound(f, bound) for f in self._observers.moves), self.num_actions, views, out)

    def _compiled_move_ids(self, moves) -> tuple | None:
        """The compiled :func:`~scopa_env.fast.core.plain_move_ids` with its arguments after the hand
        and the table for ``moves`` (a :class:`~scopa_env.engine.actions.MoveEnumeration`) and its
        output buffer, or None where it is not built."""
        from scopa_env.fast import aot

        move_ids = aot.move_ids(checked=False)  # the arrays are made here, and checked once
        if move_ids is None:
            return None
        pairs = np.array(moves.pairs, np.int64).reshape(-1, 2)
        starts = np.searchsorted(pairs[:, 0], np.arange(NUM_CARDS + 1), side="left").astype(np.int64)
        out = np.empty(MOVE_IDS_BUFFER, np.int64)
        aot.check_arrays(pairs=(pairs, np.int64, 2), starts=(starts, np.int64, 1), out=(out, np.int64, 1))
        return (move_ids, (*self._capture_flags, pairs, starts, out), out, [out[:k] for k in range(FEW_VIEWS)])

    def _card_outcomes(self, card: int) -> list[int]:
        """:meth:`Game.card_outcomes` of a "select" card-play turn's named card that has several:
        where the compiled captures are linked, the "move" ids of that card alone
        (:func:`~scopa_env.fast.core.plain_move_ids`, in the rules' order) read as captured masks;
        the "move" enumeration is made the first time."""
        game = self.game
        if self._card_capture is None or not self._card_ids:
            return game.card_outcomes(card)
        found = self._outcome_ids
        if found is None:
            moves = self._enumeration()
            found = self._outcome_ids = (self._compiled_move_ids(moves), [m for _, m in moves.pairs])
        fast, masks = found
        if fast is not None:
            count = fast[0](1 << card, game.table, *fast[1])
            if count > 0:
                return [masks[j] for j in (fast[3][count] if count < FEW_VIEWS else fast[2][:count]).tolist()]
        return game.card_outcomes(card)

    def __getstate__(self) -> dict:
        # The compiled helpers are an extension's functions, which do not pickle: looked up again on load.
        # The shared hand cache is joined again on load too.
        return {
            **self.__dict__,
            "_card_capture": None,
            "_move_ids": None,
            "_outcome_ids": None,
            "_hand_ids": None,
            "_observe_moves": None,
        }

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._hand_ids = _HAND_IDS.setdefault(self.num_actions, {})
        self._link_compiled()

    # --- spaces & codes ------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def decode_action(self, action: int) -> Move:
        """The :class:`~scopa_env.engine.rules.Move` of a "move"-mode action id."""
        return self._enumeration().decode(int(action), self._table())

    def encode_action(self, move: Move) -> int:
        """The "move"-mode action id of a move."""
        return self._enumeration().encode(move, self._table())

    def _enumeration(self):
        """The rules' "move" enumeration (this env's own in "move" mode; made on first use in "select" mode)."""
        return self._moves if self._moves is not None else move_enumeration(self.rules)

    def _table(self) -> int | None:
        """The table for take-all ids (``ace_takes_all`` rules), once a game is running."""
        return None if self.game is None else self.game.table

    # --- episode -----------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            if type(seed) is not int or not 0 <= seed < _SEED_LIMIT:
                seed = check_seed(seed)  # an int in [0, 2**63): the rule of every env (scopa_env/engine/bounds.py)
            self._np_random = generator(seed)  # np.random.default_rng(seed)'s draws, built faster
        elif self._np_random is None:
            self._np_random = np.random.default_rng()
        self.np_random = self._np_random
        auto = self.episode == "game"
        if not options:  # the usual reset: a shuffled deal, the first dealer the last seat
            self.game = Game(self.num_players, self.rules, seed=self._np_random, auto_next_hand=auto)
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
            self.game = Game.from_deal(**deal, rules=self.rules, seed=self._np_random, auto_next_hand=auto)
        else:
            self.game = Game(
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
        self._pending_card: int | None = None
        self._selected = 0
        self._legal_ids: list[int] | None = None
        self._pending_outcomes: list[int] = []
        self._rewards_set = False
        self.agent_selection = self.possible_agents[self.game.current]

    # --- observation ------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        try:
            seat = self._seat_of[agent]
        except KeyError:
            seat = self.possible_agents.index(agent)  # raises ValueError naming the agent
        game = self.game
        if seat != game.current:
            return {"observation": self._observers[seat](game, None, 0), "action_mask": np.zeros(self.num_actions, _I8)}
        # The usual call (last()'s): the mover's card-play turn (Game.card_turn, spelled out), its
        # legal ids not worked out yet.
        if self._legal_ids is None and not (
            game.hand_over or game.winner is not None or game.declare_queue or game.deciding
        ):
            fast = self._observe_moves
            if fast is not None:  # "move", compiled: the observation, the legal ids and the mask in one call
                mask = _zeros(fast[1], _I8)
                obs, count = fast[0][seat](game, mask)  # the move arguments are the function's defaults
                if count >= 0:
                    self._legal_ids = (fast[2][count] if count < FEW_VIEWS else fast[3][:count]).tolist()
                    return {"observation": obs, "action_mask": mask}
                ids = self._legal_ids = self._compute_legal_ids()  # the compiled ids do not apply: the rules'
                mask[ids] = 1
                return {"observation": obs, "action_mask": mask}
            if self._moves is None and self._pending_card is None:
                # "select", naming a hand card: every hand card is playable, its ids and mask are cached.
                hand = game.hands[seat]
                known = self._hand_ids.get(hand) or self._hand_entry(hand)
                self._card_ids = True
                self._hand_mask = known
                self._legal_ids = known[0]
                return {"observation": self._observers[seat](game, None, 0), "action_mask": known[1].copy()}
        obs = self._observers[seat](game, self._pending_card, self._selected)  # observation_array's fast path
        if self.terminations[agent]:
            return {"observation": obs, "action_mask": np.zeros(self.num_actions, _I8)}
        ids = self._legal_ids
        if ids is None:
            ids = self._legal_ids = self._compute_legal_ids()
        known = self._hand_mask
        if known[0] is ids:  # a "select" hand's ids: a copy of their mask, made with them
            return {"observation": obs, "action_mask": known[1].copy()}
        mask = np.zeros(self.num_actions, _I8)
        if len(ids) <= FEW_IDS:
            for i in ids:  # item by item: cheaper than numpy's list indexing for a few ids
                mask[i] = 1
        else:
            mask[ids] = 1
        return {"observation": obs, "action_mask": mask}

    def _legal_action_ids(self) -> list[int]:
        """Legal action ids of the player to move (cached until the next step)."""
        if self._legal_ids is None:
            self._legal_ids = self._compute_legal_ids()
        return self._legal_ids

    def _compute_legal_ids(self) -> list[int]:
        game = self.game
        if self._moves is not None:
            fast = self._move_ids
            if fast is not None and game.card_turn:
                count = fast[0](game.hands[game.current], game.table, *fast[1])
                if count >= 0:
                    return (fast[3][count] if count < FEW_VIEWS else fast[2][:count]).tolist()
            # Game.action_pairs adds the claim only under claim_out rules: else the cached legal list.
            return self._moves.ids(game.action_pairs() if game.rules.claim_out else game.legal_pairs(), game.table)
        if self._pending_card is None:
            self._card_ids = card_turn = game.card_turn
            if card_turn:  # every hand card is playable: no capture is worked out yet
                hand = game.hands[game.current]
                known = self._hand_ids.get(hand)
                if known is None:
                    known = self._hand_entry(hand)
                self._hand_mask = known
                return known[0]
            return sorted({c for c, _ in game.action_pairs()})
        nxt, can_confirm, _ = select_options(self._pending_outcomes, self._selected)
        return nxt + [self._confirm] if can_confirm else nxt

    def _hand_entry(self, hand: int) -> tuple[list[int], np.ndarray]:
        """A hand's card ids and their mask, made once for the envs of this action count (read only)."""
        cache = self._hand_ids
        if len(cache) >= HAND_IDS_LIMIT:
            cache.clear()
        ids = cards_of(hand)
        mask = np.zeros(self.num_actions, _I8)
        for i in ids:  # a hand's few ids: item by item is cheaper than numpy's list indexing
            mask[i] = 1
        mask.flags.writeable = False  # shared: observe hands out copies
        known = cache[hand] = (ids, mask)
        return known

    def action_mask(self) -> np.ndarray:
        """Mask of the agent to move (the same as in its observation)."""
        return self.observe(self.agent_selection)["action_mask"]

    def state(self) -> np.ndarray:
        """Full-information state for centralized critics: every hand, the table, every
        pile and the stock (as a set) as 40-wide planes (52-wide for the 52-card deck), then the observation of the
        player to move."""
        g = self.game
        planes = list(g.hands) + [g.table] + list(g.piles) + [sum(1 << c for c in g.stock)]
        head = np.concatenate([_plane(m, self.layout.cards) for m in planes])
        return np.concatenate([head, self.observe(self.agent_selection)["observation"]])

    # --- step --------------------------------------------------------------------

    def step(self, action: int | None) -> None:
        if not self.agents:  # none before the first reset (no game yet) and after every agent is done
            if self.game is None:
                raise RuntimeError("step() before reset(): call env.reset() to start an episode")
            raise RuntimeError(
                "step() after the episode ended (every agent is done): call env.reset() to start a new one"
            )
        game = self.game
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        ids = self._legal_ids
        if ids is None:
            ids = self._legal_action_ids()
        kind = type(action)
        if kind is _INT64:  # Discrete.sample()'s np.int64: read as its int at once
            action = int(action)
        elif kind is not int:
            action = self._check_action(action)
        if action not in ids:  # the usual legal int passes at once
            action = self._check_action(action)
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_set:  # most steps reward nobody: the zero dict is rebuilt only after one that did
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_set = False
        if self.infos[agent]:  # an empty info (most steps') stays as it is
            self.infos[agent] = {}
        self._legal_ids = None
        moves = self._moves
        if moves is not None:
            card, mask = moves.pairs[action]
            game.play_pair(card, game.table if mask == TAKE_ALL else mask)
            played = True
        elif self._pending_card is None:  # "select", naming the hand card: played at once if it has one outcome
            capture = self._card_capture
            # On a card-play turn (the legal ids were the hand's) the compiled core says the one capture, if one.
            mask = capture(action, game.table, self._priority, self._optional) if capture and self._card_ids else -1
            played = mask >= 0
            if played:
                game.play_pair(action, mask)
            else:
                outcomes = self._card_outcomes(action)
                played = len(outcomes) == 1
                if played:
                    game.play_pair(action, outcomes[0])
                else:
                    self._pending_card, self._selected, self._pending_outcomes = action, 0, outcomes
        else:
            move = self._resolve(action)
            played = move is not None
            if played:
                self._pending_card, self._selected = None, 0
                game.play_pair(*move)
        if played:
            if game.hand_result is None:
                self.agent_selection = self.possible_agents[game.current]
            else:
                self._after_play()
                # Only a hand's end rewards (_rewards_set was cleared above): else every reward is 0.0
                # and the cumulative rewards stay as they are.
                if self._rewards_set:
                    self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _check_action(self, action) -> int:
        if type(action) in _NUMPY_INTS:  # a space's sample() gives a numpy int: read as its int
            action = int(action)
        if type(action) is int and action in self._legal_action_ids():  # the usual case, checked first
            return action
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an int in 0..{self.num_actions - 1}, got {action!r}")
        action = int(action)
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} is out of range 0..{self.num_actions - 1}; {self._legal_text()}")
        if action not in self._legal_action_ids():
            raise ValueError(f"action {action} ({self._describe(action)}) is illegal now; {self._legal_text()}")
        return action

    def _describe(self, action: int) -> str:
        if self._moves is not None:
            return str(self._moves.decode(action, self.game.table))
        return "confirm" if action == self._confirm else format_card(action, self.rules.ranks_per_suit)

    def _legal_text(self) -> str:
        ids = self._legal_action_ids()
        return "legal actions: " + ", ".join(f"{a} ({self._describe(a)})" for a in ids)

    def _resolve(self, action: int) -> tuple[int, int] | None:
        """With a card named ("select" mode): the (card, mask) to play now, or None while the
        choice of captures goes on."""
        if action == self._confirm:
            return self._pending_card, self._selected
        self._selected |= 1 << action
        _, _, candidates = select_options(self._pending_outcomes, self._selected)
        if len(candidates) == 1:
            return self._pending_card, candidates[0]
        return None

    def _after_play(self) -> None:
        g = self.game
        result = g.hand_result
        if result is not None:
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
        self.agent_selection = self.possible_agents[g.current]

    def _game_reward(self, side: int, hand_totals: list[int]) -> float:
        g = self.game
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
        text = render_game(self.game)
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


__all__ = ["env", "raw_env"]
