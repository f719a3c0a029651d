"""OpenSpiel's ISMCTS against the kit's baselines: duplicate-deal margins and time per move, one plot.

The bot is an agent by name (``openspiel:ismcts:...``, :mod:`agents.openspiel_bot`) and plays
through the kit's evaluation harness (:mod:`agents.evaluate`): every deal is played in both
seat rotations, margins are hand points per hand with deal-clustered 95% intervals. Each
agent is wrapped to time its decisions in CPU seconds of this process (``time.process_time``),
so other load on the machine does not inflate them; moves with one legal choice count too.

Run (the numbers and the plot in docs/openspiel.md)::

    python benchmarks/openspiel_ismcts.py --games 100 --json ismcts.json --png docs/img/openspiel_ismcts.png

``--json`` is rewritten after each opponent; ``--plot A.json B.json ...`` draws the plot from saved
runs (e.g. one process per opponent) without playing.
"""

from __future__ import annotations

import argparse
import json
import time

from agents.base import Agent
from agents.matches import Match, RunResult, play_game
from agents.registry import make_agent
from agents.report import render_report
from agents.stats import summarize
from scopa_env.engine.game import PlayerView, sides_for
from scopa_env.engine.rules import Move, get_rules

DEFAULT_BOT = "openspiel:ismcts:simulations=100"


class Timed(Agent):
    """An agent whose decisions are timed (CPU seconds)."""

    def __init__(self, inner: Agent) -> None:
        super().__init__(0)
        self.inner = inner
        self.seconds: list[float] = []

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, view: PlayerView) -> Move:
        start = time.process_time()
        move = self.inner.act(view)
        self.seconds.append(time.process_time() - start)
        return move


def evaluate_pair(bot: str, opponent: str, games: int, rules: str, seed: int) -> dict:
    """``games`` duplicate deals, each in both rotations; the harness report plus CPU time per move."""
    match = Match((bot, opponent), 2, get_rules(rules), seed)
    timed = [Timed(make_agent(spec)) for spec in match.agents]
    side_of = sides_for(match.num_players)
    start = time.perf_counter()
    deals = []
    for deal in range(games):
        records = []
        for rotation, lineup in enumerate(match.lineups()):
            seats = [timed[lineup[side_of[s]]] for s in range(match.num_players)]
            records.append(play_game(match, deal, rotation, seats))
        deals.append(records)
    report = summarize(match, RunResult(deals=deals, requested=games, wall_seconds=time.perf_counter() - start))
    for row, agent in zip(report["agents"], timed):
        row["moves"] = len(agent.seconds)
        row["cpu_seconds_per_move"] = sum(agent.seconds) / max(1, len(agent.seconds))
        row["cpu_seconds_per_move_max"] = max(agent.seconds, default=0.0)
    return report


def _ms(seconds: float) -> str:
    ms = 1000 * seconds
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def plot(reports: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.8, 3.6))
    labels, means, errs = [], [], []
    for report in reports:
        row, other = report["agents"]
        m = row["margin_per_hand"]
        labels.append(
            f"vs {other['agent']}\n{_ms(row['cpu_seconds_per_move'])} vs {_ms(other['cpu_seconds_per_move'])} CPU/move"
        )
        means.append(m["mean"])
        errs.append([[m["mean"] - m["lo"]], [m["hi"] - m["mean"]]])
    for i, (mean, err) in enumerate(zip(means, errs)):
        ax.errorbar(mean, i, xerr=err, fmt="o", capsize=4, color="tab:blue")
    ax.axvline(0, color="gray", lw=1)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    cfg = reports[0]["config"]
    ax.set_xlabel("hand-point margin per hand, 95% CI (deal-clustered)")
    ax.set_title(f"{cfg['agents'][0]}, {reports[0]['deals']} duplicate deals each, rules {cfg['rules']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot", default=DEFAULT_BOT, help=f"OpenSpiel bot spec (default {DEFAULT_BOT})")
    parser.add_argument("--opponents", default="heuristic,search", help="comma-separated agent specs")
    parser.add_argument("--games", type=int, default=100, help="duplicate deals per opponent (two games each)")
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--png", metavar="PATH")
    parser.add_argument("--plot", nargs="+", metavar="JSON", help="only draw --png from these saved runs")
    args = parser.parse_args()
    if args.plot:
        if not args.png:
            parser.error("--plot needs --png")
        reports = [r for path in args.plot for r in json.load(open(path))]
        plot(reports, args.png)
        return
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    reports = []
    for opponent in filter(None, (o.strip() for o in args.opponents.split(","))):
        report = evaluate_pair(args.bot, opponent, args.games, args.rules, args.seed)
        render_report(report)
        for row in report["agents"]:
            print(
                f"  {row['agent']}: {row['moves']} moves, {row['cpu_seconds_per_move'] * 1000:.1f} ms CPU per move "
                f"(max {row['cpu_seconds_per_move_max'] * 1000:.0f} ms)"
            )
        reports.append(report)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(reports, fh, indent=2)
    if args.png:
        plot(reports, args.png)


if __name__ == "__main__":
    main()
