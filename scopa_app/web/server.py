"""The web game's server: sessions, games, agents and a small JSON API.

::

    GET  /                              the page
    GET  /api/options                   presets, player counts, agents offered
    POST /api/games                     {"rules", "players", "opponent", "teammate"} -> state (201)
    GET  /api/games/{id}                state
    POST /api/games/{id}/move           {"card": 6, "captured": [16], "version": 3} -> state
    POST /api/games/{id}/next-hand      {"version": 7} (optional) deal the next hand -> state

Trust and hidden information:

* A session is an unguessable token in an HttpOnly, SameSite=Strict cookie, made when the
  browser starts its first game (not for every visit). Game ids are bound to the session
  that created them; any other session (or none) gets 404.
* Every state is built from the human seat's :class:`~scopa_env.engine.game.PlayerView`:
  cards appear only under the keys :data:`CARD_KEYS`, and never a card of another hand
  or of the stock (only their counts).
* Card ids are the engine's (:mod:`scopa_env.engine.cards`); each state's ``card_info`` gives the
  rank, suit, notation and name of each card it shows, so the page draws the 52-card French
  deck of ``french_52`` (J Q K = ids 40..51, worth 11 12 13) as well as the 40-card deck.
* The deal's seed is the server's: a seed chosen by the client would let it recompute every
  hand and the stock. ``create_app(allow_client_seeds=True)`` (``scopa web --allow-seeds``)
  accepts ``"seed"`` in ``POST /api/games`` for tests and demos.
* Every state carries the game's ``version`` (the actions applied so far: the human's moves
  and new hands), and a move must name the version of the state it was chosen in. A stale
  or repeated request (a retry, a second tab, a double click) gets 409 and changes nothing,
  so a request is applied at most once. ``next-hand`` checks a version when it is given.
* Every move is checked against ``Game.legal_pairs()``; malformed or illegal requests
  get a 4xx with a readable ``detail`` and leave the game untouched. A request is all or
  nothing: the human's move and the agents' replies are played on a copy of the game that
  replaces it only when all went well, so a failing agent leaves the game as it was (500,
  with a JSON ``detail``).
* Agents play their seats here, after each human action, until it is the human's turn
  again or the hand ends; the state's ``events`` lists each play since the last request.
* The page may only pick agents from :attr:`ServerConfig.agents` (the built-in names and
  the ``--opponent`` the server was started with), so no request makes the server load
  a file it was not told about. Checkpoint agents are loaded once, when the server starts
  (keyed by those specs); each game gets its own shallow copy, sharing the weights. A game
  whose rules or player count a checkpoint was not trained for is refused when it is created.
* Hostile use: request bodies are limited to :data:`MAX_BODY_BYTES`; sessions and games are
  dropped least recently used first beyond :data:`MAX_SESSIONS` and
  :data:`MAX_GAMES_PER_SESSION`, and one client address may start at most
  :data:`NEW_SESSIONS_PER_MINUTE` sessions a minute, so nobody can push everyone else out.
"""

from __future__ import annotations

import copy
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import numpy as np
from fastapi import Body, Cookie, FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from scopa_app.play import DEFAULT_OPPONENT, HUMAN_SEAT, breakdown, explain_move, make_agent, side_label
from scopa_env.engine.cards import (
    FRENCH_RANKS,
    FRENCH_SUIT_NAMES,
    MAX_CARDS,
    NUM_SUITS,
    RANK_OF,
    SUIT_OF,
    card_name,
    cards_of,
    format_card,
    mask_of,
)
from scopa_env.engine.game import Game
from scopa_env.engine.rules import PRESETS, get_rules

STATIC_DIR = Path(__file__).parent / "static"
SESSION_COOKIE = "scopa_session"
MAX_GAMES_PER_SESSION = 16
"""The session's least recently used games are dropped beyond this many."""
MAX_SESSIONS = 1000
"""Least recently used sessions are dropped beyond this many."""
NEW_SESSIONS_PER_MINUTE = 30
"""Sessions one client address may start per minute (429 beyond; ``None`` in tests: no limit)."""
MAX_BODY_BYTES = 16 * 1024
"""Largest request body accepted (413 beyond); a move is well under 200 bytes."""

