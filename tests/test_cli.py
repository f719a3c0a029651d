"""The ``scopa`` command line: every command's help, ``scopa presets``, the frames of ``scopa
play-random``, and the errors a user meets there, one line each naming the problem (never a
traceback): a missing checkpoint or one trained for another game, numbers out of range, a port
in use, a ``--trusted-proxy`` that is not an address."""

from __future__ import annotations

import socket

import pytest
from checkpoint_helpers import make_ppo_checkpoint
from cli_helpers import one_line_error

from scopa_app.cli import build_parser, main
from scopa_env.engine.rules import PRESETS

# --- one-line errors ------------------------------------------------------------------------------


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


@pytest.mark.parametrize("value", ["*", "proxy.example", "10.0.0.300"])
def test_trusted_proxy_must_be_an_address(capsys, value):
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["web", "--trusted-proxy", value])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--trusted-proxy" in err and "IP address or network of your reverse proxy" in err, (
        err
    )


# --- help and the commands' output ----------------------------------------------------------------


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


def test_play_random_frames_show_the_hand_being_played(capsys):
    assert main(["play-random", "--seed", "3", "--hand", "--no-color"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("Scopa (")]
    assert len(headers) == 37 and all(" hand 1," in h for h in headers), {h.split(",")[1] for h in headers}
