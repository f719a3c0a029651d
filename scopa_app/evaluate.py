"""``scopa eval`` and ``scopa tournament``: the subcommands :mod:`scopa_app.cli` adds.

::

    scopa eval A B [--games N] [--rules NAME] [--players K] [--workers W] [--ray [ADDRESS]] [--seed S]
                   [--json PATH] [--csv PATH]
    scopa tournament A B C ... [--games N] [--rules NAME] [--players K] [--workers W] [--ray [ADDRESS]]
                               [--seed S] [--json PATH] [--csv PATH] [--png PATH]

Agents are specs for :func:`agents.registry.make_agent` (``random``, ``greedy``,
``heuristic``, ``search``, ``search:ply_budget=4000``, checkpoints such as ``ppo:PATH``, a user's
class ``module:Class``).
Bad input (unknown agent or preset, missing or wrong checkpoint, an agent trained for
another game) ends with one line on stderr and exit status 2, before any game; Ctrl-C
prints what finished. A run in which an agent forfeits games (an illegal move, an
exception) prints no table: it ends with the count of forfeits and the first ones on
stderr, and exit status 1.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

from agents.matches import Match, game_agent, run_deals
from agents.plots import plot_ratings
from agents.ray_deals import ray_cluster
from agents.report import render_report, render_tournament, write_csv, write_json
from agents.stats import summarize
from agents.tournament import tournament
from scopa_app.args import add_game_arguments, add_ray_argument, game_setup
from scopa_env.engine.rules import get_rules

EXIT_BAD_INPUT = 2
EXIT_FORFEITS = 1
"""An agent forfeited games: the numbers are not a result."""
SHOWN_FORFEITS = 3
"""Forfeits printed in full on stderr (the count covers them all)."""


def agents_help() -> str:
    from scopa_app.play import agents_help as help_text

    return help_text()


def _common(p: argparse.ArgumentParser, games_default: int) -> None:
    p.add_argument(
        "--games",
        type=int,
        default=games_default,
        help=f"duplicate deals; each is played in every seat rotation (default {games_default})",
    )
    add_game_arguments(p)
    p.add_argument("--workers", type=int, default=1, help="processes; results do not depend on it")
    add_ray_argument(p)
    p.add_argument("--seed", type=int, default=0, help="master seed of the deals and agents")
    p.add_argument("--json", metavar="PATH", help="write the full report as JSON")
    p.add_argument("--csv", metavar="PATH", help="write the table as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_eval_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``scopa eval`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "eval",
        help="play two agents on duplicate deals and report win rates and margins with CIs",
        description="Play two agents against each other on duplicate deals (every deal in every seat "
        "rotation, whole games) and report game win rates, hand-point margins and score categories with "
        "95% confidence intervals.",
    )
    p.add_argument("agents", nargs=2, metavar="AGENT", help=f"agent: {agents_help()}")
    _common(p, 1000)
    p.add_argument(
        "--fast",
        action="store_true",
        help="play on the compiled core (hundreds of times faster; --workers is ignored): a ppo:/dqn: "
        "checkpoint against random, greedy or heuristic (2 players); or any two of dmc:/zoo:/netsearch: "
        "agents, compiled baselines and fsearch specs (any player count)",
    )
    p.set_defaults(func=run_eval)
    return p


def add_tournament_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``scopa tournament`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "tournament",
        help="play every pair of agents and fit Bradley-Terry (Elo-scale) ratings with CIs",
        description="Play every pair of agents on duplicate deals and fit Bradley-Terry ratings on the Elo "
        "scale, with 95% confidence intervals.",
    )
    p.add_argument("agents", nargs="+", metavar="AGENT", help=f"two or more agents: {agents_help()}")
    _common(p, 200)
    p.add_argument("--png", metavar="PATH", default="tournament.png", help="ratings chart (default tournament.png)")
    p.set_defaults(func=run_tournament)
    return p


def _check_inputs(args: argparse.Namespace) -> str | None:
    """Resolve the rules and build each agent once; return a one-line error or ``None``."""
    try:
        game_setup(args)  # --rules deal for --players
        if args.games < 1:
            raise ValueError(f"--games must be at least 1, got {args.games}")
        if args.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {args.workers}")
        for spec in args.agents:
            game_agent(spec, args.players, args.rules)
    except (ValueError, OSError, ImportError) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def _output_problem(args: argparse.Namespace) -> str | None:
    """A one-line error when ``--json``/``--csv``/``--png`` name a file in a folder that does not exist
    (checked before any game, not after the whole evaluation), else ``None``."""
    for option in ("json", "csv", "png"):
        path = getattr(args, option, None)
        if not path:
            continue
        target = Path(path)
        if target.is_dir():
            return f"--{option} {path}: that is a folder; give a file name"
        if not target.parent.is_dir():
            return f"--{option} {path}: the folder {str(target.parent)!r} does not exist (create it first)"
    return None


def _fail(command: str, message: str) -> int:
    print(f"scopa {command}: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_eval(args: argparse.Namespace) -> int:
    """Run ``scopa eval``; returns the exit status."""
    problem = _output_problem(args)
    if problem:
        return _fail("eval", problem)
    error = _check_inputs(args)
    if error:
        return _fail("eval", error)
    if getattr(args, "fast", False):
        if args.ray is not None:
            return _fail("eval", "--fast plays on this machine's compiled core: drop --ray or --fast")
        return _run_fast_eval(args)
    match = Match(tuple(args.agents), args.players, args.rules, args.seed)
    with ray_cluster(args.ray, args.workers) as cluster:
        run = run_deals(match, args.games, args.workers, progress=not args.no_progress, cluster=cluster)
    if not run.deals:
        print("interrupted before any deal finished", file=sys.stderr)
        return 130
    report = summarize(match, run)
    if report["forfeits"]:
        return _fail_forfeits("eval", report["forfeits"], report["games"])
    _emit(report, args)
    return 130 if run.interrupted else 0


def _fail_forfeits(command: str, forfeits: list[dict], games: int) -> int:
    """Say how many games were forfeited, by whom, and the first few; no table is printed."""
    by_agent: dict[str, int] = {}
    for f in forfeits:
        by_agent[f["agent"]] = by_agent.get(f["agent"], 0) + 1
    who = ", ".join(f"{agent} {n}" for agent, n in by_agent.items())
    print(
        f"scopa {command}: error: {len(forfeits)} of {games} games were forfeited ({who}); "
        "an agent failed, so no results are reported",
        file=sys.stderr,
    )
    for f in forfeits[:SHOWN_FORFEITS]:
        print(f"  deal {f['deal']} rotation {f['rotation']}: {f['agent']} {f['error']} ({f['state']})", file=sys.stderr)
    if len(forfeits) > SHOWN_FORFEITS:
        print(f"  ... and {len(forfeits) - SHOWN_FORFEITS} more", file=sys.stderr)
    return EXIT_FORFEITS


def _emit(report: dict, args: argparse.Namespace) -> None:
    """Print the report's tables and write ``--json`` / ``--csv`` where asked."""
    render_report(report)
    if args.json:
        write_json(report, args.json)
    if args.csv:
        write_csv(report, args.csv)


