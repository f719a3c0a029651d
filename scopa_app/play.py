"""``scopa play``: a game against the agents in the terminal.

The human holds seat 0 (``player_0``, "You"); every other seat is an agent built by
:func:`agents.registry.make_agent` (``--opponent`` for the other side(s), ``--teammate``
for your partners in 4- and 6-player games). Seat 0 leads the first hand.

Input at the card prompt::

    7d            play the Seven of coins (short notation, see scopa_env.engine.cards)
    2             play the second card of your hand
    7d 3c 4s      play 7d and take 3c and 4s in one go
    ?             list the legal moves (then a move's number plays it: m3)
    h             help;  q  quit (exit status 0)

When the chosen card has several legal captures you choose one by number (or by
naming the cards). Invalid input re-prompts with the reason; Ctrl-C or end of input
leaves the game cleanly (exit status 130).

The loop takes ``input_fn`` and ``output_fn`` so tests (and other front ends) can drive
it with scripted input. :func:`explain_move` and :func:`breakdown` are shared with the
web server (:mod:`scopa_app.web`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scopa_env.engine.cards import (
    COINS,
    ENGLISH_SUIT_NAMES,
    FRENCH_SUIT_NAMES,
    RANK_OF,
    cards_of,
    format_card,
    format_cards,
    mask_of,
    parse_cards,
)
from scopa_env.engine.game import Game, HandResult, PlayerView, sides_for
from scopa_env.engine.render import colorize
from scopa_env.engine.rules import Move, Rules, get_rules, move_of
from scopa_env.engine.scoring import CATEGORIES
from scopa_env.engine.setup import GameSetup

HUMAN_SEAT = 0
"""The human plays seat 0 (``player_0``) in the terminal and on the web page."""

DEFAULT_OPPONENT = "heuristic"
"""Agent spec used when ``--opponent`` is not given and the zoo has no agent for the game."""


def default_opponent(rules: Rules | str | None = None, num_players: int = 2) -> str:
    """The default opponent of a game: the zoo's trained agent for these rules and player count
    (``zoo:standard-2p-v3`` for the standard 2-player game, about a millisecond per move; the one with the
    highest margin against ``heuristic`` on its card when several play the game), else
    :data:`DEFAULT_OPPONENT` (also when the ``train`` package is not installed)."""
    try:
        from train import zoo
    except ImportError:
        return DEFAULT_OPPONENT
    entry = zoo.default_for(get_rules(rules).name, num_players)  # the strongest against heuristic
    return f"zoo:{entry}" if entry else DEFAULT_OPPONENT


RAW_SCORE_KEYS = ("num_cards", "num_coins", "primiera_value", "num_scope", "total")
"""Keys of a hand-score row that are counts or the total, not points of a category."""

CATEGORY_LABELS = {
    "cards": "Cards",
    "coins": "Coins",
    "settebello": "Settebello",
    "primiera": "Primiera",
    "scope": "Scope",
}


# --- agents -------------------------------------------------------------------------


HUMAN_TABLE_ROLE = "an opponent or partner of a human: it would see your cards"
"""What a cheating agent (the ``oracle``) cannot be in ``scopa play`` and ``scopa web``."""


def make_agent(spec: str, seed: int | None = None):
    """An agent from a spec such as ``"greedy"`` or ``"ppo:runs/x.pt"`` (see :mod:`agents.registry`).

    A cheating agent (the ``oracle``) is refused in one line: at a human's table it would see the
    human's cards (``scopa play`` and ``scopa web`` build their agents here).
    """
    from agents.registry import check_fair
    from agents.registry import make_agent as registry_make_agent

    check_fair(spec, HUMAN_TABLE_ROLE)
    agent = registry_make_agent(spec, seed=seed)
    check_fair(agent, HUMAN_TABLE_ROLE)
    return agent


def _count(n: int, noun: str) -> str:
    """``"1 card"``, ``"3 cards"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _there_are(n: int, noun: str) -> str:
    return f"there is {_count(n, noun)}" if n == 1 else f"there are {_count(n, noun)}"


