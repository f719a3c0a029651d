"""The compiled heuristic opponent plays like :class:`agents.heuristic.HeuristicAgent`, and
the batched core's opponent mixtures draw their kinds reproducibly.

The heuristic differential test drives the batched core through whole games (every seat
played from outside, in "move" mode); at every position it asks the compiled heuristic
for its move (:meth:`BatchedScopa.choose`) and rebuilds the same position in the Python
engine (:meth:`Game.from_deal`), where the Python agent scores every legal move. The
compiled choice must be one of the Python agent's best moves (ties within its tolerance:
either may be picked). Then either that move or a random legal one is played, so the
games also reach positions a heuristic player would not.

CI checks 200 whole standard games for 2 and for 4 players, and a few games of other
player counts and presets; ``SCOPA_HEURISTIC_GAMES`` sets the number per case.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from agents.heuristic import HeuristicAgent, HeuristicWeights
from scopa_env.engine.actions import move_enumeration
from scopa_env.engine.cards import cards_of, format_card, format_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import get_rules
from scopa_env.fast import BatchedScopa, core, playout
from scopa_env.fast.batch import (
    GREEDY_CARD,
    GREEDY_COIN,
    GREEDY_PRIMIERA,
    GREEDY_SCOPA,
    GREEDY_SETTEBELLO,
    HEURISTIC_BLOCK,
    HEURISTIC_LEFTOVER,
    HEURISTIC_REPLY,
    HEURISTIC_TRAIL,
    OPPONENT_KINDS,
)
from scopa_env.fast.core.opponents import _comb, _holds_some

FULL_GAMES = os.environ.get("SCOPA_HEURISTIC_GAMES")
TOL = 1e-9  # agents.greedy.pick_best's tie tolerance


def python_best(batch: BatchedScopa, i: int, agent: HeuristicAgent) -> tuple[set[tuple[int, int]], dict]:
    """The moves the Python heuristic rates best in row ``i`` of ``batch`` (ties included), and the scores."""
    st = batch.state(i)
    game = Game.from_deal(
        hands=[cards_of(h) for h in st["hands"]],
        table=cards_of(st["table"]),
        stock=st["stock"],
        dealer=st["dealer"],
        scores=st["scores"],
        rules=batch.rules,
        piles=[cards_of(p) for p in st["piles"]],
        scope=st["scope"],
        current=st["current"],
        last_capturer=st["last_capturer"],
    )
    view = game.view()
    pairs = view.legal_pairs()
    scores = agent.scores(view, pairs)
    best = max(scores)
    return {p for p, s in zip(pairs, scores) if s >= best - TOL}, dict(zip(pairs, scores))


def run_heuristic_differential(rules_name: str, n: int, games: int, seed: int) -> int:
    """Play ``games`` whole games; assert the compiled heuristic's choice at every position. Returns positions checked."""
    rules = get_rules(rules_name)
    rows = min(16, games)
    batch = BatchedScopa(rows, n, rules, action_mode="move", legal_width=1024)
    batch.reset(np.arange(rows) + 1000 * seed)
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(seed)
    done = checked = 0
    while done < games:
        choices = batch.choose("heuristic")
        actions = np.empty(rows, np.int64)
        for i in range(rows):
            card, mask = choices[i]
            best, scores = python_best(batch, i, agent)
            assert (card, mask) in best, (
                f"{rules_name} n={n} {batch.describe(i)}: compiled heuristic played {format_card(card)} "
                f"taking [{format_cards(mask)}], Python's best: {sorted(best)}; scores {scores}"
            )
            checked += 1
            if rng.random() < 0.7:
                actions[i] = batch.moves.ids([(card, mask)], batch.state(i)["table"])[0]
            else:
                legal = batch.legal_actions(i)
                actions[i] = legal[rng.integers(len(legal))]
        batch.step(actions)
        done += int(batch.terminated.sum())
    return checked


def has_move_mode(rules_name: str) -> bool:
    try:
        move_enumeration(get_rules(rules_name))
    except ValueError:
        return False
    return True


@pytest.mark.slow  # 200 whole games per player count
@pytest.mark.parametrize("n", [2, 4])
def test_compiled_heuristic_plays_the_python_heuristics_best_move(n):
    """200 whole standard games per player count: every compiled choice is a best move of the Python agent."""
    games = int(FULL_GAMES) if FULL_GAMES else 200
    checked = run_heuristic_differential("standard", n, games, seed=n)
    assert checked >= games * 30


