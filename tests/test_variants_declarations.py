"""Declared hands (Scopa Bazzica and Sbarazzina): which three-card hands qualify and what they
score, the better declaration, declaring as a move before the first card, the shown cards in
every view, observation and determinized world, and declarations in the terminal, the web page
and the text view. (Cirulla's hand bonuses are in tests/test_variants_cirulla.py.)

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from variant_helpers import bazzica_deal, cards

from scopa_env import scopa_v0
from scopa_env.engine.cards import mask_of
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import Move, get_rules
from scopa_env.engine.scoring import best_declaration, declaration

DECLARATION_CASES = [
    # (rules, hand, expected (name, points) or None, source quote)
    ("scopa_bazzica", "Ad Ac 2s", ("bazzica", 3), 'pagat: "Bazzica: any three cards which add up to 9 or less ... Scores 3 points"'),
    ("scopa_bazzica", "Ad 2c 6s", ("bazzica", 3), 'pagat: "A+2+6" is a bazzica (total 9)'),
    ("scopa_bazzica", "Ad 2c 7s", None, 'pagat: "add up to 9 or less" (10 is too much)'),
    ("scopa_bazzica", "Ad 2c Js", None, 'pagat: "pictures as 10"'),
    ("scopa_bazzica", "Kd Kc Ks", ("bazzicotto", 10), 'pagat: "Bazzicotto: three cards of the same rank. Scores 10 points"'),
    ("scopa_bazzica", "Ad Ac As", ("bazzicotto", 10), 'pagat: "A+A+A is best" (a bazzicotto, not a bazzica)'),
    ("sbarazzina", "Ad 2c 3s", ("bazzica", 2), 'pagat: "A bazzica scores 2 points if the three cards are all of different ranks"'),
    ("sbarazzina", "Ad Ac 3s", ("bazzica", 3), 'pagat: "or 3 points if they include a pair"'),
    ("sbarazzina", "5d 5c 5s", ("bazzicotto", 7), 'pagat: "Three of a kind of any rank scores 7 points"'),
    ("standard", "Ad Ac As", None, "pagat: only Scopa Bazzica and Sbarazzina declare"),
]  # fmt: skip


@pytest.mark.parametrize("rules, hand, expected, quote", DECLARATION_CASES)
def test_declarations(rules, hand, expected, quote):
    found = declaration(mask_of(cards(hand)), get_rules(rules))
    assert (None if found is None else (found.name, found.points)) == expected, f"{rules}: {hand} ({quote})"


@pytest.mark.parametrize(
    "hand0, hand1, winner, quote",
    [
        ("Kd Kc Ks", "Ad Ac 2s", 0, 'pagat: "Any bazzicotto beats any bazzica"'),
        ("Ad 2c 6s", "2d Ac As", 1, 'pagat: "the one with the lower total card value is better. The best is 2+A+A"'),
        ("Ad 2c 6s", "2d 3c 4s", None, 'pagat: "equal in value (for example A+2+6 against 2+3+4) then neither player scores"'),
        ("Kd Kc Ks", "Ad Ac As", 1, 'pagat: "the one with the lower cards is better (A+A+A is best, K+K+K is worst)"'),
        ("Kd Kc Ks", None, 0, "pagat: a lone declaration scores"),
    ],
)  # fmt: skip
def test_only_the_better_declaration_scores(hand0, hand1, winner, quote):
    hands = [(0, mask_of(cards(hand0)))] + ([(1, mask_of(cards(hand1)))] if hand1 else [])
    assert best_declaration(hands, get_rules("scopa_bazzica")) == winner, quote


def test_declaring_is_a_move_before_the_first_card():
    """pagat: "must be declared immediately after a three-card deal, before the next card is played, and the
    cards must be shown"."""
    game = bazzica_deal("Ad Ac 2s", "Kd Kc Ks", scores=[4, 5])
    hi0 = cards("2s")[0]
    assert game.deciding and game.current == 0 and game.legal_moves() == [Move(hi0), Move(hi0, itself=True)]
    game.play(Move(hi0, itself=True))  # player_0 declares a bazzica
    assert game.revealed[0] == mask_of(cards("Ad Ac 2s")) and game.current == 1 and game.deciding
    assert game.view(1).revealed[0] == game.revealed[0], "the shown hand is in every view"
    assert not game.view(1).unseen & game.revealed[0], "shown cards are no longer unseen"
    hi1 = cards("Ks")[0]
    game.play(Move(hi1, itself=True))  # player_1 declares a bazzicotto, which beats it
    assert not game.deciding and game.current == 0 and game.scores == [4, 15], "the bazzicotto scores 10 at once"
    assert [d["points"] for d in game.declarations] == [0, 10]
    game.play(game.legal_moves()[0])
    assert game.revealed[0].bit_count() == 2, "a played card is no longer in the revealed hand"


def test_passing_and_non_qualifying_hands():
    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks", scores=[0, 0])
    assert game.declare_queue == [0], "only a qualifying hand decides"
    game.play(Move(cards("2s")[0]))  # pass
    assert not game.deciding and game.scores == [0, 0] and game.revealed == [0, 0] and game.declarations == []


def test_declared_points_in_hand_result():
    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks", scores=[0, 0])
    game.play(Move(cards("2s")[0], itself=True))
    rnd = random.Random(0)
    while not game.hand_over:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    declared = game.hand_result.declared
    assert declared[0]["bazzica"] == 3, declared
    assert game.scores == [r["total"] + sum(d.values()) for r, d in zip(game.hand_result.hand_score, declared)]


