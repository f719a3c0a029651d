"""Every registered preset at every player count it allows: random games in the engine and in both
env modes against a brute-force reading of the capture rules and of the hand scores, hidden cards
that stay hidden, whole games to the target, the "move" mode sizes, and the option strings,
targets and combinations of rules that are refused.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from scopa_app.cli import main as cli_main
from scopa_env import scopa_v0
from scopa_env.engine.actions import MAX_MOVE_ACTIONS, move_enumeration
from scopa_env.engine.cards import RANK_MASK, RANK_OF, SUIT_MASK, card_id, cards_of, mask_of
from scopa_env.engine.game import Game
from scopa_env.engine.observation import ObservationLayout, write_observation
from scopa_env.engine.rules import PRESETS, STANDARD, Rules, get_rules, move_of
from scopa_env.engine.scoring import declaring_pairs, score_hand

VARIANTS = sorted(name for name in PRESETS if name != "standard")


# --- options --------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [11, 16, 21, 31, 41, 51])
@pytest.mark.parametrize("preset", ["standard", "chkobba", "scopa_corse", "booklet"])
def test_targets(preset, target):
    rules = get_rules(f"{preset},target={target}")
    assert rules.target == target and rules.name == f"{preset},target={target}"
    game = Game(2, rules, seed=target)
    rnd = random.Random(target)
    while game.winner is None:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    top = game.scores[game.winner]
    assert top >= target and all(v < top for s, v in enumerate(game.scores) if s != game.winner), game.scores


def test_cappotto_option():
    """wikipedia: "if a player is winning 7 points to 0 then the game can be considered over"."""
    game = Game(2, "chkobba,cappotto=true", seed=0)
    for scores, winner in (([7, 0], 0), ([0, 8], 1), ([7, 1], None), ([6, 0], None)):
        game.scores = scores
        assert game._game_winner() == winner, f"cappotto at {scores}"
    game = Game(2, "chkobba", seed=0)
    game.scores = [7, 0]
    assert game._game_winner() is None, "without cappotto 7-0 plays on"


def test_option_strings():
    assert get_rules("standard,player_counts=2/3").player_counts == (2, 3)
    assert get_rules("scopa_corse,player_counts=2").schedule(2) == (3, 3, 3, 3, 4), "a variant's own player counts"
    assert get_rules("scopone,kings_redeal=off").kings_redeal is False
    with pytest.raises(ValueError, match="bad rules option"):
        get_rules("standard,colour=red")
    with pytest.raises(ValueError, match="bad value"):
        get_rules("standard,target=many")


IMPOSSIBLE = [
    (lambda: Game(3, "scopone"), "allow num_players in"),
    (lambda: get_rules("scopone").replace(player_counts=(3,)), "hand_size=9 to 3 players"),
    (
        lambda: get_rules("scopa_corse").replace(deal_schedules={2: (3, 3, 3, 3, 4, 4), 4: (3, 3, 2)}),
        "36-card deck",
    ),
    (lambda: STANDARD.replace(ranks=(1, 3, 4, 5, 6, 7, 8, 9, 10)), "cannot be dealt"),
    (lambda: get_rules("chkobba").replace(table_size=0, hand_size=10, player_counts=(4,)), "first_card_choice"),
    (lambda: STANDARD.replace(capture_equal=False), "no card could ever capture"),
    (lambda: get_rules("booklet_scientifico").replace(player_counts=(2, 3, 4)), "cannot be dealt"),
    (lambda: get_rules("scopa_corse").replace(aces_redeal=True, ranks=(3, 4, 5, 6, 7, 8, 9, 10)), "Aces"),
    (lambda: STANDARD.replace(prime_rule="most_kings"), "prime_rule"),
    (lambda: STANDARD.replace(partnerships=(3,)), "partnerships"),
    (lambda: get_rules("chiamarsi_fuori,partnerships=6"), "claim_out needs two sides"),
    (lambda: get_rules("booklet,partnerships=2"), "partnerships"),
]


@pytest.mark.parametrize("make, message", IMPOSSIBLE)
def test_impossible_combinations(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- move-mode enumeration ------------------------------------------------------------------------


DOCUMENTED_N = {
    "standard": 16_200,
    "scopone": 16_200,
    "scopone_scientifico": 16_200,
    "asso_pigliatutto": 16_204,
    "scopa_d_assi": 16_204,
    "scopa_d_assi_options": 16_208,
    "scopa_corse": 4_852,
    "chkobba": 16_240,
    "hurrikan": 16_200,
    "booklet": 1_560,
    "booklet_capture_more": 6_056,
    "scopa_di_quindici_1": 84_488,
    "escoba": 84_488,
    "scopa_a_quindici": 84_488,
    "scopa_di_quindici_2": 100_648,
    "scopa_di_quindici_2_fewest": 100_648,
    "scopa_di_quindici_3": 100_652,
}


@pytest.mark.parametrize("preset, n", sorted(DOCUMENTED_N.items()))
def test_move_mode_size(preset, n):
    """docs/rules.md: N per preset, every one in "move" mode (the fifteens too: up to 100,652)."""
    rules = get_rules(preset)
    assert n <= MAX_MOVE_ACTIONS and len(move_enumeration(rules)) == n, f"{preset}: documented N = {n}"
    space = scopa_v0.raw_env(rules.player_counts[0], rules=preset, action_mode="move").action_space("player_0")
    assert space.n == n, f"{preset}: Discrete(N) in move mode"


def test_move_mode_refuses_an_enumeration_over_its_cap(monkeypatch):
    """Rules whose enumeration would pass MAX_MOVE_ACTIONS get a one-line error pointing to "select"."""
    import scopa_env.engine.actions as actions

    monkeypatch.setattr(actions, "MAX_MOVE_ACTIONS", 16_199)
    with pytest.raises(ValueError, match=r"'standard' allow 16,200 distinct moves, more than the 16,199 .*'select'"):
        actions.MoveEnumeration(get_rules("standard"))


# --- random games: invariants in every preset and player count ------------------------------------


WILDCARD = card_id(1, 7)
"""Cirulla's wildcard, the Seven of cups (card 16)."""


