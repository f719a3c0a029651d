"""The compiled search (``fsearch``, :mod:`scopa_env.fast.search`) plays legally, from the view only.

What must always hold (issue 16):

- it never plays an illegal move, for every preset family and player count it is given;
- it decides from the seat's view only: shuffling the hidden cards (the other hands and the
  stock) gives the same values and the same move for a seed;
- it is reproducible for a seed (and the seed matters);
- its exact endgame agrees with a brute-force minimax solver on the Python engine, and so
  does alpha-beta deep enough to reach the end of the hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.fast_search import FastSearchAgent
from agents.registry import make_agent
from agents.search import _alphabeta as reference_alphabeta
from scopa_env.engine.game import Game
from scopa_env.engine.rules import get_rules
from scopa_env.fast import BatchedScopa, core
from scopa_env.fast.batch import compiled_rules
from scopa_env.fast.search import (
    OBS_CAPTURED,
    OBS_CARD,
    OBS_KNOWN,
    OBS_SEAT,
    OBS_TABLE,
    OUT_INDEX,
    round_plays,
    row_from_view,
    search_config,
    search_params,
    search_rows,
)

SMALL = "fsearch:worlds=6,min_worlds=2"
FRENCH_2P = get_rules("french_52").replace(name="french_52_2p", player_counts=(2,))
"""The 52-card deck with 2 players (8 deals of 3): an exact endgame small enough to brute-force."""


def _values(view, C, seed=7):
    """The kernel's ``(out, values)`` for one view (values in legal_pairs order)."""
    P, F, TBL, _ = compiled_rules(view.rules, view.num_players)
    P = search_params(P)
    row, counts = row_from_view(view, P)
    obs = round_plays(view)[None] if C[7] else None
    out, values = search_rows(row[None], counts[None], np.array([seed]), P, F, TBL, C, obs)
    return out[0], values[0, : len(view.legal_pairs())]


def _positions(rules, num_players, games, pilot_seed=0, keep=lambda g: True):
    """Positions (games, auto_next_hand off) reached by greedy play, where the mover has 2+ moves."""
    pilot = make_agent("greedy", seed=pilot_seed)
    out = []
    for d in range(games):
        game = Game(num_players, rules, seed=1000 + d, auto_next_hand=False)
        while not game.hand_over:
            if len(game.legal_pairs()) > 1 and keep(game):
                out.append(game.clone())
            game.play(pilot.act(game.view()))
    return out


# --- legality ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules, players, spec",
    [
        ("standard", 2, SMALL),
        ("standard", 2, "fsearch:worlds=4,rollout=heuristic,exact_cards=12,inference=true"),
        ("standard", 3, "fsearch:worlds=4,ab_depth=2,exact_cards=9"),
        ("scopone", 4, "fsearch:worlds=4,exact_cards=8,exact_worlds=2,inference=true"),
        ("standard", 6, SMALL),
        ("booklet", 4, "fsearch:worlds=4,ab_depth=2,exact_cards=8"),  # four sides: paranoid alpha-beta
        ("escoba", 2, "fsearch:worlds=4,exact_cards=8"),
        ("scopa_d_assi", 2, "fsearch:worlds=4,ab_depth=1"),
        ("cirulla", 2, "fsearch:worlds=2"),  # declarations and the wildcard: the Python search decides them
        ("french_52", 8, SMALL),  # the 52-card deck, eight sides
    ],
)
def test_never_plays_an_illegal_move(rules, players, spec):
    """Whole hands against the greedy player: every move the search returns is legal."""
    agent = make_agent(spec, seed=1)
    other = make_agent("greedy", seed=2)
    moves = 0
    for d in range(3 if rules != "cirulla" else 1):
        game = Game(players, rules, seed=d, auto_next_hand=False)
        while not game.hand_over:
            view = game.view()
            if game.side_of[game.current] == 0:
                move = agent.act(view)
                assert (move.card, move.mask) in game.legal_pairs(), (
                    f"{spec} under {rules}: {move} is illegal; legal: {game.legal_pairs()}"
                )
                moves += 1
            else:
                move = other.act(view)
            game.play(move)
    assert moves > 10, "too few searched moves to mean anything"


def test_bad_options_are_refused():
    for spec in ("fsearch:rollout=random", "fsearch:worlds=0", "fsearch:exact_cards=-1", "fsearch:infer_temp=0"):
        with pytest.raises(ValueError, match="fsearch"):
            make_agent(spec)


# --- decides from the view only -------------------------------------------------------------


