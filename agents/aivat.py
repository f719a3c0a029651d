"""AIVAT-style control variates on the chance events: a variance-reduced duplicate margin.

Reference: N. Burch, M. Schmid, M. Moravčík, D. Morrill, M. Bowling, "AIVAT: A New Variance
Reduction Technique for Agent Evaluation in Imperfect Information Games", AAAI 2018. This module
applies the paper's chance-node correction (written here from the paper's idea, not from its code);
the game is the kit's own and so is the value estimate.

**What duplicate deals already cancel.** A deal seed fixes every shuffle of a whole game: the
engine shuffles the full deck anew at the start of each hand from one generator seeded by the deal
(:meth:`Game._deal_shuffled <scopa_env.engine.game.Game>`), and nothing else draws from it, so
hand ``k`` of both rotations of a duplicate pair (:mod:`agents.matches`) holds the same cards in the
same seats, the stock in the same order: the later draws are mirrored too, not just the first deal.
What duplicate does not cancel is the luck of (a) a hand that one rotation plays and the other does
not (the games end after different numbers of hands), and (b) the same cards arriving into a
different position, because the play before them differed (a card that captures on one table and
not on the other). The correction below targets what is left.

**The estimator.** A game's chance events are each hand's first deal (the hands and the table) and
each later deal from the stock. For an event ``e`` with state ``h`` before it and outcome ``c``, the
correction is ``V(h, c) - E_c'[V(h, c')]``: a fixed value estimate ``V`` of the state after the deal
minus its mean over every deal that could have come (the cards no player had seen, dealt anew in the
same shapes). The corrected margin of a game is its margin minus the sum of its corrections. Each
correction has mean zero given ``h`` under the true chance distribution, so the corrected margin has
the plain margin's expectation for *any* ``V`` fixed before the games (a poor ``V`` costs width, never
bias); the better ``V`` tracks how a deal moves the result, the narrower the interval. The deals of
a pair are then clustered as the plain estimate is (:func:`agents.stats.ratio_ci`): points per hand,
one cluster per deal.

The mean-zero property needs the chance distribution to be the uniform one given what happened
before. That holds for every agent that sees only its seat's view (no move then depended on the
order of the cards still in the stock); an agent declaring ``needs_full_state`` (the cheating
``oracle``) plays knowing the stock's order, and is refused. Where the rules throw a first table in
and deal again (the standard game: three or four Kings), the first deal is uniform among the tables
that stand, and its expectation is taken over those (:func:`table_shares`). Where a thrown-in table
also passes the deal on (Cirulla), the first deals are left uncorrected (still unbiased: any subset
of the corrections may be left out). Chkobba's first-card choice and more than two sides are refused.

**The value estimate** (:class:`DealValue`) is additive over the dealt cards: each card that could
have come adds a weight for where it went (a hand of the leader's side, a hand of the other side,
the table at a first deal; the stock is the zero), per deal number of the hand, plus, at the deals
from the stock, weights on what the card can do on the table in front of it (capture, take the
whole table, take a Seven, take the settebello, the number of cards it can take). Its expectation
over the redeals is then exact: a card of the ``n`` unseen goes to a place holding ``k`` of them
with probability ``k / n`` (at a first deal, the table's share as above). :func:`fit_value` sets
the weights by least squares on games played before and apart from the measured ones (other
seeds): the control variates that best explain a hand's margin of the leader's side. :func:`sampled_correction` computes a correction by drawing
redeals instead, for any ``V``; the tests check the two agree.

**What it reads.** This is an evaluation tool run after (or beside) the games: it sees every card,
the hands of all seats and the table at each deal, but never the order of the stock beyond the cards
the event dealt (an event keeps only the set of cards that could have come and where each went).
The agents still play from their own seat's view (:func:`agents.matches.agent_move`).

:func:`play_traced` plays a game exactly as :func:`agents.matches.play_game` does (same seeds, same
record) and adds its chance events; :func:`run_traced` plays deals; :func:`aivat_summary` gives the
plain and the corrected margin per hand of each agent with their intervals.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.base import Agent
from agents.matches import MAX_HANDS, Match, _checked_move, agent_seed, deal_seed, game_agent, hand_rows
from agents.stats import ratio_ci
from scopa_env.engine.captures import legal_pairs
from scopa_env.engine.cards import MAX_CARDS, RANK_OF, SETTEBELLO, cards_of, mask_of
from scopa_env.engine.game import Game, sides_for
from scopa_env.engine.rules import Rules, get_rules

LEADER_HAND, OTHER_HAND, TABLE = 0, 1, 2
"""Where a dealt card went, relative to the side of the seat that plays first after the deal."""

STATE_FEATURES = ("captures", "takes_table", "takes_seven", "takes_settebello", "cards_taken")
"""Per card dealt from the stock into a hand: what it can do on the table in front of it."""


# --- chance events ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ChanceEvent:
    """One deal: which cards could have come and where each went (never the stock's order)."""

    hand: int
    """The hand of the game (0 = first)."""
    round: int
    """0: the hand's first deal (hands and table); ``k``: the ``k``-th deal from the stock."""
    pool: int
    """Bitmask of the cards that could have come: the cards no player had seen before the deal."""
    dealt: tuple[int, ...]
    """Per seat, the cards this deal gave it (bitmask)."""
    table: int
    """The cards this deal put on the table (a first deal; 0 otherwise)."""
    table_before: int
    """The table in front of the dealt cards (a deal from the stock; 0 at a first deal)."""
    leader: int
    """The seat that plays first after the deal."""
    side_of: tuple[int, ...]
    """Per seat, its side."""

    @property
    def leader_side(self) -> int:
        return self.side_of[self.leader]

    def places(self) -> list[tuple[int, int]]:
        """``(place, cards)`` for each place a card can go (the stock is what is left): the hands, then the table."""
        out = [
            (LEADER_HAND if self.side_of[s] == self.leader_side else OTHER_HAND, m) for s, m in enumerate(self.dealt)
        ]
        if self.round == 0:
            out.append((TABLE, self.table))
        return out

    def redealt(self, rng: np.random.Generator, rules: Rules | str | None = None) -> ChanceEvent:
        """The same deal with the pool's cards dealt anew: a draw from the chance distribution given the state.

        A first deal whose table ``rules`` throw in (:meth:`Game.needs_redeal
        <scopa_env.engine.game.Game.needs_redeal>`) is drawn again, as the game deals again.
        """
        pool = cards_of(self.pool)
        thrown_in = _thrown_in(get_rules(rules)) if self.round == 0 else None
        while True:
            order = [pool[i] for i in rng.permutation(len(pool))]
            pos = 0
            dealt = []
            for m in self.dealt:
                k = m.bit_count()
                dealt.append(mask_of(order[pos : pos + k]))
                pos += k
            table = mask_of(order[pos : pos + self.table.bit_count()]) if self.round == 0 else 0
            if thrown_in is None or not thrown_in(table):
                break
        return ChanceEvent(
            self.hand, self.round, self.pool, tuple(dealt), table, self.table_before, self.leader, self.side_of
        )


def check_supported(match: Match) -> None:
    """Refuse what the estimator cannot correct without bias (module docstring)."""
    if match.num_sides != 2:
        raise ValueError(f"the chance correction needs two sides, got {match.num_sides}")
    if match.rules.first_card_choice:
        raise ValueError(f"the chance correction does not model the first-card choice of {match.rules.name!r}")


def _redeals(rules: Rules) -> bool:
    return bool(rules.kings_redeal or rules.aces_redeal or rules.redeal_aces or rules.redeal_same_rank)


@functools.lru_cache(maxsize=16)
def _thrown_in(rules: Rules) -> Callable[[int], bool] | None:
    """Whether a first deal's table is thrown in and dealt again under ``rules`` (``None``: never)."""
    return Game(2, rules, seed=0).needs_redeal if _redeals(rules) else None


MAX_TABLES = 2_000_000
"""At most this many first-deal tables are enumerated for :func:`table_shares`."""


@functools.lru_cache(maxsize=16)
def table_shares(rules: Rules) -> np.ndarray | None:
    """Per card, the chance that a hand's first deal puts it on the table (``None``: too many tables to count).

    ``table_size / deck`` for every card, except where a table can be thrown in (the standard game:
    three or four Kings, :attr:`Rules.kings_redeal`): the game then deals again until a table stands,
    so the accepted deals are uniform among those; every table of the deck is counted to get each
    card's chance exactly. The hands are dealt from the other cards, uniformly.
    """
    deck = list(rules.deck)
    size = rules.table_size
    shares = np.zeros(MAX_CARDS)
    thrown_in = _thrown_in(rules)
    if thrown_in is None or size == 0:
        shares[deck] = size / len(deck)
        return shares
    if math.comb(len(deck), size) > MAX_TABLES:
        return None
    standing = 0
    for table in itertools.combinations(deck, size):
        if not thrown_in(mask_of(table)):
            standing += 1
            shares[list(table)] += 1.0
    return shares / standing


def first_deals_corrected(rules: Rules) -> bool:
    """Whether the first deals of ``rules`` get a correction: not where a thrown-in table passes the deal
    to the next dealer (Cirulla: who leads then depends on the cards), nor where the tables are too many
    to count (:func:`table_shares`)."""
    return not (_redeals(rules) and rules.redeal_next_dealer) and table_shares(rules) is not None


def first_deal_event(game: Game, hand: int) -> ChanceEvent:
    """The first deal of the hand just dealt: every card of the deck could have come."""
    return ChanceEvent(
        hand, 0, game.rules.deck_mask, tuple(game.hands), game.table, 0, game.current, tuple(game.side_of)
    )


def stock_event(game: Game, stock_before: Sequence[int], hand: int, round_: int) -> ChanceEvent:
    """The deal from the stock the last play triggered; ``stock_before``: the stock before that play."""
    pool = mask_of(stock_before)
    dealt = tuple(h & pool for h in game.hands)
    return ChanceEvent(hand, round_, pool, dealt, 0, game.table, game.current, tuple(game.side_of))


# --- playing with the events recorded --------------------------------------------------------


def play_traced(match: Match, deal: int, rotation: int, agents: Sequence[Agent]) -> dict:
    """:func:`agents.matches.play_game`'s record of the same game, plus ``events``: its chance events in order.

    A forfeit raises ``RuntimeError`` (a bug, as everywhere in the evaluation).
    """
    check_supported(match)
    if any(getattr(a, "needs_full_state", False) for a in agents):
        raise ValueError("an agent that sees the stock's order (needs_full_state) makes the chance correction biased")
    lineup = match.lineups()[rotation]
    game = Game(match.num_players, match.rules, seed=deal_seed(match.seed, deal), auto_next_hand=False)
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(match.seed, deal, rotation, seat))
    first_deals = first_deals_corrected(match.rules)
    events: list[ChanceEvent] = [first_deal_event(game, 0)] if first_deals else []
    hands: list[list[dict]] = []
    moves = 0
    while len(hands) < MAX_HANDS:
        round_ = 0
        while not game.hand_over:
            stock = list(game.stock)
            forfeit = _checked_move(game, agents[game.current], match, lineup)
            if forfeit is not None:
                raise RuntimeError(f"deal {deal}, rotation {rotation}: {forfeit['agent']} {forfeit['error']}")
            moves += 1
            if len(game.stock) < len(stock):
                round_ += 1
                events.append(stock_event(game, stock, len(hands), round_))
        hands.append(hand_rows(game.hand_result))
        if game.winner is not None:
            break
        game.next_hand()
        if first_deals:
            events.append(first_deal_event(game, len(hands)))
    return {
        "deal": deal,
        "rotation": rotation,
        "lineup": list(lineup),
        "winner": game.winner,
        "hands": hands,
        "scores": list(game.scores),
        "forfeit": None,
        "moves": moves,
        "events": events,
    }


