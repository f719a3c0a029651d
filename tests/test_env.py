"""The PettingZoo environment: API compliance, action modes, observations, rewards, infos, and a step
before ``reset()`` or after the end."""

import os

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from scopa_env import scopa_v0
from scopa_env.engine.actions import CONFIRM, move_enumeration, select_options
from scopa_env.engine.cards import cards_of, parse_card, parse_cards
from scopa_env.engine.observation import ObservationLayout
from scopa_env.engine.rules import STANDARD, Move, legal_moves

# 125 games x 4 player counts x 2 action modes = 1,000 full games in CI; raise it for longer soaks.
RANDOM_GAMES = int(os.environ.get("SCOPA_RANDOM_GAMES", "125"))


@pytest.mark.parametrize("mode", ["move", "select"])
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_pettingzoo_api(n, mode):
    api_test(scopa_v0.env(num_players=n, action_mode=mode), num_cycles=200)


@pytest.mark.parametrize("mode", ["move", "select"])
def test_pettingzoo_seed_and_render(mode):
    seed_test(lambda: scopa_v0.env(action_mode=mode), num_cycles=200)
    render_test(lambda render_mode=None: scopa_v0.env(action_mode=mode, render_mode=render_mode))


def test_constructor_rejects_bad_arguments():
    for kwargs, msg in [
        ({"num_players": 5}, "num_players"),
        ({"episode": "round"}, "episode"),
        ({"reward": "cards"}, "reward"),
        ({"action_mode": "chess"}, "action_mode"),
        ({"render_mode": "rgb_array"}, "render_mode"),
        ({"rules": "unknown_preset"}, "known presets"),
    ]:
        with pytest.raises(ValueError, match=msg):
            scopa_v0.raw_env(**kwargs)


def test_move_enumeration_size_and_round_trip():
    enum = move_enumeration(STANDARD)
    assert len(enum) == 16200, "documented N for the standard rules"
    env = scopa_v0.raw_env()
    for a in range(0, len(enum), 7):
        assert env.encode_action(env.decode_action(a)) == a
    assert env.decode_action(0) == Move(0), "card 0's trail comes first"
    with pytest.raises(ValueError, match="out of range"):
        env.decode_action(len(enum))
    with pytest.raises(ValueError, match="not a move"):
        env.encode_action(Move(parse_card("7d"), [parse_card("6c")]))  # 6 != 7


def pagat_deal():
    """player_0 holds J, 3, 5 with pagat's table A 3 4 5 7."""
    hands = [parse_cards("Js 3s 5s"), parse_cards("Kd Kc Ks")]
    table = parse_cards("Ad 3c 4s 5b")
    extra = parse_cards("7c")
    table = table + extra
    used = set(sum(hands, []) + table)
    piles = [[], [c for c in range(40) if c not in used][:5]]
    stock = [c for c in range(40) if c not in used and c not in piles[1]]
    return {"hands": hands, "table": table, "stock": stock, "dealer": 1, "piles": piles}


def test_move_mask_marks_exactly_the_legal_moves():
    env = scopa_v0.raw_env()
    env.reset(options={"deal": pagat_deal()})
    mask = env.observe("player_0")["action_mask"]
    got = {env.decode_action(a) for a in np.flatnonzero(mask)}
    expected = set(legal_moves(parse_cards("Js 3s 5s"), parse_cards("Ad 3c 4s 5b 7c")))
    assert got == expected and len(got) == 5
    assert not env.observe("player_1")["action_mask"].any(), "only the player to move has legal actions"


def reachable_by_select(outcomes: list[int]) -> set[int]:
    """Every captured mask a "select" player can finish with, by exhaustive search."""
    done = set()

    def walk(selected: int) -> None:
        nxt, can_confirm, candidates = select_options(outcomes, selected)
        if can_confirm:
            done.add(selected)
        for c in nxt:
            s = selected | 1 << c
            _, _, cands = select_options(outcomes, s)
            if len(cands) == 1:
                done.add(cands[0])
            else:
                walk(s)

    if len(outcomes) == 1:
        return set(outcomes)
    walk(0)
    return done