def _run_fast_eval(args: argparse.Namespace) -> int:
    """``scopa eval --fast``: a checkpoint against a compiled baseline, on the compiled core."""
    from agents.compiled import COMPILED_BASELINES
    from train.fast_eval import FAST_CHECKPOINTS, evaluate_fast, zoo_algo
    from train.sb3.policy_agent import load_batch_policy

    learner, opponent = args.agents
    prefix, _, path = learner.partition(":")
    sb3_zoo = prefix == "zoo" and bool(path) and zoo_algo(path) in ("ppo", "dqn")  # a select-mode policy
    if not sb3_zoo and ((prefix in FAST_CHECKPOINTS and path) or prefix in (*COMPILED_BASELINES, "fsearch")):
        return _run_fast_sides_eval(args)
    if not sb3_zoo and (prefix not in ("ppo", "dqn") or not path):
        return _fail(
            "eval",
            f"--fast needs a ppo:, dqn:, dmc:, zoo: or netsearch: agent, a compiled baseline or an fsearch spec first, got {learner!r}",
        )
    if opponent not in COMPILED_BASELINES:
        return _fail(
            "eval",
            f"--fast plays a PPO or DQN agent ({learner}) against the compiled {', '.join(COMPILED_BASELINES)} "
            f"only, not {opponent!r}: drop --fast to play it on the Python harness",
        )
    if args.players != 2:
        return _fail("eval", f"--fast plays 2 players, got --players {args.players}")
    if sb3_zoo:
        from train.zoo import load_zoo_batch_policy

        policy, meta = load_zoo_batch_policy(path)
    else:
        policy, meta = load_batch_policy(path)
    if get_rules(meta["rules"]) != args.rules or meta["num_players"] != 2:
        return _fail(
            "eval",
            f"{learner} was trained for {meta['num_players']} players under {meta['rules']!r}, "
            f"not 2 under {args.rules.name!r} (use --rules)",
        )
    try:
        report = evaluate_fast(
            policy, opponent, args.games, args.rules, args.seed, meta["action_mode"], progress=not args.no_progress
        )
    except NotImplementedError as exc:
        return _fail("eval", str(exc))
    report["agents"][0]["agent"] = report["config"]["agents"][0] = learner
    _emit(report, args)
    return 0


