"""Hardening (issue 17): untrusted checkpoints, the web server under hostile use, and the
errors a new user meets (one line each, naming the problem; never a traceback)."""

from __future__ import annotations

import ast
import base64
import json
import pickle
import socket
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from scopa_app.cli import build_parser, main
from scopa_env import scopa_v0
from scopa_env.engine.cards import parse_cards
from scopa_env.engine.game import Game
from scopa_env.engine.rules import PRESETS, STANDARD

ROOT = Path(__file__).resolve().parents[1]


def one_line_error(err: str) -> str:
    """The single line a user error prints (no traceback)."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, f"expected one line, got:\n{err}"
    return lines[0]


# --- untrusted checkpoints ---------------------------------------------------------------------------


class Payload:
    """Unpickling this creates ``marker``: proof that loading a file ran code from it."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def ppo_meta(**changes) -> dict:
    meta = {
        "algo": "ppo",
        "num_players": 2,
        "rules": "standard",
        "action_mode": "select",
        "net_arch": [16],
        "policy_net": "mlp",
        "observation_size": 376,
        "num_actions": 41,
        "timestep": 0,
        "run": "test",
    }
    return {**meta, **changes}


def make_ppo_checkpoint(folder: Path, **changes):
    """A PPO checkpoint folder as training writes it; returns the policy."""
    pytest.importorskip("sb3_contrib")
    from train.checkpoint import build_ppo_policy, save_ppo, write_meta

    meta = ppo_meta(**changes)
    policy = build_ppo_policy(meta)
    folder.mkdir(parents=True, exist_ok=True)
    save_ppo(folder, policy)
    write_meta(folder, meta)
    return policy


def make_sb3_zip(folder: Path, marker: Path, policy) -> None:
    """An SB3-style ``model.zip``: real weights, and a ``data`` entry whose pickled object runs code."""
    import io

    import torch

    weights = io.BytesIO()
    torch.save(policy.state_dict(), weights)
    evil = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    data = {"policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": evil}, "n_steps": 64}
    with zipfile.ZipFile(folder / "model.zip", "w") as zf:
        zf.writestr("data", json.dumps(data))
        zf.writestr("policy.pth", weights.getvalue())
    (folder / "policy.pt").unlink(missing_ok=True)


@pytest.fixture
def hostile_zip(tmp_path):
    """A PPO folder whose only model is a crafted SB3 ``model.zip``; returns (folder, marker, policy)."""
    folder, marker = tmp_path / "ckpt", tmp_path / "PWNED"
    policy = make_ppo_checkpoint(folder)
    make_sb3_zip(folder, marker, policy)
    return folder, marker, policy


def same_actions(policy_fn, reference, n: int = 32, seed: int = 0) -> bool:
    rng = np.random.default_rng(seed)
    obs = rng.random((n, 376), dtype=np.float32)
    masks = rng.random((n, 41)) < 0.4
    masks[np.arange(n), rng.integers(41, size=n)] = True
    expected, _ = reference.predict(obs, action_masks=masks, deterministic=True)
    return bool((policy_fn(obs, masks) == expected).all())


def test_ppo_checkpoint_round_trip(tmp_path):
    """PPO checkpoints are a state dict and JSON; the loaded policy acts as the saved one and plays legally."""
    from agents.evaluate import evaluate
    from train.policy_agent import load_batch_policy

    policy = make_ppo_checkpoint(tmp_path / "ckpt")
    assert not (tmp_path / "ckpt" / "model.zip").exists(), "no pickling model.zip is written"
    loaded, meta = load_batch_policy(tmp_path / "ckpt")
    assert meta["policy_net"] == "mlp" and same_actions(loaded, policy), "the weights came back"
    report = evaluate([f"ppo:{tmp_path / 'ckpt'}", "random"], games=1)
    assert report["forfeits"] == [], "the checkpoint agent plays legal moves"


