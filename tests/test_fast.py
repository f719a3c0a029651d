"""The compiled batched core plays the same game as the Python engine.

The differential test deals with the batched core (``scopa_env.fast``), hands each deal
to the AEC env (``scopa_v0.raw_env``, the source of truth) through ``reset(options=
{"deal": ...})`` and, for every later hand of a game, through the engine's shuffle
(``Game.rng.permutation`` is served the core's deal order), then plays the same random
moves in both and asserts at every step: the player to move, the observation, the legal
actions (mask or move ids), the rewards of every seat, the hand-end score breakdown,
the final scores and the winner.

CI plays 250 whole standard games per player count (1,000 in all) and 8 per other
supported preset and player count, split between "move" and "select" mode, plus
one-hand episodes. Every player count of every preset is a case, the booklet's 4 players
each for themselves (4 sides) too, and so is the standard game with 4 and 6 players each
for themselves (``partnerships=none``: 4 and 6 sides, the most the core holds). The full run plays ``SCOPA_DIFF_GAMES`` games per preset and
player count::

    SCOPA_DIFF_GAMES=10000 pytest tests/test_fast.py -k differential

``SCOPA_DIFF_PLAYERS=2`` (or ``2,4``...) keeps only those player counts.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from scopa_env import scopa_v0
from scopa_env.engine.actions import move_enumeration
from scopa_env.engine.cards import cards_of
from scopa_env.engine.game import Game
from scopa_env.engine.rules import PRESETS, get_rules
from scopa_env.engine.scoring import declaration
from scopa_env.fast import SCORE_FIELDS, SUPPORTED_FIELDS, BatchedScopa, check_supported, core, playout

FULL_GAMES = os.environ.get("SCOPA_DIFF_GAMES")
CI_STANDARD_GAMES = 250  # per player count: 1,000 standard games in CI
CI_PRESET_GAMES = 8  # per other preset and player count


def games_for(rules_name: str) -> int:
    """Whole games to check for one preset and player count."""
    if FULL_GAMES:
        return int(FULL_GAMES)
    return CI_STANDARD_GAMES if rules_name == "standard" else CI_PRESET_GAMES


def supported_presets() -> list[str]:
    out = []
    for name, rules in sorted(PRESETS.items()):
        try:
            check_supported(rules)
        except NotImplementedError:
            continue
        out.append(name)
    return out


def unsupported_presets() -> list[str]:
    return [name for name in sorted(PRESETS) if name not in supported_presets()]


PLAYERS = os.environ.get("SCOPA_DIFF_PLAYERS")
"""Optional filter of the cases by player count, e.g. ``SCOPA_DIFF_PLAYERS=2`` or ``2,4``."""


def core_plays(name: str, n: int) -> bool:
    try:
        check_supported(get_rules(name), n)
    except NotImplementedError:
        return False
    return True


EACH_FOR_THEMSELVES = "standard,partnerships=none"
"""The standard game with every player count each for themselves: 4 and 6 players make 4 and 6 sides."""


def wanted(n: int) -> bool:
    return not PLAYERS or str(n) in PLAYERS.split(",")


CASES = [
    (name, n)
    for name in supported_presets()
    for n in get_rules(name).player_counts
    if wanted(n) and core_plays(name, n)
] + [(EACH_FOR_THEMSELVES, n) for n in (4, 6) if wanted(n)]  # with 2 or 3 players it is the standard game


class CoreDeals:
    """Stands in for ``Game.rng``: each shuffle returns the permutation of the core's current deal.

    Under ``redeal_next_dealer`` (Cirulla) each deal the core threw in first moved the dealer
    on, so the engine is first handed as many deals that are thrown in (``redeal_aces``
    Aces on the table), then the core's.
    """

    def __init__(self, batch: BatchedScopa, game: int) -> None:
        self.batch, self.game = batch, game
        self.index = {c: k for k, c in enumerate(batch.rules.deck)}
        self.thrown: dict[tuple[int, ...], int] = {}

    def permutation(self, n: int) -> np.ndarray:
        st = self.batch.state(self.game)
        order = st["deal_order"]
        assert len(order) == n
        rules = self.batch.rules
        served = self.thrown.get(tuple(order), 0)
        if rules.redeal_next_dealer and served < st["redeals"]:
            self.thrown[tuple(order)] = served + 1
            order = list(order)
            first = self.batch.num_players * rules.schedule(self.batch.num_players)[0]
            aces = [c for c in order if c % 10 == 0][: rules.redeal_aces]
            for k, ace in enumerate(aces):  # the Aces onto the table: a deal thrown in
                j = order.index(ace)
                order[j], order[first + k] = order[first + k], order[j]
        return np.array([self.index[c] for c in order])


def env_for(batch: BatchedScopa, i: int):
    """A raw AEC env holding the same deal as row ``i`` of the batch."""
    st = batch.state(i)
    e = scopa_v0.raw_env(
        num_players=batch.num_players,
        rules=batch.rules,
        episode=batch.episode,
        reward=batch.reward_mode,
        action_mode=batch.action_mode,
    )
    deal = {
        "hands": [cards_of(h) for h in st["hands"]],
        "table": cards_of(st["table"]),
        "stock": st["stock"],
        "dealer": st["dealer"],
    }
    if any(st["piles"]):  # Cirulla: the dealer took the table as a bonus
        deal.update(piles=[cards_of(p) for p in st["piles"]], scope=st["scope"], last_capturer=st["last_capturer"])
    if st["deciding"]:  # Chkobba: the hand opens with the drawn first card's decision
        deal["deciding"] = True
    if st["declare_queue"]:  # bazzica_points: the deal opens with the declarations
        deal.update(
            declare_queue=st["declare_queue"], pending=st["pending"], revealed=st["revealed"], current=st["current"]
        )
    e.reset(options={"deal": deal})
    e.game.rng = CoreDeals(batch, i)
    return e


def check_same(batch: BatchedScopa, e, i: int, where: str, full_mask: bool) -> None:
    g = e.game
    seat = int(batch.to_play[i])
    agent = f"player_{seat}"
    assert e.agent_selection == agent, f"{where}: to move {e.agent_selection} vs core seat {seat}"
    row = batch._S[i]
    n, s = batch.num_players, batch.num_sides
    assert row[core.COL_HAND : core.COL_HAND + n].tolist() == g.hands, f"{where}: hands differ"
    assert row[core.COL_TABLE] == g.table, f"{where}: table differs"
    assert row[core.COL_PILE : core.COL_PILE + s].tolist() == g.piles, f"{where}: piles differ"
    assert row[core.COL_SCORE : core.COL_SCORE + s].tolist() == g.scores, f"{where}: scores differ"
    assert row[core.COL_SCOPE : core.COL_SCOPE + s].tolist() == g.scope, f"{where}: scope differ"
    assert row[core.COL_WILD] == g.wild_rank, f"{where}: wildcard rank {row[core.COL_WILD]} vs {g.wild_rank}"
    assert row[core.COL_DEALER] == g.dealer, f"{where}: dealer differs"
    ob = e.observe(agent)
    assert np.array_equal(ob["observation"], batch.obs[i]), (
        f"{where}: observation differs at {np.flatnonzero(ob['observation'] != batch.obs[i]).tolist()}"
    )
    if batch.action_mode == "select":
        assert np.array_equal(ob["action_mask"], batch.action_mask[i]), f"{where}: select mask differs"
    else:
        # The env's mask is built from these ids; the dense mask itself is compared on a sample of steps.
        legal = e._legal_action_ids()
        assert legal == batch.legal_actions(i), f"{where}: legal {legal} vs core {batch.legal_actions(i)}"
        if full_mask:
            assert np.array_equal(ob["action_mask"], batch.dense_move_mask()[i]), f"{where}: move mask differs"


def engine_game(st: dict, rules) -> Game:
    """The engine's game at a core position (the first-card decision and declarations included)."""
    return Game.from_deal(
        hands=[cards_of(h) for h in st["hands"]],
        table=cards_of(st["table"]),
        stock=st["stock"],
        dealer=st["dealer"],
        scores=st["scores"],
        rules=rules,
        piles=None if st["deciding"] else [cards_of(p) for p in st["piles"]],
        scope=None if st["deciding"] else st["scope"],
        current=st["current"],
        last_capturer=st["last_capturer"],
        deciding=st["deciding"],
        revealed=st["revealed"],
        declare_queue=st["declare_queue"],
        pending=st["pending"],
        wild_rank=st["wild_rank"],
    )


