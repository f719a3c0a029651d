"""Baseline agents: information-set invariance, the strategy texts they follow, every table size.

Strategy citations are from booklet-origins-rules-strategies.txt ("QUICK STRATEGY") and
wikipedia-scopa.txt (primiera tactics).
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import Agent
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent, holds_some
from agents.random_agent import RandomAgent
from agents.registry import AGENT_NAMES, make_agent, parse_options, register_agent_factory
from agents.search import SearchAgent, fast_clone, greedy_rollout
from scopa_env.engine.cards import RANK_OF, cards_of, parse_card, parse_cards
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.rules import PRESETS, STANDARD, Move

SMALL_SEARCH = {"ply_budget": 200, "min_worlds": 2, "max_worlds": 4}
"""A search budget small enough for tests."""


def baseline(name: str, seed: int = 0) -> Agent:
    return make_agent(name, seed=seed, **(SMALL_SEARCH if name == "search" else {}))


def position(
    mine: str, table: str, my_pile: str = "", their_pile: str = "", stock_rounds: int | None = None
) -> PlayerView:
    """A 2-player position with seat 0 to move; the rest of the deck goes to the opponent, stock and their pile."""
    my_cards, table_cards = parse_cards(mine), parse_cards(table)
    pile0, pile1 = parse_cards(my_pile), parse_cards(their_pile)
    rest = sorted(set(STANDARD.deck) - set(my_cards) - set(table_cards) - set(pile0) - set(pile1))
    opp = rest[: len(my_cards)]
    left = rest[len(my_cards) :]
    per_deal = 2 * STANDARD.hand_size
    stock_len = len(left) // per_deal * per_deal if stock_rounds is None else stock_rounds * per_deal
    stock, extra = left[:stock_len], left[stock_len:]
    game = Game.from_deal([my_cards, opp], table_cards, stock, dealer=1, piles=[pile0, pile1 + extra])
    return game.view(0)


def reshuffle_hidden(game: Game, seat: int, rng: np.random.Generator) -> Game:
    """The same position for ``seat`` with the other hands and the stock order redrawn."""
    hidden = [c for s in range(game.num_players) if s != seat for c in cards_of(game.hands[s])] + list(game.stock)
    hidden = [hidden[i] for i in rng.permutation(len(hidden))]
    hands, pos = [], 0
    for s in range(game.num_players):
        if s == seat:
            hands.append(cards_of(game.hands[s]))
        else:
            k = game.hands[s].bit_count()
            hands.append(hidden[pos : pos + k])
            pos += k
    other = Game.from_deal(
        hands,
        cards_of(game.table),
        hidden[pos:],
        dealer=game.dealer,
        scores=game.scores,
        rules=game.rules,
        piles=[cards_of(p) for p in game.piles],
        scope=game.scope,
        current=game.current,
        last_capturer=game.last_capturer,
    )
    other.played = list(game.played)
    other.history = list(game.history)
    other.hand_number = game.hand_number
    return other


def positions(num_players: int, count: int, seed: int = 0):
    """Mid-hand positions from random play, with several legal moves for the player to move."""
    rng = np.random.default_rng(seed)
    found = 0
    game_seed = seed
    while found < count:
        game = Game(num_players, seed=game_seed, auto_next_hand=False)
        game_seed += 1
        stop = int(rng.integers(0, 30))
        for _ in range(stop):
            if game.hand_over:
                break
            pairs = game.legal_pairs()
            game.play_pair(*pairs[int(rng.integers(len(pairs)))])
        if not game.hand_over and len(game.legal_pairs()) > 1 and game.stock:
            found += 1
            yield game


class PeekingAgent(Agent):
    """A cheat that looks at the next player's hand: the invariance check must catch it."""

    def __init__(self, game: Game) -> None:
        super().__init__(0)
        self.game = game

    def act(self, view: PlayerView) -> Move:
        moves = view.legal_moves()
        nxt = self.game.hands[(view.seat + 1) % view.num_players]
        return moves[nxt % len(moves)]


