"""The web game's server: API, hidden information, sessions and bad requests, and the server under
hostile use: client seeds, checkpoint opponents, failing agents, session and body limits,
forwarded addresses."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="the web extra is not installed (pip install -e '.[web]')")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from checkpoint_helpers import make_ppo_checkpoint

from scopa_app.cli import build_parser
from scopa_app.web.server import CARD_KEYS, SESSION_COOKIE, create_app, run_agents
from scopa_env.engine.cards import RANK_OF, SUIT_OF, card_name, cards_of, format_card, mask_of, parse_card, parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import PRESETS, STANDARD, get_rules

ROOT = Path(__file__).resolve().parents[1]

INT_LIST_KEYS = CARD_KEYS | {"scores", "points", "player_counts"}
"""Every key whose value may be a list of ints; a card list under any other key fails the test."""


@pytest.fixture(scope="module")
def app():
    # Client seeds make the deals of these tests known; a real server refuses them
    # (test_client_seeds_are_refused_unless_allowed).
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


def post_move(client, gid: str, body: dict, version: int | None = None):
    """POST a move naming the game's version: ``version``, else the one the server sends now."""
    if version is None:
        version = client.get(f"/api/games/{gid}").json()["version"]
    return client.post(f"/api/games/{gid}/move", json={**body, "version": version})


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
    ("french_52", 8),  # the 52-card deck: 8 players each for themselves
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
            r = post_move(client, gid, move)
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
    if body.startswith("{") and body.endswith("}") and body != "{}":  # every other check is made at the right version
        body = body[:-1] + ', "version": 0}'
    r = client.post(f"/api/games/{gid}/move", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, f"{body}: {r.status_code} {r.text}"
    detail = r.json()["detail"]
    assert isinstance(detail, str) and words.lower() in detail.lower(), f"{body}: detail {detail!r}"
    assert snapshot(app, client, gid) == before, f"{body}: the game changed after a refused request"


def test_legal_move_after_refusals(app, client):
    gid = fixed_position(app, client)
    post_move(client, gid, {"card": C("7d")})
    r = post_move(client, gid, {"card": C("7d"), "captured": [C("7s")]})
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
        state = post_move(client, gid, state["legal"][0]).json()
    assert state["phase"] == "hand_over" and state["last_hand"]["number"] == 1
    r = post_move(client, gid, {"card": 0})
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
        r = other.post(f"/api/games/{gid}/move", json={**state["legal"][0], "version": state["version"]})
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
    r = post_move(client, gid, {"card": first, "captured": [first]})
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
    r = post_move(client, gid, {"card": ace, "captured": [ace]})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0]["captured"] == [ace] and wg.game.piles[0] >> ace & 1


# --- the 52-card game for 8 players (french_52) ---------------------------------------------------

F = lambda text: parse_card(text, 13)  # noqa: E731  (the 52-card deck's notation: 8d, 10h, Qs, Kc)


def test_options_offer_the_52_card_game(client):
    rules = {r["name"]: r for r in client.get("/api/options").json()["rules"]}
    assert rules["french_52"]["player_counts"] == [8] and rules["french_52"]["ranks_per_suit"] == 13
    assert rules["french_52"]["partnerships"] == [], "8 players, each for themselves"
    assert rules["standard"]["ranks_per_suit"] == 10 and rules["standard"]["partnerships"] == [4, 6]


def check_card_info(state: dict, deck: int) -> None:
    """card_info describes exactly the cards the state shows, as the engine reads them."""
    info = {c["id"]: c for c in state["card_info"]}
    shown = card_values({k: v for k, v in state.items() if k != "card_info"})
    assert set(info) == shown, "one entry per card shown, no more"
    for card, entry in info.items():
        assert entry == {
            "id": card,
            "rank": RANK_OF[card],
            "suit": SUIT_OF[card],
            "code": format_card(card, deck),
            "name": card_name(card, "english", deck),
        }


