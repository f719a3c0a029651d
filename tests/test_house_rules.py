"""House rules as plug-ins (:mod:`scopa_env.engine.house_rules`): a package outside the kit registers a
capture rule and a scoring extra by name, and every layer plays them or refuses them by name.

The fixture writes such a package to a temporary folder (outside the kit's tree) and imports it, as a
user would: its module-level ``register_capture_rule`` / ``register_scoring_extra`` calls are all it does.
The rules: "a King may also take any single picture card (8, 9 or 10)" and "one point for the side
holding all four Kings".
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

from scopa_env.aec import scopa_v0
from scopa_env.engine import house_rules
from scopa_env.engine.actions import confirm_action, move_enumeration
from scopa_env.engine.cards import RANK_MASK, mask_of, parse_card, parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import PRESETS, STANDARD, Move, Rules, get_rules, legal_moves
from scopa_env.engine.scoring import score_hand

KING_RULE = "king_takes_a_picture"
KINGS_EXTRA = "four_kings"
PLUGIN = "scopa_house_kings"
"""The module name of the house rule package the fixture writes and imports."""
PLUGIN_SOURCE = f'''
"""A house rule package outside the kit: two rules, registered at import."""
from scopa_env.engine import house_rules
from scopa_env.engine.cards import RANK_MASK, RANK_OF

PICTURES = RANK_MASK[8] | RANK_MASK[9] | RANK_MASK[10]
KINGS = RANK_MASK[10]


def king_takes_a_picture(card, table, rules):
    """A King may also take any single picture card (8, 9 or 10)."""
    if RANK_OF[card] != 10:
        return ()
    found = table & PICTURES
    return [1 << c for c in range(40) if found >> c & 1]


def four_kings(pile, rules):
    """One point for the side holding all four Kings."""
    return int(pile & KINGS == KINGS)


house_rules.register_capture_rule(
    "{KING_RULE}", king_takes_a_picture, description="a King may also take any single picture card"
)
house_rules.register_scoring_extra("{KINGS_EXTRA}", four_kings, description="one point for all four Kings")
'''
BOTH = f"standard,house_rules={KING_RULE}/{KINGS_EXTRA}"


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Import the house rule package (its register calls run), then unregister its rules."""
    (tmp_path / f"{PLUGIN}.py").write_text(textwrap.dedent(PLUGIN_SOURCE))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(PLUGIN, None)
    module = importlib.import_module(PLUGIN)
    yield module
    for name in (KING_RULE, KINGS_EXTRA):
        if name in house_rules.registered():
            house_rules.unregister(name)
    sys.modules.pop(PLUGIN, None)


def rest_of_deck(*used: list[int]) -> list[int]:
    taken = {c for cards in used for c in cards}
    return [c for c in range(40) if c not in taken]


def king_deal() -> dict:
    """player_0 holds Kd 3d 4d; the table is Jc 2s 5b 6s: a King takes Jc+2s (8+2) by the standard rules,
    and under the house rule also Jc alone."""
    hands = [parse_cards("Kd 3d 4d"), parse_cards("Ac 6c 7c")]
    table = parse_cards("Jc 2s 5b 6s")
    stock = rest_of_deck(*hands, table)
    return {"hands": hands, "table": table, "stock": stock, "dealer": 1}


# --- the registry ----------------------------------------------------------------------------------


def test_registration_is_what_the_rules_see(plugin):
    assert {KING_RULE, KINGS_EXTRA} <= set(house_rules.registered())
    assert house_rules.get(KING_RULE).kind == house_rules.CAPTURE
    assert house_rules.get(KINGS_EXTRA).kind == house_rules.SCORING
    assert house_rules.get(KING_RULE).backends == frozenset(), "no backend but the engine and the env by default"
    rules = get_rules(BOTH)
    assert rules.house_rules == (KING_RULE, KINGS_EXTRA)
    assert rules == STANDARD.replace(name=BOTH, house_rules=(KING_RULE, KINGS_EXTRA))
    assert not rules.plain_captures, "a capture plug-in must leave the engine's fast path"
    assert STANDARD.replace(house_rules=(KINGS_EXTRA,)).plain_captures, "a scoring extra keeps the standard captures"
    assert get_rules(f"{BOTH},house_rules=none").house_rules == ()


def test_presets_are_unchanged():
    assert Rules().house_rules == ()
    assert all(r.house_rules == () for r in PRESETS.values())
    assert STANDARD == Rules() and hash(STANDARD) == hash(Rules())