def decisions_agree(make, game: Game, other: Game) -> bool:
    seat = game.current
    return make(game).act(game.view(seat)) == make(other).act(other.view(seat))


# --- information sets ----------------------------------------------------------------


@pytest.mark.parametrize("name", AGENT_NAMES)
@pytest.mark.parametrize("num_players", [2, 4])
def test_decision_ignores_hidden_cards(name, num_players):
    """Issue 6: permuting the hidden cards (other hands, stock order) never changes a decision for a fixed seed."""
    rng = np.random.default_rng(1)
    for game in positions(num_players, 6, seed=num_players):
        seat = game.current
        other = reshuffle_hidden(game, seat, rng)
        assert game.view(seat) == other.view(seat), "the two deals must look the same to the acting seat"
        assert game.hands != other.hands or game.stock != other.stock, "the hidden cards should differ"
        for seed in (0, 1):
            a = baseline(name, seed).act(game.view(seat))
            b = baseline(name, seed).act(other.view(seat))
            assert a == b, f"{name} (seed {seed}) changed its move when hidden cards moved: {a} vs {b} in {game!r}"


def test_invariance_check_catches_a_peeking_agent():
    """The check above can fail: an agent reading the next hand changes its move in some position."""
    rng = np.random.default_rng(2)
    results = [decisions_agree(PeekingAgent, g, reshuffle_hidden(g, g.current, rng)) for g in positions(2, 20)]
    assert not all(results), "a cheating agent should be caught in at least one of 20 positions"


# --- random ----------------------------------------------------------------------


def test_random_is_uniform_over_legal_moves():
    """random: uniform over legal moves (each of 4 moves drawn about a quarter of the time)."""
    view = position("7b 5b Qs", "7c 5s 2b")
    legal = view.legal_moves()
    agent = RandomAgent(seed=3)
    draws = [agent.act(view) for _ in range(4000)]
    assert set(draws) <= set(legal), "random played an illegal move"
    for move in legal:
        share = draws.count(move) / len(draws)
        assert abs(share - 1 / len(legal)) < 0.04, (
            f"{move} drawn {share:.3f} of the time, expected {1 / len(legal):.3f}"
        )


# --- greedy ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mine", "table", "expected", "why"),
    [
        ("7d Kb Qs", "7c Kc 3s", "7d takes 7c", "the settebello's capture outweighs a King's"),
        ("5b 6s Qs", "2c 3b", "5b takes 2c 3b", "a scopa outweighs every other capture"),
        ("Kb 7c 6d", "5s", "Kb trails", "trail the least valuable card (a King, not a seven or a coin)"),
        ("6s Js Qs", "Ab 5c 2s 4b", "6s takes 5c Ab", "ace and coin beat two plain cards"),
    ],
)
def test_greedy_choices(mine, table, expected, why):
    """greedy: maximises the immediate capture value with fixed weights; trails the least valuable card."""
    move = GreedyAgent(seed=0).act(position(mine, table))
    assert str(move) == expected, f"greedy played {move}; expected {expected} ({why})"


# --- heuristic -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mine", "table", "my_pile", "their_pile", "expected", "rule"),
    [
        (
            "3b 5b",
            "Kc 4s",
            "",
            "",
            "5b trails",
            "booklet: 'never leave cards on the table that total 7' (3 + 4 = 7 while sevens are unseen)",
        ),
        (
            "3b 5b",
            "Kc 4s",
            "",
            "7d 7c 7s 7b",
            "3b trails",
            "booklet, COUNT CARDS: with every 7 out of play the 7-sum rule may be ignored",
        ),
        (
            "5b Kb 4s",
            "2s",
            "",
            "",
            "Kb trails",
            "booklet: 'always leave cards on the table that total over 10' so no scopa is possible",
        ),
        (
            "Kc Ks 3b",
            "2s 4b",
            "",
            "Kd Kb",
            "Ks trails",
            "booklet, BLOCK THE GAME: with the last two Kings, play one and keep the other",
        ),
        (
            "6c",
            "Ab 2s 4d 5s",
            "",
            "",
            "6c takes 5s Ab",
            "wikipedia: holding a six with A 2 4 5 on the table, choose the five plus the ace",
        ),
        (
            "6c",
            "Ab 2s 4d 5s",
            "7b",
            "",
            "6c takes 4d 2s",
            "wikipedia: ... unless they already took the seven of the ace's suit and a remaining card is a coin",
        ),
        (
            "7b 5b Qs",
            "7c 5s",
            "",
            "",
            "7b takes 7c",
            "booklet: 'If a 7 is in the center of the table, capture it as fast as you can'",
        ),
    ],
)
def test_heuristic_follows_the_strategy_texts(mine, table, my_pile, their_pile, expected, rule):
    move = HeuristicAgent(seed=0).act(position(mine, table, my_pile, their_pile))
    assert str(move) == expected, f"heuristic played {move}; expected {expected}: {rule}"


