"""``scopa dataset``: positions labelled by the compiled search, written to a Parquet file (:mod:`agents.dataset`).

::

    scopa dataset --games N --out PATH [--agent heuristic] [--search fsearch:worlds=16]
                  [--rules standard] [--players 2] [--seed 0]

Every seat plays the ``--agent`` spec (the ``--search`` spec itself: the search plays); at each
decision the search values every legal move. docs/datasets.md documents the columns. Bad input
(an unknown agent or preset, rules the search cannot label, a folder that does not exist, a games
count out of range) is one line on stderr and exit status 2, before any game is played.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.dataset import MAX_GAMES
from scopa_app.args import add_game_arguments, seed_arg

EXIT_BAD_INPUT = 2


def add_dataset_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``scopa dataset`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "dataset",
        help="write positions labelled by the compiled search to a Parquet file",
        description="Play seeded games and write one row per decision: the observation, the legal moves with "
        "their features and the compiled search's value of each, the move played and the hand's outcome for "
        'the mover\'s side. Needs pyarrow (pip install -e ".[data]"); docs/datasets.md documents the columns.',
    )
    p.add_argument("--games", type=int, required=True, help=f"games to play (1 to {MAX_GAMES:,})")
    p.add_argument("--out", required=True, metavar="PATH", help="the Parquet file to write")
    p.add_argument("--agent", default="heuristic", help="agent spec of every seat (default heuristic)")
    p.add_argument(
        "--search", default="fsearch:worlds=16", help="the labelling fsearch spec (default fsearch:worlds=16)"
    )
    add_game_arguments(p)
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the deals, agents and search (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_dataset)
    return p


def _fail(message: str) -> int:
    print(f"scopa dataset: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_dataset(args: argparse.Namespace) -> int:
    """Run ``scopa dataset``; returns the exit status."""
    from tqdm import tqdm

    from agents.dataset import check_options, require_pyarrow, write_dataset

    if not 1 <= args.games <= MAX_GAMES:
        return _fail(f"--games must be in [1, {MAX_GAMES:,}], got {args.games}")
    out = Path(args.out)
    if out.is_dir():
        return _fail(f"--out {out} is a folder; give a file name such as {out / 'positions.parquet'}")
    if not out.parent.is_dir():
        return _fail(f"--out {out}: folder {out.parent} does not exist")
    try:  # every option is checked before the bar shows and any game is played
        check_options(args.games, args.agent, args.search, args.rules, args.players, args.seed)
        require_pyarrow()
    except (ValueError, ImportError) as exc:
        return _fail(str(exc))
    bar = tqdm(total=args.games, unit="game", desc="dataset", disable=args.no_progress, dynamic_ncols=True)
    rows = 0

    def on_game(n: int) -> None:
        nonlocal rows
        rows += n
        bar.update(1)
        bar.set_postfix(rows=rows)

    try:
        path = write_dataset(
            out,
            args.games,
            agent=args.agent,
            search=args.search,
            rules=args.rules,
            players=args.players,
            seed=args.seed,
            on_game=on_game,
        )
    except (ValueError, ImportError) as exc:
        bar.close()
        return _fail(str(exc))
    bar.close()
    print(f"wrote {rows:,} positions of {args.games:,} games to {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0