def test_french_52_whole_game_through_the_api(app, client):
    """8 players to the end with legal moves: 8 seats and sides, French card names, values up to 13."""
    rng = np.random.default_rng(52)
    state = new_game(client, rules="french_52", players=8, opponent="greedy", seed=52)
    gid = state["game_id"]
    game = web_game(app, client, gid).game
    assert state["num_players"] == 8 and state["ranks_per_suit"] == 13
    assert [p["label"] for p in state["players"]] == ["You"] + [f"player_{s}" for s in range(1, 8)]
    assert not any(p["partner"] for p in state["players"]) and len(state["sides"]) == 8
    assert {p["agent"] for p in state["players"][1:]} == {"greedy"}
    ranks, hands, moves = set(), 0, 0
    while state["phase"] != "game_over":
        assert_hides(state, game)
        check_card_info(state, 13)
        ranks |= {c["rank"] for c in state["card_info"]}
        if state["phase"] == "hand_over":
            hands += 1
            last = state["last_hand"]
            assert len(last["labels"]) == 8 and all(len(row["points"]) == 8 for row in last["rows"])
            labels = [row["label"] for row in last["rows"]]
            assert "Diamonds" in labels and "Seven of diamonds" in labels, labels
            r = client.post(f"/api/games/{gid}/next-hand")
        else:
            assert state["your_turn"] and len(state["hand"]) <= 3
            legal = {(c, tuple(cards_of(m))) for c, m in game.legal_pairs()}
            assert {(m["card"], tuple(m["captured"])) for m in state["legal"]} == legal
            move = state["legal"][int(rng.integers(len(state["legal"])))]
            r = post_move(client, gid, move)
            moves += 1
            seats = [e["seat"] for e in r.json()["events"]]
            assert seats == list(range(len(seats))), f"you, then player_1 .. player_7 in turn: {seats}"
        assert r.status_code == 200, r.text
        state = r.json()
    assert state["winner"] == game.winner and max(state["scores"]) >= 11
    assert hands >= 1 and moves >= 6
    assert {11, 12, 13} <= ranks, "the Jack, Queen and King (11, 12, 13) were seen"


def permuted_hidden(game: Game, rng: np.random.Generator) -> Game:
    """A copy of ``game`` whose hidden cards (the other hands and the stock) are shuffled among them."""
    other = copy.deepcopy(game, {id(game.rules): game.rules})
    sizes = [game.hands[s].bit_count() for s in range(1, game.num_players)]
    hidden = [c for s in range(1, game.num_players) for c in cards_of(game.hands[s])] + list(game.stock)
    hidden = [hidden[i] for i in rng.permutation(len(hidden))]
    for seat, size in enumerate(sizes, start=1):
        other.hands[seat], hidden = mask_of(hidden[:size]), hidden[size:]
    other.stock = hidden
    other._legal = None
    return other


def test_french_52_state_does_not_depend_on_hidden_cards(app, client):
    """Shuffling the other hands and the stock never changes a byte of what the browser receives."""
    rng = np.random.default_rng(18)
    state = new_game(client, rules="french_52", players=8, seed=18)
    gid = state["game_id"]
    wg = web_game(app, client, gid)
    checked = moved = 0
    while state["phase"] != "game_over" and checked < 40:
        real = wg.game
        seen = client.get(f"/api/games/{gid}").json()
        for _ in range(3):
            wg.game = permuted_hidden(real, rng)
            moved += wg.game.hands != real.hands or wg.game.stock != real.stock
            assert client.get(f"/api/games/{gid}").json() == seen, "the state depends on hidden cards"
        wg.game = real
        checked += 1
        if state["phase"] == "hand_over":
            state = client.post(f"/api/games/{gid}/next-hand").json()
        else:
            move = state["legal"][int(rng.integers(len(state["legal"])))]
            state = post_move(client, gid, move).json()
    assert checked == 40 and moved > 60, (checked, moved)


def french_position(app, client) -> str:
    """player_0 holds Kd 8h 2c; the table is 6c 7s Qh As (a King, 13, takes 6 + 7 or Q + A)."""
    rules = get_rules("french_52")
    gid = new_game(client, rules="french_52", players=8, seed=0)["game_id"]
    hands = [[F("Kd"), F("8h"), F("2c")]] + [[] for _ in range(7)]
    table = [F("6c"), F("7s"), F("Qh"), F("As")]
    used = {c for h in hands for c in h} | set(table)
    rest = [c for c in rules.deck if c not in used]
    for seat in range(1, 8):
        hands[seat], rest = rest[:3], rest[3:]
    web_game(app, client, gid).game = Game.from_deal(
        hands, table, rest, dealer=7, rules=rules, seed=0, auto_next_hand=False
    )
    return gid


