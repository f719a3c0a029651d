"""Dealing and seating in the variant presets: tables thrown in and dealt again, deal schedules,
the trailing first play of the scientifico deals, Scopa Corse's 36-card deck, Chkobba's first
card, and which seats play as partners.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from variant_helpers import cards

from scopa_env import scopa_v0
from scopa_env.engine.cards import RANK_MASK, RANK_OF, format_cards, mask_of
from scopa_env.engine.game import Game
from scopa_env.engine.rules import Move, get_rules

# --- tables thrown in -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset, table, redeal, quote",
    [
        (
            "scopa_d_assi_options",
            "Ac 5c 7s 9b",
            True,
            'pagat: "if one or more Aces appear in the face-up cards ... redealt"',
        ),
        ("scopa_d_assi", "Ac 5c 7s 9b", False, 'pagat: the Ace redeal is an option ("Some play that")'),
        ("standard", "Kc Ks Kb 9b", True, 'pagat: "If the four face up cards include three or four Kings"'),
        ("standard,kings_redeal=off", "Kc Ks Kb 9b", False, "option: the Kings-redeal rule off"),
        ("chkobba", "5c 5s 5b 9b", True, 'pagat: "If there are three or four equal valued cards in the initial table"'),
        ("chkobba", "5c 5s 6b 6c", False, "pagat chkobba: two pairs are not three equal cards"),
        ("hurrikan", "Kc Ks Kb 9b", False, 'pagat: "There is no mention of throwing in the cards when there are three'),
        ("hurrikan_italian", "Kc Ks Kb 9b", True, "the Kings-redeal option of hurrikan"),
        ("booklet", "Kc Ks Kb 9b", True, 'booklet: "If you reveal 3 Kings in the center of the table during setup"'),
    ],
)
def test_redeal_rules(preset, table, redeal, quote):
    game = Game(4 if preset == "booklet_team" else 2, preset, seed=0)
    assert game.needs_redeal(mask_of(cards(table))) is redeal, f"{preset}: [{table}] ({quote})"


def test_redeals_happen_when_dealing():
    """Dealt tables never hold what the rules throw in."""
    for preset in ("scopa_d_assi_options", "chkobba", "standard"):
        for seed in range(30):
            game = Game(2, preset, seed=seed)
            if game.deciding:
                game.play_pair(*game.legal_pairs()[seed % 2])
            assert not game.needs_redeal(game.table), f"{preset} seed {seed}: dealt [{format_cards(game.table)}]"
    game = Game(2, "scopa_d_assi_options", seed=3)
    assert not game.table & RANK_MASK[1], "no Ace face up after dealing"


# --- deals ----------------------------------------------------------------------------------------


def deal_sizes(game: Game) -> list[int]:
    """Cards per player in each deal of the hand, by random play until the hand ends."""
    rnd = random.Random(0)
    sizes = [game.hands[game.current].bit_count()]
    while not game.hand_over:
        before = game._cards_in_hands
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if not game.hand_over and game._cards_in_hands > before:
            sizes.append(game.hands[game.current].bit_count())
    return sizes


@pytest.mark.parametrize(
    "preset, n, table, schedule, quote",
    [
        ("scopone", 4, 4, [9], 'pagat: "all the cards dealt at the start ... players begin with 9 or 10 cards"'),
        ("scopone_scientifico", 4, 0, [10], 'wikipedia: "Scopone a 10 carte, the players are dealt ten cards each"'),
        ("scopa_d_assi_9", 4, 4, [9], 'pagat: "played by four players in partnerships who are dealt 9 or 10 cards"'),
        ("scopa_d_assi_10", 4, 0, [10], 'pagat: "dealt 9 or 10 cards each rather than just three"'),
        ("scopa_corse", 2, 4, [3, 3, 3, 3, 4], "pagat Corse, read to fit 36 cards (docs/rules.md)"),
        ("scopa_corse", 4, 4, [3, 3, 2], 'pagat: "With four players the second deal is 3 cards each and the third 2"'),
        ("hurrikan", 2, 4, [6, 6, 6], 'pagat: "six cards rather than three are dealt ... three sub-deals"'),
        ("hurrikan", 4, 4, [9], 'pagat: "a four-player partnership version which is played like Scopone"'),
        ("hurrikan_10", 4, 0, [10], 'pagat: "(with either 9-card or 10-card hands)"'),
        ("booklet_scientifico", 2, 0, [20], 'booklet: "deal all the cards equally among players"'),
        ("booklet_scientifico", 4, 0, [10], 'booklet: "You can also use this variant with Team Play"'),
        ("standard", 3, 4, [3] * 4, 'pagat: "It is possible, though less satisfactory, for three to play"'),
        (
            "standard",
            6,
            4,
            [3] * 2,
            'pagat: "The game can also be played by 4 or 6 people divided into two equal teams"',
        ),
    ],
)
def test_deal_schedules(preset, n, table, schedule, quote):
    game = Game(n, preset, seed=1, auto_next_hand=False)
    assert game.table.bit_count() == table, f"{preset}: {table} cards on the table ({quote})"
    assert deal_sizes(game) == schedule, f"{preset} with {n} players deals {schedule} ({quote})"


def test_scientifico_first_player_trails():
    """booklet: "The player to the right of the dealer plays first; they must place a card"."""
    for preset in ("scopone_scientifico", "booklet_scientifico", "scopa_d_assi_10"):
        game = Game(4, preset, seed=5)
        assert game.table == 0 and all(m == 0 for _, m in game.legal_pairs()), f"{preset}: first play is a trail"


def test_corse_deck_has_no_twos():
    """pagat: "Scopa is often played with 36 cards, each suit consisting of Ace, 3, 4, 5, 6, 7, Jack, Queen, King"."""
    rules = get_rules("scopa_corse")
    assert len(rules.deck) == 36 and not any(RANK_OF[c] == 2 for c in rules.deck), "36 cards without the Twos"
    assert rules.target == 21, 'pagat: "Games are usually played to 21 points"'


# --- chkobba's first card -------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [True, False])
def test_chkobba_first_card(keep):
    """pagat: the cutter "draws one card ... and may either keep it as the first card of their hand or
    place it face up on the table as the first card of the layout"."""
    game = Game(2, "chkobba", seed=11)
    assert game.deciding and game.current == 0, "the player after the dealer decides first"
    card = game.hands[0].bit_length() - 1
    assert game.hands[0] == 1 << card and game.table == 0 and len(game.stock) == 39, "one card drawn"
    assert game.legal_pairs() == [(card, 0), (card, 1 << card)], "put it on the table, or keep it"
    assert game.view(0).legal_pairs() == game.legal_pairs() and game.view(1).legal_pairs() == []
    game.play(Move(card, itself=True) if keep else Move(card))
    assert not game.deciding, "the deal is complete"
    assert [h.bit_count() for h in game.hands] == [3, 3] and game.table.bit_count() == 4, "3 each, 4 face up"
    if game.redeals == 0:
        where = game.hands[0] if keep else game.table
        assert where >> card & 1, "the drawn card went where the player chose"
    assert game.current == 0 and game.history == [], "the decision is not a play; seat 0 leads"