def test_crafted_sb3_zip_runs_code_under_sb3_but_not_here(hostile_zip, scopa_cli):
    """Issue 17.1: MaskablePPO.load unpickles ':serialized:' entries; every loader here refuses the zip."""
    folder, marker, _ = hostile_zip
    # The file is really hostile: Stable-Baselines3's own loader runs its code (in a child process).
    subprocess.run(
        [sys.executable, "-c", f"from sb3_contrib import MaskablePPO; MaskablePPO.load({str(folder / 'model.zip')!r})"],
        capture_output=True,
        timeout=300,
    )
    assert marker.exists(), "the crafted zip must run code under MaskablePPO.load, or this test proves nothing"
    marker.unlink()

    from agents.registry import make_agent

    with pytest.raises(ValueError, match="refused") as info:
        make_agent(f"ppo:{folder}")
    message = str(info.value)
    assert "python -m train.checkpoint" in message and "\n" not in message, message
    assert "policy_class" in message, "the message names the pickled entries"

    result = scopa_cli("eval", f"ppo:{folder}", "random", "--games", "1")
    assert result.returncode == 2 and "refused" in one_line_error(result.stderr), result.stderr
    assert not marker.exists(), "no loader ran code from the checkpoint"


def test_web_server_refuses_a_crafted_checkpoint_at_start(hostile_zip):
    pytest.importorskip("fastapi")
    from scopa_app.web.server import create_app

    folder, marker, _ = hostile_zip
    with pytest.raises(ValueError, match="refused"):
        create_app(default_opponent=f"ppo:{folder}")
    assert not marker.exists()


def test_converter_reads_only_the_weights(hostile_zip):
    from agents.registry import make_agent
    from train.checkpoint import main as convert
    from train.policy_agent import load_batch_policy

    folder, marker, policy = hostile_zip
    assert convert([str(folder)]) == 0
    assert (folder / "policy.pt").is_file() and not marker.exists(), "converting never unpickles the data entry"
    loaded, _ = load_batch_policy(folder)
    assert same_actions(loaded, policy), "the converted policy is the zip's"
    make_agent(f"ppo:{folder}")


def test_weights_file_with_python_objects_is_refused(tmp_path):
    import torch

    from agents.registry import make_agent

    folder, marker = tmp_path / "ckpt", tmp_path / "PWNED"
    make_ppo_checkpoint(folder)
    torch.save({"weight": Payload(marker)}, folder / "policy.pt")
    with pytest.raises(ValueError, match="holds Python objects besides weights") as info:
        make_agent(f"ppo:{folder}")
    assert str(folder / "policy.pt") in str(info.value), "the message names the file"
    assert not marker.exists()


@pytest.mark.parametrize(
    "damage, words",
    [
        ("truncate", "not a readable weights file"),
        ("meta_json", "meta.json: not valid JSON"),
        ("meta_list", "meta.json: expected a JSON object"),
        ("net_arch", "net_arch must be"),
        ("num_actions", "num_actions is 16200"),
        ("no_weights", "no policy.pt"),
        ("shape", "does not fit the network"),
    ],
)
def test_broken_checkpoints_name_the_file_and_the_problem(tmp_path, damage, words):
    from agents.registry import make_agent
    from train.checkpoint import write_meta

    folder = tmp_path / "ckpt"
    make_ppo_checkpoint(folder)
    weights, meta = folder / "policy.pt", folder / "meta.json"
    if damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:100])
    elif damage == "meta_json":
        meta.write_text('{"algo": "ppo", "num_players": 2,,}')
    elif damage == "meta_list":
        meta.write_text("[1, 2]")
    elif damage == "net_arch":
        write_meta(folder, ppo_meta(net_arch=[10**9]))
    elif damage == "num_actions":
        write_meta(folder, ppo_meta(num_actions=16200))
    elif damage == "no_weights":
        weights.unlink()
    elif damage == "shape":
        write_meta(folder, ppo_meta(net_arch=[32]))
    with pytest.raises((ValueError, FileNotFoundError)) as info:
        make_agent(f"ppo:{folder}")
    message = str(info.value)
    assert words in message and "\n" not in message, message
    assert str(folder) in message, f"the message names the checkpoint: {message}"


