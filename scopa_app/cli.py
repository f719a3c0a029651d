"""The ``scopa`` command.

Subcommands: ``play-random`` (a random game rendered in the terminal), ``bench``
(speed numbers), ``presets`` (the named rule variants), and those other parts of the kit
add: ``eval``, ``tournament``, ``train``, ``play``, ``web``, ``zoo``. Each of those lives beside the
code it drives and exposes ``add_parser(subparsers)``; a part whose optional dependencies
are missing still shows up and says which extra to install.

A user's mistake (a bad value, a missing file) ends with one line on stderr, ``scopa
COMMAND: error: ...``, and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
from pathlib import Path

from scopa_app.args import add_game_arguments, game_setup, positive_seconds, seed_arg
from scopa_env.engine import house_rules
from scopa_env.engine.rules import PRESETS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scopa", description="Scopa for reinforcement-learning research.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "play-random",
        help="play a random game and render it in the terminal",
        description="Play a whole game of uniformly random legal moves and print every position (all hands "
        "shown) and each hand's score.",
    )
    add_game_arguments(p)
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the deals and the moves (default 0)")
    p.add_argument("--hand", action="store_true", help="stop after one hand")
    p.add_argument("--quiet", action="store_true", help="print only the hand results")
    p.add_argument("--no-color", action="store_true", help="plain text")
    p.set_defaults(func=_play_random)

    p = sub.add_parser(
        "bench",
        help="speed benchmarks (numbers and ratios)",
        description="Measure the Python engine, the PettingZoo env against a do-nothing env, and the compiled "
        "core (its cold starts included, with the ahead-of-time loops and on the JIT alone). It says how long it will take, then shows each step; rows ending in "
        "/cpu count this process's CPU time instead of the wall clock (the rate of one whole core).",
    )
    p.add_argument(
        "--seconds",
        type=positive_seconds,
        default=3.0,
        help="seconds per measurement (default 3; the whole run "
        "takes about 17 times as long, plus the compiled core's cold starts)",
    )
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    p.set_defaults(func=_bench)

    p = sub.add_parser(
        "presets",
        help="list the named rule variants (for --rules)",
        description="List every rules preset with its player counts, target and a line about it; "
        "docs/rules.md quotes the rule texts.",
    )
    p.set_defaults(func=_presets)

    _add_subcommands(sub)
    return parser


def _add_subcommands(sub) -> None:
    """The subcommands of the other parts of the kit; each module adds its own parser and imports
    its optional dependencies only when it runs, so every subcommand shows up and a missing extra
    is one line when it is used."""
    from scopa_app.dataset import add_dataset_parser
    from scopa_app.evaluate import add_eval_parser, add_tournament_parser
    from scopa_app.exploit import add_exploit_parser
    from scopa_app.leaderboard import add_leaderboard_parser
    from scopa_app.play import add_play_parser
    from scopa_app.web import add_web_parser
    from train.cli import add_train_parser
    from train.zoo.cli import add_zoo_parser

    for add in (
        add_eval_parser,
        add_tournament_parser,
        add_leaderboard_parser,
        add_train_parser,
        add_play_parser,
        add_web_parser,
        add_zoo_parser,
        add_dataset_parser,
        add_exploit_parser,
    ):
        add(sub)


def _play_random(args: argparse.Namespace) -> int:
    from scopa_env.engine.game import Game
    from scopa_env.engine.render import render_game, render_hand_result

    setup = game_setup(args)
    rnd = random.Random(args.seed)
    game = Game(setup.num_players, setup.rules, seed=args.seed, auto_next_hand=False)
    # The frame after a hand's last card shows that hand (render_game numbers an ended hand as itself).
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


def _presets(args: argparse.Namespace) -> int:
    for rules in PRESETS.values():
        counts = "/".join(str(n) for n in rules.player_counts)
        house = f" House rules: {house_rules.describe(rules.house_rules)}." if rules.house_rules else ""
        print(f"{rules.name:28s} {counts:9s} to {rules.target:<3d} {rules.description}{house}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    import math
    import os
    import time

    from scopa_env.bench.env import Row, estimate_seconds, run_all

    extra = []
    try:
        from scopa_env.bench.fast import bench_rows, estimate_fast_seconds  # the compiled core, when present
    except ModuleNotFoundError:
        bench_rows = None
    if bench_rows is not None:
        extra.append(bench_rows)
    total = estimate_seconds(args.seconds) + (estimate_fast_seconds(args.seconds) if bench_rows else 0.0)
    print(
        f"scopa bench: about {_duration(total)} ({args.seconds:g} s per measurement"
        + (", and the compiled core's cold starts, 15 s to a minute" if bench_rows else "")
        + "); each row prints as it finishes.",
        file=sys.stderr,
        flush=True,
    )
    load_before = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in load_before)}; "
        "vs ref: rate / reference-loop rate (times: x reference rate), measured in the same run",
        flush=True,
    )
    print(f"{'benchmark':72s} {'value':>14s} {'unit':8s} {'vs ref':>10s}", flush=True)
    start = time.perf_counter()

    def progress(label: str) -> None:
        print(f"  [{time.perf_counter() - start:5.0f} s] {label} ...", file=sys.stderr, flush=True)

    def show(row: Row) -> None:
        value = f"{row.value:.3f}" if row.unit == "ratio" else f"{row.value:,.0f}"
        vs = "-" if math.isnan(row.vs_ref) else f"{row.vs_ref:.4g}"
        print(f"{row.name:72s} {value:>14s} {row.unit:8s} {vs:>10s}", flush=True)

    rows = run_all(args.seconds, extra, progress=progress, on_row=show)
    load_after = os.getloadavg()
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in load_after)}", flush=True)
    if args.json:
        import shlex

        from scopa_env.bench.results import result_record, write_record

        record = result_record(
            shlex.join(["scopa", "bench", "--seconds", f"{args.seconds:g}", "--json", args.json]),
            [
                {
                    "benchmark": r.name,
                    "value": r.value,
                    "unit": r.unit,
                    "vs_ref": None if math.isnan(r.vs_ref) else r.vs_ref,
                }
                for r in rows
            ],
            what=f"scopa bench: speed rows, {args.seconds:g} s per measurement",
            columns=[("benchmark", "benchmark"), ("value", "value"), ("unit", "unit"), ("vs_ref", "vs ref")],
            load={"start": [round(x, 2) for x in load_before], "end": [round(x, 2) for x in load_after]},
        )
        write_record(record, args.json)
    return 0


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} seconds" if seconds < 90 else f"{seconds / 60:.0f} minutes"


KIT_ROOT = Path(__file__).resolve().parents[1]
"""The folder that holds the kit's top-level packages (the repository, or site-packages)."""


