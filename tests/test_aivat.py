"""The AIVAT-style chance correction (agents/aivat.py): unbiased, and blind to the stock's order."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from benchscripts import load_benchmark

from agents import aivat
from agents.aivat import (
    STATE_FEATURES,
    ChanceEvent,
    DealValue,
    aivat_summary,
    first_deal_event,
    fit_value,
    play_traced,
    run_traced,
    sampled_correction,
    table_shares,
)
from agents.base import Agent
from agents.greedy import GreedyAgent
from agents.matches import Match, _seat_agents, play_game
from scopa_env.engine.cards import MAX_CARDS, RANK_MASK, RANK_OF
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.rules import get_rules


@pytest.fixture(scope="module")
def train_games() -> list[dict]:
    """Games apart from every measured one (another master seed), to fit a value estimate on."""
    deals = run_traced(Match(("heuristic", "greedy"), 2, None, seed=101), 30)
    return [g for d in deals for g in d]


@pytest.fixture(scope="module")
def value(train_games) -> DealValue:
    return fit_value(train_games, None, ridge=10.0)


def random_value(seed: int = 0, rounds: int = 6) -> DealValue:
    """A value estimate with arbitrary weights, every feature in use (the estimator's mean is zero for any V)."""
    rng = np.random.default_rng(seed)
    scratch = DealValue(None, {})
    return DealValue(None, {r: rng.normal(size=scratch.block_shape(r)) for r in range(rounds)})


def events_of(match: Match, deal: int = 0) -> list[ChanceEvent]:
    return play_traced(match, deal, 0, _seat_agents(match)[0])["events"]


def test_traced_games_are_the_harness_games():
    match = Match(("heuristic", "greedy"), 2, None, seed=7)
    seats = _seat_agents(match)
    for deal in range(3):
        for rotation in range(2):
            plain = play_game(match, deal, rotation, seats[rotation])
            traced = play_traced(match, deal, rotation, seats[rotation])
            for key in ("lineup", "winner", "hands", "scores", "moves"):
                assert traced[key] == plain[key], (deal, rotation, key)
            rounds = [e.round for e in traced["events"]]
            assert rounds.count(0) == len(traced["hands"])  # one first deal per hand
            assert max(rounds) == 5  # 2 players: five deals from the stock after the first


def test_events_partition_the_pool():
    for e in events_of(Match(("greedy", "random"), 2, None, seed=3)):
        dealt = 0
        for m in (*e.dealt, e.table):
            assert not dealt & m
            dealt |= m
        assert dealt & ~e.pool == 0  # only cards that could have come were dealt
        assert all(m.bit_count() == 3 for m in e.dealt)
        if e.round:
            assert e.table == 0 and e.pool & e.table_before == 0


def correction_mean(value: DealValue, event: ChanceEvent, draws: int, seed: int = 0) -> tuple[float, float]:
    """Mean and standard error of the correction over outcomes drawn from the chance distribution."""
    rng = np.random.default_rng(seed)
    xs = np.array([value.correction(event.redealt(rng)) for _ in range(draws)])
    return float(xs.mean()), float(xs.std(ddof=1) / math.sqrt(draws))


def test_each_correction_has_mean_zero():
    value = random_value()
    events = events_of(Match(("heuristic", "greedy"), 2, None, seed=5))
    first = next(e for e in events if e.round == 0)
    later = [e for e in events if e.round][:3]  # a deal from the stock, a table in front of it
    assert any(e.table_before for e in later)
    for e in [first, *later]:
        mean, se = correction_mean(value, e, 3000)
        assert se * math.sqrt(3000) > 1.0  # the corrections do move with the outcome
        assert abs(mean) < 4 * se, (e.round, mean, se)


def test_a_wrong_expectation_is_caught(monkeypatch):
    """The mean-zero check fails where E[V] is computed wrongly (here: the table's share left out)."""
    value = random_value()
    first = next(e for e in events_of(Match(("heuristic", "greedy"), 2, None, seed=5)) if e.round == 0)
    right = value.expected_features(first)

    def wrong(event):
        x = right.reshape(value.block_shape(0)).copy()
        x[aivat.TABLE] = 0.0
        return x.ravel()

    monkeypatch.setattr(value, "expected_features", wrong)
    mean, se = correction_mean(value, first, 3000)
    assert abs(mean) > 4 * se


def test_table_shares_follow_the_redeals():
    """A first table the rules throw in is dealt again: its cards' chances of the table are counted exactly."""
    standard = get_rules()
    shares = table_shares(standard)
    assert shares.sum() == pytest.approx(standard.table_size)
    kings = [c for c in standard.deck if RANK_OF[c] == standard.king]
    others = [c for c in standard.deck if RANK_OF[c] != standard.king]
    assert shares[kings].max() < 0.1 < shares[others].min()  # three or four Kings are dealt again
    no_aces = dataclasses.replace(standard, aces_redeal=True)
    shares = table_shares(no_aces)
    assert shares[[c for c in standard.deck if RANK_OF[c] == 1]].max() == 0.0
    assert shares.sum() == pytest.approx(standard.table_size)
    first = Game(2, no_aces, seed=3)
    event = first_deal_event(first, 0)
    rng = np.random.default_rng(0)
    assert all(not event.redealt(rng, no_aces).table & RANK_MASK[1] for _ in range(200))


def test_exact_expectation_matches_sampling():
    value = random_value(seed=1)
    for e in events_of(Match(("heuristic", "greedy"), 2, None, seed=9))[:4]:
        sampled = sampled_correction(value.value, e, np.random.default_rng(0), samples=4000)
        spread = np.std([value.value(e.redealt(np.random.default_rng(k))) for k in range(200)])
        assert abs(sampled - value.correction(e)) < 4 * spread / math.sqrt(4000)


def test_self_match_stays_at_zero(value):
    match = Match(("heuristic", "heuristic"), 2, None, seed=0)
    rows = aivat_summary(match, run_traced(match, 40), value)
    for row in rows:
        for key in ("plain", "corrected", "correction"):
            assert row[key]["lo"] <= 0.0 <= row[key]["hi"], (row["agent"], key, row[key])
    assert rows[0]["corrected"]["mean"] == pytest.approx(-rows[1]["corrected"]["mean"])


def test_corrected_agrees_with_plain(value):
    match = Match(("heuristic", "random"), 2, None, seed=0)
    row = aivat_summary(match, run_traced(match, 40), value)[0]
    plain, corrected = row["plain"], row["corrected"]
    assert plain["mean"] > 0.5  # a real gap, measured by both
    assert plain["lo"] <= corrected["mean"] <= plain["hi"]
    assert corrected["lo"] <= plain["mean"] <= corrected["hi"]
    assert row["correction"]["lo"] <= 0.0 <= row["correction"]["hi"]
    assert row["width_ratio"] > 0


def test_fitted_value_explains_some_of_a_hand(train_games, value):
    """On the games it was fit on, the corrections lower a hand's spread (the weights are not noise)."""
    plain, corrected = [], []
    for g in train_games:
        correction: dict[int, float] = {}
        leader_side: dict[int, int] = {}
        for e in g["events"]:
            correction[e.hand] = correction.get(e.hand, 0.0) + value.correction(e)
            leader_side[e.hand] = e.leader_side
        for h, hand in enumerate(g["hands"]):
            margin = aivat.leader_margin(hand, leader_side[h])
            plain.append(margin)
            corrected.append(margin - correction[h])
    assert np.std(corrected) < 0.97 * np.std(plain)


def test_events_never_hold_the_stock_order():
    """Two games that differ only in the stock's order give the same first deal and the same correction."""
    value = random_value()
    base = Game(2, None, seed=0)
    stock = list(base.stock)
    games = [
        Game.from_deal([_cards(h) for h in base.hands], _cards(base.table), order, dealer=base.dealer)
        for order in (stock, stock[::-1])
    ]
    a, b = (first_deal_event(g, 0) for g in games)
    assert a == b
    assert value.correction(a) == value.correction(b)
    assert set(vars(a)) == {"hand", "round", "pool", "dealt", "table", "table_before", "leader", "side_of"}


def _cards(mask: int) -> list[int]:
    return [c for c in range(MAX_CARDS) if mask >> c & 1]


class ViewOnly(Agent):
    """Fails unless it is handed its seat's view, never the game."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = GreedyAgent()

    def reset(self, seed=None) -> None:
        self.inner.reset(seed)

    def act(self, view):
        assert isinstance(view, PlayerView) and not isinstance(view, Game)
        return self.inner.act(view)


def test_agents_play_from_their_view_only():
    match = Match(("greedy", "greedy"), 2, None, seed=0)
    rec = play_traced(match, 0, 0, [ViewOnly(), ViewOnly()])
    assert rec["hands"] and rec["events"]


def test_refusals():
    with pytest.raises(ValueError, match="two sides"):
        run_traced(Match(("greedy", "random"), 3, None), 1)

    class Peeks(ViewOnly):
        needs_full_state = True

    with pytest.raises(ValueError, match="stock's order"):
        play_traced(Match(("greedy", "random"), 2, None), 0, 0, [Peeks(), ViewOnly()])


def test_value_round_trip(tmp_path):
    value = random_value(rounds=3)
    value.save(tmp_path / "v.json")
    back = DealValue.load(tmp_path / "v.json")
    e = events_of(Match(("greedy", "random"), 2, None, seed=1))[1]
    assert back.correction(e) == pytest.approx(value.correction(e))
    assert back.weights[1].shape == (2, MAX_CARDS + len(STATE_FEATURES))


def test_the_benchmark_writes_its_record(tmp_path, capsys):
    script = load_benchmark("variance_reduction")
    out = tmp_path / "vr.json"
    args = ["--pair", "greedy,random", "--pairs", "6", "--train-pairs", "6", "--record", str(out)]
    assert script.main(args) == 0
    assert "greedy vs random: plain" in capsys.readouterr().out
    render = load_benchmark("render_results")
    (tmp_path / "results").mkdir()
    out.rename(tmp_path / "results" / "variance_reduction.json")
    files = dict(render.load_files(tmp_path / "results"))
    row = files["variance_reduction"]["records"][0]["rows"][0]
    assert row["deals"] == 6 and row["plain"]["lo"] <= row["plain"]["mean"] <= row["plain"]["hi"]
    summary = next(r for r in render.summary_rows(files) if r[2] == "variance_reduction")
    assert f"{row['ratio']:.2f} to {row['ratio']:.2f} times as narrow on 1 pairs" in summary[1]
    with pytest.raises(SystemExit):
        script.main(["--seed", "1", "--train-seed", "1"])  # the estimate is never fit on the measured games
