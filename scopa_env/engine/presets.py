"""Named rule variants: each is a :class:`~scopa_env.engine.rules.Rules` instance, registered on import.

Every preset follows a published rule text (pagat.com's Scopa page, Wikipedia's Scopa
article, the booklet *Scopa: Origins, Rules, and Strategies*); ``docs/rules.md`` quotes
it, lists the fields each preset changes, the readings chosen where a source is
ambiguous and the "move"-mode action count N. Options are more fields:
``get_rules("chkobba").replace(target=31)`` or, where a name is wanted (CLI, configs),
``get_rules("chkobba,target=31")`` (see :func:`scopa_env.engine.rules.get_rules`).

=========================  =====================================================
preset                     source
=========================  =====================================================
``scopone``                pagat (Scopone: 9 cards each, 4 on the table)
``scopone_scientifico``    wikipedia (Scopone a 10 carte), booklet
``asso_pigliatutto``       pagat "Asso Pigliatutto"
``scopa_d_assi``           pagat "Scopa d'Assi", wikipedia "Scopa d'Assi"
``scopa_di_quindici_1/2/3``  pagat "Scopa di Quindici", first/second/third version
``scopa_a_quindici``       wikipedia "Scopa a Quindici"
``escoba``                 pagat: version 1 "is very similar to the Spanish game Escoba"
``scopa_corse``            pagat "Scopa Corse"
``chkobba``                pagat "Chkobba"
``hurrikan``               pagat "Hurrikan"
``booklet``                the booklet *Scopa: Origins, Rules, and Strategies*
``cirulla``                wikipedia "Cirulla"
``chiamarsi_fuori``        pagat: "claiming to have enough points to reach the game target of 11"
``french_52``              wikipedia "Playing with French-suited cards": 8 players, all 52 cards
``small``                  none: a reduction for exact solvers (8 cards, two deals of 2), docs/openspiel.md
=========================  =====================================================
"""

from __future__ import annotations

from scopa_env.engine.cards import CUPS, FRENCH_RANKS, PRIMIERA_BY_RANK
from scopa_env.engine.rules import Rules, register_preset

# --- Scopone -------------------------------------------------------------------

SCOPONE = register_preset(
    Rules(
        name="scopone",
        player_counts=(4,),
        hand_size=9,
        table_size=4,
        description="Scopone: 4 players in partnerships, 9 cards each, 4 on the table, no further deals (pagat).",
    )
)

SCOPONE_SCIENTIFICO = register_preset(
    Rules(
        name="scopone_scientifico",
        player_counts=(4,),
        hand_size=10,
        table_size=0,
        description="Scopone scientifico: 4 players, 10 cards each, nothing on the table; the first player trails.",
    )
)

# --- the Ace takes all ---------------------------------------------------------

ASSO_PIGLIATUTTO = register_preset(
    Rules(
        name="asso_pigliatutto",
        ace_takes_all=True,
        ace_takes_all_scopa=True,
        description="Asso pigliatutto: an Ace takes every table card and scores a scopa, unless an Ace is there.",
    )
)

SCOPA_D_ASSI = register_preset(
    Rules(
        name="scopa_d_assi",
        ace_takes_all=True,
        ace_takes_all_scopa=False,
        description="Scopa d'Assi: an Ace takes every table card (unless an Ace is there), not a scopa.",
    )
)

register_preset(
    SCOPA_D_ASSI.replace(
        name="scopa_d_assi_9",
        player_counts=(4,),
        hand_size=9,
        description="Scopa d'Assi for 4 in partnerships dealt 9 cards each, 4 on the table (pagat).",
    )
)
register_preset(
    SCOPA_D_ASSI.replace(
        name="scopa_d_assi_10",
        player_counts=(4,),
        hand_size=10,
        table_size=0,
        description="Scopa d'Assi for 4 in partnerships dealt 10 cards each (pagat, wikipedia).",
    )
)
register_preset(
    SCOPA_D_ASSI.replace(
        name="scopa_d_assi_options",
        ace_takes_itself=True,
        aces_redeal=True,
        description="Scopa d'Assi with both pagat options: an Ace takes itself; redeal when an Ace is dealt face up.",
    )
)