@pytest.mark.parametrize(
    "sizes, ok",
    [
        ({"obs_size": 8, "num_actions": 72_752, "net_arch": [4]}, True),  # french_52 in "move" mode
        ({"obs_size": 8, "num_actions": 524_289, "net_arch": [4]}, False),  # over MAX_MOVE_ACTIONS
        ({"obs_size": 8, "num_actions": 41, "net_arch": [1 << 17]}, False),  # a layer that wide
        ({"obs_size": 8, "num_actions": 41, "net_arch": "64"}, False),
    ],
)
def test_dqn_model_sizes_are_checked_before_a_network_is_built(tmp_path, sizes, ok):
    """A DQN ``model.pt`` names its sizes; they are bounded before any tensor is allocated."""
    import torch

    from train.checkpoint import load_q_network
    from train.networks import QNetwork

    file = tmp_path / "model.pt"
    state = QNetwork(8, sizes["num_actions"], [4]).state_dict() if ok else {}
    torch.save({"state_dict": state, **sizes}, file)
    if ok:
        assert load_q_network(file)(torch.zeros(1, 8)).shape == (1, 72_752)
    else:
        with pytest.raises(ValueError, match="bad network sizes") as info:
            load_q_network(file)
        assert str(file) in str(info.value) and "\n" not in str(info.value)


def test_resume_refuses_an_sb3_zip(hostile_zip, tmp_path):
    from train.config import ConfigError, TrainConfig
    from train.run import resume_config

    folder, marker, _ = hostile_zip
    run = tmp_path / "runs" / "old"
    (run / "latest").mkdir(parents=True)
    for name in ("meta.json", "model.zip"):
        (run / "latest" / name).write_bytes((folder / name).read_bytes())
    cfg = TrainConfig.load(None, ["name=old", f"runs_dir={tmp_path / 'runs'}", "algo=ppo", "net_arch=[16]"])
    cfg.dump(run / "config.yaml")
    with pytest.raises(ConfigError, match="refused"):
        resume_config(run, None, [])
    assert not marker.exists()


# --- the web server -------------------------------------------------------------------------------


@pytest.fixture
def web():
    """``web(**create_app kwargs) -> (app, TestClient)``."""
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from scopa_app.web.server import create_app

    clients = []

    def make(**kwargs):
        app = create_app(**{"default_opponent": "random", **kwargs})
        client = TestClient(app)
        clients.append(client)
        return app, client

    yield make
    for c in clients:
        c.close()


def test_client_seeds_are_refused_unless_allowed(web):
    """Issue 17.2: a seed from the page would let it recompute both hands and the stock."""
    _, client = web()
    r = client.post("/api/games", json={"seed": 12345})
    assert r.status_code == 400 and "--allow-seeds" in r.json()["detail"], r.text
    r = client.post("/api/games", json={})
    assert r.status_code == 201 and "seed" not in r.json()
    _, demo = web(allow_client_seeds=True)
    a = demo.post("/api/games", json={"seed": 12345}).json()
    b = demo.post("/api/games", json={"seed": 12345}).json()
    assert a["hand"] == b["hand"] and a["table"] == b["table"], "an allowed seed replays the deal"


def test_checkpoint_opponent_is_checked_against_the_game(web, tmp_path, monkeypatch):
    """Issue 17.3: a 2-player checkpoint refused for 4 players or other rules when the game is made, loaded once."""
    import train.policy_agent as policy_agent

    make_ppo_checkpoint(tmp_path / "ckpt")
    loads = []
    original = policy_agent.load_policy
    monkeypatch.setattr(policy_agent, "load_policy", lambda *a, **k: loads.append(a) or original(*a, **k))
    spec = f"ppo:{tmp_path / 'ckpt'}"
    app, client = web(default_opponent=spec)
    assert len(loads) == 1, "the checkpoint is loaded when the server starts"
    options = client.get("/api/options").json()
    assert options["agent_games"] == {spec: {"players": 2, "rules": "standard"}}
    for body, words in (({"players": 4}, "4 players"), ({"rules": "escoba"}, "'escoba'")):
        r = client.post("/api/games", json={"opponent": spec, **body})
        detail = r.json()["detail"]
        assert r.status_code == 400 and "2 players" in detail and "'standard'" in detail and words in detail, r.text
    assert client.cookies.get("scopa_session") is None, "a refused game makes no session"
    for _ in range(3):
        state = client.post("/api/games", json={"opponent": spec}).json()
        r = client.post(f"/api/games/{state['game_id']}/move", json={**state["legal"][0], "version": 0})
        assert r.status_code == 200, r.text
    assert len(loads) == 1, "games share the loaded checkpoint"
    agents = [wg.agents[1] for wg in app.state.store._sessions[client.cookies.get("scopa_session")].values()]
    assert len({id(a) for a in agents}) == 3 and len({id(a.policy) for a in agents}) == 1, "own copy, shared weights"