def test_determinize_keeps_revealed_cards():
    game = bazzica_deal("Ad Ac 2s", "Kd Kc Ks")
    game.play(Move(cards("2s")[0], itself=True))
    view = game.view(1)
    for seed in range(5):
        world = view.determinize(np.random.default_rng(seed))
        assert world.hands[0] == game.hands[0], "the shown hand stays with its owner"
        assert (
            world.legal_pairs() == game.legal_pairs() and world.declare_queue == [1] and world.pending == game.pending
        )


@pytest.mark.parametrize("mode", ["move", "select"])
def test_declaration_actions_and_observation(mode):
    env = scopa_v0.raw_env(rules="scopa_bazzica", action_mode=mode)
    h0, h1 = cards("Ad Ac 2s"), cards("Kd Kc Ks")
    rules = env.rules
    rest = [c for c in rules.deck if c not in h0 + h1]
    env.reset(options={"deal": {"hands": [h0, h1], "table": rest[-4:], "stock": rest[:-4], "dealer": 1,
                                "declare_queue": [0, 1]}})  # fmt: skip
    assert env.layout.size == 376 + 41 and env.layout["revealed"].stop - env.layout["revealed"].start == 40
    obs = env.observe("player_0")
    assert obs["observation"][env.layout["declaring"]][0] == 1.0
    ids = list(np.flatnonzero(obs["action_mask"]))
    hi = cards("2s")[0]
    if mode == "move":
        assert ids == sorted([env.encode_action(Move(hi)), env.encode_action(Move(hi, itself=True))])
        env.step(env.encode_action(Move(hi, itself=True)))
    else:
        assert ids == [hi]
        env.step(hi)
        assert list(np.flatnonzero(env.observe("player_0")["action_mask"])) == [hi, 40], "again (declare) or CONFIRM"
        env.step(hi)
    seen_by_1 = env.observe("player_1")["observation"]
    assert set(np.flatnonzero(seen_by_1[env.layout["revealed"]])) == set(h0), "player_1 sees player_0's hand"
    assert not set(np.flatnonzero(seen_by_1[env.layout["unseen"]])) & set(h0)
    assert not np.flatnonzero(env.observe("player_0")["observation"][env.layout["revealed"]]).size, "nothing shown yet"


def test_standard_layouts_unchanged():
    assert scopa_v0.raw_env().layout.size == 376 and scopa_v0.raw_env(rules="napola").layout.size == 376
    assert scopa_v0.raw_env(num_players=4, rules="sbarazzina").layout.size == ObservationLayout(4).size + 3 * 40 + 1


# --- the terminal and web UIs show declarations ---------------------------------------------------


def test_declaration_in_the_terminal():
    from agents.random_agent import RandomAgent
    from scopa_app.play import TerminalGame

    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks")
    answers = iter(["1", "2", "q"])
    out: list[str] = []
    TerminalGame(
        game, {1: RandomAgent(seed=0)}, {1: "random"}, input_fn=lambda _: next(answers), output_fn=out.append
    ).run()
    text = "\n".join(out)
    assert "Your hand can be declared" in text and "1) pass (do not declare)  2) declare your hand" in text, text
    assert "You declares" in text or "declares" in text, text
    assert game.declarations and game.declarations[0]["points"] == 3 and game.scores[0] == 3


def test_declaration_in_the_web_ui():
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    pytest.importorskip("httpx", reason="the web extra is not installed")
    from fastapi.testclient import TestClient

    from scopa_app.web.server import SESSION_COOKIE, create_app, run_agents

    app = create_app(default_opponent="random", allow_client_seeds=True)
    with TestClient(app) as client:
        client.get("/")
        gid = client.post("/api/games", json={"opponent": "random", "rules": "scopa_bazzica", "seed": 1}).json()[
            "game_id"
        ]
        wg = app.state.store.get(client.cookies.get(SESSION_COOKIE), gid)
        wg.game = bazzica_deal("Ad Ac 2s", "Kd Kc Ks")
        state = client.get(f"/api/games/{gid}").json()
        hi = cards("2s")[0]
        assert state["declaring"] and state["legal"] == [{"card": hi, "captured": []}, {"card": hi, "captured": [hi]}]
        r = client.post(f"/api/games/{gid}/move", json={"card": hi, "captured": [hi], "version": state["version"]})
        assert r.status_code == 200, r.text
        run_agents(wg)
        state = client.get(f"/api/games/{gid}").json()
        decisions = [e for e in wg.events if e.get("decision") in ("declare", "pass")]
        assert decisions[0]["decision"] == "declare" and decisions[0]["shown"] == sorted(cards("Ad Ac 2s")), decisions
        assert not state["declaring"]
        if wg.game.revealed[1]:
            assert state["revealed"]["1"] == sorted(cards("Kd Kc Ks")), "an agent's declared hand is shown"


def test_render_shows_extras_and_declarations():
    from scopa_env.engine.render import render_hand_result

    game = bazzica_deal("Ad Ac 2s", "Kd 5c Ks", rules="sbarazzina")
    game.play(Move(cards("2s")[0], itself=True))
    rnd = random.Random(0)
    while not game.hand_over:
        pairs = game.legal_pairs()
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
    text = render_hand_result(game.hand_result)
    assert "re_bello" in text and "bazzica" in text and "(declared)" in text, text
