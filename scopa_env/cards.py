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
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

NUM_SUITS = 4
NUM_RANKS = 10
NUM_CARDS = NUM_SUITS * NUM_RANKS

COINS, CUPS, SWORDS, BATONS = 0, 1, 2, 3
SUITS = (COINS, CUPS, SWORDS, BATONS)

ACE, FANTE, CAVALLO, RE = 1, 8, 9, 10
JACK, QUEEN, KING = FANTE, CAVALLO, RE
RANKS = tuple(range(1, NUM_RANKS + 1))

ALL_CARDS_MASK = (1 << NUM_CARDS) - 1


def card_id(suit: int, rank: int) -> int:
    """Return the id of the card of ``suit`` (0..3) and ``rank`` (1..10)."""
    if suit not in SUITS:
        raise ValueError(f"suit must be one of {SUITS}, got {suit!r}")
    if rank not in RANKS:
        raise ValueError(f"rank must be one of 1..10, got {rank!r}")
    return suit * NUM_RANKS + rank - 1


SUIT_OF: tuple[int, ...] = tuple(c // NUM_RANKS for c in range(NUM_CARDS))
RANK_OF: tuple[int, ...] = tuple(c % NUM_RANKS + 1 for c in range(NUM_CARDS))

SETTEBELLO = card_id(COINS, 7)
RE_BELLO = card_id(COINS, RE)

#: Standard primiera scale, indexed by rank (index 0 unused).
PRIMIERA_BY_RANK: tuple[int, ...] = (0, 16, 12, 13, 14, 15, 18, 21, 10, 10, 10)

#: Bitmask of the four cards of each rank, indexed by rank (index 0 empty).
RANK_MASK: tuple[int, ...] = (0,) + tuple(sum(1 << card_id(s, r) for s in SUITS) for r in RANKS)
#: Bitmask of the ten cards of each suit.
SUIT_MASK: tuple[int, ...] = tuple(((1 << NUM_RANKS) - 1) << (s * NUM_RANKS) for s in SUITS)


def suit_of(card: int) -> int:
    """Suit (0..3) of a card id."""
    return SUIT_OF[check_card(card)]


def rank_of(card: int) -> int:
    """Rank (1..10) of a card id; it is also the capture value."""
    return RANK_OF[check_card(card)]


def check_card(card: int) -> int:
    """Return ``card`` if it is a valid card id, else raise ``ValueError``."""
    if isinstance(card, bool) or not isinstance(card, numbers.Integral) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"not a card id (0..39): {card!r}")
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
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


# --- notation -----------------------------------------------------------------

RANK_SYMBOLS = ("A", "2", "3", "4", "5", "6", "7", "J", "Q", "K")
SUIT_LETTERS = ("d", "c", "s", "b")
FRENCH_SUIT_SYMBOLS = ("♦", "♥", "♠", "♣")
ITALIAN_SUIT_SYMBOLS = ("🪙", "🏆", "🗡", "🪵")

_RANK_PARSE = {s: i + 1 for i, s in enumerate(RANK_SYMBOLS)}
_RANK_PARSE.update({"1": 1, "8": 8, "9": 9, "10": 10, "F": 8, "C": 9, "H": 9, "R": 10})
_SUIT_PARSE = {s: i for i, s in enumerate(SUIT_LETTERS)}
_SUIT_PARSE.update({s: i for i, s in enumerate(FRENCH_SUIT_SYMBOLS)})

ITALIAN_RANK_NAMES = ("Asso", "Due", "Tre", "Quattro", "Cinque", "Sei", "Sette", "Fante", "Cavallo", "Re")
ITALIAN_SUIT_NAMES = ("denari", "coppe", "spade", "bastoni")
ENGLISH_RANK_NAMES = ("Ace", "Two", "Three", "Four", "Five", "Six", "Seven", "Jack", "Horse", "King")
ENGLISH_SUIT_NAMES = ("coins", "cups", "swords", "batons")
FRENCH_RANK_NAMES = ("Ace", "Two", "Three", "Four", "Five", "Six", "Seven", "Jack", "Queen", "King")
FRENCH_SUIT_NAMES = ("diamonds", "hearts", "spades", "clubs")


def format_card(card: int) -> str:
    """Short notation of a card: ``format_card(6) == "7d"``."""
    card = check_card(card)
    return RANK_SYMBOLS[RANK_OF[card] - 1] + SUIT_LETTERS[SUIT_OF[card]]


def format_cards(cards: Iterable[int] | int) -> str:
    """Space-separated short notation of several cards (ids or a bitmask), sorted by id."""
    ids = cards_of(cards) if isinstance(cards, int) else sorted(cards)
    return " ".join(format_card(c) for c in ids)


def parse_card(text: str) -> int:
    """Card id from short notation (``"7d"``, ``"Kb"``, ``"10♣"``, ``"Cc"``)."""
    t = text.strip()
    if len(t) < 2:
        raise ValueError(f"cannot parse card {text!r}: expected a rank then a suit, e.g. '7d'")
    rank_txt, suit_txt = t[:-1], t[-1]
    rank = _RANK_PARSE.get(rank_txt.upper())
    suit = _SUIT_PARSE.get(suit_txt.lower(), _SUIT_PARSE.get(suit_txt))
    if rank is None:
        raise ValueError(f"cannot parse card {text!r}: unknown rank {rank_txt!r} (use one of {' '.join(RANK_SYMBOLS)})")
    if suit is None:
        raise ValueError(f"cannot parse card {text!r}: unknown suit {suit_txt!r} (use one of {' '.join(SUIT_LETTERS)})")
    return card_id(suit, rank)


def parse_cards(text: str) -> list[int]:
    """Card ids from space- or comma-separated short notation, in the order given."""
    return [parse_card(tok) for tok in text.replace(",", " ").split()]


def card_name(card: int, style: str = "english") -> str:
    """Display name of a card.

    Args:
        card: card id.
        style: ``"italian"`` (``Sette di denari``), ``"english"`` (``Seven of coins``)
            or ``"french"`` (French-suited deck: ``Seven of diamonds``, rank 9 is the Queen).
    """
    card = check_card(card)
    r, s = RANK_OF[card] - 1, SUIT_OF[card]
    if style == "italian":
        return f"{ITALIAN_RANK_NAMES[r]} di {ITALIAN_SUIT_NAMES[s]}"
    if style == "english":
        return f"{ENGLISH_RANK_NAMES[r]} of {ENGLISH_SUIT_NAMES[s]}"
    if style == "french":
        return f"{FRENCH_RANK_NAMES[r]} of {FRENCH_SUIT_NAMES[s]}"
    raise ValueError(f"unknown card name style {style!r}; use 'italian', 'english' or 'french'")
