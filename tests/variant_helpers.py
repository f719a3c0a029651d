"""Helpers shared by the rule-variant tests (``tests/test_variants_*.py``): cards from text, the
rule strings several of them play, and the positions they set up."""

from __future__ import annotations

from scopa_env.engine.cards import mask_of, parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import Rules, get_rules
from scopa_env.engine.scoring import declaration, score_hand


def cards(text: str) -> list[int]:
    return parse_cards(text)


def score(rules: str | Rules, pile0: str, pile1: str, scope=(0, 0), scope_points=None) -> list[dict]:
    p0 = cards(pile0)
    p1 = [c for c in cards(pile1) if c not in p0]
    return score_hand([p0, p1], list(scope), rules, scope_points)


COINS_ALL = "Ad 2d 3d 4d 5d 6d 7d Jd Qd Kd"
WILD_OPTION = "standard,hand_bonus_points=3/10,bonus_wildcard=true"
"""Cirulla's hand bonuses and wildcard on the standard captures ("move" mode fits: N = 39,761)."""

FUORI = "standard,claim_out=true,player_counts=2/4/6"


def game_holding(rules: str, mine: str, table: str, **kwargs) -> Game:
    """Seat 0 to move in the last round of a hand, holding ``mine`` plus filler."""
    r = get_rules(rules)
    my_cards, table_cards = cards(mine), cards(table)
    rest = [c for c in r.deck if c not in my_cards and c not in table_cards]
    opp = rest[: len(my_cards)]
    piles = [[], rest[len(my_cards) :]]
    return Game.from_deal([my_cards, opp], table_cards, [], dealer=1, rules=r, piles=piles, **kwargs)


def two_player_game(rules: str | Rules, mine: str, theirs: str, table: str, **kwargs) -> Game:
    """A last-deal position: player_0 holds ``mine`` and leads, player_1 holds ``theirs``, the rest is in piles."""
    rules = get_rules(rules)
    m, t, tb = cards(mine), cards(theirs), cards(table)
    rest = [c for c in rules.deck if c not in m + t + tb]
    piles = kwargs.pop("piles", [rest[: len(rest) // 2], rest[len(rest) // 2 :]])
    return Game.from_deal([m, t], tb, [], dealer=1, rules=rules, piles=piles, auto_next_hand=False, **kwargs)


def play_named(game: Game, text: str):
    """The legal move printed as ``text``."""
    by_name = {str(m): m for m in game.legal_moves()}
    assert text in by_name, f"{text} not in {sorted(by_name)}"
    return by_name[text]


def bazzica_deal(hand0: str, hand1: str, rules: str = "scopa_bazzica", **kwargs) -> Game:
    """A fresh hand (dealer 1, 4 on the table) with ``hand0``/``hand1`` dealt and their declarations open
    (Cirulla's: player_0's alone, at its first turn; player_1 decides at its own)."""
    rules = get_rules(rules)
    h0, h1 = cards(hand0), cards(hand1)
    rest = [c for c in rules.deck if c not in h0 + h1 and c not in cards("Kb")]
    table = rest[-3:] + cards("Kb")
    stock = rest[:-3]
    queue = [s for s, h in ((0, h0), (1, h1)) if declaration(mask_of(h), rules) is not None]
    if rules.declare_at_turn:
        queue = [s for s in queue if s == 0]
    queue = kwargs.pop("declare_queue_override", queue)
    return Game.from_deal(
        [h0, h1], table, stock, dealer=1, rules=rules, declare_queue=queue, auto_next_hand=False, **kwargs
    )