def _span(n: int, prefix: str = "", sep: str = "..") -> str:
    """The numbers a player may type for ``n`` choices: ``"1..3"``, ``"m1..m3"``; ``"1"`` when there is one."""
    return f"{prefix}1" if n == 1 else f"{prefix}1{sep}{prefix}{n}"


def agent_names() -> list[str]:
    """Built-in agent names and registered checkpoint prefixes, for menus and ``--help``."""
    from agents.registry import known_specs

    return known_specs()


def agents_help() -> str:
    """The agents a spec may name, for ``--help``: the built-ins, then every checkpoint prefix."""
    from agents.registry import AGENT_NAMES, known_specs

    prefixes = [s for s in known_specs() if s not in AGENT_NAMES]
    return (
        f"{', '.join(AGENT_NAMES)} (with options: search:ply_budget=4000), a trained checkpoint: "
        f"{', '.join(prefixes)} (PATH: a run folder or its best/; NAME: one `scopa zoo` lists), "
        "or your own class as module:Class"
    )


def seat_agents(
    num_players: int, opponent: str, teammate: str | None = None, seed: int | None = None
) -> dict[int, object]:
    """The agents of every seat but :data:`HUMAN_SEAT`: teammates (same side) and opponents.

    Each agent gets its own seed (``seed + seat``) so games replay exactly when seeded.
    """
    sides = sides_for(num_players)
    out = {}
    for seat in range(num_players):
        if seat == HUMAN_SEAT:
            continue
        spec = teammate if (teammate and sides[seat] == sides[HUMAN_SEAT]) else opponent
        out[seat] = make_agent(spec, seed=None if seed is None else seed + seat)
    return out


# --- names ----------------------------------------------------------------------------


def seat_label(seat: int, specs: dict[int, str] | None = None, human: int = HUMAN_SEAT) -> str:
    """``"You"`` for the human, else ``"player_2 (greedy)"``."""
    if seat == human:
        return "You"
    spec = (specs or {}).get(seat)
    return f"player_{seat} ({spec})" if spec else f"player_{seat}"


def side_label(view: PlayerView, side: int) -> str:
    """``"You"``/``"player_1"`` with 2-3 players; ``"Your team (0+2)"``/``"Team 1+3"`` with teams."""
    seats = [s for s in range(view.num_players) if view.side_of[s] == side]
    if len(seats) == 1:
        return "You" if seats[0] == view.seat else f"player_{seats[0]}"
    joined = "+".join(str(s) for s in seats)
    return f"Your team ({joined})" if view.seat in seats else f"Team {joined}"


# --- explaining moves ---------------------------------------------------------------------


TRAIL_ON_THE_PAGE = "trail it into the empty slot"
"""How a trail is made on the web page (its table has an empty slot to click)."""
TRAIL_IN_THE_TERMINAL = "trail it: type the card alone"
"""How a trail is made at the terminal's prompt."""


