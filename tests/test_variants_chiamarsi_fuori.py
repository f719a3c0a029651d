"""Chiamarsi fuori: claiming to have reached the target, the points a claim counts as certain, a
true and a false claim, the claim as an action of the engine and of the env (only on a card
turn), the baseline agents that never claim, and the claim in the terminal and on the web page.

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from variant_helpers import FUORI, bazzica_deal, cards

from scopa_env import scopa_v0
from scopa_env.engine.cards import format_cards, mask_of
from scopa_env.engine.game import Game
from scopa_env.engine.rules import Move, get_rules
from scopa_env.engine.scoring import secured_points


def secured(pile0: str, pile1: str, rules: str = FUORI, scope_points=(0, 0)) -> list[dict]:
    rules = get_rules(rules)
    p0, p1 = mask_of(cards(pile0)), mask_of([c for c in cards(pile1) if c not in cards(pile0)])
    return secured_points([p0, p1], list(scope_points), rules, rules.deck_mask & ~(p0 | p1))


def first(n: int, exclude: str = "") -> str:
    """``n`` cards of cups, swords and batons (no coins), as text, for padding piles."""

    skip = set(cards(exclude))
    return format_cards([c for c in range(10, 40) if c not in skip][:n])


@pytest.mark.parametrize(
    "pile0, pile1, key, points, quote",
    [
        (first(21), "", "cards", 1, 'pagat: "In a two player game a player needs 21 cards to claim the point for cards"'),
        (first(20), "", "cards", 0, 'pagat: "needs 21 cards"'),
        ("Ad 2d 3d 4d 5d 6d", "", "coins", 1, 'pagat: "and 6 coins/diamonds to claim the point for that suit"'),
        ("Ad 2d 3d 4d 5d", "", "coins", 0, 'pagat: "6 coins/diamonds"'),
        ("7d", "", "settebello", 1, "pagat: the settebello, once taken, is certain"),
        ("7d 7c 7s 7b", "", "primiera", 1, 'pagat: "they will win the prime even if the opponent takes all the cards that are not yet captured"'),
        ("7d 7c 6s 6b", "", "primiera", 0, "pagat: the opponent could still take 7s 7b (84 > 78)"),
        ("7d 7c 6s 6b", "7s 7b", "primiera", 0, "pagat: the opponent already holds a better prime in reach"),
    ],
)  # fmt: skip
def test_claim_certain_points(pile0, pile1, key, points, quote):
    assert secured(pile0, pile1)[0][key] == points, f"{pile0} vs {pile1}: {key} ({quote})"


def test_claim_scope_and_extras_are_certain():
    rows = secured("Kd", "", "sbarazzina,claim_out=true,player_counts=2/4/6", scope_points=(2, 0))
    assert rows[0]["scope"] == 2 and rows[0]["re_bello"] == 1 and rows[0]["total"] == 3


def claim_game(scores, pile0: str):
    rules = get_rules(FUORI)
    mine, theirs = cards("Kc 4s"), cards("Ks 5b")
    p0 = [c for c in cards(pile0) if c not in mine + theirs]
    rest = [c for c in rules.deck if c not in mine + theirs + p0]
    return Game.from_deal([mine, theirs], rest[:2], [], dealer=1, rules=rules, piles=[p0, rest[2:]], scores=scores,
                          auto_next_hand=False)  # fmt: skip


@pytest.mark.parametrize(
    "scores, pile0, winner, reason, quote",
    [
        ([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d", 0, "claim", 'pagat: "claiming to have enough points to reach the game target of 11"'),
        ([8, 3], "7d Ad", 1, "false_claim", 'pagat: "If the claimer turns out not to have enough points to win, they automatically lose the game"'),
    ],
)  # fmt: skip
def test_claim_ends_the_game(scores, pile0, winner, reason, quote):
    game = claim_game(scores, pile0)
    claim = game.claim_pair()
    hi = max(cards("Kc 4s"))
    assert claim == (hi, 1 << hi) and claim not in game.legal_pairs() and claim in game.action_pairs()
    assert game.view().claim_is_sound() is (reason == "claim")
    game.play(Move(hi, itself=True))
    assert game.done and game.winner == winner and game.win_reason == reason, quote
    assert game.hand_result.events == ((reason, 0),) and game.hand_over


@pytest.mark.parametrize("mode", ["move", "select"])
def test_claim_action_in_the_env(mode):
    env = scopa_v0.raw_env(rules=FUORI, action_mode=mode)
    game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
    env.reset()
    env.game = game
    env._legal_ids = None
    hi = max(cards("Kc 4s"))
    ids = list(np.flatnonzero(env.observe("player_0")["action_mask"]))
    if mode == "move":
        claim_id = env.encode_action(Move(hi, itself=True))
        assert claim_id in ids and len(ids) == len(game.legal_pairs()) + 1
        env.step(claim_id)
    else:
        env.step(hi)
        assert hi in list(np.flatnonzero(env.observe("player_0")["action_mask"])), "name it again to claim"
        env.step(hi)
    assert all(env.terminations.values()) and env.rewards["player_0"] == 1.0 and env.rewards["player_1"] == -1.0
    assert env.infos["player_0"]["win_reason"] == "claim"


def test_claims_only_on_card_turns():
    game = Game(2, FUORI, seed=0)
    assert game.claim_pair() is not None and game.view(1).claim_pair() is None, "only the player to move claims"
    assert Game(2, "standard", seed=0).claim_pair() is None


# --- agents and UIs -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["greedy", "heuristic", "search"])
def test_baseline_agents_declare_and_never_claim(name):
    """docs/rules.md: the baseline agents declare a hand that scores and never call chiamarsi fuori."""
    from agents.registry import make_agent

    for seed in range(3):
        game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks")
        assert make_agent(name, seed=seed).act(game.view()).is_self, f"{name} declares its bazzica"
    game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
    move = make_agent(name, seed=0).act(game.view())
    assert (move.card, move.mask) in game.legal_pairs(), f"{name} plays a card, it does not claim"


def test_claim_in_the_terminal():
    from agents.random_agent import RandomAgent
    from scopa_app.play import TerminalGame

    game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
    answers = iter(["claim"])
    out: list[str] = []
    code = TerminalGame(
        game, {1: RandomAgent(seed=0)}, {1: "random"}, input_fn=lambda _: next(answers), output_fn=out.append
    ).run()
    text = "\n".join(out)
    assert code == 0 and "chiamarsi fuori: claim" in text and game.winner == 0, text


def test_claim_in_the_web_ui():
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    pytest.importorskip("httpx", reason="the web extra is not installed")
    from fastapi.testclient import TestClient

    from scopa_app.web.server import SESSION_COOKIE, create_app

    app = create_app(default_opponent="random", allow_client_seeds=True)
    with TestClient(app) as client:
        client.get("/")
        gid = client.post("/api/games", json={"opponent": "random", "rules": FUORI, "seed": 1}).json()["game_id"]
        wg = app.state.store.get(client.cookies.get(SESSION_COOKIE), gid)
        wg.game = claim_game([9, 3], "7d 7c 7s 7b Ad 2d 3d 4d 5d 6d")
        state = client.get(f"/api/games/{gid}").json()
        claim = state["claim"]
        hi = max(cards("Kc 4s"))
        assert claim == {"card": hi, "captured": [hi]}
        r = client.post(f"/api/games/{gid}/move", json={**claim, "version": state["version"]})
        assert r.status_code == 200, r.text
        state = r.json()
        assert state["winner"] == 0 and state["events"][0]["decision"] == "claim" and state["claim"] is None
