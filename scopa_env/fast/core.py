"""Compiled Scopa kernels: N games in one ``int64`` state matrix, stepped by numba.

This module is the machine room of :class:`scopa_env.fast.batch.BatchedScopa`; read
that class first. Everything here mirrors :mod:`scopa_env.engine.game`,
:mod:`scopa_env.engine.rules` (``legal_pairs``), :mod:`scopa_env.engine.scoring`,
:mod:`scopa_env.engine.observation` and :mod:`scopa_env.aec.scopa_v0` exactly, and
``tests/test_fast.py`` checks that step by step against them.

Card sets are ``int64`` bitmasks (bit ``i`` is card id ``i``, see :mod:`scopa_env.engine.cards`).

State matrix ``S[N, NUM_COLS]`` (one row per game)::

    column          width  content
    --------------  -----  -----------------------------------------------------------
    COL_HAND        8      per seat, cards in hand
    COL_PLAYED      8      per seat, cards played this hand
    COL_PILE        8      per side, cards captured this hand
    COL_SCOPE       8      per side, scope this hand
    COL_SCOPE_PTS   8      per side, what those scope are worth (Rules.scopa_value)
    COL_SCORE       8      per side, game points
    COL_TABLE       1      face-up table cards
    COL_CURRENT     1      seat to move
    COL_DEALER      1      seat that dealt this hand
    COL_LASTCAP     1      seat that captured last this hand, -1 for none
    COL_IN_HANDS    1      cards left in all hands
    COL_STOCK_POS   1      index in COL_DECK of the next stock card
    COL_HAND_NUM    1      hands finished in this game
    COL_PENDING     1      "select" mode: hand card chosen, -1 for none
    COL_SELECTED    1      "select" mode: table cards chosen so far
    COL_LEARNER     1      the learner's seat (learner mode), else -1
    COL_OPPONENT    1      kind of this game's compiled opponents (OPPONENT_*), else -1
    COL_PHASE       1      what the seat to move decides: PHASE_PLAY (a card),
                           PHASE_FIRST_CARD (Chkobba: keep or table the drawn card) or
                           PHASE_DECLARE (bazzica_points, hand_bonus_points: declare or pass)
    COL_REVEALED    8      per seat, declared cards still in that hand (shown to all)
    COL_DECLARED    8      per side, declaration points scored this hand (in COL_SCORE already)
    COL_QUEUE       1      seats still to decide on a declaration this deal (bitmask; the
                           first from the dealer's left is the seat to move)
    COL_DECLARERS   1      seats that declared in this deal (bitmask), scored when the queue empties
    COL_WILD        1      Cirulla: the rank the Seven of cups was declared as this hand (0: a Seven)
    COL_REDEALS     1      deals thrown in before this hand's (the dealer moves on under redeal_next_dealer)
    COL_DECK        52     this hand's deal order (after any redeal; P_DECK_SIZE used)

Widths: MAX_PLAYERS (8) per seat, MAX_SIDES (8) per side, MAX_CARDS (52) for the deal order.

The deck: card ids 0..39 are the 40-card deck's (``suit * 10 + rank - 1``, a suit a 10-bit
block); under ``P_FRENCH`` (the 52-card deck, ``Rules.ranks_per_suit`` = 13) ids 40..51 are
its Jacks, Queens and Kings, ``40 + suit * 3 + (rank - 11)`` (:mod:`scopa_env.engine.cards`). Ranks,
rank masks and suit masks of the 52-card deck go through :func:`_rank`, :func:`_rank_mask`
and :func:`_suit_mask` with the ``french`` flag; the 40-card paths keep ``card % RANK_SPAN``
(``legal_pairs``'s fast path is the 40-card deck's only: ``P_PLAIN`` is 0 for the other).

Rules and modes travel in ``P`` (int64, indices ``P_*``), floats in ``F`` (``F_*``),
the sorted deck, the per-card start of the "move" enumeration and the primiera rank
groups in ``TBL`` (``TBL_*``), and the enumeration itself in ``PAIRS[M, 2]`` (card,
captured mask). ``H`` holds the heuristic player's weights (``H_*``), or is ``None``
where no heuristic player moves: numba then prunes the heuristic's code at compile time.

Per-step outputs: ``info[N, NUM_INFO]`` (``INFO_*``), ``rewards[N, players]``,
``hand_score[N, MAX_SIDES, NUM_SCORE_FIELDS]`` (``SCORE_*``, as :func:`scopa_env.engine.scoring.score_hand`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

MAX_PLAYERS = 8  # french_52 seats 8 players
MAX_SIDES = MAX_PLAYERS  # every seat its own side (partnerships=()); two sides in partnerships
NUM_SUITS = 4
NUM_CARDS = 40  # the 40-card deck (cards.NUM_CARDS): ids 0..39
MAX_CARDS = 52  # the 52-card deck (cards.MAX_CARDS): every card id is below it
CONFIRM = NUM_CARDS  # "select" mode's CONFIRM in the 40-card deck; in general P[P_CARD_IDS]
NUM_SELECT_ACTIONS = NUM_CARDS + 1  # "select" actions of the 40-card deck; in general P[P_CARD_IDS] + 1
RANK_SPAN = 10  # ranks per suit of the 40-card deck, the width of a suit's block of ids
PICTURES = 3  # the 52-card deck's Jack, Queen, King per suit (ids 40 + suit * 3 + rank - 11)
FRENCH_RANKS = RANK_SPAN + PICTURES  # cards.FRENCH_RANKS: ranks 1..13
PICTURE_BITS = (1 << PICTURES) - 1
KINGS_MASK = (1 << 9) | (1 << 19) | (1 << 29) | (1 << 39)
ONE_OF_EACH_SUIT = 1 | (1 << 10) | (1 << 20) | (1 << 30)
JACKS_52 = sum(1 << (NUM_CARDS + PICTURES * s) for s in range(NUM_SUITS))  # the 52-card deck's Jacks (rank 11)
KINGS_52 = JACKS_52 << (PICTURES - 1)  # the 52-card deck's Kings (rank 13)
SUIT_BITS = (1 << RANK_SPAN) - 1
KINGS_FOR_REDEAL = 3
CAPPOTTO_LEAD = 7
SETTEBELLO = 6  # rank index of the Seven within a suit
MAX_RANK = 10
PLAIN_SUBSETS = 4051  # subsets of the 40-card deck adding up to 10 or less, the empty one included
NO_SEAT = -1
TAKE_ALL_ID = -1  # captured mask of an Ace's compact take-all id (scopa_env.engine.actions.TAKE_ALL)

# --- state columns --------------------------------------------------------------
COL_HAND = 0
COL_PLAYED = COL_HAND + MAX_PLAYERS
COL_PILE = COL_PLAYED + MAX_PLAYERS
COL_SCOPE = COL_PILE + MAX_SIDES
COL_SCOPE_PTS = COL_SCOPE + MAX_SIDES
COL_SCORE = COL_SCOPE_PTS + MAX_SIDES
COL_TABLE = COL_SCORE + MAX_SIDES
COL_CURRENT = COL_TABLE + 1
COL_DEALER = COL_CURRENT + 1
COL_LASTCAP = COL_DEALER + 1
COL_IN_HANDS = COL_LASTCAP + 1
COL_STOCK_POS = COL_IN_HANDS + 1
COL_HAND_NUM = COL_STOCK_POS + 1
COL_PENDING = COL_HAND_NUM + 1
COL_SELECTED = COL_PENDING + 1
COL_LEARNER = COL_SELECTED + 1
COL_OPPONENT = COL_LEARNER + 1
COL_PHASE = COL_OPPONENT + 1
COL_REVEALED = COL_PHASE + 1
COL_DECLARED = COL_REVEALED + MAX_PLAYERS
COL_QUEUE = COL_DECLARED + MAX_SIDES
COL_DECLARERS = COL_QUEUE + 1
COL_WILD = COL_DECLARERS + 1
COL_REDEALS = COL_WILD + 1
COL_DECK = COL_REDEALS + 1
NUM_COLS = COL_DECK + MAX_CARDS

# --- int parameters P -------------------------------------------------------------
P_PLAYERS = 0
P_SIDES = 1
P_HAND_SIZE = 2
P_TABLE_SIZE = 3
P_DECK_SIZE = 4
P_DECK_MASK = 5
P_KINGS_REDEAL = 6
P_PRIORITY = 7
P_OPTIONAL = 8
P_LAST_SCOPA = 9
P_SCOPA_POINTS = 10
P_TARGET = 11
P_CAPPOTTO = 12
P_EPISODE_HAND = 13  # 1: an episode is one hand; 0: a whole game
P_REWARD_POINTS = 14  # 1: hand-point margin at every hand end; 0: +-1 at the end
P_SELECT = 15  # 1: "select" actions; 0: "move" ids
P_OPPONENT = 16  # OPPONENT_NONE, one kind (OPPONENT_RANDOM, _GREEDY, _HEURISTIC) or OPPONENT_MIXED
P_LEARNER_SEAT = 17  # fixed learner seat, or LEARNER_RANDOM
P_OBS_SIZE = 18
P_LEGAL_WIDTH = 19
P_NUM_MOVES = 20
P_PLAIN = 21  # standard capture pattern in the 40-card deck (the fast path of legal_pairs)
P_CAPTURE_EQUAL = 22
P_CAPTURE_SUM = 23  # 0: off
P_MAX_CAPTURE = 24  # 0: no limit
P_FEWEST = 25
P_MAX_SUM = 26  # largest table subset sum any capture needs
P_SUB_CAP = 27  # scratch size for the table's subsets
P_SCRATCH = 28  # scratch size for a position's legal moves, then a heuristic reply's (one card per rank)
P_ACES_REDEAL = 29
P_REDEAL_SAME_RANK = 30  # 0: off
P_BONUS_SUIT = 31  # suit of "most coins" and of the settebello
P_SEVENS = 32  # prime_rule "sevens": most Sevens (then Sixes) instead of the primiera
P_DOUBLE_BELOW = 33  # Hurrikan double game; 0: off
P_FIRST_DEAL = 34  # cards per player in the first deal of a hand
P_TAKE_ALL = 35  # ace_takes_all
P_TAKE_ALL_SCOPA = 36  # ace_takes_all_scopa
P_ACE_ITSELF = 37  # ace_takes_itself: an Ace played to the empty table goes to the pile, move (ace, 1 << ace)
# scoring extras (scopa_env.engine.scoring._extras, game_events)
P_RE_BELLO = 38
P_SEVEN_OF_CUPS = 39
P_PALLE_DEL_CANE = 40
P_NAPOLA = 41  # NAPOLA_OFF, NAPOLA_PAGAT_6, NAPOLA_PAGAT_9 or NAPOLA_WIKIPEDIA
P_SCALETTE = 42
P_PICCOLA_GRANDE = 43
P_PIVA = 44
P_ALL_COINS_WINS = 45
P_COINS_RESET = 46  # 0: off
P_SCOPA_VALUE = 47  # SCOPA_VALUE_POINTS, SCOPA_VALUE_CARD or SCOPA_VALUE_CARDS (Libyan)
P_BY_COUNTS = 48  # primiera_by_counts: most cards of the best primiera group, then the next (TBL_PRIME_GROUPS)
P_PRIME_GROUPS = 49  # number of rank groups in TBL_PRIME_GROUPS
P_PRIME_ALL_SUITS = 50  # primiera_all_suits: a pile lacking a suit has primiera 0 (else the suit adds 0)
P_FIRST_CARD = 51  # first_card_choice (Chkobba): each hand opens with the drawn card's decision
P_CLAIM_OUT = 52  # claim_out (chiamarsi fuori): the mover may claim with (highest card, its own bit)
P_DECLARE = 53  # DECLARE_*: declarations after every three-card deal (observation: revealed, declaring)
P_BAZZICA = 54  # 3 entries, Rules.bazzica_points: bazzica of different ranks, with a pair, bazzicotto
P_HAND_BONUS = P_BAZZICA + 3  # 2 entries, Rules.hand_bonus_points (total under 10, three of a kind); 0 = off
P_TABLE_BONUS = P_HAND_BONUS + 2  # table_bonus (Cirulla): an initial table of 15 (30) is the dealer's, one (two) scope
P_WILDCARD = P_TABLE_BONUS + 1  # bonus_wildcard: the Seven of cups stands for any card in the bonuses
P_WILD_IDS = P_WILDCARD + 1  # MoveEnumeration.wildcard: the Seven of cups has a take-all id (with ace_takes_all)
P_WILD_OBS = P_WILD_IDS + 1  # ObservationLayout.wildcard: the observation has the wild_rank entry
P_REDEAL_ACES = P_WILD_OBS + 1  # redeal_aces: deal again when the initial table holds this many Aces; 0 = off
P_REDEAL_NEXT = P_REDEAL_ACES + 1  # redeal_next_dealer: a thrown-in deal is dealt again by the next dealer
P_FRENCH = P_REDEAL_NEXT + 1  # 1: the 52-card deck (Rules.ranks_per_suit = 13, ids 40..51 its pictures)
P_CARD_IDS = P_FRENCH + 1  # Rules.num_card_ids (40 or 52): card plane width; "select" mode's CONFIRM
NUM_PARAMS = P_CARD_IDS + 1

DECLARE_NONE, DECLARE_BAZZICA, DECLARE_HAND_BONUS = range(3)  # P_DECLARE: bazzica_points, hand_bonus_points

PHASE_PLAY = 0  # COL_PHASE: the seat to move plays a card (0, so a zeroed row is a card-play position)
PHASE_FIRST_CARD = 1  # Chkobba: keep the drawn card (card, 1 << card) or table it (card, 0)
PHASE_DECLARE = 2  # declare (highest card, 1 << it), showing the hand, or pass (it, 0); Cirulla's wildcard: mover_pairs
DECLARATION_CARDS = 3  # rules.DECLARATION_CARDS: only three-card hands declare
BAZZICA_MAX = 9  # scoring.BAZZICA_MAX: a bazzica adds up to 9 or less
BAZZICA_FACE = 10  # scoring.BAZZICA_VALUES: pictures count 10, the other cards their rank
BAZZICA_FACE_FROM = 8  # the lowest picture rank
BAZZICOTTO_RANK_SPAN = 100  # a declaration's strength (lower is better): kind * 100 + rank or total
WILDCARD = 16  # rules.WILDCARD: Cirulla's Seven of cups/hearts
WILDCARD_RANK = 7  # rules.WILDCARD_RANK: the rank it captures as unless declared otherwise
HAND_BONUS_BELOW = 10  # scoring.HAND_BONUS_BELOW: three cards adding up to less than 10
WILD_TOTAL_RANK = 1  # scoring.WILD_TOTAL_RANK: the lowest rank the wildcard stands for in the total
WILD_RANK_LABEL_SUIT = 0  # scoring.WILD_RANK_LABEL_SUIT (coins): declaring the wildcard as r names the coin of r
TABLE_BONUS_ONE = 15  # scoring.TABLE_BONUS_TOTALS: an initial table of 15 is one scopa for the dealer ...
TABLE_BONUS_TWO = 30  # ... one of 30 two scope
BONUS_THREE_OF_A_KIND, BONUS_TOTAL = range(2)  # a hand bonus's strength (scoring._hand_bonus), -1 for none

NAPOLA_OFF, NAPOLA_PAGAT_6, NAPOLA_PAGAT_9, NAPOLA_WIKIPEDIA = range(4)  # rules.NAPOLA_READINGS order
SCOPA_VALUE_POINTS, SCOPA_VALUE_CARD, SCOPA_VALUE_CARDS = range(3)  # rules.SCOPA_VALUES order
NAPOLA_MIN = 3  # scoring.NAPOLA_MIN: a run from the Ace (or King) scores from three cards
NAPOLA_CAP_6 = 6  # scoring.NAPOLA_CAP
NAPOLA_CAP_9 = 10
SCALETTA_BASSA_CAP = 9
SCALETTA_ALTA_BASE = 5
PIVA_POINTS = -5
PIVA_CARD = 31  # the Two of batons
SEVEN_OF_CUPS_CARD = 16
KING = 9  # rank index of the King within a suit
PRIME_GROUP_BITS = 6  # primiera_by_counts: a group's count (<= 40) in 6 bits, 10 groups in one int64

OPPONENT_NONE = -1
OPPONENT_MIXED = -2  # each game draws its opponents' kind at reset, weights F_OPP_CUMULATIVE
OPPONENT_RANDOM = 0
OPPONENT_GREEDY = 1
OPPONENT_HEURISTIC = 2
NUM_OPPONENT_KINDS = 3
LEARNER_RANDOM = -1
MISSING_SUIT_BASE = 8  # heuristic: primiera baseline of a suit the pile lacks (agents.heuristic)

# --- float parameters F -----------------------------------------------------------
F_PRIMIERA = 0  # FRENCH_RANKS values, ranks 1..10 (1..13 in the 52-card deck)
F_GREEDY_VALUES = F_PRIMIERA + FRENCH_RANKS  # MAX_CARDS card values of the greedy opponent
F_GREEDY_SCOPA = F_GREEDY_VALUES + MAX_CARDS
F_GREEDY_TOL = F_GREEDY_SCOPA + 1
F_OPP_CUMULATIVE = F_GREEDY_TOL + 1  # NUM_OPPONENT_KINDS cumulative mixture weights (last positive one: inf)
NUM_FLOATS = F_OPP_CUMULATIVE + NUM_OPPONENT_KINDS

# --- heuristic weights H (agents.heuristic.HeuristicWeights defaults) ----------------------
# H is None where no heuristic player moves: numba then prunes the heuristic's code at
# compile time, which keeps the cold start of the other kernels short.
H_CARD = 0
H_COIN = 1
H_SETTEBELLO = 2
H_PRIMIERA = 3
H_SCOPA = 4
H_REPLY = 5
H_BLOCK = 6
H_LEFTOVER = 7
H_TRAIL = 8
NUM_HEURISTIC = 9

# --- tables TBL -----------------------------------------------------------------------
TBL_DECK = 0  # MAX_CARDS entries: the deck's card ids ascending (P_DECK_SIZE used)
TBL_CARD_START = TBL_DECK + MAX_CARDS  # MAX_CARDS + 1 entries: move ids of card c are [start[c], start[c + 1])
TBL_NEXT_DEAL = TBL_CARD_START + MAX_CARDS + 1  # MAX_CARDS + 1 entries: cards per player dealt when the stock holds k
TBL_PRIME_GROUPS = (
    TBL_NEXT_DEAL + MAX_CARDS + 1
)  # P_PRIME_GROUPS card masks, ranks grouped by primiera value, best first (40-card deck)
NUM_TBL = TBL_PRIME_GROUPS + RANK_SPAN

# --- per-game info outputs ----------------------------------------------------------
INFO_TO_PLAY = 0  # seat whose observation and legal actions were written
INFO_TERMINATED = 1  # the episode ended in this step (the game was then reset)
INFO_HAND_ENDED = 2  # a hand ended in this step (hand_score holds it)
INFO_WINNER = 3  # on termination: winning side, -1 for none
INFO_LEGAL_COUNT = 4  # "move" mode: number of legal move ids
INFO_FINAL_SCORE = 5  # on termination: MAX_SIDES columns, game points per side
INFO_OBS_SEAT = INFO_FINAL_SCORE + MAX_SIDES  # on termination: seat of final_obs
INFO_CHOICE_CARD = INFO_OBS_SEAT + 1  # OP_CHOOSE: card of the compiled player's move
INFO_CHOICE_MASK = INFO_CHOICE_CARD + 1  # OP_CHOOSE: its captured mask
INFO_WINS = INFO_CHOICE_MASK + 1  # playout_kernel, row 0: games won per side (MAX_SIDES columns), then without a winner
INFO_FINAL_OPPONENT = INFO_WINS + MAX_SIDES + 1  # on termination: opponent kind of the finished game (-1: none)
INFO_CLAIM = INFO_FINAL_OPPONENT + 1  # the game ended by a claim in this step: CLAIM_SOUND or CLAIM_FALSE, else 0
NUM_INFO = INFO_CLAIM + 1

CLAIM_NONE, CLAIM_SOUND, CLAIM_FALSE = range(3)  # Game.win_reason None (or other), "claim", "false_claim"

# --- hand score fields (the keys of scopa_env.engine.scoring.score_hand) ---------------------
SCORE_FIELDS = (
    "cards",
    "coins",
    "settebello",
    "primiera",
    "scope",
    "total",
    "num_cards",
    "num_coins",
    "primiera_value",
    "num_scope",
    "seven_majority",
    "num_sevens",
    "num_sixes",
    "double_game",
    "re_bello",
    "seven_of_cups",
    "palle_del_cane",
    "napola",
    "scaletta_bassa",
    "scaletta_alta",
    "piccola",
    "grande",
    "piva",
)
"""Columns of ``hand_score``; from ``seven_majority`` on they exist in the engine's dicts only under
the rules that score them: ``prime_rule="sevens"`` (``seven_majority``, ``num_sevens``,
``num_sixes``; ``primiera_by_counts`` has the last two too), ``double_game_below``
(``double_game``) and the scoring extras (``scopa_env.engine.scoring.EXTRA_KEYS``, one or two keys
per field); ``hand_score_dicts`` gives each game's dicts with exactly the engine's keys."""
SCORE_CARDS, SCORE_COINS, SCORE_SETTEBELLO, SCORE_PRIMIERA, SCORE_SCOPE, SCORE_TOTAL = range(6)
SCORE_NUM_CARDS, SCORE_NUM_COINS, SCORE_PRIMIERA_VALUE, SCORE_NUM_SCOPE = range(6, 10)
SCORE_SEVEN_MAJORITY, SCORE_NUM_SEVENS, SCORE_NUM_SIXES, SCORE_DOUBLE_GAME = range(10, 14)
SCORE_RE_BELLO, SCORE_SEVEN_OF_CUPS, SCORE_PALLE_DEL_CANE, SCORE_NAPOLA = range(14, 18)
SCORE_SCALETTA_BASSA, SCORE_SCALETTA_ALTA, SCORE_PICCOLA, SCORE_GRANDE, SCORE_PIVA = range(18, 23)
NUM_SCORE_FIELDS = len(SCORE_FIELDS)

# --- step status codes ------------------------------------------------------------------
STATUS_OK = 0
STATUS_BAD_ACTION = 1
STATUS_LEGAL_OVERFLOW = 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_OPP_STREAM = np.uint64(0xD1B54A32D192ED03)


# === small helpers ============================================================================


@njit(cache=True, inline="always")
def popcount(x):
    """Number of set bits of a non-negative int64 (cards in a mask)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56 & 0xFF