def test_names_are_validated_and_unique(plugin):
    with pytest.raises(ValueError, match=r"^bad house rule name 'Kings Rule'") as bad:
        house_rules.register_scoring_extra("Kings Rule", plugin.four_kings)
    assert "\n" not in str(bad.value)
    with pytest.raises(ValueError, match="bad house rule name 'total'"):
        house_rules.register_scoring_extra("total", plugin.four_kings)  # a score key of every hand
    with pytest.raises(ValueError, match=r"^house rule 'four_kings' is already registered") as twice:
        house_rules.register_scoring_extra(KINGS_EXTRA, lambda pile, rules: 0)
    assert "\n" not in str(twice.value)
    with pytest.raises(ValueError, match="already registered"):
        house_rules.register_capture_rule(KINGS_EXTRA, plugin.four_kings)  # another kind under the name
    # the same function again (the package imported twice) is no error
    assert house_rules.register_scoring_extra(KINGS_EXTRA, plugin.four_kings) is house_rules.get(KINGS_EXTRA)
    with pytest.raises(ValueError, match="unknown backend"):
        house_rules.register_scoring_extra("other_extra", plugin.four_kings, backends=("gpu",))
    with pytest.raises(ValueError, match="needs 'fast'"):
        house_rules.register_scoring_extra("other_extra", plugin.four_kings, backends=("search",))
    assert "other_extra" not in house_rules.registered()


def test_unknown_names_are_refused_in_one_line(plugin):
    with pytest.raises(ValueError, match=r"^unknown house rule 'nope'; registered: .*four_kings") as lookup:
        house_rules.get("nope")
    assert "\n" not in str(lookup.value)
    with pytest.raises(ValueError, match=r"^Rules.house_rules names 'nope', which is not a registered") as build:
        Rules(house_rules=("nope",))
    assert "\n" not in str(build.value) and KING_RULE in str(build.value)
    with pytest.raises(ValueError, match="not a registered house rule"):
        get_rules("standard,house_rules=nope")
    with pytest.raises(ValueError, match="tuple of distinct names"):
        Rules(house_rules=(KING_RULE, KING_RULE))
    with pytest.raises(ValueError, match="tuple of distinct names"):
        Rules(house_rules=KING_RULE)  # a bare string is not a list of names


def test_unregister_removes_the_rule(plugin):
    house_rules.unregister(KINGS_EXTRA)
    assert KINGS_EXTRA not in house_rules.registered()
    with pytest.raises(ValueError, match="not a registered house rule"):
        STANDARD.replace(house_rules=(KINGS_EXTRA,))
    with pytest.raises(ValueError, match="unknown house rule"):
        house_rules.unregister(KINGS_EXTRA)


# --- the Python engine ---------------------------------------------------------------------------


def test_the_king_takes_a_picture_on_the_engine(plugin):
    """pagat: "There are numerous variants" (house_rules: a King may also take any single picture card)."""
    deal = king_deal()
    kd, jc = parse_card("Kd"), parse_card("Jc")
    hand, table = deal["hands"][0], deal["table"]
    standard = set(legal_moves(hand, table))
    assert Move(kd, [jc]) not in standard and Move(kd, parse_cards("Jc 2s")) in standard
    rules = get_rules(f"standard,house_rules={KING_RULE}")
    assert set(legal_moves(hand, table, rules)) == standard | {Move(kd, [jc])}, "added on top of the standard ones"
    game = Game.from_deal(**deal, rules=rules)
    assert (kd, 1 << jc) in game.legal_pairs()
    game.play(Move(kd, [jc]))
    assert game.piles[0] == mask_of([kd, jc]) and game.table == mask_of(parse_cards("2s 5b 6s"))
    with pytest.raises(ValueError):  # the rule gives the King no other single card
        Game.from_deal(**deal, rules=rules).play(Move(kd, parse_cards("2s")))


def test_a_bad_capture_from_a_plugin_is_named(plugin):
    house_rules.register_capture_rule("takes_a_ghost", lambda card, table, rules: [1 << 39 if table else 0])
    try:
        with pytest.raises(ValueError, match="house rule 'takes_a_ghost' gave the mask"):
            legal_moves(parse_cards("Kd"), parse_cards("Jc"), STANDARD.replace(house_rules=("takes_a_ghost",)))
    finally:
        house_rules.unregister("takes_a_ghost")


