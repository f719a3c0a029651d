"""The 40-card Italian deck: card ids, values, names and a short text notation.

Card ids are public, documented and fixed::

    card id = suit * 10 + (rank - 1)

    suit  id  Italian            French          ids
    ----  --  -----------------  --------------  ------
    coins  0  denari             diamonds (D)    0..9
    cups   1  coppe              hearts (H)      10..19
    swords 2  spade              spades (S)      20..29
    batons 3  bastoni            clubs (C)       30..39

    rank      1    2..7   8               9                 10
    name      Ace  2..7   Fante / Jack    Cavallo / Queen   Re / King
    capture   1    2..7   8               9                 10
    primiera  16   12,13,14,15,18,21      10                10                10

So the settebello (seven of coins) is card 6 and the King of coins (re bello) is 9.

Short notation: one rank symbol (``A 2 3 4 5 6 7 J Q K``) followed by one suit
letter (``d`` denari, ``c`` coppe, ``s`` spade, ``b`` bastoni). ``7d`` is the
settebello, ``Kb`` the King of batons. :func:`parse_card` also accepts the
French suit symbols (``♦ ♥ ♠ ♣``), and ``C`` (Cavallo) or ``H`` (Horse) for 9
and ``F`` (Fante) for 8.

Sets of cards are Python ``int`` bitmasks inside the engine (bit ``i`` is card
``i``); :func:`mask_of` and :func:`cards_of` convert.

**The 52-card French deck** (preset ``french_52``, :attr:`Rules.ranks_per_suit` = 13)
keeps these 40 ids, read as the French ranks 1..10 (8, 9 and 10 are plain numbers
there, not pictures), and adds the Jack, Queen and King (ranks and capture values
11, 12, 13) after them::

    card id = 40 + suit * 3 + (rank - 11)      rank 11..13, ids 40..51

so every 40-card id, mask and table is unchanged. :data:`NUM_CARDS` stays the
40-card deck's size; :data:`MAX_CARDS` (52) bounds every id. The notation of the
52-card deck (``ranks_per_suit=13`` in :func:`format_card`) writes ranks
``A 2 .. 10 J Q K`` and the French suit letters ``d h s c``.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

NUM_SUITS = 4
NUM_RANKS = 10
NUM_CARDS = NUM_SUITS * NUM_RANKS
"""Cards of the 40-card deck (ids 0..39)."""
FRENCH_RANKS = 13
"""Ranks per suit of the 52-card French deck (J, Q, K = 11, 12, 13)."""
MAX_RANK = FRENCH_RANKS
MAX_CARDS = NUM_SUITS * FRENCH_RANKS
"""Cards of the 52-card deck; every card id is below it."""
RANKS_PER_SUIT = (NUM_RANKS, FRENCH_RANKS)
"""The decks, by ranks per suit: the 40-card Italian deck and the 52-card French deck."""

COINS, CUPS, SWORDS, BATONS = 0, 1, 2, 3
SUITS = (COINS, CUPS, SWORDS, BATONS)

ACE, FANTE, CAVALLO, RE = 1, 8, 9, 10
JACK, QUEEN, KING = FANTE, CAVALLO, RE
RANKS = tuple(range(1, NUM_RANKS + 1))

ALL_CARDS_MASK = (1 << NUM_CARDS) - 1


def card_id(suit: int, rank: int) -> int:
    """Return the id of the card of ``suit`` (0..3) and ``rank`` (1..10, or 11..13 in the
    52-card deck)."""
    if suit not in SUITS:
        raise ValueError(f"suit must be one of {SUITS}, got {suit!r}")
    if isinstance(rank, bool) or rank not in range(1, MAX_RANK + 1):
        raise ValueError(f"rank must be one of 1..{MAX_RANK}, got {rank!r}")
    if rank > NUM_RANKS:
        return NUM_CARDS + suit * (FRENCH_RANKS - NUM_RANKS) + rank - NUM_RANKS - 1
    return suit * NUM_RANKS + rank - 1


SUIT_OF: tuple[int, ...] = tuple(c // NUM_RANKS for c in range(NUM_CARDS)) + tuple(
    (c - NUM_CARDS) // (FRENCH_RANKS - NUM_RANKS) for c in range(NUM_CARDS, MAX_CARDS)
)
RANK_OF: tuple[int, ...] = tuple(c % NUM_RANKS + 1 for c in range(NUM_CARDS)) + tuple(
    (c - NUM_CARDS) % (FRENCH_RANKS - NUM_RANKS) + NUM_RANKS + 1 for c in range(NUM_CARDS, MAX_CARDS)
)

SETTEBELLO = card_id(COINS, 7)
RE_BELLO = card_id(COINS, RE)

#: Standard primiera scale, indexed by rank (index 0 unused).
PRIMIERA_BY_RANK: tuple[int, ...] = (0, 16, 12, 13, 14, 15, 18, 21, 10, 10, 10)

#: Bitmask of the four cards of each rank, indexed by rank 0..13 (index 0 empty).
RANK_MASK: tuple[int, ...] = (0,) + tuple(sum(1 << card_id(s, r) for s in SUITS) for r in range(1, MAX_RANK + 1))
#: Bitmask of the cards of each suit (ten in the 40-card deck, thirteen with ids 40..51).
SUIT_MASK: tuple[int, ...] = tuple(sum(1 << c for c in range(MAX_CARDS) if SUIT_OF[c] == s) for s in SUITS)


def suit_of(card: int) -> int:
    """Suit (0..3) of a card id."""
    return SUIT_OF[check_card(card)]


def rank_of(card: int) -> int:
    """Rank (1..10, 11..13 in the 52-card deck) of a card id; it is also the capture value."""
    return RANK_OF[check_card(card)]


def check_card(card: int) -> int:
    """Return ``card`` if it is a valid card id, else raise ``ValueError``."""
    if isinstance(card, bool) or not isinstance(card, numbers.Integral) or not 0 <= card < MAX_CARDS:
        raise ValueError(f"not a card id (0..{MAX_CARDS - 1}): {card!r}")
    return int(card)


def mask_of(cards: Iterable[int]) -> int:
    """Bitmask of a collection of card ids; duplicates raise ``ValueError``."""
    mask = 0
    for card in cards:
        bit = 1 << check_card(int(card))
        if mask & bit:
            raise ValueError(f"card {format_card(int(card))} ({card}) appears twice")
        mask |= bit
    return mask


# Card ids of each suit's 10-bit row of a bitmask: _ROW_CARDS[suit][row], built once.
_ROW_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(s * NUM_RANKS + b for b in range(NUM_RANKS) if row >> b & 1) for row in range(1 << NUM_RANKS))
    for s in SUITS
)
_ROW = (1 << NUM_RANKS) - 1


def cards_of(mask: int) -> list[int]:
    """Sorted card ids of a bitmask."""
    if 0 <= mask <= ALL_CARDS_MASK:  # a deck's mask: one table look-up per suit
        rows = _ROW_CARDS
        return [
            *rows[COINS][mask & _ROW],
            *rows[CUPS][mask >> NUM_RANKS & _ROW],
            *rows[SWORDS][mask >> 2 * NUM_RANKS & _ROW],
            *rows[BATONS][mask >> 3 * NUM_RANKS],
        ]
    if 0 < mask >> NUM_CARDS < 1 << (MAX_CARDS - NUM_CARDS):  # the 52-card deck: its pictures after the 40
        return cards_of(mask & ALL_CARDS_MASK) + [NUM_CARDS + i for i in _HIGH_CARDS[mask >> NUM_CARDS]]
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


# Offsets (id - 40) of the 52-card deck's twelve pictures in each 12-bit value, built once.
_HIGH_CARDS: tuple[tuple[int, ...], ...] = tuple(
    tuple(b for b in range(MAX_CARDS - NUM_CARDS) if v >> b & 1) for v in range(1 << (MAX_CARDS - NUM_CARDS))
)


# --- notation -----------------------------------------------------------------

RANK_SYMBOLS = ("A", "2", "3", "4", "5", "6", "7", "J", "Q", "K")
SUIT_LETTERS = ("d", "c", "s", "b")
FRENCH_SUIT_SYMBOLS = ("♦", "♥", "♠", "♣")
ITALIAN_SUIT_SYMBOLS = ("🪙", "🏆", "🗡", "🪵")
FRENCH52_RANK_SYMBOLS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
"""Rank symbols of the 52-card deck (ranks 1..13)."""
FRENCH52_SUIT_LETTERS = ("d", "h", "s", "c")
"""Suit letters of the 52-card deck: diamonds, hearts, spades, clubs."""

_RANK_PARSE = {s: i + 1 for i, s in enumerate(RANK_SYMBOLS)}
_RANK_PARSE.update({"1": 1, "8": 8, "9": 9, "10": 10, "F": 8, "C": 9, "H": 9, "R": 10})
_SUIT_PARSE = {s: i for i, s in enumerate(SUIT_LETTERS)}
_SUIT_PARSE.update({s: i for i, s in enumerate(FRENCH_SUIT_SYMBOLS)})
_RANK_PARSE_52 = {s: i + 1 for i, s in enumerate(FRENCH52_RANK_SYMBOLS)}
_RANK_PARSE_52.update({"1": 1, "11": 11, "12": 12, "13": 13})
_SUIT_PARSE_52 = {s: i for i, s in enumerate(FRENCH52_SUIT_LETTERS)}
_SUIT_PARSE_52.update({s: i for i, s in enumerate(FRENCH_SUIT_SYMBOLS)})

ITALIAN_RANK_NAMES = ("Asso", "Due", "Tre", "Quattro", "Cinque", "Sei", "Sette", "Fante", "Cavallo", "Re")
ITALIAN_SUIT_NAMES = ("denari", "coppe", "spade", "bastoni")
ENGLISH_RANK_NAMES = ("Ace", "Two", "Three", "Four", "Five", "Six", "Seven", "Jack", "Horse", "King")
ENGLISH_SUIT_NAMES = ("coins", "cups", "swords", "batons")
FRENCH_RANK_NAMES = ("Ace", "Two", "Three", "Four", "Five", "Six", "Seven", "Jack", "Queen", "King")
FRENCH_SUIT_NAMES = ("diamonds", "hearts", "spades", "clubs")
FRENCH52_RANK_NAMES = FRENCH_RANK_NAMES[:7] + ("Eight", "Nine", "Ten") + FRENCH_RANK_NAMES[7:]


def _french52(card: int, ranks_per_suit: int) -> bool:
    """Whether ``card`` is written as a card of the 52-card deck (its pictures always are)."""
    if ranks_per_suit not in RANKS_PER_SUIT:
        raise ValueError(f"ranks_per_suit must be one of {RANKS_PER_SUIT}, got {ranks_per_suit!r}")
    return ranks_per_suit == FRENCH_RANKS or card >= NUM_CARDS


def format_card(card: int, ranks_per_suit: int = NUM_RANKS) -> str:
    """Short notation of a card: ``format_card(6) == "7d"``.

    ``ranks_per_suit=13`` writes it as a card of the 52-card deck: ``format_card(7, 13)
    == "8d"`` (the same id is ``"Jd"``, the Fante, in the 40-card deck), ``"Kc"`` the King
    of clubs.
    """
    card = check_card(card)
    if _french52(card, ranks_per_suit):
        return FRENCH52_RANK_SYMBOLS[RANK_OF[card] - 1] + FRENCH52_SUIT_LETTERS[SUIT_OF[card]]
    return RANK_SYMBOLS[RANK_OF[card] - 1] + SUIT_LETTERS[SUIT_OF[card]]


def format_cards(cards: Iterable[int] | int, ranks_per_suit: int = NUM_RANKS) -> str:
    """Space-separated short notation of several cards (ids or a bitmask), sorted by id
    (by suit, then rank, with ``ranks_per_suit=13``)."""
    ids = cards_of(cards) if isinstance(cards, int) else sorted(cards)
    if ranks_per_suit == FRENCH_RANKS:
        ids.sort(key=lambda c: (SUIT_OF[c], RANK_OF[c]))
    return " ".join(format_card(c, ranks_per_suit) for c in ids)


def parse_card(text: str, ranks_per_suit: int = NUM_RANKS) -> int:
    """Card id from short notation (``"7d"``, ``"Kb"``, ``"10♣"``, ``"Cc"``).

    ``ranks_per_suit=13`` reads the 52-card deck's notation (``"8d"``, ``"10h"``, ``"Qs"``,
    ``"Kc"``; J, Q, K are ranks 11, 12, 13).
    """
    t = text.strip()
    if len(t) < 2:
        raise ValueError(f"cannot parse card {text!r}: expected a rank then a suit, e.g. '7d'")
    rank_txt, suit_txt = t[:-1], t[-1]
    if _french52(0, ranks_per_suit):
        ranks, suits, rank_symbols, suit_letters = (
            _RANK_PARSE_52,
            _SUIT_PARSE_52,
            FRENCH52_RANK_SYMBOLS,
            FRENCH52_SUIT_LETTERS,
        )
    else:
        ranks, suits, rank_symbols, suit_letters = _RANK_PARSE, _SUIT_PARSE, RANK_SYMBOLS, SUIT_LETTERS
    rank = ranks.get(rank_txt.upper())
    suit = suits.get(suit_txt.lower(), suits.get(suit_txt))
    if rank is None:
        raise ValueError(f"cannot parse card {text!r}: unknown rank {rank_txt!r} (use one of {' '.join(rank_symbols)})")
    if suit is None:
        raise ValueError(f"cannot parse card {text!r}: unknown suit {suit_txt!r} (use one of {' '.join(suit_letters)})")
    return card_id(suit, rank)


def parse_cards(text: str, ranks_per_suit: int = NUM_RANKS) -> list[int]:
    """Card ids from space- or comma-separated short notation, in the order given."""
    return [parse_card(tok, ranks_per_suit) for tok in text.replace(",", " ").split()]


def card_name(card: int, style: str = "english", ranks_per_suit: int = NUM_RANKS) -> str:
    """Display name of a card.

    Args:
        card: card id.
        style: ``"italian"`` (``Sette di denari``), ``"english"`` (``Seven of coins``)
            or ``"french"`` (French-suited deck: ``Seven of diamonds``, rank 9 is the Queen).
        ranks_per_suit: 13 names the cards of the 52-card deck, whatever the style, in
            French (``Eight of diamonds``, ``Queen of spades``).
    """
    card = check_card(card)
    r, s = RANK_OF[card] - 1, SUIT_OF[card]
    if style in ("italian", "english", "french") and _french52(card, ranks_per_suit):
        return f"{FRENCH52_RANK_NAMES[r]} of {FRENCH_SUIT_NAMES[s]}"
    if style == "italian":
        return f"{ITALIAN_RANK_NAMES[r]} di {ITALIAN_SUIT_NAMES[s]}"
    if style == "english":
        return f"{ENGLISH_RANK_NAMES[r]} of {ENGLISH_SUIT_NAMES[s]}"
    if style == "french":
        return f"{FRENCH_RANK_NAMES[r]} of {FRENCH_SUIT_NAMES[s]}"
    raise ValueError(f"unknown card name style {style!r}; use 'italian', 'english' or 'french'")