def run_traced(
    match: Match, num_deals: int, first_deal: int = 0, progress: bool = False, desc: str | None = None
) -> list[list[dict]]:
    """Every rotation of deals ``first_deal .. first_deal + num_deals - 1`` (:func:`play_traced`), in this process."""
    check_supported(match)
    pool = [
        [game_agent(spec, match.num_players, match.rules) for _ in range(match.num_players)] for spec in match.agents
    ]
    side_of = sides_for(match.num_players, match.rules)
    seats = [[pool[lineup[side_of[s]]][s] for s in range(match.num_players)] for lineup in match.lineups()]
    deals = range(first_deal, first_deal + num_deals)
    if progress:
        from tqdm import tqdm

        deals = tqdm(deals, unit="deal", desc=desc, leave=False, dynamic_ncols=True)
    return [[play_traced(match, d, r, seats[r]) for r in range(match.num_sides)] for d in deals]


# --- the value estimate ----------------------------------------------------------------------


def card_state_features(card: int, table: int, rules: Rules) -> np.ndarray:
    """:data:`STATE_FEATURES` of ``card`` played now onto ``table``."""
    out = np.zeros(len(STATE_FEATURES))
    if not table:
        return out
    bit = 1 << card
    takes = [m for _, m in legal_pairs(bit, table, rules) if m and m != bit]
    if takes:
        out[0] = 1.0
        out[1] = float(any(m == table for m in takes))
        out[2] = float(any(any(RANK_OF[c] == 7 for c in cards_of(m)) for m in takes))
        out[3] = float(any(m >> SETTEBELLO & 1 for m in takes))
        out[4] = max(m.bit_count() for m in takes)
    return out