def test_hidden_card_permutation_gives_the_same_decision():
    """Other worlds consistent with the view (other hands and stock redrawn): same values, same move."""
    rng = np.random.default_rng(0)
    agent_spec = dict(worlds=8, exact_cards=12, inference=True)
    C = search_config(**agent_spec)
    checked = 0
    moved = 0
    for game in _positions("standard", 2, 6)[::3] + _positions("scopone", 4, 2)[::7]:
        view = game.view()
        out, values = _values(view, C)
        decision = FastSearchAgent(seed=3, **agent_spec).act(view)
        for _ in range(2):
            other = view.determinize(rng)
            other_view = other.view(view.seat)
            assert other_view.hand == view.hand and other_view.table == view.table
            if any(other.hands[s] != game.hands[s] for s in range(game.num_players) if s != view.seat):
                moved += 1
            out2, values2 = _values(other_view, C)
            assert np.array_equal(values, values2), f"values changed with the hidden cards: {values} vs {values2}"
            assert out2[OUT_INDEX] == out[OUT_INDEX]
            assert FastSearchAgent(seed=3, **agent_spec).act(other_view) == decision
            checked += 1
    assert checked > 20 and moved > 10, f"only {checked} positions, {moved} with other hidden cards"


def test_batch_rows_ignore_the_hidden_columns():
    """search_rows on BatchedScopa rows: permuting the other hands and the stock in place changes nothing,
    while the seed does change some decision (the check is not vacuous)."""
    batch = BatchedScopa(64, num_players=2, action_mode="move", episode="hand")
    batch.reset(np.arange(64))
    rng = np.random.default_rng(1)
    for _ in range(5):  # a few random plays so the positions differ
        batch.step(np.array([rng.choice(ids[:n]) for ids, n in zip(batch.legal_ids, batch.legal_count)]))
    S = batch._S.copy()
    P, F, TBL, _ = compiled_rules(batch.rules, 2)
    P = search_params(P)
    counts = np.zeros((64, 6), np.int64)
    for s in range(2):
        counts[:, s] = [int(h).bit_count() for h in S[:, core.COL_HAND + s]]
    C = search_config(worlds=8, exact_cards=6)
    out, values = search_rows(S, counts, np.arange(64), P, F, TBL, C)
    permuted = S.copy()
    size = len(batch.rules.deck)
    for i in range(64):
        mover = int(S[i, core.COL_CURRENT])
        other = 1 - mover
        pos = int(S[i, core.COL_STOCK_POS])
        hidden = [c for c in range(40) if S[i, core.COL_HAND + other] >> c & 1] + list(
            S[i, core.COL_DECK + pos : core.COL_DECK + size]
        )
        rng.shuffle(hidden)
        k = int(counts[i, other])
        permuted[i, core.COL_HAND + other] = sum(1 << c for c in hidden[:k])
        permuted[i, core.COL_DECK + pos : core.COL_DECK + size] = hidden[k:]
    assert not np.array_equal(permuted, S)
    out2, values2 = search_rows(permuted, counts, np.arange(64), P, F, TBL, C)
    assert np.array_equal(out, out2) and np.array_equal(values, values2)
    out3, _ = search_rows(S, counts, np.arange(64) + 1000, P, F, TBL, C)
    assert not np.array_equal(values, search_rows(S, counts, np.arange(64) + 1000, P, F, TBL, C)[1])
    assert out3.shape == out.shape


# --- reproducible -------------------------------------------------------------------------------


def _hand_moves(seed, spec="fsearch:worlds=4,rollout=heuristic,inference=true"):
    agent = make_agent(spec, seed=seed)
    other = make_agent("heuristic", seed=0)
    game = Game(2, seed=5, auto_next_hand=False)
    moves = []
    while not game.hand_over:
        move = (agent if game.current == 0 else other).act(game.view())
        moves.append(move)
        game.play(move)
    return moves


def test_reproducible_for_a_seed():
    assert _hand_moves(11) == _hand_moves(11), "same seed, different moves"
    assert any(_hand_moves(11) != _hand_moves(s) for s in (12, 13, 14, 15)), "the seed is ignored"


# --- exact endgame ------------------------------------------------------------------------------


def _brute_force(game: Game, side: int) -> float:
    """Minimax over every line to the end of the hand on the Python engine (no pruning)."""
    if game.hand_over:
        score = game.hand_result.hand_score
        return score[side]["total"] - score[1 - side]["total"]
    values = []
    for c, m in game.legal_pairs():
        g = game.clone()
        g.play_pair(c, m)
        values.append(_brute_force(g, side))
    return max(values) if game.side_of[game.current] == side else min(values)


