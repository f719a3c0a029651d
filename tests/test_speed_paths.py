"""Fast paths that must not change a result: each is held equal to the slower reference it replaced.

Speed itself is measured by ``scopa bench`` (``scopa_env/bench/env.py``), never asserted here.
"""

from __future__ import annotations

import numpy as np
import pytest

# --- PPO's rollout step (train/sb3/masked_policy.py) ------------------------------------------


def _policies(num_actions: int, obs_size: int = 24, card_net: bool = False):
    """A :class:`MaskedPolicy` (or the card-wise one) and the stock policy, or the same
    policy called through the stock ``forward``: same weights either way."""
    th = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train.sb3.masked_policy import MaskedPolicy

    th.manual_seed(0)
    if card_net:
        from train.sb3.card_net import CardPolicy, card_policy_kwargs

        kwargs = card_policy_kwargs(2, "standard", embed=8, trunk=16)
        obs_space = spaces.Box(-np.inf, np.inf, (376,), np.float32)
        fast = CardPolicy(obs_space, spaces.Discrete(num_actions), lambda _: 3e-4, **kwargs)
        return fast, lambda *a, **k: MaskableActorCriticPolicy.forward(fast, *a, **k), 376
    obs_space = spaces.Box(-np.inf, np.inf, (obs_size,), np.float32)
    fast = MaskedPolicy(obs_space, spaces.Discrete(num_actions), lambda _: 3e-4, net_arch=[16])
    stock = MaskableActorCriticPolicy(obs_space, spaces.Discrete(num_actions), lambda _: 3e-4, net_arch=[16])
    stock.load_state_dict(fast.state_dict())
    return fast, stock, obs_size


@pytest.mark.parametrize(
    ("num_actions", "card_net"), [(41, False), (300, False), (41, True)], ids=["select", "wide", "cards"]
)
def test_masked_policy_rollout_step_equals_the_stock_distribution(num_actions, card_net):
    """MaskedPolicy.forward gives the stock MaskableCategorical's actions, values and
    log-probabilities bit for bit, sampled (same torch seed) and deterministic, with masks
    that leave one legal action, a few, or all of them, and without a mask."""
    import torch as th

    fast, stock, obs_size = _policies(num_actions, card_net=card_net)
    rng = np.random.default_rng(1)
    for trial in range(12):
        batch = 1 + trial % 5
        obs = th.as_tensor(rng.random((batch, obs_size), dtype=np.float32) * 4 - 2)
        density = (0.0, 0.05, 0.5, 1.0)[trial % 4]
        masks = rng.random((batch, num_actions)) < density
        masks[np.arange(batch), rng.integers(num_actions, size=batch)] = True  # at least one legal action
        for deterministic in (False, True):
            for mask in (masks, None) if trial < 2 else (masks,):
                seed = 100 + trial
                with th.no_grad():
                    th.manual_seed(seed)
                    a1, v1, lp1 = fast(obs, deterministic=deterministic, action_masks=mask)
                    th.manual_seed(seed)
                    a2, v2, lp2 = stock(obs, deterministic=deterministic, action_masks=mask)
                where = f"trial {trial}, deterministic={deterministic}, mask={'none' if mask is None else density}"
                assert th.equal(a1, a2), f"actions differ ({where}): {a1} vs {a2}"
                assert th.equal(v1, v2), f"values differ ({where})"
                assert th.equal(lp1, lp2), f"log-probabilities differ ({where}): {lp1} vs {lp2}"
                if mask is not None:
                    assert masks[np.arange(batch), a1.numpy()].all(), f"an illegal action was drawn ({where})"


# --- the engine's deal (scopa_env/engine/game.py) -------------------------------------------------


