"""The ``heuristic`` baseline: the published Scopa strategy, with card counting.

Every legal move gets one score, and the highest wins (exact ties broken by ``self.rng``)::

    score = own gain                        dynamic card values of my side's pile (below) + scopa
          - reply * expected best reply     of the next player (always an opponent), counted below
          + block * blocking bonus          trailing a card only I can take back
          + leftover * end-of-hand share    who sweeps up the table at the end of the hand
          - trail * value of a trailed card keep valuable cards in hand

The rules of thumb and where each term comes from:

* booklet-origins-rules-strategies.txt, "NEVER LET YOUR NEIGHBOR MAKE A SCOPA!" ("always
  leave cards on the table that total over 10") and "WATCH OUT FOR 7'S" ("never leave cards
  on the table that total 7"): the expected best reply. For each rank still unseen we ask
  the engine (``legal_pairs``) what a card of that rank could capture from the table my
  move leaves, value it for the opponent (a sweep adds the scopa weight, a 7 capturing a
  sum of 7 adds the 7 itself) and weight it by the chance, from the hypergeometric law,
  that the next player holds that rank. A sum of 7 or a sweepable table only costs when a
  card that could exploit it is still unseen: "COUNT CARDS ... will let you know when to
  ignore, without a doubt, the two previous strategy tips".
* "Capturing as many 7's as possible and il sette bello" and wikipedia-scopa.txt ("it is a
  common tactic ... to capture aces and sixes whenever possible"; take the five plus the ace
  "unless they have already taken the seven or the six of the suit of the ace"): the own
  gain values a card by what it adds to *my* pile: the primiera weight counts only the gain
  over the best card I already hold in that suit (a missing suit counts extra), coins and
  cards stop counting once a side holds more than half of them (the point is decided).
* "prefer the capture that denies the opponent": subtracting the reply compares captures
  by what they leave behind.
* "BLOCK THE GAME": trailing a card of a rank whose other copies are all in my hand or out
  of play earns the blocking bonus (only I can capture it; with Kings nothing can sweep it).
* End of hand (pagat-scopa.txt: the cards left on the table go to the last player who
  captured): on the hand's last play the leftover table is counted for whoever takes it;
  earlier in the last round a capture earns the leftover when no opponent can still capture.
* Declarations (Cirulla's hand bonuses; the bazzica and bazzicotto of Scopa Bazzica,
  Sbarazzina and Piva): a declaration decision is not a card play. Passing scores below every
  way to declare, so the agent always declares a bonus it holds. wikipedia-scopa.txt, Cirulla:
  the bonuses are "awarded to players who hold" the cards and "must be declared before the
  player holding them has played their first card": points for cards already in hand, at the
  cost of showing them. Among several ways to declare (the wildcard's rank) the score below
  still chooses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agents.base import Agent
from agents.greedy import DEFAULT_WEIGHTS, CaptureWeights, is_last_play, mask_value, pick_best
from scopa_env.engine.cards import COINS, RANK_MASK, RANK_OF, SETTEBELLO, SUIT_MASK, SUIT_OF, SUITS
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move, capture_ranks, legal_pairs, move_of

MISSING_SUIT_BASE = 8
"""Primiera baseline of a suit my pile lacks: any card of it then adds (value - 8) primiera points."""


@dataclass(frozen=True)
class HeuristicWeights:
    """Weights of the terms of the heuristic score (see the module docstring)."""

    capture: CaptureWeights = DEFAULT_WEIGHTS
    """Card, coin, settebello, primiera and scopa weights, as for the greedy agent."""
    reply: float = 1.0
    """Weight of the next player's expected best reply."""
    block: float = 1.0
    """Times the card's value, for trailing a card only I can take back."""
    leftover: float = 1.0
    """Weight of the leftover table at the end of the hand."""
    trail: float = 0.3
    """Times the card's value, the cost of giving up a card by trailing it."""


def side_card_values(view: PlayerView, side: int, weights: CaptureWeights) -> list[float]:
    """Per card id, what capturing it is worth to ``side`` given its pile so far."""
    rules = view.rules
    pile = view.piles[side]
    deck = rules.deck_mask
    half_cards = deck.bit_count() / 2
    half_coins = (deck & SUIT_MASK[COINS]).bit_count() / 2
    cards_open = all(p.bit_count() <= half_cards for p in view.piles)
    coins_open = all((p & SUIT_MASK[COINS]).bit_count() <= half_coins for p in view.piles)
    base = []
    for s in SUITS:
        held = pile & SUIT_MASK[s]
        best = MISSING_SUIT_BASE
        if held:
            best = max(rules.primiera_values[RANK_OF[c] - 1] for c in range(rules.num_card_ids) if held >> c & 1)
        base.append(best)
    out = []
    for c in range(rules.num_card_ids):
        prim = rules.primiera_values[RANK_OF[c] - 1]
        v = weights.card if cards_open else 0.0
        v += weights.primiera * max(0, prim - base[SUIT_OF[c]])
        if SUIT_OF[c] == COINS and coins_open:
            v += weights.coin
        if c == SETTEBELLO:
            v += weights.settebello
        out.append(v)
    return out