class DealValue:
    """The additive value estimate of a deal (module docstring): the leader's side's expected hand margin.

    ``weights[r]`` is the block of deal number ``r`` of a hand: at ``r = 0`` a ``(3, MAX_CARDS)`` array
    (leader's side hand, other side's hand, table, per card); at ``r >= 1`` a ``(2, MAX_CARDS +
    len(STATE_FEATURES))`` array (the two hands, per card then per state feature). A deal number
    without a block is not corrected.
    """

    def __init__(self, rules: Rules | str | None, weights: dict[int, np.ndarray]) -> None:
        self.rules = get_rules(rules)
        self.weights = {int(r): np.asarray(w, dtype=float) for r, w in weights.items()}
        self._cache: dict[tuple[int, int], np.ndarray] = {}

    # features: the part of V that depends on the deal's outcome, and its mean over the outcomes
    def block_shape(self, round_: int) -> tuple[int, int]:
        return (3, MAX_CARDS) if round_ == 0 else (2, MAX_CARDS + len(STATE_FEATURES))

    def _state(self, card: int, table: int) -> np.ndarray:
        key = (card, table)
        f = self._cache.get(key)
        if f is None:
            if len(self._cache) > 200_000:
                self._cache.clear()
            f = self._cache[key] = card_state_features(card, table, self.rules)
        return f

    def features(self, event: ChanceEvent) -> np.ndarray:
        """``phi(outcome)``: the block's features of the deal that came (flattened)."""
        x = np.zeros(self.block_shape(event.round))
        for place, mask in event.places():
            for c in cards_of(mask):
                x[place, c] += 1.0
                if event.round:
                    x[place, MAX_CARDS:] += self._state(c, event.table_before)
        return x.ravel()

    def expected_features(self, event: ChanceEvent) -> np.ndarray:
        """``E[phi]`` over the redeals, exact: a card of the pool goes to a place with that place's share of
        the pool; at a first deal whose table may be thrown in, a card's chance of the table is its
        :func:`table_shares` and the hands share the rest."""
        x = np.zeros(self.block_shape(event.round))
        pool = cards_of(event.pool)
        n = len(pool)
        counts: dict[int, int] = {}
        for place, mask in event.places():
            counts[place] = counts.get(place, 0) + mask.bit_count()
        if event.round == 0:
            table = table_shares(self.rules)
            if table is None:
                raise ValueError(f"the first deals of {self.rules.name!r} are not corrected (first_deals_corrected)")
            in_hands = n - counts.pop(TABLE, 0)
            x[TABLE, pool] = table[pool]
            for place, k in counts.items():
                x[place, pool] += (1.0 - table[pool]) * k / in_hands
            return x.ravel()
        state = sum(self._state(c, event.table_before) for c in pool)
        for place, k in counts.items():
            x[place, pool] += k / n
            x[place, MAX_CARDS:] += k / n * state
        return x.ravel()

    def centered(self, event: ChanceEvent) -> np.ndarray:
        return self.features(event) - self.expected_features(event)

    def value(self, event: ChanceEvent) -> float:
        """``V`` of the state after the deal, up to terms the deal's outcome does not move (leader's side)."""
        w = self.weights.get(event.round)
        return 0.0 if w is None else float(w.ravel() @ self.features(event))

    def correction(self, event: ChanceEvent) -> float:
        """``V(after) - E[V(after)]`` in hand points of the leader's side (0 for a deal number without weights)."""
        w = self.weights.get(event.round)
        return 0.0 if w is None else float(w.ravel() @ self.centered(event))

    # storage
    def to_json(self) -> dict:
        return {"rules": self.rules.name, "weights": {str(r): w.tolist() for r, w in sorted(self.weights.items())}}

    @classmethod
    def from_json(cls, data: dict) -> DealValue:
        return cls(data["rules"], {int(r): np.asarray(w) for r, w in data["weights"].items()})

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> DealValue:
        return cls.from_json(json.loads(Path(path).read_text()))


