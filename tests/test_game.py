"""Dealing, turns, scope, hand ends and game ends of the standard game."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scopa_env.engine.cards import RANK_MASK, RE, cards_of, parse_card, parse_cards
from scopa_env.engine.game import Game, sides_for
from scopa_env.engine.rules import Move
from scopa_env.engine.scoring import score_hand


def first_permutation(seed: int) -> list[int]:
    return np.random.default_rng(seed).permutation(40).tolist()


def seed_without_kings_redeal(num_players: int) -> int:
    for seed in range(1000):
        order = first_permutation(seed)
        table = order[3 * num_players : 3 * num_players + 4]
        if sum(1 for c in table if c % 10 == 9) < 3:
            return seed
    raise AssertionError("no seed found")


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_deal_one_at_a_time_from_the_player_after_the_dealer(n):
    # pagat-scopa.txt: "The dealer then deals the cards one at a time until each player has three
    # cards. The next four cards are placed separately face up on the table."
    seed = seed_without_kings_redeal(n)
    order = first_permutation(seed)
    dealer = 1 % n
    g = Game(n, seed=seed, dealer=dealer)
    for i in range(n):
        seat = (dealer + 1 + i) % n
        expected = sorted(order[i : 3 * n : n])
        assert cards_of(g.hands[seat]) == expected, f"seat {seat} gets cards {i}, {i + n}, {i + 2 * n}"
    assert cards_of(g.table) == sorted(order[3 * n : 3 * n + 4])
    assert g.stock == order[3 * n + 4 :]
    assert g.current == (dealer + 1) % n, "the player after the dealer leads"


def test_three_kings_on_the_table_are_dealt_again():
    # pagat-scopa.txt: "If the four face up cards include three or four Kings, all the cards are
    # gathered up, and are shuffled, cut and dealt again by the same dealer."
    for seed in range(20000):
        order = first_permutation(seed)
        if sum(1 for c in order[6:10] if c % 10 == 9) >= 3:
            break
    g = Game(2, seed=seed, dealer=0)
    assert g.redeals >= 1, f"seed {seed} puts 3+ Kings face up, so the hand is redealt"
    assert (g.table & RANK_MASK[RE]).bit_count() < 3
    assert g.dealer == 0, "the same dealer deals again"
    assert sum(h.bit_count() for h in g.hands) == 6 and len(g.stock) == 30
    no_redeal = Game(2, rules="standard", seed=seed, dealer=0).__class__  # same class, rules below
    from scopa_env.engine.rules import STANDARD

    g2 = no_redeal(2, rules=STANDARD.replace(kings_redeal=False), seed=seed, dealer=0)
    assert g2.redeals == 0 and (g2.table & RANK_MASK[RE]).bit_count() >= 3


@pytest.mark.parametrize("n, sides", [(2, (0, 1)), (3, (0, 1, 2)), (4, (0, 1, 0, 1)), (6, (0, 1, 0, 1, 0, 1))])
def test_sides(n, sides):
    # pagat-scopa.txt: "The game can also be played by 4 or 6 people divided into two equal teams
    # with each player sitting between two opponents"; 3 players "each playing for themselves".
    assert sides_for(n) == sides


def test_new_three_cards_when_hands_are_empty_none_to_the_table():
    # pagat-scopa.txt: "the dealer deals another three cards to each player, but no further face up
    # cards are dealt to the table."
    g = Game(2, seed=seed_without_kings_redeal(2))
    rnd = random.Random(0)
    for _ in range(6):
        pairs = g.legal_pairs()
        g.play_pair(*pairs[rnd.randrange(len(pairs))])
    assert [h.bit_count() for h in g.hands] == [3, 3]
    assert len(g.stock) == 24
    assert g.current == (g.dealer + 1) % 2, "play continues with the player after the dealer"


def test_last_play_clearing_the_table_is_not_a_scopa():
    hands = [parse_cards("2d"), parse_cards("5c")]
    table = parse_cards("3s")
    used = set(hands[0] + hands[1] + table)
    rest = [c for c in range(40) if c not in used]
    g = Game.from_deal(hands, table, [], dealer=1, piles=[rest[:18], rest[18:]], last_capturer=0, auto_next_hand=False)
    g.play(Move(parse_card("2d")))  # trail: table 3s 2d
    g.play(Move(parse_card("5c"), parse_cards("3s 2d")))  # the dealer's last card clears the table
    assert g.hand_result.scope == [0, 0], "the very last play is never a scopa"
    assert g.hand_result.leftover == []


def mid_hand_game() -> Game:
    """Table 2s 3s (two cards already captured by player_1), three cards each, 30 in the stock."""
    hands = [parse_cards("5d 7d Kd"), parse_cards("4c 6c Kc")]
    table = parse_cards("2s 3s")
    piles = [[], parse_cards("Ab Ac")]
    used = set(sum(hands, []) + table + piles[1])
    stock = [c for c in range(40) if c not in used]
    return Game.from_deal(hands, table, stock, dealer=1, piles=piles, last_capturer=1)


def test_clearing_the_table_mid_hand_is_a_scopa():
    # pagat-scopa.txt: "If the played card captures all the face up cards from the layout, leaving
    # it empty, this is a scopa (sweep)."
    g = mid_hand_game()
    g.play(Move(parse_card("5d"), parse_cards("2s 3s")))
    assert g.scope == [1, 0] and g.table == 0
    # booklet: "the player to your right takes their turn (they can only place a card since
    # there's nothing to capture)"
    assert all(m.is_trail for m in g.legal_moves())


def test_leftover_goes_to_the_last_capturer_without_a_scopa():
    # pagat-scopa.txt: "any card remaining in the face up layout are collected by the player or team
    # that last made a capture."
    hands = [parse_cards("2d"), parse_cards("Kc")]
    table = parse_cards("2s 4s")
    used = set(hands[0] + hands[1] + table)
    rest = [c for c in range(40) if c not in used]
    g = Game.from_deal(hands, table, [], dealer=1, piles=[rest[:18], rest[18:]], last_capturer=1, auto_next_hand=False)
    g.play(Move(parse_card("2d"), parse_cards("2s")))
    g.play(Move(parse_card("Kc")))
    r = g.hand_result
    assert r.leftover == sorted(parse_cards("4s Kc")) and r.leftover_side == 0
    assert r.scope == [0, 0]
    assert sum(len(p) for p in r.piles) == 40


def hand_end_game(scores, piles_0_size=25):
    """A last play whose hand result is fixed in advance: side 0 takes most cards."""
    hands = [parse_cards("2d"), parse_cards("Kc")]
    table = parse_cards("2s")
    used = set(hands[0] + hands[1] + table)
    rest = [c for c in range(40) if c not in used]
    return Game.from_deal(
        hands, table, [], dealer=1, scores=scores, piles=[rest[:piles_0_size], rest[piles_0_size:]], seed=0
    )


def play_out(g):
    g.play(Move(parse_card("2d"), parse_cards("2s")))
    g.play(Move(parse_card("Kc")))
    return g


@pytest.mark.parametrize(
    "scores, winner",
    [
        ((10, 0), 0),  # side 0 reaches 11+ alone
        ((0, 0), None),  # nobody reaches the target
    ],
)
def test_game_ends_at_the_target(scores, winner):
    g = play_out(hand_end_game(scores))
    hand = g.hand_result.hand_score
    assert hand[0]["total"] > 0
    assert g.winner == winner
    if winner is None:
        assert g.hand_number == 1 and sum(h.bit_count() for h in g.hands) > 0, "the next hand is dealt"


def test_a_tie_at_the_top_plays_another_hand():
    # pagat-scopa.txt: "In case of a tie for most points another hand is played to break the tie."
    g = play_out(hand_end_game((0, 0)))
    gain = [row["total"] for row in g.hand_result.hand_score]
    g2 = play_out(hand_end_game((11 - gain[0], 11 - gain[1])))
    assert g2.scores[0] == g2.scores[1] >= 11
    assert g2.winner is None, "tied at the top: another hand"
    g3 = play_out(hand_end_game((11 - gain[0], 10 - gain[1])))
    assert g3.winner == 0, "11 against 10"


def test_cappotto_option():
    from scopa_env.engine.rules import STANDARD

    g = play_out(hand_end_game((0, 0)))
    gain = g.hand_result.hand_score[0]["total"]
    assert g.hand_result.hand_score[1]["total"] == 0
    template = hand_end_game((0, 0))
    piles = [cards_of(p) for p in template.piles]
    kwargs = dict(hands=[parse_cards("2d"), parse_cards("Kc")], table=parse_cards("2s"), stock=[], dealer=1)
    # wikipedia-scopa.txt: "if a player is winning 7 points to 0 then the game can be considered over"
    gc = play_out(Game.from_deal(**kwargs, scores=(7 - gain, 0), piles=piles, rules=STANDARD.replace(cappotto=True)))
    assert gc.scores == [7, 0] and gc.winner == 0, "a side leading 7-0 wins with cappotto"
    plain = play_out(Game.from_deal(**kwargs, scores=(7 - gain, 0), piles=piles))
    assert plain.winner is None, "without cappotto 7-0 is just a score"


def test_deal_passes_to_the_next_player():
    # pagat-scopa.txt: "the turn to deal passes to the other player (or to the next player to the right)."
    g = play_out(hand_end_game((0, 0)))
    assert g.dealer == 0 and g.current == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"hands": [[0, 1, 2], [3, 4, 5]], "table": [6, 7, 8, 9], "stock": list(range(10, 39))}, "missing"),
        ({"hands": [[0, 1, 2], [2, 4, 5]], "table": [6, 7, 8, 9], "stock": list(range(10, 40))}, "more than once"),
        ({"hands": [[0, 1, 2], [3, 4, 5]], "table": [6, 7, 8, 9], "stock": list(range(10, 40)), "dealer": 5}, "dealer"),
        ({"hands": [[0, 1, 2], [3, 4, 5]], "table": [6, 7, 8, 9, 10], "stock": list(range(11, 40))}, "rounds"),
        ({"hands": [[0, 1, 2]] * 5, "table": [], "stock": []}, "num_players"),
    ],
)
def test_from_deal_validation(kwargs, message):
    kwargs.setdefault("dealer", 1)
    with pytest.raises(ValueError, match=message):
        Game.from_deal(**kwargs)


def test_illegal_move_names_the_problem_and_lists_legal_moves():
    g = mid_hand_game()
    before = repr(g)
    with pytest.raises(ValueError, match=r"4c is not in player_0's hand.*legal moves: 5d takes"):
        g.play(Move(parse_card("4c")))
    with pytest.raises(ValueError, match="5d trails is not a legal move"):
        g.play(Move(parse_card("5d")))
    with pytest.raises(ValueError, match="not a move"):
        g.play("5d")
    assert repr(g) == before, "a rejected move changes nothing"


# --- whole random games ---------------------------------------------------------


def check_invariants(g: Game) -> None:
    everything = g.table
    for m in list(g.hands) + list(g.piles) + [sum(1 << c for c in g.stock)]:
        assert not everything & m, "a card is in two places"
        everything |= m
    assert everything == (1 << 40) - 1, "all 40 cards are accounted for"
    sizes = [h.bit_count() for h in g.hands]
    assert max(sizes) - min(sizes) <= 1


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([2, 3, 4, 6]), st.integers(0, 2**32 - 1))
def test_random_games_keep_every_card_and_score_consistently(n, seed):
    g = Game(n, seed=seed)
    rnd = random.Random(seed)
    while g.winner is None:
        check_invariants(g)
        before = list(g.scores)
        pairs = g.legal_pairs()
        assert pairs, "the player to move always has a move"
        g.play_pair(*pairs[rnd.randrange(len(pairs))])
        r = g.hand_result
        if r is not None:
            assert sum(len(p) for p in r.piles) == 40
            rescored = score_hand(r.piles, r.scope)
            assert rescored == r.hand_score, "hand score is a function of the piles and scope"
            assert [b + row["total"] for b, row in zip(before, r.hand_score)] == g.scores
    top = max(g.scores)
    assert top >= 11 and g.scores.count(top) == 1 and g.scores[g.winner] == top


def test_seed_gives_the_same_game():
    def trace(seed):
        g = Game(4, seed=seed)
        rnd = random.Random(1)
        out = []
        while g.winner is None:
            pairs = g.legal_pairs()
            move = pairs[rnd.randrange(len(pairs))]
            out.append(move)
            g.play_pair(*move)
        return out, g.scores

    assert trace(7) == trace(7)
    assert trace(7) != trace(8)


def test_clone_is_independent_and_has_the_same_future():
    g = Game(2, seed=3)
    c = g.clone()
    rnd1, rnd2 = random.Random(5), random.Random(5)
    while g.winner is None:
        p1, p2 = g.legal_pairs(), c.legal_pairs()
        assert p1 == p2
        g.play_pair(*p1[rnd1.randrange(len(p1))])
        c.play_pair(*p2[rnd2.randrange(len(p2))])
    assert g.scores == c.scores and c.winner == g.winner


def test_view_hides_other_hands_and_determinize_respects_it():
    g = Game(4, seed=11)
    view = g.view(0)
    assert view.hand == g.hands[0]
    hidden = g.hands[1] | g.hands[2] | g.hands[3] | sum(1 << c for c in g.stock)
    assert view.unseen == hidden
    d = view.determinize(np.random.default_rng(0))
    assert d.hands[0] == g.hands[0] and d.table == g.table and d.piles == g.piles
    assert [h.bit_count() for h in d.hands] == [h.bit_count() for h in g.hands]
    assert len(d.stock) == len(g.stock)
    check_invariants(d)


@pytest.mark.parametrize("preset", sorted(__import__("scopa_env.engine.rules", fromlist=["PRESETS"]).PRESETS))
def test_card_outcomes_are_one_cards_action_pairs(preset):
    """``Game.card_outcomes`` (the "select" mode's outcomes of a named card, worked out for
    that card alone on a card-play turn) equals ``action_pairs`` filtered to the card, and on
    every ``card_turn`` each hand card has a legal action, as the env's "select" mask assumes."""
    from scopa_env.engine.rules import get_rules

    rules = get_rules(preset)
    rng = random.Random(preset)
    turns = 0
    for num_players in rules.player_counts:
        for seed in range(3):
            game = Game(num_players, rules, seed=seed)
            for _ in range(200):
                if game.winner is not None:
                    break
                pairs = game.action_pairs()
                hand = game.hands[game.current]
                if game.card_turn:
                    assert {c for c, _ in pairs} == set(cards_of(hand)), f"{preset}: a hand card without a move"
                    turns += 1
                probe = game.clone()  # card_outcomes before the legal list is cached, then after
                for card in cards_of(hand):
                    want = [m for c, m in pairs if c == card]
                    assert probe.card_outcomes(card) == want, (preset, card)
                    assert game.card_outcomes(card) == want, (preset, card)
                card, mask = rng.choice(pairs)
                game.play(Move(card, cards_of(mask)) if mask != 1 << card else Move(card, itself=True))
    assert turns >= 20, turns  # chiamarsi fuori's random claims end games early


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), every=st.integers(1, 12), players=st.sampled_from([2, 3, 4]))
def test_adopting_plays_made_elsewhere_equals_playing_them(seed, every, players):
    """Game.adopt_plays takes on a position reached by card plays made elsewhere (the AEC env's compiled
    row) and joins them to the history; where the last card is down it ends the hand as play_pair does:
    "any face up cards remaining on the table are collected by the last player or team that made a capture"
    (pagat.com's Scopa page), then the scoring. Here the plays come from a twin game that played them itself, handed over
    every few plays: both games end equal, hand result and scores included."""
    from scopa_env.engine.game import CardPlayPosition

    played, adopted = (Game(players, "standard", seed=seed, auto_next_hand=False) for _ in range(2))
    rng = random.Random(seed)
    plays = []
    while played.hand_result is None:
        card, captured = rng.choice(played.legal_pairs())
        plays.append((played.current, card, captured))
        played.play_pair(card, captured)
        if len(plays) == every or played.hand_result is not None:
            # the position after the plays, before the hand's end sweeps the table
            position = CardPlayPosition(
                hands=tuple(played.hands),
                played=tuple(played.played),
                piles=tuple(played.piles),
                scope=tuple(played.scope),
                scope_points=tuple(played.scope_points),
                table=played.table,
                current=played.current,
                last_capturer=-1 if played.last_capturer is None else played.last_capturer,
                stock_left=len(played.stock),
            )
            if played.hand_result is not None:  # undo the sweep for the hand-over: the adopter sweeps itself
                lc_side = played.side_of[played.last_capturer] if played.last_capturer is not None else None
                piles = list(position.piles)
                if lc_side is not None:
                    piles[lc_side] &= ~sum(1 << c for c in played.hand_result.leftover)
                position = position._replace(piles=tuple(piles), table=sum(1 << c for c in played.hand_result.leftover))
            adopted.adopt_plays(position, plays)
            plays = []
            assert adopted.history == played.history and adopted.stock == played.stock
    assert adopted.hand_result == played.hand_result and adopted.scores == played.scores
    assert adopted.piles == played.piles and adopted.table == played.table == 0
