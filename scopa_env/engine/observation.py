"""The observation vector: one float32 array per seat, laid out by :class:`ObservationLayout`.

Everything is relative to the observer: "side +1" is the next side after the
observer's in seat order, "seat +1" the next player. Cards are 40-wide planes
(52-wide for the 52-card deck, see the end) in card-id order (see
:mod:`scopa_env.engine.cards`). For ``num_players = n`` and ``num_sides = s`` (``s = n``
each for themselves, 2 for 4 or 6 in partnerships,
:meth:`~scopa_env.engine.rules.Rules.num_sides`):

===================  =================  ==================================================
name                 width              content
===================  =================  ==================================================
``hand``             40                 the observer's hand
``table``            40                 face-up table cards
``own_pile``         40                 cards captured by the observer's side this hand
``other_piles``      40 * (s - 1)       cards captured by side +1, +2, ... this hand
``played``           40 * n             cards played this hand by seat +0 (self), +1, ...
``unseen``           40                 cards the observer cannot see (other hands, stock)
``select_card``      40                 "select" mode: the hand card chosen, pending capture
``select_captured``  40                 "select" mode: table cards chosen so far
``scope``            s                  scope this hand, own side first (raw counts)
``scores``           s                  game points before this hand / target, own side first
``hand_counts``      n                  cards in hand / hand size, seat +0, +1, ...
``stock``            1                  cards left in the stock / 40
``seat_from_dealer`` n                  one-hot of (observer - dealer) mod n
``to_move``          n                  one-hot of (player to move - observer) mod n
``last_capturer``    n + 1              one-hot relative seat of the last capturer; last = none
``phase``            2                  one-hot: choosing a card, choosing captures ("select")
===================  =================  ==================================================

With 2 players the vector has 9 planes and is 360 + 16 = 376 wide.
Nothing in it depends on another player's hand or on the stock order.

Rules with declarations (:attr:`~scopa_env.engine.rules.Rules.bazzica_points`) add, and only
they (``ObservationLayout(n, declarations=True)``):

===================  =================  ==================================================
``revealed``         40 * (n - 1)       declared cards still in the hand of seat +1, +2, ...
                                        (placed after ``select_captured``)
``declaring``        1                  1 while the player to move decides on a declaration
                                        (last entry)
===================  =================  ==================================================

and ``unseen`` then leaves out the revealed cards. With 2 players that is 376 + 41 = 417.

Rules with Cirulla's wildcard (:attr:`~scopa_env.engine.rules.Rules.bonus_wildcard`, so with
declarations) add one more entry (``ObservationLayout.for_rules(n, rules)``):

===================  =================  ==================================================
``wild_rank``        10                 one-hot of the rank 1..10 the Seven of cups was
                                        declared as for a hand bonus this hand (it captures
                                        and is captured as that rank); all 0: a Seven
                                        (placed after ``phase``, before ``declaring``)
===================  =================  ==================================================

The declared rank is public: it is announced with the shown hand.

The 52-card deck (:attr:`~scopa_env.engine.rules.Rules.ranks_per_suit` = 13, preset
``french_52``) makes every card plane 52 wide (card ids 0..51) and the ``stock`` entry
cards left / 52; the rest is as above. With its 8 players, each for themselves, the
vector has 21 planes and is 1,092 + 52 = 1,144 wide.
"""

from __future__ import annotations

import functools
import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scopa_env.engine import house_rules
from scopa_env.engine.cards import NUM_CARDS, NUM_RANKS
from scopa_env.engine.game import Game
from scopa_env.engine.rules import Rules

_PLANE_FIELDS = (
    "hand",
    "table",
    "own_pile",
    "other_piles",
    "played",
    "unseen",
    "select_card",
    "select_captured",
    "revealed",
)