@njit(cache=True, inline="always")
def _rand(rng, i, stream):
    """Next splitmix64 output of game ``i``'s generator ``stream`` (0: deals, 1: opponents)."""
    z = rng[i, stream] + _GOLDEN
    rng[i, stream] = z
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _below(rng, i, stream, k):
    """Uniform int in ``0..k-1`` (k < 2**31) from game ``i``'s generator."""
    z = _rand(rng, i, stream) >> np.uint64(32)
    return np.int64((z * np.uint64(k)) >> np.uint64(32))


@njit(cache=True)
def seed_games(rng, seeds):
    """Seed both generators of every game from ``seeds``."""
    for i in range(seeds.shape[0]):
        s = np.uint64(seeds[i])
        rng[i, 0] = s * _MIX1 + _GOLDEN
        rng[i, 1] = (s ^ _OPP_STREAM) * _MIX2 + _GOLDEN
        _rand(rng, i, 0)
        _rand(rng, i, 1)


@njit(cache=True, inline="always")
def _side(seat, ns):
    """Side of ``seat`` with ``ns`` sides (Rules.sides): in partnerships (two sides of 4 or 6
    players) the even seats against the odd ones, else each seat its own side."""
    return seat & 1 if ns == 2 else seat


# === legal moves (scopa_env.engine.rules.legal_pairs) ================================================


@njit(cache=True, inline="always")
def _picture_rank(card):
    """Rank 11..13 of one of the 52-card deck's pictures, ids 40..51 (cards.RANK_OF)."""
    return RANK_SPAN + 1 + (card - NUM_CARDS) % PICTURES


@njit(cache=True, inline="always")
def _rank(card, wild, french):
    """The rank ``card`` captures and is captured as (rules.capture_rank): its own, or the
    wildcard's declared rank ``wild`` (0: none). ``french``: the 52-card deck (P_FRENCH),
    whose ids 40..51 are its pictures; a literal False leaves the 40-card code alone."""
    if wild != 0 and card == WILDCARD:
        return wild
    if french and card >= NUM_CARDS:
        return _picture_rank(card)
    return card % RANK_SPAN + 1


@njit(cache=True, inline="always")
def _suit_mask(suit, french):
    """The cards of ``suit`` (cards.SUIT_MASK): its 10-bit block, and in the 52-card deck
    (``french``) its three pictures at ``40 + suit * 3``."""
    m = np.int64(SUIT_BITS) << (RANK_SPAN * suit)
    if french:
        m |= np.int64(PICTURE_BITS) << (NUM_CARDS + PICTURES * suit)
    return m


@njit(cache=True, inline="always")
def _rank_mask(rank, wild, french):
    """The cards of capture rank ``rank`` (rules.capture_ranks: the wildcard moved to ``wild``;
    ``french``: ranks 11..13 are the 52-card deck's pictures)."""
    if french and rank > RANK_SPAN:
        return np.int64(JACKS_52) << (rank - RANK_SPAN - 1)
    m = np.int64(ONE_OF_EACH_SUIT) << (rank - 1)
    if wild != 0:
        if rank == WILDCARD_RANK:
            m &= ~(np.int64(1) << WILDCARD)
        if rank == wild:
            m |= np.int64(1) << WILDCARD
    return m


@njit(cache=True, inline="always")
def _wild_for(wild, cards):
    """The wildcard rank :func:`scopa_env.engine.rules.legal_pairs` applies: ``wild`` when it moves the
    Seven of cups to another rank and that card is among ``cards`` (hand | table), else 0."""
    if wild != 0 and wild != WILDCARD_RANK and (cards >> WILDCARD) & 1:
        return wild
    return 0


@njit(cache=True, inline="always")
def _subsets(table, max_sum, sub_mask, sub_sum, wild, french):
    """Every subset of ``table`` with value sum <= ``max_sum``, ascending by mask (the empty set first);
    the wildcard counts as ``wild`` (0: its own rank); ``french``: the 52-card deck (:func:`_rank`).

    Adding cards in ascending id order keeps the list sorted: each new subset holds a
    higher bit than every older one.
    """
    sub_mask[0] = 0
    sub_sum[0] = 0
    n = 1
    t = table
    while t != 0:
        b = t & -t
        t ^= b
        r = _rank(trailing_zeros(b), wild, french)
        m = n
        for k in range(m):
            s = sub_sum[k] + r
            if s <= max_sum:
                sub_mask[n] = sub_mask[k] | b
                sub_sum[n] = s
                n += 1
    return n


@njit(cache=True)
def legal_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask):
    """Legal ``(card, captured)`` pairs into ``out_card``/``out_mask``; returns their number.

    Same moves in the same order as :func:`scopa_env.engine.rules.legal_pairs`: by card, then
    captured mask ascending, the trail (mask 0) first where it is legal. The fast path below
    is the 40-card deck's standard capture pattern (``P_PLAIN``); the rest, the 52-card deck
    included, goes through :func:`_variant_pairs`.
    """
    if not P[P_PLAIN]:
        return _variant_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask, 0)
    return _standard_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask)