def test_heuristic_counts_the_leftover_on_the_last_play():
    """pagat: the cards left on the table at the end go to the last player who captured."""
    rest = sorted(set(STANDARD.deck) - set(parse_cards("Qs 7d 3c 4c")))

    def trail_score(last_capturer: int) -> float:
        game = Game.from_deal(
            [parse_cards("Qs"), []],
            parse_cards("7d 3c 4c"),
            [],
            dealer=0,
            piles=[rest[:18], rest[18:]],
            current=0,
            last_capturer=last_capturer,
        )
        view = game.view(0)
        assert [str(m) for m in view.legal_moves()] == ["Qs trails"]
        return HeuristicAgent(seed=0).scores(view, view.legal_pairs())[0]

    assert trail_score(0) > trail_score(1), "the last play's trail is worth more when my side captured last"


def test_hypergeometric_chance():
    """holds_some: 1 - C(U-k, h) / C(U, h), and certainty when the hand is all the unseen cards."""
    assert holds_some(30, 4, 3) == pytest.approx(1 - (26 * 25 * 24) / (30 * 29 * 28))
    assert holds_some(3, 1, 3) == 1.0, "in the last round the one unseen hand is known"
    assert holds_some(30, 0, 3) == 0.0


# --- search ----------------------------------------------------------------------


def test_search_takes_a_scopa():
    """search: a sweep is worth a point; averaged over enough worlds it beats the trails.

    (With 2-4 worlds the rollouts' noise can hide it: the hand-end margin varies by points.)
    """
    move = SearchAgent(seed=0, min_worlds=64, max_worlds=64).act(position("5b 6s Qs", "2c 3b"))
    assert str(move) == "5b takes 2c 3b", f"search played {move}"


def test_search_rollout_is_swappable_and_budgeted():
    """The rollout function is a parameter; it runs once per world and legal move."""
    calls = []

    def counting_rollout(game: Game, seat: int) -> float:
        calls.append(seat)
        return greedy_rollout(game, seat)

    view = position("7b 5b Qs", "7c 5s 2b")
    agent = SearchAgent(seed=0, ply_budget=10_000, min_worlds=3, max_worlds=3, rollout=counting_rollout)
    agent.act(view)
    assert len(calls) == 3 * len(view.legal_pairs()), "one rollout per world and move"
    assert agent.worlds_for(view, 4) == 3


def test_search_solves_the_last_round_exactly():
    """With the stock empty in a 2-player hand the position is known; alpha-beta finds the best line."""
    # Seat 0 holds 5c and Kb, seat 1 holds 5s and 2b, the table 3c 2s: the values must match
    # a brute-force minimax over every line.
    rest = sorted(set(STANDARD.deck) - set(parse_cards("5c Kb 5s 2b 3c 2s")))
    game = Game.from_deal(
        [parse_cards("5c Kb"), parse_cards("5s 2b")],
        parse_cards("3c 2s"),
        [],
        dealer=1,
        piles=[rest[:16], rest[16:]],
        last_capturer=1,
    )
    agent = SearchAgent(seed=0)
    view = game.view(0)
    values = agent.move_values(view, view.legal_pairs())
    brute = [_minimax(game, c, m, 0) for c, m in view.legal_pairs()]
    assert values == pytest.approx(brute), "alpha-beta must agree with plain minimax"
    chosen = agent.act(view)
    assert brute[view.legal_pairs().index((chosen.card, chosen.mask))] == max(brute), f"{chosen} is not optimal"