# --- Scopa di Quindici ------------------------------------------------------------

QUINDICI_1 = register_preset(
    Rules(
        name="scopa_di_quindici_1",
        capture_equal=False,
        capture_sum=15,
        description="Scopa di Quindici, first version: capture only sets that total 15 with the played card.",
    )
)
register_preset(QUINDICI_1.replace(name="escoba", description="Escoba: the Spanish name of Scopa di Quindici 1."))
register_preset(
    QUINDICI_1.replace(
        name="scopa_a_quindici",
        description="Scopa a Quindici (wikipedia): any set that with the played card adds to 15.",
    )
)
QUINDICI_2 = register_preset(
    Rules(
        name="scopa_di_quindici_2",
        capture_sum=15,
        single_card_priority=False,
        description="Scopa di Quindici, second version: equal-value captures or sets totalling 15 with the card.",
    )
)
register_preset(
    QUINDICI_2.replace(
        name="scopa_di_quindici_2_fewest",
        fewest_cards=True,
        description="Scopa di Quindici 2 with the restriction: capture as few cards as possible.",
    )
)
register_preset(
    QUINDICI_2.replace(
        name="scopa_di_quindici_3",
        ace_takes_all=True,
        ace_takes_all_scopa=True,
        target=31,
        description="Scopa di Quindici, third version: version 2 plus Ace takes all (a scopa), to 31.",
    )
)

# --- Scopa Corse -----------------------------------------------------------------

SCOPA_CORSE = register_preset(
    Rules(
        name="scopa_corse",
        player_counts=(2, 4),
        ranks=(1, 3, 4, 5, 6, 7, 8, 9, 10),
        hand_size=3,
        table_size=4,
        # pagat's 2-player schedule (3, 3, 3, 3, 4, 4) deals 40 cards from a 36-card deck;
        # (3, 3, 3, 3, 4) is the reading that deals exactly 4 + 2 * 16 = 36 (docs/rules.md).
        deal_schedules=((2, (3, 3, 3, 3, 4)), (4, (3, 3, 2))),
        capture_optional=True,
        target=21,
        description="Scopa Corse: 36 cards without Twos, Corsican deals, capturing optional, to 21.",
    )
)

# --- Chkobba ---------------------------------------------------------------------

CHKOBBA = register_preset(
    Rules(
        name="chkobba",
        player_counts=(2, 4),
        first_card_choice=True,
        kings_redeal=False,
        redeal_same_rank=3,
        prime_rule="sevens",
        target=21,
        description="Chkobba (Tunisia): first card kept or tabled, karta, dinari, barmila, haya, to 21.",
    )
)

# --- Hurrikan --------------------------------------------------------------------

HURRIKAN = register_preset(
    Rules(
        name="hurrikan",
        player_counts=(2, 4),
        hand_size=6,
        table_size=4,
        deal_schedules=((4, (9,)),),
        bonus_suit=CUPS,
        primiera_values=(16, 12, 13, 14, 15, 18, 21, 8, 9, 10),
        target=16,
        double_game_below=8,
        kings_redeal=False,
        last_play_scopa=False,
        description="Hurrikan (Germany): deals of six, hearts the bonus suit, Queen 9 / Jack 8 in the Premiere, to 16.",
    )
)
register_preset(
    HURRIKAN.replace(
        name="hurrikan_10",
        player_counts=(4,),
        hand_size=10,
        table_size=0,
        deal_schedules=(),
        description="Hurrikan for 4 in partnerships with 10-card hands (the books' Scopone-like version).",
    )
)
register_preset(
    HURRIKAN.replace(
        name="hurrikan_italian",
        kings_redeal=True,
        description="Hurrikan with the Italian Kings redeal (the dealer's last card stays no Hurrikan).",
    )
)
register_preset(
    HURRIKAN.replace(
        name="hurrikan_last_sweep",
        last_play_scopa=True,
        description="Hurrikan where the dealer's last card clearing the table scores a Hurrikan.",
    )
)

# --- the booklet ------------------------------------------------------------------