@njit(cache=True)
def plain_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask):
    """:func:`legal_pairs` under the standard captures (``P_PLAIN``): the batch row loop calls it
    where ``STD`` is not None, so those rules do not compile :func:`_variant_pairs`."""
    return _standard_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask)


@njit(cache=True, inline="always")
def _standard_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask):
    """The standard captures' pairs, inlined into :func:`legal_pairs` and :func:`plain_pairs`
    (a call in between cost random play an eighth of its speed, 3.8M -> 3.3M moves per
    CPU-second: numba counts the references of the arrays passed)."""
    priority = P[P_PRIORITY]
    optional = P[P_OPTIONAL]
    count = 0
    if table == 0:
        h = hand
        while h != 0:
            b = h & -h
            h ^= b
            out_card[count] = trailing_zeros(b)
            out_mask[count] = 0
            count += 1
        return count
    nsub = -1
    h = hand
    while h != 0:
        b = h & -h
        h ^= b
        card = trailing_zeros(b)
        rank = card % RANK_SPAN + 1
        singles = table & (ONE_OF_EACH_SUIT << (rank - 1))
        if singles != 0 and priority:
            if optional:
                out_card[count] = card
                out_mask[count] = 0
                count += 1
            while singles != 0:
                s = singles & -singles
                singles ^= s
                out_card[count] = card
                out_mask[count] = s
                count += 1
            continue
        if nsub < 0:
            nsub = _subsets(table, MAX_RANK, sub_mask, sub_sum, 0, False)
        start = count
        if optional:
            out_card[count] = card
            out_mask[count] = 0
            count += 1
        # Sets summing to the rank; without single-card priority singles of the rank compete too.
        for k in range(1, nsub):
            if sub_sum[k] == rank:
                out_card[count] = card
                out_mask[count] = sub_mask[k]
                count += 1
        if count == start:
            out_card[count] = card
            out_mask[count] = 0
            count += 1
    return count


@njit(cache=True)
def card_capture(card, table, priority, optional):
    """The captured mask of ``card``'s legal move on ``table`` under the standard captures
    (``P_PLAIN``, priority and optional as ``P_PRIORITY`` and ``P_OPTIONAL``) when it has one
    (0: it goes to the table), or -1 when it has several: :func:`_standard_pairs` for that card
    alone, for the AEC env's "select" mode (:mod:`scopa_env.fast.aot` exports it). The scratch
    holds every subset of the table, bounded by the deck's (:data:`PLAIN_SUBSETS`). A card or
    table outside the 40-card deck is -1 too, never a shift past the word."""
    if card < 0 or card >= NUM_CARDS or table < 0 or table >> NUM_CARDS != 0:
        return -1
    count, _, masks = _plain_hand_pairs(1 << card, table, priority, optional)
    return masks[0] if count == 1 else -1


@njit(cache=True, inline="always")
def _plain_hand_pairs(hand, table, priority, optional):
    """:func:`_standard_pairs` of ``hand`` (a 40-card deck's cards) on ``table``, with a scratch sized
    to them (a card's moves: its trail and the table's subsets at most): ``(count, cards, masks)``."""
    cap = min(PLAIN_SUBSETS, 1 << popcount(table)) + 1
    width = popcount(hand) * cap
    P = np.zeros(NUM_PARAMS, np.int64)
    P[P_PRIORITY] = priority
    P[P_OPTIONAL] = optional
    scratch = np.empty(2 * cap + 2 * width, np.int64)
    cards = scratch[2 * cap : 2 * cap + width]
    masks = scratch[2 * cap + width :]
    count = _standard_pairs(hand, table, P, scratch[:cap], scratch[cap : 2 * cap], cards, masks)
    return count, cards, masks


@njit(cache=True)
def wild_pairs(hand, table, P, wild, sub_mask, sub_sum, out_card, out_mask):
    """:func:`legal_pairs` with Cirulla's declared wildcard rank ``wild`` (rules.legal_pairs's
    ``wild_rank``): the Seven of cups captures and is captured as that rank."""
    w = _wild_for(wild, hand | table)
    if w != 0:
        return _variant_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask, w)
    return legal_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask)


@njit(cache=True)
def _variant_pairs(hand, table, P, sub_mask, sub_sum, out_card, out_mask, wild):
    """:func:`legal_pairs` for the capture fields (rules._variant_pairs): the union of
    equal-value captures, ``capture_sum`` captures and the Ace's take-all, then the
    ``max_capture_cards`` and ``fewest_cards`` filters. One ascending subset list serves
    every condition, so the union comes out sorted and without duplicates (the take-all,
    the whole table, is the largest mask of all: it goes last). ``wild``: the wildcard's
    capture rank (0: its own). Under ``P_FRENCH`` the ranks are the 52-card deck's (1..13)."""
    french = P[P_FRENCH] != 0
    equal = P[P_CAPTURE_EQUAL]
    total = P[P_CAPTURE_SUM]
    most = P[P_MAX_CAPTURE]
    optional = P[P_OPTIONAL]
    fewest_rule = P[P_FEWEST]
    passes = 2 if fewest_rule else 1  # the first pass finds the fewest cards a capture takes
    count = 0
    nsub = -1
    h = hand
    while h != 0:
        b = h & -h
        h ^= b
        card = trailing_zeros(b)
        rank = _rank(card, wild, french)
        if table == 0:
            out_card[count] = card
            out_mask[count] = b if (P[P_ACE_ITSELF] and rank == 1) else 0
            count += 1
            continue
        if nsub < 0:
            nsub = _subsets(table, P[P_MAX_SUM], sub_mask, sub_sum, wild, french)
        singles_only = P[P_PRIORITY] and (table & _rank_mask(rank, wild, french)) != 0
        need = total - rank if total else -1
        take_all = P[P_TAKE_ALL] and rank == 1 and (table & _rank_mask(1, wild, False)) == 0
        fewest = 64
        for pass_ in range(passes):
            emit = pass_ == passes - 1
            start = count
            if emit and optional:
                out_card[count] = card
                out_mask[count] = 0
                count += 1
            table_listed = False
            for k in range(nsub + 1):
                if k == 0:
                    continue
                if k < nsub:
                    m = sub_mask[k]
                    v = sub_sum[k]
                    size = popcount(m)
                    ok = (equal and v == rank and (size == 1 or not singles_only)) or (need > 0 and v == need)
                    ok = ok or (take_all and m == table)
                    if ok and m == table:
                        table_listed = True
                else:  # after the list: the take-all, unless the list held the whole table already
                    m = table
                    size = popcount(m)
                    ok = take_all and not table_listed
                if not ok or (most and size > most):
                    continue
                if not emit:
                    if size < fewest:
                        fewest = size
                    continue
                if fewest_rule and size != fewest:
                    continue
                out_card[count] = card
                out_mask[count] = m
                count += 1
            if emit and count == start:
                out_card[count] = card
                out_mask[count] = 0
                count += 1
    return count


@njit(cache=True, inline="always")
def _move_id(PAIRS, TBL, P, table, card, mask):
    """Id of ``(card, mask)`` in the "move" enumeration (binary search in the card's block).

    Under ``ace_takes_all`` an Ace's block ends with its compact take-all id (mask -1),
    which every Ace capture of the whole table maps to when no Ace lies there
    (MoveEnumeration.is_take_all); the search skips it. Under Cirulla's wildcard the Seven
    of cups has one too, which every move of it taking the whole table maps to.
    """
    lo = TBL[TBL_CARD_START + card]
    hi = TBL[TBL_CARD_START + card + 1] - 1
    if P[P_TAKE_ALL] and P[P_WILD_IDS] and card == WILDCARD:
        if mask == table and mask != 0:
            return hi
        hi -= 1
    elif P[P_TAKE_ALL] and card % RANK_SPAN == 0:
        if mask == table and mask != 0 and (table & ONE_OF_EACH_SUIT) == 0:
            return hi
        hi -= 1
    return _block_search(PAIRS, lo, hi, mask)


@njit(cache=True, inline="always")
def _block_search(PAIRS, lo, hi, mask):
    """The first index of ``lo..hi`` whose mask in ``PAIRS`` is not below ``mask`` (``hi`` if none):
    a card's block of the "move" enumeration is sorted by mask."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if PAIRS[mid, 1] < mask:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def plain_move_ids(hand, table, priority, optional, PAIRS, starts, out):
    """The "move" ids of ``hand``'s legal moves on ``table`` under the standard captures (as
    :func:`card_capture`) into ``out``, in :func:`legal_pairs` order; returns their number. For the
    AEC env's "move" mode (:mod:`scopa_env.fast.aot` exports it): ``PAIRS`` is the enumeration
    (``MoveEnumeration.pairs``, no take-all ids), ``starts[c]`` card ``c``'s first id (41 entries or
    more). -1, and nothing read out of bounds, where a card or the table is outside the 40-card
    deck, ``starts`` does not fit ``PAIRS``, a move is not in it, or ``out`` is too short."""
    if hand < 0 or hand >> NUM_CARDS != 0 or table < 0 or table >> NUM_CARDS != 0:
        return -1
    if starts.shape[0] <= NUM_CARDS or PAIRS.shape[1] != 2:
        return -1
    count, cards, masks = _plain_hand_pairs(hand, table, priority, optional)
    if count > out.shape[0]:
        return -1
    for k in range(count):
        card = cards[k]
        lo = starts[card]
        hi = starts[card + 1] - 1
        if lo < 0 or lo > hi or hi >= PAIRS.shape[0]:
            return -1
        j = _block_search(PAIRS, lo, hi, masks[k])
        if PAIRS[j, 0] != card or PAIRS[j, 1] != masks[k]:
            return -1
        out[k] = j
    return count


# === dealing and playing (scopa_env.engine.game.Game) =================================================


@njit(cache=True)
def _new_hand_state(S, i, n):
    for s in range(MAX_PLAYERS):
        S[i, COL_HAND + s] = 0
        S[i, COL_PLAYED + s] = 0
    for s in range(MAX_SIDES):
        S[i, COL_PILE + s] = 0
        S[i, COL_SCOPE + s] = 0
        S[i, COL_SCOPE_PTS + s] = 0
    S[i, COL_TABLE] = 0
    S[i, COL_LASTCAP] = NO_SEAT
    S[i, COL_CURRENT] = (S[i, COL_DEALER] + 1) % n
    S[i, COL_IN_HANDS] = 0
    S[i, COL_PENDING] = NO_SEAT
    S[i, COL_SELECTED] = 0
    S[i, COL_PHASE] = PHASE_PLAY
    for s in range(MAX_PLAYERS):
        S[i, COL_REVEALED + s] = 0
    for s in range(MAX_SIDES):
        S[i, COL_DECLARED + s] = 0
    S[i, COL_QUEUE] = 0
    S[i, COL_DECLARERS] = 0
    S[i, COL_WILD] = 0
    S[i, COL_REDEALS] = 0


@njit(cache=True, inline="always")
def _deal_round(S, i, n, start, count):
    """Deal ``count`` cards of the deal order from ``start``, one at a time from the dealer's left."""
    first = S[i, COL_DEALER] + 1
    for k in range(count):
        seat = (first + k) % n
        S[i, COL_HAND + seat] |= np.int64(1) << S[i, COL_DECK + start + k]
    S[i, COL_IN_HANDS] += count


@njit(cache=True)
def _deal(S, i, rng, P, TBL, D):
    """Shuffle and deal a hand; deal again while the table calls for it (Game._deal_shuffled:
    the same dealer, or the next one under ``redeal_next_dealer``). Then Cirulla's table
    bonus and the declarations.

    With ``first_card_choice`` only the first card of the deal order is dealt, to the player
    after the dealer, who decides on it (:func:`_decide` completes the deal).
    """
    n = P[P_PLAYERS]
    size = P[P_DECK_SIZE]
    dealt = n * P[P_FIRST_DEAL]
    while True:
        for k in range(size):
            S[i, COL_DECK + k] = TBL[TBL_DECK + k]
        for k in range(size - 1, 0, -1):
            j = _below(rng, i, 0, k + 1)
            tmp = S[i, COL_DECK + k]
            S[i, COL_DECK + k] = S[i, COL_DECK + j]
            S[i, COL_DECK + j] = tmp
        for s in range(n):
            S[i, COL_HAND + s] = 0
        S[i, COL_IN_HANDS] = 0
        if P[P_FIRST_CARD]:
            S[i, COL_HAND + S[i, COL_CURRENT]] = np.int64(1) << S[i, COL_DECK]
            S[i, COL_IN_HANDS] = 1
            S[i, COL_TABLE] = 0
            S[i, COL_STOCK_POS] = 1
            S[i, COL_PHASE] = PHASE_FIRST_CARD
            return
        _deal_round(S, i, n, 0, dealt)
        table = np.int64(0)
        for k in range(dealt, dealt + P[P_TABLE_SIZE]):
            table |= np.int64(1) << S[i, COL_DECK + k]
        S[i, COL_TABLE] = table
        S[i, COL_STOCK_POS] = dealt + P[P_TABLE_SIZE]
        if not _needs_redeal(table, P):
            if D is not None:  # a compile-time branch: pruned for the rules without decisions (D None)
                if P[P_TABLE_BONUS]:
                    _table_bonus(S, i, P)
                if P[P_DECLARE]:
                    _open_declarations(S, i, P)
            return
        S[i, COL_REDEALS] += 1
        if P[P_REDEAL_NEXT]:  # Cirulla: "dealt again by the next dealer"
            S[i, COL_DEALER] = (S[i, COL_DEALER] + 1) % n
            S[i, COL_CURRENT] = (S[i, COL_DEALER] + 1) % n