@pytest.mark.parametrize(
    "rules_name,n",
    [
        case
        for case in [
            ("standard", 3),
            ("standard", 6),
            ("booklet", 4),  # each for themselves: four sides
            ("standard,partnerships=none", 6),  # six sides
            ("scopone_scientifico", 4),
            ("scopa_d_assi", 2),
            ("escoba", 2),
            ("hurrikan", 2),
            ("booklet_capture_more", 2),
            ("scopa_corse", 2),
        ]
        if has_move_mode(case[0])  # the compiled heuristic plays the "move" ids of presets that have them
    ],
)
def test_compiled_heuristic_on_other_player_counts_and_presets(rules_name, n):
    """The score uses the engine's legal moves and primiera scale of each preset, so the twin follows them too."""
    games = int(FULL_GAMES) if FULL_GAMES else 12
    run_heuristic_differential(rules_name, n, games, seed=50 + n)


def test_compiled_weights_are_the_python_defaults():
    w = HeuristicWeights()
    compiled = (GREEDY_CARD, GREEDY_COIN, GREEDY_SETTEBELLO, GREEDY_PRIMIERA, GREEDY_SCOPA)
    python = (w.capture.card, w.capture.coin, w.capture.settebello, w.capture.primiera, w.capture.scopa)
    assert compiled == python, "capture weights differ from agents.heuristic's defaults"
    assert (HEURISTIC_REPLY, HEURISTIC_BLOCK, HEURISTIC_LEFTOVER, HEURISTIC_TRAIL) == (
        w.reply,
        w.block,
        w.leftover,
        w.trail,
    ), "term weights differ from agents.heuristic's defaults"


def test_holds_some_is_the_exact_hypergeometric_chance():
    """The compiled chance is Python's (exact binomials, one rounding)."""
    from agents.heuristic import holds_some

    for unseen in range(0, 41):
        for kind in range(0, 5):
            for hand in range(0, 11):
                if kind > unseen:
                    continue
                assert _holds_some(unseen, kind, hand) == holds_some(unseen, kind, hand), (unseen, kind, hand)
    assert _comb(40, 20) == math.comb(40, 20)


def test_heuristic_beats_greedy_and_random():
    _, wins = playout(200, 2, players=("heuristic", "greedy"), seed=5)
    assert wins[0] > wins[1], f"heuristic won {wins[0]}, greedy {wins[1]}"
    _, wins = playout(100, 2, players=("random", "heuristic"), seed=6)
    assert wins[1] > 3 * wins[0], f"heuristic won {wins[1]}, random {wins[0]}"


def test_learner_against_heuristic_opponents_is_always_to_move():
    b = BatchedScopa(8, 4, opponent="heuristic", learner_seat="random")
    b.reset(np.arange(8))
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(200):
        assert b.to_play.tolist() == [b.state(i)["learner"] for i in range(8)], "the learner is not to move"
        assert b.opponent_kind.tolist() == [core.OPPONENT_HEURISTIC] * 8
        b.step([rng.choice(b.legal_actions(i)) for i in range(8)])
        ends += int(b.terminated.sum())
        assert all(b.final_opponent[b.terminated] == core.OPPONENT_HEURISTIC)
    assert ends > 0


# --- opponent mixtures ---------------------------------------------------------------------


def play_kinds(opponent, seeds, steps=300):
    """Opponent kinds of every game started in ``steps`` random steps (per row, in order)."""
    b = BatchedScopa(len(seeds), 2, opponent=opponent)
    b.reset(seeds)
    rng = np.random.default_rng(1)
    kinds = [[k] for k in b.opponent_kind.tolist()]
    for _ in range(steps):
        b.step((rng.random((len(seeds), 41)) * b.action_mask).argmax(1))
        for i in np.flatnonzero(b.terminated):
            assert b.final_opponent[i] == kinds[i][-1], "final_opponent is not the finished game's kind"
            kinds[i].append(int(b.opponent_kind[i]))
    return kinds


def test_mixture_draws_each_games_kind_reproducibly():
    mix = {"greedy": 0.5, "heuristic": 0.5}
    a = play_kinds(mix, np.arange(64))
    b = play_kinds(mix, np.arange(64))
    assert a == b, "the same seeds drew different opponent kinds"
    flat = [k for row in a for k in row]
    assert set(flat) == {core.OPPONENT_GREEDY, core.OPPONENT_HEURISTIC}, f"kinds drawn: {set(flat)}"
    share = flat.count(core.OPPONENT_HEURISTIC) / len(flat)
    assert 0.35 < share < 0.65, f"heuristic share {share:.2f} of {len(flat)} games for weight 0.5"
    assert any(len(set(row)) > 1 for row in a), "a row never changed kind between its games"


def test_mixture_weights_set_the_shares():
    kinds = [k for row in play_kinds({"random": 1, "heuristic": 3, "greedy": 0}, np.arange(256), steps=1) for k in row]
    assert core.OPPONENT_GREEDY not in kinds, "a kind of weight 0 was drawn"
    share = kinds.count(core.OPPONENT_HEURISTIC) / len(kinds)
    assert 0.65 < share < 0.85, f"heuristic share {share:.2f} for weight 3 of 4"