def _move_values(game: Game, solve) -> list[float]:
    side = game.side_of[game.current]
    out = []
    for c, m in game.legal_pairs():
        g = game.clone()
        g.play_pair(c, m)
        out.append(solve(g, side))
    return out


@pytest.mark.parametrize(
    "rules", ["standard", "escoba", "scopa_d_assi", "napola", FRENCH_2P], ids=lambda r: getattr(r, "name", r)
)
def test_exact_endgame_agrees_with_brute_force(rules):
    """2 players, stock empty, 3 cards or fewer each: the kernel's exact values, its alpha-beta
    with the depth to reach the end, and the Python search's solver equal brute-force minimax."""
    r = get_rules(rules)
    positions = _positions(r, 2, 12, keep=lambda g: not g.stock and sum(map(int.bit_count, g.hands)) <= 6)
    assert len(positions) >= 10
    exact = search_config(worlds=4, exact_cards=6)
    deep = search_config(worlds=1, exact_cards=0, ab_depth=6)
    for game in positions:
        truth = _move_values(game, _brute_force)
        _, values = _values(game.view(), exact)
        np.testing.assert_allclose(values, truth, err_msg=f"exact endgame, {rules}, position {game.view()}")
        _, deep_values = _values(game.view(), deep)
        np.testing.assert_allclose(deep_values, truth, err_msg=f"alpha-beta depth 6, {rules}")
        ref = _move_values(game, lambda g, side: reference_alphabeta(g, side, -1e9, 1e9))
        np.testing.assert_allclose(ref, truth, err_msg="the Python reference solver")


def test_shallow_search_differs_from_exact_somewhere():
    """The exact test can fail: rollouts alone (no exact endgame) miss the exact values somewhere."""
    positions = _positions("standard", 2, 12, keep=lambda g: not g.stock and sum(map(int.bit_count, g.hands)) <= 6)
    rollout_only = search_config(worlds=1, exact_cards=0)
    assert any(not np.allclose(_values(g.view(), rollout_only)[1], _move_values(g, _brute_force)) for g in positions)


# --- inference -------------------------------------------------------------------------------------


def test_round_plays_rebuild_the_table_before_each_play():
    """round_plays walks the history back: the table before each of this round's plays, the card,
    and what the player was then known to hold (the card and its later plays this round)."""
    pilot = make_agent("greedy", seed=0)
    checked = 0
    for d in range(4):
        game = Game(2, seed=d, auto_next_hand=False)
        tables = []
        while not game.hand_over:
            view = game.view()
            rows = round_plays(view)
            start = len(game.history) - len(game.history) % 6  # 3 cards each per round, 2 players
            expect = [(k, h) for k, h in enumerate(game.history) if k >= start and h[0] != view.seat]
            got = [r for r in rows if r[OBS_SEAT] >= 0]
            assert len(got) == len(expect)
            for row, (k, (seat, card, captured)) in zip(got, reversed(expect)):
                assert (row[OBS_SEAT], row[OBS_CARD], row[OBS_CAPTURED]) == (seat, card, captured)
                assert row[OBS_TABLE] == tables[k], "table before the play"
                later = [c for s, c, _ in game.history[k:] if s == seat]
                assert row[OBS_KNOWN] == sum(1 << c for c in later)
                checked += 1
            tables.append(game.table)
            game.play(pilot.act(view))
    assert checked > 20


# --- the batched forms: threads, labels, move ids --------------------------------------------------


def _mid_hand_batch(n=48, players=2, seed=3):
    batch = BatchedScopa(n, num_players=players, action_mode="move", episode="hand")
    batch.reset(np.arange(n) + seed)
    rng = np.random.default_rng(seed)
    for _ in range(4 * players):
        batch.step(np.array([rng.choice(ids[:k]) for ids, k in zip(batch.legal_ids, batch.legal_count)]))
    return batch


def test_threads_do_not_change_the_search():
    """search_rows on 2 threads returns exactly what one thread returns (every row has its own seed)."""
    from scopa_env.fast.batch import max_threads
    from scopa_env.fast.search import hand_counts

    if max_threads() < 2:
        pytest.skip("one core")
    batch = _mid_hand_batch()
    P, F, TBL, _ = compiled_rules(batch.rules, 2)
    P = search_params(P)
    C = search_config(worlds=8)
    args = (batch._S, hand_counts(batch._S, 2), np.arange(48), P, F, TBL, C)
    out1, values1 = search_rows(*args)
    out2, values2 = search_rows(*args, threads=2)
    assert np.array_equal(out1, out2) and np.array_equal(values1, values2)
    assert np.abs(values1).sum() > 0


