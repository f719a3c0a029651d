"""The ``scopa`` command.

Subcommands: ``play-random`` (a random game rendered in the terminal), ``bench``
(speed numbers), and those other parts of the kit add: ``eval``, ``tournament``,
``train``, ``play``, ``web``. Each of those lives beside the code it drives and
exposes ``add_parser(subparsers)``; a part whose optional dependencies are missing
still shows up and says which extra to install.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys

from scopa_env.rules import PRESETS, get_rules

# (module, function) pairs that add subcommands; a missing module is skipped.
SUBCOMMAND_PROVIDERS = (
    ("agents.cli_eval", "add_eval_parser"),
    ("agents.cli_eval", "add_tournament_parser"),
    ("train.cli", "add_train_parser"),
    ("scopa_env.play", "add_play_parser"),
    ("scopa_env.web", "add_web_parser"),
)


def rules_arg(name: str):
    """argparse type for ``--rules``: a known preset name."""
    try:
        return get_rules(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scopa", description="Scopa for reinforcement-learning research.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("play-random", help="play a random game and render it in the terminal")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4, 6))
    p.add_argument("--rules", type=rules_arg, default=get_rules(), help=f"preset: {', '.join(sorted(PRESETS))}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hand", action="store_true", help="stop after one hand")
    p.add_argument("--quiet", action="store_true", help="print only the hand results")
    p.add_argument("--no-color", action="store_true")
    p.set_defaults(func=_play_random)

    p = sub.add_parser("bench", help="speed benchmarks (numbers and ratios)")
    p.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    p.set_defaults(func=_bench)

    for module_name, fn_name in SUBCOMMAND_PROVIDERS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # that part of the kit is not there
            raise
        getattr(module, fn_name)(sub)
    return parser


def _play_random(args: argparse.Namespace) -> int:
    from scopa_env.game import Game
    from scopa_env.render import render_game, render_hand_result

    args.rules.check_players(args.players)
    rnd = random.Random(args.seed)
    game = Game(args.players, args.rules, seed=args.seed, auto_next_hand=False)
    color = not args.no_color and sys.stdout.isatty()
    if not args.quiet:
        print(render_game(game, color=color))
    while True:
        pairs = game.legal_pairs()
        card, mask = pairs[rnd.randrange(len(pairs))]
        game.play_pair(card, mask)
        if not args.quiet:
            print()
            print(render_game(game, color=color))
        if game.hand_result is not None:
            print(f"\nHand {game.hand_number} result:")
            print(render_hand_result(game.hand_result))
            print(f"  game score: {game.scores} (target {game.rules.target})")
            if args.hand or game.winner is not None:
                break
            game.next_hand()
    if game.winner is not None:
        print(f"\nside {game.winner} wins the game {game.scores}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from scopa_env.bench import run_all

    extra = []
    try:
        from scopa_env.fast.bench import bench_rows  # the compiled core, when present
    except ModuleNotFoundError:
        bench_rows = None
    if bench_rows is not None:
        extra.append(bench_rows)
    rows = run_all(args.seconds, extra)
    table = Table(title="scopa bench")
    table.add_column("benchmark")
    table.add_column("value", justify="right")
    table.add_column("unit")
    for name, value, unit in rows:
        table.add_row(name, f"{value:.3f}" if unit == "ratio" else f"{value:,.0f}", unit)
    Console().print(table)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([{"benchmark": n, "value": v, "unit": u} for n, v, u in rows], fh, indent=2)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except ValueError as exc:
        print(f"scopa {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