class Failing:
    """An agent that raises, or answers an illegal move."""

    def __init__(self, illegal: bool = False) -> None:
        self.illegal = illegal

    def act(self, view):
        if self.illegal:
            from scopa_env.engine.rules import move_of

            return move_of(next(c for c in range(40) if not view.hand >> c & 1), 0)  # a card it does not hold
        raise RuntimeError("the network exploded")


@pytest.mark.parametrize("illegal", [False, True], ids=["raises", "illegal-move"])
def test_a_failing_agent_leaves_the_game_as_it_was(web, illegal):
    """Issue 17.3: the human's move is rolled back with the agent's failure; the client gets JSON."""
    app, client = web(allow_client_seeds=True)
    state = client.post("/api/games", json={"seed": 7}).json()
    gid = state["game_id"]
    wg = app.state.store.get(client.cookies.get("scopa_session"), gid)
    good = wg.agents[1]
    wg.agents[1] = Failing(illegal)
    before = (
        repr(wg.game),
        list(wg.game.history),
        wg.game.rng.bit_generator.state,
        client.get(f"/api/games/{gid}").json(),
    )
    r = client.post(f"/api/games/{gid}/move", json={**state["legal"][0], "version": state["version"]})
    assert r.status_code == 500 and r.headers["content-type"].startswith("application/json"), r.text
    assert "player_1" in r.json()["detail"] and "as it was" in r.json()["detail"], r.text
    after = (
        repr(wg.game),
        list(wg.game.history),
        wg.game.rng.bit_generator.state,
        client.get(f"/api/games/{gid}").json(),
    )
    assert after == before, "the human's move was rolled back"
    wg.agents[1] = good
    move = {**state["legal"][0], "version": state["version"]}  # a refused request leaves the version as it was
    assert client.post(f"/api/games/{gid}/move", json=move).status_code == 200, "the game goes on"


def test_visits_make_no_session_and_eviction_is_by_last_use(web, monkeypatch):
    """Issue 17.4: cookie-less GET / floods evict nobody; sessions and games go least recently used first."""
    from fastapi.testclient import TestClient

    import scopa_app.web.server as server

    app, alice = web(new_sessions_per_minute=None)
    mine = alice.post("/api/games", json={}).json()["game_id"]
    store = app.state.store
    with TestClient(app) as stranger:
        for _ in range(1100):
            assert stranger.get("/").status_code == 200
        assert not stranger.cookies, "a visit sets no cookie"
    assert len(store._sessions) == 1, "visits alone make no session"
    monkeypatch.setattr(server, "MAX_SESSIONS", 3)
    monkeypatch.setattr(server, "MAX_GAMES_PER_SESSION", 2)
    with TestClient(app) as bob, TestClient(app) as carol, TestClient(app) as dave:
        bob.post("/api/games", json={})
        carol.post("/api/games", json={})
        assert alice.get(f"/api/games/{mine}").status_code == 200  # alice plays on: most recently used
        dave.post("/api/games", json={})  # one session too many: bob, the least recently used, goes
        assert alice.get(f"/api/games/{mine}").status_code == 200, "an active session survives"
        assert store.has_session(carol.cookies.get("scopa_session"))
        assert not store.has_session(bob.cookies.get("scopa_session")), "the least recently used session goes"
    second = alice.post("/api/games", json={}).json()["game_id"]
    assert alice.get(f"/api/games/{mine}").status_code == 200  # the first game is used again
    alice.post("/api/games", json={})  # a third game: the least recently used one (second) goes
    assert alice.get(f"/api/games/{mine}").status_code == 200, "the game in use survives"
    assert alice.get(f"/api/games/{second}").status_code == 404


def test_one_address_cannot_start_sessions_without_end(web):
    app, client = web(new_sessions_per_minute=2)
    for _ in range(2):
        client.cookies.clear()
        assert client.post("/api/games", json={}).status_code == 201
    client.cookies.clear()
    r = client.post("/api/games", json={})
    assert r.status_code == 429 and "too many new sessions" in r.json()["detail"], r.text
    client.post("/api/games", json={})
    assert len(app.state.store._sessions) == 2