def explain_move(
    view: PlayerView, card: int, captured: Sequence[int] | int, trail_how: str = TRAIL_ON_THE_PAGE
) -> str | None:
    """Why playing ``card`` and taking ``captured`` is illegal for ``view.seat``, or ``None`` if legal.

    The messages follow the rules as players know them (the well-known web game's help): "If
    it is possible to play your card on a single table card, you may not play that same card
    on multiple table cards"; "If you can't play a trick, you must place one of your cards in
    the empty slot on the table". ``trail_how`` says how the front end trails a card
    (:data:`TRAIL_ON_THE_PAGE` or :data:`TRAIL_IN_THE_TERMINAL`).
    """
    if view.current != view.seat:
        return f"it is player_{view.current}'s turn, not yours"
    deck = view.rules.ranks_per_suit
    mask = captured if isinstance(captured, int) else mask_of(captured)
    pairs = view.legal_pairs()
    if (card, mask) in pairs or (card, mask) == view.claim_pair():
        return None
    if not view.hand >> card & 1:
        return f"{format_card(card, deck)} is not in your hand (your hand: {format_cards(view.hand, deck)})"
    name = format_card(card, deck)
    if view.declaring:
        return "you may declare your hand (it will be shown) or pass: m2 declares, m1 passes"
    if view.deciding:
        return f"you drew {name} as the first card: keep it or put it on the table (nothing can be taken yet)"
    if mask == 1 << card:
        return f"your {name} cannot take itself under the {view.rules.name!r} rules"
    off_table = mask & ~view.table
    if off_table:
        where = format_cards(view.table, deck) or "empty"
        return f"{format_cards(off_table, deck)} {'is' if off_table.bit_count() == 1 else 'are'} not on the table ({where})"
    options = [m for c, m in pairs if c == card]
    captures = [m for m in options if m and m != 1 << card]
    listed = " or ".join(format_cards(m, deck) for m in captures)
    if not captures and (card, 1 << card) in pairs:
        return f"your {name} takes itself here (an Ace on the empty table): choose that move"
    if not mask:
        return f"your {name} can take {listed}, so it cannot be trailed: take one of those"
    if not captures:
        return f"your {name} cannot take anything from the table; {trail_how}"
    if not view.rules.plain_captures:
        # Variant capture rules (sums to 15, Ace takes all, fewest cards ...): name the legal options.
        return f"your {name} cannot take {format_cards(mask, deck)} under the {view.rules.name!r} rules; it can take {listed}"
    total = sum(RANK_OF[c] for c in cards_of(mask))
    if total != RANK_OF[card]:
        return (
            f"the cards you chose ({format_cards(mask, deck)}) add up to {total}, but your {name} is worth {RANK_OF[card]}; "
            f"it can take {listed}"
        )
    singles = [m for m in captures if m.bit_count() == 1]
    if singles and mask.bit_count() > 1 and view.rules.single_card_priority:
        return (
            f"your {name} matches a single table card ({' or '.join(format_cards(m, deck) for m in singles)}), "
            "so it must take that card, not several"
        )
    return f"{name} taking {format_cards(mask, deck)} is not legal; it can take {listed}"


# --- hand-end breakdown ---------------------------------------------------------------------


@dataclass
class BreakdownRow:
    """One category of the hand-end breakdown, one entry per side."""

    key: str
    label: str
    shown: list[str]
    """What each side had: a count, the primiera value, a tick for the settebello."""
    points: list[int]


def breakdown(result: HandResult, rules: Rules | str | None = None) -> list[BreakdownRow]:
    """Rows of the hand-end table: cards, coins, settebello, primiera, scope, variant extras, total.

    A primiera value of ``-`` means the side lacks a suit and cannot win the primiera.
    ``rules`` names the bonus suit (Hurrikan's hearts) and drops the primiera row where the
    variant scores the most Sevens instead. Variant categories (keys of the score rows that
    are not counts) appear after the scope.
    """
    rules = get_rules(rules)
    score = result.hand_score
    suit = rules.bonus_suit
    coins = "Coins" if suit == COINS else f"{ENGLISH_SUIT_NAMES[suit].capitalize()} ({FRENCH_SUIT_NAMES[suit]})"
    seven = "Settebello" if suit == COINS else f"Seven of {ENGLISH_SUIT_NAMES[suit]}"
    rows = [
        BreakdownRow("cards", "Cards", [str(r["num_cards"]) for r in score], [r["cards"] for r in score]),
        BreakdownRow("coins", coins, [str(r["num_coins"]) for r in score], [r["coins"] for r in score]),
        BreakdownRow(
            "settebello", seven, ["yes" if r["settebello"] else "" for r in score], [r["settebello"] for r in score]
        ),
    ]
    if rules.prime_rule != "sevens":
        rows.append(
            BreakdownRow(
                "primiera",
                "Primiera",
                [_fmt_number(r["primiera_value"]) if r["primiera_value"] else "-" for r in score],
                [r["primiera"] for r in score],
            )
        )
    rows.append(BreakdownRow("scope", "Scope", [str(r["num_scope"]) for r in score], [r["scope"] for r in score]))
    skip = set(CATEGORIES) | set(RAW_SCORE_KEYS)
    for key in score[0]:
        if key in skip or key.startswith("num_") or key.endswith("_value"):
            continue
        points = [int(r.get(key, 0)) for r in score]
        if key == "seven_majority":
            shown = [f"{r.get('num_sevens', 0)} sevens, {r.get('num_sixes', 0)} sixes" for r in score]
            rows.append(BreakdownRow(key, "Most sevens", shown, points))
        else:
            label = EXTRA_LABELS.get(key, key.replace("_", " ").capitalize())
            rows.append(BreakdownRow(key, label, ["yes" if p else "" for p in points], points))
    rows.append(BreakdownRow("total", "Hand points", [str(r["total"]) for r in score], [r["total"] for r in score]))
    return rows