@njit(cache=True, inline="always")
def _table_bonus_scope(table, P):
    """Scope the dealer marks for an initial table totalling 30 (2) or 15 (1), else 0
    (scoring.table_bonus_scope); under ``bonus_wildcard`` the Seven of cups counts 1..10."""
    if not P[P_TABLE_BONUS] or table == 0:
        return 0
    total = 0
    t = table
    while t != 0:
        b = t & -t
        t ^= b
        total += trailing_zeros(b) % RANK_SPAN + 1
    if P[P_WILDCARD] and (table >> WILDCARD) & 1:
        rest = total - WILDCARD_RANK
        if rest + 1 <= TABLE_BONUS_TWO <= rest + MAX_RANK:
            return 2
        if rest + 1 <= TABLE_BONUS_ONE <= rest + MAX_RANK:
            return 1
        return 0
    if total == TABLE_BONUS_TWO:
        return 2
    return 1 if total == TABLE_BONUS_ONE else 0


@njit(cache=True)
def _table_bonus(S, i, P):
    """Cirulla (Game._table_bonus): an initial table of 15 (30) goes to the dealer with one (two) scope."""
    scope = _table_bonus_scope(S[i, COL_TABLE], P)
    if scope:
        dealer = S[i, COL_DEALER]
        side = _side(dealer, P[P_SIDES])
        S[i, COL_PILE + side] |= S[i, COL_TABLE]
        S[i, COL_TABLE] = 0
        S[i, COL_SCOPE + side] += scope
        S[i, COL_SCOPE_PTS + side] += scope * P[P_SCOPA_POINTS]
        S[i, COL_LASTCAP] = dealer


@njit(cache=True)
def _decide(S, i, rng, P, TBL, keep):
    """Chkobba's first card (Game._decide): kept, or put face up on the table; then the deal
    is completed from the deal order, each player's cards in one run from the dealer's left
    (the player who kept the drawn card gets one fewer), then the table. A table that calls
    for a redeal is thrown in: a new shuffle and a new first card to decide on."""
    n = P[P_PLAYERS]
    cutter = S[i, COL_CURRENT]
    per_player = P[P_FIRST_DEAL]
    bit = S[i, COL_HAND + cutter]  # the drawn card, the only one dealt so far
    pos = S[i, COL_STOCK_POS]
    for k in range(n):
        seat = (S[i, COL_DEALER] + 1 + k) % n
        count = per_player - 1 if keep and seat == cutter else per_player
        for j in range(count):
            S[i, COL_HAND + seat] |= np.int64(1) << S[i, COL_DECK + pos + j]
        pos += count
    table = np.int64(0)
    if not keep:
        S[i, COL_HAND + cutter] ^= bit
        table = bit
    count = P[P_TABLE_SIZE] - (0 if keep else 1)
    for j in range(count):
        table |= np.int64(1) << S[i, COL_DECK + pos + j]
    S[i, COL_TABLE] = table
    S[i, COL_STOCK_POS] = pos + count
    S[i, COL_IN_HANDS] = n * per_player
    S[i, COL_PHASE] = PHASE_PLAY
    if _needs_redeal(table, P):
        _deal(S, i, rng, P, TBL, TBL)  # a decision rule: the decision code stays (D not None)


# --- declarations (bazzica_points: Game._open_declarations, Game._declare, scoring.declaration) ---


@njit(cache=True)
def _declaration(hand, P):
    """``(strength, points)`` of the declaration a hand qualifies for (scoring.declaration);
    strength -1 for none, else lower is better: a bazzicotto (three of a kind) by rank, then a
    bazzica (three cards adding up to 9 or less) by total."""
    if popcount(hand) != DECLARATION_CARDS:
        return -1, 0
    h = hand
    r0 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r1 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r2 = trailing_zeros(h) % RANK_SPAN + 1
    if r0 == r1 and r1 == r2:
        return r0, P[P_BAZZICA + 2]
    total = 0
    for r in (r0, r1, r2):
        total += BAZZICA_FACE if r >= BAZZICA_FACE_FROM else r
    if total > BAZZICA_MAX:
        return -1, 0
    distinct = r0 != r1 and r0 != r2 and r1 != r2
    return BAZZICOTTO_RANK_SPAN + total, P[P_BAZZICA + (0 if distinct else 1)]


@njit(cache=True)
def _hand_bonus(hand, P):
    """``(strength, points, wild_rank)`` of Cirulla's hand bonus of a three-card hand
    (scoring._hand_bonus): strength BONUS_THREE_OF_A_KIND, else BONUS_TOTAL (three cards
    adding up to less than 10), -1 for none; each is tried first without the wildcard, then
    with the Seven of cups standing for the card it needs (``wild_rank``: the rank it stands
    for, reported as an Ace for the total; 0 when the bonus needs no wildcard)."""
    if popcount(hand) != DECLARATION_CARDS:
        return -1, 0, 0
    h = hand
    r0 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r1 = trailing_zeros(h) % RANK_SPAN + 1
    h &= h - 1
    r2 = trailing_zeros(h) % RANK_SPAN + 1
    wild = P[P_WILDCARD] != 0 and (hand >> WILDCARD) & 1 == 1
    o0 = 0
    o1 = 0
    if wild:
        rest = hand & ~(np.int64(1) << WILDCARD)
        o0 = trailing_zeros(rest) % RANK_SPAN + 1
        rest &= rest - 1
        o1 = trailing_zeros(rest) % RANK_SPAN + 1
    if r0 == r1 and r1 == r2:
        return BONUS_THREE_OF_A_KIND, P[P_HAND_BONUS + 1], 0
    if wild and o0 == o1:
        return BONUS_THREE_OF_A_KIND, P[P_HAND_BONUS + 1], o0
    if r0 + r1 + r2 < HAND_BONUS_BELOW:
        return BONUS_TOTAL, P[P_HAND_BONUS], 0
    if wild and o0 + o1 + WILD_TOTAL_RANK < HAND_BONUS_BELOW:
        return BONUS_TOTAL, P[P_HAND_BONUS], WILD_TOTAL_RANK
    return -1, 0, 0


@njit(cache=True)
def _wild_choices(hand, P):
    """Bit ``r`` per rank the player may declare the wildcard as (scoring.wild_rank_choices):
    when the hand's bonus is the total under 10 and needs the wildcard, every rank of the
    deck that keeps the total under 10; else 0 (nothing to choose)."""
    strength, points, wild = _hand_bonus(hand, P)
    if strength != BONUS_TOTAL or wild == 0:
        return 0
    others = 0
    rest = hand & ~(np.int64(1) << WILDCARD)
    while rest != 0:
        others += trailing_zeros(rest) % RANK_SPAN + 1
        rest &= rest - 1
    out = 0
    for r in range(1, MAX_RANK + 1):
        if (P[P_DECK_MASK] & (np.int64(ONE_OF_EACH_SUIT) << (r - 1))) != 0 and others + r < HAND_BONUS_BELOW:
            out |= 1 << r
    return out


@njit(cache=True, inline="always")
def _can_declare(hand, P):
    """Whether a hand qualifies for a declaration (scoring.declaration is not None)."""
    if P[P_DECLARE] == DECLARE_HAND_BONUS:
        return _hand_bonus(hand, P)[0] >= 0
    return _declaration(hand, P)[0] >= 0


@njit(cache=True)
def _first_in_queue(S, i, n):
    """The seat of ``COL_QUEUE`` nearest the dealer's left (the queue is in turn order)."""
    for k in range(n):
        seat = (S[i, COL_DEALER] + 1 + k) % n
        if (S[i, COL_QUEUE] >> seat) & 1:
            return seat
    return NO_SEAT


@njit(cache=True)
def _open_declarations(S, i, P):
    """After a three-card deal, queue the seats whose hands can declare; the first of them moves."""
    if not P[P_DECLARE]:
        return
    n = P[P_PLAYERS]
    queue = np.int64(0)
    for seat in range(n):
        if _can_declare(S[i, COL_HAND + seat], P):
            queue |= np.int64(1) << seat
    S[i, COL_QUEUE] = queue
    S[i, COL_DECLARERS] = 0
    if queue != 0:
        S[i, COL_PHASE] = PHASE_DECLARE
        S[i, COL_CURRENT] = _first_in_queue(S, i, n)


@njit(cache=True)
def _declare(S, i, P, captured):
    """The seat to move declares (``captured`` not 0, showing its hand) or passes; once every
    queued seat has decided, the best declaration of the deal scores at once, none on a tie,
    or under Cirulla's ``hand_bonus_points`` every declaration (Game._declare). A Cirulla
    declaration sets the wildcard's rank for the rest of the hand (scoring.declared_wild_rank)."""
    n = P[P_PLAYERS]
    seat = S[i, COL_CURRENT]
    S[i, COL_QUEUE] &= ~(np.int64(1) << seat)
    if captured != 0:
        hand = S[i, COL_HAND + seat]
        S[i, COL_DECLARERS] |= np.int64(1) << seat
        S[i, COL_REVEALED + seat] = hand
        if P[P_DECLARE] == DECLARE_HAND_BONUS:
            if _wild_choices(hand, P) != 0:  # the label's rank: (WILDCARD, 1 << the coin of that rank)
                wild = trailing_zeros(captured) % RANK_SPAN + 1
            else:
                wild = _hand_bonus(hand, P)[2]
            if wild != 0:
                S[i, COL_WILD] = wild
    if S[i, COL_QUEUE] != 0:
        S[i, COL_CURRENT] = _first_in_queue(S, i, n)
        return
    if P[P_DECLARE] == DECLARE_HAND_BONUS:  # Cirulla: every declaration scores
        for seat in range(n):
            if (S[i, COL_DECLARERS] >> seat) & 1:
                points = _hand_bonus(S[i, COL_HAND + seat], P)[1]
                side = _side(seat, P[P_SIDES])
                S[i, COL_SCORE + side] += points
                S[i, COL_DECLARED + side] += points
        S[i, COL_DECLARERS] = 0
        S[i, COL_PHASE] = PHASE_PLAY
        S[i, COL_CURRENT] = (S[i, COL_DEALER] + 1) % n
        return
    best = 1 << 30
    ties = 0
    points = 0
    winner = NO_SEAT
    for seat in range(n):
        if (S[i, COL_DECLARERS] >> seat) & 1:
            strength, pts = _declaration(S[i, COL_HAND + seat], P)
            if strength < best:
                best, ties, points, winner = strength, 1, pts, seat
            elif strength == best:
                ties += 1
    if winner != NO_SEAT and ties == 1:
        side = _side(winner, P[P_SIDES])
        S[i, COL_SCORE + side] += points
        S[i, COL_DECLARED + side] += points
    S[i, COL_DECLARERS] = 0
    S[i, COL_PHASE] = PHASE_PLAY
    S[i, COL_CURRENT] = (S[i, COL_DEALER] + 1) % n


@njit(cache=True)
def _needs_redeal(table, P):
    """Game.needs_redeal: 3+ Kings, any Ace (aces_redeal), redeal_aces Aces (Cirulla), or
    redeal_same_rank cards of one rank."""
    if P[P_KINGS_REDEAL] and popcount(table & (KINGS_52 if P[P_FRENCH] else KINGS_MASK)) >= KINGS_FOR_REDEAL:
        return True
    if P[P_ACES_REDEAL] and (table & ONE_OF_EACH_SUIT) != 0:
        return True
    if P[P_REDEAL_ACES] and popcount(table & ONE_OF_EACH_SUIT) >= P[P_REDEAL_ACES]:
        return True
    if P[P_REDEAL_SAME_RANK]:
        french = P[P_FRENCH] != 0
        for r in range(1, (FRENCH_RANKS if french else RANK_SPAN) + 1):
            if popcount(table & _rank_mask(r, 0, french)) >= P[P_REDEAL_SAME_RANK]:
                return True
    return False


@njit(cache=True)
def new_game(S, i, rng, P, F, TBL, D):
    """A fresh game in row ``i``: scores 0, the last seat deals, seat 0 leads; the learner's
    seat and the opponents' kind are drawn here when they vary by game."""
    n = P[P_PLAYERS]
    for s in range(MAX_SIDES):
        S[i, COL_SCORE + s] = 0
    S[i, COL_HAND_NUM] = 0
    S[i, COL_DEALER] = n - 1
    if P[P_OPPONENT] == OPPONENT_NONE:
        S[i, COL_LEARNER] = NO_SEAT
    elif P[P_LEARNER_SEAT] == LEARNER_RANDOM:
        S[i, COL_LEARNER] = _below(rng, i, 1, n)
    else:
        S[i, COL_LEARNER] = P[P_LEARNER_SEAT]
    kind = P[P_OPPONENT]
    if kind == OPPONENT_MIXED:
        u = np.float64(_rand(rng, i, 1) >> np.uint64(11)) * (1.0 / 9007199254740992.0)  # 53 bits in [0, 1)
        kind = 0
        while u >= F[F_OPP_CUMULATIVE + kind]:
            kind += 1
    S[i, COL_OPPONENT] = kind
    _new_hand_state(S, i, n)
    _deal(S, i, rng, P, TBL, D)


@njit(cache=True)
def _primiera_sum(pile, F, all_suits, french):
    """Sum of the best primiera value per suit; a missing suit makes it 0 (``all_suits``) or adds 0.
    ``french``: the 52-card deck, whose suits hold their pictures (ranks 11..13) too."""
    total = 0.0
    for s in range(4):
        in_suit = (pile >> (RANK_SPAN * s)) & SUIT_BITS
        pictures = (pile >> (NUM_CARDS + PICTURES * s)) & PICTURE_BITS if french else 0
        if in_suit == 0 and pictures == 0:
            if all_suits:
                return 0.0
            continue
        best = 0.0
        while in_suit != 0:
            b = in_suit & -in_suit
            in_suit ^= b
            v = F[F_PRIMIERA + trailing_zeros(b)]
            if v > best:
                best = v
        while pictures != 0:
            b = pictures & -pictures
            pictures ^= b
            v = F[F_PRIMIERA + RANK_SPAN + trailing_zeros(b)]
            if v > best:
                best = v
        total += best
    return total