def shadowing_problem() -> str | None:
    """One line naming a module or folder that Python would import instead of one of the kit's
    packages (a ``train.py`` or ``agents/`` of the user's in the working folder, found first when that
    folder is on the module search path: ``python -m``, ``PYTHONPATH=.``), else None.

    It runs before the kit's ``agents`` and ``train`` are imported, so it imports nothing itself
    (``scopa_env`` is imported already, with this module).
    """
    try:  # each named as it is, so the layer test sees what is looked up (tests/test_layers.py)
        specs = {
            "agents": importlib.util.find_spec("agents"),
            "train": importlib.util.find_spec("train"),
        }
    except (ImportError, ValueError):
        return None
    for name, spec in specs.items():
        if spec is None:
            continue
        places = [spec.origin] if spec.has_location else list(spec.submodule_search_locations or [])
        for place in map(Path, places):
            if place.resolve().is_relative_to(KIT_ROOT / name):
                continue
            if not spec.has_location and not any(place.glob("*.py")):
                continue  # a folder of data, no code: the kit's modules are still found
            where = place.parent if place.name == "__init__.py" else place
            return (
                f"{where} hides the kit's '{name}' package (Python imports it first); "
                "rename it, or run scopa from another folder"
            )
    return None


def main(argv: list[str] | None = None) -> int:
    problem = shadowing_problem()
    if problem:
        print(f"scopa: error: {problem}", file=sys.stderr)
        return 2
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said with the subcommand's usage, not the top-level one
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as exc:  # bad values, missing or unwritable files: the user's to fix
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"scopa {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