EXTRA_LABELS = {"double_game": "Double game"}
"""Labels of variant score categories that the key alone does not spell well."""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _fmt_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def format_breakdown(result: HandResult, labels: Sequence[str], rules: Rules | str | None = None) -> str:
    """The breakdown as a text table: per side the count/value and, in brackets, the points."""
    table = []
    for row in breakdown(result, rules):
        if row.key == "total":
            cells = [str(p) for p in row.points]
        else:
            cells = [f"{shown or '-'} [{'+' + str(p) if p else '0'}]" for shown, p in zip(row.shown, row.points)]
        table.append((row.label, cells))
    width = max(len(label) for label, _ in table) + 2
    cols = [max(len(labels[i]), *(len(cells[i]) for _, cells in table)) + 3 for i in range(len(labels))]
    lines = [" " * (width + 2) + "".join(lbl.ljust(w) for lbl, w in zip(labels, cols))]
    for label, cells in table:
        lines.append("  " + label.ljust(width) + "".join(c.ljust(w) for c, w in zip(cells, cols)))
    return "\n".join(line.rstrip() for line in lines)


# --- the terminal game -----------------------------------------------------------------------


class Quit(Exception):
    """The player asked to leave (``q``, Ctrl-C or end of input)."""


@dataclass
class TerminalGame:
    """One human (seat 0) against agents, driven by ``input_fn``/``output_fn``.

    Args:
        game: the game (built with ``auto_next_hand=False`` so each hand end can be shown).
        agents: the agent of every other seat.
        specs: agent spec per seat, for labels.
        input_fn: reads one line given a prompt (``input``); may raise ``EOFError``/``KeyboardInterrupt``.
        output_fn: prints one block of text (``print``).
        color: ANSI colours.
    """

    game: Game
    agents: dict
    specs: dict[int, str] = field(default_factory=dict)
    input_fn: Callable[[str], str] | None = None
    output_fn: Callable[[str], None] | None = None
    color: bool = False

    def __post_init__(self) -> None:
        # Resolved at run time so a patched builtins.input/print is honoured.
        if self.input_fn is None:
            self.input_fn = lambda prompt: input(prompt)
        if self.output_fn is None:
            self.output_fn = lambda text: print(text, flush=True)

    def run(self) -> int:
        """Play until the game ends or the player quits; returns the exit code: 0 when the game
        ends or the player types ``q``, 130 on Ctrl-C or the end of input."""
        try:
            self.output_fn(self._banner())
            while True:
                game = self.game
                if game.hand_over:
                    self._show_hand_end()
                    if game.winner is not None:
                        return 0
                    self._ask("Press Enter to deal the next hand (q to quit) ")
                    game.next_hand()
                    continue
                seat = game.current
                if seat == HUMAN_SEAT:
                    self.output_fn(self.render())
                    move = self._human_move()
                else:
                    move = self.agents[seat].act(game.view(seat))
                side = game.side_of[seat]
                scope_before = game.scope[side]
                decision = game.deciding
                if (move.card, move.mask) == game.claim_pair() and (move.card, move.mask) not in game.legal_pairs():
                    game.play(move)
                    who = seat_label(seat, self.specs)
                    self.output_fn(f"  {who} calls chiamarsi fuori: {game.win_reason.replace('_', ' ')}")
                    continue
                if game.declare_queue:  # a declaration shows the hand; a pass says nothing
                    shown = self._cards(format_cards(game.hands[seat], self.deck))
                    who = seat_label(seat, self.specs)
                    game.play(move)
                    self.output_fn(f"  {who} declares {shown}" if move.mask else f"  {who} passes")
                    continue
                game.play(move)
                self.output_fn(self._describe(seat, move, scopa=game.scope[side] > scope_before, decision=decision))
        except Quit:
            self.output_fn("\nGame abandoned. Ciao!")
            return 0
        except (KeyboardInterrupt, EOFError):
            self.output_fn("\nGame abandoned. Ciao!")
            return 130

    # --- input ---------------------------------------------------------------------------

    def _ask(self, prompt: str) -> str:
        text = self.input_fn(prompt).strip()
        if text.lower() in ("q", "quit", "exit"):
            raise Quit
        return text

    def _human_move(self) -> Move:
        view = self.game.view(HUMAN_SEAT)
        hand = cards_of(view.hand)
        while True:
            text = self._ask(
                f"Your move: card ({_span(len(hand), sep='-')} or e.g. {format_card(hand[0], self.deck)}), "
                "? legal moves, h help > "
            )
            if not text:
                continue
            if text in ("?", "??"):
                self.output_fn(self._legal_listing(view))
                continue
            if text.lower() in ("h", "help"):
                self.output_fn(HELP)
                continue
            move, error = self._parse_move(view, text)
            if error:
                self.output_fn(f"  ! {error}")
                continue
            if move is not None:
                return move

    def _parse_move(self, view: PlayerView, text: str) -> tuple[Move | None, str | None]:
        """A move from one line of input, or the reason it is not one. ``(None, None)``: go back."""
        legal = view.legal_moves()
        hand = cards_of(view.hand)
        lower = text.lower()
        if lower in ("claim", "fuori"):  # chiamarsi fuori (claim_out rules): a wrong claim loses the game
            claim = view.claim_pair()
            if claim is None:
                return None, "claiming (chiamarsi fuori) is not allowed under these rules or now"
            return move_of(*claim), None
        if lower.startswith("m") and lower[1:].isdigit():
            k = int(lower[1:])
            if not 1 <= k <= len(legal):
                return None, f"{_there_are(len(legal), 'legal move')}: choose {_span(len(legal), 'm')} (? lists them)"
            return legal[k - 1], None
        if text.isdigit():
            k = int(text)
            if not 1 <= k <= len(hand):
                return None, f"you hold {_count(len(hand), 'card')}: choose {_span(len(hand))} or name a card"
            return self._choose_capture(view, hand[k - 1])
        if text.isalpha() and len(text) > 3:  # a word, not card notation (at most "10d" long)
            return None, (
                f"{text!r} is not a move: enter a hand card by its number ({_span(len(hand), sep='-')}) or its name "
                f"(e.g. {format_card(hand[0], self.deck)}), {_span(len(legal), 'm')} for a listed move; "
                "? legal moves, h help, q quit"
            )
        try:
            cards = parse_cards(text, self.deck)
        except ValueError as exc:
            return None, f"{exc}; type ? for the legal moves"
        card, captured = cards[0], cards[1:]
        if len(captured) != len(set(captured)):
            return None, "a table card is named twice"
        if not captured:
            if not view.hand >> card & 1:
                return None, explain_move(view, card, 0, TRAIL_IN_THE_TERMINAL)
            return self._choose_capture(view, card)
        error = explain_move(view, card, captured, TRAIL_IN_THE_TERMINAL)
        if error:
            return None, error
        return move_of(card, mask_of(captured)), None

    def _choose_capture(self, view: PlayerView, card: int) -> tuple[Move | None, str | None]:
        if view.declaring:  # any hand card leads to the declare/pass choice (made with the highest card)
            card = view.legal_pairs()[0][0]
        options = [move_of(c, m) for c, m in view.legal_pairs() if c == card]
        if len(options) == 1:
            return options[0], None
        listing = "  ".join(f"{i}) {self._move_text(m)}" for i, m in enumerate(options, 1))
        self.output_fn(f"  {self._cards(format_card(card, self.deck))} has {len(options)} options:  {listing}")
        while True:
            text = self._ask(f"Choose 1-{len(options)} (or name the table cards; b = back, ? = legal moves) > ")
            if text.lower() in ("b", "back"):
                return None, None
            if text in ("?", "??"):
                self.output_fn(self._legal_listing(view))
                continue
            if text.isdigit() and 1 <= int(text) <= len(options):
                return options[int(text) - 1], None
            if text.isdigit() or not text:
                self.output_fn(f"  ! choose a number from 1 to {len(options)}")
                continue
            try:
                named = parse_cards(text, self.deck)
            except ValueError as exc:
                self.output_fn(f"  ! {exc}")
                continue
            if len(named) != len(set(named)):
                self.output_fn("  ! a table card is named twice")
                continue
            error = explain_move(view, card, named, TRAIL_IN_THE_TERMINAL)
            if error:
                self.output_fn(f"  ! {error}")
                continue
            return move_of(card, mask_of(named)), None

    # --- output --------------------------------------------------------------------------------

    @property
    def deck(self) -> int:
        """Ranks per suit of the game's deck, for the card notation (13: the 52-card deck)."""
        return self.game.rules.ranks_per_suit

    def _cards(self, text: str) -> str:
        return colorize(text, self.deck) if self.color and text else text

    def _bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text

    def _move_text(self, move: Move) -> str:
        card = self._cards(format_card(move.card, self.deck))
        if self.game.declare_queue:
            if not move.mask:
                return "pass (do not declare)"
            if move.is_self:
                return "declare your hand (it is shown)"
            return f"declare your hand, the wildcard as {self._cards(format_cards(move.mask, self.deck))}'s rank"
        if self.game.deciding:
            return f"keep {card}" if move.is_self else f"put {card} on the table"
        if move.is_trail:
            return f"trail {card}"
        if move.is_self:
            return f"{card} takes itself"
        return f"{card} takes {self._cards(format_cards(move.mask, self.deck))}"

    def _legal_listing(self, view: PlayerView) -> str:
        lines = ["  Legal moves (type m<number> to play one):"]
        lines += [f"    m{i}) {self._move_text(m)}" for i, m in enumerate(view.legal_moves(), 1)]
        return "\n".join(lines)

    def _describe(self, seat: int, move: Move, scopa: bool = False, decision: bool = False) -> str:
        who = seat_label(seat, self.specs)
        card = self._cards(format_card(move.card, self.deck))
        you = seat == HUMAN_SEAT
        if decision:  # Chkobba's first card: a kept card stays hidden from the others
            if move.is_self:
                return f"  You keep the first card, {card}" if you else f"  {who} keeps the first card"
            return f"  {who} {'put' if you else 'puts'} the first card, {card}, on the table"
        if move.is_self:
            return f"  {who} {'play' if you else 'plays'} {card}, which takes itself"
        if move.is_trail:
            return f"  {who} {'trail' if seat == HUMAN_SEAT else 'trails'} {card}"
        text = f"  {who} {'play' if seat == HUMAN_SEAT else 'plays'} {card} and {'take' if seat == HUMAN_SEAT else 'takes'} "
        text += self._cards(format_cards(move.mask, self.deck))
        return text + ("  " + self._bold("SCOPA!") if scopa else "")

    def _banner(self) -> str:
        g = self.game
        others = ", ".join(f"{seat_label(s, self.specs)}" for s in sorted(self.agents))
        return (
            f"Scopa - {g.rules.name} rules, {g.num_players} players, first to {g.rules.target}. "
            f"You are player_0 against {others}.\nType h for help, ? for your legal moves, q to quit."
        )

    def render(self) -> str:
        """The table as the human sees it: other players, table, your hand, capture counts and scores."""
        view = self.game.view(HUMAN_SEAT)
        rule = "─" * 66
        lines = [
            rule,
            f" Hand {view.hand_number + 1} · stock {view.stock_count} cards · dealer player_{view.dealer}"
            f" · first to {view.rules.target} points",
        ]
        teams = view.num_sides < view.num_players
        # Opponents first (across the table), your own side last, just above your hand.
        order = sorted(range(view.num_sides), key=lambda s: s == view.side)
        for side in order:
            if teams:
                label = side_label(view, side)
                held = ""
            else:
                label = seat_label(side, self.specs)
                held = "" if side == HUMAN_SEAT else _plural(view.hand_counts[side], "card")
            scope = view.scope[side]
            lines.append(
                f"   {label:<24} {held:<10}captured {view.piles[side].bit_count():2d}   "
                f"{('scope ' + '*' * scope) if scope else '':<10}score {self._bold(str(view.scores[side]))}"
            )
        if teams:
            held = ", ".join(
                f"{seat_label(s, self.specs)}{' partner' if view.side_of[s] == view.side else ''}: "
                f"{_plural(view.hand_counts[s], 'card')}"
                for s in range(view.num_players)
                if s != HUMAN_SEAT
            )
            lines.append(f"   in hand: {held}")
        if view.history:
            seat, card, cap = view.history[-1]
            lines.append("   last play: " + self._describe(seat, move_of(card, cap)).strip())
        table = self._cards(format_cards(view.table, self.deck)) or "(empty)"
        lines.append(f" {self._bold('Table')}:      {table}")
        hand = "  ".join(f"{i}) {self._cards(format_card(c, self.deck))}" for i, c in enumerate(cards_of(view.hand), 1))
        lines.append(f" {self._bold('Your hand')}:  {hand}")
        shown = [
            f"{seat_label(s, self.specs)} shows {self._cards(format_cards(r, self.deck))}"
            for s, r in enumerate(view.revealed)
            if r and s != HUMAN_SEAT
        ]
        if shown:
            lines.append("   declared: " + "; ".join(shown))
        if view.declaring and view.current == HUMAN_SEAT:
            lines.append("   Your hand can be declared: type m1 to pass or m2 to declare it (it will be shown).")
        elif view.deciding and view.current == HUMAN_SEAT:
            lines.append("   You drew the first card: type 1, then choose to keep it or to put it on the table.")
        lines.append(rule)
        return "\n".join(lines)

    def _show_hand_end(self) -> None:
        g = self.game
        result = g.hand_result
        view = g.view(HUMAN_SEAT)
        labels = [side_label(view, s) for s in range(g.num_sides)]
        lines = [f"\n=== Hand {g.hand_number} over ==="]
        if result.leftover:
            lines.append(
                f"  {self._cards(format_cards(result.leftover, self.deck))} left on the table go to {labels[result.leftover_side]}"
            )
        lines.append(format_breakdown(result, labels, g.rules))
        lines.append(
            "  Game score: "
            + ", ".join(f"{lbl} {sc}" for lbl, sc in zip(labels, g.scores))
            + f" (target {g.rules.target})"
        )
        if g.winner is not None:
            who = labels[g.winner]
            lines.append(
                self._bold("  You win the game!" if g.side_of[HUMAN_SEAT] == g.winner else f"  {who} wins the game.")
            )
        self.output_fn("\n".join(lines))


