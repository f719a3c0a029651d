"""The ``greedy`` baseline and the fixed card weights shared by the other baselines.

The greedy agent looks one move ahead and nothing more: it takes the capture with the
highest immediate value and, when it cannot capture, trails its least valuable card.

Immediate value of a capture (played card included, as it goes to the pile too)::

    value = sum(card_value(c) for c in captured + played) + scopa (if it sweeps the table)

    card_value(c) = card                                  every card counts toward "most cards"
                  + coin        if c is a coin            toward "most coins"
                  + settebello  if c is the seven of coins
                  + primiera * (primiera value of c's rank - 10)   7: +11, 6: +8, ace: +6, ...

With the default :class:`CaptureWeights` (card 1, coin 1, settebello 5, primiera 0.25,
scopa 10) the settebello is worth 1 + 1 + 5 + 2.75 = 9.75, a seven 3.75, a six 3, an
ace 2.5 and a face card 1; a scopa outweighs every capture without one. Primiera values
come from ``rules.primiera_values``, so variants with another scale are weighted by it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.base import Agent
from scopa_env.engine.cards import COINS, RANK_OF, SETTEBELLO, SUIT_OF
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move, Rules, move_of

FACE_PRIMIERA = 10
"""Primiera value of a face card in the standard scale: the zero point of the primiera weight."""


@dataclass(frozen=True)
class CaptureWeights:
    """Fixed weights of the greedy evaluation (see the module docstring)."""

    card: float = 1.0
    """Per captured card (most cards)."""
    coin: float = 1.0
    """Extra per captured coin (most coins)."""
    settebello: float = 5.0
    """Extra for the seven of coins (its own point)."""
    primiera: float = 0.25
    """Extra per primiera point above a face card's 10."""
    scopa: float = 10.0
    """For sweeping the table (a whole point, and the opponent must trail next)."""


DEFAULT_WEIGHTS = CaptureWeights()


def card_values(rules: Rules, weights: CaptureWeights = DEFAULT_WEIGHTS) -> tuple[float, ...]:
    """Per card id (0..39, 0..51 for the 52-card deck), the static ``card_value`` of the module docstring."""
    out = []
    for c in range(rules.num_card_ids):
        v = weights.card + weights.primiera * (rules.primiera_values[RANK_OF[c] - 1] - FACE_PRIMIERA)
        if SUIT_OF[c] == COINS:
            v += weights.coin
        if c == SETTEBELLO:
            v += weights.settebello
        out.append(v)
    return tuple(out)


def mask_value(mask: int, values: tuple[float, ...] | list[float]) -> float:
    """Sum of ``values`` over the cards of a bitmask."""
    total = 0.0
    while mask:
        low = mask & -mask
        total += values[low.bit_length() - 1]
        mask ^= low
    return total


def is_last_play(view: PlayerView) -> bool:
    """True when the card about to be played is the last card of the hand."""
    return view.stock_count == 0 and sum(view.hand_counts) == 1


def sweeps(view: PlayerView, captured: int) -> bool:
    """Whether capturing ``captured`` now scores a scopa (not on the hand's last play unless the rules say so)."""
    return bool(captured) and captured == view.table and (view.rules.last_play_scopa or not is_last_play(view))


class GreedyAgent(Agent):
    """Maximises the immediate capture value; trails the least valuable card.

    Exact ties are broken uniformly with ``self.rng``.

    Args:
        seed: seeds the tie-breaks.
        weights: the fixed weights (defaults documented in the module docstring).
    """

    name = "greedy"

    def __init__(self, seed=None, weights: CaptureWeights = DEFAULT_WEIGHTS) -> None:
        super().__init__(seed)
        self.weights = weights
        self._values: dict[Rules, tuple[float, ...]] = {}

    def score(self, view: PlayerView, card: int, captured: int) -> float:
        """Immediate value of a move (negative card value for a trail)."""
        values = self._values.get(view.rules)
        if values is None:
            values = self._values[view.rules] = card_values(view.rules, self.weights)
        if not captured:
            return -values[card]
        value = mask_value(captured | 1 << card, values)
        if sweeps(view, captured):
            value += self.weights.scopa
        return value

    def act(self, view: PlayerView) -> Move:
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        return move_of(*pick_best(pairs, [self.score(view, c, m) for c, m in pairs], self.rng))


def pick_best(pairs: list[tuple[int, int]], scores: list[float], rng, tol: float = 1e-9) -> tuple[int, int]:
    """The pair with the highest score; exact ties (within ``tol``) broken uniformly by ``rng``."""
    best = max(scores)
    tied = [p for p, s in zip(pairs, scores) if s >= best - tol]
    return tied[0] if len(tied) == 1 else tied[int(rng.integers(len(tied)))]