def value_of(card: int, wild_rank: int = 0) -> int:
    """A card's capture value: Cirulla's declared wildcard keeps its declared rank."""
    return wild_rank if wild_rank and card == WILDCARD else RANK_OF[card]


def table_subsets(tcards: list[int], limit: int, wild_rank: int = 0) -> list[tuple[int, int, int]]:
    """(mask, sum, size) of every non-empty set of table cards whose values add up to at most ``limit``."""
    subsets = []

    def walk(i, total, mask, size):
        if size:
            subsets.append((mask, total, size))
        for j in range(i, len(tcards)):
            v = total + value_of(tcards[j], wild_rank)
            if v <= limit:
                walk(j + 1, v, mask | 1 << tcards[j], size + 1)

    walk(0, 0, 0, 0)
    return subsets


def brute_force_pairs(hand: int, table: int, rules: Rules, wild_rank: int = 0) -> list[tuple[int, int]]:
    """The capture rules read straight off the texts, by enumerating table subsets."""
    tcards = cards_of(table)
    aces_on_table = any(value_of(c, wild_rank) == 1 for c in tcards)
    out = []
    for card in cards_of(hand):
        rank = value_of(card, wild_rank)
        if not tcards:
            out.append((card, 1 << card) if rules.ace_takes_itself and rank == 1 else (card, 0))
            continue
        subsets = table_subsets(tcards, max(rank, rules.capture_sum - rank), wild_rank)
        singles = [m for m, t, k in subsets if k == 1 and t == rank] if rules.capture_equal else []
        sets = [m for m, t, k in subsets if k >= 2 and t == rank] if rules.capture_equal else []
        if singles and rules.single_card_priority:
            sets = []
        fifteens = [m for m, t, k in subsets if t + rank == rules.capture_sum] if rules.capture_sum else []
        take_all = [table] if rules.ace_takes_all and rank == 1 and not aces_on_table else []
        options = set(singles + sets + fifteens + take_all)
        if rules.max_capture_cards:
            options = {m for m in options if m.bit_count() <= rules.max_capture_cards}
        if rules.fewest_cards and options:
            options = {m for m in options if m.bit_count() == min(o.bit_count() for o in options)}
        if not options or rules.capture_optional:
            out.append((card, 0))
        out += [(card, m) for m in sorted(options)]
    return out