def greedy_best(g: Game, view_agent) -> set[tuple[int, int]]:
    """The moves the Python greedy agent rates best (ties included)."""

    view = g.view()
    pairs = view.legal_pairs()
    scores = [view_agent.score(view, c, m) for c, m in pairs]
    best = max(scores)
    return {p for p, s in zip(pairs, scores) if s >= best - 1e-9}


def has_move_mode(rules) -> bool:
    try:
        move_enumeration(rules)
    except ValueError:  # more moves than "move" mode supports (no preset; an option string might)
        return False
    return True


CLAIM_SOUND_RATE = 0.5
"""Chiamarsi fuori: a sound claim is made half the time it is offered ..."""
CLAIM_FALSE_RATE = 0.002
"""... an unsound one rarely, so that most games also play hands to their end."""


def random_action(batch: BatchedScopa, e, legal: list[int], rng: np.random.Generator) -> int:
    """A random legal action; under ``claim_out`` the claim is drawn at the rates above."""
    claim = e.game.claim_pair() if batch.rules.claim_out else None
    if claim is None:
        return legal[rng.integers(len(legal))]
    rate = CLAIM_SOUND_RATE if e.game.view().claim_is_sound() else CLAIM_FALSE_RATE
    if batch.action_mode == "move":
        claim_id = batch.moves.ids([claim], e.game.table)[0]
    elif e._pending_card is None:  # naming the card commits to nothing yet
        if rate == CLAIM_SOUND_RATE and rng.random() < rate:
            return claim[0]
        return legal[rng.integers(len(legal))]
    elif e._pending_card == claim[0] and e._selected == 0:
        claim_id = claim[0]  # naming it a second time claims
    else:
        return legal[rng.integers(len(legal))]
    if rng.random() < rate:
        return claim_id
    others = [a for a in legal if a != claim_id]
    return others[rng.integers(len(others))]