BOOKLET = register_preset(
    Rules(
        name="booklet",
        # "for 2 to 4 players", each for themselves; teams are the TEAM PLAY variant.
        player_counts=(2, 3, 4),
        partnerships=(),
        max_capture_cards=2,
        fewest_cards=True,
        prime_rule="sevens",
        # The booklet's primiera table has the row "None | 0": a missing suit counts 0
        # (for booklet_primiera and any booklet game combined with LA PRIMIERA).
        primiera_all_suits=False,
        description="Booklet Scopa: capture 1 or 2 cards, always the fewest; most Sevens (then Sixes) scores.",
    )
)
register_preset(
    BOOKLET.replace(
        name="booklet_team",
        player_counts=(4,),
        partnerships=(4,),
        description="Booklet Scopa, Team Play: two teams of 2.",
    )
)
register_preset(
    BOOKLET.replace(
        name="booklet_primiera",
        prime_rule="primiera",
        description="Booklet Scopa, La Primiera: the best primiera instead of the most Sevens (a missing suit "
        "counts 0).",
    )
)
register_preset(
    BOOKLET.replace(
        name="booklet_scientifico",
        player_counts=(2, 4),
        # Each for themselves, as the booklet's basic game; "You can also use this variant with
        # Team Play" is the option "booklet_scientifico,partnerships=4".
        table_size=0,
        deal_schedules=((2, (20,)), (4, (10,))),
        description="Booklet Scopa, Il Scopone Scientifico: all cards dealt, none on the table, each for "
        "themselves (Team Play: partnerships=4).",
    )
)
register_preset(
    BOOKLET.replace(
        name="booklet_capture_more",
        max_capture_cards=3,
        description="Booklet Scopa, Capture More Cards: up to 3 cards at a time, still the fewest.",
    )
)

# --- issue 4: scoring extras ----------------------------------------------------------
# The extras are fields (options) that combine with any preset, e.g.
# "standard,re_bello=true,seven_of_cups=true"; these presets name the combinations the
# sources describe as games of their own.

NAPOLA = register_preset(
    Rules(
        name="napola",
        napola="pagat_6",
        target=21,
        description="Napola: A-2-3 of coins scores 3, +1 per further card in sequence up to 6 (pagat), to 21.",
    )
)
register_preset(
    NAPOLA.replace(
        name="napola_9",
        napola="pagat_9",
        description="Napola up to 9 (A..Queen); the whole coin suit is a Napoleone that wins the game (pagat).",
    )
)
register_preset(
    NAPOLA.replace(
        name="napola_wikipedia",
        napola="wikipedia",
        description="Napola (Scopone trentino, wikipedia): 3 for A-2-3 of coins plus 1 per other coin, to 21.",
    )
)
register_preset(
    SCOPA_D_ASSI.replace(
        name="scopone_milanese",
        player_counts=(4,),
        hand_size=10,
        table_size=0,
        napola="pagat_6",
        target=21,
        description="Milan area (wikipedia): Scopone scientifico + Scopa d'Assi + Napola, to 21.",
    )
)
SCALETTE = register_preset(
    Rules(
        name="scalette",
        scalette=True,
        target=21,
        description="Scopa con le Scalette: scaletta bassa A-2-3 (3+), alta K-Q-J (5+) of coins; a Scala wins (pagat).",
    )
)
register_preset(
    SCOPA_D_ASSI.replace(
        name="scalette_d_assi",
        scalette=True,
        target=21,
        description="Scopa con le Scalette played as Scopa d'Assi (pagat).",
    )
)
SCOPA_BAZZICA = register_preset(
    Rules(
        name="scopa_bazzica",
        player_counts=(2,),
        bazzica_points=(3, 3, 10),
        target=21,
        description="Scopa Bazzica (pagat): declare a bazzica (3) or a bazzicotto (10) after each deal, to 21.",
    )
)
SBARAZZINA = register_preset(
    SCOPA_D_ASSI.replace(
        name="sbarazzina",
        re_bello=True,
        bazzica_points=(2, 3, 7),
        target=41,
        description="Sbarazzina (Emilia, pagat): Ace takes all without a sweep, Re Bello, bazzica 2/3, three of a "
        "kind 7, to 41.",
    )
)
register_preset(
    SBARAZZINA.replace(
        name="piva",
        player_counts=(2,),
        piva=True,
        target=21,
        description="Piva (Riccione, pagat): two-player Sbarazzina where the Two of clubs scores minus 5, to 21.",
    )
)