@njit(cache=True)
def _unique_max(values, count):
    """Index of the value strictly above all others, else -1 (scoring.unique_max)."""
    best = 0
    ties = 1
    for k in range(1, count):
        if values[k] > values[best]:
            best = k
            ties = 1
        elif values[k] == values[best]:
            ties += 1
    return best if ties == 1 else -1


@njit(cache=True, inline="always")
def _scopa_worth(P, rank, captured):
    """Points of one scopa (Game._scopa_worth): ``scopa_points``, or a Libyan ``scopa_value``
    (``rank``: the sweeping card's capture rank)."""
    how = P[P_SCOPA_VALUE]
    if how == SCOPA_VALUE_CARD:  # the sweeping card's rank
        return rank
    if how == SCOPA_VALUE_CARDS:  # the cards taken and the one played
        return popcount(captured) + 1
    return P[P_SCOPA_POINTS]


@njit(cache=True, inline="always")
def _run_from_ace(pile, suit):
    """Length of the run Ace, 2, 3 ... of ``suit`` in ``pile`` (scoring.run_from_ace)."""
    bits = (pile >> (RANK_SPAN * suit)) & SUIT_BITS
    run = 0
    while run < RANK_SPAN and (bits >> run) & 1:
        run += 1
    return run


@njit(cache=True, inline="always")
def _run_from_king(pile, suit):
    """Length of the run King, Queen, Jack ... of ``suit`` in ``pile`` (scoring.run_from_king)."""
    bits = (pile >> (RANK_SPAN * suit)) & SUIT_BITS
    run = 0
    while run < RANK_SPAN and (bits >> (KING - run)) & 1:
        run += 1
    return run


@njit(cache=True)
def _score_extras(pile, P, row):
    """The scoring extras of one pile into ``row`` (scoring._extras); returns their sum."""
    bonus = P[P_BONUS_SUIT]
    row[SCORE_RE_BELLO] = float((pile >> (RANK_SPAN * bonus + KING)) & 1) if P[P_RE_BELLO] else 0.0
    row[SCORE_SEVEN_OF_CUPS] = float((pile >> SEVEN_OF_CUPS_CARD) & 1) if P[P_SEVEN_OF_CUPS] else 0.0
    sevens = ONE_OF_EACH_SUIT << SETTEBELLO
    row[SCORE_PALLE_DEL_CANE] = 1.0 if P[P_PALLE_DEL_CANE] and (pile & sevens) == sevens else 0.0
    low = _run_from_ace(pile, bonus)
    high = _run_from_king(pile, bonus)
    napola = 0
    if P[P_NAPOLA] != NAPOLA_OFF and low >= NAPOLA_MIN:
        if P[P_NAPOLA] == NAPOLA_WIKIPEDIA:  # 3 for A-2-3, 1 per other card of the suit
            napola = popcount(pile & (SUIT_BITS << (RANK_SPAN * bonus)))
        else:
            napola = min(low, NAPOLA_CAP_6 if P[P_NAPOLA] == NAPOLA_PAGAT_6 else NAPOLA_CAP_9)
    row[SCORE_NAPOLA] = float(napola)
    bassa = alta = piccola = grande = 0
    if P[P_SCALETTE]:
        bassa = min(low, SCALETTA_BASSA_CAP) if low >= NAPOLA_MIN else 0
        alta = SCALETTA_ALTA_BASE + min(high, RANK_SPAN - 1) - NAPOLA_MIN if high >= NAPOLA_MIN else 0
    if P[P_PICCOLA_GRANDE]:
        piccola = min(low, NAPOLA_CAP_6) if low >= NAPOLA_MIN else 0
        grande = SCALETTA_ALTA_BASE if high >= NAPOLA_MIN else 0
    row[SCORE_SCALETTA_BASSA] = float(bassa)
    row[SCORE_SCALETTA_ALTA] = float(alta)
    row[SCORE_PICCOLA] = float(piccola)
    row[SCORE_GRANDE] = float(grande)
    row[SCORE_PIVA] = float(PIVA_POINTS * ((pile >> PIVA_CARD) & 1)) if P[P_PIVA] else 0.0
    total = 0.0
    for f in range(SCORE_RE_BELLO, NUM_SCORE_FIELDS):
        total += row[f]
    return total


@njit(cache=True)
def _score_hand(S, i, P, F, TBL, hand_score):
    """Score the finished hand into ``hand_score[i]`` and add the totals to the game score."""
    ns = P[P_SIDES]
    num_cards = np.zeros(MAX_SIDES, np.float64)
    num_coins = np.zeros(MAX_SIDES, np.float64)
    prim = np.zeros(MAX_SIDES, np.float64)
    sevens = np.zeros(MAX_SIDES, np.float64)
    counts = np.zeros(MAX_SIDES, np.int64)
    top_prim = 0.0
    bonus = P[P_BONUS_SUIT]
    french = P[P_FRENCH] != 0
    coins = _suit_mask(bonus, french)
    for s in range(ns):
        pile = S[i, COL_PILE + s]
        num_cards[s] = popcount(pile)
        num_coins[s] = popcount(pile & coins)
        # (sevens, sixes) compared as one number: most Sevens, then most Sixes
        sevens[s] = popcount(pile & (ONE_OF_EACH_SUIT << 6)) * 8 + popcount(pile & (ONE_OF_EACH_SUIT << 5))
        prim[s] = _primiera_sum(pile, F, P[P_PRIME_ALL_SUITS] != 0, french)
        if prim[s] > top_prim:
            top_prim = prim[s]
        # primiera_by_counts: the counts per rank group, best group first, as one number
        for g in range(P[P_PRIME_GROUPS]):
            counts[s] = (counts[s] << PRIME_GROUP_BITS) + popcount(pile & TBL[TBL_PRIME_GROUPS + g])
    cards_w = _unique_max(num_cards, ns)
    coins_w = _unique_max(num_coins, ns)
    if P[P_SEVENS]:
        prim_w = -1
    elif P[P_BY_COUNTS]:
        prim_w = _unique_max(counts, ns)
    else:
        prim_w = _unique_max(prim, ns) if top_prim > 0 else -1
    sevens_w = _unique_max(sevens, ns) if P[P_SEVENS] else -1
    for s in range(ns):
        row = hand_score[i, s]
        row[SCORE_CARDS] = 1.0 if cards_w == s else 0.0
        row[SCORE_COINS] = 1.0 if coins_w == s else 0.0
        row[SCORE_SETTEBELLO] = float((S[i, COL_PILE + s] >> (RANK_SPAN * bonus + SETTEBELLO)) & 1)
        row[SCORE_PRIMIERA] = 1.0 if prim_w == s else 0.0
        row[SCORE_SCOPE] = S[i, COL_SCOPE_PTS + s]
        row[SCORE_SEVEN_MAJORITY] = 1.0 if sevens_w == s else 0.0
        row[SCORE_NUM_SEVENS] = sevens[s] // 8
        row[SCORE_NUM_SIXES] = sevens[s] % 8
        row[SCORE_DOUBLE_GAME] = 0.0
        total = row[SCORE_CARDS] + row[SCORE_COINS] + row[SCORE_SETTEBELLO] + row[SCORE_PRIMIERA] + row[SCORE_SCOPE]
        total += _score_extras(S[i, COL_PILE + s], P, row)
        total += row[SCORE_SEVEN_MAJORITY]
        row[SCORE_TOTAL] = total
        row[SCORE_NUM_CARDS] = num_cards[s]
        row[SCORE_NUM_COINS] = num_coins[s]
        row[SCORE_PRIMIERA_VALUE] = prim[s]
        row[SCORE_NUM_SCOPE] = S[i, COL_SCOPE + s]
        S[i, COL_SCORE + s] += np.int64(total)
    for s in range(ns, MAX_SIDES):
        for f in range(NUM_SCORE_FIELDS):
            hand_score[i, s, f] = 0.0


@njit(cache=True, inline="always")
def _hand_events(S, i, P):
    """Hand-end items that are not points (scoring.game_events): a side that took the whole
    bonus suit wins at once (Napoleone, Scala, all coins); Libyan ``coins_reset`` sends the
    other sides' game scores back to 0. Returns the side that won this way, else -1."""
    suit = _suit_mask(P[P_BONUS_SUIT], P[P_FRENCH] != 0) & P[P_DECK_MASK]
    takes_all_wins = P[P_NAPOLA] == NAPOLA_PAGAT_9 or P[P_SCALETTE] or P[P_ALL_COINS_WINS]
    winner = -1
    for side in range(P[P_SIDES]):
        coins = S[i, COL_PILE + side] & suit
        if takes_all_wins and coins == suit and winner < 0:
            winner = side
        if P[P_COINS_RESET] and popcount(coins) >= P[P_COINS_RESET]:
            for o in range(P[P_SIDES]):
                if o != side:
                    S[i, COL_SCORE + o] = 0
    return winner


@njit(cache=True, inline="always")
def _game_winner(S, i, P):
    ns = P[P_SIDES]
    top = S[i, COL_SCORE]
    lead = 0
    ties = 1
    for s in range(1, ns):
        v = S[i, COL_SCORE + s]
        if v > top:
            top = v
            lead = s
            ties = 1
        elif v == top:
            ties += 1
    if ties != 1:
        return -1
    if top >= P[P_TARGET]:
        return lead
    if P[P_CAPPOTTO] and top >= CAPPOTTO_LEAD:
        for s in range(ns):
            if s != lead and S[i, COL_SCORE + s] != 0:
                return -1
        return lead
    return -1


@njit(cache=True)
def play(S, i, rng, P, F, TBL, card, captured, rewards, info, hand_score, D):
    """Play ``(card, captured)`` for the seat to move (Game.play_pair); returns 1 if the episode ended.

    At a hand end it scores the hand, sets the env's rewards (added into ``rewards[i]``)
    and deals the next hand unless the episode is over. A decision (Chkobba's first card)
    and a claim (chiamarsi fuori) are plays too: ``(card, 1 << card)`` keeps or claims.
    """
    n = P[P_PLAYERS]
    ns = P[P_SIDES]
    seat = S[i, COL_CURRENT]
    bit = np.int64(1) << card
    phase = S[i, COL_PHASE]
    if D is not None:  # a compile-time branch: pruned for the rules without decisions (D None)
        if phase != PHASE_PLAY:  # one test on the card-play path of every decision preset
            if phase == PHASE_FIRST_CARD:
                _decide(S, i, rng, P, TBL, captured == bit)
            else:
                _declare(S, i, P, captured)
            return 0
        if P[P_CLAIM_OUT] and captured == bit:
            return _claim(S, i, P, F, TBL, seat, rewards, info, hand_score)
    S[i, COL_HAND + seat] ^= bit
    if P[P_DECLARE]:  # a declared card leaves the shown hand when played
        S[i, COL_REVEALED + seat] &= ~bit
    S[i, COL_PLAYED + seat] |= bit
    S[i, COL_IN_HANDS] -= 1
    stock_empty = S[i, COL_STOCK_POS] == P[P_DECK_SIZE]
    last_play = S[i, COL_IN_HANDS] == 0 and stock_empty
    if captured == bit:  # an Ace takes itself from the empty table: no scopa
        S[i, COL_PILE + _side(seat, ns)] |= bit
        S[i, COL_LASTCAP] = seat
    elif captured != 0:
        S[i, COL_TABLE] ^= captured
        side = _side(seat, ns)
        S[i, COL_PILE + side] |= captured | bit
        S[i, COL_LASTCAP] = seat
        if S[i, COL_TABLE] == 0 and (not last_play or P[P_LAST_SCOPA]):
            # Scopa d'Assi: an Ace clearing a table that held no Ace took it all, no scopa
            # (capture ranks: Cirulla's declared wildcard counts as its rank, Game._takes_all).
            wild = S[i, COL_WILD]
            rank = _rank(card, wild, P[P_FRENCH] != 0)
            took_all = P[P_TAKE_ALL] and rank == 1 and (captured & _rank_mask(1, wild, False)) == 0
            if not (took_all and not P[P_TAKE_ALL_SCOPA]):
                S[i, COL_SCOPE + side] += 1
                S[i, COL_SCOPE_PTS + side] += _scopa_worth(P, rank, captured)
    else:
        S[i, COL_TABLE] |= bit
    S[i, COL_CURRENT] = (seat + 1) % n
    if S[i, COL_IN_HANDS] != 0:
        return 0
    if not stock_empty:
        per_deal = n * TBL[TBL_NEXT_DEAL + P[P_DECK_SIZE] - S[i, COL_STOCK_POS]]
        _deal_round(S, i, n, S[i, COL_STOCK_POS], per_deal)
        S[i, COL_STOCK_POS] += per_deal
        if D is not None and P[P_DECLARE]:
            _open_declarations(S, i, P)
        return 0
    # End of the hand: the last capturer's side sweeps up the table.
    lc = S[i, COL_LASTCAP]
    if lc != NO_SEAT:
        S[i, COL_PILE + _side(lc, ns)] |= S[i, COL_TABLE]
        S[i, COL_TABLE] = 0
    _score_hand(S, i, P, F, TBL, hand_score)
    S[i, COL_HAND_NUM] += 1
    info[i, INFO_HAND_ENDED] = 1
    winner = _hand_events(S, i, P)
    if winner < 0:
        winner = _game_winner(S, i, P)
    below = P[P_DOUBLE_BELOW]
    if below and winner >= 0:
        double = True
        for o in range(ns):
            if o != winner and S[i, COL_SCORE + o] >= below:
                double = False
        if double:
            hand_score[i, winner, SCORE_DOUBLE_GAME] = 1.0
    if _hand_end_rewards(S, i, P, winner, rewards, info, hand_score):
        return 1
    S[i, COL_DEALER] = (S[i, COL_DEALER] + 1) % n
    _new_hand_state(S, i, n)
    _deal(S, i, rng, P, TBL, D)
    return 0


