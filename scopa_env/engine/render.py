"""Text rendering of a game: hands, table, capture piles, scores."""

from __future__ import annotations

from scopa_env.engine.cards import FRENCH_RANKS, RANK_SYMBOLS, format_card, format_cards
from scopa_env.engine.game import Game, HandResult
from scopa_env.engine.rules import WILDCARD

_COLORS = {"d": "\x1b[33m", "c": "\x1b[31m", "s": "\x1b[36m", "b": "\x1b[32m"}
_FRENCH_COLORS = {"d": "\x1b[33m", "h": "\x1b[31m", "s": "\x1b[36m", "c": "\x1b[32m"}
"""The 52-card deck's suit letters (d h s c) in the colours of the coins, cups, swords, batons."""
_RESET = "\x1b[0m"


def colorize(text: str, ranks_per_suit: int = 10) -> str:
    """Colour each card of a short-notation string by suit (ANSI); ``ranks_per_suit=13``
    reads the 52-card deck's suit letters."""
    colors = _FRENCH_COLORS if ranks_per_suit == FRENCH_RANKS else _COLORS
    return " ".join(colors.get(tok[-1:], "") + tok + _RESET if tok else tok for tok in text.split(" "))


def render_game(game: Game, seat: int | None = None, color: bool = False) -> str:
    """A multi-line picture of the game.

    Args:
        game: the game.
        seat: show only what this seat may see (other hands as counts); ``None`` shows all.
        color: add ANSI suit colours.
    """
    deck = game.rules.ranks_per_suit

    def fmt(text: str) -> str:
        return colorize(text, deck) if color else text

    def cards(mask_or_ids) -> str:
        return format_cards(mask_or_ids, deck)

    # hand_number counts finished hands: the one being played, or just ended, is the next one or the last.
    shown_hand = game.hand_number if game.hand_over else game.hand_number + 1
    lines = [
        f"Scopa ({game.rules.name}, {game.num_players} players) hand {shown_hand}, "
        f"dealer player_{game.dealer}, stock {len(game.stock)}",
        f"  table : {fmt(cards(game.table)) or '(empty)'}",
    ]
    for s in range(game.num_players):
        marker = ">" if s == game.current and not game.hand_over and game.winner is None else " "
        if seat is None or s == seat:
            hand = fmt(cards(game.hands[s])) or "-"
        else:
            hand = f"[{game.hands[s].bit_count()} cards]"
        lines.append(f"{marker} player_{s} (side {game.side_of[s]}): {hand}")
    for side in range(game.num_sides):
        lines.append(
            f"  side {side}: {game.piles[side].bit_count():2d} cards captured, "
            f"{game.scope[side]} scope, score {game.scores[side]}/{game.rules.target}"
        )
    if game.wild_rank:
        lines.append(
            f"  wildcard: {format_card(WILDCARD)} captures as a {RANK_SYMBOLS[game.wild_rank - 1]} this hand (declared)"
        )
    if game.history:
        s, card, cap = game.history[-1]
        if cap == 1 << card:  # an Ace played to the empty table taking itself (ace_takes_itself)
            what = "takes itself"
        else:
            what = f"takes {cards(cap)}" if cap else "trails"
        lines.append(f"  last play: player_{s} {fmt(cards([card]))} {what}")
    if game.winner is not None:
        lines.append(f"  game over: side {game.winner} wins {game.scores}")
    return "\n".join(lines)


def render_hand_result(result: HandResult) -> str:
    """A table of the hand-end breakdown, one column per side."""
    sides = len(result.hand_score)
    head = "               " + "".join(f"side {s:<5}" for s in range(sides))
    rows = [head]
    for key, raw in (
        ("cards", "num_cards"),
        ("coins", "num_coins"),
        ("settebello", None),
        ("primiera", "primiera_value"),
        ("scope", "num_scope"),
    ):
        cells = []
        for row in result.hand_score:
            cells.append(f"{row[key]}" + (f" ({row[raw]})" if raw else ""))
        rows.append(f"  {key:<12} " + "".join(f"{c:<10}" for c in cells))
    # Variant categories (seven_majority, re_bello, napola ...): every other point key.
    standard = {"cards", "coins", "settebello", "primiera", "scope", "total", "primiera_value"}
    for key in result.hand_score[0]:
        if key not in standard and not key.startswith("num_"):
            rows.append(f"  {key:<12} " + "".join(f"{row.get(key, 0)!s:<10}" for row in result.hand_score))
    rows.append("  " + "total".ljust(12) + " " + "".join(f"{row['total']:<10}" for row in result.hand_score))
    for declared in result.declared[:1]:  # declarations scored during the hand, outside the total
        for key in declared:
            rows.append(f"  {key:<12} " + "".join(f"{d[key]!s:<10}" for d in result.declared) + "(declared)")
    for name, side in result.events:
        rows.append(f"  {name} by side {side}")
    return "\n".join(rows)