@pytest.mark.parametrize("players", [2, 4])
def test_search_values_line_up_with_the_legal_ids(players):
    """search_values[j, k] is the value of legal_ids[games[j], k]: the move search_move_ids plays has the
    row's best value, columns past the legal count stay 0, and the search's own pick agrees."""
    from scopa_env.fast.search import search_batch, search_move_ids, search_values

    batch = _mid_hand_batch(32, players)
    games = np.array([1, 4, 5, 9, 20, 31])
    seeds = np.arange(len(games)) + 7
    C = search_config(worlds=16, exact_cards=4)
    values = search_values(batch, games, seeds, C)
    ids = search_move_ids(batch, games, seeds, C)
    for j, g in enumerate(games):
        n = int(batch.legal_count[g])
        assert ids[j] in batch.legal_ids[g, :n]
        k = int(np.flatnonzero(batch.legal_ids[g, :n] == ids[j])[0])
        assert values[j, k] >= values[j, :n].max() - 1e-9, f"game {g}: the played move is not the best valued"
        assert not values[j, n:].any()
    picks = search_batch(batch, np.arange(32) + 100, C)  # the unbatched entry agrees with itself on legality
    assert len(picks) == 32


def test_compiled_evaluation_against_fsearch(tmp_path):
    """evaluate_fast_sides plays an fsearch spec as the opponent: legal whole games, a report for both sides."""
    from train.fast_eval import evaluate_fast_sides, fsearch_config

    def first_legal(obs, legal_ids, legal_count):
        return legal_ids[:, 0]

    report = evaluate_fast_sides(first_legal, "fsearch:worlds=4,exact_cards=4", 3, 2, "standard", seed=1)
    assert report["config"]["agents"][1] == "fsearch:worlds=4,exact_cards=4"
    assert report["games"] == 6
    with pytest.raises(ValueError, match="inference"):
        fsearch_config("fsearch:inference=true")


def test_cli_fast_eval_of_specs_and_zoo_agents(scopa_cli, tmp_path):
    """``scopa eval --fast`` plays a compiled baseline or an fsearch spec against one on the compiled core,
    and refuses what it cannot play in one line naming it."""
    import json

    out = tmp_path / "r.json"
    result = scopa_cli(
        "eval", "greedy", "fsearch:worlds=4", "--fast", "--games", "2", "--no-progress", "--json", str(out)
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert [a["agent"] for a in report["agents"]] == ["greedy", "fsearch:worlds=4"] and report["games"] == 4
    for args, message in (
        (("heuristic", "heuristic"), "both agents are 'heuristic'"),
        (("heuristic", "search"), "not 'search'"),
        (("zoo:standard-2p", "greedy", "--players", "4"), "not 4 players"),
        (("greedy", "fsearch:worldz=4"), "bad options for agent 'fsearch'"),
    ):
        result = scopa_cli("eval", *args, "--fast", "--games", "2")
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_time_limit_searches_chunks_until_the_budget(monkeypatch):
    """With time_limit, worlds come in chunks of time_chunk: a generous limit stops at ``worlds``
    (here 3 chunks), a tiny one after the first chunk; every move is legal."""
    import scopa_env.fast.search as search

    calls = []
    real = search.search_rows

    def counting(*args, **kwargs):
        calls.append(args[6][search.C_WORLDS])
        return real(*args, **kwargs)

    monkeypatch.setattr(search, "search_rows", counting)
    game = Game(2, seed=4, auto_next_hand=False)
    view = game.view()
    assert len(view.legal_pairs()) > 1
    generous = make_agent("fsearch:worlds=24,time_chunk=8,time_limit=60", seed=1)
    assert generous.act(view) in view.legal_moves()
    assert calls == [8, 8, 8]
    calls.clear()
    make_agent("fsearch:worlds=4096,time_chunk=8,time_limit=0.000001", seed=1).act(view)
    assert calls == [8]
    with pytest.raises(ValueError, match="time_limit must be positive"):
        make_agent("fsearch:time_limit=0")


def test_time_limited_search_plays_legal_hands():
    agent = make_agent("fsearch:worlds=64,time_chunk=16,time_limit=0.002", seed=3)
    other = make_agent("greedy", seed=0)
    game = Game(2, seed=9, auto_next_hand=False)
    while not game.hand_over:
        view = game.view()
        move = (agent if game.current == 0 else other).act(view)
        assert move in view.legal_moves()
        game.play(move)