def expected_score(piles: list[int], scope: list[int], rules: Rules) -> list[dict]:
    """Hand points recomputed from the piles with the rule texts' words."""

    def most(values):
        return [int(v == max(values) and values.count(v) == 1) for v in values]

    bonus = SUIT_MASK[rules.bonus_suit]
    out = [{} for _ in piles]
    for key, values in (
        ("cards", [p.bit_count() for p in piles]),
        ("coins", [(p & bonus).bit_count() for p in piles]),
    ):
        for row, point in zip(out, most(values)):
            row[key] = point
    for row, p, k in zip(out, piles, scope):
        row["settebello"] = p >> card_id(rules.bonus_suit, 7) & 1
        row["scope"] = k * rules.scopa_points
    if rules.prime_rule == "sevens":
        for row, point in zip(
            out, most([((p & RANK_MASK[7]).bit_count(), (p & RANK_MASK[6]).bit_count()) for p in piles])
        ):
            row["seven_majority"] = point
    elif not rules.primiera_by_counts:
        # pagat: "the sum of the values of the best card of each suit"; a side lacking a
        # suit cannot score it (pagat) or adds 0 for that suit (booklet: "None | 0").
        values = []
        for p in piles:
            bests = [
                max((rules.primiera_values[RANK_OF[c] - 1] for c in cards_of(p & SUIT_MASK[s])), default=None)
                for s in range(4)
            ]
            if None in bests and rules.primiera_all_suits:
                values.append(0)
            else:
                values.append(sum(b for b in bests if b is not None))
        for row, point, v in zip(out, most(values), values):
            row["primiera"] = point if v > 0 else 0
    return out


def check_cards_accounted(game: Game) -> None:
    parts = list(game.hands) + [game.table, mask_of(game.stock)] + list(game.piles)
    total = sum(p.bit_count() for p in parts)
    union = 0
    for p in parts:
        union |= p
    assert total == len(game.rules.deck) and union == game.rules.deck_mask, f"cards lost or doubled: {game!r}"


def play_checked(game: Game, rnd: random.Random, hands: int) -> None:
    rules = game.rules
    rng = np.random.default_rng(0)
    step = 0
    while game.winner is None and game.hand_number < hands:
        check_cards_accounted(game)
        before = list(game.scores)
        pairs = game.legal_pairs()
        step += 1
        if step % 7 == 0:
            world = game.view().determinize(rng)
            check_cards_accounted(world)
            assert world.legal_pairs() == pairs, "a determinized world has the same legal moves"
        card = game.hands[game.current].bit_length() - 1
        if game.declare_queue:
            hand = game.hands[game.current]
            assert pairs == declaring_pairs(hand, rules), "declare / pass (Cirulla: declare the wildcard as a rank)"
            assert pairs[0][1] == 0 and len(pairs) >= 2, "pass first, then one or more declarations"
            assert game.claim_pair() is None, "no claim during a decision"
        elif game.deciding:
            assert pairs == [(card, 0), (card, 1 << card)], "the first-card decision, or declare / pass"
            assert game.claim_pair() is None, "no claim during a decision"
        else:
            want = brute_force_pairs(game.hands[game.current], game.table, rules, game.wild_rank)
            assert pairs == want, f"{rules.name}: {pairs} != brute force {want} in {game!r}"
            claim = game.claim_pair()
            assert claim == ((card, 1 << card) if rules.claim_out else None), "the claim: the highest card, itself"
            assert claim not in pairs, "the claim is not a card play (legal_pairs)"
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if game.hand_result is not None:
            result = game.hand_result
            piles = [mask_of(p) for p in result.piles]
            assert sum(p.bit_count() for p in piles) == len(rules.deck), "every card in a pile at the hand end"
            for row, want in zip(result.hand_score, expected_score(piles, result.scope, rules)):
                for key, value in want.items():
                    assert row[key] == value, f"{rules.name}: {key} {row[key]} != {value} ({result})"
                points = [k for k in row if not k.startswith("num_") and k not in ("total", "primiera_value")]
                assert row["total"] == sum(row[k] for k in points if k != "double_game"), row
            rescored = score_hand(result.piles, result.scope, rules)
            for row, again in zip(result.hand_score, rescored):
                assert {k: v for k, v in row.items() if k != "double_game"} == {
                    k: v for k, v in again.items() if k != "double_game"
                }, "the hand score is a function of the piles and scope"
            assert [b + row["total"] for b, row in zip(before, result.hand_score)] == game.scores
    if game.winner is None:
        check_cards_accounted(game)


