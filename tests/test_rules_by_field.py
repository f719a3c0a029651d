"""Rule fields one at a time, set by option strings on the standard game, against the rule text.

The presets' tests (``tests/test_variants_*.py``) check each preset
against its source; here each :class:`~scopa_env.engine.rules.Rules` field that those tests reach
only through a preset's name is set on its own (``"standard,FIELD=VALUE"``), so a field's effect is
checked apart from the other fields of its presets. Quotes are from ``shared/rules-sources/``:
``pagat`` is pagat-scopa.txt, ``wikipedia`` wikipedia-scopa.txt, ``booklet``
booklet-origins-rules-strategies.txt. ``tests/test_rules_fields.py`` requires such a case for
every field.
"""

from __future__ import annotations

import random

import pytest

from scopa_env.engine.cards import mask_of, parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import STANDARD, Move, get_rules, legal_moves
from scopa_env.engine.scoring import declaration, score_masks


def moves(hand: str, table: str, rules: str) -> set[str]:
    return {str(m) for m in legal_moves(parse_cards(hand), parse_cards(table), rules)}


@pytest.mark.parametrize(
    "rules, hand, table, expected, quote",
    [
        (
            "standard,capture_sum=15",
            "7d",
            "Jc 7s",
            {"7d takes 7s", "7d takes Jc"},
            'pagat: "capture cards that together with the played card total 15" (capture_sum=15, beside equal values)',
        ),
        (
            "standard,capture_sum=15,capture_equal=false",
            "7d",
            "Jc 7s",
            {"7d takes Jc"},
            'pagat: "a card cannot capture a card or set of cards whose value is equal to the played card" '
            "(capture_equal=false)",
        ),
        (
            "standard,ace_takes_all=true",
            "Ad",
            "5c 7s",
            {"Ad takes 5c 7s"},
            'pagat: "playing an Ace takes all the table cards ... provided that there is no Ace on the table" '
            "(ace_takes_all)",
        ),
        (
            "standard,ace_takes_all=true",
            "Ad",
            "Ac 7s",
            {"Ad takes Ac"},
            'pagat: "provided that there is no Ace on the table" (ace_takes_all: the Ace takes the Ace)',
        ),
        (
            "standard,ace_takes_itself=true",
            "Ad",
            "",
            {"Ad takes itself"},
            "pagat: \"if an Ace is played to the empty table it 'takes itself'\" (ace_takes_itself)",
        ),
        (
            "standard,max_capture_cards=2",
            "7d",
            "Ac 2c 4s",
            {"7d trails"},
            'booklet: "You can now capture 1 or 2 cards from the center of the table" (max_capture_cards=2)',
        ),
        (
            "standard,fewest_cards=true",
            "6d",
            "Ac 2c 3c 4s",
            {"6d takes 2c 4s"},
            'booklet: "you must always capture the fewest cards possible" (fewest_cards)',
        ),
    ],
)
def test_capture_fields(rules, hand, table, expected, quote):
    got = moves(hand, table, rules)
    assert got == expected, f"{rules}: {hand} on [{table}] -> {sorted(got)}; expected {sorted(expected)} ({quote})"


@pytest.mark.parametrize(
    "rules, table, redeal, quote",
    [
        (
            "standard,redeal_same_rank=3",
            "5c 5s 5b 9b",
            True,
            'pagat: "If there are three or four equal valued cards in the initial table" (redeal_same_rank=3)',
        ),
        ("standard,redeal_same_rank=3", "5c 5s 6b 6c", False, 'pagat, Chkobba: "three or four equal valued cards"'),
        (
            "standard,redeal_aces=2",
            "Ac As 7s 9b",
            True,
            'wikipedia, Cirulla: "If two or more aces are dealt to the table, the cards are collected" (redeal_aces=2)',
        ),
        ("standard,redeal_aces=2", "Ac 5s 7s 9b", False, 'wikipedia, Cirulla: "two or more aces" (redeal_aces=2)'),
        (
            "standard,kings_redeal=true",
            "Kc Ks Kb 9b",
            True,
            'pagat: "If the four face up cards include three or four Kings" (kings_redeal)',
        ),
        ("standard,kings_redeal=false", "Kc Ks Kb 9b", False, 'pagat, Hurrikan: "no mention of throwing in" (off)'),
        (
            "standard,aces_redeal=true",
            "Ac 5c 7s 9b",
            True,
            'pagat, Scopa d\'Assi: "if one or more Aces appear in the face-up cards ... redealt" (aces_redeal)',
        ),
    ],
)
def test_redeal_fields(rules, table, redeal, quote):
    game = Game(2, rules, seed=0)
    assert game.needs_redeal(mask_of(parse_cards(table))) is redeal, f"{rules}: [{table}] ({quote})"


