"""The observation vector: one float32 array per seat, laid out by :class:`ObservationLayout`.

Everything is relative to the observer: "side +1" is the next side after the
observer's in seat order, "seat +1" the next player. Cards are 40-wide planes in
card-id order (see :mod:`scopa_env.cards`). For ``num_players = n`` and
``num_sides = s`` (``s = n`` for 2 and 3 players, 2 for 4 and 6):

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

With 2 players the vector has 8 + 1 + 2 = 11 planes and is 440 + 19 = 459 wide.
Nothing in it depends on another player's hand or on the stock order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scopa_env.cards import NUM_CARDS
from scopa_env.game import Game

_PLANE_FIELDS = ("hand", "table", "own_pile", "other_piles", "played", "unseen", "select_card", "select_captured")


@dataclass(frozen=True)
class ObservationLayout:
    """Named slices of the observation vector for ``num_players`` players."""

    num_players: int

    @property
    def num_sides(self) -> int:
        return self.num_players if self.num_players <= 3 else 2

    @property
    def widths(self) -> dict[str, int]:
        n, s = self.num_players, self.num_sides
        return {
            "hand": NUM_CARDS,
            "table": NUM_CARDS,
            "own_pile": NUM_CARDS,
            "other_piles": NUM_CARDS * (s - 1),
            "played": NUM_CARDS * n,
            "unseen": NUM_CARDS,
            "select_card": NUM_CARDS,
            "select_captured": NUM_CARDS,
            "scope": s,
            "scores": s,
            "hand_counts": n,
            "stock": 1,
            "seat_from_dealer": n,
            "to_move": n,
            "last_capturer": n + 1,
            "phase": 2,
        }

    @property
    def slices(self) -> dict[str, slice]:
        out, pos = {}, 0
        for name, width in self.widths.items():
            out[name] = slice(pos, pos + width)
            pos += width
        return out

    @property
    def size(self) -> int:
        return sum(self.widths.values())

    @property
    def num_planes(self) -> int:
        return sum(self.widths[f] for f in _PLANE_FIELDS) // NUM_CARDS

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]


# _BYTE_BITS[b] are the 8 bits of byte b, least significant first.
_PLANE_BYTES = NUM_CARDS // 8


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
    seen = game.hands[seat] | game.table
    for p in piles:
        seen |= p
    planes = [game.hands[seat], game.table, piles[side]]
    planes += [piles[(side + k) % s] for k in range(1, s)]
    planes += [game.played[(seat + k) % n] for k in range(n)]
    planes += [game.rules.deck_mask & ~seen, 0 if select_card is None else 1 << select_card, select_captured]
    packed = b"".join(m.to_bytes(_PLANE_BYTES, "little") for m in planes)
    bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8), bitorder="little")
    k = bits.shape[0]
    out[:k] = bits
    out[k:] = 0
    sl = layout.slices
    o = sl["scope"].start
    t = game.rules.target
    hs = game.rules.hand_size
    for j in range(s):
        sj = (side + j) % s
        out[o + j] = game.scope[sj]
        out[o + s + j] = game.scores[sj] / t
    o = sl["hand_counts"].start
    for j in range(n):
        out[o + j] = game.hands[(seat + j) % n].bit_count() / hs
    out[sl["stock"].start] = len(game.stock) / NUM_CARDS
    out[sl["seat_from_dealer"].start + (seat - game.dealer) % n] = 1
    out[sl["to_move"].start + (game.current - seat) % n] = 1
    lc = game.last_capturer
    out[sl["last_capturer"].start + (n if lc is None else (lc - seat) % n)] = 1
    out[sl["phase"].start + (0 if select_card is None else 1)] = 1
    return out


def observation_bounds(layout: ObservationLayout) -> tuple[np.ndarray, np.ndarray]:
    """Low and high bounds of every entry (for the Box space)."""
    low = np.zeros(layout.size, dtype=np.float32)
    high = np.ones(layout.size, dtype=np.float32)
    high[layout["scope"]] = NUM_CARDS
    high[layout["scores"]] = np.inf
    high[layout["hand_counts"]] = NUM_CARDS
    return low, high
