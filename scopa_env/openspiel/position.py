"""The game's transitions in plain Python: :class:`Position`, one history of ``python_scopa``.

A position is the deal in progress (the chance outcomes so far, slot by slot: :meth:`Setup.slots`)
or the engine's :class:`~scopa_env.engine.game.Game` of the hand being played. The engine deals:
once a deal's chance outcomes are complete they are put in the order the engine's shuffle leaves
the deck (:meth:`Position.deck_order`) and :meth:`Game.from_order <scopa_env.engine.game.Game.from_order>`
deals them (the table, the hands, the stock, a thrown-in table, Cirulla's table bonus and the
declarations queue); Chkobba's first-card decision is the engine's :meth:`~scopa_env.engine.game.Game.play_pair`.
From there the engine plays the hand; this module adds the chance probabilities, the "select"
mode's step-by-step moves, the returns and the strings of what each player knows.

:class:`~scopa_env.openspiel.state.ScopaState` is OpenSpiel's shell around a position; the tree
export (:mod:`scopa_env.openspiel.export`) and the resampling (:mod:`scopa_env.openspiel.resample`)
use positions directly, which is several times faster than going through OpenSpiel's state objects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyspiel

from scopa_env.engine.actions import TAKE_ALL, select_options
from scopa_env.engine.game import Game
from scopa_env.openspiel.setup import FIRST, TABLE, Setup, cards_text, ids_text


def _copy_game(game: Game) -> Game:
    """A copy of a hand in play: its lists copied, the rest shared.

    Unlike :meth:`Game.clone` the generator is shared, not copied (copying it is most of the
    cost): these games never shuffle, as every hand is built by ``Game.from_deal`` with
    ``auto_next_hand=False`` and ``next_hand`` is never called.
    """
    copy = Game.__new__(Game)
    attrs = copy.__dict__
    attrs.update(game.__dict__)
    for name, value in attrs.items():
        if type(value) is list:
            attrs[name] = value[:]
    return copy


class Position:
    """One history of the OpenSpiel game, in plain Python: the deal in progress or the engine's game.

    :class:`ScopaState` is a thin OpenSpiel shell around one; tree walks (:func:`export_efg`)
    and replays (:meth:`ScopaState.resample_from_infostate`) use positions directly, which
    is several times faster than going through OpenSpiel's state objects.
    """

    __slots__ = (
        "setup",
        "start",
        "hand",
        "dealer",
        "scores",
        "slots",
        "dealt",
        "slot",
        "game",
        "pending",
        "selected",
        "returns",
        "over",
        "past",
        "texts",
        "history",
        "hand_start",
        "deal_start",
        "thrown",
        "decisions",
        "first",
    )

    setup: Setup
    start: tuple[int, tuple[int, ...], int]
    """Dealer, scores and number of hands played before this history's first hand."""
    hand: int
    """Hands finished in this history."""
    dealer: int
    scores: list[int]
    """Per side, the game score before the current hand."""
    slots: list[tuple[int, int]]
    """``(owner, cards)`` of each set of the current hand's deal (:meth:`Setup.slots`)."""
    dealt: list[list[int]]
    """Per slot, the cards dealt to it so far, ascending."""
    slot: int
    """Index of the slot being dealt; ``len(slots)`` once the hand is dealt."""
    game: Game | None
    """The engine's game of the current hand, ``None`` while it is dealt."""
    pending: int | None
    """"select" mode: the card chosen, its captures not yet complete."""
    selected: int
    """"select" mode: the table cards chosen so far (bitmask)."""
    returns: list[float]
    over: bool
    past: list[str]
    """Per player, the information-state text of the finished hands."""
    texts: list[str]
    """Per player, the information-state text of the current hand's plays so far."""
    history: list[int]
    """Every action applied, chance outcomes included (OpenSpiel's ``history()``)."""
    hand_start: int
    """Index in :attr:`history` of the current hand's first deal action."""
    deal_start: int
    """Index in :attr:`history` of the first action of the current hand's last deal (after
    thrown-in tables of ``redeal_next_dealer`` rules; else :attr:`hand_start`)."""
    thrown: tuple[str, ...]
    """Per player, this hand's thrown-in deals as that player saw them (who dealt, the first card
    and its fate under ``first_card_choice``, the table)."""
    decisions: tuple[tuple[int, int, int], ...]
    """This hand's declaration decisions, ``(plays before it, seat, captured mask)`` (0: passed)."""
    first: tuple[int, bool] | None
    """``first_card_choice``: the current deal's first card and whether it was kept; ``None`` before
    the decision (and under other rules)."""

    @classmethod
    def initial(cls, setup: Setup, start: tuple[int, Sequence[int], int] | None = None) -> Position:
        """The start of a history: the first hand about to be dealt.

        ``start`` is ``(dealer, scores, hands_played)``; default the first hand of a game
        (dealer the last seat, scores 0).
        """
        pos = cls.__new__(cls)
        dealer, scores, first_hand = start or (setup.num_players - 1, (0,) * setup.num_sides, 0)
        pos.setup, pos.start = setup, (dealer, tuple(scores), first_hand)
        pos.hand, pos.dealer, pos.scores = 0, dealer, list(scores)
        pos.pending, pos.selected = None, 0
        pos.returns, pos.over = [0.0] * setup.num_players, False
        pos.past = [""] * setup.num_players
        pos.history = []
        pos._start_hand()
        return pos

    def copy(self) -> Position:
        new = Position.__new__(Position)
        new.setup, new.start, new.hand, new.dealer = self.setup, self.start, self.hand, self.dealer
        new.scores = self.scores  # replaced, never mutated
        new.slots = self.slots  # replaced, never mutated
        new.dealt = [cards[:] for cards in self.dealt] if self.game is None else self.dealt
        new.slot = self.slot
        new.game = None if self.game is None else _copy_game(self.game)
        new.pending, new.selected = self.pending, self.selected
        new.returns, new.over = self.returns[:], self.over
        new.past, new.texts = self.past, self.texts  # replaced, never mutated
        new.history, new.hand_start = self.history[:], self.hand_start
        new.deal_start, new.thrown, new.decisions = self.deal_start, self.thrown, self.decisions
        new.first = self.first
        return new

    def __deepcopy__(self, memo) -> Position:
        return self.copy()  # OpenSpiel clones a Python state by deep-copying its attributes

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def _cards(self, mask: int) -> str:
        return cards_text(self.setup, mask)

    def _ids(self, cards: Sequence[int]) -> str:
        return ids_text(self.setup, cards)

    # --- dealing ----------------------------------------------------------------------------

    def _start_hand(self) -> None:
        self.hand_start = len(self.history)
        self.thrown = ("",) * self.setup.num_players
        self.decisions = ()
        self._start_deal()

    def _start_deal(self) -> None:
        self.slots = self.setup.slots(self.dealer)
        self.dealt = [[] for _ in self.slots]
        self.slot = 0
        self.game = None
        self.texts = []
        self.first = None
        self.deal_start = len(self.history)

    def _hand_head(self, player: int) -> str:
        return f"hand {self.start[2] + self.hand + 1} {self.thrown[player]}dealer {self.dealer}"

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card of the slot being dealt, with its probability (see the module docstring)."""
        setup = self.setup
        owner, size = self.slots[self.slot]
        cards = self.dealt[self.slot]
        need = size - len(cards)
        last = cards[-1] if cards else -1
        used = 0 if self.first is None else 1 << self.first[0]
        for dealt in self.dealt[: self.slot + 1]:
            for c in dealt:
                used |= 1 << c
        pool = [c for c in setup.rules.deck if c > last and not used >> c & 1]
        if owner == TABLE and not setup.explicit_redeal:
            partial = sum(1 << c for c in cards)
            total = setup.table_completions(partial, last, need)
            weights = [(c, setup.table_completions(partial | 1 << c, c, need - 1)) for c in pool]
            return [(c, w / total) for c, w in weights if w]
        total = math.comb(len(pool), need)
        return [(c, math.comb(len(pool) - 1 - k, need - 1) / total) for k, c in enumerate(pool[: len(pool) - need + 1])]

    def _deal(self, card: int) -> None:
        cards = self.dealt[self.slot]
        cards.append(card)
        if len(cards) == self.slots[self.slot][1]:
            owner = self.slots[self.slot][0]
            if owner == FIRST:
                self._first_card(card)
                return
            if owner == TABLE and self.setup.explicit_redeal and self._thrown_in():
                return
            self.slot += 1
            if self.slot == len(self.slots):
                self._begin_play()

    def deck_order(self) -> list[int]:
        """The deal so far as the deck the engine's deal takes it from (:meth:`Game.from_order`), top
        card first: the first deal one card at a time from the player after the dealer, the table,
        then the later deals the same way; under ``first_card_choice`` the first card, then the first
        deal seat by seat as :meth:`Game.play_pair` deals it after the decision. Slots not dealt yet
        are filled with the undealt cards in ascending order (only once a deal is complete, or
        for a table's throw-in, which does not depend on them, is the order read)."""
        setup = self.setup
        n = setup.num_players
        if self.slots[0][0] == FIRST:
            return self.dealt[0] + [c for c in setup.rules.deck if c != self.dealt[0][0]]
        used = {c for cards in self.dealt for c in cards}
        if self.first is not None:
            used.add(self.first[0])
        spare = iter([c for c in setup.rules.deck if c not in used])
        table: list[int] = []
        deals: list[list[list[int]]] = [[[] for _ in range(n)] for _ in setup.schedule]
        k = 0
        for (owner, size), cards in zip(self.slots, self.dealt):
            cards = cards + [next(spare) for _ in range(size - len(cards))]
            if owner == TABLE:
                table = cards
            else:
                deals[k // n][owner] = cards
                k += 1
        seats = [(self.dealer + 1 + i) % n for i in range(n)]

        def one_at_a_time(deal: list[list[int]]) -> list[int]:
            return [deal[seats[i % n]][i // n] for i in range(n * len(deal[seats[-1]]))]

        later = [c for deal in deals[1:] for c in one_at_a_time(deal)]
        if self.first is None:
            return one_at_a_time(deals[0]) + table + later
        return [self.first[0]] + [c for s in seats for c in deals[0][s]] + table + later

    def _engine_deal(self) -> Game:
        """The engine's game dealt from :meth:`deck_order` (:meth:`Game.from_order`), Chkobba's
        first-card decision played on it (:meth:`Game.play_pair`, which deals the rest)."""
        setup = self.setup
        game = Game.from_order(
            self.deck_order(),
            setup.num_players,
            setup.rules,
            dealer=self.dealer,
            scores=self.scores,
            seed=0,
            auto_next_hand=False,
        )
        game.hand_number = self.start[2] + self.hand
        if self.first is not None:
            card, keep = self.first
            game.play_pair(card, 1 << card if keep else 0)
        return game

    def _thrown_in(self) -> bool:
        """``redeal_next_dealer`` and ``first_card_choice`` rules: a table the engine's deal throws in
        (:meth:`Game.from_order`, :meth:`Game.needs_redeal`) is public; the hand is dealt again (new
        chance nodes) by the seat the engine names (Cirulla: the next dealer), with a new first
        card under ``first_card_choice``."""
        judged = self._engine_deal()
        if not judged.redeals:
            return False
        table, _ = self.deals()
        if self.first is not None:
            head = len(f"hand {self.start[2] + self.hand + 1} ")
            self.thrown = tuple(f"{t[head:]} | table {self._ids(table)} thrown in, " for t in self.texts)
        else:
            self.thrown = tuple(f"{t}dealer {self.dealer} table {self._ids(table)} thrown in, " for t in self.thrown)
        self.dealer = judged.dealer
        self._start_deal()
        return True

    def deals(self) -> tuple[list[int], list[list[list[int]]]]:
        """The table and, per deal of the hand, per seat, the cards of the complete deal (Chkobba's
        first card where it went)."""
        n = self.setup.num_players
        table: list[int] = []
        deals: list[list[list[int]]] = [[[] for _ in range(n)] for _ in self.setup.schedule]
        k = 0
        for (owner, _), cards in zip(self.slots, self.dealt):
            if owner == TABLE:
                table = cards
            else:
                deals[k // n][owner] = cards
                k += 1
        if self.first is not None:
            card, keep = self.first
            if keep:
                cutter = (self.dealer + 1) % n
                deals[0][cutter] = sorted(deals[0][cutter] + [card])
            else:
                table = sorted(table + [card])
        return table, deals

    def _first_card(self, card: int) -> None:
        """Chkobba: the first card is drawn for the player after the dealer, who decides on it in the
        engine's game of that moment (:meth:`Game.from_order`: the card on top of the deck; the rest
        stands in for the stock, whose order is dealt by the chance nodes after the decision)."""
        setup = self.setup
        n = setup.num_players
        cutter = (self.dealer + 1) % n
        self.game = self._engine_deal()
        scores = "/".join(map(str, self.scores))
        self.texts = [
            f"{self._hand_head(p)} scores {scores} | first card p{cutter}"
            + (f" {setup.card_text[card]}" if p == cutter else "")
            for p in range(n)
        ]

    def _decide_first(self, seat: int, card: int, captured: int) -> None:
        """Chkobba's first card kept (the self-mask move) or put on the table (public); the rest is
        dealt by chance nodes, and the engine plays the decision once they are complete."""
        keep = captured != 0
        part = f" | p{seat}:keeps" if keep else f" | p{seat}:tables {self.setup.card_text[card]}"
        texts = [t + part for t in self.texts]
        self.slots = self.setup.slots(self.dealer, keep)
        self.dealt = [[] for _ in self.slots]
        self.slot = 0
        self.game = None
        self.first = (card, keep)
        self.texts = texts

    def _begin_play(self) -> None:
        """The deal is complete: the engine deals it (its table bonus and declarations queue
        included) and takes over."""
        n = self.setup.num_players
        game = self.game = self._engine_deal()
        table, _ = self.deals()
        tail = f" | table {self._ids(table)}" if table else ""
        if any(game.table_bonus):
            tail += f" | table bonus {'/'.join(map(str, game.table_bonus))}"
        if self.first is not None:  # the first card's texts go on
            heads = [t + tail for t in self.texts]
        else:
            scores = "/".join(map(str, self.scores))
            heads = [f"{self._hand_head(p)} scores {scores}{tail}" for p in range(n)]
        self.texts = [f"{heads[p]} | {self._deal_text(0, p)}{self._queue_text()}" for p in range(n)]

    def _queue_text(self) -> str:
        """The seats that decide on a declaration after a deal (public, as the engine's
        :attr:`PlayerView.declare_queue`); empty where nobody does."""
        queue = self.game.declare_queue
        return " | to declare " + " ".join(f"p{s}" for s in queue) if queue else ""

    def _deal_text(self, deal: int, player: int) -> str:
        """One deal as ``player`` sees it: its own cards, a count for the other seats."""
        _, deals = self.deals()
        n = self.setup.num_players
        seats = [(self.dealer + 1 + i) % n for i in range(n)]
        return " | ".join(f"p{s} {self._ids(deals[deal][s]) if s == player else len(deals[deal][s])}" for s in seats)

    # --- play ---------------------------------------------------------------------------------

    def current_player(self) -> int:
        if self.over:
            return pyspiel.PlayerId.TERMINAL
        if self.game is None:
            return pyspiel.PlayerId.CHANCE
        return self.game.current

    def legal_actions(self) -> list[int]:
        """Legal actions of the player to move (ascending), or the chance outcomes' cards."""
        if self.over:
            return []
        if self.game is None:
            return [c for c, _ in self.chance_outcomes()]
        game, moves = self.game, self.setup.moves
        pairs = game.action_pairs()
        if moves is not None:
            return sorted(moves.ids(pairs, game.table))
        if self.pending is None:
            return sorted({c for c, _ in pairs})
        nxt, can_confirm, _ = select_options(self._outcomes(self.pending), self.selected)
        return nxt + [self.setup.confirm] if can_confirm else nxt

    def _outcomes(self, card: int) -> list[int]:
        return [mask for c, mask in self.game.action_pairs() if c == card]

    def apply(self, action: int) -> None:
        """Apply a legal action (a dealt card at chance nodes); the caller checks legality."""
        self.history.append(action)
        if self.game is None:
            self._deal(action)
            return
        move = self._resolve(action)
        if move is not None:
            self._play(*move)

    def _resolve(self, action: int) -> tuple[int, int] | None:
        """The ``(card, captured_mask)`` to play now, or ``None`` while a "select" choice goes on."""
        moves = self.setup.moves
        if moves is not None:
            card, mask = moves.pairs[action]
            return (card, self.game.table) if mask == TAKE_ALL else (card, mask)
        if self.pending is None:
            outcomes = self._outcomes(action)
            if len(outcomes) == 1:
                return action, outcomes[0]
            self.pending, self.selected = action, 0
            return None
        if action == self.setup.confirm:
            return self.pending, self.selected
        self.selected |= 1 << action
        _, _, candidates = select_options(self._outcomes(self.pending), self.selected)
        return (self.pending, candidates[0]) if len(candidates) == 1 else None

    def _play(self, card: int, captured: int) -> None:
        setup = self.setup
        self.pending, self.selected = None, 0
        game = self.game
        seat = game.current
        if game.declare_queue:
            self._declare(seat, card, captured)
            return
        if game.deciding:
            self._decide_first(seat, card, captured)
            return
        game.play_pair(card, captured)
        took = f">{self._cards(captured)}" if captured else ""
        part = f" | p{seat}:{self.setup.card_text[card]}{took}"
        texts = [t + part for t in self.texts]
        plies = len(game.history)
        if plies in setup.deal_plies and not game.hand_over:
            deal = setup.deal_plies.index(plies)
            queue = self._queue_text()
            texts = [f"{t} | {self._deal_text(deal, p)}{queue}" for p, t in enumerate(texts)]
        elif game.declare_queue:  # Cirulla: the next seat's first turn of the deal opens with its decision
            queue = self._queue_text()
            texts = [t + queue for t in texts]
        self.texts = texts
        if game.hand_over:
            self._end_hand()

    def _declare(self, seat: int, card: int, captured: int) -> None:
        """A declaration decision (the engine's :meth:`Game.play_pair`): declaring shows the hand to
        every player (and, for Cirulla's wildcard, the rank it stands for); passing shows nothing."""
        game = self.game
        wild = game.wild_rank
        game.play_pair(card, captured)
        self.decisions += ((len(game.history), seat, captured),)
        if captured:
            part = f" | p{seat}:declares {self._cards(game.revealed[seat])}"
            if game.wild_rank != wild:
                part += f" wild {game.wild_rank}"
        else:
            part = f" | p{seat}:passes"
        self.texts = [t + part for t in self.texts]

    def _end_hand(self) -> None:
        setup, game = self.setup, self.game
        totals = [row["total"] for row in game.hand_result.hand_score]
        if setup.rules.declarations:
            # Declarations scored when the deal's decisions closed, outside hand_score's total (as the env counts them).
            totals = [t + sum(d.values()) for t, d in zip(totals, game.hand_result.declared)]
        s = setup.num_sides
        game_over = game.winner is not None or self.hand + 1 >= setup.max_hands
        if setup.reward == "points":
            side_returns = [t - (sum(totals) - t) / (s - 1) for t in totals]
        elif setup.episode == "hand":
            best = max(totals)
            side_returns = _win_returns(totals.index(best) if totals.count(best) == 1 else None, s)
        else:
            side_returns = _win_returns(game.winner, s) if game_over else [0.0] * s
        for seat in range(setup.num_players):
            self.returns[seat] += side_returns[setup.side_of[seat]]
        if setup.episode == "hand" or game_over:
            self.over = True
            return
        self.past = [past + text + "\n" for past, text in zip(self.past, self.texts)]
        self.hand += 1
        self.scores = list(game.scores)
        self.dealer = (self.dealer + 1) % setup.num_players
        self._start_hand()

    # --- what a player knows -----------------------------------------------------------------

    def info_text(self, player: int) -> str:
        """``player``'s perfect-recall information state (see the module docstring)."""
        if self.game is None:
            current = self._dealing_text(player)
        else:
            current = self.texts[player]
            if self.pending is not None and player == self.game.current:  # the others see the card once played
                current += f" | choosing {self.setup.card_text[self.pending]}>{self._cards(self.selected)}"
        return f"p{player}\n{self.past[player]}{current}"

    def _dealing_text(self, player: int) -> str:
        """The deal in progress: the table and ``player``'s cards of the first deal so far."""
        n = self.setup.num_players
        if self.texts:  # Chkobba: the first card and its fate
            parts = [self.texts[player] + " | dealing"]
        else:
            parts = [f"{self._hand_head(player)} dealing"]
        k = 0
        for (owner, _), cards in zip(self.slots, self.dealt):
            if owner == TABLE:
                parts.append(f"table {self._ids(cards)}")
            elif owner != FIRST and k < n:
                parts.append(f"p{owner} {self._ids(cards) if owner == player else len(cards)}")
                k += 1
        return " | ".join(parts)

    def observation_text(self, player: int) -> str:
        """``player``'s view of the position in short notation (imperfect recall)."""
        game = self.game
        if game is None:
            return f"p{player} dealing"
        v = game.view(player)
        parts = [
            f"p{player} to move p{v.current} dealer p{v.dealer}",
            f"hand {self._cards(v.hand)}",
            f"table {self._cards(v.table)}",
            "piles " + " / ".join(self._cards(p) for p in v.piles),
            "played " + " / ".join(self._cards(p) for p in v.played),
            f"scope {'/'.join(map(str, v.scope))} scores {'/'.join(map(str, v.scores))} stock {v.stock_count}",
        ]
        if self.setup.rules.declarations:
            parts += [f"shown p{s} {self._cards(r)}" for s, r in enumerate(v.revealed) if r]
            if v.wild_rank:
                parts.append(f"wild {v.wild_rank}")
            if v.declare_queue:
                parts.append("declaring " + " ".join(f"p{s}" for s in v.declare_queue))
        if self.pending is not None and player == v.current:
            parts.append(f"choosing {self.setup.card_text[self.pending]}>{self._cards(self.selected)}")
        return " | ".join(parts)

    def action_text(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {self.setup.card_text[action]}"
        moves = self.setup.moves
        game = self.game
        if moves is not None and game is not None and game.declare_queue and player == game.current:
            card, mask = moves.pair(action, game.table)
            return "pass" if mask == 0 else f"declare {self.setup.card_text[card]}>{self._cards(mask)}"
        if moves is not None:
            card, mask = moves.pairs[action]
            return f"{self.setup.card_text[card]} takes the table" if mask == TAKE_ALL else str(moves.decode(action))
        return "confirm" if action == self.setup.confirm else self.setup.card_text[action]

    def __str__(self) -> str:
        head = f"hand {self.start[2] + self.hand + 1}, dealer {self.dealer}, scores {self.scores}"
        if self.game is None:
            dealt = "; ".join(
                f"{ {TABLE: 'table', FIRST: 'first card'}.get(owner, f'p{owner}') }: {self._ids(cards)}"
                for (owner, _), cards in zip(self.slots, self.dealt)
                if cards
            )
            return f"{head}; dealing: {dealt}"
        text = f"{head}; {self.game!r}"
        return text if self.pending is None else f"{text}; choosing {self.setup.card_text[self.pending]}"


def _win_returns(winner: int | None, num_sides: int) -> list[float]:
    """+1 to the winning side, -1 shared by the others (zero-sum); 0 to all without a winner."""
    if winner is None:
        return [0.0] * num_sides
    return [1.0 if s == winner else -1.0 / (num_sides - 1) for s in range(num_sides)]
