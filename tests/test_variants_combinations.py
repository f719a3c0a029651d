"""The scoring extras, declarations and claims as presets and as option strings, alone and combined:
their "move" mode sizes, what the compiled core plays of them, the combinations refused, and
random games at every player count in the engine and both env modes, checking that the extras,
the events and the declarations score as the rules say. (tests/test_variants_presets.py plays
every registered preset, these included, against its generic invariants.)

Quotes are from ``shared/rules-sources/``: ``pagat`` is pagat-scopa.txt, ``wikipedia``
is wikipedia-scopa.txt and ``booklet`` is booklet-origins-rules-strategies.txt. Each table row
quotes the sentence it checks.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from variant_helpers import FUORI, WILD_OPTION, bazzica_deal

from scopa_env import scopa_v0
from scopa_env.engine.actions import move_enumeration
from scopa_env.engine.cards import RANK_MASK, SUIT_MASK, card_id, mask_of
from scopa_env.engine.game import Game
from scopa_env.engine.rules import get_rules
from scopa_env.engine.scoring import score_hand

# --- move-mode sizes, the compiled core -----------------------------------------------------------


DOCUMENTED_N = {
    "napola": 16_200,
    "napola_9": 16_200,
    "napola_wikipedia": 16_200,
    "scopone_milanese": 16_204,
    "scalette": 16_200,
    "scalette_d_assi": 16_204,
    "sbarazzina": 16_244,
    "piva": 16_244,
    "scopa_bazzica": 16_240,
    "cirulla": 271_737,
    "chiamarsi_fuori": 16_240,
}


@pytest.mark.parametrize("preset, n", sorted(DOCUMENTED_N.items()))
def test_move_mode_size(preset, n):
    """docs/rules.md: N per preset (Cirulla's wildcard with the fifteens: 271,737)."""
    assert len(move_enumeration(get_rules(preset))) == n, f"{preset}: documented N = {n}"


def test_move_mode_size_with_the_wildcard():
    """docs/rules.md: the wildcard may capture and be captured as any rank it is declared as (N = 39,761)."""
    assert len(move_enumeration(get_rules(WILD_OPTION))) == 39_761
    assert len(move_enumeration(get_rules("standard,hand_bonus_points=3/10"))) == 16_240


COMPILED_OPTIONS = [
    "standard,re_bello=true",
    "standard,seven_of_cups=true",
    "standard,palle_del_cane=true",
    "standard,primiera_values=face",
    "standard,primiera_by_counts=true",
    "standard,coins_reset=8",
    "standard,scopa_value=card",
    "standard,scopa_value=cards",
    "standard,all_coins_wins=true",
]
"""Pure scoring options: the compiled core plays them (tests/test_fast.py checks it plays them alike)."""

CORE_DECISION_RULES = [
    FUORI,
    WILD_OPTION,
    "chiamarsi_fuori",
    "cirulla",
    "piva",
    "sbarazzina",
    "scopa_bazzica",
    "chkobba",
]
"""Rules with a claim, declarations, Cirulla's wildcard or Chkobba's first card: decisions the compiled core
models (tests/test_fast_decisions.py checks it plays them as the engine does; tests/test_fast.py that a
field outside its whitelist is refused)."""

OPTION_STRINGS = COMPILED_OPTIONS + [FUORI, WILD_OPTION]
"""Every option string of the extras, declarations and claims, for the random-game suite below."""


@pytest.mark.parametrize("rules", COMPILED_OPTIONS + ["napola", "napola_9", "napola_wikipedia", "scalette"])
def test_fast_core_plays_the_scoring_extras(rules):
    from scopa_env.fast import check_supported

    check_supported(get_rules(rules))  # raises NotImplementedError if not


@pytest.mark.parametrize("rules", CORE_DECISION_RULES)
def test_fast_core_plays_the_decisions(rules):
    from scopa_env.fast import check_supported

    check_supported(get_rules(rules))  # raises NotImplementedError if not


# --- impossible combinations ----------------------------------------------------------------------


IMPOSSIBLE = [
    (lambda: get_rules("napola").replace(scalette=True), "is equivalent to a Napola"),
    (lambda: get_rules("standard,napola=pagat_7"), "napola must be one of"),
    (lambda: get_rules("standard,scopa_value=double"), "scopa_value must be one of"),
    (lambda: get_rules("standard,coins_reset=4"), "coins_reset must be 0"),
    (lambda: get_rules("hurrikan,seven_of_cups=true"), "already the settebello"),
    (lambda: get_rules("scopa_corse,piva=true"), "piva needs the Twos"),
    (lambda: get_rules("booklet,primiera_by_counts=true"), 'prime_rule="sevens" replaces'),
    (lambda: get_rules("standard,primiera_values=silly"), "bad value"),
    (lambda: get_rules("chkobba").replace(bazzica_points=(3, 3, 10)), "first_card_choice"),
    (lambda: get_rules("scopa_bazzica").replace(hand_bonus_points=(3, 10)), "two declaration systems"),
    (lambda: get_rules("standard,bonus_wildcard=true"), "bonus_wildcard is a wildcard for the hand and dealer"),
    (lambda: get_rules("cirulla,napola=pagat_6"), "piccola_grande scores the run"),
    (lambda: get_rules("scopone_scientifico,table_bonus=true"), "table_bonus needs cards dealt to the table"),
    (lambda: get_rules("standard,claim_out=true"), "claim_out needs two sides"),
    (lambda: get_rules("scopa_d_assi_options,claim_out=true,player_counts=2"), "share the self-mask"),
    (lambda: get_rules("hurrikan").replace(bazzica_points=(3, 3, 10)), "three-card deals"),
    (lambda: get_rules("standard,bazzica_points=3/10"), "bazzica_points must be"),
    (
        lambda: bazzica_deal("Ad 5c Ks", "2d 3c 4s", declare_queue_override=[0, 1]),
        "nothing to declare",
    ),  # fmt: skip
]


@pytest.mark.parametrize("make, message", IMPOSSIBLE)
def test_impossible_combinations(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- random games: invariants in every preset and option of the extras ----------------------------


SUITE = sorted(DOCUMENTED_N) + OPTION_STRINGS + ["standard,scopa_value=card,coins_reset=6,piva=true"]

SUITE_COUNTS = [(name, n) for name in SUITE for n in get_rules(name).player_counts]


def check_cards_accounted(game: Game) -> None:
    parts = list(game.hands) + [game.table, mask_of(game.stock)] + list(game.piles)
    union = 0
    for p in parts:
        union |= p
    assert sum(p.bit_count() for p in parts) == len(game.rules.deck) and union == game.rules.deck_mask, repr(game)


def check_hand_end(game: Game, before: list[int]) -> None:
    rules = game.rules
    result = game.hand_result
    piles = [mask_of(p) for p in result.piles]
    assert sum(p.bit_count() for p in piles) == len(rules.deck), "every card in a pile at the hand end"
    for row in result.hand_score:
        keys = [k for k in row if not k.startswith("num_") and k not in ("total", "primiera_value", "double_game")]
        assert row["total"] == sum(row[k] for k in keys), row
    libyan = rules.scopa_value != "points"
    again = score_hand(result.piles, result.scope, rules, result.scope_points if libyan else None)
    assert again == result.hand_score, "the hand score is a function of the piles and scope"
    after = [b + row["total"] for b, row in zip(before, result.hand_score)]
    for name, side in result.events:
        if name == "coins_reset":
            after = [v if s == side else 0 for s, v in enumerate(after)]
        else:
            assert game.winner == side and game.win_reason == name, "a game-winning item ends the game"
    assert after == game.scores, f"{after} != {game.scores}"
    coins = [(p & SUIT_MASK[rules.bonus_suit]).bit_count() for p in piles]
    if rules.napola and result.events == ():
        for row, p in zip(result.hand_score, piles):
            has = p & 0b111 == 0b111
            assert (row["napola"] > 0) == has, f"napola iff A-2-3 of coins: {row}"
    assert sum(coins) == 10


def play_checked(game: Game, rnd: random.Random, hands: int) -> None:
    rng = np.random.default_rng(0)
    step = 0
    while game.winner is None and game.hand_number < hands:
        check_cards_accounted(game)
        before = list(game.scores)
        pairs = game.legal_pairs()
        step += 1
        if step % 5 == 0:
            world = game.view().determinize(rng)
            assert world.legal_pairs() == pairs, "a determinized world has the same legal moves"
        closing = game.deciding and len(game.declare_queue) == 1
        made = len(game.declarations)
        game.play_pair(*pairs[rnd.randrange(len(pairs))])
        if closing:
            new = game.declarations[made:]
            assert sum(d["points"] > 0 for d in new) <= 1, "only the best declaration scores"
            gained = [0] * game.num_sides
            for d in new:
                gained[d["side"]] += d["points"]
            assert game.scores == [b + g for b, g in zip(before, gained)], "declarations score at once"
        if game.hand_result is not None:
            check_hand_end(game, before)


@pytest.mark.parametrize("preset, n", SUITE_COUNTS)
def test_random_games_engine(preset, n):
    game = Game(n, preset, seed=n)
    play_checked(game, random.Random(n), hands=3)
    assert game.hand_number >= 1


@pytest.mark.parametrize("preset", SUITE)
def test_random_games_env(preset):
    """Both env modes: the mask is exactly the legal moves; every hand-end info carries the extras by name."""
    rules = get_rules(preset)
    n = rules.player_counts[0]
    for mode in ("move", "select") if DOCUMENTED_N.get(preset, 1) else ("select",):
        env = scopa_v0.raw_env(num_players=n, rules=preset, action_mode=mode, episode="hand")
        env.reset(seed=5)
        rng = np.random.default_rng(5)
        info = {}
        for _agent in env.agent_iter(max_iter=3000):
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            assert env.observation_space(_agent)["observation"].contains(obs["observation"]), "obs in its space"
            ids = np.flatnonzero(obs["action_mask"])
            if mode == "move" and env._pending_card is None:
                decoded = {(m.card, m.mask) for m in (env.decode_action(i) for i in ids)}
                assert decoded == set(env.game.action_pairs()), f"{preset}/{mode}: mask != legal moves"
            env.step(int(rng.choice(ids)))
        assert "hand_score" in info and ("events" in info) == rules.needs_events, f"{preset}/{mode}: hand-end info"
        assert ("declared" in info) == rules.declarations and ("table_bonus" in info) == rules.table_bonus
        row = info["hand_score"][0]
        for field, key in (("re_bello", "re_bello"), ("seven_of_cups", "seven_of_cups"), ("piva", "piva")):
            assert (key in row) == bool(getattr(rules, field)), f"{key} reported by name under {preset}"


def test_standard_observation_unchanged():
    env = scopa_v0.raw_env(rules="scalette_d_assi")
    assert env.layout.size == 376 and env.num_actions == 16_204
    assert scopa_v0.raw_env().num_actions == 16_200


def test_seven_cups_card_is_16():
    assert card_id(1, 7) == 16 and RANK_MASK[7] >> 16 & 1