def _reference_deal(rules, num_players: int, rng: np.random.Generator, dealer: int):
    """The first hand as dealt before the fast path: card ids read through the deck, the
    table through ``mask_of`` (no redeal, first-card choice or table bonus: callers skip those)."""
    from scopa_env.engine.cards import mask_of

    deck = list(rules.deck)
    order = [deck[i] for i in rng.permutation(len(deck)).tolist()]
    first = num_players * rules.schedule(num_players)[0]
    hands = [0] * num_players
    for i, card in enumerate(order[:first]):
        hands[(dealer + 1 + i) % num_players] |= 1 << card
    rest = order[first:]
    return hands, mask_of(rest[: rules.table_size]), rest[rules.table_size :]


@pytest.mark.parametrize("preset", ["standard", "scopa_corse", "small", "scopone", "cirulla"])
def test_deals_equal_the_reference_deal(preset):
    """A seed deals the same hands, table and stock as the reference deal (full decks take the
    permutation as card ids, short decks read it through the deck)."""
    from scopa_env.engine.game import Game
    from scopa_env.engine.rules import get_rules

    rules = get_rules(preset)
    checked = 0
    for num_players in rules.player_counts:
        for seed in range(40):
            game = Game(num_players, rules, seed=seed, auto_next_hand=False)
            if game.redeals or rules.first_card_choice or any(game.piles):
                continue  # dealt again or a table bonus: not the plain first deal
            hands, table, stock = _reference_deal(rules, num_players, np.random.default_rng(seed), num_players - 1)
            where = f"{preset}, {num_players} players, seed {seed}"
            assert game.hands == hands, f"hands differ ({where})"
            assert game.table == table, f"table differs ({where})"
            assert game.stock == stock, f"stock differs ({where})"
            checked += 1
    assert checked >= 40, f"only {checked} plain deals checked for {preset}"


# --- the AEC env's mask (scopa_env/aec/scopa_v0.py) --------------------------------------------


def _many_captures_deal() -> dict:
    """A deal where player_0's Tens can take many sets (Ace..Nine of coins and an Ace on the table)."""
    from scopa_env.engine.cards import card_id

    table = [card_id(suit, rank) for suit in (0, 1) for rank in range(1, 10)][:10]
    hands = [[card_id(2, 10), card_id(3, 10), card_id(2, 1)], [card_id(0, 10), card_id(1, 10), card_id(3, 1)]]
    used = set(table) | {c for h in hands for c in h}
    stock = [c for c in range(40) if c not in used]
    return {"hands": hands, "table": table, "stock": stock, "dealer": 1}


@pytest.mark.parametrize("mode", ["move", "select"])
@pytest.mark.parametrize("start", ["seeded", "many_captures"])
def test_observed_mask_marks_exactly_the_legal_ids(mode, start):
    """Written item by item (a few ids) or with one numpy index (many: the deal with many
    captures), the observed mask is 1 exactly at the legal ids, over whole random hands;
    the cumulative rewards, accumulated only on rewarded steps, sum to the rewards given."""
    from scopa_env import scopa_v0

    env = scopa_v0.raw_env(num_players=2, action_mode=mode, episode="hand", reward="points")
    rng = np.random.default_rng(3)
    many = 0
    for episode in range(20):
        env.reset(seed=episode, options={"deal": _many_captures_deal()} if start == "many_captures" else None)
        total = dict.fromkeys(env.possible_agents, 0.0)
        while not env.terminations[env.agent_selection]:
            ids = env._legal_action_ids()
            mask = env.observe(env.agent_selection)["action_mask"]
            assert mask.nonzero()[0].tolist() == sorted(ids), f"mask and legal ids differ (episode {episode})"
            many += len(ids) > scopa_v0.FEW_IDS
            env.step(int(ids[rng.integers(len(ids))]))
            for agent in env.possible_agents:
                total[agent] += env.rewards[agent]
        assert total == env._cumulative_rewards, f"cumulative rewards (episode {episode})"
    if start == "many_captures" and mode == "move":
        assert many, "positions with many legal ids were met (the numpy-index branch)"
