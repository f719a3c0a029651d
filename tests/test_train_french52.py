"""Training the 52-card game for 8 players (preset ``french_52``) with the SB3 learners.

Rule text: Wikipedia's Scopa article, "Playing with French-suited cards"
(wikipedia-scopa.txt); the preset's readings are in docs/rules.md. The SB3 learners (masked
PPO and the masked DQN) train it in both action modes on the Python env and on the compiled core
(``vec_env: fast``), DMC in "move" mode with 52-wide move features (the RLlib backend:
tests/test_rllib.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

from scopa_env.engine.actions import move_enumeration  # noqa: E402
from scopa_env.engine.cards import COINS, SETTEBELLO, SUIT_OF, parse_card  # noqa: E402
from scopa_env.engine.observation import ObservationLayout  # noqa: E402
from scopa_env.engine.rules import get_rules, move_of  # noqa: E402
from train.config import ConfigError, TrainConfig  # noqa: E402
from train.env import ActionCoder, ScopaGymEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "french52_ppo.yaml"
F52 = get_rules("french_52")

TINY = [
    "total_timesteps=256",
    "n_envs=2",
    "n_steps=64",
    "batch_size=32",
    "n_epochs=1",
    "net_arch=[32]",
    "eval_every=256",
    "eval_pairs=1",
    "eval_opponents=[random]",
    "final_eval_pairs=1",
    "learning_starts=64",
    "buffer_size=512",
    "target_update_interval=64",
    "progress_bar=false",
]
"""A few hundred steps; one evaluation (one deal: 8 rotations, whole games) against random."""


# --- what is refused, in one line -----------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        (["action_mode=moves"], "action_mode", r"action_mode"),
        (["num_players=4"], "rules", r"'french_52' allow num_players in \(8,\)"),
    ],
)
def test_misconfigurations_get_one_line_errors(overrides, key, message):
    with pytest.raises(ConfigError, match=message) as info:
        TrainConfig.load(CONFIG, overrides)
    assert "\n" not in str(info.value) and info.value.key == key
    if key != "rules":  # (a player count the rules refuse is blamed on the rules)
        assert str(info.value).startswith("command line ("), "blamed on the override"


def test_dmc_features_are_as_wide_as_the_deck():
    """wikipedia: "Jacks, Queens, and Kings are worth 11, 12, and 13": DMC's move features are 52
    wide for the 52-card deck, and a King that leaves 13 on the table counts the unseen Kings."""
    from train.dmc.agent import move_features

    std, f52 = move_features(get_rules("standard"), 2), move_features(F52, 8)
    assert std.size == 3 * 40 + 6 and f52.size == 3 * 52 + 6, "the 40-card features are unchanged"
    layout = ObservationLayout.for_rules(8, F52)
    obs = np.zeros((1, layout.size), np.float32)
    jack, two, king = parse_card("Jc", 13), parse_card("2s", 13), parse_card("Kd", 13)
    obs[0, layout["table"].start + jack] = obs[0, layout["table"].start + two] = 1
    for text in ("Kc", "Ks", "Kh"):  # three Kings unseen
        obs[0, layout["unseen"].start + parse_card(text, 13)] = 1
    trail = move_enumeration(F52).encode(move_of(king, 0))
    row = f52(obs, np.array([0]), np.array([trail]))[0]
    assert row[king] == 1 and row[2 * 52 + jack] == row[2 * 52 + two] == row[2 * 52 + king] == 1
    assert row[3 * 52 + 2] == pytest.approx((11 + 2 + 13) / 40), "the ranks left on the table"
    take = move_enumeration(F52).encode(move_of(king, 1 << jack | 1 << two))
    row = f52(obs, np.array([0]), np.array([take]))[0]
    assert row[3 * 52 + 1] == 1, "Jack and Two (11 + 2) are a King's sweep"
    obs[0, layout["table"].start + two] = 0  # a Two trailed beside a lone Jack leaves 11 + 2 = 13
    two_h = parse_card("2h", 13)
    row = f52(obs, np.array([0]), np.array([move_enumeration(F52).encode(move_of(two_h, 0))]))[0]
    assert row[3 * 52 + 4] == pytest.approx(3 / 4), "the three unseen Kings would sweep Jack + Two"


def test_dmc_trains_the_52_card_game_with_a_tiny_budget(tmp_path):
    """algo dmc on the compiled core in "move" mode (72,752 ids); the checkpoint plays a whole game."""
    from agents.evaluate import Match, play_game
    from agents.registry import make_agent
    from train.dmc.config import DmcConfig
    from train.dmc.learner import train

    cfg = DmcConfig.from_dict(
        {
            "name": "d52",
            "algo": "dmc",
            "rules": "french_52",
            "num_players": 8,
            "runs_dir": str(tmp_path),
            "selfplay_games": 4,
            "opponent_games": 4,
            "opponents": {"greedy": 1.0},
            "trunk": [16],
            "net_arch": [8],
            "batch_size": 64,
            "buffer_size": 1024,
            "rollout_steps": 4,
            "total_timesteps": 600,
            "eval_every": 600,
            "eval_pairs": 1,
            "eval_opponents": ["random"],
            "final_eval_pairs": 0,
            "progress_bar": False,
            "torch_threads": 1,
        }
    )
    run = train(cfg)
    meta = json.loads((run / "latest" / "meta.json").read_text())
    assert (meta["rules"], meta["num_players"]) == ("french_52", 8)
    agent = make_agent(f"dmc:{run / 'latest'}", seed=0)
    match = Match(("learner", "greedy"), 8, F52, seed=5)
    seats = [agent if s % 2 == 0 else make_agent("greedy", seed=s) for s in range(8)]
    record = play_game(match, 0, 0, seats)
    assert record["forfeit"] is None and max(record["scores"]) >= 11


def test_scopa_train_prints_the_one_line_error(scopa_cli, tmp_path):
    result = scopa_cli("train", str(CONFIG), f"runs_dir={tmp_path}", "algo=dqn", "num_players=4")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "allow num_players in (8,)" in lines[0], result.stderr
    assert not any(tmp_path.iterdir()), "nothing written"


def test_the_config_is_the_8_player_select_game():
    cfg = TrainConfig.load(CONFIG)
    assert (cfg.rules, cfg.num_players, cfg.action_mode, cfg.vec_env) == ("french_52", 8, "select", "dummy")
    assert TrainConfig.load(CONFIG, ["algo=dqn", "policy_net=mlp"]).algo == "dqn"
    assert TrainConfig.load(CONFIG, ["policy_net=cards", "vec_env=subproc"]).policy_net == "cards"


# --- envs and networks sized from the rules ---------------------------------------------------------


def test_the_env_is_52_cards_wide():
    """wikipedia: "it is possible to play an 8 player game of scopa using all 52 cards": the
    learner's env has 53 actions (a card id 0..51, then CONFIRM 52) and 52-wide card planes."""
    env = ScopaGymEnv(8, "french_52", action_mode="select", opponents="random")
    assert env.action_space.n == 53 and env.observation_space.shape == (1144,)
    assert ActionCoder(F52, "select").confirm == 52 and ActionCoder(get_rules("standard"), "select").confirm == 40
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    seen_pictures = confirmed = 0
    for _ in range(600):
        mask = env.action_masks()
        legal = np.flatnonzero(mask)
        assert mask.shape == (53,) and legal.size
        if env._pending is None:
            assert set(legal) == {c for c, _ in env.game.legal_pairs()}, "the learner's hand cards"
            seen_pictures += int(any(c >= 40 for c in legal))
        confirmed += int(mask[52])
        obs, _, done, _, _ = env.step(int(rng.choice(legal)))
        assert env.observation_space.contains(obs)
        if done:
            obs, _ = env.reset()
    assert seen_pictures, "Jacks, Queens and Kings (ids 40..51) are played"