# --- Cirulla ------------------------------------------------------------------------------

CIRULLA = register_preset(
    Rules(
        name="cirulla",
        player_counts=(2, 3, 4),
        capture_sum=15,
        single_card_priority=False,
        ace_takes_all=True,
        ace_takes_all_scopa=True,
        kings_redeal=False,
        redeal_aces=2,
        redeal_next_dealer=True,
        hand_bonus_points=(3, 10),
        table_bonus=True,
        bonus_wildcard=True,
        piccola_grande=True,
        all_coins_wins=True,
        target=51,
        description="Cirulla (Liguria, wikipedia): free choice of captures, fifteens, the Ace takes all; hand and "
        "dealer bonuses with the Seven of hearts as wildcard; la piccola and la grande; to 51.",
    )
)

# --- Chiamarsi fuori ----------------------------------------------------------------

CHIAMARSI_FUORI = register_preset(
    Rules(
        name="chiamarsi_fuori",
        player_counts=(2, 4, 6),
        claim_out=True,
        target=11,
        description="Standard Scopa where a player may end the game by claiming to have reached the target of 11 "
        "('chiamarsi fuori', pagat); a wrong claim loses. Two sides: 2, 4 or 6 players.",
    )
)

# --- the 52-card game for 8 players ----------------------------------------------------

FRENCH_52_PRIMIERA = (*PRIMIERA_BY_RANK[1:8], 10, 10, 10, 10, 10, 10)
"""Primiera values of ranks 1..13 in ``french_52``: the text gives none; the standard scale
for Ace..Seven and 10 for every card from the 8 to the King (the standard game's 10 for
its three pictures)."""

FRENCH_52 = register_preset(
    Rules(
        name="french_52",
        # wikipedia, "Playing with French-suited cards": "it is possible to play an 8 player
        # game of scopa using all 52 cards. 4 cards are placed face-up on the table, and 3
        # cards are dealt to each player for 2 rounds (52 = 4 + 3 * 8 * 2). Jacks are treated
        # as value 11, Queens as 12, and Kings as 13."
        player_counts=(8,),
        partnerships=(),
        ranks_per_suit=FRENCH_RANKS,
        ranks=tuple(range(1, FRENCH_RANKS + 1)),
        hand_size=3,
        table_size=4,
        primiera_values=FRENCH_52_PRIMIERA,
        # The section gives no scoring of its own, so the article's "Scoring" holds, whose
        # example counts a primiera short of a suit by its sum: "If one player has three
        # sevens (3x21) and no cards of the fourth suit (sum=63), their opponent can win the
        # 'prime' with one seven (21) and three aces (3x16), for their sum would be 69."
        primiera_all_suits=False,
        # Readings of what the text leaves open (docs/rules.md): three Kings (13) face up
        # redeal as in the standard game; ties score nobody; one game to 11 (the series of
        # games, "so that each player has the opportunity to deal", is played outside).
        description="The 52-card game (wikipedia, French-suited cards): 8 players each for themselves, 4 on the "
        "table, 3 cards each for 2 rounds, J Q K worth 11 12 13; diamonds are the coins; a primiera short of a "
        "suit counts its sum.",
    )
)

# --- research: a game small enough for tabular solvers --------------------------------

SMALL = register_preset(
    Rules(
        name="small",
        player_counts=(2,),
        ranks=(1, 2),
        hand_size=2,
        table_size=0,
        # No rule text: a reduction of the standard rules for exact solvers (docs/openspiel.md).
        # 8 cards (the Aces and Twos), two deals of 2 cards each, nothing on the table; a Two
        # captures a Two or two Aces. As OpenSpiel's python_scopa hand: 2,520 deals, 40,320 plays
        # to the end, 113,092 information sets.
        description="Small Scopa for tabular solvers: the 8 Aces and Twos, 2 players, two deals of 2 cards, "
        "no table cards (no rule text; docs/openspiel.md).",
    )
)