def note_events(batch: BatchedScopa, e, i: int, action: int, before: dict, stats: dict) -> None:
    """Count the decisions and endings a step of row ``i`` went through (``before``: its state)."""
    if before["deciding"] and (batch.action_mode == "move" or before["pending_card"] is not None):
        if batch.action_mode == "move":
            stats["keep" if batch.moves.pair(action)[1] else "table"] += 1
        else:  # "select": the card was named; naming it again keeps it, CONFIRM tables it
            stats["table" if action == core.CONFIRM else "keep"] += 1
        after = batch.state(i)
        if after["deciding"] and after["hand_number"] == before["hand_number"] and not batch.terminated[i]:
            stats["decision_redeal"] += 1  # the table called for a redeal: a new first card
    if before["declare_queue"] and (batch.action_mode == "move" or before["pending_card"] is not None):
        if batch.action_mode == "move":
            stats["declare" if batch.moves.pair(action, before["table"])[1] else "pass"] += 1
        else:  # "select": the highest card was named; naming it again declares, CONFIRM passes
            stats["pass" if action == core.CONFIRM else "declare"] += 1
        after = batch.state(i)
        if not batch.hand_ended[i] and sum(after["declared"]) > sum(before["declared"]):
            stats["declaration_scored"] += 1
        seat = before["current"]
        if batch.rules.hand_bonus_points and after["revealed"][seat] and not before["revealed"][seat]:
            found = declaration(before["hands"][seat], batch.rules)  # Cirulla: which bonus was declared
            stats[found.name] += 1
            if found.wild_rank:  # the wildcard stands in: as the pair's rank, or a rank of the player's choice
                stats[f"{found.name}_wild"] += 1
    after = batch.state(i)
    if batch.action_mode == "move" and batch.moves.pairs[action] == (core.WILDCARD, core.TAKE_ALL_ID):
        stats["wild_take_all"] += 1  # the Seven of cups took the whole table: its compact take-all id
    if before["wild_rank"] and after["hand_number"] == before["hand_number"]:
        wild = 1 << core.WILDCARD  # Cirulla: the declared wildcard taken (or taking) as its rank
        if not any(p & wild for p in before["piles"]) and any(p & wild for p in after["piles"]):
            stats["wild_captured"] += 1
    if after["hand_number"] != before["hand_number"] and not batch.terminated[i]:  # a new deal
        if sum(e.game.table_bonus):
            stats["table_bonus"] += 1
        if after["redeals"]:
            stats["redeal"] += 1
    claim = int(batch.claim[i])
    if claim:
        stats["claim" if claim == core.CLAIM_SOUND else "false_claim"] += 1
    elif batch.hand_ended[i]:
        stats["hand_end"] += 1


def run_differential(rules_name, n, mode, episode, reward, games, seed, use_greedy=False, stats=None):
    """Play ``games`` episodes in the core and the AEC env side by side; returns ``(episodes, steps)``.

    ``stats`` (a ``collections.Counter``), if given, counts the decisions and endings (:func:`note_events`).
    """
    rules = get_rules(rules_name)
    if mode == "move" and not has_move_mode(rules):
        mode = "select"
    rows = min(32, games)
    batch = BatchedScopa(rows, n, rules, action_mode=mode, episode=episode, reward=reward, legal_width=512)
    batch.reset(np.arange(rows) + seed * 1000)
    envs = [env_for(batch, i) for i in range(rows)]
    rng = np.random.default_rng(seed)
    done = steps = 0
    greedy_agent = None
    if use_greedy:
        try:
            from agents.greedy import GreedyAgent

            greedy_agent = GreedyAgent(seed=0)
        except ImportError:
            greedy_agent = None
    while done < games:
        full_mask = steps % 50 == 0
        for i in range(rows):
            where = f"{rules_name} n={n} {mode} {episode}/{reward} row {i} step {steps}"
            check_same(batch, envs[i], i, where, full_mask and i == 0)
        actions = np.empty(rows, np.int64)
        choices = batch.choose("greedy") if greedy_agent is not None and mode == "move" else None
        for i in range(rows):
            legal = batch.legal_actions(i)
            if choices is not None and rng.random() < 0.5:
                card, mask = choices[i]
                best = greedy_best(envs[i].game, greedy_agent)
                assert (card, mask) in best, f"compiled greedy picked {(card, mask)}, Python greedy's best: {best}"
                actions[i] = batch.moves.ids([(card, mask)], envs[i].game.table)[0]  # take-alls: compact id
            else:
                actions[i] = random_action(batch, envs[i], legal, rng)
        before = [batch.state(i) for i in range(rows)] if stats is not None else None
        batch.step(actions)
        steps += 1
        hand_ended, terminated = batch.hand_ended, batch.terminated
        for i in range(rows):
            e = envs[i]
            actor = e.agent_selection
            e.step(int(actions[i]))
            where = f"{rules_name} n={n} {mode} row {i} step {steps}"
            for s, a in enumerate(e.possible_agents):
                assert np.float32(e.rewards[a]) == batch.rewards[i, s], (
                    f"{where}: reward of {a} {e.rewards[a]} vs core {batch.rewards[i, s]}"
                )
            info = e.infos[actor]  # cleared when the actor steps, filled at a hand end
            assert bool(hand_ended[i]) == ("hand_score" in info), (
                f"{where}: hand end flag {hand_ended[i]} vs env info {sorted(info)}"
            )
            if hand_ended[i]:
                assert batch.hand_score_dicts(i) == info["hand_score"], f"{where}: hand score differs"
            claim = int(batch.claim[i])
            reason = info.get("win_reason")
            assert (claim == core.CLAIM_SOUND) == (reason == "claim"), f"{where}: claim {claim} vs {reason}"
            assert (claim == core.CLAIM_FALSE) == (reason == "false_claim"), f"{where}: claim {claim} vs {reason}"
            if stats is not None:
                note_events(batch, e, i, int(actions[i]), before[i], stats)
            assert bool(terminated[i]) == all(e.terminations.values()), f"{where}: termination differs"
            if terminated[i]:
                assert batch.final_scores[i].tolist() == info["final_scores"], f"{where}: final scores differ"
                w = int(batch.winner[i])
                assert (None if w < 0 else w) == info["winner"], f"{where}: winner differs"
                done += 1
                envs[i] = env_for(batch, i)
    return done, steps