def test_french_52_captures_with_values_up_to_13(app, client):
    gid = french_position(app, client)
    state = client.get(f"/api/games/{gid}").json()
    king = F("Kd")
    assert {c["id"]: c["code"] for c in state["card_info"]}[king] == "Kd"
    captures = sorted(m["captured"] for m in state["legal"] if m["card"] == king)
    assert captures == sorted([sorted([F("6c"), F("7s")]), sorted([F("Qh"), F("As")])])
    r = post_move(client, gid, {"card": king, "captured": [F("6c"), F("Qh")]})
    assert r.status_code == 400 and "add up to 18" in r.json()["detail"] and "Kd" in r.json()["detail"], r.text
    r = post_move(client, gid, {"card": king, "captured": [F("Qh"), F("As")]})
    assert r.status_code == 200, r.text
    assert r.json()["events"][0]["captured"] == sorted([F("Qh"), F("As")])


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"card": 52}, 422, "less than 52"),
        ({"card": F("Kd"), "captured": [52]}, 422, "less than 52"),
        ({"card": F("Qs")}, 400, "Qs is not in your hand"),
        ({"card": F("10c")}, 400, "10c is not in your hand"),
        ({"card": F("Kd")}, 400, "cannot be trailed"),
        ({"card": F("Kd"), "captured": [F("Qh"), F("Jd")]}, 400, "Jd is not on the table"),
    ],
)
def test_french_52_bad_moves_are_clean_errors(app, client, body, status, words):
    gid = french_position(app, client)
    before = snapshot(app, client, gid)
    r = post_move(client, gid, body)
    detail = r.json()["detail"]
    assert r.status_code == status and isinstance(detail, str) and "\n" not in detail, r.text
    assert words in detail, detail
    assert snapshot(app, client, gid) == before


def test_the_40_card_game_refuses_the_52_card_pictures(app, client):
    gid = fixed_position(app, client)
    for body, words in (
        ({"card": 45}, "card: Input should be less than 40"),
        ({"card": 6, "captured": [51]}, "captured.0"),
    ):
        r = post_move(client, gid, body)
        assert r.status_code == 422 and words in r.json()["detail"], r.text


@pytest.mark.parametrize("agent", ["random", "greedy", "heuristic", "search"])
def test_french_52_agents(client, agent):
    state = new_game(client, rules="french_52", players=8, opponent=agent, seed=3)
    assert {p["agent"] for p in state["players"][1:]} == {agent}
    r = post_move(client, state["game_id"], state["legal"][0])
    assert r.status_code == 200, r.text


def test_french_52_refuses_a_checkpoint_of_another_game():
    """The zoo's agents are trained for other games: a clear 400 when the game is made."""
    app = create_app(default_opponent="zoo:standard-2p", new_sessions_per_minute=None)
    with TestClient(app) as c:
        options = c.get("/api/options").json()
        assert options["agent_games"]["zoo:standard-2p"] == {"players": 2, "rules": "standard"}
        r = c.post("/api/games", json={"rules": "french_52", "players": 8, "opponent": "zoo:standard-2p"})
        detail = r.json()["detail"]
        assert r.status_code == 400 and "cannot play this game" in detail and "'french_52'" in detail, r.text
        assert "\n" not in detail
        r = c.post("/api/games", json={"rules": "french_52", "players": 8, "opponent": "heuristic"})
        assert r.status_code == 201, r.text


# --- versions: a move is applied at most once ---------------------------------------------------------


def test_every_state_names_its_version(app, client):
    state = new_game(client, seed=4)
    gid = state["game_id"]
    assert state["version"] == 0 and client.get(f"/api/games/{gid}").json()["version"] == 0
    state = post_move(client, gid, state["legal"][0], version=0).json()
    assert state["version"] == 1, "a move is one version"
    while state["phase"] == "play":
        state = post_move(client, gid, state["legal"][0], version=state["version"]).json()
    version = state["version"]
    state = client.post(f"/api/games/{gid}/next-hand", json={"version": version}).json()
    assert state["phase"] == "play" and state["version"] == version + 1, "a new hand is one version"


