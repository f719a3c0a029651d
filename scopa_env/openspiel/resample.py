"""Resampling: the cards a player cannot see dealt again with the kit's determinization.

:func:`resampled_position` is what :meth:`ScopaState.resample_from_infostate
<scopa_env.openspiel.state.ScopaState.resample_from_infostate>` returns a state of: the hand's
public part kept (thrown-in tables, the table, every decision), the hidden cards drawn by
:meth:`~scopa_env.engine.game.PlayerView.determinize` and the history replayed on them, with
rejection where a passed declaration constrains the draw. :func:`state_from_view` rebuilds a state
at a kit agent's decision from its :class:`~scopa_env.engine.game.PlayerView`: that is how an
OpenSpiel bot plays as a kit agent (:mod:`agents.openspiel_bot`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyspiel

from scopa_env.engine.actions import select_options
from scopa_env.engine.cards import RANK_OF, cards_of
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.rules import WILDCARD
from scopa_env.openspiel.position import Position
from scopa_env.openspiel.setup import TABLE, Setup

RESAMPLE_TRIES = 10_000
"""Most determinizations :func:`resampled_position` draws under declaration rules before it gives up."""


def resampled_position(pos: Position, player: int, rng: np.random.Generator) -> Position:
    """``pos`` with the cards ``player`` cannot see dealt again (:meth:`PlayerView.determinize`).

    The public part of the hand stays: thrown-in tables, the table and every decision. Under
    declaration rules who decides is public (the engine's :attr:`PlayerView.declare_queue`), so a
    seat that passed holds a hand it could have declared: draws whose replay does not give
    ``player`` the same information state are drawn again (rejection sampling).
    """
    setup = pos.setup
    view = pos.game.view(player)
    base = _replayed(setup, pos.start, pos.history[: pos.deal_start])
    table = sum(1 << c for c in pos.deals()[0])
    first = pos.first
    if first is not None and first[1] and player != (pos.dealer + 1) % setup.num_players:
        first = (None, True)  # a kept first card is known to its holder only: any of its first cards
    check = setup.rules.declarations or setup.rules.first_card_choice
    target = pos.info_text(player) if check else ""
    for _ in range(RESAMPLE_TRIES if check else 1):
        try:
            world = view.determinize(rng)
        except ValueError:  # a seat waiting to declare got a hand with nothing to declare
            continue
        new = _world_position(base, world, pos.decisions, table, first, rng)
        if new is None:
            continue
        for action in pos.history[len(new.history) :]:  # a "select" choice in progress
            new.apply(action)
        if not check or new.info_text(player) == target:
            return new
    raise RuntimeError(f"resample_from_infostate found no deal for p{player} in {RESAMPLE_TRIES} draws")


def _replayed(setup: Setup, start, actions: Sequence[int]) -> Position:
    pos = Position.initial(setup, start)
    for a in actions:
        pos.apply(a)
    return pos


def _initial_table(setup: Setup, world: Game) -> int:
    """The table ``world``'s hand was dealt: the plays undone, and Cirulla's table bonus (the table
    went to the dealer's pile before any play) read off the dealer side's pile."""
    table = world.table
    for _, card, captured in reversed(world.history):
        if captured == 0:
            table ^= 1 << card
        elif captured != 1 << card:
            table |= captured
    if setup.rules.table_bonus and not table and setup.rules.table_size:
        side = setup.side_of[world.dealer]
        taken = 0
        for seat, card, captured in world.history:
            if captured and setup.side_of[seat] == side:
                taken |= captured | 1 << card
        table = world.piles[side] & ~taken
    return table


def _world_position(
    base: Position,
    world: Game,
    decisions: Sequence[tuple[int, int, int]] | None,
    table: int | None = None,
    first: tuple[int | None, bool] | None = None,
    rng: np.random.Generator | None = None,
) -> Position | None:
    """``base`` (a position at the start of a deal) dealt and played on to ``world``.

    ``world`` is a full game in the middle of a hand (a real one or a determinization):
    its initial table is recovered by undoing the plays (or given), each seat's cards of a past
    deal are those it played in that round, the current deal adds the cards in hand, and the
    later deals come from the stock in the engine's dealing order. ``decisions`` are the hand's
    declaration decisions (:attr:`Position.decisions`): ``None`` passes wherever a seat may
    declare, except where ``world`` shows a declared hand of the current deal. A "select" choice
    in progress is not part of ``world`` and so not of the result. ``None`` if the decisions do
    not fit ``world`` (another seat would decide, or none). ``first`` (``first_card_choice``): the
    first card and whether it was kept; ``(None, True)`` or ``None``: kept, one of the first deal's
    cards of the player after the dealer, drawn with ``rng``.
    """
    setup = base.setup
    n = setup.num_players
    history = world.history
    cutter = (world.dealer + 1) % n
    if setup.rules.first_card_choice and world.deciding and not world.declare_queue:
        pos = base.copy()
        pos.apply(world.hands[cutter].bit_length() - 1)  # the first card, its decision pending
        return pos
    if table is None:
        table = _initial_table(setup, world)
    deal_of_ply = [
        max(k for k, first in enumerate(setup.deal_plies) if first <= ply) for ply in range(len(history) + 1)
    ]
    current = deal_of_ply[len(history)]
    dealt = [[0] * n for _ in setup.schedule]
    for ply, (seat, card, _) in enumerate(history):
        dealt[deal_of_ply[ply]][seat] |= 1 << card
    for seat in range(n):
        dealt[current][seat] |= world.hands[seat]
    order = [(world.dealer + 1 + i) % n for i in range(n)]
    stock = iter(world.stock)
    for k in range(current + 1, len(setup.schedule)):
        for i in range(n * setup.schedule[k]):
            dealt[k][order[i % n]] |= 1 << next(stock)
    pos = base.copy()
    keep = None
    if setup.rules.first_card_choice:
        card, keep = first if first is not None else (None, True)
        if card is None:
            mine = cards_of(dealt[0][cutter])
            card = mine[int(rng.integers(len(mine)))]
        pos.apply(card)
        for a in _move_actions(pos, card, 1 << card if keep else 0):
            pos.apply(a)
        if keep:
            dealt[0][cutter] &= ~(1 << card)
        else:
            table &= ~(1 << card)
    seat_slots = 0
    for owner, _ in setup.slots(world.dealer, keep):
        if owner == TABLE:
            cards = cards_of(table)
        else:
            cards = cards_of(dealt[seat_slots // n][owner])
            seat_slots += 1
        for a in cards:
            pos.apply(a)
    # The plays: in "select" mode a move may take several actions, so they are read off a replay.
    todo = None if decisions is None else list(decisions)
    for ply, (_, card, captured) in enumerate(history):
        if not _replay_decisions(pos, todo, ply, world):
            return None
        for a in _move_actions(pos, card, captured):
            pos.apply(a)
    if not _replay_decisions(pos, todo, len(history), world) or todo:
        return None
    return pos


def _replay_decisions(pos: Position, todo: list[tuple[int, int, int]] | None, ply: int, world: Game) -> bool:
    """Apply the declaration decisions due after ``ply`` plays; ``False`` if they do not fit.

    ``todo``: the recorded ``(ply, seat, captured)`` (consumed); ``None``: guessed from ``world``
    (a seat declares where its hand of the current deal is shown, or where an earlier hand held the
    Seven of cups of the wildcard rank in force, at that rank, and passes elsewhere; the queue stops
    where ``world``'s does).
    """
    game = pos.game
    last = ply == len(world.history)
    # A decision of the current deal: right after it (bazzica) or at a seat's first turn (Cirulla).
    this_deal = ply >= max(p for p in pos.setup.deal_plies if p <= len(world.history))
    while game.declare_queue:
        seat = game.current
        if last and game.declare_queue == world.declare_queue:
            return True  # the decisions still to come
        if todo is None:
            pairs = game.legal_pairs()
            shown = this_deal and (world.revealed[seat] or any(s == seat for s, _ in world.pending))
            # A wildcard rank in force was declared with the Seven of cups (its cards may all be played).
            shown = shown or (
                world.wild_rank and game.wild_rank != world.wild_rank and game.hands[seat] >> WILDCARD & 1
            )
            declare = [
                (c, m)
                for c, m in pairs
                if m and (not world.wild_rank or len(pairs) == 2 or RANK_OF[m.bit_length() - 1] == world.wild_rank)
            ]
            pair = declare[0] if shown and declare else pairs[0]
        else:
            if not todo or todo[0][0] != ply or todo[0][1] != seat:
                return False
            _, _, captured = todo.pop(0)
            pair = next(((c, m) for c, m in game.legal_pairs() if m == captured), None)
            if pair is None:
                return False
        for a in _move_actions(pos, *pair):
            pos.apply(a)
    return todo is None or not (todo and todo[0][0] == ply)


def _move_actions(pos: Position, card: int, captured: int) -> list[int]:
    """The action ids that play ``(card, captured)`` in ``pos`` (several in "select" mode)."""
    setup, game = pos.setup, pos.game
    if setup.moves is not None:
        return setup.moves.ids([(card, captured)], game.table)
    outcomes = [m for c, m in game.action_pairs() if c == card]
    out, selected = [card], 0
    if len(outcomes) == 1:
        return out
    for c in cards_of(captured):
        if len(select_options(outcomes, selected)[2]) == 1:
            return out
        selected |= 1 << c
        out.append(c)
    if len(select_options(outcomes, selected)[2]) > 1:
        out.append(setup.confirm)
    return out


def state_from_view(game: pyspiel.Game, view: PlayerView, rng: np.random.Generator) -> pyspiel.State:
    """A state at ``view``'s decision: the hand so far replayed with the hidden cards determinized.

    ``game`` is a loaded ``python_scopa`` game (:class:`~scopa_env.openspiel.game.ScopaGame`). The
    state's history starts at the view's hand (its dealer, scores and hand number); earlier hands
    are not part of it. ``view.seat`` sees exactly what the view shows.
    """
    setup = game.setup
    if view.rules != setup.rules or view.num_players != setup.num_players:
        raise ValueError(
            f"the view is of {view.num_players} players under {view.rules.name!r}, the game is of "
            f"{setup.num_players} under {setup.rules.name!r}"
        )
    checked = setup.rules.declarations or setup.rules.first_card_choice
    for _ in range(RESAMPLE_TRIES if setup.rules.declarations else 1):
        try:
            world = view.determinize(rng)
        except ValueError:  # a seat waiting to declare got a hand with nothing to declare
            continue
        start = (world.dealer, tuple(world.scores), world.hand_number)
        pos = _world_position(Position.initial(setup, start), world, None, rng=rng)
        if setup.rules.declarations and pos is not None and pos.game.scores != world.scores:
            # The view's scores hold this hand's declarations already: start the hand without them.
            scores = tuple(2 * w - r for w, r in zip(world.scores, pos.game.scores))
            start = (world.dealer, scores, world.hand_number)
            pos = _world_position(Position.initial(setup, start), world, None, rng=rng)
        # A seat not asked to declare must hold a hand with nothing to declare: else draw again.
        if pos is not None and (not checked or pos.game.view(view.seat) == world.view(view.seat)):
            return game.state_at(pos)
    raise ValueError(
        f"the view of p{view.seat} could not be rebuilt as a history of its hand in {RESAMPLE_TRIES} draws"
    )