HELP = """  How to play: choose a hand card by its number (1, 2, 3) or its name (7d = Seven of coins;
  ranks A 2-7 J Q K, suits d coins, c cups, s swords, b batons). Cards are worth their
  number, A is 1, and the figures J, Q, K (Fante, Cavallo, Re) are 8, 9, 10. If a card can take
  several sets of table cards you then choose one. You may also type the whole move:
  7d 3c 4s. A card equal to a single table card must take one such card; otherwise it may
  take table cards adding up to its value; a card that can take something cannot be
  trailed (played to the table alone). ? lists the legal moves (m2 plays the second),
  q quits. Where the rules allow chiamarsi fuori, "claim" ends the game claiming the
  target (a wrong claim loses it)."""


# --- command line -------------------------------------------------------------------------------


def new_terminal_game(
    rules: Rules | str | None = None,
    players: int = 2,
    opponent: str | None = None,
    teammate: str | None = None,
    seed: int | None = None,
    input_fn: Callable[[str], str] | None = None,
    output_fn: Callable[[str], None] | None = None,
    color: bool = False,
) -> TerminalGame:
    """A :class:`TerminalGame` with agents on every seat but 0 (seeded game and agents when ``seed`` is given).

    Raises:
        ValueError: bad rules or player count, an unknown agent, or a checkpoint trained for
            another game (the message names the agent, its game and this one).
        FileNotFoundError: a checkpoint that is not there.
    """
    setup = GameSetup.of(rules, players)  # the game, checked once; Rules from here on
    rules = setup.rules
    opponent = opponent or default_opponent(rules, players)
    game = Game(players, rules, seed=seed, auto_next_hand=False)
    agents = seat_agents(players, opponent, teammate, seed)
    sides = game.side_of
    specs = {s: (teammate if teammate and sides[s] == sides[HUMAN_SEAT] else opponent) for s in agents}
    for seat, agent in agents.items():
        check = getattr(agent, "mismatch", None)  # checkpoints play the game they were trained for
        problem = check(players, rules) if callable(check) else None
        if problem:
            raise ValueError(f"agent {specs[seat]!r} cannot play this game: {problem}")
    return TerminalGame(game, agents, specs, input_fn=input_fn, output_fn=output_fn, color=color)