def test_a_repeated_or_stale_move_is_refused_and_changes_nothing(app, client):
    """A retried request (same body, same version) is refused with 409: the move is not played twice."""
    state = new_game(client, rules="scopa_bazzica", seed=3)
    gid = state["game_id"]
    body = {**state["legal"][0], "version": state["version"]}
    assert client.post(f"/api/games/{gid}/move", json=body).status_code == 200
    after = snapshot(app, client, gid)
    for stale in (body, {**body, "version": 0}, {**body, "version": 7}):
        r = client.post(f"/api/games/{gid}/move", json=stale)
        assert r.status_code == 409, f"{stale}: {r.status_code} {r.text}"
        detail = r.json()["detail"]
        assert f"version {stale['version']}" in detail and "nothing was played" in detail, detail
        assert snapshot(app, client, gid) == after, "a refused move changes nothing"
    r = client.post(f"/api/games/{gid}/move", json=state["legal"][0])
    assert r.status_code == 422 and "version: Field required" in r.json()["detail"], r.text
    r = client.post(f"/api/games/{gid}/next-hand", json={"version": 0})
    assert r.status_code == 409 and "version 0" in r.json()["detail"], r.text
    assert snapshot(app, client, gid) == after


@pytest.mark.parametrize("rules, seed", [("standard", 0), ("scopa_bazzica", 3), ("scopa_bazzica", 9)])
def test_sixteen_identical_moves_at_once_apply_once(app, client, rules, seed):
    """16 simultaneous copies of one move: exactly one is played (before versions, scopa_bazzica with
    these seeds played two: a declaration pass is also a legal trail of the same card)."""
    import threading

    state = new_game(client, rules=rules, seed=seed)
    gid = state["game_id"]
    body = {**state["legal"][0], "version": state["version"]}
    start = threading.Barrier(16)
    codes: list[int] = []

    def send() -> None:
        start.wait()
        codes.append(client.post(f"/api/games/{gid}/move", json=body).status_code)

    threads = [threading.Thread(target=send) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200] + [409] * 15, codes
    once = new_game(client, rules=rules, seed=seed)["game_id"]  # the same deal and agents, one request
    assert post_move(client, once, state["legal"][0], version=0).status_code == 200
    game, reference = web_game(app, client, gid).game, web_game(app, client, once).game
    assert (game.history, game.scores, repr(game)) == (reference.history, reference.scores, repr(reference))
    assert client.get(f"/api/games/{gid}").json()["version"] == 1


# --- the server under hostile use -----------------------------------------------------------------


@pytest.fixture
def web():
    """``web(**create_app kwargs) -> (app, TestClient)``."""
    clients = []

    def make(**kwargs):
        app = create_app(**{"default_opponent": "random", **kwargs})
        client = TestClient(app)
        clients.append(client)
        return app, client

    yield make
    for c in clients:
        c.close()


def test_client_seeds_are_refused_unless_allowed(web):
    """Issue 17.2: a seed from the page would let it recompute both hands and the stock."""
    _, client = web()
    r = client.post("/api/games", json={"seed": 12345})
    assert r.status_code == 400 and "--allow-seeds" in r.json()["detail"], r.text
    r = client.post("/api/games", json={})
    assert r.status_code == 201 and "seed" not in r.json()
    _, demo = web(allow_client_seeds=True)
    a = demo.post("/api/games", json={"seed": 12345}).json()
    b = demo.post("/api/games", json={"seed": 12345}).json()
    assert a["hand"] == b["hand"] and a["table"] == b["table"], "an allowed seed replays the deal"


def test_checkpoint_opponent_is_checked_against_the_game(web, tmp_path, monkeypatch):
    """Issue 17.3: a 2-player checkpoint refused for 4 players or other rules when the game is made, loaded once."""
    import train.sb3.policy_agent as policy_agent

    make_ppo_checkpoint(tmp_path / "ckpt")
    loads = []
    original = policy_agent.load_policy
    monkeypatch.setattr(policy_agent, "load_policy", lambda *a, **k: loads.append(a) or original(*a, **k))
    spec = f"ppo:{tmp_path / 'ckpt'}"
    app, client = web(default_opponent=spec)
    assert len(loads) == 1, "the checkpoint is loaded when the server starts"
    options = client.get("/api/options").json()
    assert options["agent_games"] == {spec: {"players": 2, "rules": "standard"}}
    for body, words in (({"players": 4}, "4 players"), ({"rules": "escoba"}, "'escoba'")):
        r = client.post("/api/games", json={"opponent": spec, **body})
        detail = r.json()["detail"]
        assert r.status_code == 400 and "2 players" in detail and "'standard'" in detail and words in detail, r.text
    assert client.cookies.get("scopa_session") is None, "a refused game makes no session"
    for _ in range(3):
        state = client.post("/api/games", json={"opponent": spec}).json()
        r = client.post(f"/api/games/{state['game_id']}/move", json={**state["legal"][0], "version": 0})
        assert r.status_code == 200, r.text
    assert len(loads) == 1, "games share the loaded checkpoint"
    agents = [wg.agents[1] for wg in app.state.store._sessions[client.cookies.get("scopa_session")].values()]
    assert len({id(a) for a in agents}) == 3 and len({id(a.policy) for a in agents}) == 1, "own copy, shared weights"