def _minimax(game: Game, card: int, mask: int, seat: int) -> float:
    g = fast_clone(game)
    g.auto_next_hand = False
    g.play_pair(card, mask)
    if g.hand_over:
        s = g.hand_result.hand_score
        return s[seat]["total"] - s[1 - seat]["total"]
    values = [_minimax(g, c, m, seat) for c, m in g.legal_pairs()]
    return max(values) if g.current == seat else min(values)


def test_search_budget_validation():
    with pytest.raises(ValueError, match="ply_budget"):
        SearchAgent(ply_budget=0)
    with pytest.raises(ValueError, match="min_worlds"):
        SearchAgent(min_worlds=5, max_worlds=2)


# --- every table size --------------------------------------------------------------


@pytest.mark.parametrize("num_players", [2, 3, 4, 6])
@pytest.mark.parametrize("name", AGENT_NAMES)
def test_agents_play_a_hand_at_every_table_size(name, num_players):
    """All agents work for every player count (teams included): a full hand of legal moves."""
    game = Game(num_players, seed=num_players, auto_next_hand=False)
    agents = [baseline(name, seed=s) for s in range(num_players)]
    while not game.hand_over:
        move = agents[game.current].act(game.view())
        assert (move.card, move.mask) in game.legal_pairs(), f"{name} played an illegal move {move}"
        game.play(move)
    assert sum(len(p) for p in game.hand_result.piles) == len(STANDARD.deck)


# --- registry ----------------------------------------------------------------------


def test_registry_names_and_options():
    assert set(AGENT_NAMES) == {"random", "greedy", "heuristic", "search", "fsearch"}
    agent = make_agent("search:ply_budget=500,max_worlds=8,exact_endgame=false", seed=1)
    assert (agent.ply_budget, agent.max_worlds, agent.exact_endgame) == (500, 8, False)
    assert parse_options("a=1,b=0.5,c=true,d=x") == {"a": 1, "b": 0.5, "c": True, "d": "x"}


def test_registry_unknown_name_lists_known_ones():
    with pytest.raises(ValueError, match="known agents: random, greedy, heuristic, search"):
        make_agent("grredy")
    with pytest.raises(ValueError, match="bad options"):
        make_agent("greedy:depth=3")
    with pytest.raises(ValueError, match="key=value"):
        make_agent("search:3")


def test_registry_factories():
    made = []

    def factory(argument, seed=None, **kwargs):
        made.append(argument)
        return GreedyAgent(seed=seed)

    register_agent_factory("testckpt", factory)
    assert isinstance(make_agent("testckpt:some/path.pt", seed=1), GreedyAgent)
    assert made == ["some/path.pt"]
    with pytest.raises(ValueError, match="needs an argument"):
        make_agent("testckpt:")
    with pytest.raises(ValueError):
        register_agent_factory("greedy", factory)


def test_rank_helpers_are_consistent():
    """Sanity: card notation used by the scenarios above."""
    assert RANK_OF[parse_card("Kb")] == 10 and RANK_OF[parse_card("7d")] == 7


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_agents_play_legal_moves_under_every_preset(preset):
    """All agents work for every rules preset and its player counts: the first moves of a hand are legal."""
    rules = PRESETS[preset]
    for num_players in rules.player_counts:
        for name in AGENT_NAMES:
            game = Game(num_players, rules, seed=7, auto_next_hand=False)
            agents = [baseline(name, seed=s) for s in range(num_players)]
            for _ in range(2 * num_players):
                if game.hand_over:
                    break
                move = agents[game.current].act(game.view())
                assert (move.card, move.mask) in game.legal_pairs(), (
                    f"{name} played the illegal {move} under {preset} with {num_players} players"
                )
                game.play(move)