@dataclass(frozen=True)
class ObservationLayout:
    """Named slices of the observation vector for ``num_players`` players."""

    num_players: int
    declarations: bool = False
    """Add the ``revealed`` planes and the ``declaring`` flag (rules with declarations)."""
    wildcard: bool = False
    """Add the ``wild_rank`` entry (Cirulla's :attr:`~scopa_env.engine.rules.Rules.bonus_wildcard`);
    needs ``declarations``."""
    sides: int = 0
    """Number of sides; 0: the standard game's (``n`` for 2-3 players, two teams for 4 and 6)."""
    cards: int = NUM_CARDS
    """Width of each card plane: 40, or 52 for the 52-card deck (:attr:`~scopa_env.engine.rules.Rules.num_card_ids`)."""

    def __post_init__(self) -> None:
        if self.wildcard and not self.declarations:
            raise ValueError("ObservationLayout(wildcard=True) needs declarations=True (the wildcard is declared)")

    @classmethod
    def for_rules(cls, num_players: int, rules: Rules) -> ObservationLayout:
        """The layout of ``num_players`` under ``rules`` (declaration and wildcard entries where they apply)."""
        return cls(
            num_players,
            declarations=rules.declarations,
            wildcard=rules.bonus_wildcard and rules.declarations,
            sides=rules.num_sides(num_players),
            cards=rules.num_card_ids,
        )

    @property
    def num_sides(self) -> int:
        if self.sides:
            return self.sides
        return self.num_players if self.num_players <= 3 else 2

    @functools.cached_property
    def widths(self) -> dict[str, int]:
        n, s, c = self.num_players, self.num_sides, self.cards
        widths = {
            "hand": c,
            "table": c,
            "own_pile": c,
            "other_piles": c * (s - 1),
            "played": c * n,
            "unseen": c,
            "select_card": c,
            "select_captured": c,
        }
        if self.declarations:
            widths["revealed"] = c * (n - 1)
        widths |= {
            "scope": s,
            "scores": s,
            "hand_counts": n,
            "stock": 1,
            "seat_from_dealer": n,
            "to_move": n,
            "last_capturer": n + 1,
            "phase": 2,
        }
        if self.wildcard:
            widths["wild_rank"] = NUM_RANKS
        if self.declarations:
            widths["declaring"] = 1
        return widths

    @functools.cached_property
    def slices(self) -> dict[str, slice]:
        out, pos = {}, 0
        for name, width in self.widths.items():
            out[name] = slice(pos, pos + width)
            pos += width
        return out

    @functools.cached_property
    def size(self) -> int:
        return sum(self.widths.values())

    @property
    def num_planes(self) -> int:
        return sum(self.widths.get(f, 0) for f in _PLANE_FIELDS) // self.cards

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]


