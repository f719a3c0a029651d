"""The web game's server: API, hidden information, sessions and bad requests."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="the web extra is not installed (pip install -e '.[web]')")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from scopa_env.cards import cards_of, parse_card, parse_cards
from scopa_env.cli import build_parser
from scopa_env.game import Game
from scopa_env.rules import STANDARD, get_rules
from scopa_env.web.server import CARD_KEYS, SESSION_COOKIE, create_app, run_agents

INT_LIST_KEYS = CARD_KEYS | {"scores", "points", "player_counts"}
"""Every key whose value may be a list of ints; a card list under any other key fails the test."""


@pytest.fixture(scope="module")
def app():
    # Client seeds make the deals of these tests known; a real server refuses them (see test_hardening.py).
    return create_app(default_opponent="random", allow_client_seeds=True, new_sessions_per_minute=None)


@pytest.fixture
def client(app):
    with TestClient(app) as c:
        c.get("/")
        yield c


def web_game(app, client, game_id):
    return app.state.store.get(client.cookies.get(SESSION_COOKIE), game_id)


def new_game(client, **body) -> dict:
    r = client.post("/api/games", json={"opponent": "random", **body})
    assert r.status_code == 201, r.text
    return r.json()


def card_values(node, key=None, found=None):
    """Card ids in a response: the ints under CARD_KEYS. Also checks no int list hides under another key."""
    found = set() if found is None else found
    if isinstance(node, dict):
        for k, v in node.items():
            card_values(v, k, found)
    elif isinstance(node, list):
        if node and all(isinstance(x, int) for x in node):
            assert key in INT_LIST_KEYS, f"a list of ints under an unexpected key {key!r}: {node}"
        for x in node:
            card_values(x, key, found)
    elif isinstance(node, int) and not isinstance(node, bool) and key in CARD_KEYS:
        found.add(node)
    return found


def assert_hides(state: dict, game: Game) -> None:
    """No card of another hand or of the stock appears in the state sent to seat 0."""
    hidden = set(game.stock)
    for seat in range(1, game.num_players):
        hidden |= set(cards_of(game.hands[seat]))
    leaked = card_values(state) & hidden
    assert not leaked, f"hidden cards sent to the browser: {sorted(leaked)}"
    assert state["hand"] == cards_of(game.hands[0]), "the page gets exactly the human's hand"
    assert state["stock_count"] == len(game.stock)
    assert "stock" not in json.dumps(state).replace("stock_count", ""), "no stock list is sent"


def snapshot(app, client, game_id) -> tuple:
    wg = web_game(app, client, game_id)
    g = wg.game
    state = client.get(f"/api/games/{game_id}").json()
    return (repr(g), list(g.history), list(g.piles), list(g.scope), list(g.scores), g.rng.bit_generator.state, state)


def test_page_sets_no_cookie_and_the_first_game_starts_an_httponly_session(app):
    with TestClient(app) as c:
        r = c.get("/")
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]
        assert "set-cookie" not in r.headers, "a visit alone makes no session"
        assert "default-src 'self'" in r.headers["content-security-policy"]
        r = c.post("/api/games", json={"opponent": "random"})
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(SESSION_COOKIE + "=") and "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        assert len(c.cookies.get(SESSION_COOKIE)) >= 40, "the token is long enough to be unguessable"
        r2 = c.post("/api/games", json={"opponent": "random"})
        assert r2.status_code == 201 and "set-cookie" not in r2.headers, "a known session keeps its cookie"


def test_static_assets_are_served(client):
    for path in ("/static/app.js", "/static/cards.js", "/static/style.css"):
        r = client.get(path)
        assert r.status_code == 200, f"{path}: {r.status_code}"


def test_options(client):
    opts = client.get("/api/options").json()
    assert "standard" in [r["name"] for r in opts["rules"]]
    assert {"random", "greedy", "heuristic", "search"} <= set(opts["agents"])
    assert opts["default_opponent"] == "random"


def test_new_game_state(app, client):
    state = new_game(client, seed=3)
    game = web_game(app, client, state["game_id"]).game
    assert state["phase"] == "play" and state["your_turn"] and state["current"] == 0
    assert state["num_players"] == 2 and len(state["hand"]) == 3 and len(state["table"]) == 4
    assert state["stock_count"] == 30
    legal = {(m["card"], tuple(m["captured"])) for m in state["legal"]}
    assert legal == {(c, tuple(cards_of(m))) for c, m in game.legal_pairs()}, "legal moves come from the engine"
    assert_hides(state, game)


def test_new_game_without_cookie_starts_a_session(app):
    with TestClient(app) as c:
        r = c.post("/api/games", json={"opponent": "random", "seed": 1})
        assert r.status_code == 201 and "HttpOnly" in r.headers["set-cookie"]
        assert c.get(f"/api/games/{r.json()['game_id']}").status_code == 200


GAMES = [
    ("standard", 2),
    ("standard", 3),
    ("standard", 4),
    ("standard", 6),
    ("chkobba", 2),  # first-card decision: a kept card must stay hidden
    ("chkobba", 4),
    ("scopa_d_assi_options", 2),  # an Ace takes itself
    ("asso_pigliatutto", 3),
    ("scopone", 4),
    ("scopone_scientifico", 4),
    ("scopa_di_quindici_2_fewest", 2),
    ("hurrikan", 2),
    ("booklet_capture_more", 3),
    ("scopa_corse", 2),
]


@pytest.mark.parametrize("rules, players", GAMES)
def test_full_game_never_leaks_hidden_cards(app, client, rules, players):
    """Play whole games through the API; every response hides other hands and the stock."""
    rng = np.random.default_rng(players)
    state = new_game(client, rules=rules, players=players, seed=11 + players)
    gid = state["game_id"]
    game = web_game(app, client, gid).game
    assert_hides(state, game)
    hands_seen = 0
    for _ in range(3000):
        if state["phase"] == "game_over":
            break
        if state["phase"] == "hand_over":
            hands_seen += 1
            rows = {row["key"]: row for row in state["last_hand"]["rows"]}
            assert {"cards", "coins", "settebello", "scope", "total"} <= set(rows), sorted(rows)
            assert ("primiera" in rows) == (game.rules.prime_rule != "sevens")
            assert all(len(row["points"]) == game.num_sides for row in rows.values())
            r = client.post(f"/api/games/{gid}/next-hand")
        else:
            assert state["your_turn"], "agents finish their turns before the server answers"
            move = state["legal"][int(rng.integers(len(state["legal"])))]
            r = client.post(f"/api/games/{gid}/move", json=move)
            events = r.json()["events"]
            assert events[0]["seat"] == 0 and events[0]["card"] == move["card"], "the human's play is listed first"
            seats = [e["seat"] for e in events if "decision" not in e]
            first = seats[0] if seats else 0
            assert seats == [(first + i) % players for i in range(len(seats))], f"plays follow turn order: {seats}"
        assert r.status_code == 200, r.text
        state = r.json()
        assert_hides(state, game)
    assert state["phase"] == "game_over", "the game ends"
    assert state["winner"] == game.winner and state["winner_label"]
    assert hands_seen >= 1


def fixed_position(app, client) -> str:
    """A game whose position is known: player_0 holds 7d 2d Kd, the table is 7c 7s 3s 4b."""
    gid = new_game(client, seed=0)["game_id"]
    hand0, hand1, table = parse_cards("7d 2d Kd"), parse_cards("Ac Ab 6b"), parse_cards("7c 7s 3s 4b")
    used = set(hand0 + hand1 + table)
    stock = [c for c in STANDARD.deck if c not in used]
    web_game(app, client, gid).game = Game.from_deal(
        [hand0, hand1], table, stock, dealer=1, seed=0, auto_next_hand=False
    )
    return gid


C = parse_card

BAD_MOVES = [
    # (body as JSON text, status, words in the detail)
    ("{bad json", 422, "not valid JSON"),
    ("[1, 2]", 422, "must be a JSON object"),
    ('{"card": "7d"}', 422, "card: Input should be a valid integer"),
    ('{"card": true}', 422, "card: Input should be a valid integer"),
    ('{"card": 40}', 422, "less than 40"),
    ('{"card": -1}', 422, "greater than or equal to 0"),
    ('{"card": 6, "captured": [16], "extra": 1}', 422, "extra"),
    ('{"captured": [16]}', 422, "card: Field required"),
    ('{"card": 6, "captured": "16"}', 422, "captured"),
    (json.dumps({"card": C("7d"), "captured": [C("7c"), C("7c")]}), 400, "listed twice"),
    (json.dumps({"card": C("5c")}), 400, "5c is not in your hand"),
    (json.dumps({"card": C("Ac")}), 400, "Ac is not in your hand"),  # the opponent's card
    (json.dumps({"card": C("7d")}), 400, "cannot be trailed"),
    (json.dumps({"card": C("7d"), "captured": [C("3s"), C("4b")]}), 400, "must take that card, not several"),
    (json.dumps({"card": C("Kd"), "captured": [C("7c"), C("4b")]}), 400, "add up to 11"),
    (json.dumps({"card": C("2d"), "captured": [C("3s")]}), 400, "cannot take anything"),
    (json.dumps({"card": C("Kd"), "captured": [C("7c"), C("3d")]}), 400, "not on the table"),
]


@pytest.mark.parametrize("body, status, words", BAD_MOVES)
def test_bad_move_is_refused_and_changes_nothing(app, client, body, status, words):
    gid = fixed_position(app, client)
    before = snapshot(app, client, gid)
    r = client.post(f"/api/games/{gid}/move", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, f"{body}: {r.status_code} {r.text}"
    detail = r.json()["detail"]
    assert isinstance(detail, str) and words.lower() in detail.lower(), f"{body}: detail {detail!r}"
    assert snapshot(app, client, gid) == before, f"{body}: the game changed after a refused request"


def test_legal_move_after_refusals(app, client):
    gid = fixed_position(app, client)
    client.post(f"/api/games/{gid}/move", json={"card": C("7d")})
    r = client.post(f"/api/games/{gid}/move", json={"card": C("7d"), "captured": [C("7s")]})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0] == {
        "seat": 0,
        "player": "You",
        "agent": None,
        "card": C("7d"),
        "captured": [C("7s")],
        "scopa": False,
    }


def test_next_hand_only_at_a_hand_end(app, client):
    gid = new_game(client, seed=2)["game_id"]
    before = snapshot(app, client, gid)
    r = client.post(f"/api/games/{gid}/next-hand")
    assert r.status_code == 409 and "still being played" in r.json()["detail"]
    assert snapshot(app, client, gid) == before


def test_moves_refused_at_a_hand_end(app, client):
    state = new_game(client, seed=5)
    gid = state["game_id"]
    while state["phase"] == "play":
        state = client.post(f"/api/games/{gid}/move", json=state["legal"][0]).json()
    assert state["phase"] == "hand_over" and state["last_hand"]["number"] == 1
    r = client.post(f"/api/games/{gid}/move", json={"card": 0})
    assert r.status_code == 409 and "deal the next hand" in r.json()["detail"]
    state = client.post(f"/api/games/{gid}/next-hand").json()
    assert state["phase"] == "play" and state["hand_number"] == 2 and state["last_hand"] is None


def test_sessions_are_isolated(app, client):
    state = new_game(client, seed=9)
    gid = state["game_id"]
    with TestClient(app) as other:
        other.get("/")
        before = snapshot(app, client, gid)
        assert other.get(f"/api/games/{gid}").status_code == 404, "another session cannot read the game"
        r = other.post(f"/api/games/{gid}/move", json=state["legal"][0])
        assert r.status_code == 404 and "no game" in r.json()["detail"], "another session cannot play in it"
        assert other.post(f"/api/games/{gid}/next-hand").status_code == 404
        assert snapshot(app, client, gid) == before, "the game is untouched"
        mine = new_game(other, seed=9)
        assert mine["game_id"] != gid and client.get(f"/api/games/{mine['game_id']}").status_code == 404
    with TestClient(app) as nobody:
        assert nobody.get(f"/api/games/{gid}").status_code == 404, "no cookie, no game"
        nobody.cookies.set(SESSION_COOKIE, "forged-token")
        assert nobody.get(f"/api/games/{gid}").status_code == 404, "a forged cookie gets nothing"
    assert client.get("/api/games/not-a-game").status_code == 404


@pytest.mark.parametrize(
    "body, words",
    [
        ({"rules": "nonsense"}, "unknown rules preset"),
        ({"players": 5}, "num_players"),
        ({"players": "2"}, "valid integer"),
        ({"opponent": "ppo:/etc/passwd"}, "this server offers"),
        ({"opponent": "random", "teammate": "nobody", "players": 4}, "unknown teammate"),
        ({"colour": "red"}, "Extra inputs are not permitted"),
    ],
)
def test_bad_new_game(client, body, words):
    r = client.post("/api/games", json=body)
    assert 400 <= r.status_code < 500 and words in r.json()["detail"], r.text


def test_teams_and_partners(client):
    state = new_game(client, players=4, opponent="random", teammate="greedy", seed=4)
    players = {p["seat"]: p for p in state["players"]}
    assert players[2]["partner"] and players[2]["agent"] == "greedy"
    assert players[1]["agent"] == "random" and not players[1]["partner"]
    assert [s["label"] for s in state["sides"]] == ["Your team (0+2)", "Team 1+3"]


def test_cli_registers_web():
    args = build_parser().parse_args(["web", "--port", "8123", "--opponent", "greedy"])
    assert args.port == 8123 and args.opponent == "greedy" and args.func is not None


def test_first_card_decision_keep_and_hidden(app, client):
    """Chkobba: the player after the dealer keeps the drawn card or tables it; an agent's kept card stays hidden."""
    gid = new_game(client, rules="chkobba", seed=1)["game_id"]
    deck = list(get_rules("chkobba").deck)
    first, stock = deck[0], deck[1:]
    wg = web_game(app, client, gid)
    wg.game = Game.from_deal(
        [[first], []], [], stock, dealer=1, rules="chkobba", seed=0, auto_next_hand=False, deciding=True
    )
    state = client.get(f"/api/games/{gid}").json()
    assert state["deciding"] and state["legal"] == [
        {"card": first, "captured": []},
        {"card": first, "captured": [first]},
    ]
    r = client.post(f"/api/games/{gid}/move", json={"card": first, "captured": [first]})
    assert r.status_code == 200, r.text
    state = r.json()
    assert state["events"][0]["decision"] == "keep" and first in state["hand"]
    assert not state["deciding"] and len(state["hand"]) == 3
    assert_hides(state, wg.game)
    # An agent that keeps its first card: the event names no card.
    wg.game = Game.from_deal(
        [[], [first]], [], stock, dealer=0, rules="chkobba", seed=0, auto_next_hand=False, deciding=True
    )
    wg.agents[1] = type("Keeper", (), {"act": lambda self, view: view.legal_moves()[1]})()
    wg.events = []
    run_agents(wg)
    keep = wg.events[0]
    assert keep["decision"] == "keep" and keep["card"] is None, keep
    assert_hides(client.get(f"/api/games/{gid}").json(), wg.game)


def test_ace_takes_itself(app, client):
    """Scopa d'Assi option: an Ace played to the empty table goes to the player's pile."""
    rules = get_rules("scopa_d_assi_options")
    gid = new_game(client, rules="scopa_d_assi_options", seed=1)["game_id"]
    hand0, hand1 = parse_cards("Ad 2d 3d"), parse_cards("Ac 2c 3c")
    pile = parse_cards("Kd Kc Ks Kb")  # the table was swept earlier
    stock = [c for c in rules.deck if c not in hand0 + hand1 + pile]
    wg = web_game(app, client, gid)
    wg.game = Game.from_deal(
        [hand0, hand1], [], stock, dealer=1, rules=rules, seed=0, piles=[pile, []], auto_next_hand=False
    )
    ace = C("Ad")
    state = client.get(f"/api/games/{gid}").json()
    assert {"card": ace, "captured": [ace]} in state["legal"], state["legal"]
    r = client.post(f"/api/games/{gid}/move", json={"card": ace, "captured": [ace]})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0]["captured"] == [ace] and wg.game.piles[0] >> ace & 1
