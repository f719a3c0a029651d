"""Scopa as an OpenSpiel game: ``pyspiel.load_game("python_scopa", {...})``.

Importing this module registers the game (it needs the ``openspiel`` extra:
``pip install -e '.[openspiel]'``)::

    import pyspiel
    import scopa_env.openspiel.game  # registers "python_scopa"

    game = pyspiel.load_game("python_scopa", {"rules": "small", "players": 2})

The rules are the engine's (:class:`~scopa_env.engine.game.Game`): it deals each hand from the
chance outcomes (:meth:`~scopa_env.engine.game.Game.from_order`) and plays it; this package only
turns the deal into chance nodes and the engine's state into OpenSpiel's strings and tensors.

====================  ==========================================================================
parameter             meaning (default)
====================  ==========================================================================
``rules``             preset name or option string of :func:`~scopa_env.engine.rules.get_rules`
                      (``"standard"``)
``players``           seats, 2, 3, 4 or 6 (8 for ``french_52``); sides as the rules say: 4 and 6
                      play in two teams in the standard game (``2``)
``action_mode``       ``"move"``: one id per (card, captured set) of :mod:`scopa_env.engine.actions`;
                      ``"select"``: name the card, then the captured cards one at a time (``"move"``)
``episode``           ``"hand"``: one hand; ``"game"``: hands until a side wins (``"hand"``)
``reward``            ``"points"``: the side's hand points minus the mean of the other sides',
                      summed over the episode's hands; ``"game"``: +1 to the winning side, the
                      others share -1 (a hand episode is won by the side with strictly most hand
                      points; a tie at the top gives 0 to all) (``"points"``)
``max_hands``         a game episode still undecided after this many hands ends with 0 for the
                      ``"game"`` reward (``50``)
====================  ==========================================================================

Returns are zero-sum for every player count: a seat's return is its side's, and with
three sides the two losers get -1/2 each under ``reward="game"`` (the PettingZoo env gives
them -1).

Chance: the deal
    Each hand starts with chance nodes that deal the whole hand, as the engine's shuffle
    does: first the table cards, then, for each deal of the hand (the stock deals of the
    standard game included), each seat's cards in turn from the player after the dealer.
    A chance outcome is a card id (0..39; 0..51 for the 52-card deck of ``french_52``), and the cards of one table or hand come in
    ascending order, so each set is one chance path: its probability is
    ``C(a, m - 1) / C(b, m)`` for ``m`` cards still to deal to the set, ``a`` the undealt
    cards above the drawn one and ``b`` those above the set's previous card. Cards of a
    later deal stay hidden from everyone, their owner included, until the engine deals
    them.
    A table the rules throw in (three Kings ...) is never dealt: the table's outcomes are
    weighted by the number of completions the rules keep, so the deal has the
    distribution of the engine's deal after redeals. The thrown-in cards are shuffled
    back, so leaving them out hides nothing that matters for the rest of the hand.
    Where a redeal changes more than the cards (``redeal_next_dealer``: Cirulla's next
    dealer deals again; ``first_card_choice``: Chkobba's first card is asked again), the
    table is dealt unweighted and a thrown-in table is public: the hand is dealt again
    with new chance nodes after it, by the seat the engine's deal names (the next dealer
    after Cirulla's thrown-in table; the same dealer after Chkobba's, as in the engine).

Decisions of the deal (player actions, the AEC env's ids in both modes)
    Chkobba (``first_card_choice``): the deal starts with one chance node, the first card,
    drawn for the player after the dealer, who then keeps it (the self-mask move ``(card,
    1 << card)``; "select": name it, then name it again) or tables it (``(card, 0)``;
    "select": name it, then CONFIRM), in the engine's game of that moment
    (:meth:`Game.from_deal` with ``deciding=True``); the table and the hands follow as
    chance nodes, one card fewer for the holder (kept) or the table (tabled). A kept card
    is seen by its holder only; a tabled one by everyone. Declarations (``bazzica_points``
    / ``hand_bonus_points``): after each three-card deal the engine queues the seats that
    may declare (:attr:`Game.declare_queue`, public, as in :class:`PlayerView`; Cirulla's
    hand bonuses: the seat to move alone, at its first turn of the deal, after the earlier
    players' cards of the round); each declares (the self-mask move of the hand's highest card, or Cirulla's wildcard move
    naming the rank) or passes (:func:`~scopa_env.engine.scoring.declaring_pairs`). A declared
    hand is shown: it is in every player's strings and in the ``revealed`` planes of the
    tensors (:func:`~scopa_env.engine.observation.write_observation`). Cirulla's table bonus is
    the engine's (``Game._table_bonus``): no decision. Declaration points count in the
    "points" returns as in the env.

Strings and tensors (player ``p``)
    ``information_state_string``: perfect recall. The hand number, dealer and scores,
    thrown-in tables, the first card (``p``'s own) and its fate, the initial table,
    ``p``'s cards of every deal made so far, the seats to declare and every declaration
    (the shown hand) or pass, every play in order and ``p``'s own pending "select"
    choice; in game episodes the earlier hands the same way. Other hands and the stock
    appear as card counts only.
    ``observation_string``: ``p``'s :class:`~scopa_env.engine.game.PlayerView` in short
    notation (hand, table, piles, played cards, scope, scores, stock size).
    ``observation_tensor``: the kit's observation vector, laid out by
    :class:`~scopa_env.engine.observation.ObservationLayout` (``"observation"``, 376 floats
    for 2 players; 1,144 for ``french_52`` with 8 players, its card planes 52 wide).
    ``information_state_tensor``: the observation followed by ``"plays"``, this hand's
    plays in order (``[ply, 0, card]`` the played card, ``[ply, 1, card]`` the cards it
    took). Within a hand that is perfect recall; earlier hands of a game episode are
    summed up by the scores only (the string has them in full).
    At chance nodes both tensors are zeros: nobody acts while the cards are dealt.
    Card planes, ``plays`` and chance outcomes are :attr:`Rules.num_card_ids` wide (40, or
    52 for ``french_52``, whose strings write the 52-card deck's notation: ``10h``, ``Qs``,
    ``Kc``); "select" mode has ``num_card_ids + 1`` actions (CONFIRM last:
    :func:`~scopa_env.engine.actions.confirm_action`). The 40-card games are unchanged by the
    52-card deck (``tests/test_openspiel_game.py`` holds their fingerprints). ``french_52`` plays
    in both modes ("move": 72,752 ids).

``resample_from_infostate(p, sampler)`` deals the cards ``p`` cannot see again with the
kit's determinization (:meth:`~scopa_env.engine.game.PlayerView.determinize`) and replays the
history with them; the sampler is called once to seed it. Shown hands, thrown-in tables
and decisions stay; a kept first card (not ``p``'s) is one of its holder's first cards;
where a seat passed on a declaration its hand must be declarable again, so under those
rules draws are repeated until ``p``'s information state is the same (rejection). :func:`state_from_view` builds
a state at an agent's decision from a :class:`~scopa_env.engine.game.PlayerView` (the hidden
cards determinized): that is how an OpenSpiel bot plays as a kit agent
(:mod:`agents.openspiel_bot`).

:func:`export_efg` writes the whole tree of a small game (``rules="small"``: 138,600 decision
nodes) in Gambit's ``.efg`` format for ``pyspiel.load_efg_game``, so that OpenSpiel's C++ CFR and
exploitability run on an exact copy at C++ speed.

Every preset plays, the rules whose deal is more than a shuffle included (above).

The package, one job per module (none imports this one, which registers the game):

==============================================  ===============================================
:mod:`scopa_env.openspiel.game` (this module)   ``GAME_TYPE``, :class:`ScopaGame`, registration
:mod:`scopa_env.openspiel.setup`                the parameters, their check, :class:`Setup`
:mod:`scopa_env.openspiel.position`             :class:`Position`: chance deal, transitions,
                                                strings, in plain Python over the engine's game
:mod:`scopa_env.openspiel.state`                :class:`ScopaState`, OpenSpiel's shell
:mod:`scopa_env.openspiel.observer`             :class:`ScopaObserver`: tensors and strings
:mod:`scopa_env.openspiel.resample`             ``resample_from_infostate``, :func:`state_from_view`
:mod:`scopa_env.openspiel.export`               :func:`export_efg`, :class:`TreeExport`
==============================================  ===============================================

The names of the earlier single module (``scopa_env.openspiel_game``) are re-exported here.
"""