def test_card_policy_reads_52_cards():
    from train.sb3.card_net import CardPolicy, CardSetExtractor, card_identity, card_policy_kwargs

    env = ScopaGymEnv(8, "french_52", action_mode="select", opponents="random")
    obs, _ = env.reset(seed=1)
    policy = CardPolicy(
        env.observation_space, env.action_space, lambda _: 1e-3, **card_policy_kwargs(8, "french_52", embed=8, trunk=16)
    )
    assert isinstance(policy.features_extractor, CardSetExtractor) and policy.features_extractor.num_cards == 52
    assert card_identity(52).shape == (52, 17), "13 ranks and 4 suits"
    assert card_identity().shape == (40, 14), "the 40-card network is unchanged"
    ident = card_identity(52)
    king_of_clubs = parse_card("Kc", 13)
    assert ident[king_of_clubs, 12] == 1 and ident[king_of_clubs, 13 + 3] == 1
    with torch.no_grad():
        logits = policy.get_distribution(torch.as_tensor(obs[None])).distribution.logits
    assert logits.shape == (1, 53)
    with pytest.raises(ValueError, match="41 actions, or 53"):
        from gymnasium import spaces

        CardPolicy(env.observation_space, spaces.Discrete(60), lambda _: 1e-3, **card_policy_kwargs(8, "french_52"))