def test_request_bodies_are_limited(web):
    from scopa_app.web.server import MAX_BODY_BYTES

    _, client = web()
    state = client.post("/api/games", json={}).json()
    big = json.dumps({"card": 0, "captured": [], "version": 0, "pad": "x" * (MAX_BODY_BYTES + 1)})
    r = client.post(f"/api/games/{state['game_id']}/move", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "too large" in r.json()["detail"], r.text

    def chunks():  # no Content-Length: the body is counted as it streams in
        for _ in range(40):
            yield b" " * 1024

    r = client.post(
        f"/api/games/{state['game_id']}/move", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413, r.text
    assert client.get(f"/api/games/{state['game_id']}").json()["hand"] == state["hand"]


def test_rule_descriptions_shown_to_players_name_no_source_files(web, monkeypatch):
    from scopa_app.web.server import player_description

    assert player_description("Standard Scopa (pagat-scopa.txt, wikipedia-scopa.txt).") == "Standard Scopa."
    assert player_description("Scopone (pagat, scopone-rules.txt): 9 cards.") == "Scopone (pagat): 9 cards."
    assert player_description("Escoba (pagat).") == "Escoba (pagat)."
    cited = STANDARD.replace(description="Standard Scopa (pagat-scopa.txt, wikipedia-scopa.txt).")
    monkeypatch.setitem(PRESETS, "standard", cited)
    _, client = web()
    options = client.get("/api/options").json()
    for r in options["rules"]:
        assert ".txt" not in r["description"] and "()" not in r["description"], r
    assert next(r for r in options["rules"] if r["name"] == "standard")["description"] == "Standard Scopa."
    assert client.post("/api/games", json={}).json()["rules"]["description"] == "Standard Scopa."


# --- the command line ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, words",
    [
        (["play", "--opponent", "ppo:missing.zip"], "no checkpoint at 'missing.zip'"),
        (["web", "--opponent", "ppo:missing.zip"], "no checkpoint at 'missing.zip'"),
        (["eval", "ppo:missing.zip", "random"], "no checkpoint at 'missing.zip'"),
    ],
)
def test_missing_checkpoints_are_one_line_errors(capsys, argv, words):
    pytest.importorskip("fastapi")
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert words in one_line_error(captured.err) and "open http" not in captured.out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["bench", "--seconds", "-1"], "positive number of seconds"),
        (["bench", "--seconds", "0"], "positive number of seconds"),
        (["web", "--port", "99999"], "port number from 0 (any free port) to 65535, got 99999"),
        (["web", "--port", "-1"], "port number from 0 (any free port) to 65535, got -1"),
        (["web", "--port", "http"], "port number"),
    ],
)
def test_bad_numbers_are_refused_by_the_parser(capsys, argv, words):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err


def test_play_refuses_a_checkpoint_trained_for_another_game(tmp_path, capsys):
    make_ppo_checkpoint(tmp_path / "ckpt")
    assert main(["play", "--opponent", f"ppo:{tmp_path / 'ckpt'}", "--players", "4"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "2 players" in line and "4 players" in line, line


def test_web_binds_before_it_prints(capsys, monkeypatch):
    """A taken port is an error that suggests --port; the address is printed only once bound."""
    pytest.importorskip("uvicorn")
    import uvicorn

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["web", "--port", str(port), "--opponent", "random"]) == 2
        captured = capsys.readouterr()
        assert "--port" in one_line_error(captured.err) and "in use" in captured.err
        assert "open http" not in captured.out, "no address is printed for a server that is not ours"
    served = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: served.append(sockets[0].getsockname()))
    assert main(["web", "--port", "0", "--opponent", "random"]) == 0
    out = capsys.readouterr().out
    assert served and f"http://127.0.0.1:{served[0][1]}/" in out, out