def write_observation(
    game: Game,
    seat: int,
    layout: ObservationLayout,
    out: np.ndarray,
    select_card: int | None = None,
    select_captured: int = 0,
) -> np.ndarray:
    """Fill ``out`` (float32, ``layout.size``) with ``seat``'s observation of ``game``."""
    n = game.num_players
    s = game.num_sides
    side = game.side_of[seat]
    piles = game.piles
    hands = game.hands
    seen = hands[seat] | game.table
    for p in piles:
        seen |= p
    if layout.declarations:
        for r in game.revealed:
            seen |= r
    planes = [hands[seat], game.table, piles[side]]
    planes += [piles[(side + k) % s] for k in range(1, s)]
    planes += [game.played[(seat + k) % n] for k in range(n)]
    planes += [game.rules.deck_mask & ~seen, 0 if select_card is None else 1 << select_card, select_captured]
    if layout.declarations:
        planes += [game.revealed[(seat + k) % n] for k in range(1, n)]
    # All planes as one integer, unpacked to bits in one numpy call.
    packed, shift = 0, 0
    width = layout.cards
    for m in planes:
        packed |= m << shift
        shift += width
    k = shift
    out[:k] = np.unpackbits(
        np.frombuffer(packed.to_bytes((k + 7) // 8, "little"), dtype=np.uint8), count=k, bitorder="little"
    )
    # The scalar tail, filled as a list: offsets below are relative to the end of the planes.
    tail = [0.0] * (layout.size - k)
    t = game.rules.target
    for j in range(s):
        sj = (side + j) % s
        tail[j] = game.scope[sj]
        tail[s + j] = game.scores[sj] / t
    o = 2 * s
    hs = game.rules.hand_size
    for j in range(n):
        tail[o + j] = hands[(seat + j) % n].bit_count() / hs
    o += n
    tail[o] = len(game.stock) / width
    o += 1
    tail[o + (seat - game.dealer) % n] = 1.0
    o += n
    tail[o + (game.current - seat) % n] = 1.0
    o += n
    lc = game.last_capturer
    tail[o + (n if lc is None else (lc - seat) % n)] = 1.0
    o += n + 1
    tail[o + (0 if select_card is None else 1)] = 1.0
    o += 2
    if layout.wildcard and game.wild_rank:
        tail[o + game.wild_rank - 1] = 1.0
    if layout.declarations:
        tail[-1] = float(bool(game.declare_queue))
    out[k:] = tail
    return out


_U8 = np.dtype(np.uint8)
_F32 = np.dtype(np.float32)
_empty = np.empty
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float32)
"""Row ``b``: the 8 bits of byte ``b``, lowest first, as float32 (unpacks planes with one ``take``)."""


def _python_observer(layout: ObservationLayout, seat: int) -> Callable[[Game, int | None, int], np.ndarray]:
    """:func:`write_observation` for one seat of one layout as straight-line code: the seat
    rotations are constants, every plane is shifted into one integer in one expression and
    the scalar tail is packed as float32 with one ``struct`` call (no loops, no list).

    The generated text holds only Python ints taken from the layout (``operator.index``: a
    field of another type raises ``TypeError`` before any code is built) and fixed names."""
    n, s, w, seat = (operator.index(v) for v in (layout.num_players, layout.num_sides, layout.cards, seat))
    size = operator.index(layout.size)
    side = seat if s == n else seat % s  # Rules.sides: each for themselves, or two teams of alternate seats
    seats = [(seat + k) % n for k in range(n)]
    sides = [(side + k) % s for k in range(s)]
    bits = operator.index(layout.num_planes) * w
    planes = [f"h{seat}", "table", *(f"p{j}" for j in sides), *(f"played[{j}]" for j in seats)]
    planes += ["(rules.deck_mask & ~seen)", None, "select_captured"]  # None: the select_card plane
    if layout.declarations:
        planes += [f"revealed[{j}]" for j in seats[1:]]
    packed = " | ".join(f"{p} << {i * w}" if i else p for i, p in enumerate(planes) if p is not None)
    select_shift = planes.index(None) * w
    tail = [f"scope[{j}]" for j in sides] + [f"scores[{j}] / t" for j in sides]
    tail += [f"h{j}.bit_count() / hs" for j in seats] + [f"len(game.stock) / {w}"]
    tail += [f"dealer == {(seat - k) % n}" for k in range(n)]
    tail += [f"current == {(seat + k) % n}" for k in range(n)]
    tail += [f"lc == {(seat + k) % n}" for k in range(n)] + ["lc is None"]
    tail += ["select_card is None", "select_card is not None"]
    if layout.wildcard:
        tail += [f"wild == {r}" for r in range(1, NUM_RANKS + 1)]
    if layout.declarations:
        tail += ["bool(game.declare_queue)"]
    assert bits + len(tail) == size, (bits, len(tail), size)
    seen = " | ".join([f"h{seat}", "table", *(f"p{j}" for j in range(s))])
    if layout.declarations:
        seen += " | " + " | ".join(f"revealed[{j}]" for j in range(n))
    if bits % 8 == 0:  # whole bytes: each byte's row of bits straight into the new array
        unpack = (
            f"_BYTE_BITS.take(_frombuffer(packed.to_bytes({bits // 8}, 'little'), _U8), 0, "
            f"_ndarray(({bits // 8}, 8), _F32, out), 'clip')"
        )
    else:
        unpack = (
            f"out[:{bits}] = _unpackbits(_frombuffer(packed.to_bytes({(bits + 7) // 8}, 'little'), _U8), "
            f"count={bits}, bitorder='little')"
        )
    lines = [
        "def observe_python(game, select_card, select_captured):",
        "    hands = game.hands",
        "    piles = game.piles",
        "    played = game.played",
        "    table = game.table",
        "    rules = game.rules",
        *(f"    h{j} = hands[{j}]" for j in range(n)),
        *(f"    p{j} = piles[{j}]" for j in range(s)),
        *(["    revealed = game.revealed"] if layout.declarations else []),
        f"    seen = {seen}",
        f"    packed = {packed}",
        "    if select_card is not None:",
        f"        packed |= 1 << ({select_shift} + select_card)",
        f"    out = _empty({size}, _F32)",
        f"    {unpack}",
        "    scope = game.scope",
        "    scores = game.scores",
        "    t = rules.target",
        "    hs = rules.hand_size",
        "    dealer = game.dealer",
        "    current = game.current",
        "    lc = game.last_capturer",
        *(["    wild = game.wild_rank"] if layout.wildcard else []),
        f"    _pack(out, {4 * bits}, {', '.join(tail)})",
        "    return out",
    ]
    namespace = {
        "_BYTE_BITS": _BYTE_BITS,
        "_U8": _U8,
        "_F32": _F32,
        "_empty": np.empty,
        "_frombuffer": np.frombuffer,
        "_ndarray": np.ndarray,
        "_unpackbits": np.unpackbits,
        "_pack": struct.Struct(f"<{len(tail)}f").pack_into,
    }
    exec(compile("\n".join(lines), f"<observation of seat {seat}, {layout}>", "exec"), namespace)  # noqa: S102
    return namespace["observe_python"]


def observation_bounds(layout: ObservationLayout, rules: Rules | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Low and high bounds of every entry (for the Box space).

    Game scores can go below 0 only under :attr:`~scopa_env.engine.rules.Rules.piva` or a house
    scoring extra (:attr:`~scopa_env.engine.rules.Rules.house_rules`), whose points may be negative.
    """
    low = np.zeros(layout.size, dtype=np.float32)
    if rules is not None and (rules.piva or house_rules.scoring_extras(rules.house_rules)):
        low[layout["scores"]] = -np.inf
    high = np.ones(layout.size, dtype=np.float32)
    high[layout["scope"]] = layout.cards
    high[layout["scores"]] = np.inf
    high[layout["hand_counts"]] = layout.cards
    return low, high
