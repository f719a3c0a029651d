"""Hand scoring of the standard game, quoting pagat-scopa.txt and wikipedia-scopa.txt."""

import pytest

from scopa_env.engine.cards import parse_cards
from scopa_env.engine.rules import STANDARD
from scopa_env.engine.scoring import primiera_value, score_hand, unique_max


def everything_but(cards: list[int]) -> list[int]:
    return [c for c in range(40) if c not in set(cards)]


def test_keys_and_totals():
    a = parse_cards("7d 7c 6b As Kd 2d 3d")
    rows = score_hand([a, everything_but(a)], [2, 0])
    for row in rows:
        for key in ("cards", "coins", "settebello", "primiera", "scope", "total"):
            assert key in row, key
        assert row["total"] == row["cards"] + row["coins"] + row["settebello"] + row["primiera"] + row["scope"]
    assert rows[0]["scope"] == 2 and rows[0]["settebello"] == 1


def test_wikipedia_primiera_example_is_76():
    # wikipedia-scopa.txt: "If one team captures the seven of cups and coins, the six of clubs and
    # the ace of swords, that team's prime is (21 + 21 + 18 + 16) = 76."
    assert primiera_value(sum(1 << c for c in parse_cards("7c 7d 6b As"))) == 76


@pytest.mark.parametrize("all_suits", [True, False])
@pytest.mark.parametrize(
    "values",
    [
        STANDARD.primiera_values,
        (5.5, 2, 3, 4, 5, 6, 7, 0.5, 0.5, 0.5),  # fractional, as tests/test_fast.py's custom scale
        (0, 0, 1, 0, 2, 0, 3, 0, 0, 0),  # ranks worth nothing: a suit of them is held, yet adds 0
    ],
)
def test_primiera_value_is_the_best_card_of_each_suit(values, all_suits):
    """The 40-card look-up path equals the rule read card by card: pagat-scopa.txt, "A prime
    consists of four cards, one of each suit"; with all_suits, "a player or team that does not have at
    least one card in each suit cannot score for prime"."""
    import dataclasses
    import random

    from scopa_env.engine.cards import RANK_OF, SUIT_OF, cards_of

    rules = dataclasses.replace(STANDARD, primiera_values=values, primiera_all_suits=all_suits)
    rnd = random.Random(len(values) + all_suits)
    for _ in range(3000):
        pile = rnd.getrandbits(40) & rnd.getrandbits(40) & (rnd.getrandbits(40) if rnd.random() < 0.5 else -1)
        best = {}
        for c in cards_of(pile):
            best[SUIT_OF[c]] = max(best.get(SUIT_OF[c], 0), values[RANK_OF[c] - 1])
        want = 0 if all_suits and len(best) < 4 else sum(best.get(s, 0) for s in range(4))
        assert primiera_value(pile, rules) == want, cards_of(pile)


def test_booklet_primiera_example_is_47():
    # booklet: "your primiera is valued 14 + 13 + 10 + 10 = 47."
    assert primiera_value(sum(1 << c for c in parse_cards("4s 3c Kd Qb"))) == 47


def test_three_sevens_lose_to_a_full_prime():
    # wikipedia-scopa.txt: "If one player has three sevens (3x21) and no cards of the fourth suit
    # (sum=63), their opponent can win the prime with one seven (21) and three aces".
    a = parse_cards("7d 7c 7s")
    b = parse_cards("7b Ad Ac As")
    rest = everything_but(a + b)
    rows = score_hand([a + rest[:10], b + rest[10:]], [0, 0])
    assert rows[0]["primiera_value"] == 0, "three suits only: no prime"
    assert rows[1]["primiera"] == 1 and rows[0]["primiera"] == 0


@pytest.mark.parametrize(
    "a, b, quote",
    [
        ("7d 7c 6s 6b", "7s 7b 6d 6c", "two opponents have 7-7-6-6"),
        ("7d 7c 6s 4b", "Ad Ac 7s 7b", "one has 7-7-6-4 while the the other has A-A-7-7"),
    ],
)
def test_primiera_ties_score_nothing(a, b, quote):
    # pagat-scopa.txt: "In case of a tie for best prime - for example ... - no one scores the point."
    ca, cb = parse_cards(a), parse_cards(b)
    rows = score_hand([ca, cb], [0, 0])
    assert rows[0]["primiera_value"] == rows[1]["primiera_value"], quote
    assert rows[0]["primiera"] == rows[1]["primiera"] == 0, quote


def test_card_and_coin_ties_score_nothing():
    # pagat-scopa.txt: "In case of a tie for most cards no one scores this point." and "If there is
    # a tie for most coins / diamonds no one scores this point."
    coins = list(range(10))
    others = list(range(10, 40))
    a = coins[:5] + others[:15]
    b = coins[5:] + others[15:]
    rows = score_hand([a, b], [0, 0])
    assert rows[0]["num_cards"] == rows[1]["num_cards"] == 20
    assert rows[0]["cards"] == rows[1]["cards"] == 0
    assert rows[0]["coins"] == rows[1]["coins"] == 0


def test_three_sides_most_means_strictly_more_than_every_other():
    a = list(range(0, 14))
    b = list(range(14, 28))
    c = list(range(28, 40))
    rows = score_hand([a, b, c], [0, 0, 0])
    assert [r["num_cards"] for r in rows] == [14, 14, 12]
    assert [r["cards"] for r in rows] == [0, 0, 0], "a tie at the top gives nobody the point"


def test_unique_max():
    assert unique_max([3, 1, 2]) == 0
    assert unique_max([3, 3, 2]) is None
    assert unique_max([1, 2, 3]) == 2


def test_bad_input():
    with pytest.raises(ValueError, match="more than one pile"):
        score_hand([[1, 2], [2, 3]], [0, 0])
    with pytest.raises(ValueError, match="scope"):
        score_hand([[1], [2]], [0])
    with pytest.raises(ValueError, match="scope"):
        score_hand([[1], [2]], [0, -1])
    assert score_hand([[1], [2]], [0, 0], STANDARD) == score_hand([[1], [2]], [0, 0], "standard")