def test_select_mode_reaches_exactly_the_legal_moves():
    rng = np.random.default_rng(0)
    for _ in range(300):
        cards = rng.permutation(40)[: rng.integers(4, 16)].tolist()
        hand, table = cards[:3], cards[3:]
        moves = legal_moves(hand, table)
        for card in hand:
            outcomes = [m.mask for m in moves if m.card == card]
            assert reachable_by_select(outcomes) == set(outcomes), f"card {card} on {table}"


def test_select_mode_walkthrough_with_pagat_jack():
    # pagat: a Jack on A 3 4 5 7 "can capture either 5+3 or 4+3+A or 7+A".
    env = scopa_v0.raw_env(action_mode="select")
    env.reset(options={"deal": pagat_deal()})
    obs = env.observe("player_0")
    assert sorted(np.flatnonzero(obs["action_mask"])) == sorted(parse_cards("Js 3s 5s"))
    env.step(parse_card("Js"))
    assert env.agent_selection == "player_0", "still choosing captures"
    obs = env.observe("player_0")
    layout = env.layout
    assert obs["observation"][layout["select_card"]][parse_card("Js")] == 1
    assert obs["observation"][layout["phase"]].tolist() == [0, 1]
    # First pick in ascending id order: Ad (0), 3c (12) or 4s? 4s (23) is never first: 4+3+A starts at A.
    assert sorted(np.flatnonzero(obs["action_mask"])) == sorted(parse_cards("Ad 3c"))
    env.step(parse_card("Ad"))  # A then 3+4 or 7: still two options
    assert sorted(np.flatnonzero(env.observe("player_0")["action_mask"])) == sorted(parse_cards("3c 7c"))
    env.step(parse_card("7c"))  # completes 7+A
    assert env.agent_selection == "player_1"
    assert env.game.piles[0] == sum(1 << c for c in parse_cards("Js Ad 7c"))
    with pytest.raises(ValueError, match="illegal"):
        env.step(CONFIRM)


def test_illegal_actions_raise_in_raw_env_and_terminate_in_wrapped_env():
    env = scopa_v0.raw_env()
    env.reset(options={"deal": pagat_deal()})
    before = env.game.history[:], env.game.hands[:]
    with pytest.raises(ValueError, match="legal actions: .*Js takes"):
        env.step(env.encode_action(Move(parse_card("Js"))))  # the Jack can capture: no trail
    with pytest.raises(ValueError, match="out of range"):
        env.step(16200)
    with pytest.raises(ValueError, match="must be an int"):
        env.step(1.5)
    assert (env.game.history, env.game.hands) == before, "nothing changed"

    wrapped = scopa_v0.env()
    wrapped.reset(options={"deal": pagat_deal()})
    illegal = wrapped.unwrapped.encode_action(Move(parse_card("Js")))
    wrapped.step(illegal)  # PettingZoo logs "Illegal move made, game terminating"
    assert all(wrapped.terminations.values())
    assert wrapped.rewards["player_0"] == -1


def test_unknown_reset_option_warns():
    env = scopa_v0.raw_env()
    with pytest.warns(UserWarning, match="unknown reset option"):
        env.reset(options={"dealr": 0})