class Failing:
    """An agent that raises, or answers an illegal move."""

    def __init__(self, illegal: bool = False) -> None:
        self.illegal = illegal

    def act(self, view):
        if self.illegal:
            from scopa_env.engine.rules import move_of

            return move_of(next(c for c in range(40) if not view.hand >> c & 1), 0)  # a card it does not hold
        raise RuntimeError("the network exploded")


@pytest.mark.parametrize("illegal", [False, True], ids=["raises", "illegal-move"])
def test_a_failing_agent_leaves_the_game_as_it_was(web, illegal):
    """Issue 17.3: the human's move is rolled back with the agent's failure; the client gets JSON."""
    app, client = web(allow_client_seeds=True)
    state = client.post("/api/games", json={"seed": 7}).json()
    gid = state["game_id"]
    wg = app.state.store.get(client.cookies.get("scopa_session"), gid)
    good = wg.agents[1]
    wg.agents[1] = Failing(illegal)
    before = (
        repr(wg.game),
        list(wg.game.history),
        wg.game.rng.bit_generator.state,
        client.get(f"/api/games/{gid}").json(),
    )
    r = client.post(f"/api/games/{gid}/move", json={**state["legal"][0], "version": state["version"]})
    assert r.status_code == 500 and r.headers["content-type"].startswith("application/json"), r.text
    assert "player_1" in r.json()["detail"] and "as it was" in r.json()["detail"], r.text
    after = (
        repr(wg.game),
        list(wg.game.history),
        wg.game.rng.bit_generator.state,
        client.get(f"/api/games/{gid}").json(),
    )
    assert after == before, "the human's move was rolled back"
    wg.agents[1] = good
    move = {**state["legal"][0], "version": state["version"]}  # a refused request leaves the version as it was
    assert client.post(f"/api/games/{gid}/move", json=move).status_code == 200, "the game goes on"


def test_visits_make_no_session_and_eviction_is_by_last_use(web, monkeypatch):
    """Issue 17.4: cookie-less GET / floods evict nobody; sessions and games go least recently used first."""
    import scopa_app.web.server as server

    app, alice = web(new_sessions_per_minute=None)
    mine = alice.post("/api/games", json={}).json()["game_id"]
    store = app.state.store
    with TestClient(app) as stranger:
        for _ in range(1100):
            assert stranger.get("/").status_code == 200
        assert not stranger.cookies, "a visit sets no cookie"
    assert len(store._sessions) == 1, "visits alone make no session"
    monkeypatch.setattr(server, "MAX_SESSIONS", 3)
    monkeypatch.setattr(server, "MAX_GAMES_PER_SESSION", 2)
    with TestClient(app) as bob, TestClient(app) as carol, TestClient(app) as dave:
        bob.post("/api/games", json={})
        carol.post("/api/games", json={})
        assert alice.get(f"/api/games/{mine}").status_code == 200  # alice plays on: most recently used
        dave.post("/api/games", json={})  # one session too many: bob, the least recently used, goes
        assert alice.get(f"/api/games/{mine}").status_code == 200, "an active session survives"
        assert store.has_session(carol.cookies.get("scopa_session"))
        assert not store.has_session(bob.cookies.get("scopa_session")), "the least recently used session goes"
    second = alice.post("/api/games", json={}).json()["game_id"]
    assert alice.get(f"/api/games/{mine}").status_code == 200  # the first game is used again
    alice.post("/api/games", json={})  # a third game: the least recently used one (second) goes
    assert alice.get(f"/api/games/{mine}").status_code == 200, "the game in use survives"
    assert alice.get(f"/api/games/{second}").status_code == 404


