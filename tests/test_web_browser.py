"""End to end in a real headless Chromium: start the server, play a whole hand by clicking.

Needs Debian's ``chromium`` (``apt-get install -y chromium``; ``.ci/run`` installs it) and
Playwright for Python, driving the system browser (``playwright install`` is never run).
Screenshots go to ``artifacts/screenshots/`` (gitignored) or ``$SCOPA_SCREENSHOTS``.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("SCOPA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]
SCREENSHOTS = Path(
    os.environ.get("SCOPA_SCREENSHOTS", Path(__file__).resolve().parents[1] / "artifacts" / "screenshots")
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"),
]

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra is not installed (pip install -e '.[web]')")

from scopa_app.web.server import SESSION_COOKIE, create_app  # noqa: E402
from scopa_env.engine.cards import cards_of  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    app = create_app(default_opponent="random", seed=2024)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield app, f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.errors = errors
    yield page
    context.close()


def shot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), animations="disabled")
    return path


def server_state(page) -> dict:
    """The state as the page's own session sees it (the browser's cookie, same origin)."""
    return page.evaluate("async () => (await fetch('/api/games/' + sessionStorage.getItem('scopa.gameId'))).json()")


def server_game(app, page):
    token = next(c["value"] for c in page.context.cookies() if c["name"] == SESSION_COOKIE)
    return app.state.store.get(token, page.evaluate("sessionStorage.getItem('scopa.gameId')")).game


def dom_cards(page) -> set[int]:
    return {int(x) for x in page.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)")}


def assert_dom_hides(app, page) -> None:
    game = server_game(app, page)
    hidden = set(game.stock)
    for seat in range(1, game.num_players):
        hidden |= set(cards_of(game.hands[seat]))
    leaked = dom_cards(page) & hidden
    assert not leaked, f"the page shows hidden cards: {sorted(leaked)}"


def play_one_move(page, state: dict, explained: dict) -> None:
    """Click one legal move; on the way, try one illegal click of each kind and check it is explained."""
    legal = state["legal"]
    by_card: dict[int, list[list[int]]] = {}
    for m in legal:
        by_card.setdefault(m["card"], []).append(m["captured"])
    # An illegal trail: a card that can capture, clicked onto the empty slot.
    if "trail" not in explained:
        for card, options in by_card.items():
            if [] not in options:
                page.click(f'#hand [data-card="{card}"]')
                page.click("#empty-slot")
                message = page.locator("#message")
                playwright_api.expect(message).to_have_class(re.compile(r"\berror\b"))
                explained["trail"] = message.inner_text()
                shot(page, "02-illegal-trail-explained")
                page.click(f'#hand [data-card="{card}"]')  # deselect
                break
    # An illegal capture: a card that cannot capture, clicked onto a table card.
    if "capture" not in explained and state["table"]:
        for card, options in by_card.items():
            if options == [[]]:
                page.click(f'#hand [data-card="{card}"]')
                page.click(f'#table [data-card="{state["table"][0]}"]')
                message = page.locator("#message")
                playwright_api.expect(message).to_have_class(re.compile(r"\berror\b"))
                explained["capture"] = message.inner_text()
                page.click(f'#hand [data-card="{card}"]')
                break
    move = max(legal, key=lambda m: len(m["captured"]))  # prefer captures: more clicking
    page.click(f'#hand [data-card="{move["card"]}"]')
    playwright_api.expect(page.locator(f'#hand [data-card="{move["card"]}"]')).to_have_class(
        re.compile(r"\bselected\b")
    )
    with page.expect_response(lambda r: r.url.endswith("/move")) as response:
        if move["captured"]:
            for c in move["captured"]:
                page.click(f'#table [data-card="{c}"]')
        else:
            page.click("#empty-slot")
    assert response.value.status == 200, response.value.text()


def test_play_a_whole_hand_by_clicking(server, page):
    app, url = server
    page.goto(url + "/")
    page.wait_for_selector("#hand .card")
    assert page.locator("#opponents .seat").count() == 1
    assert "Your turn" in page.inner_text("#message")
    shot(page, "01-start-italian")
    assert_dom_hides(app, page)

    explained: dict[str, str] = {}
    moves = 0
    while True:
        state = server_state(page)
        if state["phase"] != "play":
            break
        assert state["your_turn"]
        play_one_move(page, state, explained)
        moves += 1
        if moves == 3:
            page.wait_for_selector("#events li")
            shot(page, "03-after-three-moves")
        page.wait_for_function("() => !document.body.classList.contains('busy')")
        assert_dom_hides(app, page)
        assert moves < 40, "a hand has at most 18 moves for seat 0 with 2 players"

    assert moves == 18, f"seat 0 plays 18 cards in a 2-player hand, clicked {moves}"
    assert "cannot be trailed" in explained.get("trail", ""), explained
    assert "cannot take anything" in explained.get("capture", ""), explained

    table = page.locator("#score-table")
    playwright_api.expect(table).to_be_visible()
    text = table.inner_text()
    for label in ("Cards", "Coins", "Settebello", "Primiera", "Scope", "Hand points", "Game"):
        assert label in text, f"the score table has a {label} row:\n{text}"
    assert page.locator("#score-table tr[data-key='primiera'] td").count() == 2, "a primiera value per side"
    shot(page, "04-hand-score-table")

    game = server_game(app, page)
    assert game.hand_over and game.hand_number == 1
    page.click("#next-hand")
    playwright_api.expect(page.locator("#score-table")).to_be_hidden()
    page.wait_for_selector("#hand .card")
    assert "hand 2" in page.inner_text("#game-info")
    assert not page.errors, f"browser errors: {page.errors}"


def test_switch_card_style_and_new_four_player_game(server, page):
    app, url = server
    page.goto(url + "/")
    page.wait_for_selector("#hand .card")
    first = page.locator("#hand .card").first
    italian = first.get_attribute("title")
    assert " di " in italian, f"Italian names by default: {italian}"
    page.click("#switch-style")
    french = page.locator("#hand .card").first.get_attribute("title")
    assert " of " in french and any(s in french for s in ("diamonds", "hearts", "spades", "clubs")), french
    shot(page, "05-french-deck")

    page.click("#new-game")
    page.select_option("#f-players", "4")
    playwright_api.expect(page.locator("#f-teammate-row")).to_be_visible()
    page.select_option("#f-opponent", "greedy")
    page.select_option("#f-teammate", "random")
    shot(page, "06-new-game-dialog")
    page.click("#f-start")
    playwright_api.expect(page.locator("#opponents .seat")).to_have_count(3)
    playwright_api.expect(page.locator("#opponents .seat.partner")).to_have_count(1)
    state = server_state(page)
    assert state["num_players"] == 4 and state["players"][2]["agent"] == "random"
    assert_dom_hides(app, page)
    shot(page, "07-four-players-french")
    assert not page.errors, f"browser errors: {page.errors}"


def test_another_session_cannot_see_the_game(server, browser, page):
    app, url = server
    page.goto(url + "/")
    page.wait_for_selector("#hand .card")
    game_id = page.evaluate("sessionStorage.getItem('scopa.gameId')")
    other = browser.new_context()
    try:
        response = other.request.get(f"{url}/api/games/{game_id}")
        assert response.status == 404, "another browser session gets 404 for this game"
    finally:
        other.close()


def test_chkobba_first_card_decision_by_clicking(server, page):
    """Chkobba: seat 0 (after the dealer) draws the first card and keeps it with a button."""
    app, url = server
    page.goto(url + "/")
    page.wait_for_selector("#hand .card")
    page.click("#new-game")
    page.select_option("#f-rules", "chkobba")
    page.select_option("#f-players", "2")
    page.click("#f-start")
    keep = page.locator("#keep-card")
    playwright_api.expect(keep).to_be_visible()
    playwright_api.expect(page.locator("#hand .card")).to_have_count(1)
    assert "first card" in page.inner_text("#message")
    shot(page, "08-chkobba-first-card")
    with page.expect_response(lambda r: r.url.endswith("/move")):
        keep.click()
    playwright_api.expect(page.locator("#hand .card")).to_have_count(3)
    assert "chkobba" in page.inner_text("#game-info")
    assert_dom_hides(app, page)
    assert not page.errors, f"browser errors: {page.errors}"


def test_french_52_eight_seats_by_clicking(server, page):
    """The 52-card game: 8 seats, French cards (J Q K worth 11 12 13), a hand played by clicking, 8 sides scored."""
    app, url = server
    page.goto(url + "/")
    page.wait_for_selector("#hand .card")
    page.click("#new-game")
    page.select_option("#f-rules", "french_52")
    assert page.eval_on_selector_all("#f-players option", "os => os.map(o => o.value)") == ["8"]
    playwright_api.expect(page.locator("#f-teammate-row")).to_be_hidden()
    page.select_option("#f-opponent", "greedy")
    page.click("#f-start")
    playwright_api.expect(page.locator("#opponents .seat")).to_have_count(7)
    playwright_api.expect(page.locator("#opponents .seat .seat-tally")).to_have_count(7)
    playwright_api.expect(page.locator("#scores .score-row")).to_have_count(8)
    playwright_api.expect(page.locator("#switch-style")).to_be_disabled()
    state = server_state(page)
    assert state["rules"]["name"] == "french_52" and state["num_players"] == 8 and state["ranks_per_suit"] == 13
    assert "french_52 · 8 players" in page.inner_text("#game-info")
    names = {c["id"]: c["name"] for c in state["card_info"]}
    for button in page.locator("#hand .card, #table .card").all():
        title = button.get_attribute("title")
        assert title == names[int(button.get_attribute("data-card"))], title
        assert any(f" of {s}" in title for s in ("diamonds", "hearts", "spades", "clubs")), title
    assert_dom_hides(app, page)
    shot(page, "09-french-52-eight-players")

    explained: dict[str, str] = {}
    moves = 0
    while True:
        state = server_state(page)
        if state["phase"] != "play":
            break
        assert state["your_turn"]
        play_one_move(page, state, explained)
        moves += 1
        page.wait_for_function("() => !document.body.classList.contains('busy')")
        assert_dom_hides(app, page)
        if moves == 1:
            page.wait_for_selector("#events li")
            shot(page, "10-french-52-after-a-move")
        assert moves < 20, "seat 0 plays 6 cards in an 8-player hand"
    assert moves == 6, f"seat 0 plays 3 cards in each of the 2 deals, clicked {moves}"
    table = page.locator("#score-table")
    playwright_api.expect(table).to_be_visible()
    assert page.locator("#score-table thead th").count() == 9, "a column per player, after the row labels"
    assert page.locator("#score-table tr[data-key='total'] td").count() == 8
    text = table.inner_text()
    for label in ("Cards", "Diamonds", "Seven of diamonds", "Primiera", "Scope", "Hand points"):
        assert label in text, f"the score table has a {label} row:\n{text}"
    shot(page, "11-french-52-hand-score-table")
    assert not page.errors, f"browser errors: {page.errors}"