def test_observation_perspective_and_layout():
    env = scopa_v0.raw_env(num_players=4)
    env.reset(seed=3)
    g = env.game
    layout = ObservationLayout(4)
    for seat in range(4):
        obs = env.observe(f"player_{seat}")["observation"]
        assert obs.shape == (layout.size,) and obs.dtype == np.float32
        assert np.flatnonzero(obs[layout["hand"]]).tolist() == cards_of(g.hands[seat])
        assert np.flatnonzero(obs[layout["table"]]).tolist() == cards_of(g.table)
        rel = (seat - g.dealer) % 4
        assert obs[layout["seat_from_dealer"]].tolist() == [float(i == rel) for i in range(4)]
    assert ObservationLayout(2).size == 376, "documented size for 2 players"


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_hidden_cards_do_not_change_the_observation(n):
    """Permute the hidden cards (other hands and the stock order): the observer sees no change."""
    rng = np.random.default_rng(n)
    for trial in range(20):
        env_a, env_b = scopa_v0.raw_env(num_players=n), scopa_v0.raw_env(num_players=n)
        env_a.reset(seed=trial)
        # Play a few random moves so piles, history and scope are not empty.
        for _ in range(rng.integers(0, 2 * n)):
            ids = np.flatnonzero(env_a.observe(env_a.agent_selection)["action_mask"])
            env_a.step(int(rng.choice(ids)))
        g = env_a.game
        observer = g.current
        hidden = [c for s in range(n) if s != observer for c in cards_of(g.hands[s])] + g.stock
        shuffled = rng.permutation(hidden).tolist()
        hands, pos = [], 0
        for s in range(n):
            if s == observer:
                hands.append(cards_of(g.hands[s]))
            else:
                k = g.hands[s].bit_count()
                hands.append(shuffled[pos : pos + k])
                pos += k
        env_b.reset(
            options={
                "deal": {
                    "hands": hands,
                    "table": cards_of(g.table),
                    "stock": shuffled[pos:],
                    "dealer": g.dealer,
                    "scores": g.scores,
                    "piles": [cards_of(p) for p in g.piles],
                    "scope": g.scope,
                    "current": g.current,
                    "last_capturer": g.last_capturer,
                }
            }
        )
        env_b.game.played = list(g.played)
        env_b.game.history = list(g.history)
        a = env_a.observe(f"player_{observer}")
        b = env_b.observe(f"player_{observer}")
        assert np.array_equal(a["observation"], b["observation"]), f"trial {trial}: observation leaks hidden cards"
        assert np.array_equal(a["action_mask"], b["action_mask"])


def play_random_game(env, rng):
    """Random legal play through the AEC loop; returns (final rewards, hand infos seen, final infos)."""
    totals = dict.fromkeys(env.possible_agents, 0.0)
    hand_infos = []
    final_infos = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            final_infos[agent] = info
            env.step(None)
            continue
        if "hand_score" in info:
            hand_infos.append(info)
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and mask.any(), "the player to move always has a legal action"
        env.step(int(rng.choice(np.flatnonzero(mask))))
        g = env.unwrapped.game
        every = g.table
        for m in list(g.hands) + list(g.piles) + [sum(1 << c for c in g.stock)]:
            assert not every & m
            every |= m
        assert every == (1 << 40) - 1, "all 40 cards are accounted for"
    return totals, hand_infos, final_infos


@pytest.mark.parametrize("mode", ["move", "select"])
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_random_full_games(n, mode):
    rng = np.random.default_rng(n * 10 + (mode == "select"))
    env = scopa_v0.env(num_players=n, action_mode=mode)
    for game in range(RANDOM_GAMES):
        env.reset(seed=game)
        totals, _, _ = play_random_game(env, rng)
        g = env.unwrapped.game
        assert g.winner is not None
        for i, agent in enumerate(env.possible_agents):
            expected = 1.0 if g.side_of[i] == g.winner else -1.0
            assert totals[agent] == expected, f"{agent}: game reward"
        assert max(g.scores) >= STANDARD.target


def test_points_reward_is_the_hand_margin_and_teammates_share_it():
    env = scopa_v0.env(num_players=4, reward="points", episode="hand")
    env.reset(seed=5)
    totals, _, final = play_random_game(env, np.random.default_rng(0))
    info = final["player_0"]
    t = [row["total"] for row in info["hand_score"]]
    assert totals["player_0"] == totals["player_2"] == t[0] - t[1]
    assert totals["player_1"] == totals["player_3"] == t[1] - t[0]