def test_pile_shaping_counts_the_52_card_deck():
    """wikipedia: "the diamonds suit is used for the Italian coin suit, making capturing the most
    diamonds and the seven of diamonds each worth a point": the King of diamonds (id 42) is a coin."""
    from train.sb3.fast import pile_potential

    layout = ObservationLayout.for_rules(8, F52)
    prim = tuple(F52.primiera_values)
    assert len(prim) == 13
    empty = np.zeros((1, layout.size), np.float32)
    assert pile_potential(empty, layout, prim)[0] == 0.0

    def took(*cards: str) -> float:
        obs = empty.copy()
        for text in cards:
            obs[0, layout["own_pile"].start + parse_card(text, 13)] = 1
        return float(pile_potential(obs, layout, prim)[0])

    king_d, king_c = parse_card("Kd", 13), parse_card("Kc", 13)
    assert SUIT_OF[king_d] == COINS and king_d >= 40 and SUIT_OF[king_c] != COINS
    assert took("Kd") > took("Kc") > 0, "a diamond King is a card and a coin, the club King only a card"
    assert took("7d") > 1.0 and parse_card("7d", 13) == SETTEBELLO, "the settebello is a whole point"
    lost = empty.copy()
    lost[0, layout["other_piles"].start + 7 * 52 - 1] = 1  # the last side's King of clubs
    assert pile_potential(lost, layout, prim)[0] < 0


# --- a few hundred steps of training ------------------------------------------------------------------


@pytest.mark.parametrize(
    "algo, extra",
    [
        pytest.param("ppo", ["policy_net=cards"], marks=pytest.mark.slow),
        ("dqn", []),
        ("ppo", ["vec_env=fast", "opponents=heuristic"]),  # the compiled core and its heuristic
        # Discrete(72,752): one id per (card, captured set); minutes of training each
        pytest.param("ppo", ["action_mode=move", "policy_net=mlp"], marks=pytest.mark.slow),
        pytest.param("dqn", ["action_mode=move", "vec_env=fast"], marks=pytest.mark.slow),  # on the compiled core
    ],
    ids=["ppo-cards", "dqn", "ppo-compiled", "ppo-move", "dqn-move-compiled"],
)
def test_a_few_hundred_steps_train_evaluate_and_write_the_run(algo, extra, tmp_path):
    from agents.evaluate import Match, play_game
    from agents.registry import make_agent
    from train.sb3.policy_agent import load_checkpoint_agent
    from train.sb3.trainer import train

    cfg = TrainConfig.load(CONFIG, [f"runs_dir={tmp_path}", f"algo={algo}", *TINY, *extra])
    run = train(cfg).dir
    for name in ("config.yaml", "evaluations.csv", "report.md", "latest/meta.json", "best/meta.json"):
        assert (run / name).exists(), f"{name} missing from the run folder"
    meta = json.loads((run / "best" / "meta.json").read_text())
    num_actions = 72_752 if "action_mode=move" in extra else 53
    assert (meta["rules"], meta["num_players"], meta["num_actions"], meta["observation_size"]) == (
        "french_52",
        8,
        num_actions,
        1144,
    )
    assert "8 players, rules `french_52`" in (run / "report.md").read_text()
    # The checkpoint is an agent that plays the 52-card game with the baselines.
    agent = load_checkpoint_agent(str(run / "best"), seed=0)
    match = Match(("learner", "greedy"), 8, F52, seed=5)
    seats = [agent if s % 2 == 0 else make_agent("greedy", seed=s) for s in range(8)]
    record = play_game(match, 0, 0, seats)
    assert record["forfeit"] is None and max(record["scores"]) >= 11
