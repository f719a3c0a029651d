// Card pictures drawn as SVG: an Italian deck (coins, cups, swords, batons) and a French-suited
// one (diamonds, hearts, spades, clubs). Nothing is downloaded: every shape is a path below.
//
// Card ids follow scopa_env/engine/cards.py: id = suit * 10 + (rank - 1), suits 0 coins/diamonds,
// 1 cups/hearts, 2 swords/spades, 3 batons/clubs; ranks 1..7, 8 Fante/Jack, 9 Cavallo/Queen, 10 Re/King.
//
// The 52-card French deck (preset french_52) keeps ids 0..39 as the ranks 1..10 (8, 9, 10 are
// number cards there) and adds the Jack, Queen and King (ranks 11, 12, 13) as ids 40 + suit * 3
// + (rank - 11). The server sends each card's rank, suit and name (state.card_info): pass that
// entry as `card` to faceSVG and the card is drawn from the 52-card deck.
"use strict";

const Cards = (() => {
  const W = 100;
  const H = 150;

  const ITALIAN_RANKS = ["Asso", "Due", "Tre", "Quattro", "Cinque", "Sei", "Sette", "Fante", "Cavallo", "Re"];
  const ITALIAN_SUITS = ["denari", "coppe", "spade", "bastoni"];
  const FRENCH_RANKS = ["Ace", "Two", "Three", "Four", "Five", "Six", "Seven", "Jack", "Queen", "King"];
  const FRENCH_SUITS = ["diamonds", "hearts", "spades", "clubs"];
  const FRENCH_SYMBOLS = ["A", "2", "3", "4", "5", "6", "7", "J", "Q", "K"];
  const ENGLISH_SUITS = ["coins", "cups", "swords", "batons"];
  const FRENCH52_SYMBOLS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
  const FRENCH52_RANKS = ["Ace", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Jack", "Queen", "King"];
  const FRENCH_SUIT_MARKS = ["♦", "♥", "♠", "♣"];

  const suitOf = (id) => Math.floor(id / 10);
  const rankOf = (id) => (id % 10) + 1;

  // --- suit shapes, centred on (0, 0), about 20 units tall -------------------------------
  const FRENCH_SUIT_SVG = [
    '<path d="M0,-10 L7.5,0 L0,10 L-7.5,0 Z" fill="#c62828"/>',
    '<path d="M0,9 C-11,1 -10,-8 -5,-8 C-2,-8 0,-5.5 0,-3.5 C0,-5.5 2,-8 5,-8 C10,-8 11,1 0,9 Z" fill="#c62828"/>',
    '<path d="M0,-10 C-4,-4 -10,-1.5 -9,3.5 C-8,7.5 -3,7.5 -1,4.5 L-3,10 L3,10 L1,4.5 C3,7.5 8,7.5 9,3.5 ' +
      'C10,-1.5 4,-4 0,-10 Z" fill="#1d1d1d"/>',
    '<g fill="#1d1d1d"><circle cx="0" cy="-4.5" r="4.3"/><circle cx="-5" cy="2.5" r="4.3"/>' +
      '<circle cx="5" cy="2.5" r="4.3"/><path d="M-1,1 L-3.2,10 L3.2,10 L1,1 Z"/></g>',
  ];

  const ITALIAN_SUIT_SVG = [
    // denari: a gold coin with a rosette
    '<g><circle r="9.5" fill="#f0b90b" stroke="#8a5a00" stroke-width="1.3"/>' +
      '<circle r="6.5" fill="#f7d254" stroke="#8a5a00" stroke-width="0.9"/>' +
      '<path d="M0,-5 L1.4,-1.4 L5,0 L1.4,1.4 L0,5 L-1.4,1.4 L-5,0 L-1.4,-1.4 Z" fill="#c0392b"/>' +
      '<circle r="1.4" fill="#f0b90b"/></g>',
    // coppe: a red goblet on a gold foot
    '<g stroke="#6b3a00" stroke-width="0.9"><path d="M-8,-9 L8,-9 C8,-1 4,2.5 0,2.5 C-4,2.5 -8,-1 -8,-9 Z" fill="#c0392b"/>' +
      '<path d="M-8,-9 L8,-9 L7,-6.5 L-7,-6.5 Z" fill="#f0b90b"/>' +
      '<rect x="-1.4" y="2.5" width="2.8" height="5" fill="#f0b90b"/>' +
      '<path d="M-6.5,10.5 C-6.5,7 6.5,7 6.5,10.5 Z" fill="#f0b90b"/></g>',
    // spade: a blue blade with a gold guard
    '<g stroke="#1f3f66" stroke-width="0.8"><path d="M0,-11.5 L2.3,-8 L2.3,4.5 L-2.3,4.5 L-2.3,-8 Z" fill="#7fb0e0"/>' +
      '<rect x="-7" y="4.5" width="14" height="2.4" rx="1" fill="#f0b90b"/>' +
      '<rect x="-1.3" y="6.9" width="2.6" height="3.4" fill="#8a5a00"/><circle cy="11.2" r="1.5" fill="#f0b90b"/></g>',
    // bastoni: a green knotted club
    '<g stroke="#1e4d1e" stroke-width="0.9"><path d="M-1.8,11 L-3.4,-5 C-4.5,-11 4.5,-11 3.4,-5 L1.8,11 Z" fill="#4f9a3c"/>' +
      '<path d="M-3,-3 L-5,-4.5 M3,0 L5,-1 M-2.4,4 L-4.3,3.4" stroke="#1e4d1e" stroke-width="1.4"/>' +
      '<ellipse cy="11" rx="2.6" ry="1" fill="#8a5a00"/></g>',
  ];

  // Pip centres of the number cards (card coordinates).
  const PIPS = {
    1: [[50, 75]],
    2: [[50, 38], [50, 112]],
    3: [[50, 36], [50, 75], [50, 114]],
    4: [[32, 40], [68, 40], [32, 110], [68, 110]],
    5: [[32, 40], [68, 40], [50, 75], [32, 110], [68, 110]],
    6: [[32, 40], [68, 40], [32, 75], [68, 75], [32, 110], [68, 110]],
    7: [[32, 40], [68, 40], [50, 57.5], [32, 75], [68, 75], [32, 110], [68, 110]],
    // 8, 9 and 10 are number cards in the 52-card deck only.
    8: [[32, 40], [68, 40], [50, 57.5], [32, 75], [68, 75], [50, 92.5], [32, 110], [68, 110]],
    9: [[32, 36], [68, 36], [32, 62], [68, 62], [50, 75], [32, 88], [68, 88], [32, 114], [68, 114]],
    10: [[32, 36], [68, 36], [50, 49], [32, 62], [68, 62], [32, 88], [68, 88], [50, 101], [32, 114], [68, 114]],
  };

  const FRENCH_INK = ["#c62828", "#c62828", "#1d1d1d", "#1d1d1d"];
  const ITALIAN_INK = ["#a86b00", "#b02a1e", "#1f5fa3", "#2f7a26"];

  function suitShape(style, suit, x, y, scale, flip) {
    const shape = (style === "french" ? FRENCH_SUIT_SVG : ITALIAN_SUIT_SVG)[suit];
    const rot = flip ? " rotate(180)" : "";
    return `<g transform="translate(${x},${y}) scale(${scale})${rot}">${shape}</g>`;
  }

  function corner(style, suit, rank, deck52) {
    const label = deck52 ? FRENCH52_SYMBOLS[rank - 1] : style === "french" ? FRENCH_SYMBOLS[rank - 1] : String(rank);
    const ink = (style === "french" ? FRENCH_INK : ITALIAN_INK)[suit];
    const size = label.length > 1 ? 15 : 17;
    const one =
      `<text x="11" y="20" text-anchor="middle" font-family="Georgia, 'DejaVu Serif', serif" font-weight="700" ` +
      `font-size="${size}" fill="${ink}">${label}</text>` +
      suitShape(style, suit, 11, 30, 0.5, false);
    return one + `<g transform="rotate(180 ${W / 2} ${H / 2})">${one}</g>`;
  }

  function pips(style, suit, rank) {
    const big = rank <= 3 ? 1.3 : rank >= 8 ? 0.95 : 1.1;
    const scale = rank === 1 ? 2.3 : style === "french" ? 1.05 * big : big;
    return PIPS[rank].map(([x, y]) => suitShape(style, suit, x, y, scale, y > 75 && style === "french")).join("");
  }

  // --- court cards ------------------------------------------------------------------------
  const CROWN = '<path d="M-12,5 L-13,-6 L-6,0 L0,-10 L6,0 L13,-6 L12,5 Z" fill="#f0b90b" stroke="#7a5200" stroke-width="1"/>';
  const FEATHER_HAT =
    '<g><ellipse cx="0" cy="0" rx="14" ry="4" fill="#7b2d8b" stroke="#3d1446" stroke-width="0.8"/>' +
    '<path d="M-7,-1 C-6,-8 6,-8 7,-1 Z" fill="#7b2d8b" stroke="#3d1446" stroke-width="0.8"/>' +
    '<path d="M4,-5 C10,-14 16,-12 18,-9 C13,-9 9,-7 6,-3 Z" fill="#e74c3c"/></g>';
  const HORSE =
    '<path d="M-14,22 L-9,2 C-12,-3 -10,-11 -3,-15 L0,-22 L3,-15 C10,-13 16,-6 16,0 L15,5 L8,5 L6,1 ' +
    'L3,9 L7,22 Z" fill="#8d5a2b" stroke="#3e240d" stroke-width="1.2"/>' +
    '<circle cx="4" cy="-7" r="1.6" fill="#1d1d1d"/>' +
    '<path d="M-3,-15 C-9,-10 -12,-2 -11,6" stroke="#3e240d" stroke-width="3" fill="none"/>';

  function robe(color) {
    return (
      `<path d="M-20,34 L-13,0 C-10,-6 10,-6 13,0 L20,34 Z" fill="${color}" stroke="#2b2b2b" stroke-width="1"/>` +
      '<path d="M-5,-4 L0,6 L5,-4" fill="none" stroke="#f0b90b" stroke-width="2"/>' +
      '<circle cx="0" cy="-13" r="9" fill="#f3d2b0" stroke="#5a3b22" stroke-width="1"/>' +
      '<path d="M-3,-14 h1.5 M2,-14 h1.5 M-2.5,-9 q2.5,2 5,0" stroke="#5a3b22" stroke-width="1" fill="none"/>'
    );
  }

  function italianCourt(suit, rank) {
    const ink = ITALIAN_INK[suit];
    const name = ["FANTE", "CAVALLO", "RE"][rank - 8];
    let figure;
    if (rank === 10) {
      figure = `<g transform="translate(50,78)">${robe(ink)}<g transform="translate(0,-24) scale(0.8)">${CROWN}</g></g>`;
    } else if (rank === 8) {
      figure = `<g transform="translate(50,78)">${robe(ink)}<g transform="translate(0,-22)">${FEATHER_HAT}</g></g>`;
    } else {
      figure = `<g transform="translate(47,76) scale(1.25)">${HORSE}</g>`;
    }
    return (
      `<rect x="18" y="24" width="64" height="98" rx="4" fill="#fbf3df" stroke="${ink}" stroke-width="1.2"/>` +
      figure +
      suitShape("italian", suit, 71, 42, 0.75, false) +
      `<rect x="22" y="106" width="56" height="13" rx="2" fill="${ink}"/>` +
      `<text x="50" y="116" text-anchor="middle" font-family="Georgia, 'DejaVu Serif', serif" font-size="9" ` +
      `font-weight="700" fill="#fff" letter-spacing="0.5">${name}</text>`
    );
  }

  // A lettered court card; `court` is 0 Jack, 1 Queen, 2 King.
  function frenchCourt(suit, court) {
    const ink = FRENCH_INK[suit];
    const letter = "JQK"[court];
    const band = ["#f6e3a1", "#f6e3a1", "#cfe0f5", "#cfe0f5"][suit];
    const headgear = court === 2 ? CROWN : court === 1 ? '<path d="M-10,4 L-8,-4 L-3,1 L0,-6 L3,1 L8,-4 L10,4 Z" fill="#f0b90b" stroke="#7a5200"/>' : FEATHER_HAT;
    return (
      `<rect x="18" y="24" width="64" height="102" rx="3" fill="${band}" stroke="${ink}" stroke-width="1.2"/>` +
      `<g transform="translate(50,45) scale(0.9)">${headgear}</g>` +
      `<text x="50" y="92" text-anchor="middle" font-family="Georgia, 'DejaVu Serif', serif" font-size="40" ` +
      `font-weight="700" fill="${ink}">${letter}</text>` +
      suitShape("french", suit, 50, 110, 0.9, false)
    );
  }

  // --- whole cards --------------------------------------------------------------------------

  // deck52: ranks 1..13 of the French 52-card deck (8, 9, 10 with pips; J, Q, K lettered).
  function face(suit, rank, style, deck52) {
    const italian = style !== "french" && !deck52;
    const paper = italian ? "#fffaf0" : "#ffffff";
    const frame = italian
      ? `<rect x="4" y="4" width="92" height="142" rx="6" fill="none" stroke="${ITALIAN_INK[suit]}" stroke-width="1.4" opacity="0.65"/>`
      : "";
    let middle;
    if (deck52) middle = rank <= 10 ? pips("french", suit, rank) : frenchCourt(suit, rank - 11);
    else middle = rank <= 7 ? pips(style, suit, rank) : italian ? italianCourt(suit, rank) : frenchCourt(suit, rank - 8);
    return (
      `<rect x="0.75" y="0.75" width="98.5" height="148.5" rx="8" fill="${paper}" stroke="#6d6d6d" stroke-width="1.5"/>` +
      frame +
      middle +
      corner(deck52 ? "french" : style, suit, rank, deck52)
    );
  }

  function back() {
    let diamonds = "";
    for (let y = 16; y < 140; y += 12) {
      for (let x = 16 + ((y / 12) % 2) * 6; x < 88; x += 12) {
        diamonds += `<path d="M${x},${y - 4} L${x + 4},${y} L${x},${y + 4} L${x - 4},${y} Z"/>`;
      }
    }
    return (
      '<rect x="0.75" y="0.75" width="98.5" height="148.5" rx="8" fill="#8e1d1d" stroke="#4a0d0d" stroke-width="1.5"/>' +
      '<rect x="7" y="7" width="86" height="136" rx="5" fill="#a82a2a" stroke="#f3d27a" stroke-width="1.5"/>' +
      `<g fill="#c24a3a" opacity="0.9">${diamonds}</g>` +
      '<circle cx="50" cy="75" r="15" fill="#8e1d1d" stroke="#f3d27a" stroke-width="2"/>' +
      '<text x="50" y="81" text-anchor="middle" font-family="Georgia, serif" font-size="17" font-weight="700" fill="#f3d27a">S</text>'
    );
  }

  function svg(inner, title) {
    const t = title ? `<title>${title}</title>` : "";
    return `<svg class="card-svg" viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${title || "card"}">${t}${inner}</svg>`;
  }

  function name(id, style) {
    const r = rankOf(id) - 1;
    const s = suitOf(id);
    if (style === "french") return `${FRENCH_RANKS[r]} of ${FRENCH_SUITS[s]}`;
    return `${ITALIAN_RANKS[r]} di ${ITALIAN_SUITS[s]}`;
  }

  // A card of the 52-card deck from the server's card_info entry ({id, rank, suit, code, name}).
  function face52SVG(card) {
    return svg(face(card.suit, card.rank, "french", true), card.name);
  }

  function shortName52(card) {
    return FRENCH52_SYMBOLS[card.rank - 1] + FRENCH_SUIT_MARKS[card.suit];
  }

  // Rank and suit of an id of the 52-card deck (the server's card_info says the same).
  const rankOf52 = (id) => (id < 40 ? (id % 10) + 1 : ((id - 40) % 3) + 11);
  const suitOf52 = (id) => (id < 40 ? Math.floor(id / 10) : Math.floor((id - 40) / 3));
  const name52 = (id) => `${FRENCH52_RANKS[rankOf52(id) - 1]} of ${FRENCH_SUITS[suitOf52(id)]}`;

  function shortName(id, style) {
    const r = rankOf(id);
    if (style === "french") return FRENCH_SYMBOLS[r - 1] + ["♦", "♥", "♠", "♣"][suitOf(id)];
    return `${r} ${ITALIAN_SUITS[suitOf(id)]}`;
  }

  return {
    faceSVG: (id, style, card) =>
      card ? face52SVG(card) : svg(face(suitOf(id), rankOf(id), style, false), name(id, style)),
    backSVG: () => svg(back(), "face-down card"),
    name,
    shortName,
    rankOf,
    suitOf,
    rankOf52,
    suitOf52,
    name52,
    shortName52,
    ENGLISH_SUITS,
  };
})();