CARD_KEYS = frozenset({"hand", "table", "card", "captured", "leftover", "shown", "id"})
"""The keys of a state whose values are card ids (for the hidden-information tests); besides
them only ``revealed`` (declared hands, by seat) holds cards. ``id`` is the card of a
``card_info`` entry: the state describes exactly the cards it shows."""

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


# --- requests ----------------------------------------------------------------------------


class NewGameRequest(BaseModel):
    """Body of ``POST /api/games``."""

    model_config = ConfigDict(extra="forbid")

    rules: StrictStr = "standard"
    players: StrictInt = 2
    opponent: StrictStr | None = None
    teammate: StrictStr | None = None
    seed: StrictInt | None = Field(default=None, ge=0, le=2**63 - 1)


class MoveRequest(BaseModel):
    """Body of ``POST /api/games/{id}/move``: the hand card, the table cards it takes (empty: trail)
    and the ``version`` of the state the move was chosen in."""

    model_config = ConfigDict(extra="forbid")

    card: StrictInt = Field(ge=0, lt=MAX_CARDS)
    captured: list[Annotated[StrictInt, Field(ge=0, lt=MAX_CARDS)]] = Field(default_factory=list, max_length=MAX_CARDS)
    version: StrictInt = Field(ge=0)

    def out_of_deck(self, deck_size: int) -> str | None:
        """The 422 message for a card id beyond this game's deck (ids 40..51 are the 52-card
        deck's pictures), worded as the request's validation would word it, or None."""
        if self.card >= deck_size:
            return f"bad request: card: Input should be less than {deck_size}"
        for i, c in enumerate(self.captured):
            if c >= deck_size:
                return f"bad request: captured.{i}: Input should be less than {deck_size}"
        return None


class NextHandRequest(BaseModel):
    """Body of ``POST /api/games/{id}/next-hand`` (optional): the ``version`` of the state that asked."""

    model_config = ConfigDict(extra="forbid")

    version: StrictInt | None = Field(default=None, ge=0)


# --- games and sessions ------------------------------------------------------------------------


@dataclass
class WebGame:
    """A game of one session: the engine's :class:`Game`, the agents of the other seats, the last events."""

    id: str
    game: Game
    agents: dict
    specs: dict[int, str]
    events: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    version: int = 0
    """Actions applied (the human's moves and new hands): sent with every state, named by every move."""

    def check_version(self, version: int | None) -> None:
        """409 unless ``version`` (``None``: not given) is the game's: the request was made in an
        earlier position (a retry of an applied request, another tab), so nothing is played."""
        if version is not None and version != self.version:
            raise HTTPException(
                409,
                f"this request was made at version {version} of the game, which is now at version {self.version} "
                "(a repeated or outdated request); nothing was played: reload the game",
            )


@dataclass
class ServerConfig:
    """What the server offers: the default opponent, the agent specs the page may choose, and
    whether the page may choose the deal's seed."""

    default_opponent: str = DEFAULT_OPPONENT
    agents: tuple[str, ...] = ()
    allow_client_seeds: bool = False
    new_sessions_per_minute: int | None = NEW_SESSIONS_PER_MINUTE


class TooManySessions(Exception):
    """A client address started too many sessions in the last minute."""