def last_round(rules: str, mine: str, theirs: str, table: str) -> Game:
    """Seat 0 then seat 1 play their last card of the hand: the stock is empty, the rest in a pile."""
    r = get_rules(rules)
    held = parse_cards(mine) + parse_cards(theirs) + parse_cards(table)
    rest = [c for c in r.deck if c not in held]
    return Game.from_deal(
        [parse_cards(mine), parse_cards(theirs)],
        parse_cards(table),
        [],
        dealer=1,
        rules=r,
        piles=[[], rest],
        auto_next_hand=False,
    )


@pytest.mark.parametrize(
    "rules, scope, quote",
    [
        (
            "standard",
            0,
            'pagat: "Capturing the last card(s) from the table at the very end of the last deal of a hand never '
            'counts as a scopa" (last_play_scopa=false)',
        ),
        (
            "standard,last_play_scopa=true",
            1,
            "pagat, Hurrikan: \"none of them explicitly deals with the case where the dealer's final card captures "
            'every..." (last_play_scopa=true: it counts)',
        ),
    ],
)
def test_last_play_scopa(rules, scope, quote):
    game = last_round(rules, "3d", "5s", "2c")
    game.play(Move(parse_cards("3d")[0]))  # trails: the table is 2c 3d
    game.play(Move(parse_cards("5s")[0], parse_cards("2c 3d")))  # the hand's last card sweeps
    assert game.hand_over and game.table == 0
    assert game.hand_result.scope[1] == scope, f"{rules}: {game.hand_result.scope} ({quote})"


@pytest.mark.parametrize(
    "rules, ace_scopa, quote",
    [
        (
            "standard,ace_takes_all=true,ace_takes_all_scopa=true",
            1,
            'pagat: "playing an Ace takes all the table cards and scores a point for a sweep" (ace_takes_all_scopa)',
        ),
        (
            "standard,ace_takes_all=true,ace_takes_all_scopa=false",
            0,
            'pagat: "taking all the cards with an Ace does not count as a sweep" (ace_takes_all_scopa=false)',
        ),
    ],
)
def test_ace_takes_all_scopa(rules, ace_scopa, quote):
    game = last_round(rules, "Ad 3d", "4s 6s", "5c 7s")
    game.play(Move(parse_cards("Ad")[0], parse_cards("5c 7s")))
    assert game.table == 0 and game.scope[0] == ace_scopa, f"{rules}: scope {game.scope} ({quote})"


@pytest.mark.parametrize("points", [1, 2, 3])
def test_scopa_points(points):
    """wikipedia: "teams are awarded additional points for every "scopa" they took during game play": one
    point each in the standard game, ``scopa_points`` each under that option."""
    rules = f"standard,scopa_points={points}"
    game = last_round(rules, "7d 3d", "4s 6s", "2c 5c")
    game.play(Move(parse_cards("7d")[0], parse_cards("2c 5c")))  # a scopa, not the hand's last card
    game.play(Move(parse_cards("4s")[0]))
    game.play(Move(parse_cards("3d")[0]))
    game.play(Move(parse_cards("6s")[0]))
    rows = game.hand_result.hand_score
    assert game.hand_result.scope[0] == 1 and rows[0]["scope"] == points, f"{rules}: {rows[0]}"


def test_double_game_below():
    """pagat, Hurrikan: "If the loser has fewer than 8 points the winner wins a double game"
    (double_game_below=8, on the standard game)."""
    seen = set()
    for seed in range(8):
        game = last_round("standard,double_game_below=8", "Ad 5s", "4c 6c", "3c")
        game.scores = [3 * seed, 10]
        rnd = random.Random(seed)
        while not game.hand_over:
            pairs = game.legal_pairs()
            game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if game.winner is not None:
            loser = 1 - game.winner
            assert game.double_game is (game.scores[loser] < 8), f"seed {seed}: scores {game.scores}"
            seen.add(game.double_game)
    assert seen == {True, False}, f"both a double and a single game happened: {seen}"