@njit(cache=True)
def _hand_end_rewards(S, i, P, winner, rewards, info, hand_score):
    """The env's rewards of a hand just scored into ``hand_score[i]`` (scopa_v0's ``_after_play``),
    and the episode's end if it is over (``winner``: the side that won the game, -1 for none);
    returns 1 if the episode ended."""
    n = P[P_PLAYERS]
    ns = P[P_SIDES]
    over = P[P_EPISODE_HAND] == 1 or winner >= 0
    # A side's hand points: its score breakdown's total and the declarations it scored this hand.
    if P[P_REWARD_POINTS]:
        for s in range(n):
            side = _side(s, ns)
            others = 0.0
            for o in range(ns):
                if o != side:
                    others += hand_score[i, o, SCORE_TOTAL] + S[i, COL_DECLARED + o]
            rewards[i, s] += hand_score[i, side, SCORE_TOTAL] + S[i, COL_DECLARED + side] - others / (ns - 1)
    elif over:
        best = -np.inf  # totals go below 0 under Piva
        ties = 0
        for o in range(ns):
            t = hand_score[i, o, SCORE_TOTAL] + S[i, COL_DECLARED + o]
            if t > best:
                best = t
                ties = 1
            elif t == best:
                ties += 1
        for s in range(n):
            side = _side(s, ns)
            if P[P_EPISODE_HAND] == 0:
                rewards[i, s] += 1.0 if winner == side else -1.0
            elif ties == 1:
                mine = hand_score[i, side, SCORE_TOTAL] + S[i, COL_DECLARED + side]
                rewards[i, s] += 1.0 if mine == best else -1.0
    if over:
        info[i, INFO_TERMINATED] = 1
        info[i, INFO_WINNER] = winner
        for s in range(MAX_SIDES):
            info[i, INFO_FINAL_SCORE + s] = S[i, COL_SCORE + s]
        return 1
    return 0


# === chiamarsi fuori (Game._claim, scoring.secured_points) =======================================

CLAIM_CARDS, CLAIM_COINS, CLAIM_SEVENS, CLAIM_COUNTS, CLAIM_PRIMIERA = range(5)  # what _claim_key measures


@njit(cache=True)
def _claim_key(pile, what, P, F, TBL):
    """One majority's measure of a pile (the keys of scoring.secured_points), as one number."""
    if what == CLAIM_CARDS:
        return float(popcount(pile))
    if what == CLAIM_COINS:
        return float(popcount(pile & _suit_mask(P[P_BONUS_SUIT], P[P_FRENCH] != 0)))
    if what == CLAIM_SEVENS:  # (Sevens, Sixes) compared as one number, as in _score_hand
        return float(popcount(pile & (ONE_OF_EACH_SUIT << 6)) * 8 + popcount(pile & (ONE_OF_EACH_SUIT << 5)))
    if what == CLAIM_COUNTS:
        counts = np.int64(0)
        for g in range(P[P_PRIME_GROUPS]):
            counts = (counts << PRIME_GROUP_BITS) + popcount(pile & TBL[TBL_PRIME_GROUPS + g])
        return float(counts)
    return _primiera_sum(pile, F, P[P_PRIME_ALL_SUITS] != 0, P[P_FRENCH] != 0)


@njit(cache=True)
def _secured(S, i, P, F, TBL, side, remaining, what):
    """1 if ``side``'s majority ``what`` holds even when every other side takes all ``remaining`` cards."""
    mine = _claim_key(S[i, COL_PILE + side], what, P, F, TBL)
    for o in range(P[P_SIDES]):
        if o != side and not mine > _claim_key(S[i, COL_PILE + o] | remaining, what, P, F, TBL):
            return 0.0
    return 1.0


@njit(cache=True)
def _claim(S, i, P, F, TBL, seat, rewards, info, hand_score):
    """Chiamarsi fuori (Game._claim): the game ends; every side's certain points
    (scoring.secured_points) go to ``hand_score[i]`` and its score; the claimer's side wins
    if its score reaches the target, else the other side (two sides). Returns 1."""
    ns = P[P_SIDES]
    remaining = P[P_DECK_MASK]
    for s in range(ns):
        remaining &= ~S[i, COL_PILE + s]
    bonus = P[P_BONUS_SUIT]
    for s in range(ns):
        pile = S[i, COL_PILE + s]
        row = hand_score[i, s]
        for f in range(NUM_SCORE_FIELDS):
            row[f] = 0.0
        row[SCORE_CARDS] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_CARDS)
        row[SCORE_COINS] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_COINS)
        row[SCORE_SETTEBELLO] = float((pile >> (RANK_SPAN * bonus + SETTEBELLO)) & 1)
        if P[P_SEVENS]:
            row[SCORE_SEVEN_MAJORITY] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_SEVENS)
        elif P[P_BY_COUNTS]:
            row[SCORE_PRIMIERA] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_COUNTS)
        elif _claim_key(pile, CLAIM_PRIMIERA, P, F, TBL) > 0:
            row[SCORE_PRIMIERA] = _secured(S, i, P, F, TBL, s, remaining, CLAIM_PRIMIERA)
        row[SCORE_SCOPE] = S[i, COL_SCOPE_PTS + s]
        extras = _score_extras(pile, P, row)
        if P[P_PIVA] and (remaining >> PIVA_CARD) & 1:  # an uncaptured Piva Two counts against every side
            row[SCORE_PIVA] = PIVA_POINTS
            extras += PIVA_POINTS
        total = row[SCORE_CARDS] + row[SCORE_COINS] + row[SCORE_SETTEBELLO] + row[SCORE_SEVEN_MAJORITY]
        total += row[SCORE_PRIMIERA] + row[SCORE_SCOPE] + extras
        row[SCORE_TOTAL] = total
        row[SCORE_NUM_CARDS] = popcount(pile)
        row[SCORE_NUM_COINS] = popcount(pile & _suit_mask(bonus, P[P_FRENCH] != 0))
        row[SCORE_PRIMIERA_VALUE] = _claim_key(pile, CLAIM_PRIMIERA, P, F, TBL)
        row[SCORE_NUM_SCOPE] = S[i, COL_SCOPE + s]
        S[i, COL_SCORE + s] += np.int64(total)
    for s in range(ns, MAX_SIDES):
        for f in range(NUM_SCORE_FIELDS):
            hand_score[i, s, f] = 0.0
    side = _side(seat, ns)
    sound = S[i, COL_SCORE + side] >= P[P_TARGET]
    S[i, COL_HAND_NUM] += 1
    info[i, INFO_HAND_ENDED] = 1
    info[i, INFO_CLAIM] = CLAIM_SOUND if sound else CLAIM_FALSE
    _hand_end_rewards(S, i, P, side if sound else 1 - side, rewards, info, hand_score)
    return 1


@njit(cache=True)
def _decision_pairs(S, i, P, hand, lc, lm):
    """:func:`mover_pairs` in a decision (``COL_PHASE`` not PHASE_PLAY); returns their number.

    Kept apart so that the card-play path, which every preset takes on most turns, stays short.
    """
    high = 63 - leading_zeros(hand)
    if S[i, COL_PHASE] == PHASE_DECLARE and P[P_DECLARE] == DECLARE_HAND_BONUS:
        choices = _wild_choices(hand, P)
        if choices != 0:  # pass (WILDCARD, 0); declare it as rank r: (WILDCARD, 1 << the coin of r)
            lc[0] = WILDCARD
            lm[0] = 0
            count = 1
            for r in range(1, MAX_RANK + 1):
                if (choices >> r) & 1:
                    lc[count] = WILDCARD
                    lm[count] = np.int64(1) << (WILD_RANK_LABEL_SUIT * RANK_SPAN + r - 1)
                    count += 1
            return count
    # keep or table the first card; declare or pass
    lc[0] = high
    lm[0] = 0
    lc[1] = high
    lm[1] = np.int64(1) << high
    return 2


@njit(cache=True, inline="always")
def _plain_turn(phase, wild, claim):
    """Whether the seat to move's pairs are :func:`legal_pairs`'s list alone: a card-play turn
    (``phase``) without a declared wildcard (``wild``) and no claim offered (``claim``). The
    hot callers then call :func:`legal_pairs` themselves, as before the decision rules came:
    going through :func:`mover_pairs` on every turn cost the standard game about a seventh of
    its random-play speed (3.7M -> 3.1M moves per CPU-second). Scalars only here, so inlining
    this adds no array references to count. For the same reason its four callers spell out the
    choice between ``D`` None, :func:`legal_pairs` and :func:`mover_pairs`: one inlined helper
    taking the arrays measured 5 to 10% slower in random play and batch steps."""
    return phase == PHASE_PLAY and wild == 0 and not claim


@njit(cache=True)
def mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, claims):
    """The ``(card, captured)`` pairs of the seat to move into ``lc``/``lm``; returns their number.

    Game.legal_pairs: in a Chkobba decision ``(card, 0)`` (table it) and ``(card, 1 << card)``
    (keep it) of the hand's only card; in a declaration ``(card, 0)`` (pass) and
    ``(card, 1 << card)`` (declare) of the hand's highest card, or under Cirulla's wildcard
    ``(WILDCARD, 0)`` and ``(WILDCARD, 1 << the coin of r)`` per rank ``r`` it may be named
    (scoring.declaring_pairs; :func:`_decision_pairs`); else :func:`wild_pairs`
    (:func:`legal_pairs` with a declared wildcard's rank). With ``claims`` (Game.action_pairs,
    what the env offers) the chiamarsi fuori claim ``(highest card, its own bit)`` follows on a
    card-play turn; the compiled players choose without it, as the Python agents do.
    """
    hand = S[i, COL_HAND + S[i, COL_CURRENT]]
    if S[i, COL_PHASE] != PHASE_PLAY:
        return _decision_pairs(S, i, P, hand, lc, lm)
    wild = S[i, COL_WILD]
    if wild == 0:  # no declared wildcard (every preset but Cirulla): the plain list, one call fewer
        count = legal_pairs(hand, S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    else:
        count = wild_pairs(hand, S[i, COL_TABLE], P, wild, sub_mask, sub_sum, lc, lm)
    if claims and P[P_CLAIM_OUT]:
        high = 63 - leading_zeros(hand)
        lc[count] = high
        lm[count] = np.int64(1) << high
        count += 1
    return count


# === compiled opponents =======================================================================


@njit(cache=True)
def choose_move(S, i, rng, P, F, H, kind, sub_mask, sub_sum, lc, lm, D):
    """Index into ``lc``/``lm`` of the compiled player's move for the seat to move (lists filled here).

    ``H``: the heuristic's weights, or None when no heuristic player moves (the caller's promise).
    ``D``: None where no decision rule plays (:func:`play`), which prunes the decisions' code.
    """
    table = S[i, COL_TABLE]
    if D is None:  # a compile-time branch: every turn is a plain card play
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], table, P, sub_mask, sub_sum, lc, lm)
    elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], False):
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], table, P, sub_mask, sub_sum, lc, lm)
    else:
        count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, False)
    if kind == OPPONENT_RANDOM or count == 1:
        return _below(rng, i, 1, count)
    if H is not None:  # a compile-time branch: pruned when H is None
        if kind == OPPONENT_HEURISTIC:
            scores = _heuristic_scores(S, i, P, F, H, count, sub_mask, sub_sum, lc, lm)
            return _pick_best(rng, i, scores, count, F[F_GREEDY_TOL])
    # Greedy (agents.greedy): capture value of captured + played (+ scopa), else minus the trailed card's value.
    last_play = S[i, COL_IN_HANDS] == 1 and S[i, COL_STOCK_POS] == P[P_DECK_SIZE]
    sweep_counts = P[P_LAST_SCOPA] or not last_play
    scores = np.empty(count, np.float64)
    for k in range(count):
        m = lm[k]
        if m == 0:
            v = -F[F_GREEDY_VALUES + lc[k]]
        else:
            v = _mask_value(m | (np.int64(1) << lc[k]), F[F_GREEDY_VALUES : F_GREEDY_VALUES + MAX_CARDS])
            if m == table and sweep_counts:
                v += F[F_GREEDY_SCOPA]
        scores[k] = v
    return _pick_best(rng, i, scores, count, F[F_GREEDY_TOL])


@njit(cache=True, inline="always")
def _pick_best(rng, i, scores, count, tol):
    """Index of the best score; ties within ``tol`` broken uniformly (agents.greedy.pick_best)."""
    best = -1e300
    for k in range(count):
        if scores[k] > best:
            best = scores[k]
    ties = 0
    for k in range(count):
        if scores[k] >= best - tol:
            ties += 1
    nth = _below(rng, i, 1, ties) if ties > 1 else 0
    for k in range(count):
        if scores[k] >= best - tol:
            if nth == 0:
                return k
            nth -= 1
    return 0


@njit(cache=True, inline="always")
def _mask_value(mask, values):
    """Sum of ``values`` over the cards of ``mask``, ascending (agents.greedy.mask_value, same float order)."""
    total = 0.0
    while mask != 0:
        b = mask & -mask
        mask ^= b
        total += values[trailing_zeros(b)]
    return total


# --- the heuristic opponent (agents.heuristic.HeuristicAgent, default weights) ---------------
# It reads only what its seat may see: its own hand, the table, the piles, the hand sizes,
# the stock size and the last capturer; the unseen cards are the deck less those.


@njit(cache=True, inline="always")
def _comb(n, k):
    """Binomial coefficient, exact in int64 for a 40-card deck."""
    if k < 0 or k > n:
        return np.int64(0)
    r = np.int64(1)
    for j in range(k):
        r = r * (n - j) // (j + 1)
    return r


@njit(cache=True, inline="always")
def _holds_some(unseen, kind, hand_size):
    """Chance that a hand of ``hand_size`` cards drawn from ``unseen`` cards holds one of ``kind`` of them."""
    if kind <= 0 or hand_size <= 0:
        return 0.0
    if unseen - kind < hand_size:
        return 1.0
    return 1.0 - np.float64(_comb(unseen - kind, hand_size)) / np.float64(_comb(unseen, hand_size))