class GameStore:
    """Sessions (token -> games by id), bounded in size, safe across threads.

    Both levels are least-recently-used orders: reading or playing a game moves it and its
    session to the back, and the front is dropped when a bound is passed.
    """

    def __init__(self, new_sessions_per_minute: int | None = NEW_SESSIONS_PER_MINUTE) -> None:
        self._sessions: OrderedDict[str, OrderedDict[str, WebGame]] = OrderedDict()
        self._lock = threading.Lock()
        self._per_minute = new_sessions_per_minute
        self._started: dict[str, deque[float]] = {}

    def new_session(self, client: str = "") -> str:
        """A fresh session token.

        Raises:
            TooManySessions: ``client`` started :data:`NEW_SESSIONS_PER_MINUTE` sessions in the last minute.
        """
        token = secrets.token_urlsafe(32)
        with self._lock:
            if self._per_minute is not None:
                now = time.monotonic()
                started = self._started.setdefault(client, deque())
                while started and now - started[0] > 60.0:
                    started.popleft()
                if len(started) >= self._per_minute:
                    raise TooManySessions
                started.append(now)
                for key in [k for k, v in self._started.items() if not v or now - v[-1] > 60.0]:
                    del self._started[key]
            self._sessions[token] = OrderedDict()
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return token

    def has_session(self, token: str | None) -> bool:
        with self._lock:
            return token is not None and token in self._sessions

    def add(self, token: str, web_game: WebGame) -> None:
        with self._lock:
            games = self._sessions.setdefault(token, OrderedDict())
            games[web_game.id] = web_game
            while len(games) > MAX_GAMES_PER_SESSION:
                games.popitem(last=False)
            self._sessions.move_to_end(token)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)

    def get(self, token: str | None, game_id: str) -> WebGame:
        """The session's game, or 404 (unknown id, another session's id, or no session at all)."""
        with self._lock:
            games = self._sessions.get(token) if token else None
            web_game = games.get(game_id) if games is not None else None
            if web_game is None:
                raise HTTPException(404, f"no game {game_id!r} in this browser session; start a new game")
            games.move_to_end(game_id)
            self._sessions.move_to_end(token)
            return web_game


class AgentFactory:
    """The agents the server offers, each checkpoint loaded once.

    Built-in agents (cheap, with per-game state such as a search tree) are built fresh for
    every game. Other specs (checkpoints: ``ppo:PATH`` ...) are built once here, keyed by the
    spec the server was started with, and every game gets a shallow copy: the loaded weights
    are shared, the generator and per-move attributes are the game's own.
    """

    def __init__(self, specs: tuple[str, ...]) -> None:
        from agents.registry import AGENT_CLASSES

        self._prototypes = {}
        for spec in specs:
            if spec.partition(":")[0] not in AGENT_CLASSES:
                self._prototypes[spec] = make_agent(spec)
            else:
                make_agent(spec)  # a bad option fails at start-up, not on the first game

    def __call__(self, spec: str, seed: int):
        prototype = self._prototypes.get(spec)
        if prototype is None:
            return make_agent(spec, seed=seed)
        agent = copy.copy(prototype)
        agent.reset(seed=seed)
        return agent

    def trained_for(self) -> dict[str, dict]:
        """``{spec: {"players": n, "rules": name}}`` of the agents that play one game only (checkpoints)."""
        return {
            spec: {"players": agent.num_players, "rules": agent.rules.name}
            for spec, agent in self._prototypes.items()
            if callable(getattr(agent, "mismatch", None)) and hasattr(agent, "num_players") and hasattr(agent, "rules")
        }

    def mismatch(self, spec: str, num_players: int, rules) -> str | None:
        """Why the agent of ``spec`` cannot play this game (a checkpoint's own player count and rules), or None."""
        check = getattr(self._prototypes.get(spec), "mismatch", None)
        return check(num_players, rules) if check is not None else None


_SOURCE_FILE = re.compile(r"[\w.-]+\.txt")


def player_description(text: str) -> str:
    """A preset's description without the names of the rule-text files it cites (for players)."""
    text = _SOURCE_FILE.sub("", text)
    text = re.sub(r"\(\s*[,;\s]*\)", "", text)  # brackets left empty
    text = re.sub(r"\(\s*[,;]\s*|\s*[,;]\s*\)", lambda m: "(" if "(" in m.group() else ")", text)
    text = re.sub(r"\s+([.,;:)])", r"\1", text)
    return " ".join(text.split())


# --- the state sent to the page ---------------------------------------------------------------------


def _play_event(seat: int, card: int, captured: int, scopa: bool, specs: dict[int, str]) -> dict:
    return {
        "seat": seat,
        "player": "You" if seat == HUMAN_SEAT else f"player_{seat}",
        "agent": specs.get(seat),
        "card": card,
        "captured": cards_of(captured),
        "scopa": scopa,
    }