def test_hand_episode_game_reward_and_infos():
    env = scopa_v0.env(num_players=3, episode="hand")
    env.reset(seed=9)
    totals, _, final = play_random_game(env, np.random.default_rng(1))
    info = final["player_0"]
    assert set(info) >= {"hand_score", "piles", "scope", "final_scores", "winner"}
    t = [row["total"] for row in info["hand_score"]]
    best = max(t)
    for i, agent in enumerate(env.possible_agents):
        expected = 0.0 if t.count(best) > 1 else (1.0 if t[i] == best else -1.0)
        assert totals[agent] == expected
    assert sum(len(p) for p in info["piles"]) == 40


def test_hand_infos_reach_every_agent_during_a_game():
    env = scopa_v0.env(num_players=2)
    env.reset(seed=2)
    _, infos, _ = play_random_game(env, np.random.default_rng(2))
    hands = env.unwrapped.game.hand_number
    # Each agent sees each hand end that happened before its next turn.
    assert len(infos) >= 2 * (hands - 1), f"{len(infos)} hand infos for {hands} hands"


def test_reset_seed_is_reproducible():
    def trace(seed):
        env = scopa_v0.env(num_players=2, action_mode="select")
        env.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = []
        for agent in env.agent_iter():
            obs, r, term, trunc, _ = env.last()
            out.append((agent, obs["observation"].tobytes(), r))
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return out

    assert trace(4) == trace(4)
    assert trace(4) != trace(5)


def test_state_has_full_information():
    env = scopa_v0.raw_env(num_players=2)
    env.reset(seed=1)
    state = env.state()
    assert state.shape == env.state_space.shape
    hands = state[:80].reshape(2, 40)
    assert np.flatnonzero(hands[1]).tolist() == cards_of(env.game.hands[1])


def test_render_ansi_shows_only_text():
    env = scopa_v0.raw_env(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "table" in text and "player_0" in text


def test_select_mode_follows_the_game_it_is_given():
    """A game swapped in (as tests and tools do) is read afresh in "select" mode: its hand for
    the mask, and the named card's outcomes from it, not from the old position."""
    env = scopa_v0.raw_env(action_mode="select")
    env.reset(seed=0)
    first = list(np.flatnonzero(env.observe("player_0")["action_mask"]))
    assert first == sorted({c for c, _ in env.game.legal_pairs()})
    other = scopa_v0.raw_env(action_mode="select")
    other.reset(seed=1)
    env.game, env._legal_ids = other.game, None
    swapped = list(np.flatnonzero(env.observe("player_0")["action_mask"]))
    assert swapped == sorted({c for c, _ in other.game.legal_pairs()}) and swapped != first, (first, swapped)
    card = int(swapped[0])
    expected = [m for c, m in other.game.action_pairs() if c == card]
    env.step(card)  # named on the swapped-in game: its outcomes, not the old position's
    if len(expected) == 1:
        assert other.game.history[-1][1:] == (card, expected[0])
    else:
        assert env._pending_card == card and env._pending_outcomes == expected


def test_rewards_reset_after_a_rewarded_step():
    """Rewards are this step's only: after a hand-end reward the next step's are all 0."""
    env = scopa_v0.raw_env(episode="game", reward="points", action_mode="move")
    env.reset(seed=3)
    rewarded = False
    for agent in env.agent_iter(500):
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
        if rewarded:
            assert all(v == 0.0 for v in env.rewards.values()), f"the step after a reward: {env.rewards}"
            break
        rewarded = any(env.rewards.values())
    assert rewarded, "a hand should end within 500 steps and reward its margin"


def test_raw_env_step_before_reset_and_after_the_end():
    env = scopa_v0.raw_env()
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        env.step(0)
    env.reset(seed=1)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(RuntimeError, match=r"after the episode ended .*reset\(\)"):
        env.step(0)
