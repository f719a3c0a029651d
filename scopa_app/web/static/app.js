// The Scopa page: shows the state the server sends (only what your seat may see) and sends
// your moves. The server checks every move; the checks here only give quicker, friendlier hints.
//
// Play as in the well-known web game: click a card in your hand, then the table cards to take
// (the move is sent as soon as they make a legal capture); click the empty slot to trail.
//
// The 52-card game (french_52, 8 players) is drawn with the French deck whatever the card style:
// the server names each card it shows (state.card_info: rank 1..13, suit, name), and the seats
// of the other seven players are laid out compactly, each with its hand, pile, scope and score.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const STYLE_KEY = "scopa.cardStyle";
  const GAME_KEY = "scopa.gameId";
  const LOG_LIMIT = 60;

  const ui = {
    options: null,
    state: null,
    style: localStorage.getItem(STYLE_KEY) === "french" ? "french" : "italian",
    selected: null, // hand card id
    picked: new Set(), // table card ids
    log: [],
    busy: false,
    lastSettings: null,
    shown: { table: new Set(), hand: new Set() }, // cards drawn last time, so only new ones animate
    cards: new Map(), // card id -> the server's card_info entry (rank, suit, code, name)
  };

  // --- server ------------------------------------------------------------------------------

  async function api(method, path, body) {
    const init = { method, headers: {}, credentials: "same-origin" };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try {
      data = await response.json();
    } catch (err) {
      data = { detail: `the server answered ${response.status} without JSON` };
    }
    if (!response.ok) {
      const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
      const error = new Error(detail);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  async function run(task) {
    if (ui.busy) return;
    ui.busy = true;
    document.body.classList.add("busy");
    try {
      await task();
    } catch (err) {
      say(err.message, "error");
      if (err.status === 404 && ui.state) {
        sessionStorage.removeItem(GAME_KEY);
      }
    } finally {
      ui.busy = false;
      document.body.classList.remove("busy");
    }
  }

  function accept(state, { events = true } = {}) {
    ui.state = state;
    for (const c of state.card_info || []) ui.cards.set(c.id, c);
    ui.selected = state.deciding && state.your_turn ? (state.declaring ? state.legal[0].card : state.hand[0]) : null;
    ui.picked.clear();
    sessionStorage.setItem(GAME_KEY, state.game_id);
    // The log reads top to bottom, oldest first; each hand's header opens its section.
    if (events) for (const ev of state.events) ui.log.push(ev);
    if (ui.log.length > LOG_LIMIT) ui.log.splice(0, ui.log.length - LOG_LIMIT);
    render();
    defaultMessage();
  }

  async function startGame(settings) {
    ui.lastSettings = settings;
    const state = await api("POST", "/api/games", settings);
    ui.shown = { table: new Set(), hand: new Set() };
    ui.log = [{ marker: "Hand 1" }];
    accept(state);
  }

  // Every action names the version of the state it was chosen in; the server refuses a stale or
  // repeated one with 409 and changes nothing, and the page then shows the server's state again.
  async function resync(err) {
    if (err.status === 409 && ui.state) {
      try {
        accept(await api("GET", `/api/games/${ui.state.game_id}`), { events: false });
      } catch (ignored) {
        // the error shown is the 409's
      }
    }
  }

  async function sendMove(card, captured) {
    await run(async () => {
      say(captured.length ? `You take ${listNames(captured)} with your ${nameOf(card)}…` : `You trail your ${nameOf(card)}…`);
      const version = ui.state.version;
      try {
        accept(await api("POST", `/api/games/${ui.state.game_id}/move`, { card, captured, version }));
      } catch (err) {
        ui.picked.clear();
        render();
        await resync(err);
        throw err;
      }
    });
  }

  // --- helpers ---------------------------------------------------------------------------------

  // The 52-card French deck (french_52): ranks 1..13, always drawn and named in French.
  const deck52 = () => Boolean(ui.state && ui.state.ranks_per_suit === 13);
  function info52(id) {
    return ui.cards.get(id) || { id, rank: Cards.rankOf52(id), suit: Cards.suitOf52(id), name: Cards.name52(id) };
  }
  const rank = (id) => (deck52() ? info52(id).rank : (id % 10) + 1);
  const nameOf = (id) => (deck52() ? info52(id).name : Cards.name(id, ui.style));
  const faceOf = (id) => Cards.faceSVG(id, ui.style, deck52() ? info52(id) : null);
  const sum = (ids) => ids.reduce((s, c) => s + rank(c), 0);
  const sameSet = (a, b) => a.length === b.size && a.every((x) => b.has(x));
  const listNames = (ids) => ids.map(nameOf).join(" + ");

  function optionsFor(card) {
    return ui.state.legal.filter((m) => m.card === card);
  }

  // A card "taking itself": keeping Chkobba's first card, or an Ace on the empty table (some variants).
  const isSelf = (m) => m.captured.length === 1 && m.captured[0] === m.card;
  const capturesOf = (card) => optionsFor(card).filter((m) => m.captured.length && !isSelf(m));

  function seatName(seat) {
    if (seat === ui.state.seat) return "You";
    const p = ui.state.players[seat];
    return `${p.label}${p.agent ? ` (${p.agent})` : ""}`;
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function cardButton(id, cls, onClick, label) {
    const b = el("button", `card ${cls || ""}`);
    b.type = "button";
    b.dataset.card = String(id);
    b.innerHTML = faceOf(id);
    b.setAttribute("aria-label", label || nameOf(id));
    b.title = nameOf(id);
    if (onClick) b.addEventListener("click", onClick);
    return b;
  }

  function miniCard(id) {
    const s = el("span", "mini");
    s.innerHTML = faceOf(id);
    s.title = nameOf(id);
    return s;
  }

  function say(text, kind) {
    const m = $("message");
    m.textContent = text;
    m.className = `message ${kind || ""}`;
  }

  function defaultMessage() {
    const s = ui.state;
    if (!s) return;
    if (s.phase === "game_over") say(s.you_won ? "You won the game!" : `${s.winner_label} won the game.`, "good");
    else if (s.phase === "hand_over") say(`Hand ${s.hand_number} is over.`);
    else if (s.your_turn && s.declaring) {
      say("Your hand can be declared (it will be shown to everyone): declare it, or pass.", "turn");
    } else if (s.your_turn && s.deciding) {
      say(`You drew the first card, ${nameOf(s.hand[0])}: keep it, or put it on the table.`, "turn");
    } else if (s.your_turn) {
      const sweeps = s.events.filter((e) => e.scopa).map((e) => (e.seat === s.seat ? "you" : seatName(e.seat)));
      const news = sweeps.length ? `Scopa by ${sweeps.join(" and ")}! ` : "";
      say(`${news}Your turn: click a card in your hand.`, "turn");
    }
    else say(`Waiting for player_${s.current}.`);
  }

  // --- clicks ----------------------------------------------------------------------------------

  function clickHand(card) {
    const s = ui.state;
    if (!s || !s.your_turn || ui.busy) return;
    if (ui.selected === card) {
      ui.selected = null;
      ui.picked.clear();
      render();
      defaultMessage();
      return;
    }
    ui.selected = card;
    ui.picked.clear();
    render();
    hint(card);
  }

  function hint(card) {
    const opts = optionsFor(card);
    const captures = capturesOf(card);
    if (ui.state.deciding) {
      defaultMessage();
    } else if (opts.some(isSelf)) {
      say(`Your ${nameOf(card)} takes itself: use the button below.`, "turn");
    } else if (!captures.length) {
      say(`Your ${nameOf(card)} cannot take anything: click the empty slot on the table to trail it.`, "turn");
    } else if (opts.some((m) => !m.captured.length)) {
      say(`Click the table cards to take with your ${nameOf(card)} (worth ${rank(card)}), or the empty slot to trail it.`, "turn");
    } else {
      say(`Click the table cards to take with your ${nameOf(card)} (worth ${rank(card)}).`, "turn");
    }
  }

  function explainPick(card, picked) {
    const captures = capturesOf(card);
    const v = rank(card);
    const total = sum(picked);
    if (!captures.length) return `Your ${nameOf(card)} cannot take anything from the table: trail it in the empty slot.`;
    if (!ui.state.plain_captures) {
      return `Your ${nameOf(card)} cannot take ${listNames(picked)} in this variant; it can take ${captures.map((m) => listNames(m.captured)).join(", or ")}.`;
    }
    const singles = captures.filter((m) => m.captured.length === 1);
    if (singles.length && ui.state.single_card_priority && (picked.length > 1 || rank(picked[0]) !== v)) {
      return (
        `Your ${nameOf(card)} matches a single table card (${singles.map((m) => nameOf(m.captured[0])).join(" or ")}): ` +
        "if you can play your card on a single table card, you may not play it on several."
      );
    }
    if (total > v) return `${listNames(picked)} add up to ${total}, more than your ${nameOf(card)} (${v}).`;
    return `Your ${nameOf(card)} cannot take ${listNames(picked)}; it can take ${captures.map((m) => listNames(m.captured)).join(", or ")}.`;
  }

  function clickTable(target) {
    const s = ui.state;
    if (!s || !s.your_turn || ui.busy) return;
    if (ui.selected === null) {
      say("First click a card in your hand, then the table cards you want to take.", "error");
      return;
    }
    const card = ui.selected;
    if (ui.picked.has(target)) ui.picked.delete(target);
    else ui.picked.add(target);
    const picked = [...ui.picked];
    const captures = capturesOf(card);
    const exact = captures.find((m) => sameSet(m.captured, ui.picked));
    if (exact) {
      sendMove(card, exact.captured);
      return;
    }
    if (!picked.length) {
      render();
      hint(card);
      return;
    }
    const partial = captures.some((m) => picked.every((c) => m.captured.includes(c)));
    if (partial) {
      render();
      say(`${listNames(picked)}: ${sum(picked)} of ${rank(card)}. Keep choosing table cards.`, "turn");
      return;
    }
    const why = explainPick(card, picked);
    ui.picked.delete(target);
    render();
    say(why, "error");
  }

  function clickSlot() {
    const s = ui.state;
    if (!s || !s.your_turn || ui.busy) return;
    if (ui.selected === null) {
      say("First click the card in your hand you want to trail.", "error");
      return;
    }
    const card = ui.selected;
    const opts = optionsFor(card);
    if (opts.some((m) => !m.captured.length)) {
      sendMove(card, []);
      return;
    }
    if (opts.some(isSelf) && !capturesOf(card).length) {
      say(`Your ${nameOf(card)} takes itself here: use the button below.`, "error");
      return;
    }
    const captures = capturesOf(card).map((m) => listNames(m.captured)).join(", or ");
    say(`Your ${nameOf(card)} can take ${captures}, so it cannot be trailed. Click the table cards to take.`, "error");
  }

  // --- drawing ------------------------------------------------------------------------------------

  function render() {
    const s = ui.state;
    document.body.dataset.style = ui.style;
    if (!s) return;
    document.body.dataset.phase = s.phase;
    document.body.dataset.deck = deck52() ? "52" : "40";
    styleButton();
    $("game-info").textContent =
      `${s.rules.name} · ${s.num_players} players · hand ${s.hand_number} · first to ${s.target}`;
    renderOpponents();
    renderTable();
    renderHand();
    renderActions();
    renderScores();
    renderStock();
    renderEvents();
    renderLog();
    renderHandEnd();
  }

  function lastEventOf(seat) {
    const evs = ui.state.events.filter((e) => e.seat === seat);
    return evs.length ? evs[evs.length - 1] : null;
  }

  function renderOpponents() {
    const s = ui.state;
    const box = $("opponents");
    box.replaceChildren();
    box.classList.toggle("many", s.players.length > 4);
    // Seven other players (the 52-card game): a compact grid, each seat with its own side's tally.
    const crowd = s.players.length > 6;
    box.classList.toggle("crowd", crowd);
    for (const p of s.players) {
      if (p.you) continue;
      const seat = el("div", `seat ${p.partner ? "partner" : "opponent"} ${s.current === p.seat && s.phase === "play" ? "active" : ""}`);
      seat.dataset.seat = String(p.seat);
      const head = el("div", "seat-label");
      head.append(el("strong", "", p.label), el("span", "muted", p.agent ? ` · ${p.agent}` : ""));
      if (!crowd) head.append(el("span", `tag ${p.partner ? "tag-partner" : "tag-opponent"}`, p.partner ? "partner" : "opponent"));
      if (s.dealer === p.seat) head.append(el("span", "tag tag-dealer", "dealer"));
      seat.append(head);
      const backs = el("div", "backs");
      for (let i = 0; i < p.hand_count; i++) {
        const b = el("span", "back");
        b.innerHTML = Cards.backSVG();
        backs.append(b);
      }
      if (!p.hand_count) backs.append(el("span", "muted small", "no cards"));
      backs.title = `${p.hand_count} card${p.hand_count === 1 ? "" : "s"} in hand`;
      const body = el("div", "seat-body");
      body.append(backs);
      if (crowd) seat.append(seatTally(s.sides[p.side]));
      const ev = lastEventOf(p.seat);
      const played = el("div", "played");
      if (ev && ev.decision) {
        played.append(el("span", "small", eventText(ev).trim()));
        if (ev.card !== null) played.append(miniCard(ev.card));
      } else if (ev) {
        played.append(el("span", "small", ev.captured.length ? "played" : "trailed"), miniCard(ev.card));
        if (ev.captured.length) {
          played.append(el("span", "small", "took"));
          for (const c of ev.captured) played.append(miniCard(c));
        }
        if (ev.scopa) played.append(el("span", "scopa-badge", "SCOPA!"));
      }
      body.append(played);
      seat.append(body);
      box.append(seat);
    }
  }

  // A seat's side in one line (crowded tables): score, captured pile, scope this hand.
  function seatTally(side) {
    const tally = el("div", "seat-tally small");
    const score = el("span", "tally-score", `${side.score}`);
    score.title = `score ${side.score} of ${ui.state.target}`;
    const pile = el("span", "tally-pile");
    const icon = el("span", "back pile-icon");
    if (side.captured_count) icon.innerHTML = Cards.backSVG();
    pile.append(icon, el("span", "", `${side.captured_count}`), el("span", "muted", " captured"));
    pile.title = `${side.captured_count} cards captured this hand`;
    tally.append(el("span", "muted", "score "), score, pile);
    if (side.scope) {
      const scope = el("span", "scope-marks", `★${side.scope > 1 ? `×${side.scope}` : ""}`);
      scope.title = `${side.scope} scop${side.scope === 1 ? "a" : "e"} this hand`;
      tally.append(scope);
    }
    return tally;
  }

  function renderTable() {
    const s = ui.state;
    const box = $("table");
    box.replaceChildren();
    const card = ui.selected;
    const opts = card === null ? [] : optionsFor(card);
    const reachable = new Set();
    const picked = [...ui.picked];
    for (const m of opts) {
      if (picked.every((c) => m.captured.includes(c))) for (const c of m.captured) reachable.add(c);
    }
    for (const t of s.table) {
      let cls = "table-card";
      if (ui.picked.has(t)) cls += " picked";
      else if (reachable.has(t)) cls += " option";
      else if (card !== null) cls += " dim";
      if (!ui.shown.table.has(t)) cls += " fresh";
      box.append(cardButton(t, cls, () => clickTable(t), `${nameOf(t)} on the table`));
    }
    ui.shown.table = new Set(s.table);
    const slot = el("button", "slot");
    slot.type = "button";
    slot.id = "empty-slot";
    slot.setAttribute("aria-label", "empty slot: trail here");
    slot.append(el("span", "", "trail here"));
    if (card !== null && opts.some((m) => !m.captured.length)) slot.classList.add("option");
    slot.addEventListener("click", clickSlot);
    box.append(slot);
  }

  function actionButton(id, text, onClick) {
    const b = el("button", "button action", text);
    b.type = "button";
    b.id = id;
    b.addEventListener("click", onClick);
    return b;
  }

  function renderActions() {
    const s = ui.state;
    const box = $("actions");
    box.replaceChildren();
    const card = ui.selected;
    if (s.your_turn && s.claim) {
      box.append(actionButton("claim-game", "Claim the game (chiamarsi fuori)", () => sendMove(s.claim.card, s.claim.captured)));
    }
    if (!s.your_turn || card === null) return;
    const opts = optionsFor(card);
    if (s.declaring) {
      box.append(actionButton("declare-hand", "Declare your hand", () => sendMove(card, [card])));
      box.append(actionButton("pass-declaration", "Pass", () => sendMove(card, [])));
    } else if (s.deciding) {
      box.append(actionButton("keep-card", `Keep the ${nameOf(card)}`, () => sendMove(card, [card])));
      box.append(actionButton("table-card", "Put it on the table", () => sendMove(card, [])));
    } else if (opts.some(isSelf)) {
      box.append(actionButton("take-itself", `${nameOf(card)} takes itself`, () => sendMove(card, [card])));
    }
  }

  function renderHand() {
    const s = ui.state;
    const you = s.players[s.seat];
    const label = $("you-label");
    label.replaceChildren(el("strong", "", "You"));
    if (s.dealer === s.seat) label.append(el("span", "tag tag-dealer", "dealer"));
    if (s.your_turn) label.append(el("span", "tag tag-turn", "your turn"));
    if (s.players.length > 6) label.append(seatTally(s.sides[you.side]));
    const ev = lastEventOf(s.seat);
    if (ev && s.events.length > 1 && !ev.decision) {
      const what = ev.captured.length ? `you took ${listNames(ev.captured)} with ${nameOf(ev.card)}` : `you trailed ${nameOf(ev.card)}`;
      label.append(el("span", "muted small", ` · ${what}${ev.scopa ? " — SCOPA!" : ""}`));
    }
    const box = $("hand");
    box.replaceChildren();
    box.classList.toggle("my-turn", s.your_turn);
    for (const c of s.hand) {
      let cls = "hand-card";
      if (ui.selected === c) cls += " selected";
      else if (s.your_turn) cls += " playable";
      if (!ui.shown.hand.has(c)) cls += " fresh";
      box.append(cardButton(c, cls, () => clickHand(c), `${nameOf(c)} in your hand`));
    }
    ui.shown.hand = new Set(s.hand);
    if (!s.hand.length) box.append(el("span", "muted", you && s.phase !== "play" ? "" : "no cards"));
  }

  function renderScores() {
    const s = ui.state;
    $("target").textContent = `(first to ${s.target})`;
    const box = $("scores");
    box.replaceChildren();
    box.classList.toggle("compact", s.sides.length > 6);
    for (const side of s.sides) {
      const row = el("div", `score-row ${side.you ? "you" : ""}`);
      const top = el("div", "score-top");
      top.append(el("span", "score-label", side.label), el("span", "score-value", `${side.score}`));
      row.append(top);
      const bar = el("div", "bar");
      const fill = el("div", "bar-fill");
      fill.style.width = `${Math.min(100, (100 * side.score) / s.target)}%`;
      bar.append(fill);
      row.append(bar);
      const sub = el("div", "score-sub small");
      sub.append(el("span", "", `captured ${side.captured_count}`));
      const scope = el("span", "scope-marks");
      scope.title = `${side.scope} scope this hand`;
      for (let i = 0; i < side.scope; i++) scope.append(el("span", "scopa-mark", "★"));
      if (side.scope) scope.append(el("span", "", ` ${side.scope} scop${side.scope === 1 ? "a" : "e"}`));
      sub.append(scope);
      row.append(sub);
      box.append(row);
    }
  }

  function renderStock() {
    const s = ui.state;
    const box = $("stock");
    box.replaceChildren();
    const pile = el("span", `back stock-pile ${s.stock_count ? "" : "empty"}`);
    if (s.stock_count) pile.innerHTML = Cards.backSVG();
    const text = el("div", "");
    text.append(el("strong", "", `${s.stock_count}`), el("span", "muted", ` card${s.stock_count === 1 ? "" : "s"} in the stock`));
    box.append(pile, text);
    const turn = $("turn-info");
    turn.replaceChildren();
    turn.append(el("div", "", `Dealer: ${seatName(s.dealer)}`));
    let whose = "";
    if (s.phase === "play") whose = s.your_turn ? "Your turn" : `${seatName(s.current)} to play`;
    else if (s.phase === "hand_over") whose = "Hand over";
    else whose = "Game over";
    turn.append(el("div", `whose ${s.your_turn ? "your-turn" : ""}`, whose));
  }

  function eventText(ev) {
    const you = ev.seat === ui.state.seat;
    if (ev.decision === "keep") return you ? " kept the first card " : " kept the first card";
    if (ev.decision === "table") return " put the first card on the table ";
    if (ev.decision === "declare") return ` declared ${listNames(ev.shown)} `;
    if (ev.decision === "pass") return " did not declare ";
    if (ev.decision === "claim") return " claimed the game (chiamarsi fuori) ";
    if (ev.decision === "false_claim") return " claimed the game wrongly (chiamarsi fuori) and lost ";
    if (ev.captured.length === 1 && ev.captured[0] === ev.card) return " played (it takes itself) ";
    return ev.captured.length ? " played " : " trailed ";
  }

  function eventLine(ev) {
    const li = el("li", ev.scopa ? "scopa" : "");
    li.append(el("span", "who", seatName(ev.seat)));
    if (ev.decision || (ev.captured.length === 1 && ev.captured[0] === ev.card)) {
      li.append(el("span", "", eventText(ev)));
      if (ev.card !== null) li.append(miniCard(ev.card));
      return li;
    }
    li.append(el("span", "", ev.captured.length ? " played " : " trailed "));
    li.append(miniCard(ev.card));
    if (ev.captured.length) {
      li.append(el("span", "", " took "));
      for (const c of ev.captured) li.append(miniCard(c));
    }
    if (ev.scopa) li.append(el("span", "scopa-badge", "SCOPA!"));
    return li;
  }

  function renderEvents() {
    const box = $("events");
    box.replaceChildren();
    if (!ui.state.events.length) box.append(el("li", "muted small", "New hand dealt."));
    for (const ev of ui.state.events) box.append(eventLine(ev));
  }

  function renderLog() {
    const box = $("log");
    box.replaceChildren();
    for (const ev of ui.log) {
      if (ev.marker) {
        box.append(el("li", "marker", ev.marker));
        continue;
      }
      // Cards are named as everywhere else on the page, in the chosen card style.
      const who = ev.seat === ui.state.seat ? "You" : `player_${ev.seat}`;
      if (ev.decision) {
        const card = ev.card !== null ? ` (${nameOf(ev.card)})` : "";
        box.append(el("li", "", `${who} ${eventText(ev).trim()}${card}`));
        continue;
      }
      const self = ev.captured.length === 1 && ev.captured[0] === ev.card;
      const capt = self ? " (it takes itself)" : ev.captured.length ? ` and took ${listNames(ev.captured)}` : "";
      const verb = ev.captured.length ? "played" : "trailed";
      box.append(el("li", ev.scopa ? "scopa" : "", `${who} ${verb} ${nameOf(ev.card)}${capt}${ev.scopa ? " — SCOPA!" : ""}`));
    }
    box.scrollTop = box.scrollHeight; // the newest play in view
  }

  // --- dialogs ------------------------------------------------------------------------------------

  function openDialog(build) {
    const body = $("dialog-body");
    body.replaceChildren();
    build(body);
    $("overlay").hidden = false;
  }

  function closeDialog() {
    $("overlay").hidden = true;
  }

  function renderHandEnd() {
    const s = ui.state;
    if (s.phase === "play" || !s.last_hand) {
      if ($("overlay").dataset.kind === "hand") closeDialog();
      return;
    }
    $("overlay").dataset.kind = "hand";
    openDialog((body) => {
      const h = s.last_hand;
      const title = el("h2", "", s.phase === "game_over" ? (s.you_won ? "You win the game!" : `${s.winner_label} wins the game`) : `Hand ${h.number} is over`);
      title.id = "dialog-title";
      body.append(title);
      if (h.leftover.length && h.leftover_side !== null) {
        const p = el("p", "small leftover");
        p.append(el("span", "", "Left on the table, to the last side to capture, "));
        p.append(el("strong", "", h.labels[h.leftover_side]), el("span", "", ":\u00a0"));
        for (const c of h.leftover) p.append(miniCard(c));
        body.append(p);
      }
      const table = el("table", `breakdown ${h.labels.length > 6 ? "many" : ""}`);
      table.id = "score-table";
      const head = el("tr");
      head.append(el("th", "", ""));
      for (const lbl of h.labels) head.append(el("th", "", lbl));
      const thead = el("thead");
      thead.append(head);
      table.append(thead);
      const tbody = el("tbody");
      for (const row of h.rows) {
        const tr = el("tr", row.key === "total" ? "total" : "");
        tr.dataset.key = row.key;
        tr.append(el("th", "", row.label));
        row.points.forEach((pts, i) => {
          const td = el("td", pts ? "won" : "");
          if (row.key === "total") td.textContent = `${pts}`;
          else {
            td.append(el("span", "shown", row.shown[i] || "–"));
            td.append(el("span", "pts", pts ? ` +${pts}` : ""));
          }
          tr.append(td);
        });
        tbody.append(tr);
      }
      const game = el("tr", "game-score");
      game.append(el("th", "", `Game (to ${s.target})`));
      for (const side of s.sides) game.append(el("td", "", `${side.score}`));
      tbody.append(game);
      table.append(tbody);
      body.append(table);
      const figures = deck52() ? "8, 9, 10, J, Q, K 10" : "figures 10";
      body.append(el("p", "muted small", `Primiera: the best card of each suit (7 = 21, 6 = 18, Ace = 16, 5 = 15, 4 = 14, 3 = 13, 2 = 12, ${figures}); – means a suit is missing.`));
      const buttons = el("div", "buttons");
      if (s.phase === "hand_over") {
        const next = el("button", "button", "Next hand");
        next.id = "next-hand";
        next.type = "button";
        next.addEventListener("click", () =>
          run(async () => {
            try {
              const state = await api("POST", `/api/games/${s.game_id}/next-hand`, { version: s.version });
              ui.log.push({ marker: `Hand ${s.hand_number + 1}` });
              accept(state);
            } catch (err) {
              await resync(err);
              throw err;
            }
          }),
        );
        buttons.append(next);
      } else {
        const again = el("button", "button", "New game");
        again.id = "play-again";
        again.type = "button";
        again.addEventListener("click", () => showNewGame());
        buttons.append(again);
      }
      body.append(buttons);
    });
  }

  function showNewGame() {
    const opts = ui.options;
    $("overlay").dataset.kind = "new";
    openDialog((body) => {
      body.append($("new-game-template").content.cloneNode(true));
      const rulesSel = $("f-rules");
      const playersSel = $("f-players");
      const oppSel = $("f-opponent");
      const mateSel = $("f-teammate");
      const last = ui.lastSettings || {};
      for (const r of opts.rules) rulesSel.append(new Option(r.name, r.name, false, r.name === (last.rules || opts.default_rules)));
      for (const a of opts.agents) {
        oppSel.append(new Option(a, a, false, a === (last.opponent || opts.default_opponent)));
        mateSel.append(new Option(a, a, false, a === (last.teammate || last.opponent || opts.default_opponent)));
      }
      // A trained checkpoint plays only the game it was trained for: offer it only there.
      const trained = opts.agent_games || {};
      const fits = (a) => !trained[a] || (trained[a].rules === rulesSel.value && trained[a].players === Number(playersSel.value));
      const markAgents = () => {
        for (const sel of [oppSel, mateSel]) {
          for (const o of sel.options) {
            o.disabled = !fits(o.value);
            o.textContent = o.disabled ? `${o.value} (trained for ${trained[o.value].players} players, ${trained[o.value].rules})` : o.value;
          }
          if (sel.selectedOptions.length && sel.selectedOptions[0].disabled) {
            const ok = [...sel.options].find((o) => !o.disabled);
            if (ok) sel.value = ok.value;
          }
        }
      };
      const sync = () => {
        const r = opts.rules.find((x) => x.name === rulesSel.value);
        $("f-rules-desc").textContent = `${r.description} First to ${r.target}.`;
        const keep = Number(playersSel.value || last.players || 2);
        playersSel.replaceChildren();
        for (const n of r.player_counts) {
          const label = !teams(n) ? (n > 3 ? `${n} (each for themselves)` : `${n}`) : n === 4 ? "4 (two teams of 2)" : n === 6 ? "6 (two teams of 3)" : `${n}`;
          playersSel.append(new Option(label, String(n), false, n === keep));
        }
        $("f-teammate-row").hidden = !teams(Number(playersSel.value));
        markAgents();
      };
      // Player counts played in two teams (older servers: 4 and more).
      const teams = (n) => {
        const r = opts.rules.find((x) => x.name === rulesSel.value);
        return r && r.partnerships ? r.partnerships.includes(n) : n >= 4;
      };
      rulesSel.addEventListener("change", sync);
      playersSel.addEventListener("change", () => {
        $("f-teammate-row").hidden = !teams(Number(playersSel.value));
        markAgents();
      });
      sync();
      $("f-cancel").addEventListener("click", () => {
        if (ui.state) {
          closeDialog();
          $("overlay").dataset.kind = "";
          renderHandEnd();
        }
      });
      $("new-game-form").addEventListener("submit", (e) => {
        e.preventDefault();
        const players = Number(playersSel.value);
        const settings = { rules: rulesSel.value, players, opponent: oppSel.value };
        if (teams(players)) settings.teammate = mateSel.value;
        $("overlay").dataset.kind = "";
        closeDialog();
        run(() => startGame(settings));
      });
    });
  }

  // --- start -----------------------------------------------------------------------------------------

  // The 52-card deck is French-suited: the style switch has nothing to switch there.
  function styleButton() {
    const b = $("switch-style");
    b.disabled = deck52();
    b.title = deck52() ? "The 52-card game is played with French-suited cards" : "";
    if (deck52()) b.textContent = "French cards (52-card deck)";
    else b.textContent = ui.style === "italian" ? "Switch card style (French)" : "Switch card style (Italian)";
  }

  // The banner (#message) names cards in the style it was written in: after a switch it names
  // them in the new one ("Sette di denari" becomes "Seven of diamonds"), errors included.
  function restyleMessage(from, to) {
    const m = $("message");
    let text = m.textContent;
    for (let id = 0; id < 40; id++) text = text.split(Cards.name(id, from)).join(Cards.name(id, to));
    m.textContent = text;
  }

  function switchStyle() {
    if (deck52()) return;
    const from = ui.style;
    ui.style = ui.style === "italian" ? "french" : "italian";
    restyleMessage(from, ui.style);
    ui.shown = { table: new Set(), hand: new Set() };
    localStorage.setItem(STYLE_KEY, ui.style);
    styleButton();
    render();
    if (ui.state && ui.state.phase !== "play") renderHandEnd();
  }

  async function init() {
    $("switch-style").addEventListener("click", switchStyle);
    $("switch-style").textContent = ui.style === "italian" ? "Switch card style (French)" : "Switch card style (Italian)";
    $("new-game").addEventListener("click", () => ui.options && showNewGame());
    await run(async () => {
      ui.options = await api("GET", "/api/options");
      const saved = sessionStorage.getItem(GAME_KEY);
      if (saved) {
        try {
          accept(await api("GET", `/api/games/${encodeURIComponent(saved)}`));
          return;
        } catch (err) {
          sessionStorage.removeItem(GAME_KEY);
        }
      }
      const trained = (ui.options.agent_games || {})[ui.options.default_opponent]; // a checkpoint's own game
      await startGame({
        rules: trained ? trained.rules : ui.options.default_rules,
        players: trained ? trained.players : 2,
        opponent: ui.options.default_opponent,
      });
    });
  }

  document.addEventListener("DOMContentLoaded", init);
})();