def _decision_event(seat: int, card: int, keep: bool, specs: dict[int, str]) -> dict:
    """Chkobba's first-card decision: a card another seat keeps stays hidden (``card`` is ``None``)."""
    return {
        "seat": seat,
        "player": "You" if seat == HUMAN_SEAT else f"player_{seat}",
        "agent": specs.get(seat),
        "decision": "keep" if keep else "table",
        "card": card if (seat == HUMAN_SEAT or not keep) else None,
        "captured": [],
        "scopa": False,
    }


def _declaration_event(seat: int, declare: bool, hand: int, specs: dict[int, str]) -> dict:
    """A declaration (bazzica rules): a declared hand is shown to everyone, a pass shows nothing."""
    return {
        "seat": seat,
        "player": "You" if seat == HUMAN_SEAT else f"player_{seat}",
        "agent": specs.get(seat),
        "decision": "declare" if declare else "pass",
        "card": None,
        "shown": cards_of(hand) if declare else [],
        "captured": [],
        "scopa": False,
    }


def card_info(card: int, ranks_per_suit: int) -> dict:
    """What the page needs to draw and name one card: rank (capture value), suit (0..3: coins or
    diamonds, cups or hearts, swords or spades, batons or clubs), short notation and name.

    The 52-card deck (``ranks_per_suit`` 13) is French-suited: ``"8d"``, ``"Eight of
    diamonds"``, ``"Kc"`` (rank 13); the 40-card deck is named in English (the page names it
    in its chosen card style)."""
    return {
        "id": card,
        "rank": RANK_OF[card],
        "suit": SUIT_OF[card],
        "code": format_card(card, ranks_per_suit),
        "name": card_name(card, "english", ranks_per_suit),
    }


def _shown_cards(node, key: str | None = None, found: set[int] | None = None) -> set[int]:
    """Every card id in a state: the ints under :data:`CARD_KEYS` and in ``revealed``."""
    found = set() if found is None else found
    if isinstance(node, dict):
        for k, v in node.items():
            _shown_cards(v, "card" if key == "revealed" else k, found)
    elif isinstance(node, list):
        for x in node:
            _shown_cards(x, key, found)
    elif isinstance(node, int) and not isinstance(node, bool) and key in CARD_KEYS | {"revealed"}:
        found.add(node)
    return found


def _french_labels(rows: list[dict], rules) -> None:
    """The 52-card deck's coin suit is diamonds: name it so in the hand-end rows."""
    if rules.ranks_per_suit != FRENCH_RANKS:
        return
    suit = FRENCH_SUIT_NAMES[rules.bonus_suit]
    for row in rows:
        if row["key"] == "coins":
            row["label"] = suit.capitalize()
        elif row["key"] == "settebello":
            row["label"] = f"Seven of {suit}"


