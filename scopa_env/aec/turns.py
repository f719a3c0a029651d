"""The AEC env's engine adapter: what :class:`~scopa_env.aec.scopa_v0.raw_env` asks of the game on
each turn, answered by one object the env builds once from its
:class:`~scopa_env.engine.setup.GameSetup` (:func:`turns_for`).

The env keeps the episode's bookkeeping (agents, rewards, infos, whose turn it is) and, in "select"
mode, the capture choice in progress (the named card, the table cards selected so far). The adapter
answers for the game:

==============================  ====================================================================
:meth:`Turns.observe`           a seat's observation, a new float32 array (the layout's observers,
                                :func:`~scopa_env.fast.observers.observers_for`)
``card_turn(game, seat)``       on the mover's card-play turn, ``(observation, mask, legal ids)``
                                at once: the env's usual ``observe``
``legal_ids(game)``             "move" mode: the mover's legal ids on any turn
``pairs[action]``               "move" mode: the action's ``(card, captured)`` (``TAKE_ALL``: the table)
``hand(hand)``                  "select" mode: the legal ids of a card-play turn with that hand
``outcomes(game, card, ...)``   "select" mode: the named card's captures (one: it is played)
==============================  ====================================================================

Each mode has an adapter on the rules' Python (:class:`MoveTurns`, :class:`SelectTurns`) and one
that asks the compiled core (:mod:`scopa_env.fast.aot`, built ahead of time) on card-play turns
under the standard captures in the 40-card deck without a claim or a wildcard, where the rules'
legal moves are the compiled core's: :class:`CompiledMoveTurns` writes the observation, the
legal ids and the mask in one compiled call (:func:`~scopa_env.fast.core.plain_move_ids` after
:func:`~scopa_env.fast.core.observe`), :class:`CompiledSelectTurns` asks for the named card's
captures (:func:`~scopa_env.fast.core.card_capture` where it has one). Both play every game as the rules' Python
does (``tests/test_env_speed_paths.py`` holds them to it); :func:`turns_for` picks the compiled one
where the rules are its and the extension is built and fresh.

What every env of one rules object reads is made once per rules and shared (:func:`tables_for`,
:class:`RulesTables`): "select" mode's hands (card ids and mask) and the "move" enumeration as the
compiled core's arrays (:class:`CompiledMoves`). Each env's adapter owns only its output buffer.
"""

from __future__ import annotations

import functools

import numpy as np

from scopa_env.engine.actions import move_enumeration, num_select_actions
from scopa_env.engine.cards import NUM_CARDS, cards_of, format_card
from scopa_env.engine.game import CardPlayPosition, Game
from scopa_env.engine.rules import Rules
from scopa_env.engine.setup import GameSetup
from scopa_env.fast import aot
from scopa_env.fast import layout as core_layout
from scopa_env.fast.observers import observers_for

FEW_IDS = 8
"""Up to this many ids a mask is written item by item (cheaper for a few), above it with one numpy index."""
MOVE_IDS_BUFFER = 1024
"""Legal ids the compiled "move" path writes at most: a position with more asks the rules' Python."""
ID_PREFIXES = 64
"""Counts of legal ids below which :class:`CompiledMoveTurns` reads its output through a view made once."""
MASK_DTYPE = np.dtype(np.int8)
"""The masks' dtype, as a dtype object (numpy reads ``np.int8`` into one on every call)."""
HANDS_LIMIT = 1 << 15
"""Most hands a :class:`RulesTables` keeps (then it starts again): every hand of up to three cards of
the 40-card deck (10,700) or of the 52-card deck (23,478), so after a while no card-play turn makes one."""


