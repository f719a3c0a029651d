"""Wrong results that look like results: the evaluation refuses them before or instead of a table.

* An agent that declares another game (a checkpoint's rules and player count, its
  ``mismatch``) is refused by :func:`agents.tournament.evaluate`, :func:`agents.tournament.tournament`,
  ``scopa eval`` and ``scopa tournament`` before any game: one line, exit status 2.
* A run in which an agent forfeits games (an illegal move, an exception) ends with a
  non-zero status and the count of forfeits, never a table of results.
* A checkpoint whose weights hold NaN or infinite values is refused when it is loaded,
  naming the file and the first such tensor.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from agents.base import Agent
from agents.random_agent import RandomAgent
from agents.registry import make_agent, register_agent_factory
from agents.tournament import evaluate, tournament
from scopa_app.cli import build_parser
from scopa_env.engine.rules import Move


class IllegalAgent(Agent):
    """Plays a card from the table (or an unseen one): always illegal."""

    def act(self, view):
        cards = view.table or view.unseen
        return Move((cards & -cards).bit_length() - 1)


class FlakyAgent(RandomAgent):
    """A random agent whose every 60th move (counted over all its instances) raises."""

    calls = 0

    def act(self, view):
        FlakyAgent.calls += 1
        if FlakyAgent.calls % 60 == 0:
            raise RuntimeError("flaky network")
        return super().act(view)


register_agent_factory("guard-illegal", lambda arg, seed=None, **kw: IllegalAgent(seed))
register_agent_factory("guard-flaky", lambda arg, seed=None, **kw: FlakyAgent(seed))


def scopa(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``scopa ARGV`` in this process; returns (exit status, stdout, stderr)."""
    args = build_parser().parse_args([*argv, "--no-progress"])
    status = args.func(args)
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    return lines[0]


# --- checkpoints ---------------------------------------------------------------------------------------


def dmc_copy(tmp_path, name: str = "standard-2p"):
    """A copy of a zoo checkpoint folder (a DMC checkpoint trained for the standard 2-player game)."""
    from train import zoo

    folder = tmp_path / name
    shutil.copytree(zoo.path_of(name), folder)
    return folder


def dqn_checkpoint(folder, poison: float | None = None, key: str = "net.2.bias"):
    """A DQN checkpoint for the standard 2-player game ("select" mode); ``poison`` goes into ``key``."""
    torch = pytest.importorskip("torch")
    from train.checkpoint import write_meta
    from train.sb3.networks import QNetwork

    net = QNetwork(376, 41, [16])
    state = net.state_dict()
    assert key in state, sorted(state)
    if poison is not None:
        state[key][0] = poison
    folder.mkdir(parents=True)
    torch.save({"state_dict": state, "obs_size": 376, "num_actions": 41, "net_arch": [16]}, folder / "model.pt")
    meta = {"algo": "dqn", "num_players": 2, "rules": "standard", "action_mode": "select", "net_arch": [16]}
    write_meta(folder, {**meta, "observation_size": 376, "num_actions": 41, "timestep": 0, "run": "test"})
    return folder


def ppo_checkpoint(folder, poison: float | None = None):
    """A PPO checkpoint for the standard 2-player game; ``poison`` goes into the first value-net tensor."""
    pytest.importorskip("sb3_contrib")
    import torch

    from train.checkpoint import MODEL_FILES, build_ppo_policy, save_ppo, write_meta

    meta = {"algo": "ppo", "num_players": 2, "rules": "standard", "action_mode": "select", "net_arch": [16]}
    meta |= {"policy_net": "mlp", "observation_size": 376, "num_actions": 41, "timestep": 0, "run": "test"}
    policy = build_ppo_policy(meta)
    folder.mkdir(parents=True)
    save_ppo(folder, policy)
    write_meta(folder, meta)
    key = None
    if poison is not None:
        state = torch.load(folder / MODEL_FILES["ppo"], weights_only=True)
        key = next(k for k in state if k.startswith("value_net"))
        state[key].view(-1)[0] = poison
        torch.save(state, folder / MODEL_FILES["ppo"])
    return folder, key


# --- an agent of another game is refused before any game ---------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("eval", "zoo:standard-2p", "greedy", "--players", "4", "--games", "3"),
        ("eval", "zoo:standard-2p", "greedy", "--rules", "escoba", "--games", "3"),
        ("eval", "greedy", "zoo:standard-2p", "--players", "3", "--games", "3"),
        ("tournament", "zoo:standard-2p", "greedy", "random", "--players", "4", "--games", "3"),
        ("tournament", "random", "greedy", "zoo:standard-2p", "--rules", "escoba", "--games", "3"),
    ],
)
def test_an_agent_of_another_game_is_refused_in_one_line(capsys, tmp_path, argv):
    """Before: exit 0 and a table of nan with "greedy 100.0%" (every game forfeited)."""
    png = tmp_path / "t.png"
    extra = ("--png", str(png)) if argv[0] == "tournament" else ()
    status, out, err = scopa(capsys, *argv, *extra)
    line = one_line(err)
    assert status == 2, f"{argv}: exit {status}, stderr {err!r}"
    assert "zoo:standard-2p" in line and "cannot play this game" in line and "trained for 2 players" in line, line
    assert out == "", f"no table and no progress before the refusal: {out!r}"
    assert not png.exists(), "no chart"