@njit(cache=True)
def _side_card_values(S, i, P, F, H, side, out):
    """Per card id, what capturing it is worth to ``side`` given its pile (heuristic.side_card_values)."""
    deck = P[P_DECK_MASK]
    french = P[P_FRENCH] != 0
    coins = _suit_mask(0, french)  # the heuristic counts coins, whatever the bonus suit
    half_cards = popcount(deck) / 2
    half_coins = popcount(deck & coins) / 2
    cards_open = True
    coins_open = True
    for s in range(P[P_SIDES]):
        p = S[i, COL_PILE + s]
        if popcount(p) > half_cards:
            cards_open = False
        if popcount(p & coins) > half_coins:
            coins_open = False
    pile = S[i, COL_PILE + side]
    base = np.empty(4, np.float64)
    for suit in range(4):
        held = (pile >> (RANK_SPAN * suit)) & SUIT_BITS
        pictures = (pile >> (NUM_CARDS + PICTURES * suit)) & PICTURE_BITS if french else 0
        best = np.float64(MISSING_SUIT_BASE)
        if held != 0 or pictures != 0:
            best = -1e300
            while held != 0:
                b = held & -held
                held ^= b
                v = F[F_PRIMIERA + trailing_zeros(b)]
                if v > best:
                    best = v
            while pictures != 0:
                b = pictures & -pictures
                pictures ^= b
                v = F[F_PRIMIERA + RANK_SPAN + trailing_zeros(b)]
                if v > best:
                    best = v
        base[suit] = best
    for c in range(NUM_CARDS):
        v = H[H_CARD] if cards_open else 0.0
        v += H[H_PRIMIERA] * max(0.0, F[F_PRIMIERA + c % RANK_SPAN] - base[c // RANK_SPAN])
        if c < RANK_SPAN and coins_open:
            v += H[H_COIN]
        if c == SETTEBELLO:
            v += H[H_SETTEBELLO]
        out[c] = v
    if french:  # the 52-card deck's pictures, ids 40..51 (no coin of them is the settebello)
        for c in range(NUM_CARDS, MAX_CARDS):
            suit = (c - NUM_CARDS) // PICTURES
            v = H[H_CARD] if cards_open else 0.0
            v += H[H_PRIMIERA] * max(0.0, F[F_PRIMIERA + _picture_rank(c) - 1] - base[suit])
            if suit == 0 and coins_open:
                v += H[H_COIN]
            out[c] = v


@njit(cache=True)
def _heuristic_scores(S, i, P, F, H, count, sub_mask, sub_sum, lc, lm):
    """The heuristic score of each of the ``count`` legal pairs in ``lc``/``lm`` (HeuristicAgent.scores).

    The next player's replies are enumerated into ``lc``/``lm`` after the ``count`` pairs.
    """
    n = P[P_PLAYERS]
    ns = P[P_SIDES]
    seat = S[i, COL_CURRENT]
    side = _side(seat, ns)
    nxt = (seat + 1) % n
    hand = S[i, COL_HAND + seat]
    table = S[i, COL_TABLE]
    french = P[P_FRENCH] != 0
    num_ranks = FRENCH_RANKS if french else RANK_SPAN
    mine = np.empty(MAX_CARDS, np.float64)
    theirs = np.empty(MAX_CARDS, np.float64)
    _side_card_values(S, i, P, F, H, side, mine)
    _side_card_values(S, i, P, F, H, _side(nxt, ns), theirs)
    seen = hand | table
    for s in range(ns):
        seen |= S[i, COL_PILE + s]
    if P[P_DECLARE]:  # declared hands are shown
        for s in range(n):
            seen |= S[i, COL_REVEALED + s]
    unseen = P[P_DECK_MASK] & ~seen
    num_unseen = popcount(unseen)
    stock = P[P_DECK_SIZE] - S[i, COL_STOCK_POS]
    in_hands = S[i, COL_IN_HANDS]  # the hand sizes, visible to all
    last_play = stock == 0 and in_hands == 1
    cards_left = in_hands - 1  # in all hands after this move
    if cards_left:
        opp_hand = popcount(S[i, COL_HAND + nxt])
    else:
        opp_hand = P[P_HAND_SIZE] if stock else 0
    final_round = stock == 0
    others_hold = False
    for s in range(n):
        if _side(s, ns) != side and S[i, COL_HAND + s] != 0:
            others_hold = True
    their_last = stock == 0 and cards_left == 1
    sweep_counts = P[P_LAST_SCOPA] or not last_play
    their_sweep_counts = P[P_LAST_SCOPA] or not their_last
    # One unseen card per rank stands for that rank in the reply model.
    rep_p = np.zeros(FRENCH_RANKS, np.float64)
    rep_played = np.zeros(FRENCH_RANKS, np.float64)
    rep_hand = np.int64(0)
    for r in range(num_ranks):
        kind = unseen & _rank_mask(r + 1, 0, french)
        if kind != 0:
            k = popcount(kind)
            low = kind & -kind
            rep_p[r] = _holds_some(num_unseen, k, opp_hand)
            rep_played[r] = _mask_value(kind, theirs) / k
            rep_hand |= low
    wild = S[i, COL_WILD]  # Cirulla: a declared wildcard captures and is captured as its rank
    best = np.empty(FRENCH_RANKS, np.float64)
    order = np.empty(FRENCH_RANKS, np.int64)
    rc = lc[count:]
    rm = lm[count:]
    w_scopa = H[H_SCOPA]
    w_leftover = H[H_LEFTOVER]
    scores = np.empty(count, np.float64)
    for k in range(count):
        card = lc[k]
        captured = lm[k]
        bit = np.int64(1) << card
        after = table & ~captured if captured != 0 else table | bit
        rank_mask = _rank_mask(_rank(card, wild, french), wild, french)
        if captured != 0:
            score = _mask_value(captured | bit, mine)
            if captured == table and sweep_counts:
                score += w_scopa
        else:
            score = -H[H_TRAIL] * mine[card]
            if (unseen & rank_mask) == 0 and (hand & rank_mask & ~bit) != 0:
                score += H[H_BLOCK] * mine[card]
        if last_play:
            # The hand ends now: the table goes to the last capturer.
            if captured != 0:
                taker = side
            else:
                lcap = S[i, COL_LASTCAP]
                taker = NO_SEAT if lcap == NO_SEAT else _side(lcap, ns)
            if taker == side:
                score += w_leftover * _mask_value(after, mine)
            elif taker != NO_SEAT:
                score -= w_leftover * _mask_value(after, theirs)
            scores[k] = score
            continue
        # Expected value of the next player's best capture on ``after``, and the chance they have none.
        reply = 0.0
        p_none = 1.0
        if after != 0 and rep_hand != 0:
            nr = wild_pairs(rep_hand, after, P, wild, sub_mask, sub_sum, rc, rm)
            ranked = 0
            for r in range(num_ranks):
                best[r] = -1.0
            for j in range(nr):
                m = rm[j]
                if m == 0:
                    continue
                v = _mask_value(m, theirs)
                if m == after and their_sweep_counts:
                    v += w_scopa
                r = _rank(rc[j], 0, french) - 1
                if v > best[r]:
                    if best[r] < 0.0:  # ranks in order of first capture (the engine's dict order)
                        order[ranked] = r
                        ranked += 1
                    best[r] = v
            # By best value, descending; equal values keep their first-capture order (a stable sort).
            for a in range(ranked):
                top = a
                for b in range(a + 1, ranked):
                    if best[order[b]] > best[order[top]]:
                        top = b
                r = order[top]
                for b in range(top, a, -1):
                    order[b] = order[b - 1]
                order[a] = r
                reply += p_none * rep_p[r] * (best[r] + rep_played[r])
                p_none *= 1.0 - rep_p[r]
        score -= H[H_REPLY] * reply
        if final_round and captured != 0:
            share = 1.0 if not others_hold else 0.5 * p_none
            score += w_leftover * share * _mask_value(after, mine)
        scores[k] = score
    return scores


# === observation and masks (scopa_env.engine.observation, scopa_v0) ==================================


@njit(cache=True, inline="always")
def _plane(out, pos, mask, width):
    """One card plane of ``width`` (P_CARD_IDS: 40, or 52 for the 52-card deck) entries."""
    for b in range(width):
        out[pos + b] = np.float32((mask >> b) & 1)
    return pos + width


@njit(cache=True)
def write_observation(S, i, P, seat, out):
    """``seat``'s observation of game ``i`` into ``out`` (observation.write_observation)."""
    n = P[P_PLAYERS]
    mine = seat == S[i, COL_CURRENT]
    pending = S[i, COL_PENDING] if mine else NO_SEAT
    observe(
        out,
        seat,
        S[i, COL_HAND : COL_HAND + n],
        S[i, COL_PILE : COL_PILE + P[P_SIDES]],
        S[i, COL_PLAYED : COL_PLAYED + n],
        S[i, COL_REVEALED : COL_REVEALED + n],
        S[i, COL_SCOPE : COL_SCOPE + P[P_SIDES]],
        S[i, COL_SCORE : COL_SCORE + P[P_SIDES]],
        S[i, COL_TABLE],
        P[P_DECK_SIZE] - S[i, COL_STOCK_POS],
        S[i, COL_DEALER],
        S[i, COL_CURRENT],
        S[i, COL_LASTCAP],
        pending,
        S[i, COL_SELECTED] if pending >= 0 else 0,
        P[P_DECK_MASK],
        float(P[P_TARGET]),
        float(P[P_HAND_SIZE]),
        P[P_CARD_IDS],
        P[P_DECLARE] != 0,
        S[i, COL_WILD] if P[P_WILD_OBS] else 0,
        S[i, COL_QUEUE] != 0,
    )


@njit(cache=True, inline="always")
def observe(
    out,
    seat,
    hands,
    piles,
    played,
    revealed,
    scope,
    scores,
    table,
    stock_left,
    dealer,
    current,
    last_capturer,
    pending,
    selected,
    deck_mask,
    target,
    hand_size,
    width,
    declare,
    wild,
    queue,
):
    """``seat``'s observation into ``out`` from the game's parts (observation.write_observation):
    ``hands``, ``played`` and ``revealed`` by seat, ``piles``, ``scope`` and ``scores`` by side
    (the state row's slices, or tuples of the Python engine's ints: :mod:`scopa_env.fast.aot`'s
    observers),
    ``last_capturer`` and ``pending`` (the card chosen in "select" mode) ``NO_SEAT`` for none,
    ``declare`` for the layout's declaration entries, ``wild`` the declared wildcard rank (0: none,
    or no wildcard entry), ``queue`` whether a declaration is being decided."""
    n = len(hands)
    ns = len(piles)
    side = _side(seat, ns)
    seen = hands[seat] | table
    for s in range(ns):
        seen |= piles[s]
    if declare:
        for s in range(n):
            seen |= revealed[s]
    w = width
    pos = _plane(out, 0, hands[seat], w)
    pos = _plane(out, pos, table, w)
    for k in range(ns):
        pos = _plane(out, pos, piles[(side + k) % ns], w)
    for k in range(n):
        pos = _plane(out, pos, played[(seat + k) % n], w)
    pos = _plane(out, pos, deck_mask & ~seen, w)
    pos = _plane(out, pos, (np.int64(1) << pending) if pending >= 0 else 0, w)
    pos = _plane(out, pos, selected, w)
    if declare:  # the revealed planes of seat +1, +2 ...; the declaring flag is the last entry
        for k in range(1, n):
            pos = _plane(out, pos, revealed[(seat + k) % n], w)
    size = out.shape[0]
    for k in range(size - pos):
        out[pos + k] = 0.0
    for j in range(ns):
        sj = (side + j) % ns
        out[pos + j] = np.float32(scope[sj])
        out[pos + ns + j] = np.float32(scores[sj] / target)
    pos += 2 * ns
    for j in range(n):
        out[pos + j] = np.float32(popcount(hands[(seat + j) % n]) / hand_size)
    pos += n
    out[pos] = np.float32(stock_left / float(w))
    pos += 1
    out[pos + (seat - dealer) % n] = 1.0
    pos += n
    out[pos + (current - seat) % n] = 1.0
    pos += n
    out[pos + (n if last_capturer == NO_SEAT else (last_capturer - seat) % n)] = 1.0
    pos += n + 1
    out[pos + (1 if pending >= 0 else 0)] = 1.0
    pos += 2
    if 0 < wild <= MAX_RANK:  # Cirulla: one-hot of the wildcard's declared rank (0: none)
        out[pos + wild - 1] = 1.0
    if declare and queue:
        out[size - 1] = 1.0


@njit(cache=True, inline="always")
def observation_need(players, sides, width, declare, wild):
    """The entries :func:`observe` writes for ``players`` and ``sides`` with planes of ``width``:
    the card planes (hand, table, each side's pile, each seat's played cards, unseen, the pending
    card, the selection; with ``declare`` the other seats' shown cards), then the tail (scope and
    scores per side; hand sizes, dealer, turn per seat; stock; last capturer, none included; the
    pending flag's two), the wildcard's one-hot up to ``wild``'s entry, and with ``declare`` the
    declaring flag (the last entry)."""
    planes = 5 + sides + players + (players - 1 if declare else 0)
    need = planes * width + 2 * sides + 4 * players + 4 + (1 if declare else 0)
    if 0 < wild <= MAX_RANK:
        need += wild
    return need


@njit(cache=True, inline="always")
def _select_candidates(S, i, P, sub_mask, sub_sum, lc, lm, D, STD, VAR):
    """Outcomes of the pending card still reachable from the selection, packed at the front of ``lm``."""
    if D is None:  # a compile-time branch: every turn is a plain card play
        count = 0  # numba prunes one of the two calls: STD or VAR is None
        if STD is not None:
            count = plain_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        if VAR is not None:
            count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], P[P_CLAIM_OUT]):
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    else:
        count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
    pending = S[i, COL_PENDING]
    selected = S[i, COL_SELECTED]
    below = (np.int64(1) << (64 - leading_zeros(selected))) - 1 if selected != 0 else np.int64(0)
    nc = 0
    for k in range(count):
        if lc[k] == pending and (lm[k] & below) == selected:
            lm[nc] = lm[k]
            nc += 1
    return nc