def test_four_kings_score_under_their_key(plugin):
    """The hand's last plays: player_0's King takes the fourth King, so side 0 holds all four."""
    hands = [parse_cards("Kd"), parse_cards("5c")]
    table = parse_cards("Kc")
    piles = [parse_cards("Ks Kb Ad 2d"), []]
    piles[1] = rest_of_deck(*hands, table, piles[0])
    deal = dict(hands=hands, table=table, stock=[], dealer=1, piles=piles, last_capturer=1, auto_next_hand=False)
    results = {}
    for name in ("standard", f"standard,house_rules={KINGS_EXTRA}"):
        game = Game.from_deal(**deal, rules=name)
        game.play(Move(parse_card("Kd"), parse_cards("Kc")))
        game.play(Move(parse_card("5c")))
        results[name] = game.hand_result.hand_score
    plain, extra = results.values()
    assert KINGS_EXTRA not in plain[0]
    assert [row[KINGS_EXTRA] for row in extra] == [1, 0]
    assert extra[0]["total"] == plain[0]["total"] + 1 and extra[1]["total"] == plain[1]["total"]
    kings = [c for c in range(40) if RANK_MASK[10] >> c & 1]
    split = score_hand([kings[:3], kings[3:]], [0, 0], f"standard,house_rules={KINGS_EXTRA}")
    assert [row[KINGS_EXTRA] for row in split] == [0, 0], "three Kings are not four"


# --- the AEC env, both action modes ------------------------------------------------------------------


def test_move_mode_offers_and_plays_the_kings_capture(plugin):
    rules = get_rules(BOTH)
    env = scopa_v0.raw_env(rules=rules, action_mode="move")
    env.reset(options={"deal": king_deal()})
    kd, jc = parse_card("Kd"), parse_card("Jc")
    action = env.encode_action(Move(kd, [jc]))
    mask = env.observe("player_0")["action_mask"]
    assert mask[action] == 1
    got = {env.decode_action(a) for a in np.flatnonzero(mask)}
    assert got == set(legal_moves(king_deal()["hands"][0], king_deal()["table"], rules))
    env.step(action)
    assert env.game.piles[0] == mask_of([kd, jc])
    assert len(move_enumeration(rules)) == len(move_enumeration(STANDARD)) + 4 * 8, "each King, each 8 and 9"


def test_select_mode_offers_and_plays_the_kings_capture(plugin):
    env = scopa_v0.raw_env(rules=get_rules(BOTH), action_mode="select")
    env.reset(options={"deal": king_deal()})
    kd, jc, two = parse_card("Kd"), parse_card("Jc"), parse_card("2s")
    env.step(kd)
    assert env.agent_selection == "player_0", "still choosing captures"
    mask = env.observe("player_0")["action_mask"]
    assert np.flatnonzero(mask).tolist() == [jc], "Jc starts both captures: Jc alone, Jc+2s"
    env.step(jc)
    mask = env.observe("player_0")["action_mask"]
    confirm = confirm_action(env.rules)
    assert mask[confirm] == 1 and mask[two] == 1, "confirm Jc alone (the house rule) or add 2s"
    env.step(confirm)
    assert env.game.piles[0] == mask_of([kd, jc]) and env.agent_selection == "player_1"


def test_random_games_play_in_both_modes(plugin):
    """Whole games under both plug-ins: every legal move has a "move" id, and the game ends."""
    for mode in ("move", "select"):
        env = scopa_v0.raw_env(rules=get_rules(BOTH), action_mode=mode, episode="hand")
        env.reset(seed=7)
        rng = np.random.default_rng(0)
        steps = 0
        while env.agents and steps < 500:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
            steps += 1
        assert not env.agents, f"{mode}: the hand did not end in {steps} steps"


def test_a_capture_outside_possible_is_named_in_move_mode(plugin):
    """A rule whose ``possible`` misses a capture it makes: the "move" ids refuse it, naming the rule."""
    house_rules.register_capture_rule("hidden_king", plugin.king_takes_a_picture, possible=lambda card, rules: ())
    try:
        env = scopa_v0.raw_env(rules=STANDARD.replace(house_rules=("hidden_king",)), action_mode="move")
        with pytest.raises(ValueError, match="house capture rule.*'hidden_king'.*possible"):
            env.reset(options={"deal": king_deal()})
            env.observe("player_0")
    finally:
        house_rules.unregister("hidden_king")