def holds_some(unseen: int, kind: int, hand_size: int) -> float:
    """Chance that a hand of ``hand_size`` cards drawn from ``unseen`` cards holds one of ``kind`` of them."""
    if kind <= 0 or hand_size <= 0:
        return 0.0
    if unseen - kind < hand_size:
        return 1.0
    return 1.0 - math.comb(unseen - kind, hand_size) / math.comb(unseen, hand_size)


class HeuristicAgent(Agent):
    """Rule-of-thumb player with card counting (see the module docstring for every term).

    Args:
        seed: seeds the tie-breaks.
        weights: the term weights.
    """

    name = "heuristic"

    def __init__(self, seed=None, weights: HeuristicWeights | None = None) -> None:
        super().__init__(seed)
        self.weights = weights or HeuristicWeights()

    def act(self, view: PlayerView) -> Move:
        pairs = view.legal_pairs()
        if not pairs:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        if len(pairs) == 1:
            return move_of(*pairs[0])
        scores = self.scores(view, pairs)
        return move_of(*pick_best(pairs, scores, self.rng))

    def scores(self, view: PlayerView, pairs: list[tuple[int, int]]) -> list[float]:
        """The heuristic score of each ``(card, captured_mask)`` pair."""
        w = self.weights
        cw = w.capture
        n = view.num_players
        nxt = (view.seat + 1) % n
        mine = side_card_values(view, view.side, cw)
        theirs = side_card_values(view, view.side_of[nxt], cw)
        unseen = view.unseen
        num_unseen = unseen.bit_count()
        last_play = is_last_play(view)
        cards_left = sum(view.hand_counts) - 1  # in all hands after this move
        opp_hand = view.hand_counts[nxt] if cards_left else (view.rules.hand_size if view.stock_count else 0)
        final_round = view.stock_count == 0
        others_hold = any(view.hand_counts[s] for s in range(n) if view.side_of[s] != view.side)
        # Cirulla: a declared wildcard captures and is captured as its declared rank this hand.
        rank_of, rank_mask = capture_ranks(view.wild_rank) if view.wild_rank else (RANK_OF, RANK_MASK)
        # One unseen card per rank stands for that rank in the reply model.
        reps: dict[int, tuple[int, float, float]] = {}
        for rank in view.rules.ranks:
            kind = unseen & rank_mask[rank]
            if kind:
                p = holds_some(num_unseen, kind.bit_count(), opp_hand)
                reps[rank] = ((kind & -kind).bit_length() - 1, p, mask_value(kind, theirs) / kind.bit_count())
        declaring = view.declaring
        out = []
        for card, captured in pairs:
            if declaring and not captured:  # passing on a declaration: below every declaring move
                out.append(-math.inf)
                continue
            bit = 1 << card
            after = view.table & ~captured if captured else view.table | bit
            if captured:
                score = mask_value(captured | bit, mine)
                if captured == view.table and (not last_play or view.rules.last_play_scopa):
                    score += cw.scopa
            else:
                score = -w.trail * mine[card]
                rank_left = unseen & rank_mask[rank_of[card]]
                if not rank_left and view.hand & rank_mask[rank_of[card]] & ~bit:
                    score += w.block * mine[card]
            if last_play:
                # The hand ends now: the table goes to the last capturer.
                taker = (
                    view.side
                    if captured
                    else (None if view.last_capturer is None else view.side_of[view.last_capturer])
                )
                if taker == view.side:
                    score += w.leftover * mask_value(after, mine)
                elif taker is not None:
                    score -= w.leftover * mask_value(after, theirs)
                out.append(score)
                continue
            reply, p_none = self._expected_reply(view, after, reps, theirs, cards_left, rank_of)
            score -= w.reply * reply
            if final_round and captured:
                share = 1.0 if not others_hold else 0.5 * p_none
                score += w.leftover * share * mask_value(after, mine)
            out.append(score)
        return out

    def _expected_reply(
        self,
        view: PlayerView,
        table: int,
        reps: dict[int, tuple[int, float, float]],
        theirs: list[float],
        cards_left: int,
        rank_of: Sequence[int] = RANK_OF,
    ) -> tuple[float, float]:
        """Expected value of the next player's best capture on ``table``, and the chance they have none."""
        if not table or not reps:
            return 0.0, 1.0
        cw = self.weights.capture
        their_last = view.stock_count == 0 and cards_left == 1
        hand = 0
        for card, _, _ in reps.values():
            hand |= 1 << card
        best: dict[int, float] = {}
        for card, mask in legal_pairs(hand, table, view.rules, view.wild_rank):
            if not mask:
                continue
            v = mask_value(mask, theirs)
            if mask == table and (not their_last or view.rules.last_play_scopa):
                v += cw.scopa
            r = rank_of[card]
            if v > best.get(r, -1.0):
                best[r] = v
        expected, p_none = 0.0, 1.0
        for r in sorted(best, key=best.get, reverse=True):
            _, p, played_value = reps[r]
            expected += p_none * p * (best[r] + played_value)
            p_none *= 1.0 - p
        return expected, p_none