def add_play_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``scopa play``."""
    from scopa_app.args import PLAYERS_HELP, add_game_arguments, seed_arg

    p = subparsers.add_parser(
        "play",
        help="play against the agents in the terminal",
        description="Play a game against the agents at the terminal; you are player_0 and lead the first hand. "
        "Type h in the game for how to enter moves.",
    )
    p.add_argument(
        "--opponent",
        default=None,
        metavar="AGENT",
        help=f"agent (default: the zoo's trained agent for the game, zoo:standard-2p-v3 for the standard 2-player "
        f"game, else {DEFAULT_OPPONENT}; `scopa zoo` lists them): {agents_help()}",
    )
    p.add_argument(
        "--teammate", default=None, metavar="AGENT", help="agent of your partners (4-6 players; default: --opponent)"
    )
    add_game_arguments(p, f"{PLAYERS_HELP}; you are player_0")
    p.add_argument("--seed", type=seed_arg, default=None, help="seed the deal and the agents")
    p.add_argument("--no-color", action="store_true", help="plain text")
    p.set_defaults(func=_play_command)
    return p


def _play_command(args: argparse.Namespace) -> int:
    tg = new_terminal_game(
        rules=args.rules,
        players=args.players,
        opponent=args.opponent,
        teammate=args.teammate,
        seed=args.seed,
        color=not args.no_color and sys.stdout.isatty(),
    )
    return tg.run()