@pytest.mark.parametrize("rules_name,n", CASES)
def test_differential_full_games(rules_name, n):
    """Whole games: the same deals and moves give the same game at every step, in both action modes."""
    games = games_for(rules_name)
    half = max(1, games // 2)
    d1, _ = run_differential(rules_name, n, "move", "game", "game", half, seed=n, use_greedy=True)
    d2, _ = run_differential(rules_name, n, "select", "game", "points", games - half, seed=100 + n)
    assert d1 + d2 >= games


@pytest.mark.parametrize("rules_name,n", CASES)
def test_differential_one_hand_episodes(rules_name, n):
    """``episode="hand"`` with both reward modes (hand-win rewards include the 0 of a tie)."""
    k = max(4, games_for(rules_name) // 10)
    run_differential(rules_name, n, "select", "hand", "game", k, seed=200 + n)
    run_differential(rules_name, n, "move", "hand", "points", k, seed=300 + n)


# --- variants -----------------------------------------------------------------------


def test_unsupported_presets_raise_naming_the_preset_and_field():
    for name in unsupported_presets():
        with pytest.raises(NotImplementedError, match=name):
            BatchedScopa(4, get_rules(name).player_counts[0], name)


def test_every_player_count_of_every_preset_is_a_differential_case():
    """The core plays every preset whose fields it implements at every player count the preset
    allows, so every one is compared with the engine: the booklet's 4 players each for themselves
    (4 sides) too."""
    refused = [
        (name, n) for name in supported_presets() for n in get_rules(name).player_counts if not core_plays(name, n)
    ]
    assert refused == [], f"the core refuses {refused}"
    if not PLAYERS:
        assert ("booklet", 4) in CASES and (EACH_FOR_THEMSELVES, 6) in CASES, "4 and 6 sides are not compared"


@pytest.mark.parametrize("rules_name,n", [("booklet", 4), (EACH_FOR_THEMSELVES, 6)])
def test_each_for_themselves_keeps_a_pile_and_score_per_seat(rules_name, n):
    """Each player for themselves (booklet: "for 2 to 4 players"): every seat is its own side,
    with its own pile, score and hand-score row, up to ``core.MAX_SIDES``."""
    batch = BatchedScopa(8, n, rules_name, action_mode="move")
    assert batch.num_sides == n <= core.MAX_SIDES, f"{rules_name} n={n}: {batch.num_sides} sides"
    assert batch.hand_score.shape == (8, n, core.NUM_SCORE_FIELDS) and batch.final_scores.shape == (8, n)
    batch.reset(np.arange(8))
    rng = np.random.default_rng(0)
    captured_by = set()
    while not batch.hand_ended.any():
        for i in range(8):
            captured_by |= {s for s, p in enumerate(batch.state(i)["piles"]) if p}
        batch.step(np.array([rng.choice(batch.legal_actions(i)) for i in range(8)]))
    assert captured_by == set(range(n)), f"{rules_name} n={n}: only sides {sorted(captured_by)} captured"
    moves, wins = playout(10, n, rules_name, seed=2)
    assert len(wins) == n + 1 and wins.sum() == 10 and moves > 0, f"{rules_name} n={n}: playout wins {wins}"


def test_more_players_than_the_core_holds_raise_naming_the_limit(monkeypatch):
    """The core sizes its columns for ``core.MAX_PLAYERS`` seats and as many sides; a player count
    beyond them (a stand-in: the limit lowered to 4) is refused before a kernel runs."""
    from scopa_env.fast import layout

    monkeypatch.setattr(layout, "MAX_PLAYERS", 4)
    monkeypatch.setattr(layout, "MAX_SIDES", 4)
    with pytest.raises(NotImplementedError, match="with 6 players, 6 sides: .* at most 4 players and 4 sides"):
        check_supported(get_rules(EACH_FOR_THEMSELVES), 6)
    with pytest.raises(NotImplementedError, match="with 6 players, 2 sides"):
        check_supported(get_rules("standard"), 6)  # two sides (partnerships), but six seats
    check_supported(get_rules(EACH_FOR_THEMSELVES), 4)


def test_a_changed_unsupported_field_raises(monkeypatch):
    """The core plays a whitelist of rules fields: a field off the list (every field of today's Rules is on
    it, so one is taken off to stand in for a field added later) refuses its presets, naming the field, and
    its default value still passes."""
    from scopa_env.fast import batch, params

    monkeypatch.setattr(params, "SUPPORTED_FIELDS", tuple(f for f in SUPPORTED_FIELDS if f != "napola"))
    with pytest.raises(NotImplementedError, match="napola"):
        BatchedScopa(2, 2, "napola")
    batch.check_supported(get_rules("standard"))


def test_rule_fields_in_the_whitelist_play_the_same_game():
    """Capture, deal and scoring fields the core implements, changed together, still match the engine."""
    rules = get_rules("standard").replace(
        name="mixed",
        ranks=(1, 3, 4, 5, 6, 7, 8, 9, 10),
        hand_size=4,
        single_card_priority=False,
        capture_optional=True,
        last_play_scopa=True,
        kings_redeal=False,
        primiera_values=(16, 12, 13, 14, 15, 18, 21, 10, 10, 11),
        scopa_points=2,
        target=7,
        cappotto=True,
        player_counts=(2, 4),
    )
    for n in (2, 4):
        run_differential(rules, n, "move", "game", "points", 40, seed=7 + n)
        run_differential(rules, n, "select", "hand", "game", 40, seed=17 + n)


# Scoring extras combined on short decks, so that the rare items (a side taking the whole
# bonus suit, a Libyan reset) happen in a few dozen games.
EXTRAS_RULES = {
    "extras_napoleone": dict(
        ranks=(1, 2, 3, 4, 5, 7, 10),
        re_bello=True,
        seven_of_cups=True,
        palle_del_cane=True,
        piva=True,
        napola="pagat_9",
        coins_reset=6,
        scopa_value="card",
        primiera_by_counts=True,
        target=21,
    ),
    "extras_scala": dict(
        ranks=(1, 2, 3, 7, 8, 9, 10),
        bonus_suit=1,
        scalette=True,
        all_coins_wins=True,
        scopa_value="cards",
        primiera_values=(5.5, 2, 3, 4, 5, 6, 7, 0.5, 0.5, 0.5),
        primiera_all_suits=False,
        double_game_below=6,
        target=16,
    ),
    "extras_all_coins": dict(
        ranks=(1, 2, 3, 4, 6, 7),
        table_size=0,
        piccola_grande=True,
        prime_rule="sevens",
        all_coins_wins=True,
        coins_reset=6,
        capture_optional=True,
        target=11,
    ),
}


@pytest.mark.parametrize("name", sorted(EXTRAS_RULES))
def test_scoring_extras_play_the_same_game(name):
    """The scoring fields (extras, game-winning items, Libyan scope and resets, other primiera rules) match the engine."""
    rules = get_rules("standard").replace(name=name, player_counts=(2, 4), **EXTRAS_RULES[name])
    check_supported(rules)
    for n in (2, 4):
        run_differential(rules, n, "move", "game", "points", 24, seed=31 + n, use_greedy=True)
        run_differential(rules, n, "select", "game", "game", 24, seed=41 + n)
        run_differential(rules, n, "select", "hand", "game", 12, seed=51 + n)


def test_score_fields_carry_every_scoring_extra():
    """Every point key of the engine's extras has a hand_score column, and each preset's dicts have the engine's keys."""
    from scopa_env.engine.scoring import EXTRA_KEYS, score_masks
    from scopa_env.fast.batch import score_keys

    assert set(EXTRA_KEYS) <= set(SCORE_FIELDS), f"missing columns: {set(EXTRA_KEYS) - set(SCORE_FIELDS)}"
    for name in supported_presets() + sorted(EXTRAS_RULES):
        if name in PRESETS:
            rules = get_rules(name)
        else:
            rules = get_rules("standard").replace(name=name, player_counts=(2, 4), **EXTRAS_RULES[name])
        rows = score_masks([rules.deck_mask & 0x3FF, rules.deck_mask & ~0x3FF], [0, 1], rules)
        keys = set(rows[0]) | ({"double_game"} if rules.double_game_below else set())
        assert set(score_keys(rules)) == keys, f"{name}: core keys {sorted(score_keys(rules))} vs engine {sorted(keys)}"


# --- opponents and playouts ------------------------------------------------------------


def test_learner_mode_always_returns_the_learners_turn():
    for seat in (0, 1, "random"):
        b = BatchedScopa(16, 4, opponent="greedy", learner_seat=seat, action_mode="select")
        b.reset(np.arange(16))
        rng = np.random.default_rng(0)
        ends = 0
        for _ in range(400):
            learners = [b.state(i)["learner"] for i in range(16)]
            assert b.to_play.tolist() == learners, "the learner is not to move"
            if seat != "random":
                assert learners == [seat] * 16
            b.step([rng.choice(b.legal_actions(i)) for i in range(16)])
            for i in np.flatnonzero(b.terminated):
                ends += 1
                w = int(b.winner[i])
                r = b.rewards[i]
                assert w >= 0 and all(r[s] == (1.0 if s % 2 == w else -1.0) for s in range(4)), "game reward"
        assert ends > 0


def test_greedy_beats_random():
    _, wins = playout(400, 2, players=("greedy", "random"), seed=3)
    assert wins[0] > 2 * wins[1], f"greedy won {wins[0]}, random {wins[1]}"


def test_playout_counts_moves():
    moves, wins = playout(50, 3, seed=1)
    assert wins.sum() == 50 and moves >= 50 * 36


# --- the 52-card deck (french_52) --------------------------------------------------------

FRENCH_GAMES = int(FULL_GAMES) if FULL_GAMES else 2
"""Whole french_52 games per compiled-player check (``SCOPA_DIFF_GAMES`` raises it)."""


def test_french_52_is_a_differential_case_with_eight_seats():
    """The core plays the 52-card deck with its 8 players each for themselves, in "select" mode:
    52-wide card planes, ``Discrete(53)`` with CONFIRM 52, 8 sides (the differential cases above
    compare it with the engine step by step)."""
    rules = get_rules("french_52")
    assert core_plays("french_52", 8) and (not PLAYERS or wanted(8)) <= (("french_52", 8) in CASES)
    assert core.MAX_PLAYERS >= 8 and core.MAX_SIDES >= 8 and core.MAX_CARDS == rules.num_card_ids == 52
    batch = BatchedScopa(4, 8, "french_52")
    assert batch.num_actions == batch.action_mask.shape[1] == 53 and batch.confirm == 52
    assert batch.obs.shape == (4, 1144) and batch.num_sides == 8 and batch.hand_score.shape[1] == 8
    batch.reset(np.arange(4))
    deals = [batch.state(i)["deal_order"] for i in range(4)]
    assert all(sorted(d) == list(range(52)) for d in deals), "the deal is not the 52-card deck"
    assert all(bin(h).count("1") == 3 for h in batch.state(0)["hands"]) and bin(batch.state(0)["table"]).count("1") == 4


def run_french_players(kind: str, games: int, seed: int) -> int:
    """Whole french_52 games of random "select" play; at every position the compiled ``kind``
    player's choice must be one of the Python agent's best moves. Returns positions checked."""
    from agents.greedy import GreedyAgent
    from agents.heuristic import HeuristicAgent

    rows = 8
    batch = BatchedScopa(rows, 8, "french_52")
    batch.reset(np.arange(rows) + 1000 * seed)
    agent = GreedyAgent(seed=0) if kind == "greedy" else HeuristicAgent(seed=0)
    rng = np.random.default_rng(seed)
    done = checked = 0
    while done < games:
        choices = batch.choose(kind)
        for i in range(rows):
            st = batch.state(i)
            if st["pending_card"] is not None:
                continue  # mid-selection: the move is not whole yet
            view = engine_game(st, batch.rules).view()
            pairs = view.legal_pairs()
            if kind == "greedy":
                scores = [agent.score(view, c, m) for c, m in pairs]
            else:
                scores = agent.scores(view, pairs)
            best = {p for p, v in zip(pairs, scores) if v >= max(scores) - 1e-9}
            assert choices[i] in best, f"french_52 {kind}: {batch.describe(i)}: core {choices[i]}, Python {best}"
            checked += 1
        batch.step([rng.choice(batch.legal_actions(i)) for i in range(rows)])
        done += int(batch.terminated.sum())
    return checked


@pytest.mark.parametrize("kind", ["greedy", "heuristic"])
def test_french_52_compiled_players_play_the_python_agents_best_move(kind):
    """The compiled greedy and heuristic players value the pictures (ranks 11..13, their suits'
    primiera, the diamonds of 13 cards) as agents.greedy and agents.heuristic do."""
    assert run_french_players(kind, FRENCH_GAMES, seed=5 if kind == "greedy" else 6) > 50


def test_french_52_playout_and_opponents():
    """Whole games with compiled players at all 8 seats, and a learner against compiled opponents."""
    moves, wins = playout(4, 8, "french_52", players=("greedy", "random") * 4, seed=2)
    assert len(wins) == 9 and wins.sum() == 4 and moves >= 4 * 48
    b = BatchedScopa(4, 8, "french_52", opponent={"random": 0.5, "greedy": 0.5}, learner_seat="random")
    b.reset(np.arange(4))
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert b.to_play.tolist() == [b.state(i)["learner"] for i in range(4)], "the learner is not to move"
        b.step([rng.choice(b.legal_actions(i)) for i in range(4)])


def test_french_52_vector_env():
    """The Gymnasium vector env plays the 52-card game: a 1,144-wide observation inside its space, 53 actions."""
    from scopa_env.fast.vec_env import ScopaVectorEnv

    env = ScopaVectorEnv(3, 8, "french_52", opponent="greedy", learner_seat="random")
    obs, _ = env.reset(seed=1)
    assert obs["observation"].shape == (3, 1144) and obs["action_mask"].shape == (3, 53)
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert env.observation_space.contains(obs), "observation outside the space"
        obs, rewards, terminated, truncated, _ = env.step(
            np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        )
        assert not truncated.any() and np.all(rewards[~terminated] == 0.0)


def test_french_52_move_mode_ids_are_the_enumeration():
    """ "move" mode: 72,752 ids in the enumeration's card blocks (cards 0..51); every legal id plays a
    card of the hand of the seat to move, the pictures (ids 40..51) too. The differential test
    compares these ids with the engine's step by step."""
    b = BatchedScopa(16, 8, "french_52", action_mode="move", legal_width=512)
    assert b.num_actions == len(move_enumeration(get_rules("french_52"))) == 72_752
    b.reset(np.arange(16))
    rng = np.random.default_rng(4)
    pictures = 0
    for _ in range(60):
        for i in range(16):
            state = b.state(i)
            hand = state["hands"][state["current"]]
            cards = {b.moves.pair(a, state["table"])[0] for a in b.legal_actions(i)}
            assert cards and all(hand >> c & 1 for c in cards), f"row {i}: {b.describe(i)}"
            pictures += sum(c >= 40 for c in cards)
        b.step([rng.choice(b.legal_actions(i)) for i in range(16)])
    assert pictures > 0, "the pictures (ids 40..51) have move ids"


def test_what_the_core_still_refuses_for_the_52_card_deck_is_a_one_line_error():
    """A 52-card rules field the core does not play (the 40-card ones are refused by Rules itself)
    is a NotImplementedError naming the field and the deck; each message is one line."""
    rules = get_rules("french_52").replace(name="french_sevens", prime_rule="sevens")
    with pytest.raises(NotImplementedError, match="french_sevens.*prime_rule='sevens' with the 52-card deck") as err:
        BatchedScopa(2, 8, rules)
    assert "\n" not in str(err.value)
    with pytest.raises(NotImplementedError, match="ace_takes_all=True with the 52-card deck"):
        check_supported(get_rules("french_52").replace(name="french_assi", ace_takes_all=True), 8)


# --- bad input --------------------------------------------------------------------------


@pytest.fixture
def batch():
    b = BatchedScopa(4, 2, action_mode="move")
    b.reset([1, 2, 3, 4])
    return b


def test_step_before_reset():
    with pytest.raises(ValueError, match="reset"):
        BatchedScopa(2, 2).step([0, 0])


def test_seeds_of_the_wrong_length(batch):
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        batch.reset([1, 2, 3])


def test_float_actions_are_not_coerced(batch):
    with pytest.raises(ValueError, match="integers"):
        batch.step(np.zeros(4, np.float32))


def test_wrong_shape(batch):
    with pytest.raises(ValueError, match="shape"):
        batch.step(np.zeros((4, 1), np.int64))


def test_illegal_action_names_the_game_and_changes_nothing(batch):
    actions = np.array([batch.legal_actions(i)[0] for i in range(4)])
    before = batch.state(2)
    obs = batch.obs.copy()
    actions[2] = 16199 if 16199 not in batch.legal_actions(2) else 0
    with pytest.raises(ValueError, match="game 2: action .* not legal for player_0; legal: "):
        batch.step(actions)
    assert batch.state(2) == before and np.array_equal(batch.obs, obs), "a rejected step changed a game"
    actions[2] = -1
    with pytest.raises(ValueError, match="game 2: action -1 is out of range"):
        batch.step(actions)


def test_select_mode_illegal_action():
    b = BatchedScopa(3, 2, action_mode="select")
    b.reset([5, 6, 7])
    actions = np.array([b.legal_actions(i)[0] for i in range(3)])
    actions[1] = core.CONFIRM
    with pytest.raises(ValueError, match="game 1: action 40 \\(confirm\\) is not legal"):
        b.step(actions)


def test_outputs_are_read_only(batch):
    with pytest.raises(ValueError):
        batch.obs[0, 0] = 1.0


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="action_mode"):
        BatchedScopa(2, action_mode="cards")
    with pytest.raises(ValueError, match="num_players"):
        BatchedScopa(2, num_players=5)
    with pytest.raises(ValueError, match="learner_seat"):
        BatchedScopa(2, opponent="random", learner_seat=2)


def test_legal_width_overflow_raises_instead_of_truncating():
    b = BatchedScopa(64, 2, action_mode="move", legal_width=1)
    with pytest.raises(RuntimeError, match="legal_width=1"):
        b.reset(np.arange(64))


def test_default_legal_width_holds_every_escoba_position():
    """Pagat, Scopa di Quindici: a player may "capture a set of cards from the table which, together
    with the played card, add up to 15" ("very similar to the Spanish game Escoba"). Such positions
    have far more legal moves than the 64 columns that suffice for captures of equal value:
    random play reaches more than 64, and the default width holds them."""
    n = 512
    b = BatchedScopa(n, 2, "escoba", action_mode="move")
    b.reset(np.arange(n))
    rng = np.random.default_rng(0)
    most = 0
    for _ in range(400):
        most = max(most, int(b.legal_count.max()))
        pick = (rng.random(n) * b.legal_count).astype(np.int64)
        b.step(b.legal_ids[np.arange(n), pick])
    assert most > 64
    assert BatchedScopa(2, 2, action_mode="move").legal_width == 64


def test_seeds_make_games_reproducible():
    a, b = BatchedScopa(8, 2), BatchedScopa(8, 2)
    a.reset(np.arange(8))
    b.reset(np.arange(8))
    rng = np.random.default_rng(1)
    for _ in range(200):
        acts = [rng.choice(a.legal_actions(i)) for i in range(8)]
        a.step(acts)
        b.step(acts)
        assert np.array_equal(a.obs, b.obs)


@pytest.mark.slow  # cold compiles of every preset's kernels, several minutes
def test_presets_without_decisions_compile_no_decision_code(tmp_path):
    """The kernels take ``D`` None where no decision rule plays and ``V`` None with the standard
    captures, and numba prunes that code: a standard batch on an empty cache compiles neither
    the claim, the declarations, ``mover_pairs`` nor the variant captures (docs/fast.md, the
    cold start); chiamarsi fuori compiles the decisions, escoba (sums to fifteen) the captures."""
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from scopa_env.fast import BatchedScopa, core\n"
        "from scopa_env.fast.core.captures import _variant_pairs\n"
        "from scopa_env.fast.core.decisions import _declare\n"
        "from scopa_env.fast.core.game import _decide\n"
        "from scopa_env.fast.core.scoring import _claim\n"
        "b = BatchedScopa(2, 2, sys.argv[1], action_mode=sys.argv[2])\n"
        "b.reset(np.arange(2))\n"
        "b.step([b.legal_actions(i)[0] for i in range(2)])\n"
        "print(sum(len(f.signatures) for f in (_claim, _declare, _decide, core.mover_pairs)))\n"
        "print(len(_variant_pairs.signatures))\n"
    )
    counts = {}
    for rules, mode in (
        ("standard", "select"),
        ("standard", "move"),
        ("chiamarsi_fuori", "select"),
        ("escoba", "move"),
    ):
        # An empty cache each: a function loaded from the cache does not compile its callees.
        # SCOPA_AOT=0: the JIT's own pruning (the ahead-of-time loop would compile nothing at all).
        env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / f"{rules}-{mode}"), SCOPA_AOT="0")
        out = subprocess.run(
            [sys.executable, "-c", code, rules, mode], env=env, capture_output=True, text=True, check=True
        )
        counts[rules, mode] = [int(v) for v in out.stdout.split()[-2:]]
    for mode in ("select", "move"):
        assert counts["standard", mode] == [0, 0], (
            f"decision or variant-capture code compiled for the standard game ({mode})"
        )
    assert counts["chiamarsi_fuori", "select"][0] > 0, "the decision presets compile the decisions"
    assert counts["escoba", "move"] == [0, 1], "escoba compiles the variant captures and no decision"