def state_of(web_game: WebGame) -> dict:
    """Everything the human's seat may see, as JSON-ready data (from its PlayerView only)."""
    game = web_game.game
    view = game.view(HUMAN_SEAT)
    phase = "game_over" if game.winner is not None else "hand_over" if game.hand_over else "play"
    your_turn = phase == "play" and view.current == HUMAN_SEAT
    players = [
        {
            "seat": s,
            "label": "You" if s == HUMAN_SEAT else f"player_{s}",
            "agent": web_game.specs.get(s),
            "side": view.side_of[s],
            "you": s == HUMAN_SEAT,
            "partner": s != HUMAN_SEAT and view.side_of[s] == view.side,
            "hand_count": view.hand_counts[s],
        }
        for s in range(view.num_players)
    ]
    sides = [
        {
            "side": side,
            "label": side_label(view, side),
            "you": side == view.side,
            "captured_count": view.piles[side].bit_count(),
            "scope": view.scope[side],
            "score": view.scores[side],
        }
        for side in range(view.num_sides)
    ]
    last_hand = None
    if game.hand_over and game.hand_result is not None:
        result = game.hand_result
        last_hand = {
            "number": game.hand_number,
            "labels": [s["label"] for s in sides],
            "rows": [
                {"key": r.key, "label": r.label, "shown": r.shown, "points": r.points}
                for r in breakdown(result, game.rules)
            ],
            "leftover": list(result.leftover),
            "leftover_side": result.leftover_side,
        }
        _french_labels(last_hand["rows"], game.rules)
    rules = view.rules
    state = {
        "game_id": web_game.id,
        # A move names the version of the state it was chosen in (409 otherwise).
        "version": web_game.version,
        "phase": phase,
        "your_turn": your_turn,
        "rules": {"name": rules.name, "description": player_description(rules.description), "target": rules.target},
        # The deck: 10 ranks per suit (the 40-card Italian deck) or 13 (the 52-card French deck,
        # J Q K worth 11 12 13); card_info describes each card the state shows.
        "ranks_per_suit": rules.ranks_per_suit,
        # How the page explains a wrong pick: standard captures (sums, single-card priority) or a variant's.
        "plain_captures": rules.plain_captures,
        "single_card_priority": rules.single_card_priority,
        "num_players": view.num_players,
        "seat": HUMAN_SEAT,
        "side": view.side,
        "current": view.current,
        "dealer": view.dealer,
        # Game.hand_number counts finished hands; the page shows the hand being played (or just ended).
        "hand_number": view.hand_number if game.hand_over else view.hand_number + 1,
        "players": players,
        "sides": sides,
        "hand": cards_of(view.hand),
        "table": cards_of(view.table),
        "stock_count": view.stock_count,
        "legal": [{"card": c, "captured": cards_of(m)} for c, m in view.legal_pairs()] if your_turn else [],
        # Chkobba's first card: legal are [card, []] (put it on the table) and [card, [card]] (keep it).
        "deciding": view.deciding,
        # Declarations (bazzica rules): legal are [card, []] (pass) and [card, [card]] (declare the hand).
        "declaring": view.declaring and your_turn,
        "revealed": {str(s): cards_of(r) for s, r in enumerate(view.revealed) if r},
        # Chiamarsi fuori (claim_out rules): post {"card": c, "captured": [c]} to claim the game.
        "claim": None
        if not your_turn or (claim := game.claim_pair()) is None
        else {"card": claim[0], "captured": [claim[0]]},
        "events": list(web_game.events),
        "last_hand": last_hand,
        "scores": list(view.scores),
        "target": rules.target,
        "winner": game.winner,
        "winner_label": None if game.winner is None else side_label(view, game.winner),
        "you_won": game.winner is not None and game.winner == view.side,
    }
    state["card_info"] = [card_info(c, rules.ranks_per_suit) for c in sorted(_shown_cards(state))]
    return state


def _play(web_game: WebGame, card: int, captured: int) -> None:
    game = web_game.game
    seat = game.current
    if (card, captured) == game.claim_pair() and (card, captured) not in game.legal_pairs():
        game.play_pair(card, captured)
        event = _declaration_event(seat, False, 0, web_game.specs)
        event["decision"] = game.win_reason  # "claim" or "false_claim"
        web_game.events.append(event)
        return
    if game.declare_queue:
        hand = game.hands[seat]
        game.play_pair(card, captured)
        web_game.events.append(_declaration_event(seat, captured != 0, hand, web_game.specs))  # a pass captures nothing
        return
    if game.deciding:
        game.play_pair(card, captured)
        web_game.events.append(_decision_event(seat, card, captured == 1 << card, web_game.specs))
        return
    side = game.side_of[seat]
    before = game.scope[side]
    game.play_pair(card, captured)
    web_game.events.append(_play_event(seat, card, captured, game.scope[side] > before, web_game.specs))


def run_agents(web_game: WebGame) -> None:
    """Let the agents play until it is the human's turn or the hand is over."""
    game = web_game.game
    while not game.hand_over and game.current != HUMAN_SEAT:
        seat = game.current
        move = web_game.agents[seat].act(game.view(seat))
        if (move.card, move.mask) not in game.legal_pairs():  # an agent bug must not corrupt the game
            raise RuntimeError(f"it chose an illegal move, {move}")
        _play(web_game, move.card, move.mask)