def test_one_address_cannot_start_sessions_without_end(web):
    app, client = web(new_sessions_per_minute=2)
    for _ in range(2):
        client.cookies.clear()
        assert client.post("/api/games", json={}).status_code == 201
    client.cookies.clear()
    r = client.post("/api/games", json={})
    assert r.status_code == 429 and "too many new sessions" in r.json()["detail"], r.text
    client.post("/api/games", json={})
    assert len(app.state.store._sessions) == 2


def test_request_bodies_are_limited(web):
    from scopa_app.web.server import MAX_BODY_BYTES

    _, client = web()
    state = client.post("/api/games", json={}).json()
    big = json.dumps({"card": 0, "captured": [], "version": 0, "pad": "x" * (MAX_BODY_BYTES + 1)})
    r = client.post(f"/api/games/{state['game_id']}/move", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "too large" in r.json()["detail"], r.text

    def chunks():  # no Content-Length: the body is counted as it streams in
        for _ in range(40):
            yield b" " * 1024

    r = client.post(
        f"/api/games/{state['game_id']}/move", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413, r.text
    assert client.get(f"/api/games/{state['game_id']}").json()["hand"] == state["hand"]


def test_rule_descriptions_shown_to_players_name_no_source_files(web, monkeypatch):
    from scopa_app.web.server import player_description

    assert player_description("Standard Scopa (pagat-scopa.txt, wikipedia-scopa.txt).") == "Standard Scopa."
    assert player_description("Scopone (pagat, scopone-rules.txt): 9 cards.") == "Scopone (pagat): 9 cards."
    assert player_description("Escoba (pagat).") == "Escoba (pagat)."
    cited = STANDARD.replace(description="Standard Scopa (pagat-scopa.txt, wikipedia-scopa.txt).")
    monkeypatch.setitem(PRESETS, "standard", cited)
    _, client = web()
    options = client.get("/api/options").json()
    for r in options["rules"]:
        assert ".txt" not in r["description"] and "()" not in r["description"], r
    assert next(r for r in options["rules"] if r["name"] == "standard")["description"] == "Standard Scopa."
    assert client.post("/api/games", json={}).json()["rules"]["description"] == "Standard Scopa."


# --- forwarded addresses --------------------------------------------------------------------------


def serve_web(*options: str):
    """``scopa web --port 0 --opponent random OPTIONS`` in a child process; returns (process, base URL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "scopa_app.cli", "web", "--port", "0", "--opponent", "random", *options],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if "open http://" not in line:
        proc.kill()
        pytest.fail(f"scopa web did not start: {line!r} {proc.stderr.read()}")
    return proc, line.split("open ")[1].split()[0].rstrip("/")


def new_sessions(base: str, forwarded_for: list[str]) -> list[int]:
    """The status of ``POST /api/games`` without a cookie (each a new session), one per X-Forwarded-For."""
    httpx = pytest.importorskip("httpx")
    codes = []
    for address in forwarded_for:
        r = httpx.post(f"{base}/api/games", json={}, headers={"X-Forwarded-For": address}, timeout=30)
        codes.append(r.status_code)
    return codes


def test_a_forged_forwarded_for_does_not_lift_the_session_limit():
    """Before: uvicorn trusted X-Forwarded-For from any local client, so a new header per request
    was a new address: 1,010 requests evicted everyone's games. Now every request here is 127.0.0.1."""
    from scopa_app.web.server import NEW_SESSIONS_PER_MINUTE

    proc, base = serve_web()
    try:
        forged = [f"10.0.{i // 250}.{i % 250 + 1}" for i in range(NEW_SESSIONS_PER_MINUTE + 1)]
        codes = new_sessions(base, forged)
    finally:
        proc.kill()
        proc.wait()
    assert codes == [201] * NEW_SESSIONS_PER_MINUTE + [429], codes


def test_a_named_proxy_forwards_the_client_address():
    """With --trusted-proxy, the proxy's X-Forwarded-For names the client: each client has its own limit."""
    from scopa_app.web.server import NEW_SESSIONS_PER_MINUTE

    n = NEW_SESSIONS_PER_MINUTE
    proc, base = serve_web("--trusted-proxy", "127.0.0.1")
    try:
        many = new_sessions(base, [f"10.1.0.{i + 1}" for i in range(n + 1)])
        one = new_sessions(base, ["10.2.0.1"] * (n + 1))
    finally:
        proc.kill()
        proc.wait()
    assert many == [201] * (n + 1), "different clients behind the proxy each start sessions"
    assert one == [201] * n + [429], "one client behind the proxy is limited"