@njit(cache=True, inline="always")
def _write_legal(S, i, P, PAIRS, TBL, sub_mask, sub_sum, lc, lm, mask, legal_ids, info, D, STD, VAR):
    """Legal actions of the seat to move: the "select" mask or the "move" id list; returns a status."""
    if P[P_SELECT]:
        row = mask[i]
        for a in range(row.shape[0]):  # P_CARD_IDS + 1 actions
            row[a] = 0
        if S[i, COL_PENDING] == NO_SEAT:
            h = S[i, COL_HAND + S[i, COL_CURRENT]]  # every hand card has a legal move ...
            if D is not None:  # a compile-time branch: pruned where no decision rule plays
                if S[i, COL_PHASE] != PHASE_PLAY:  # ... but a decision names one card (the highest, or the wildcard)
                    mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
                    h = np.int64(1) << lc[0]
            while h != 0:
                b = h & -h
                h ^= b
                row[trailing_zeros(b)] = 1
            return STATUS_OK
        selected = S[i, COL_SELECTED]
        nc = _select_candidates(S, i, P, sub_mask, sub_sum, lc, lm, D, STD, VAR)
        has_selected = False
        for k in range(nc):
            if lm[k] == selected:
                has_selected = True
            else:
                x = lm[k] ^ selected
                row[trailing_zeros(x & -x)] = 1
        if has_selected and nc > 1:
            row[P[P_CARD_IDS]] = 1  # CONFIRM
        return STATUS_OK
    if D is None:  # a compile-time branch: every turn is a plain card play
        count = 0  # numba prunes one of the two calls: STD or VAR is None
        if STD is not None:
            count = plain_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        if VAR is not None:
            count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], P[P_CLAIM_OUT]):
        count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
    else:
        count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
    info[i, INFO_LEGAL_COUNT] = count
    width = P[P_LEGAL_WIDTH]
    for k in range(min(count, width)):
        legal_ids[i, k] = _move_id(PAIRS, TBL, P, S[i, COL_TABLE], lc[k], lm[k])
    for k in range(count, width):
        legal_ids[i, k] = -1
    return STATUS_LEGAL_OVERFLOW if count > width else STATUS_OK


@njit(cache=True, inline="always")
def _settle(S, i, rng, P, F, H, TBL, over, sub_mask, sub_sum, lc, lm, rewards, info, hand_score, final_obs, D, OPPS):
    """After a play: record and reset a finished episode, then let compiled opponents move
    (``OPPS`` None: the batch has none, and numba prunes their code)."""
    while True:
        if over:
            seat = S[i, COL_LEARNER]
            if seat == NO_SEAT:
                seat = (S[i, COL_CURRENT] + P[P_PLAYERS] - 1) % P[P_PLAYERS]  # the seat that just played
            info[i, INFO_OBS_SEAT] = seat
            info[i, INFO_FINAL_OPPONENT] = S[i, COL_OPPONENT]
            write_observation(S, i, P, seat, final_obs[i])
            new_game(S, i, rng, P, F, TBL, D)
            over = 0
        if OPPS is None:  # a compile-time branch: no compiled opponent in this batch
            return
        if P[P_OPPONENT] == OPPONENT_NONE or S[i, COL_CURRENT] == S[i, COL_LEARNER]:
            return
        k = choose_move(S, i, rng, P, F, H, S[i, COL_OPPONENT], sub_mask, sub_sum, lc, lm, D)
        over = play(S, i, rng, P, F, TBL, lc[k], lm[k], rewards, info, hand_score, D)


@njit(cache=True, inline="always")
def _clear_outputs(i, P, rewards, info):
    for s in range(P[P_PLAYERS]):
        rewards[i, s] = 0.0
    info[i, INFO_TERMINATED] = 0
    info[i, INFO_HAND_ENDED] = 0
    info[i, INFO_WINNER] = -1
    info[i, INFO_FINAL_OPPONENT] = OPPONENT_NONE
    info[i, INFO_CLAIM] = CLAIM_NONE


# === batch entry points ========================================================================


OP_RESET = 0  # arg: one seed per game
OP_STEP = 1  # arg: one action per game
OP_OBSERVE = 2  # arg: one seat per game; observations go to obs
OP_CHOOSE = 3  # arg: one compiled player kind per game; its move goes to info (nothing is played)


@njit(cache=True)
def batch_kernel(
    op, S, rng, P, F, H, TBL, PAIRS, arg, obs, mask, legal_ids, rewards, info, hand_score, final_obs, D, OPPS, STD, VAR
):
    """The batch's observe and choose entry point; returns ``(status, game)``. Reset and step
    go to :func:`batch_rows`, so a batch that only steps compiles neither of these.

    ``OP_OBSERVE``: observation of game ``i`` from seat ``arg[i]`` into ``obs[i]`` (nothing
    else is written). ``OP_CHOOSE``: the move a compiled player of kind ``arg[i]`` picks for
    the seat to move, into ``info[i, INFO_CHOICE_CARD]`` and ``info[i, INFO_CHOICE_MASK]``
    (draws from the opponents' generator; the game does not move). ``STD`` and ``VAR`` are
    unused here (the arguments are :func:`batch_rows`'s).
    """
    N = S.shape[0]
    if op == OP_OBSERVE:
        for i in range(N):
            write_observation(S, i, P, arg[i], obs[i])
        return STATUS_OK, -1
    sub_mask = np.empty(P[P_SUB_CAP], np.int64)
    sub_sum = np.empty(P[P_SUB_CAP], np.int64)
    lc = np.empty(P[P_SCRATCH], np.int64)
    lm = np.empty(P[P_SCRATCH], np.int64)
    for i in range(N):
        k = choose_move(S, i, rng, P, F, H, arg[i], sub_mask, sub_sum, lc, lm, D)
        info[i, INFO_CHOICE_CARD] = lc[k]
        info[i, INFO_CHOICE_MASK] = lm[k]
    return STATUS_OK, -1


@njit(cache=True)
def check_actions(P, arg, mask, legal_ids, info):
    """``(STATUS_BAD_ACTION, game)`` for the first action outside the legal actions written by
    the previous call, else ``(STATUS_OK, -1)``."""
    select = P[P_SELECT]
    for i in range(arg.shape[0]):
        a = arg[i]
        if select:
            if a < 0 or a >= mask.shape[1] or mask[i, a] == 0:
                return STATUS_BAD_ACTION, i
        else:
            ok = False
            for k in range(min(info[i, INFO_LEGAL_COUNT], P[P_LEGAL_WIDTH])):
                if legal_ids[i, k] == a:
                    ok = True
                    break
            if not ok:
                return STATUS_BAD_ACTION, i
    return STATUS_OK, -1


@njit(cache=True, nogil=True)
def batch_rows(
    op,
    lo,
    hi,
    prepare,
    S,
    rng,
    P,
    F,
    H,
    TBL,
    PAIRS,
    arg,
    obs,
    mask,
    legal_ids,
    rewards,
    info,
    hand_score,
    final_obs,
    D,
    OPPS,
    STD,
    VAR,
):
    """Reset (``OP_RESET``: new games seeded by ``arg``) or step (``OP_STEP``: one action per game,
    auto-reset at episode ends) rows ``lo..hi-1``, then write their outputs; returns
    ``(status, first bad row)``. With ``prepare`` (one call for the whole batch) the games are
    first seeded by :func:`seed_games`, or every action checked by :func:`check_actions`
    against the legal actions of the previous call: on the first illegal one nothing changes
    and ``(STATUS_BAD_ACTION, game)`` comes back; without it the caller has done that.

    ``D`` and ``OPPS`` are None where the batch has no decision rule and no compiled opponent,
    and exactly one of ``STD`` and ``VAR`` is None: ``VAR`` with the standard captures
    (``P_PLAIN``), ``STD`` with a variant's. numba prunes the code behind a None argument
    (and only behind a None: an array argument keeps both branches), so a batch compiles
    one capture code, :func:`plain_pairs` or :func:`legal_pairs`.

    The several-thread path of ``BatchedScopa`` calls it from Python threads on disjoint row
    ranges: it releases the GIL (``nogil``), its scratch is its own, and a row reads and
    writes only its own state, generators and output rows, so the result does not depend on
    how the rows are split.
    """
    if prepare:
        if op == OP_STEP:
            status, bad = check_actions(P, arg, mask, legal_ids, info)
            if status != STATUS_OK:
                return status, bad
        else:
            seed_games(rng, arg)
    sub_mask = np.empty(P[P_SUB_CAP], np.int64)
    sub_sum = np.empty(P[P_SUB_CAP], np.int64)
    lc = np.empty(P[P_SCRATCH], np.int64)
    lm = np.empty(P[P_SCRATCH], np.int64)
    status = STATUS_OK
    bad = -1
    for i in range(lo, hi):
        _clear_outputs(i, P, rewards, info)
        if op == OP_RESET:
            new_game(S, i, rng, P, F, TBL, D)
            _settle(
                S,
                i,
                rng,
                P,
                F,
                H,
                TBL,
                np.int64(0),
                sub_mask,
                sub_sum,
                lc,
                lm,
                rewards,
                info,
                hand_score,
                final_obs,
                D,
                OPPS,
            )
        else:
            _step_one(
                S,
                i,
                rng,
                P,
                F,
                H,
                TBL,
                PAIRS,
                arg[i],
                sub_mask,
                sub_sum,
                lc,
                lm,
                rewards,
                info,
                hand_score,
                final_obs,
                D,
                OPPS,
                STD,
                VAR,
            )
        seat = S[i, COL_CURRENT]
        info[i, INFO_TO_PLAY] = seat
        write_observation(S, i, P, seat, obs[i])
        st = _write_legal(S, i, P, PAIRS, TBL, sub_mask, sub_sum, lc, lm, mask, legal_ids, info, D, STD, VAR)
        if st != STATUS_OK and bad < 0:
            status, bad = st, i
    return status, bad


@njit(cache=True, inline="always")
def _step_one(
    S,
    i,
    rng,
    P,
    F,
    H,
    TBL,
    PAIRS,
    a,
    sub_mask,
    sub_sum,
    lc,
    lm,
    rewards,
    info,
    hand_score,
    final_obs,
    D,
    OPPS,
    STD,
    VAR,
):
    """Apply action ``a`` (already checked) to game ``i``, then settle it (opponents, auto-reset)."""
    card = -1
    captured = np.int64(0)
    if not P[P_SELECT]:
        card = PAIRS[a, 0]
        captured = PAIRS[a, 1]
        if captured == TAKE_ALL_ID:
            captured = S[i, COL_TABLE]
    elif S[i, COL_PENDING] == NO_SEAT:
        if D is None:  # a compile-time branch: every turn is a plain card play
            count = 0  # numba prunes one of the two calls: STD or VAR is None
            if STD is not None:
                count = plain_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
            if VAR is not None:
                count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        elif _plain_turn(S[i, COL_PHASE], S[i, COL_WILD], P[P_CLAIM_OUT]):
            count = legal_pairs(S[i, COL_HAND + S[i, COL_CURRENT]], S[i, COL_TABLE], P, sub_mask, sub_sum, lc, lm)
        else:
            count = mover_pairs(S, i, P, sub_mask, sub_sum, lc, lm, True)
        nout = 0
        for k in range(count):
            if lc[k] == a:
                nout += 1
                captured = lm[k]
        if nout == 1:
            card = a
        else:
            S[i, COL_PENDING] = a
            S[i, COL_SELECTED] = 0
    elif a == P[P_CARD_IDS]:  # CONFIRM
        card = S[i, COL_PENDING]
        captured = S[i, COL_SELECTED]
    else:
        S[i, COL_SELECTED] |= np.int64(1) << a
        nc = _select_candidates(S, i, P, sub_mask, sub_sum, lc, lm, D, STD, VAR)
        if nc == 1:
            card = S[i, COL_PENDING]
            captured = lm[0]
    if card >= 0:
        S[i, COL_PENDING] = NO_SEAT
        S[i, COL_SELECTED] = 0
        over = play(S, i, rng, P, F, TBL, card, captured, rewards, info, hand_score, D)
        _settle(S, i, rng, P, F, H, TBL, over, sub_mask, sub_sum, lc, lm, rewards, info, hand_score, final_obs, D, OPPS)


@njit(cache=True)
def playout_kernel(S, rng, P, F, H, TBL, arg, rewards, info, hand_score, D):
    """Row 0 plays ``arg[0]`` whole games seeded by ``arg[1]``, seat ``s`` played by compiled
    kind ``arg[2 + s]``; returns the number of moves, the wins go to ``info[0, INFO_WINS:]``.

    A second entry point (compiled on first use) so the batch kernel's cold compile stays short.
    """
    sub_mask = np.empty(P[P_SUB_CAP], np.int64)
    sub_sum = np.empty(P[P_SUB_CAP], np.int64)
    lc = np.empty(P[P_SCRATCH], np.int64)
    lm = np.empty(P[P_SCRATCH], np.int64)
    seed_games(rng, arg[1:2])
    for k in range(MAX_SIDES + 1):
        info[0, INFO_WINS + k] = 0
    moves = 0
    for _ in range(arg[0]):
        new_game(S, 0, rng, P, F, TBL, D)
        over = 0
        while not over:
            k = choose_move(S, 0, rng, P, F, H, arg[2 + S[0, COL_CURRENT]], sub_mask, sub_sum, lc, lm, D)
            over = play(S, 0, rng, P, F, TBL, lc[k], lm[k], rewards, info, hand_score, D)
            moves += 1
        w = info[0, INFO_WINNER]
        info[0, INFO_WINS + (w if w >= 0 else MAX_SIDES)] += 1
    return moves