def all_or_nothing(web_game: WebGame, step: Callable[[], None]) -> None:
    """Run ``step`` (a human action and the agents' replies) with a copy of the game kept
    aside: on any error the game and its events are put back as they were, and the error
    becomes a 500 with a JSON ``detail`` naming the failing agent."""
    saved_game = copy.deepcopy(web_game.game, {id(web_game.game.rules): web_game.game.rules})
    saved_events = web_game.events
    web_game.events = []
    try:
        step()
    except Exception as exc:
        failed_seat = web_game.game.current
        web_game.game, web_game.events = saved_game, saved_events
        if isinstance(exc, HTTPException):
            raise
        who = f"player_{failed_seat} ({web_game.specs.get(failed_seat, 'agent')})"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HTTPException(500, f"{who} failed: {first}; the game is as it was before this request") from None


class BodySizeLimit:
    """ASGI middleware: 413 for a request body over ``limit`` bytes, declared or streamed.

    The body is read (up to the limit) before the app sees the request, then handed on.
    """

    def __init__(self, app, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._too_large(scope, receive, send)
            return
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break

        async def replay():
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope, receive, send) -> None:
        response = JSONResponse({"detail": f"request body too large (limit {self.limit} bytes)"}, status_code=413)
        await response(scope, receive, send)


# --- the app ------------------------------------------------------------------------------------------


@dataclass
class _Shared:
    """What the routes of one app share: what the server offers, its agents, its sessions and
    the generator (with its lock) that chooses the deals and the agents' seeds."""

    config: ServerConfig
    agents: AgentFactory
    store: GameStore
    seeder: np.random.Generator
    seeder_lock: threading.Lock = field(default_factory=threading.Lock)

    def draw_seeds(self, players: int) -> tuple[int, list[int]]:
        """A deal's seed and one seed per seat, drawn apart so the agents' play tells nothing of the deal."""
        with self.seeder_lock:
            seed = int(self.seeder.integers(2**62))
            agent_seeds = [int(x) for x in self.seeder.integers(2**62, size=players)]
        return seed, agent_seeds