def sampled_correction(
    value: Callable[[ChanceEvent], float],
    event: ChanceEvent,
    rng: np.random.Generator,
    samples: int = 256,
    rules: Rules | str | None = None,
) -> float:
    """``V(after) - mean V(redeal)`` over ``samples`` redeals of the pool: the correction for any ``V``.

    Unbiased too (the sampled mean is an unbiased estimate of the expectation), with some Monte Carlo
    noise; :meth:`DealValue.correction` computes the expectation exactly instead.
    """
    mean = sum(value(event.redealt(rng, rules)) for _ in range(samples)) / samples
    return value(event) - mean


def leader_margin(hand: list[dict], side: int) -> float:
    """Hand points of ``side`` minus the other side's (two sides)."""
    return float(hand[side]["total"] - hand[1 - side]["total"])


def fit_value(
    games: Sequence[dict], rules: Rules | str | None, ridge: float = 1.0, max_round: int | None = None
) -> DealValue:
    """The weights of :class:`DealValue` by ridge least squares on traced games (:func:`play_traced`).

    One row per hand: the centered features of each of its deals, side by side (one block per deal
    number), against the hand's margin of its leader's side. The fitted weights are the linear control
    variates that leave the least variance in a hand's margin. Fit on games apart from those measured.
    """
    scratch = DealValue(rules, {})
    rounds = 1 + max(e.round for g in games for e in g["events"])
    if max_round is not None:
        rounds = min(rounds, max_round + 1)
    sizes = [int(np.prod(scratch.block_shape(r))) for r in range(rounds)]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    rows, targets = [], []
    for g in games:
        by_hand: dict[int, list[ChanceEvent]] = {}
        for e in g["events"]:
            by_hand.setdefault(e.hand, []).append(e)
        for h, events in by_hand.items():
            if h >= len(g["hands"]):
                continue
            x = np.zeros(starts[-1])
            for e in events:
                if e.round < rounds:
                    x[starts[e.round] : starts[e.round + 1]] = scratch.centered(e)
            rows.append(x)
            targets.append(leader_margin(g["hands"][h], events[0].leader_side))
    X = np.asarray(rows)
    y = np.asarray(targets)
    y = y - y.mean()
    w = np.linalg.solve(X.T @ X + ridge * np.eye(X.shape[1]), X.T @ y)
    weights = {r: w[starts[r] : starts[r + 1]].reshape(scratch.block_shape(r)) for r in range(rounds)}
    return DealValue(rules, weights)