def test_deal_schedules():
    """pagat, Scopa Corse: "The initial deal is 3 cards to each player and 4 cards to the table. With two
    players the second, third and fourth deals of the hand are 3 cards each, and the last two deals 4 cards
    each" (deal_schedules: cards per player in each deal, per player count; read to fit the 36 cards as
    3+3+3+3+4, docs/rules.md)."""
    rules = STANDARD.replace(
        name="schedule", player_counts=(2,), ranks=(1, 3, 4, 5, 6, 7, 8, 9, 10), deal_schedules={2: (3, 3, 3, 3, 4)}
    )
    assert rules.schedule(2) == (3, 3, 3, 3, 4), rules
    game = Game(2, rules, seed=1)
    sizes = [game.hands[0].bit_count()]
    while game.hand_number == 0:  # the first hand (the next one is dealt at once)
        before = sum(h.bit_count() for h in game.hands)
        game.play_pair(*game.legal_pairs()[0])
        if game.hand_number == 0 and sum(h.bit_count() for h in game.hands) > before:
            sizes.append(game.hands[game.current].bit_count())
    assert sizes == [3, 3, 3, 3, 4], f"deals of {sizes} cards"


@pytest.mark.parametrize(
    "rules, hand, expected, quote",
    [
        (
            "standard,bazzica_points=3/3/10",
            "Ad 2c 6s",
            ("bazzica", 3),
            'pagat: "Bazzica: any three cards which add up to 9 or less ... Scores 3 points" (bazzica_points)',
        ),
        (
            "standard,bazzica_points=2/3/7",
            "5d 5c 5s",
            ("bazzicotto", 7),
            'pagat, Sbarazzina: "Three of a kind of any rank scores 7 points" (bazzica_points)',
        ),
        (
            "standard,hand_bonus_points=3/10",
            "Ad 3c 4s",
            ("bonus_3", 3),
            'wikipedia, Cirulla: "three cards whose values add up to strictly less than 10" (hand_bonus_points)',
        ),
        (
            "standard,hand_bonus_points=3/10",
            "7c Qd Qs",
            None,
            'wikipedia, Cirulla: "three cards of the same rank" (hand_bonus_points, no bonus_wildcard: no queen)',
        ),
        (
            "standard,hand_bonus_points=3/10,bonus_wildcard=true",
            "7c Qd Qs",
            ("bonus_10", 10),
            'wikipedia: "a player holding [7 of hearts, Q, Q] may declare that the [7] is a queen" (bonus_wildcard)',
        ),
    ],
)
def test_declaration_fields(rules, hand, expected, quote):
    found = declaration(mask_of(parse_cards(hand)), get_rules(rules))
    assert (None if found is None else (found.name, found.points)) == expected, f"{rules}: {hand} ({quote})"


@pytest.mark.parametrize(
    "rules, pile, points, quote",
    [
        (
            "standard,piccola_grande=true",
            "Ad 2d 3d 4d",
            {"piccola": 4, "grande": 0},
            'wikipedia, Cirulla: "Three points are awarded for capturing ... la piccola ... worth four points" '
            "(piccola_grande)",
        ),
        (
            "standard,piccola_grande=true",
            "Jd Qd Kd",
            {"piccola": 0, "grande": 5},
            'wikipedia, Cirulla: "Five points are awarded for capturing ... la grande" (piccola_grande)',
        ),
    ],
)
def test_piccola_grande(rules, pile, points, quote):
    rows = score_masks([mask_of(parse_cards(pile)), mask_of(parse_cards("5c"))], [0, 0], get_rules(rules))
    assert {k: rows[0].get(k, 0) for k in points} == points, f"{rules}: {pile} -> {rows[0]} ({quote})"


def test_first_card_choice():
    """pagat, Chkobba: the dealer's opponent "draws one card form the pack, looks at it and may either keep it
    as the first card of their hand or place it face up on the table" (first_card_choice)."""
    game = Game(2, "standard,first_card_choice=true", seed=4)
    assert game.deciding, "the deal starts with the first-card decision"
    (card,) = {c for c, _ in game.legal_pairs()}
    assert sorted(game.legal_pairs()) == [(card, 0), (card, 1 << card)], "keep it or table it"


def test_claim_out():
    """pagat: "Some allow a player or team to end the play in the middle of a hand by claiming to have enough
    points to reach the game target" (claim_out): the claim is a move of its own, outside the card plays."""
    game = Game(2, "standard,claim_out=true,player_counts=2", seed=2)
    claim = game.claim_pair()
    assert claim is not None and claim not in game.legal_pairs() and claim in game.action_pairs(), claim
    assert Game(2, "standard", seed=2).claim_pair() is None, "no claim without claim_out"