PRESET_COUNTS = [(name, n) for name in sorted(PRESETS) for n in PRESETS[name].player_counts]


@pytest.mark.parametrize("preset, n", PRESET_COUNTS)
def test_random_games_engine(preset, n):
    rnd = random.Random(n)
    game = Game(n, preset, seed=n)
    play_checked(game, rnd, hands=2)
    assert game.hand_number >= 1 or game.winner is not None


@pytest.mark.parametrize("preset, n", PRESET_COUNTS)
def test_hidden_cards_stay_hidden(preset, n):
    """Permute the cards the observer cannot see (other hands but revealed cards, the stock order)
    at several points of a random game: the observation stays the same."""
    rules = get_rules(preset)
    layout = ObservationLayout.for_rules(n, rules)
    game = Game(n, rules, seed=n)
    rnd = random.Random(n)
    rng = np.random.default_rng(n)
    checked = 0
    for step in range(60):
        if game.winner is not None:
            break
        if step % 5 == 0:
            seat = game.current
            revealed = list(game.revealed) if rules.declarations else [0] * n
            others = [s for s in range(n) if s != seat]
            hidden = [c for s in others for c in cards_of(game.hands[s] & ~revealed[s])] + list(game.stock)
            shuffled = [int(c) for c in rng.permutation(hidden)]
            world = game.clone()
            pos = 0
            for s in others:
                k = (game.hands[s] & ~revealed[s]).bit_count()
                world.hands[s] = revealed[s] | mask_of(shuffled[pos : pos + k])
                pos += k
            world.stock = shuffled[pos:]
            a = write_observation(game, seat, layout, np.empty(layout.size, np.float32))
            b = write_observation(world, seat, layout, np.empty(layout.size, np.float32))
            assert np.array_equal(a, b), f"{preset}, {n} players, step {step}: the observation shows hidden cards"
            assert world.action_pairs() == game.action_pairs(), f"{preset}: the legal moves depend on hidden cards"
            checked += 1
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    assert checked > 0