# --- where rules are shown -------------------------------------------------------------------------


def test_the_rules_show_their_house_rules(plugin, monkeypatch, capsys):
    rules = get_rules(BOTH)
    assert KING_RULE in rules.name and f"house_rules=('{KING_RULE}', '{KINGS_EXTRA}')" in repr(rules)
    text = house_rules.describe(rules.house_rules)
    assert text == (
        f"{KING_RULE} (capture rule: a King may also take any single picture card), "
        f"{KINGS_EXTRA} (scoring extra: one point for all four Kings)"
    )
    from scopa_app.cli import main

    monkeypatch.setitem(PRESETS, "kings_house", rules.replace(name="kings_house", description="Kings' house rules."))
    assert main(["presets"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("kings_house"))
    assert line.endswith(f"Kings' house rules. House rules: {text}."), line
    # the listing of the kit's presets is as it was
    assert all("House rules" not in row for row in main_lines(capsys, main) if not row.startswith("kings_house"))


def main_lines(capsys, main) -> list[str]:
    main(["presets"])
    return capsys.readouterr().out.splitlines()


# --- the backends refuse by name unless declared ----------------------------------------------------


def test_the_compiled_core_refuses_by_name(plugin):
    from scopa_env.fast.batch import check_supported

    with pytest.raises(NotImplementedError, match=rf"^the compiled core does not play house rule '{KING_RULE}'"):
        check_supported(get_rules(BOTH), 2)
    with pytest.raises(NotImplementedError, match=rf"house rule '{KINGS_EXTRA}'"):
        check_supported(STANDARD.replace(house_rules=(KINGS_EXTRA,)), 2)
    with pytest.raises(NotImplementedError, match="the compiled core does not play house rule"):
        STANDARD.replace(house_rules=(KINGS_EXTRA,)).check_backend("fast")


def test_openspiel_refuses_by_name(plugin):
    from scopa_env.openspiel.setup import parse_params

    with pytest.raises(NotImplementedError, match=rf"^the OpenSpiel game does not play house rule '{KING_RULE}'"):
        parse_params({"rules": BOTH, "players": 2})


def test_the_move_features_refuse_by_name(plugin):
    from train.dmc.agent import MoveFeatures

    with pytest.raises(NotImplementedError, match=rf"move features do not describe house rule '{KING_RULE}'"):
        MoveFeatures(get_rules(BOTH), 2)


def test_a_declared_backend_no_longer_refuses(plugin):
    """Registering the scoring extra with ``backends`` lifts exactly those refusals."""
    from scopa_env.fast.batch import check_supported
    from scopa_env.openspiel.setup import parse_params

    rules = STANDARD.replace(name="kings_extra", house_rules=(KINGS_EXTRA,))
    house_rules.register_scoring_extra(KINGS_EXTRA, plugin.four_kings, backends=("openspiel", "fast"))
    assert parse_params({"rules": rules, "players": 2}).rules is rules
    rules.check_backend("openspiel")
    check_supported(rules, 2)
    with pytest.raises(NotImplementedError, match=f"move features do not describe house rule '{KINGS_EXTRA}'"):
        rules.check_backend("features")  # not declared
    with pytest.raises(NotImplementedError, match=f"batched compiled search does not value house rule '{KINGS_EXTRA}'"):
        rules.check_backend("search")
    # a declared rule next to an undeclared one: the refusal names the undeclared one
    with pytest.raises(NotImplementedError, match=rf"does not play house rule '{KING_RULE}'"):
        get_rules(BOTH).check_backend("openspiel")


def test_fsearch_falls_back_to_the_python_search(plugin):
    """The ``fsearch`` agent hands rules the core does not play to the Python search, which plays the plug-in."""
    from agents.fast_search import FastSearchAgent

    rules = get_rules(BOTH)
    hands = [parse_cards("Kd 3d"), parse_cards("Ac 6c")]
    table = parse_cards("Jc 2s 5b")
    piles = [rest_of_deck(*hands, table)[:14], []]
    piles[1] = rest_of_deck(*hands, table, piles[0])
    game = Game.from_deal(hands, table, [], dealer=1, piles=piles, rules=rules, seed=0, auto_next_hand=False)
    agent = FastSearchAgent(seed=0, worlds=4)
    view = game.view(0)
    assert agent._kernel_inputs(view) is None, "the compiled search must not play these rules"
    move = agent.act(view)
    assert (move.card, move.mask) in game.legal_pairs()
