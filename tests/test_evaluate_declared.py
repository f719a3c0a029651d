"""agents/evaluate.py: the per-hand point statistics count every scoring item of a hand.

Declarations (Scopa Bazzica's bazzica and bazzicotto, Cirulla's hand bonuses) are added
to the game score when they are made, outside ``hand_score``'s ``total``; the evaluation's
per-hand points and margins must include them, so that a game's hand points add up to its
final score.
"""

from __future__ import annotations

import pytest

from agents.matches import Match, RunResult, _seat_agents, hand_rows, play_game
from agents.stats import summarize
from scopa_env.engine.cards import parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import Move, get_rules

DEALS = range(6)


@pytest.mark.parametrize("rules", ["scopa_bazzica", "sbarazzina"])
def test_hand_points_add_up_to_the_game_score(rules):
    """Every hand's points per side, summed over the game, are the side's final game score."""
    match = Match(agents=("greedy", "random"), rules=get_rules(rules), seed=3)
    declared = 0
    for deal in DEALS:
        rec = play_game(match, deal, 0, _seat_agents(match)[0])
        assert rec["forfeit"] is None, rec["forfeit"]
        for side in range(match.num_sides):
            points = sum(h[side]["total"] for h in rec["hands"])
            assert points == rec["scores"][side], f"deal {deal}, side {side}: hands {points} != game {rec['scores']}"
        declared += sum(h[s].get("bazzica", 0) + h[s].get("bazzicotto", 0) for h in rec["hands"] for s in (0, 1))
    assert declared > 0, "some declaration scored in these deals (greedy always declares)"


def test_summary_points_per_hand_include_declarations():
    match = Match(agents=("greedy", "random"), rules=get_rules("scopa_bazzica"), seed=3)
    records = [[play_game(match, deal, r, _seat_agents(match)[r]) for r in range(2)] for deal in DEALS]
    report = summarize(match, RunResult(deals=records, requested=len(DEALS), interrupted=False, wall_seconds=0.0))
    for a, row in enumerate(report["agents"]):
        game_points = sum(rec["scores"][side] for recs in records for rec in recs for side in (0, 1)
                          if rec["lineup"][side] == a)  # fmt: skip
        assert row["points_per_hand"] * row["hands"] == pytest.approx(game_points), row["agent"]
    greedy = report["agents"][0]["extras_per_hand"]
    assert greedy.get("bazzica", 0) + greedy.get("bazzicotto", 0) > 0, "declared points are reported by name"


def test_hand_rows_add_the_declared_points():
    """pagat, Scopa Bazzica: "Bazzica ... Scores 3 points" (declared, then counted in the hand's points)."""
    rules = get_rules("scopa_bazzica")
    h0, h1 = parse_cards("Ad Ac 2s"), parse_cards("Kd 5c Ks")
    rest = [c for c in rules.deck if c not in h0 + h1]
    game = Game.from_deal([h0, h1], rest[-4:], rest[:-4], dealer=1, rules=rules, declare_queue=[0],
                          auto_next_hand=False)  # fmt: skip
    game.play(Move(parse_cards("2s")[0], itself=True))
    while not game.hand_over:
        game.play_pair(*game.legal_pairs()[0])
    rows = hand_rows(game.hand_result)
    score = game.hand_result.hand_score
    assert rows[0]["bazzica"] == 3 and rows[0]["total"] == score[0]["total"] + 3, rows[0]
    assert rows[1]["total"] == score[1]["total"] and [r["total"] for r in rows] == game.scores
