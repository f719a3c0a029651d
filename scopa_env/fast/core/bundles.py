"""The named bundles the kernels pass around: arrays that travel together, as namedtuples.

numba takes a namedtuple of arrays as one argument in nopython mode, reads ``rules.params`` as
a field of a struct, and passes it between compiled functions as the arrays themselves, so a
kernel takes four bundles where it took twenty arrays. The ahead-of-time build exports them too
(:mod:`scopa_env.fast.aot_build`: a bundle's numba type is ``numba.typeof`` of one).

What does *not* travel in a bundle is a compile-time switch: an argument that is an array or
``None`` and whose ``None`` prunes code (``D``, ``OPPS``, ``STD``, ``VAR``; docs/fast.md). numba
prunes a branch only on ``x is None`` where ``x`` is an argument of the function being compiled,
never on a field of one, so those stay arguments of their own. The heuristic's weights are a
field of :class:`Rules` all the same: the one branch on them is in
:func:`~scopa_env.fast.core.opponents.choose_move`, which takes them as an argument of its own.

A bundle costs what its arrays cost: numba counts a reference, atomically, to each array of a
bundle handed to an inlined helper, and on the row loop's path those counts took a quarter of a
step (benchmarks/results/core_bundles_pairs.json). The entry points borrow their arguments
(:func:`~scopa_env.fast.core.borrow.borrowed`), on which numba counts nothing; the arrays a
kernel allocates (a :class:`Scratch`) keep their counts, so the hot helpers bind their fields to
names once rather than hand them on.

Nothing here is compiled; :mod:`scopa_env.fast.layout` names the indices into the arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Rules(NamedTuple):
    """The rules and settings as the kernels read them (never write), from
    :func:`scopa_env.fast.batch.compiled_rules` and the batch's options."""

    params: np.ndarray
    """``P``: int64 ``(NUM_PARAMS,)``, the rules' and the batch's int settings (``P_*``)."""
    floats: np.ndarray
    """``F``: float64 ``(NUM_FLOATS,)``, primiera values, the greedy player's card values and
    tolerance, the opponents' cumulative mixture (``F_*``)."""
    tables: np.ndarray
    """``TBL``: int64 ``(NUM_TBL,)``, the sorted deck, the start of each card's "move" ids, the
    cards dealt per stock size and the primiera rank groups (``TBL_*``)."""
    pairs: np.ndarray | None
    """``PAIRS``: int64 ``(moves, 2)``, the "move" enumeration's ``(card, captured mask)`` by id;
    None where no move id is written (the search)."""
    heuristic: np.ndarray | None
    """``H``: float64 ``(NUM_HEURISTIC,)``, the heuristic player's weights (``H_*``); None where no
    heuristic player moves, which prunes the heuristic's code."""


class Games(NamedTuple):
    """Games in progress, one per row (the batch's games, or the search's plies)."""

    state: np.ndarray
    """``S``: int64 ``(N, NUM_COLS)``, the state matrix (the columns ``COL_*``)."""
    rng: np.ndarray
    """uint64 ``(N, 2)``: each row's generators, stream 0 the deals', stream 1 the opponents'
    (:func:`~scopa_env.fast.core.bits.seed_games`)."""


class Outputs(NamedTuple):
    """What a batch step writes for each game ``i`` (row ``i`` of every array)."""

    obs: np.ndarray
    """float32 ``(N, size)``: the observation of the seat to move (or of ``OP_OBSERVE``'s seats)."""
    mask: np.ndarray
    """int8 ``(N, P_CARD_IDS + 1)``: "select" mode's legal actions (a card id, or CONFIRM)."""
    legal_ids: np.ndarray
    """int64 ``(N, P_LEGAL_WIDTH)``: "move" mode's legal ids, -1 past the count."""
    rewards: np.ndarray
    """float32 ``(N, players)``: each seat's reward for this step."""
    info: np.ndarray
    """int64 ``(N, NUM_INFO)``: status of the step (``INFO_*``)."""
    hand_score: np.ndarray
    """float64 ``(N, MAX_SIDES, NUM_SCORE_FIELDS)``: the score of a hand that ended (``SCORE_*``)."""
    final_obs: np.ndarray
    """float32 ``(N, size)``: the last observation of an episode that ended (and was reset)."""


class Scratch(NamedTuple):
    """Work space of the legal moves, written afresh by every enumeration; its fields in the order
    :func:`~scopa_env.fast.core.captures.legal_pairs` takes them. One per kernel call (per thread):
    :func:`~scopa_env.fast.core.kernels.new_scratch`."""

    subset_masks: np.ndarray
    """int64 ``(P_SUB_CAP,)``: the table's subsets with a capturable sum."""
    subset_sums: np.ndarray
    """int64 ``(P_SUB_CAP,)``: their sums."""
    cards: np.ndarray
    """int64 ``(P_SCRATCH,)``: the legal pairs' hand cards (then the heuristic's replies')."""
    captures: np.ndarray
    """int64 ``(P_SCRATCH,)``: the legal pairs' captured masks (0: the card is laid down)."""


class ObservedGame(NamedTuple):
    """The parts of a game one seat's observation is written from
    (:func:`~scopa_env.fast.core.observation.observe`): a state row's slices and entries
    (:func:`~scopa_env.fast.core.observation.write_observation`), or the Python engine's ints
    (the AEC env's observers, :mod:`scopa_env.fast.aot`)."""

    hands: np.ndarray | tuple
    """By seat: the cards in each hand."""
    piles: np.ndarray | tuple
    """By side: the cards captured this hand."""
    played: np.ndarray | tuple
    """By seat: the cards played this hand."""
    revealed: np.ndarray | tuple
    """By seat: the declared cards still in each hand (shown to all)."""
    scope: np.ndarray | tuple
    """By side: the scope this hand."""
    scores: np.ndarray | tuple
    """By side: the game points."""
    table: int
    """The face-up table cards."""
    stock_left: int
    """Cards left in the stock."""
    dealer: int
    """The seat that dealt this hand."""
    current: int
    """The seat to move."""
    last_capturer: int
    """The seat that captured last this hand, ``NO_SEAT`` for none."""
    pending: int
    """"select" mode: the hand card the observing seat chose, ``NO_SEAT`` for none."""
    selected: int
    """"select" mode: the table cards it chose so far (0 without a pending card)."""
    wild: int
    """Cirulla: the declared wildcard's rank (0: none, or no wildcard entry in the layout)."""
    queue: bool
    """Whether a declaration is being decided."""


class ObservationFormat(NamedTuple):
    """How the observation vector is laid out for the rules (:mod:`scopa_env.engine.observation`)."""

    deck_mask: int
    """The deck's cards (``P_DECK_MASK``): the unseen plane is these less the seen ones."""
    target: float
    """The game's target points: the scores are written as fractions of it."""
    hand_size: float
    """Cards per hand in a full deal: the hand sizes are written as fractions of it."""
    width: int
    """Entries of a card plane (``P_CARD_IDS``: 40, or 52 for the 52-card deck)."""
    declare: bool
    """Whether the layout has the declarations' entries (the shown cards, the declaring flag)."""
