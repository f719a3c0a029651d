"""The compiled core's data layout: the state matrix's columns and every index of its arrays.

Every kernel of :mod:`scopa_env.fast.core` reads and writes games through these names; nothing
here is compiled. The batch (:mod:`scopa_env.fast.batch`) fills ``P``, ``F``, ``TBL`` and ``H`` from
a :class:`~scopa_env.engine.rules.Rules` and reads the outputs back by the same names.

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
                           first from the dealer's left is the seat to move; Cirulla: the
                           seat to move alone, at its first turn of the deal)
    COL_DECLARERS   1      seats that declared in this deal (bitmask), scored when the queue
                           empties (Cirulla scores each declaration at once: always 0)
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