def help_of(*argv: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[argv[0]].format_help()


def test_help_describes_every_command_and_names_checkpoint_agents():
    for command in ("play-random", "bench", "web", "play", "eval", "tournament", "presets"):
        text = help_of(command)
        usage, _, rest = text.partition("\n\n")
        assert rest and not rest.startswith(("positional", "options")), f"scopa {command} has no description"
        assert "``" not in text and ":mod:" not in text, f"scopa {command} --help shows a docstring"
    for command in ("play-random", "play", "eval", "tournament"):
        text = " ".join(help_of(command).split())
        assert "scopone_scientifico" not in text and "scopa presets" in text, f"scopa {command} lists every preset"
    for command in ("eval", "play", "web"):
        text = " ".join(help_of(command).split())
        assert "ppo:PATH" in text, f"scopa {command}: checkpoint agents are named"
        assert "zoo:NAME" in text and "zoo:PATH" not in text, f"scopa {command}: zoo: takes a name"
        assert "module:Class" in text, f"scopa {command}: a user's own class is named"
    assert "/cpu" in help_of("bench")


def test_presets_command_lists_every_preset(capsys):
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == list(PRESETS)


def test_bench_says_how_long_and_shows_progress(capsys, monkeypatch):
    import scopa_env.bench.fast as fast_bench

    monkeypatch.setattr(fast_bench, "bench_rows", lambda seconds, progress=None: progress("compiled core") or [])
    assert main(["bench", "--seconds", "0.02"]) == 0
    captured = capsys.readouterr()
    first, *steps = captured.err.strip().splitlines()
    assert first.startswith("scopa bench: about") and "seconds" in first, captured.err
    assert len(steps) == 5 and "Python engine" in steps[0] and "compiled core" in steps[-1], captured.err
    assert "engine random play, 2 players" in captured.out


def test_play_random_frames_show_the_hand_being_played(capsys):
    assert main(["play-random", "--seed", "3", "--hand", "--no-color"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("Scopa (")]
    assert len(headers) == 37 and all(" hand 1," in h for h in headers), {h.split(",")[1] for h in headers}


def test_terminal_hints_and_help():
    from agents.random_agent import RandomAgent
    from scopa_app.play import TerminalGame

    hand0, hand1, table = parse_cards("7d 2d Kd"), parse_cards("Ac Ab 6b"), parse_cards("7c 7s 3s 4b")
    stock = [c for c in STANDARD.deck if c not in set(hand0 + hand1 + table)]
    game = Game.from_deal([hand0, hand1], table, stock, dealer=1, seed=0, auto_next_hand=False)
    answers, out = iter(["2d 3s", "h", "q"]), []
    tg = TerminalGame(game, {1: RandomAgent(seed=0)}, input_fn=lambda p: next(answers), output_fn=out.append)
    assert tg.run() == 0, "q leaves with exit status 0"
    text = "\n".join(out)
    assert "cannot take anything from the table; trail it: type the card alone" in text, text
    assert "empty slot" not in text, "the terminal has no empty slot"
    assert "J, Q, K" in text and "8, 9, 10" in text, "the help gives the figures' values"


# --- configs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("gamma", "7", "gamma must be in [0, 1]"),
        ("exploration_final_eps", "2", "exploration_final_eps must be in [0, 1]"),
        ("learning_rate", "-1", "learning_rate must be in (0, 1]"),
        ("seed", "-1", "seed must be in [0, 2147483647]"),
        ("clip_range", "0", "clip_range must be > 0"),
    ],
)
def test_config_ranges_are_checked_before_anything_is_written(tmp_path, capsys, key, value, words):
    pytest.importorskip("torch")
    from train.config import ConfigError, TrainConfig

    (tmp_path / "c.yaml").write_text(f"algo: dqn\n{key}: {value}\n")
    with pytest.raises(ConfigError) as info:
        TrainConfig.load(tmp_path / "c.yaml")
    assert str(info.value) == f"{tmp_path / 'c.yaml'}: {words}, got {value}", "a value from the file blames the file"
    with pytest.raises(ConfigError) as info:
        TrainConfig.load(ROOT / "configs" / "quickstart.yaml", [f"{key}={value}"])
    assert str(info.value).startswith(f"command line ({key}={value}): {words}"), str(info.value)
    assert main(["train", str(tmp_path / "c.yaml"), f"runs_dir={tmp_path / 'runs'}"]) == 2
    assert words in one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "runs").exists(), "nothing was written"