def _run_fast_sides_eval(args: argparse.Namespace) -> int:
    """``scopa eval --fast`` with :func:`train.fast_eval.evaluate_fast_sides`: each side a ``dmc:``,
    ``zoo:`` or ``netsearch:`` agent, a compiled baseline or an ``fsearch`` spec."""
    learner, opponent = args.agents
    if learner == opponent:
        return _fail("eval", f"both agents are {learner!r}: nothing to compare")
    players = []
    for spec in (learner, opponent):
        try:
            players.append(_fast_player(spec, args))
        except (ValueError, FileNotFoundError) as exc:
            return _fail("eval", str(exc))
    from train.fast_eval import evaluate_fast_sides

    try:
        report = evaluate_fast_sides(
            players[0], players[1], args.games, args.players, args.rules, args.seed, progress=not args.no_progress
        )
    except NotImplementedError as exc:
        return _fail("eval", str(exc))
    for k, spec in enumerate(args.agents):
        report["agents"][k]["agent"] = report["config"]["agents"][k] = spec
    _emit(report, args)
    return 0


def _fast_player(spec: str, args: argparse.Namespace):
    """A side of the compiled evaluation: the spec itself (a compiled baseline or an fsearch spec) or
    a batch policy (a checkpoint agent) of this game; ``ValueError`` names what is wrong."""
    from train.fast_eval import GameMismatch, fast_side

    try:
        return fast_side(spec, args.seed, args.rules, args.players)[0]
    except GameMismatch as exc:
        raise ValueError(f"{exc} (use --players and --rules)") from None


def run_tournament(args: argparse.Namespace) -> int:
    """Run ``scopa tournament``; returns the exit status."""
    problem = _output_problem(args)
    if problem:
        return _fail("tournament", problem)
    if len(args.agents) < 2 or len(set(args.agents)) != len(args.agents):
        return _fail("tournament", f"needs at least two distinct agents, got {args.agents}")
    error = _check_inputs(args)
    if error:
        return _fail("tournament", error)
    with ray_cluster(args.ray, args.workers) as cluster:
        result = tournament(
            args.agents,
            args.games,
            args.rules,
            args.players,
            args.workers,
            args.seed,
            progress=not args.no_progress,
            cluster=cluster,
        )
    if not any(p["deals"] for p in result["pairs"]):
        print("interrupted before any deal finished", file=sys.stderr)
        return 130
    forfeits = [f for p in result["pairs"] for f in p["forfeits"]]
    if forfeits:
        return _fail_forfeits("tournament", forfeits, sum(p["games"] for p in result["pairs"]))
    render_tournament(result)
    if args.json:
        write_json(result, args.json)
    if args.csv:
        write_ratings_csv(result, args.csv)
    if args.png:
        plot_ratings(result, args.png)
        print(f"ratings chart written to {args.png}")
    return 130 if result["interrupted"] else 0


def write_ratings_csv(result: dict, path: str) -> None:
    """One row per agent: rating, CI, wins and games."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["agent", "elo", "lo", "hi", "wins", "games"])
        writer.writeheader()
        for r in result["ratings"]:
            writer.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})


__all__ = ["add_eval_parser", "add_tournament_parser", "run_eval", "run_tournament", "write_csv"]