def test_compile_cache_is_reused_by_a_second_process():
    """A fresh process loads the kernels from numba's cache (it compiles nothing)."""
    code = (
        "import numpy as np\n"
        "from scopa_env.fast import BatchedScopa, core\n"
        "b = BatchedScopa(2, 2)\n"
        "b.reset(np.arange(2))\n"
        "print(len(core.batch_rows.stats.cache_misses), len(core.batch_rows.stats.cache_hits))\n"
    )
    warm = BatchedScopa(2, 2)
    warm._rows = core.batch_rows  # the JIT's loop, which the subprocess takes under SCOPA_AOT=0
    warm.reset(np.arange(2))  # make sure this process has filled the cache
    env = dict(os.environ, SCOPA_AOT="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    out = out.stdout.split()
    misses, hits = int(out[0]), int(out[1])
    assert misses == 0 and hits >= 1, f"cache misses {misses}, hits {hits}"


# --- vector envs ------------------------------------------------------------------------


def test_gymnasium_vector_env_plays_against_compiled_opponents():
    from scopa_env.fast.vec_env import ScopaVectorEnv

    env = ScopaVectorEnv(6, 2, opponent="greedy", learner_seat="random")
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs), "reset observation outside the space"
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(600):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, rewards, terminated, truncated, infos = env.step(actions)
        assert obs["observation"].dtype == np.float32 and not truncated.any()
        for i in np.flatnonzero(terminated):
            episodes += 1
            assert rewards[i] in (-1.0, 1.0), f"game reward {rewards[i]}"
            assert infos["final_obs"][i]["observation"].shape == (env.batch.layout.size,)
        assert np.all(rewards[~terminated] == 0.0), "game rewards arrive only at the end"
    assert episodes > 0


def test_vector_env_rejects_illegal_actions_naming_the_env():
    from scopa_env.fast.vec_env import ScopaVectorEnv

    env = ScopaVectorEnv(3, 2)
    obs, _ = env.reset(seed=0)
    actions = np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]])
    actions[1] = core.CONFIRM
    with pytest.raises(ValueError, match="game 1"):
        env.step(actions)


def test_sb3_vec_env_learns_with_maskable_ppo():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    from scopa_env.fast.vec_env import ScopaSB3VecEnv

    env = ScopaSB3VecEnv(8, 2, opponent="random", reward="points")
    assert isinstance(env, VecEnv)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(512)
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=env.action_masks())
    assert all(env.action_masks()[i, a] for i, a in enumerate(actions)), "masked policy picked an illegal action"
    env.step(actions)