def test_mistyped_keys_get_a_suggestion(tmp_path):
    from train.config import ConfigError, TrainConfig

    with pytest.raises(
        ConfigError, match=r"^command line: unknown key\(s\) \['learning_rat'\] \(did you mean learning_rate\?\)"
    ):
        TrainConfig.load(ROOT / "configs" / "quickstart.yaml", ["learning_rat=0.1"])
    (tmp_path / "c.yaml").write_text("n_env: 4\n")
    with pytest.raises(ConfigError, match=r"c.yaml: unknown key\(s\) \['n_env'\] \(did you mean n_envs\?\)"):
        TrainConfig.load(tmp_path / "c.yaml")


# --- the raw env --------------------------------------------------------------------------------------


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


# --- import direction ---------------------------------------------------------------------------------


def imports_of(module: str) -> set[str]:
    """Every module ``module`` imports, at the top or inside a function."""
    tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def reaches(start: str, target: str, within: tuple[str, ...]) -> bool:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for dep in imports_of(module):
            if dep == target:
                return True
            if dep.startswith(within) and (ROOT / (dep.replace(".", "/") + ".py")).is_file():
                todo.append(dep)
    return False


def test_dependency_arrows_go_one_way():
    """rules <- presets, and dqn -> run -> policy_agent without a way back (issue 17's two import circles)."""
    assert reaches("scopa_env.engine.presets", "scopa_env.engine.rules", ("scopa_env",))
    assert not reaches("scopa_env.engine.rules", "scopa_env.engine.presets", ("scopa_env",)), "rules imports presets"
    assert reaches("train.dqn", "train.policy_agent", ("train",))
    for module in ("train.run", "train.policy_agent", "train.checkpoint"):
        assert not reaches(module, "train.dqn", ("train",)), f"{module} leads back to train.dqn"
    assert "chkobba" in PRESETS, "the package still registers every preset"


# --- forwarded addresses -------------------------------------------------------------------------------


def serve_web(*options: str):
    """``scopa web --port 0 --opponent random OPTIONS`` in a child process; returns (process, base URL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "scopa_app.cli", "web", "--port", "0", "--opponent", "random", *options],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if "open http://" not in line:
        proc.kill()
        pytest.fail(f"scopa web did not start: {line!r} {proc.stderr.read()}")
    return proc, line.split("open ")[1].split()[0].rstrip("/")


def new_sessions(base: str, forwarded_for: list[str]) -> list[int]:
    """The status of ``POST /api/games`` without a cookie (each a new session), one per X-Forwarded-For."""
    httpx = pytest.importorskip("httpx")
    codes = []
    for address in forwarded_for:
        r = httpx.post(f"{base}/api/games", json={}, headers={"X-Forwarded-For": address}, timeout=30)
        codes.append(r.status_code)
    return codes


def test_a_forged_forwarded_for_does_not_lift_the_session_limit():
    """Before: uvicorn trusted X-Forwarded-For from any local client, so a new header per request
    was a new address: 1,010 requests evicted everyone's games. Now every request here is 127.0.0.1."""
    from scopa_app.web.server import NEW_SESSIONS_PER_MINUTE

    proc, base = serve_web()
    try:
        forged = [f"10.0.{i // 250}.{i % 250 + 1}" for i in range(NEW_SESSIONS_PER_MINUTE + 1)]
        codes = new_sessions(base, forged)
    finally:
        proc.kill()
        proc.wait()
    assert codes == [201] * NEW_SESSIONS_PER_MINUTE + [429], codes


def test_a_named_proxy_forwards_the_client_address():
    """With --trusted-proxy, the proxy's X-Forwarded-For names the client: each client has its own limit."""
    from scopa_app.web.server import NEW_SESSIONS_PER_MINUTE

    n = NEW_SESSIONS_PER_MINUTE
    proc, base = serve_web("--trusted-proxy", "127.0.0.1")
    try:
        many = new_sessions(base, [f"10.1.0.{i + 1}" for i in range(n + 1)])
        one = new_sessions(base, ["10.2.0.1"] * (n + 1))
    finally:
        proc.kill()
        proc.wait()
    assert many == [201] * (n + 1), "different clients behind the proxy each start sessions"
    assert one == [201] * n + [429], "one client behind the proxy is limited"


@pytest.mark.parametrize("value", ["*", "proxy.example", "10.0.0.300"])
def test_trusted_proxy_must_be_an_address(capsys, value):
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["web", "--trusted-proxy", value])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--trusted-proxy" in err and "IP address or network of your reverse proxy" in err, (
        err
    )