class CompiledMoves:
    """The rules' "move" enumeration as :func:`~scopa_env.fast.core.plain_move_ids` reads it, and what
    it needs besides: ``pairs`` (one ``(card, captured)`` row per id, int64), ``starts`` (card ``c``'s
    ids from ``starts[c]`` to ``starts[c + 1]``), the rules' capture flags ``priority``
    (:attr:`~scopa_env.engine.rules.Rules.single_card_priority`) and ``optional``
    (:attr:`~scopa_env.engine.rules.Rules.capture_optional`), and ``captured`` (each id's captured
    mask, to read ids back as captures). Shared by the envs of the rules: never written."""

    __slots__ = ("captured", "optional", "pairs", "priority", "starts")

    def __init__(self, rules: Rules) -> None:
        moves = move_enumeration(rules)
        self.pairs = np.array(moves.pairs, np.int64).reshape(-1, 2)
        self.starts = np.searchsorted(self.pairs[:, 0], np.arange(NUM_CARDS + 1), side="left").astype(np.int64)
        aot.check_arrays(pairs=(self.pairs, np.int64, 2), starts=(self.starts, np.int64, 1))  # the exports' types
        self.captured = [m for _, m in moves.pairs]
        self.priority = int(rules.single_card_priority)
        self.optional = int(rules.capture_optional)


class RulesTables:
    """What every env of one rules object reads, made on first use and shared (:func:`tables_for`):
    "select" mode's hands and the compiled core's view of the "move" enumeration."""

    __slots__ = ("_compiled_moves", "hands", "mask_size", "rules")

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.mask_size = num_select_actions(rules)
        """The length of a "select" mask."""
        self.hands: dict[int, tuple[list[int], np.ndarray]] = {}
        """Per hand (a card mask) met on a "select" card-play turn: its card ids and their mask, read
        only (:meth:`hand`; up to :data:`HANDS_LIMIT`)."""
        self._compiled_moves: CompiledMoves | None = None

    def hand(self, hand: int) -> tuple[list[int], np.ndarray]:
        """The card ids of ``hand`` and their "select" mask, both read only (copy the mask to hand it out)."""
        found = self.hands.get(hand)
        if found is None:
            if len(self.hands) >= HANDS_LIMIT:
                self.hands.clear()
            ids = cards_of(hand)
            mask = np.zeros(self.mask_size, MASK_DTYPE)
            mask[ids] = 1
            mask.flags.writeable = False
            found = self.hands[hand] = (ids, mask)
        return found

    def compiled_moves(self) -> CompiledMoves:
        """The "move" enumeration as the compiled core's arrays (made the first time)."""
        if self._compiled_moves is None:
            self._compiled_moves = CompiledMoves(self.rules)
        return self._compiled_moves


@functools.lru_cache(maxsize=64)
def tables_for(rules: Rules) -> RulesTables:
    """The shared :class:`RulesTables` of ``rules`` (one per rules object, as
    :func:`~scopa_env.engine.actions.move_enumeration` is)."""
    return RulesTables(rules)


class Turns:
    """What both modes' adapters share: the setup's observers, action count and tables."""

    compiled = False
    """Whether this adapter asks the compiled core on card-play turns (see the module docstring)."""
    live = False
    """Whether the hand's card plays go on in a compiled row ahead of the env's ``Game``
    (:class:`RowMoveTurns`; :meth:`sync` brings the game level)."""

    __slots__ = ("num_actions", "observers", "setup", "tables")

    def __init__(self, setup: GameSetup) -> None:
        self.setup = setup
        self.num_actions = setup.num_actions
        self.observers = observers_for(setup.layout)
        """Per seat, the function that writes its observation (compiled where built)."""
        self.tables = tables_for(setup.rules)

    def observe(self, game: Game, seat: int, card: int | None = None, selected: int = 0) -> np.ndarray:
        """``seat``'s observation of ``game``, a new float32 array; ``card`` and ``selected``: "select"
        mode's named card and the table cards selected so far, while ``seat`` chooses a capture."""
        return self.observers[seat](game, card, selected)

    def no_actions(self) -> np.ndarray:
        """A new all-zero mask (a seat not to move, or done)."""
        return np.zeros(self.num_actions, MASK_DTYPE)

    def mask(self, ids: list[int]) -> np.ndarray:
        """A new mask with a 1 at each of ``ids``."""
        mask = np.zeros(self.num_actions, MASK_DTYPE)
        if len(ids) <= FEW_IDS:
            for i in ids:
                mask[i] = 1
        else:
            mask[ids] = 1
        return mask

    def describe(self, action: int, table: int) -> str:
        """``action`` in words, with ``table`` face up (for error messages)."""
        raise NotImplementedError

    def start(self, game: Game) -> None:
        """A new hand (or a new game) is in ``game``: :class:`RowMoveTurns` copies it into its row."""

    def sync(self, game: Game) -> None:
        """Bring ``game`` level with the plays made in the row (:class:`RowMoveTurns`); else nothing."""

    def stop(self) -> None:
        """Play no more in the row (:class:`RowMoveTurns`) until the next :meth:`start`; else nothing."""