def test_chkobba_decision_in_both_env_modes():
    """The decision is an action: move mode has the (card, {card}) "keep" id, select mode names the card twice."""
    for mode in ("move", "select"):
        env = scopa_v0.raw_env(rules="chkobba", action_mode=mode)
        env.reset(seed=2)
        card = env.game.hands[0].bit_length() - 1
        mask = env.observe("player_0")["action_mask"]
        if mode == "move":
            ids = set(np.flatnonzero(mask))
            assert ids == {env.encode_action(Move(card)), env.encode_action(Move(card, itself=True))}, "two choices"
            env.step(env.encode_action(Move(card, itself=True)))
        else:
            assert list(np.flatnonzero(mask)) == [card], "first name the drawn card"
            env.step(card)
            assert sorted(np.flatnonzero(env.observe("player_0")["action_mask"])) == [card, 40], "again or CONFIRM"
            env.step(card)
        assert not env.game.deciding and env.game.hands[0].bit_count() == 3, f"{mode}: kept, deal completed"


def test_chkobba_determinize_during_decision():
    game = Game(4, "chkobba", seed=3)
    world = game.view(0).determinize(np.random.default_rng(0))
    assert world.deciding and world.legal_pairs() == game.legal_pairs(), "a determinized world keeps the decision"


# --- sides ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset, n, sides, quote",
    [
        ("standard", 4, (0, 1, 0, 1), 'pagat: "played by 4 or 6 people divided into two equal teams"'),
        ("standard", 6, (0, 1, 0, 1, 0, 1), 'pagat: "played by 4 or 6 people divided into two equal teams"'),
        ("standard", 3, (0, 1, 2), 'pagat: "It is possible, though less satisfactory, for three to play"'),
        ("booklet", 4, (0, 1, 2, 3), 'booklet: "for 2 to 4 players"; teams are its TEAM PLAY variant'),
        ("booklet_primiera", 4, (0, 1, 2, 3), 'booklet: "for 2 to 4 players"'),
        ("booklet_team", 4, (0, 1, 0, 1), 'booklet: "two teams of 2 players"'),
        ("booklet_scientifico", 4, (0, 1, 2, 3), 'booklet: "for 2 to 4 players" (its basic game)'),
        (
            "booklet_scientifico,partnerships=4",
            4,
            (0, 1, 0, 1),
            'booklet: "You can also use this variant with Team Play"',
        ),
        ("standard,partnerships=none", 4, (0, 1, 2, 3), "an option: 4 each for themselves"),
    ],
)
def test_sides_are_a_rule(preset, n, sides, quote):
    game = Game(n, preset, seed=0)
    assert game.side_of == sides and game.num_sides == max(sides) + 1, f"{preset}, {n} players ({quote})"
    env = scopa_v0.raw_env(num_players=n, rules=preset)
    env.reset(seed=0)
    assert env.layout.num_sides == game.num_sides, f"{preset}: the observation has one scope/score entry per side"


def test_four_each_for_themselves_play_to_the_end():
    """booklet, 4 players each for themselves: four piles, four scores, one winner seat."""
    game = Game(4, "booklet", seed=3)
    rnd = random.Random(3)
    while game.winner is None:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if game.hand_result is not None:
            assert len(game.hand_result.hand_score) == 4, "one score row per player"
    assert len(game.scores) == 4 and game.scores[game.winner] == max(game.scores), game.scores
    assert sorted(game.scores).count(max(game.scores)) == 1, "the winner has strictly more than every other side"