# --- the estimate ------------------------------------------------------------------------------


def game_corrections(game: dict, value: DealValue) -> list[float]:
    """Per side, the sum of the game's corrections in that side's hand margin."""
    out = [0.0, 0.0]
    for e in game["events"]:
        c = value.correction(e)
        out[e.leader_side] += c
        out[1 - e.leader_side] -= c
    return out


def aivat_summary(match: Match, deals: Sequence[Sequence[dict]], value: DealValue) -> list[dict]:
    """Per agent of a two-agent match: the plain and the corrected margin per hand, each with its 95%
    interval clustered by deal, the width ratio (plain over corrected), and the mean correction per hand
    with its interval (zero in expectation: a check of the estimator)."""
    num_agents = len(match.agents)
    plain = np.zeros((len(deals), num_agents))
    corr = np.zeros((len(deals), num_agents))
    hands = np.zeros((len(deals), num_agents))
    for i, records in enumerate(deals):
        for rec in records:
            c = game_corrections(rec, value)
            for side, a in enumerate(rec["lineup"]):
                m = sum(leader_margin(h, side) for h in rec["hands"])
                plain[i, a] += m
                corr[i, a] += c[side]
                hands[i, a] += len(rec["hands"])
    out = []
    for a, spec in enumerate(match.agents):
        p = ratio_ci(plain[:, a], hands[:, a])
        q = ratio_ci(plain[:, a] - corr[:, a], hands[:, a])
        out.append(
            {
                "agent": spec,
                "deals": len(deals),
                "hands": int(hands[:, a].sum()),
                "plain": p,
                "corrected": q,
                "correction": ratio_ci(corr[:, a], hands[:, a]),
                "width_ratio": (p["hi"] - p["lo"]) / (q["hi"] - q["lo"]) if q["hi"] > q["lo"] else float("nan"),
            }
        )
    return out