from __future__ import annotations

import pyspiel

from scopa_env.engine.rules import ALLOWED_PLAYER_COUNTS
from scopa_env.openspiel.export import TreeExport, export_efg
from scopa_env.openspiel.observer import ScopaObserver
from scopa_env.openspiel.position import Position
from scopa_env.openspiel.resample import state_from_view
from scopa_env.openspiel.setup import DEFAULT_PARAMS, GAME_NAME, Setup, check_bridge_rules, parse_params
from scopa_env.openspiel.state import ScopaState

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Scopa (scopa-rl engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=max(ALLOWED_PLAYER_COUNTS),
    min_num_players=min(ALLOWED_PLAYER_COUNTS),
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=False,
    parameter_specification=DEFAULT_PARAMS,
)


class ScopaGame(pyspiel.Game):
    """The OpenSpiel game (static facts); build it with ``pyspiel.load_game("python_scopa", params)``."""

    def __init__(self, params: dict | None = None) -> None:
        setup = parse_params(params)
        hands = setup.max_hands if setup.episode == "game" else 1
        bound = setup.point_bound() * hands if setup.reward == "points" else 1.0
        low = -bound if setup.reward == "points" or setup.num_sides == 2 else -1.0 / (setup.num_sides - 1)
        info = pyspiel.GameInfo(
            num_distinct_actions=setup.num_actions,
            max_chance_outcomes=setup.num_cards,
            num_players=setup.num_players,
            min_utility=low,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=setup.max_decisions_per_hand() * hands,
        )
        super().__init__(GAME_TYPE, info, {**DEFAULT_PARAMS, **(params or {})})
        self.setup = setup

    def new_initial_state(self) -> ScopaState:
        return ScopaState(self)

    def state_at(self, position: Position) -> ScopaState:
        """A state over ``position`` (a copy) whose OpenSpiel history holds ``position.history``."""
        state = ScopaState(self, Position.initial(self.setup, position.start))
        for action in position.history:
            state.apply_action(action)
        return state

    def make_py_observer(self, iig_obs_type=None, params=None) -> ScopaObserver:
        if params:
            raise ValueError(f"python_scopa observers take no parameters, got {params}")
        return ScopaObserver(self.setup, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


pyspiel.register_game(GAME_TYPE, ScopaGame)

__all__ = [
    "DEFAULT_PARAMS",
    "GAME_NAME",
    "GAME_TYPE",
    "Position",
    "ScopaGame",
    "ScopaObserver",
    "ScopaState",
    "Setup",
    "TreeExport",
    "check_bridge_rules",
    "export_efg",
    "parse_params",
    "state_from_view",
]