def test_a_one_kind_mixture_is_that_opponent():
    a = BatchedScopa(8, 2, opponent={"greedy": 2.0, "heuristic": 0.0})
    b = BatchedScopa(8, 2, opponent="greedy")
    a.reset(np.arange(8))
    b.reset(np.arange(8))
    for _ in range(50):
        acts = a.action_mask.argmax(1)
        a.step(acts)
        b.step(acts)
        assert np.array_equal(a.obs, b.obs), "a one-kind mixture plays differently from the plain opponent"


@pytest.mark.parametrize(
    "opponent,message",
    [
        ({"greedy": 0.5, "expert": 0.5}, "unknown opponent 'expert'"),
        ({"greedy": -0.5, "heuristic": 1.0}, "weight of 'greedy' must be finite and >= 0"),
        ({"greedy": 0.0, "heuristic": 0}, "all zero"),
        ({}, "opponent must be one of"),
        ({"greedy": float("nan")}, "weight of 'greedy'"),
        ({"greedy": "half"}, "must be a number"),
        ("expert", "opponent must be one of"),
    ],
)
def test_bad_mixtures_raise_naming_the_problem(opponent, message):
    with pytest.raises(ValueError, match=message):
        BatchedScopa(2, 2, opponent=opponent)


def test_choose_rejects_unknown_players():
    b = BatchedScopa(2, 2)
    b.reset([0, 1])
    with pytest.raises(ValueError, match="player must be one of"):
        b.choose("expert")
    assert len(b.choose("heuristic")) == 2


def test_vector_envs_accept_mixtures():
    from scopa_env.fast.vec_env import ScopaVectorEnv

    env = ScopaVectorEnv(8, 2, opponent={"greedy": 0.5, "heuristic": 0.5}, learner_seat="random")
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(300):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, rewards, terminated, _, infos = env.step(actions)
        if terminated.any():
            seen |= {OPPONENT_KINDS[k] for k in infos["opponent"][terminated]}
    assert seen == {"greedy", "heuristic"}, f"finished games against {seen}"
    with pytest.raises(ValueError, match="unknown opponent"):
        ScopaVectorEnv(2, 2, opponent={"greedy": 1, "grredy": 1})


def test_sb3_vec_env_accepts_the_heuristic_and_mixtures():
    pytest.importorskip("stable_baselines3")
    from scopa_env.fast.vec_env import ScopaSB3VecEnv

    for opponent in ("heuristic", {"random": 0.25, "heuristic": 0.75}):
        env = ScopaSB3VecEnv(4, 2, opponent=opponent)
        env.seed(1)
        env.reset()
        names = set()
        for _ in range(200):
            masks = env.action_masks()
            env.step_async(np.array([np.flatnonzero(m)[0] for m in masks]))
            _, _, dones, infos = env.step_wait()
            names |= {infos[i]["opponent"] for i in np.flatnonzero(dones)}
        assert names and names <= set(OPPONENT_KINDS), f"opponents named {names}"


def _view_cases():
    """Every preset the move features play, at its first player count and at 4 where it has one."""
    from scopa_env.engine.rules import PRESETS

    cases = []
    for name, rules in sorted(PRESETS.items()):
        try:
            rules.check_backend("features")
        except NotImplementedError:
            continue
        for n in sorted({rules.player_counts[0], *(k for k in rules.player_counts if k == 4)}):
            cases.append((name, n))
    return cases


@pytest.mark.parametrize("rules_name, n", _view_cases())
def test_view_scores_are_the_python_heuristics_scores(rules_name, n):
    """The single-view path of the compiled heuristic (what a DMC agent with heuristic move features asks
    for at play time) scores every legal move of whole random games as HeuristicAgent.scores does, or
    hands the view back (None) where it does not play: shown hands, a wildcard, a decision."""
    from scopa_env.engine.setup import GameSetup
    from scopa_env.fast.features import view_heuristic_scores

    rules = get_rules(rules_name)
    moves = GameSetup.of(rules, n).moves
    agent = HeuristicAgent()
    rng = np.random.default_rng(11)
    compared = 0
    for seed in range(2):
        game = Game(n, rules=rules, seed=seed)
        while not game.done:
            view = game.view(game.current)
            pairs = view.legal_pairs()
            got = view_heuristic_scores(view, np.array(moves.ids(pairs, view.table), np.int64))
            if got is None:
                assert view.deciding or view.wild_rank or any(view.revealed) or not supports_core(rules, n)
            else:
                want = np.asarray(agent.scores(view, pairs), np.float64)
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=f"{rules_name} {view}")
                compared += 1
            game.play_pair(*pairs[int(rng.integers(len(pairs)))])
    assert compared > 0 or not supports_core(rules, n)


def supports_core(rules, n) -> bool:
    from scopa_env.fast.batch import check_supported

    try:
        check_supported(rules, n)
    except NotImplementedError:
        return False
    return True