class MoveTurns(Turns):
    """ "move" mode on the rules' Python: an action is an id of the rules' move enumeration
    (:class:`~scopa_env.engine.actions.MoveEnumeration`)."""

    __slots__ = ("moves", "pairs")

    def __init__(self, setup: GameSetup) -> None:
        super().__init__(setup)
        self.moves = setup.moves  # rules too wide for "move" mode raise the ValueError naming "select"
        self.pairs = self.moves.pairs
        """Per id, its ``(card, captured)`` (``TAKE_ALL``: the Ace's take-all, the whole table)."""

    def card_turn(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """On ``seat``'s card-play turn: its observation, its mask and its legal ids."""
        ids = self.legal_ids(game)
        return self.observe(game, seat), self.mask(ids), ids

    def legal_ids(self, game: Game) -> list[int]:
        """The legal ids of the player to move."""
        # Game.action_pairs adds the claim only under claim_out rules: else the cached legal list.
        pairs = game.action_pairs() if game.rules.claim_out else game.legal_pairs()
        return self.moves.ids(pairs, game.table)

    def describe(self, action: int, table: int) -> str:
        return str(self.moves.decode(action, table))


class CompiledMoveTurns(MoveTurns):
    """ "move" mode, its card-play turns through the compiled core: one call writes the mover's
    observation, legal ids and mask (``observe_moves``, :attr:`_Observers.moves
    <scopa_env.fast.observers._Observers.moves>`); :meth:`legal_ids` asks
    :func:`~scopa_env.fast.core.plain_move_ids` alone. A position the compiled ids do not cover
    (more than :data:`MOVE_IDS_BUFFER`) and every other turn ask the rules' Python."""

    compiled = True

    __slots__ = ("move_ids", "move_observers", "optional", "out", "pairs_array", "prefixes", "priority", "starts")

    def __init__(self, setup: GameSetup, move_ids, move_observers: tuple) -> None:
        super().__init__(setup)
        self.move_ids = move_ids
        """:func:`~scopa_env.fast.core.plain_move_ids` (the export, its arrays checked once here)."""
        self.move_observers = move_observers
        """Per seat, the observer that also writes the seat's legal ids and their mask."""
        arrays = self.tables.compiled_moves()
        self.pairs_array, self.starts = arrays.pairs, arrays.starts
        self.priority, self.optional = arrays.priority, arrays.optional
        self.out = np.empty(MOVE_IDS_BUFFER, np.int64)
        """The compiled calls' legal ids (this env's own: envs may run in threads)."""
        aot.check_arrays(out=(self.out, np.int64, 1))
        self.prefixes = [self.out[:k] for k in range(ID_PREFIXES)]
        """Per count ``k`` below :data:`ID_PREFIXES`, the view of the output's first ``k`` ids (no
        slice made per turn)."""

    def card_turn(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
        mask = np.zeros(self.num_actions, MASK_DTYPE)
        observation, count = self.move_observers[seat](
            game, mask, self.out, self.priority, self.optional, self.pairs_array, self.starts
        )
        if count < 0:  # the compiled ids do not cover this position (the mask is untouched): the rules'
            ids = MoveTurns.legal_ids(self, game)
            mask[ids] = 1
            return observation, mask, ids
        return observation, mask, self._written(count)

    def legal_ids(self, game: Game) -> list[int]:
        if game.card_turn:
            hand = game.hands[game.current]
            count = self.move_ids(
                hand, game.table, self.priority, self.optional, self.pairs_array, self.starts, self.out
            )
            if count >= 0:
                return self._written(count)
        return MoveTurns.legal_ids(self, game)

    def _written(self, count: int) -> list[int]:
        """The first ``count`` ids of the compiled output."""
        return (self.prefixes[count] if count < ID_PREFIXES else self.out[:count]).tolist()


ROW_BLOCKS = (
    ("hands", core_layout.COL_HAND),
    ("played", core_layout.COL_PLAYED),
    ("piles", core_layout.COL_PILE),
    ("scope", core_layout.COL_SCOPE),
    ("scope_points", core_layout.COL_SCOPE_PTS),
)
"""The per-seat and per-side fields of a hand's card plays (:class:`CardPlayPosition`'s tuples, named as
:class:`Game` names them) and their first column in the compiled row: :meth:`RowMoveTurns.start` copies
them into the row, :meth:`RowMoveTurns.sync` back (each as long as the game's own)."""


class RowMoveTurns(CompiledMoveTurns):
    """ "move" mode with each hand's card plays in one state row of the compiled core
    (:mod:`scopa_env.fast.core.row`), for rules without decisions whose card-play turns are the
    core's: :meth:`start` copies a new deal from the env's ``Game`` into the row; then each step
    is one compiled call (:meth:`play`) that plays the card with the batch's own code, so the
    rules are not written a third time, and writes the next mover's observation, legal ids and
    mask, which :meth:`row_card_turn` hands out. The ``Game`` stays behind until :meth:`sync` hands it the position
    (:meth:`Game.adopt_plays <scopa_env.engine.game.Game.adopt_plays>`), which the env does
    before anything reads the game and at the hand's end, where the ``Game`` scores and deals."""

    __slots__ = (
        "P",
        "S",
        "TBL",
        "current",
        "deck_size",
        "live",
        "plays",
        "ready",
        "row_observe",
        "row_play",
        "row_turn",
        "size",
    )

    def __init__(self, setup: GameSetup, move_ids, move_observers: tuple, rows: tuple, P, TBL) -> None:
        super().__init__(setup, move_ids, move_observers)
        self.row_turn, self.row_observe, self.row_play = rows
        self.P, self.TBL = np.array(P), np.array(TBL)  # the exports take writable arrays: this env's copies
        self.S = np.zeros((1, core_layout.NUM_COLS), np.int64)
        """The row: the hand being played, ahead of the game while :attr:`live`."""
        aot.check_arrays(S=(self.S, np.int64, 2), P=(self.P, np.int64, 1), TBL=(self.TBL, np.int64, 1))
        self.size = setup.layout.size
        self.live = False
        self.current = 0
        """The seat to move in the row (while :attr:`live`)."""
        self.plays: list[tuple[int, int, int]] = []
        """The plays made in the row since the game was last level with it."""
        self.ready: tuple | None = None
        """The next mover's observation, mask and legal ids that the last :meth:`play` wrote."""
        self.deck_size = int(self.P[core_layout.P_DECK_SIZE])

    def start(self, game: Game) -> None:
        self.live = False
        self.ready = None
        if not game.card_turn:
            return
        L = core_layout
        row = [0] * L.NUM_COLS
        for name, col in (*ROW_BLOCKS, ("scores", L.COL_SCORE)):
            values = getattr(game, name)
            row[col : col + len(values)] = values
        row[L.COL_TABLE] = game.table
        row[L.COL_CURRENT] = self.current = game.current
        row[L.COL_DEALER] = game.dealer
        row[L.COL_LASTCAP] = L.NO_SEAT if game.last_capturer is None else game.last_capturer
        row[L.COL_IN_HANDS] = sum(h.bit_count() for h in game.hands)
        pos = row[L.COL_STOCK_POS] = self.deck_size - len(game.stock)
        row[L.COL_DECK + pos : L.COL_DECK + self.deck_size] = game.stock
        row[L.COL_PENDING] = L.NO_SEAT
        self.S[0] = row  # a game of more seats or sides than the core holds fails here (the rules check it)
        self.plays = []
        self.live = True

    def stop(self) -> None:
        self.live = False
        self.ready = None

    def sync(self, game: Game) -> None:
        if not self.live or not self.plays:
            return
        L = core_layout
        row = self.S[0].tolist()
        blocks = {name: tuple(row[col : col + len(getattr(game, name))]) for name, col in ROW_BLOCKS}
        game.adopt_plays(
            CardPlayPosition(
                **blocks,
                table=row[L.COL_TABLE],
                current=row[L.COL_CURRENT],
                last_capturer=row[L.COL_LASTCAP],
                stock_left=self.deck_size - row[L.COL_STOCK_POS],
            ),
            self.plays,
        )
        self.plays = []
        if game.hand_result is not None:  # the hand ended: the game scored it (and may have dealt the next)
            self.live = False

    def row_card_turn(self, seat: int) -> tuple[np.ndarray, np.ndarray, list[int]] | None:
        """On the row's card-play turn of ``seat`` (the seat to move): its observation, mask and legal
        ids, written by the last :meth:`play` (handed out once) or now, in one compiled call; None
        where the compiled ids do not cover the position (then sync and ask the game)."""
        found = self.ready
        if found is not None:
            self.ready = None
            return found
        observation = np.empty(self.size, np.float32)
        mask = np.zeros(self.num_actions, MASK_DTYPE)
        count = self.row_turn(self.S, self.P, seat, observation, mask, self.out, self.pairs_array, self.starts)
        if count < 0:
            return None
        return observation, mask, self._written(count)

    def row_observation(self, seat: int) -> np.ndarray:
        """``seat``'s observation of the hand in the row, a new array (any seat)."""
        observation = np.empty(self.size, np.float32)
        self.row_observe(self.S, self.P, seat, observation)
        return observation

    def play(self, card: int, captured: int) -> bool:
        """Play the mover's legal ``(card, captured)`` in the row and write the next mover's turn (for
        :meth:`row_card_turn`) in the same compiled call; True when it was the hand's last card (then
        :meth:`sync` ends the hand in the game)."""
        self.plays.append((self.current, card, captured))
        observation = np.empty(self.size, np.float32)
        mask = np.zeros(self.num_actions, MASK_DTYPE)
        count = self.row_play(
            self.S, self.P, self.TBL, card, captured, observation, mask, self.out, self.pairs_array, self.starts
        )
        if count == -3:
            self.ready = None
            return True
        self.current = int(self.S[0, core_layout.COL_CURRENT])
        self.ready = (observation, mask, self._written(count)) if count >= 0 else None
        return False


class SelectTurns(Turns):
    """ "select" mode on the rules' Python: name a hand card, then (where it has several captures)
    the table cards it takes one by one, then ``confirm`` where the choice may stop there."""

    __slots__ = ("confirm", "hands", "ranks")

    def __init__(self, setup: GameSetup) -> None:
        super().__init__(setup)
        self.confirm = setup.confirm
        self.ranks = setup.rules.ranks_per_suit
        self.hands = self.tables.hands
        """The shared hands (:attr:`RulesTables.hands`), read here before asking :meth:`RulesTables.hand`."""

    def card_turn(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """On ``seat``'s card-play turn (no card named yet): its observation, its mask and its legal
        ids, the hand's cards (every hand card is playable)."""
        hand = game.hands[seat]
        ids, mask = self.hands.get(hand) or self.tables.hand(hand)
        return self.observers[seat](game, None, 0), mask.copy(), ids

    def hand(self, hand: int) -> list[int]:
        """The legal ids of a card-play turn with ``hand`` (shared: read only)."""
        ids, _ = self.tables.hand(hand)
        return ids

    def outcomes(self, game: Game, card: int, card_turn: bool) -> list[int]:
        """The captured masks of the named ``card``'s legal moves (:meth:`Game.card_outcomes`, in
        :meth:`Game.action_pairs` order); ``card_turn``: the mover is on a card-play turn (which a
        compiled adapter may settle)."""
        return game.card_outcomes(card)

    def describe(self, action: int, table: int) -> str:
        return "confirm" if action == self.confirm else format_card(action, self.ranks)


class CompiledSelectTurns(SelectTurns):
    """ "select" mode, its card-play turns' captures through the compiled core: the named card's one
    capture (:func:`~scopa_env.fast.core.card_capture`), or its several as the "move" ids of that
    card alone (:func:`~scopa_env.fast.core.plain_move_ids`, in the rules' order) read back as
    captured masks (the "move" enumeration's arrays made the first time)."""

    compiled = True

    __slots__ = ("card_capture", "move_ids", "optional", "out", "priority")

    def __init__(self, setup: GameSetup, card_capture, move_ids) -> None:
        super().__init__(setup)
        self.card_capture = card_capture
        self.move_ids = move_ids
        self.priority = int(setup.rules.single_card_priority)
        self.optional = int(setup.rules.capture_optional)
        self.out = np.empty(MOVE_IDS_BUFFER, np.int64)
        aot.check_arrays(out=(self.out, np.int64, 1))

    def outcomes(self, game: Game, card: int, card_turn: bool) -> list[int]:
        if card_turn:
            captured = self.card_capture(card, game.table, self.priority, self.optional)
            if captured >= 0:  # the card's one capture (the usual case)
                return [captured]
            moves = self.tables.compiled_moves()
            count = self.move_ids(
                1 << card, game.table, self.priority, self.optional, moves.pairs, moves.starts, self.out
            )
            if count > 0:
                masks = moves.captured
                return [masks[j] for j in self.out[:count].tolist()]
        return game.card_outcomes(card)


def compiled_plays(rules: Rules) -> bool:
    """Whether the compiled core's card-play turns are the rules': the standard captures in the
    40-card deck, no claim (:meth:`Game.action_pairs` would add it) and no wildcard."""
    return bool(
        rules.plain_captures and rules.num_card_ids == NUM_CARDS and not rules.claim_out and not rules.bonus_wildcard
    )


def row_plays(setup: GameSetup) -> tuple | None:
    """``(P, TBL)`` of the compiled core for ``setup`` where a hand's card plays may go on in its row
    (:class:`RowMoveTurns`): the compiled card-play turns (:func:`compiled_plays`), no decision
    (Chkobba's first card, declarations, Cirulla's table bonus) and rules the core plays
    (:func:`~scopa_env.fast.params.check_supported`); else None."""
    rules = setup.rules
    if not compiled_plays(rules) or rules.first_card_choice or rules.declarations or rules.table_bonus:
        return None
    from scopa_env.fast.params import compiled_rules

    try:
        P, _, TBL, _ = compiled_rules(setup)
    except NotImplementedError:  # a field or house rule the core does not play
        return None
    return P, TBL


def turns_for(setup: GameSetup, compiled: bool = True) -> Turns:
    """A new adapter for an env of ``setup``: with ``compiled``, the compiled one where the core plays
    the rules' card-play turns (:func:`compiled_plays`) and its extension is built and fresh (else
    ``SCOPA_AOT=0``, a missing or stale build: the rules' Python)."""
    theirs = compiled and compiled_plays(setup.rules)
    if setup.action_mode == "move":
        if theirs:
            move_ids, move_observers = aot.move_ids(checked=False), observers_for(setup.layout).moves
            if move_ids is not None and move_observers is not None:
                rows, arrays = aot.row_exports(), row_plays(setup)
                if rows is not None and arrays is not None:
                    return RowMoveTurns(setup, move_ids, move_observers, rows, *arrays)
                return CompiledMoveTurns(setup, move_ids, move_observers)
        return MoveTurns(setup)
    if theirs:
        card_capture, move_ids = aot.card_capture(), aot.move_ids(checked=False)
        if card_capture is not None and move_ids is not None:
            return CompiledSelectTurns(setup, card_capture, move_ids)
    return SelectTurns(setup)


__all__ = [
    "CompiledMoveTurns",
    "RowMoveTurns",
    "CompiledMoves",
    "CompiledSelectTurns",
    "MoveTurns",
    "RulesTables",
    "SelectTurns",
    "Turns",
    "compiled_plays",
    "row_plays",
    "tables_for",
    "turns_for",
]