def create_app(
    default_opponent: str = DEFAULT_OPPONENT,
    extra_agents: tuple[str, ...] = (),
    seed: int | None = None,
    allow_client_seeds: bool = False,
    new_sessions_per_minute: int | None = NEW_SESSIONS_PER_MINUTE,
) -> FastAPI:
    """The FastAPI app.

    Args:
        default_opponent: agent spec offered first on the page (also used when a request names none).
        extra_agents: more specs the page may choose (e.g. ``ppo:runs/x/best``).
        seed: seeds the server's choice of deals (tests); ``None``: fresh entropy.
        allow_client_seeds: accept ``"seed"`` in ``POST /api/games`` (tests and demos only:
            the seed reveals every hidden card to whoever knows it).
        new_sessions_per_minute: sessions one client address may start per minute (``None``: no limit).

    Raises:
        ValueError, FileNotFoundError: an agent spec is unknown or its checkpoint cannot be loaded.
    """
    from agents.registry import AGENT_NAMES

    offered = tuple(dict.fromkeys((default_opponent, *AGENT_NAMES, *extra_agents)))
    agents = AgentFactory(offered)  # checkpoints load here, once; a bad spec fails at start-up
    config = ServerConfig(
        default_opponent=default_opponent,
        agents=offered,
        allow_client_seeds=allow_client_seeds,
        new_sessions_per_minute=new_sessions_per_minute,
    )
    store = GameStore(new_sessions_per_minute)
    app = FastAPI(title="Scopa", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.config = config
    app.state.agents = agents
    app.add_middleware(BodySizeLimit, limit=MAX_BODY_BYTES)
    shared = _Shared(config, agents, store, np.random.default_rng(seed))
    app.middleware("http")(_security_headers)
    app.add_exception_handler(RequestValidationError, _readable_validation_error)
    _add_page_routes(app, shared)
    _add_new_game_route(app, shared)
    _add_play_routes(app, shared)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


async def _security_headers(request: Request, call_next):
    """HTTP middleware: :data:`SECURITY_HEADERS` on every response (unless a route set its own)."""
    response = await call_next(request)
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    return response


async def _readable_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A request's validation errors as one readable 422 ``detail`` (``"bad request: ..."``)."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
        if err.get("type") == "json_invalid":
            parts.append("the request body is not valid JSON")
        elif err.get("type") == "missing" and not loc:
            parts.append("the request needs a JSON body")
        elif not loc and err.get("type") in ("dict_type", "model_attributes_type"):
            parts.append("the request body must be a JSON object")
        else:
            parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return JSONResponse({"detail": "bad request: " + "; ".join(parts)}, status_code=422)


def _options_of(shared: _Shared) -> dict:
    """The body of ``GET /api/options``: the presets, the agents offered and the defaults."""
    return {
        "rules": [
            {
                "name": r.name,
                "description": player_description(r.description),
                "player_counts": list(r.player_counts),
                "target": r.target,
                # 10: the 40-card Italian deck; 13: the 52-card French deck (french_52).
                "ranks_per_suit": r.ranks_per_suit,
                # The player counts that play in two teams (the others: each for themselves).
                "partnerships": list(r.partnerships),
            }
            for r in PRESETS.values()
        ],
        "agents": list(shared.config.agents),
        # Checkpoint agents play only the game they were trained for: {spec: {"players", "rules"}}.
        "agent_games": shared.agents.trained_for(),
        "default_opponent": shared.config.default_opponent,
        "default_rules": "standard",
    }


def _add_page_routes(app: FastAPI, shared: _Shared) -> None:
    """Register ``GET /`` (the page) and ``GET /api/options`` on ``app``."""

    @app.get("/", include_in_schema=False)
    def index():
        # No session yet: one is made when the page starts its first game.
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @app.get("/api/options")
    def options() -> dict:
        return _options_of(shared)


def _new_web_game(shared: _Shared, body: NewGameRequest) -> WebGame:
    """The game ``body`` asks for, with its agents seated (nothing played yet): 400 for unknown
    rules, a player count the rules do not play, an agent the server does not offer or that
    cannot play this game, or a seed the server does not accept."""
    config, agents = shared.config, shared.agents
    try:
        rules = get_rules(body.rules)
        rules.check_players(body.players)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    opponent = body.opponent or config.default_opponent
    teammate = body.teammate or opponent
    for role, spec in (("opponent", opponent), ("teammate", teammate)):
        if spec not in config.agents:
            raise HTTPException(400, f"unknown {role} agent {spec!r}; this server offers: {', '.join(config.agents)}")
    if body.seed is not None and not config.allow_client_seeds:
        raise HTTPException(
            400,
            "this server chooses the deals itself (a seed from the page would reveal every hidden card); "
            "start it with --allow-seeds for tests and demos",
        )
    if body.seed is not None:  # tests and demos: the deal and the agents replay exactly
        seed, agent_seeds = body.seed, [body.seed + seat for seat in range(body.players)]
    else:  # the agents' seeds are drawn apart from the deal's, so their play tells nothing of it
        seed, agent_seeds = shared.draw_seeds(body.players)
    game = Game(body.players, rules, seed=seed, auto_next_hand=False)
    specs = {
        seat: teammate if game.side_of[seat] == game.side_of[HUMAN_SEAT] else opponent
        for seat in range(1, body.players)
    }
    for spec in dict.fromkeys(specs.values()):
        problem = agents.mismatch(spec, body.players, rules)
        if problem:
            raise HTTPException(400, f"agent {spec!r} cannot play this game: {problem}")
    try:
        seat_agents = {seat: agents(spec, agent_seeds[seat]) for seat, spec in specs.items()}
    except (ValueError, FileNotFoundError) as exc:
        raise HTTPException(400, f"cannot build the agents: {exc}") from None
    return WebGame(secrets.token_urlsafe(16), game, seat_agents, specs)


def _session_token(store: GameStore, request: Request, response: Response, scopa_session: str | None) -> str:
    """The request's session token, or a new session's (its cookie set on ``response``; 429 when
    the client address started too many sessions in the last minute)."""
    token = scopa_session if store.has_session(scopa_session) else None
    if token is None:
        try:
            token = store.new_session(request.client.host if request.client else "")
        except TooManySessions:
            raise HTTPException(
                429, "too many new sessions from this address in the last minute; try again later"
            ) from None
        response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict", path="/")
    return token


def _add_new_game_route(app: FastAPI, shared: _Shared) -> None:
    """Register ``POST /api/games`` on ``app``: a new game, its agents' first plays, and a session if needed."""

    @app.post("/api/games", status_code=201)
    def new_game(
        request: Request,
        response: Response,
        body: Annotated[NewGameRequest, Body()] = None,
        scopa_session: Annotated[str | None, Cookie()] = None,
    ) -> dict:
        web_game = _new_web_game(shared, body or NewGameRequest())
        with web_game.lock:
            all_or_nothing(web_game, lambda: run_agents(web_game))
            token = _session_token(shared.store, request, response, scopa_session)
            shared.store.add(token, web_game)
            return state_of(web_game)


def _checked_move(web_game: WebGame, request: MoveRequest) -> int:
    """The captured cards' mask of the human's move ``request``, once it is checked against the
    game: 409 for an outdated version or a game, hand or turn it cannot be played in, 422 for a
    card beyond the deck, 400 for a move the rules do not allow (with the reason)."""
    web_game.check_version(request.version)
    game = web_game.game
    if game.winner is not None:
        raise HTTPException(409, "the game is over; start a new game")
    if game.hand_over:
        raise HTTPException(409, "the hand is over; deal the next hand first")
    if game.current != HUMAN_SEAT:  # agents always finish their turns, so this is a server bug guard
        raise HTTPException(409, f"it is player_{game.current}'s turn, not yours")
    out_of_deck = request.out_of_deck(NUM_SUITS * game.rules.ranks_per_suit)
    if out_of_deck is not None:
        raise HTTPException(422, out_of_deck)
    if len(set(request.captured)) != len(request.captured):
        raise HTTPException(400, "a table card is listed twice in 'captured'")
    captured = mask_of(request.captured)
    why = explain_move(game.view(HUMAN_SEAT), request.card, captured)
    if why is not None:
        raise HTTPException(400, why[0].upper() + why[1:])
    pair = (request.card, captured)
    if pair not in game.legal_pairs() and pair != game.claim_pair():  # explain_move agrees; checked again
        raise HTTPException(400, f"{format_card(request.card, game.rules.ranks_per_suit)} is not a legal move now")
    return captured


def _add_play_routes(app: FastAPI, shared: _Shared) -> None:
    """Register the routes of a game under way on ``app``: ``GET /api/games/{id}``,
    ``POST /api/games/{id}/move`` and ``POST /api/games/{id}/next-hand``."""
    store = shared.store

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str, scopa_session: Annotated[str | None, Cookie()] = None) -> dict:
        web_game = store.get(scopa_session, game_id)
        with web_game.lock:
            return state_of(web_game)

    @app.post("/api/games/{game_id}/move")
    def move(
        game_id: str,
        request: Annotated[MoveRequest, Body()],
        scopa_session: Annotated[str | None, Cookie()] = None,
    ) -> dict:
        web_game = store.get(scopa_session, game_id)
        with web_game.lock:
            captured = _checked_move(web_game, request)

            def step() -> None:
                _play(web_game, request.card, captured)
                run_agents(web_game)

            all_or_nothing(web_game, step)
            web_game.version += 1
            return state_of(web_game)

    @app.post("/api/games/{game_id}/next-hand")
    def next_hand(
        game_id: str,
        body: Annotated[NextHandRequest, Body()] = None,
        scopa_session: Annotated[str | None, Cookie()] = None,
    ) -> dict:
        web_game = store.get(scopa_session, game_id)
        with web_game.lock:
            web_game.check_version(body.version if body is not None else None)
            game = web_game.game
            if game.winner is not None:
                raise HTTPException(409, "the game is over; start a new game")
            if not game.hand_over:
                raise HTTPException(409, "the current hand is still being played")

            def step() -> None:
                web_game.game.next_hand()
                run_agents(web_game)

            all_or_nothing(web_game, step)
            web_game.version += 1
            return state_of(web_game)