@pytest.mark.parametrize("prefix", ["dmc", "dqn"])
def test_a_two_player_checkpoint_is_refused_for_three(capsys, tmp_path, prefix):
    folder = dmc_copy(tmp_path) if prefix == "dmc" else dqn_checkpoint(tmp_path / "dqn")
    status, out, err = scopa(capsys, "eval", f"{prefix}:{folder}", "greedy", "--players", "3", "--games", "2")
    line = one_line(err)
    assert status == 2 and "cannot play this game" in line and "not 3 players" in line, (status, line)
    assert out == ""


def test_the_python_harness_refuses_before_any_game():
    """evaluate() and tournament() check every agent before the first deal (the tournament: before the first pair)."""
    with pytest.raises(ValueError, match="'zoo:standard-2p' cannot play this game: .*not 4 players"):
        evaluate(["zoo:standard-2p", "greedy"], games=2, players=4)
    played = []
    with pytest.raises(ValueError, match="'zoo:standard-2p' cannot play this game"):
        tournament(["random", "greedy", "zoo:standard-2p"], games=2, players=4, on_pair=played.append)
    assert played == [], "random vs greedy was not played before the refusal"
    report = evaluate(["zoo:standard-2p", "greedy"], games=1, players=2)
    assert report["forfeits"] == [], "its own game is played"


# --- forfeits fail the run -----------------------------------------------------------------------------


def test_forfeits_fail_eval_with_their_count(capsys, tmp_path):
    """Before: exit 0 and a table where random wins 100% against an agent that never moved."""
    report = tmp_path / "r.json"
    status, out, err = scopa(capsys, "eval", "guard-illegal:x", "random", "--games", "2", "--json", str(report))
    assert status == 1, f"exit {status}"
    assert "4 of 4 games were forfeited" in err and "guard-illegal:x 4" in err, err
    assert "illegal move" in err, "the first forfeit is shown"
    assert "win rate" not in out and "margin" not in out, f"no table is printed as a result: {out!r}"
    assert not report.exists(), "no report file either"


def test_an_exception_in_act_fails_eval(capsys):
    FlakyAgent.calls = 0
    status, _, err = scopa(capsys, "eval", "guard-flaky:x", "greedy", "--games", "4")
    assert status == 1, err
    assert "games were forfeited" in err and "RuntimeError: flaky network" in err, err
    assert " of 8 games" in err


def test_forfeits_fail_a_tournament(capsys, tmp_path):
    png = tmp_path / "t.png"
    status, out, err = scopa(capsys, "tournament", "random", "guard-illegal:x", "greedy", "--games", "2",
                             "--png", str(png))  # fmt: skip
    assert status == 1, err
    assert "8 of 12 games were forfeited" in err and "guard-illegal:x 8" in err, err
    assert "elo" not in out.lower() and not png.exists(), out


def test_a_clean_run_still_succeeds(capsys):
    status, out, err = scopa(capsys, "eval", "greedy", "random", "--games", "2")
    assert status == 0 and "win rate" in out, err


# --- non-finite weights are refused at load -------------------------------------------------------------


def assert_names(exc: BaseException, file, key: str) -> None:
    message = str(exc)
    assert str(file) in message and repr(key) in message and "\n" not in message, message
    assert "NaN or infinite" in message, message


def test_dmc_weights_with_nan_are_refused(tmp_path, capsys):
    from train.dmc.agent import load_dmc

    folder = dmc_copy(tmp_path)
    weights = dict(np.load(folder / "weights.npz"))
    key = "head.0.bias"
    weights[key][3] = np.nan
    np.savez(folder / "weights.npz", **weights)
    with pytest.raises(ValueError) as info:
        load_dmc(folder)
    assert_names(info.value, folder / "weights.npz", key)
    status, out, err = scopa(capsys, "eval", f"dmc:{folder}", "greedy", "--games", "2")
    assert status == 2 and key in one_line(err) and out == "", (status, err)


def test_zoo_weights_with_inf_are_refused(tmp_path, monkeypatch):
    from train import zoo

    folder = dmc_copy(tmp_path)
    weights = dict(np.load(folder / "weights.npz"))
    key = "trunk.0.weight"
    weights[key][0, 0] = -np.inf
    np.savez(folder / "weights.npz", **weights)
    card = json.loads((folder / zoo.CARD_FILE).read_text())
    card["weights_sha256"] = zoo.weights_sha256(folder)  # a card that vouches for the bad file
    (folder / zoo.CARD_FILE).write_text(json.dumps(card))
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    with pytest.raises(ValueError) as info:
        make_agent("zoo:standard-2p")
    assert_names(info.value, folder / "weights.npz", key)


@pytest.mark.parametrize("poison", [np.nan, np.inf])
def test_dqn_weights_with_nan_or_inf_are_refused(tmp_path, poison):
    folder = dqn_checkpoint(tmp_path / "dqn", poison=poison, key="net.2.bias")
    with pytest.raises(ValueError) as info:
        make_agent(f"dqn:{folder}")
    assert_names(info.value, folder / "model.pt", "net.2.bias")
    clean = dqn_checkpoint(tmp_path / "clean")
    assert make_agent(f"dqn:{clean}").mismatch(2, "standard") is None, "finite weights load"


def test_ppo_weights_with_nan_are_refused(tmp_path):
    folder, key = ppo_checkpoint(tmp_path / "ppo", poison=np.nan)
    with pytest.raises(ValueError) as info:
        make_agent(f"ppo:{folder}")
    assert_names(info.value, folder / "policy.pt", key)
    from train.sb3.policy_agent import load_batch_policy

    with pytest.raises(ValueError, match="NaN or infinite"):
        load_batch_policy(folder)