@pytest.mark.parametrize("preset, n", PRESET_COUNTS)
def test_random_games_env(preset, n):
    """Both env modes: the mask is exactly the legal moves; episodes end with every card scored."""
    rules = get_rules(preset)
    assert len(move_enumeration(rules)) <= MAX_MOVE_ACTIONS, f"{preset}: every preset has a move mode"
    for mode in ("select", "move"):
        env = scopa_v0.raw_env(num_players=n, rules=preset, action_mode=mode, episode="hand")
        env.reset(seed=7)
        rng = np.random.default_rng(7)
        steps = 0
        for _agent in env.agent_iter(max_iter=2000):
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            ids = np.flatnonzero(obs["action_mask"])
            game = env.game
            # The env's actions: the card plays, the decisions (Chkobba's first card, declare /
            # pass) and, under claim_out, the claim of chiamarsi fuori.
            expected = set(game.legal_pairs())
            claim = game.claim_pair()
            if claim is not None:
                assert claim not in expected and not game.deciding, f"{preset}: the claim is an extra action"
                expected.add(claim)
            if game.declare_queue:
                want = set(declaring_pairs(game.hands[game.current], rules))
                assert expected == want, f"{preset}: a declaration is pass or declare (the wildcard's rank)"
            elif game.deciding:
                card = game.hands[game.current].bit_length() - 1
                assert expected == {(card, 0), (card, 1 << card)}, f"{preset}: a decision is self-mask or not"
            assert expected == set(game.action_pairs()), f"{preset}: action_pairs = legal_pairs + claim"
            if env._pending_card is None:
                if mode == "move":
                    decoded = {(m.card, m.mask) for m in (env.decode_action(i) for i in ids)}
                    assert decoded == expected, f"{preset}/{mode}: mask != legal moves (+ claim)"
                else:
                    assert set(ids) == {c for c, _ in expected}, f"{preset}/{mode}: mask != cards of the legal moves"
            if claim is not None and rng.random() < 0.97:  # claim now and then, not at once
                ids = [i for i in ids if mode == "select" or env.decode_action(i) != move_of(*claim)]
            env.step(int(rng.choice(ids)))
            steps += 1
        assert env.game.hand_result is not None and steps > 0, f"{preset}/{mode}: the hand ended"
        if not env.game.hand_over:
            check_cards_accounted(env.game)


@pytest.mark.parametrize(
    "preset, n, mode",
    [
        ("chkobba", 2, "move"),
        ("chkobba", 4, "select"),
        ("asso_pigliatutto", 2, "move"),
        ("scopa_d_assi_options", 3, "select"),
        ("scopa_corse", 4, "move"),
        ("hurrikan", 2, "select"),
        ("booklet", 3, "move"),
        ("scopa_di_quindici_3", 2, "select"),
    ],
)
def test_whole_env_games(preset, n, mode):
    """Whole games through the wrapped env: +1 to the winning side, -1 to the others."""
    env = scopa_v0.env(num_players=n, rules=preset, action_mode=mode)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_iter=20_000):
        obs, reward, term, trunc, _ = env.last()
        returns[agent] += reward
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    game = env.unwrapped.game
    assert game.winner is not None, f"{preset}: the game reached its target {game.rules.target}"
    for i, agent in enumerate(env.possible_agents):
        assert returns[agent] == (1.0 if game.side_of[i] == game.winner else -1.0), f"{preset}: {agent}"


def test_full_games_every_preset():
    """A few whole games in each preset, to the target (scores only grow, a winner emerges)."""
    for name in sorted(PRESETS):
        rules = PRESETS[name]
        game = Game(rules.player_counts[0], rules, seed=42)
        rnd = random.Random(42)
        while game.winner is None:
            pairs = game.legal_pairs()
            game.play_pair(*pairs[rnd.randrange(len(pairs))])
        # A game ends at the target, or earlier by cappotto or by an outright win the rules name (e.g.
        # Cirulla's all_coins_wins, Wikipedia: "a team that manages to capture all 10 coins in a single
        # round wins the game immediately"), which the hand's events then show.
        outright = game.win_reason not in (None, "target") and (game.win_reason, game.winner) in game.hand_result.events
        assert max(game.scores) >= rules.target or rules.cappotto or outright, (
            f"{name}: {game.scores} ({game.win_reason})"
        )


@pytest.mark.parametrize("preset", ["chkobba", "scopa_corse", "hurrikan", "booklet", "scopa_di_quindici_3"])
def test_cli_play_random(preset, capsys):
    """`scopa play-random --rules NAME` plays any registered preset."""
    assert cli_main(["play-random", "--rules", preset, "--seed", "1", "--hand", "--quiet"]) == 0
    assert "Hand 1 result" in capsys.readouterr().out
