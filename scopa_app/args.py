"""argparse types and help shared by the ``scopa`` subcommands."""

from __future__ import annotations

import argparse

from scopa_env.engine.rules import ALLOWED_PLAYER_COUNTS, get_rules
from scopa_env.engine.setup import GameSetup

RULES_HELP = "rules preset (default standard; `scopa presets` lists them, docs/rules.md explains them)"
"""The ``--rules`` help of every subcommand (the presets are listed once, by ``scopa presets``)."""


def rules_arg(name: str):
    """argparse type for ``--rules``: a known preset name."""
    try:
        return get_rules(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def players_arg(text: str) -> int:
    """argparse type for ``--players``: a player count the engine knows (``ALLOWED_PLAYER_COUNTS``).

    Whether the chosen rules deal for that many players is the rules' own check
    (``Rules.check_players``), made where both are known."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value not in ALLOWED_PLAYER_COUNTS:
        counts = ", ".join(map(str, ALLOWED_PLAYER_COUNTS))
        raise argparse.ArgumentTypeError(f"must be one of {counts}, got {text!r}")
    return value


PLAYERS_HELP = "number of players (default 2; 4 and 6 play in teams; 8: the 52-card game, --rules french_52)"
"""The ``--players`` help of every subcommand."""


def add_game_arguments(parser: argparse.ArgumentParser, players_help: str = PLAYERS_HELP) -> None:
    """``--rules`` (a :class:`~scopa_env.engine.rules.Rules`, default standard) and ``--players`` (an
    int the engine knows, default 2): the two options that name the game, typed and helped alike in
    every subcommand."""
    parser.add_argument("--rules", type=rules_arg, default=get_rules(), help=RULES_HELP)
    parser.add_argument("--players", type=players_arg, default=2, metavar="N", help=players_help)


def game_setup(args: argparse.Namespace) -> GameSetup:
    """The game that ``--rules`` and ``--players`` (:func:`add_game_arguments`) name, checked once where a
    subcommand starts and passed down from there: a player count the rules do not deal for is the
    one-line ``ValueError`` of :meth:`GameSetup.of <scopa_env.engine.setup.GameSetup.of>`."""
    return GameSetup.of(args.rules, args.players)


def positive_seconds(text: str) -> float:
    """argparse type for ``--seconds``: a positive number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def seed_arg(text: str) -> int:
    """argparse type for ``--seed``: a non-negative integer (numpy's seeds are)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {value}")
    return value


RAY_HELP = (
    "play the deals on a Ray cluster: ADDRESS is the head's HOST:PORT (`ray start --head`), ray://HOST:10001 or "
    "auto (the cluster started on this machine); no ADDRESS: a local Ray of --workers CPUs. The results do not "
    'depend on it (docs/benchmark.md, "Running on a Ray cluster"); needs ray: pip install "ray>=2.60,<3"'
)
"""The ``--ray`` help of every command that plays deals (:mod:`agents.ray_deals`)."""


def add_ray_argument(parser: argparse.ArgumentParser) -> None:
    """``--ray [ADDRESS]``: ``None`` without it, ``""`` (a local Ray) with no address."""
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS", help=RAY_HELP)
