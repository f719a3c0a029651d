"""Evaluation with duplicate deals: skill separated from the luck of the cards.

A *deal* is a seed: it fixes every shuffle of a whole game (``Game(seed=deal_seed)``
shuffles identically for identical seeds). Each deal is played once per *rotation* of
the agents over the sides, so every agent plays every seat of the same cards::

    2 sides, agents A B:   rotation 0: side 0 = A, side 1 = B;  rotation 1: side 0 = B, side 1 = A
    3 sides, agents A B:   A B A,  A A B,  B A A      (the lineup A B A rotated)
    teams (4 or 6 seats):  an agent plays every seat of its side (seat s is on side s % 2)

Results are clustered by deal: the confidence intervals treat a deal (all its rotations)
as one sample, which removes most of the card luck. The *plain* intervals treat every
game as an independent sample, as a tally of single games would; both are reported.

Seeds: deal ``i`` uses ``SeedSequence(seed, spawn_key=(i,))`` for the shuffles and
``SeedSequence(seed, spawn_key=(i, rotation, seat))`` for the agent at ``seat``, so a run
gives the same numbers for any number of workers.

An agent that raises or returns an illegal move forfeits that game: the game stops, the
offending side is counted as losing it (with two sides the other side wins) and the
position is recorded in ``forfeits``. Hands finished before still count.
"""

from __future__ import annotations

import csv
import math
import os
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field

import numpy as np

from agents.base import Agent
from agents.registry import make_agent
from scopa_env.engine.cards import format_cards
from scopa_env.engine.game import Game, HandResult, sides_for
from scopa_env.engine.rules import Move, Rules, get_rules

Z95 = 1.959963984540054
"""Normal quantile of a two-sided 95% interval."""

MAX_HANDS = 200
"""A game still undecided after this many hands is stopped with no winner (a safety net)."""

CATEGORY_COUNTS = {"cards": "num_cards", "coins": "num_coins", "primiera": "primiera_value"}
"""Majority categories and the raw count deciding each; a tie at the top scores nobody."""

KNOWN_SCORE_KEYS = {
    "cards",
    "coins",
    "settebello",
    "primiera",
    "scope",
    "total",
    "num_scope",
    *CATEGORY_COUNTS.values(),
}
"""Keys of a hand score reported in their own columns; any other number a variant adds is an extra."""


@dataclass(frozen=True)
class Match:
    """What to play: agents, rules, player count and the master seed."""

    agents: tuple[str, ...]
    """Agent specs (see :func:`agents.registry.make_agent`); at least two."""
    num_players: int = 2
    """2, 3, 4 or 6 seats."""
    rules: Rules = field(default_factory=get_rules)
    """The rules in force."""
    seed: int = 0
    """Master seed of the deals and the agents."""

    def __post_init__(self) -> None:
        if len(self.agents) < 2:
            raise ValueError(f"a match needs at least two agents, got {list(self.agents)}")
        object.__setattr__(self, "rules", get_rules(self.rules))
        self.rules.check_players(self.num_players)
        if len(self.agents) > self.num_sides:
            raise ValueError(
                f"{len(self.agents)} agents cannot share {self.num_sides} sides; "
                f"play them in pairs with a tournament instead"
            )

    @property
    def num_sides(self) -> int:
        return max(sides_for(self.num_players, self.rules)) + 1

    def lineups(self) -> list[tuple[int, ...]]:
        """Per rotation, the agent index playing each side."""
        n = self.num_sides
        base = [i % len(self.agents) for i in range(n)]
        return [tuple(base[(s - r) % n] for s in range(n)) for r in range(n)]


def deal_seed(seed: int, deal: int) -> int:
    """Shuffle seed of deal number ``deal``."""
    return int(np.random.SeedSequence(seed, spawn_key=(deal,)).generate_state(1)[0])


def agent_seed(seed: int, deal: int, rotation: int, seat: int) -> int:
    """Seed of the agent at ``seat`` in one rotation of one deal."""
    return int(np.random.SeedSequence(seed, spawn_key=(deal, rotation, seat)).generate_state(1)[0])


def play_game(match: Match, deal: int, rotation: int, agents: Sequence[Agent]) -> dict:
    """Play deal ``deal`` in rotation ``rotation``; ``agents[i]`` is the instance for seat ``i``.

    Returns a record: ``deal``, ``rotation``, ``lineup`` (agent index per side), ``winner``
    (side or ``None``), ``hands`` (per hand, the points of each side, :func:`hand_rows`),
    ``scores`` (the game score per side at the end), ``forfeit``
    (``None`` or what went wrong), ``moves`` and ``seconds`` (CPU time of this process, so
    other load on the machine does not inflate it).
    """
    start = time.process_time()
    lineup = match.lineups()[rotation]
    game = Game(match.num_players, match.rules, seed=deal_seed(match.seed, deal), auto_next_hand=False)
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(match.seed, deal, rotation, seat))
    hands: list[list[dict]] = []
    forfeit = None
    moves = 0
    while forfeit is None and len(hands) < MAX_HANDS:
        while not game.hand_over:
            seat = game.current
            forfeit = _checked_move(game, agents[seat], match, lineup)
            if forfeit is not None:
                break
            moves += 1
        if forfeit is not None:
            break
        hands.append(hand_rows(game.hand_result))
        if game.winner is not None:
            break
        game.next_hand()
    winner = game.winner
    if forfeit is not None:
        winner = 1 - forfeit["side"] if match.num_sides == 2 else None
    return {
        "deal": deal,
        "rotation": rotation,
        "lineup": list(lineup),
        "winner": winner,
        "hands": hands,
        "scores": list(game.scores),
        "forfeit": forfeit,
        "moves": moves,
        "seconds": time.process_time() - start,
    }


def _checked_move(game: Game, agent: Agent, match: Match, lineup: tuple[int, ...]) -> dict | None:
    """Ask the agent to move and play it; return a forfeit record if it fails."""
    seat = game.current
    side = game.side_of[seat]
    try:
        move = agent.act(game.view(seat))
        error = None
        if not isinstance(move, Move):
            error = f"returned {move!r}, not a Move"
        elif (move.card, move.mask) not in game.legal_pairs():
            error = f"illegal move: {game.illegal_message(move)}"
    except Exception as exc:  # an agent bug must not stop the evaluation
        move, error = None, f"raised {type(exc).__name__}: {exc}"
    if error is None:
        game.play_pair(move.card, move.mask)
        return None
    deck = game.rules.ranks_per_suit
    state = (
        f"hand {game.hand_number + 1}, seat {seat} (side {side}) to play; hand {format_cards(game.hands[seat], deck)}; "
        f"table {format_cards(game.table, deck) or 'empty'}; stock {len(game.stock)}; scores {game.scores}"
    )
    return {"seat": seat, "side": side, "agent": match.agents[lineup[side]], "error": error, "state": state}


def _numeric(row: dict) -> dict:
    return {k: v for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def hand_rows(result: HandResult) -> list[dict]:
    """Per side, every scoring item of a finished hand, with ``total`` their sum.

    The numbers of ``result.hand_score`` plus the declarations the side scored during the
    hand (``result.declared``: bazzica, bazzicotto, Cirulla's hand bonuses), which the game
    adds to the score when they are made and so are outside ``hand_score``'s ``total``.
    """
    rows = [_numeric(row) for row in result.hand_score]
    for row, declared in zip(rows, result.declared):
        for name, points in declared.items():
            row[name] = row.get(name, 0) + points
            row["total"] += points
    return rows


# --- running many deals --------------------------------------------------------------

_WORKER_AGENTS: dict = {}


def _seat_agents(match: Match) -> list[list[Agent]]:
    """Per rotation, per seat, an agent instance (cached per process and match)."""
    key = (match.agents, match.num_players, match.rules)
    cached = _WORKER_AGENTS.get(key)
    if cached is None:
        side_of = sides_for(match.num_players, match.rules)
        pool = [[make_agent(spec) for _ in range(match.num_players)] for spec in match.agents]
        cached = [[pool[lineup[side_of[s]]][s] for s in range(match.num_players)] for lineup in match.lineups()]
        _WORKER_AGENTS.clear()
        _WORKER_AGENTS[key] = cached
    return cached


def play_deals(match: Match, deals: Sequence[int]) -> list[list[dict]]:
    """Play every rotation of each deal; one list of game records per deal."""
    seat_agents = _seat_agents(match)
    return [[play_game(match, d, r, seat_agents[r]) for r in range(match.num_sides)] for d in deals]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass
class RunResult:
    """Finished deals (in deal order) and whether the run was interrupted."""

    deals: list[list[dict]]
    requested: int
    interrupted: bool = False
    wall_seconds: float = 0.0


def run_deals(
    match: Match,
    num_deals: int,
    workers: int = 1,
    progress: bool = True,
    first_deal: int = 0,
    desc: str | None = None,
    time_limit: float | None = None,
) -> RunResult:
    """Play deals ``first_deal .. first_deal + num_deals - 1`` across ``workers`` processes.

    Ctrl-C, or ``time_limit`` seconds passing, stops the run; the deals finished so far
    are returned with ``interrupted=True``.
    """
    if num_deals < 1:
        raise ValueError(f"the number of games must be at least 1, got {num_deals}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    for spec in match.agents:
        make_agent(spec)  # fail early, in this process, on a bad name or checkpoint
    from tqdm import tqdm

    start = time.perf_counter()
    deals = list(range(first_deal, first_deal + num_deals))
    done: dict[int, list[dict]] = {}
    bar = tqdm(total=num_deals, unit="deal", desc=desc, disable=not progress, dynamic_ncols=True, leave=False)
    interrupted = False
    try:
        if workers == 1:
            for d in deals:
                if time_limit is not None and time.perf_counter() - start > time_limit:
                    raise KeyboardInterrupt
                done[d] = play_deals(match, [d])[0]
                bar.update(1)
        else:
            chunk = max(1, min(8, num_deals // (workers * 8)))
            chunks = [deals[i : i + chunk] for i in range(0, num_deals, chunk)]
            pending: dict = {}

            def collect(fut) -> None:
                chunk_deals = pending.pop(fut)
                for d, records in zip(chunk_deals, fut.result()):
                    done[d] = records
                bar.update(len(chunk_deals))

            try:
                with ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint) as pool:
                    pending.update({pool.submit(play_deals, match, c): c for c in chunks})
                    try:
                        while pending:
                            if time_limit is not None and time.perf_counter() - start > time_limit:
                                raise KeyboardInterrupt
                            finished, _ = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                            for fut in finished:
                                collect(fut)
                    except KeyboardInterrupt:
                        for fut in pending:
                            fut.cancel()
                        raise
            finally:
                # Chunks that were running when the run stopped finish during the pool's shutdown: keep them.
                for fut in [f for f in pending if f.done() and not f.cancelled() and f.exception() is None]:
                    collect(fut)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    return RunResult(
        deals=[done[d] for d in sorted(done)],
        requested=num_deals,
        interrupted=interrupted,
        wall_seconds=time.perf_counter() - start,
    )


# --- statistics ----------------------------------------------------------------------


def ratio_ci(num: Sequence[float], den: Sequence[float], z: float = Z95) -> dict:
    """Mean ``sum(num) / sum(den)`` with a cluster-robust normal interval (one cluster per entry).

    With ``den`` all ones this is the usual mean and ``z * s / sqrt(n)`` interval. With
    fewer than two clusters, or no spread, the interval collapses to the mean.
    """
    x = np.asarray(num, dtype=float)
    n_ = np.asarray(den, dtype=float)
    total = n_.sum()
    if total <= 0:
        return {"mean": math.nan, "lo": math.nan, "hi": math.nan, "n": int(len(x))}
    mean = float(x.sum() / total)
    k = len(x)
    if k < 2:
        return {"mean": mean, "lo": math.nan, "hi": math.nan, "n": k}
    resid = x - mean * n_
    se = math.sqrt(k / (k - 1) * float((resid**2).sum())) / total
    return {"mean": mean, "lo": mean - z * se, "hi": mean + z * se, "n": k}


def _clip01(ci: dict) -> dict:
    """A proportion's interval clipped to [0, 1]."""
    if not math.isnan(ci["lo"]):
        ci["lo"], ci["hi"] = max(0.0, ci["lo"]), min(1.0, ci["hi"])
    return ci


def wilson_ci(wins: float, games: float, z: float = Z95) -> dict:
    """Wilson score interval of a binomial proportion."""
    if games <= 0:
        return {"mean": math.nan, "lo": math.nan, "hi": math.nan, "n": 0}
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    return {"mean": p, "lo": centre - half, "hi": centre + half, "n": int(games)}


def hand_outcomes(hand: list[dict], side: int) -> dict:
    """Per category, ``"won"``, ``"tied"`` or ``"lost"`` for ``side`` in one hand's score."""
    out = {}
    for cat, raw in CATEGORY_COUNTS.items():
        if hand[side][cat] > 0:
            out[cat] = "won"
        elif hand[side][raw] == max(row[raw] for row in hand):
            out[cat] = "tied"  # nobody scored it and this side was not beaten
        else:
            out[cat] = "lost"
    out["settebello"] = "won" if hand[side]["settebello"] > 0 else "lost"
    return out


def hand_margin(hand: list[dict], side: int) -> float:
    """Hand points of ``side`` minus the mean of the other sides."""
    others = [row["total"] for s, row in enumerate(hand) if s != side]
    return hand[side]["total"] - sum(others) / len(others)


def summarize(match: Match, run: RunResult) -> dict:
    """The report of a run: per agent win rates, margins and category rates, with CIs."""
    num_agents = len(match.agents)
    per_deal = {
        k: np.zeros((len(run.deals), num_agents)) for k in ("wins", "side_games", "margin", "side_hands", "points")
    }
    per_game: dict[str, list[list[float]]] = {k: [[] for _ in range(num_agents)] for k in ("wins", "margin", "hands")}
    categories = [
        {c: {"won": 0, "tied": 0, "lost": 0} for c in (*CATEGORY_COUNTS, "settebello")} for _ in range(num_agents)
    ]
    scope = np.zeros(num_agents)
    extras: list[dict[str, float]] = [{} for _ in range(num_agents)]
    total_hands = total_games = 0
    game_seconds = 0.0
    forfeits = []
    for i, records in enumerate(run.deals):
        for rec in records:
            total_games += 1
            total_hands += len(rec["hands"])
            game_seconds += rec["seconds"]
            if rec["forfeit"] is not None:
                forfeits.append({"deal": rec["deal"], "rotation": rec["rotation"], **rec["forfeit"]})
            for side, a in enumerate(rec["lineup"]):
                won = float(rec["winner"] == side)
                margin = sum(hand_margin(h, side) for h in rec["hands"])
                per_deal["wins"][i, a] += won
                per_deal["side_games"][i, a] += 1
                per_deal["margin"][i, a] += margin
                per_deal["side_hands"][i, a] += len(rec["hands"])
                per_deal["points"][i, a] += sum(h[side]["total"] for h in rec["hands"])
                per_game["wins"][a].append(won)
                per_game["margin"][a].append(margin)
                per_game["hands"][a].append(len(rec["hands"]))
                for h in rec["hands"]:
                    for cat, outcome in hand_outcomes(h, side).items():
                        categories[a][cat][outcome] += 1
                    scope[a] += h[side]["num_scope"]
                    for key, value in h[side].items():
                        if key not in KNOWN_SCORE_KEYS:
                            extras[a][key] = extras[a].get(key, 0.0) + value
    agents = []
    for a, spec in enumerate(match.agents):
        hands = per_deal["side_hands"][:, a].sum()
        games = per_deal["side_games"][:, a].sum()
        row = {
            "agent": spec,
            "games": int(games),
            "wins": int(per_deal["wins"][:, a].sum()),
            "hands": int(hands),
            "win_rate": _clip01(ratio_ci(per_deal["wins"][:, a], per_deal["side_games"][:, a])),
            "win_rate_plain": wilson_ci(per_deal["wins"][:, a].sum(), games),
            "margin_per_hand": ratio_ci(per_deal["margin"][:, a], per_deal["side_hands"][:, a]),
            "margin_per_hand_plain": ratio_ci(per_game["margin"][a], per_game["hands"][a]),
            "points_per_hand": float(per_deal["points"][:, a].sum() / hands) if hands else math.nan,
            "scope_per_hand": float(scope[a] / hands) if hands else math.nan,
            "categories": {
                cat: {k: (v / hands if hands else math.nan) for k, v in counts.items()}
                for cat, counts in categories[a].items()
            },
            "extras_per_hand": {k: v / hands for k, v in sorted(extras[a].items())} if hands else {},
            "forfeits": sum(1 for f in forfeits if f["agent"] == spec),
        }
        agents.append(row)
    return {
        "agents": agents,
        "config": {
            "agents": list(match.agents),
            "rules": match.rules.name,
            "players": match.num_players,
            "seed": match.seed,
            "deals_requested": run.requested,
            "rotations": match.num_sides,
        },
        "deals": len(run.deals),
        "games": total_games,
        "hands": total_hands,
        "interrupted": run.interrupted,
        "wall_seconds": run.wall_seconds,
        "game_seconds": game_seconds,
        "seconds_per_1000_hands": 1000 * game_seconds / total_hands if total_hands else math.nan,
        "forfeits": forfeits,
    }


def evaluate(
    agents: Sequence[str],
    games: int = 100,
    rules: str | Rules | None = None,
    players: int = 2,
    workers: int = 1,
    seed: int = 0,
    progress: bool = False,
) -> dict:
    """Play ``games`` duplicate deals (each in every rotation) and return the report dict."""
    match = Match(tuple(agents), players, get_rules(rules), seed)
    return summarize(match, run_deals(match, games, workers, progress))


# --- output ----------------------------------------------------------------------


def _fmt_ci(ci: dict, pct: bool = False) -> str:
    """``+0.412 [+0.301, +0.523]`` (or ``54.1% [52.0, 56.2]`` with ``pct``)."""
    if math.isnan(ci["mean"]):
        return "-"
    if pct:
        mean, lo, hi = (100 * ci[k] for k in ("mean", "lo", "hi"))
        return f"{mean:.1f}%" if math.isnan(lo) else f"{mean:.1f}% [{lo:.1f}, {hi:.1f}]"
    if math.isnan(ci["lo"]):
        return f"{ci['mean']:+.3f}"
    return f"{ci['mean']:+.3f} [{ci['lo']:+.3f}, {ci['hi']:+.3f}]"


def report_rows(report: dict) -> list[dict]:
    """Flat rows (one per agent) for the terminal table and the CSV file."""
    rows = []
    for a in report["agents"]:
        row = {
            "agent": a["agent"],
            "games": a["games"],
            "hands": a["hands"],
            "win_rate": a["win_rate"]["mean"],
            "win_rate_lo": a["win_rate"]["lo"],
            "win_rate_hi": a["win_rate"]["hi"],
            "win_rate_plain_lo": a["win_rate_plain"]["lo"],
            "win_rate_plain_hi": a["win_rate_plain"]["hi"],
            "margin_per_hand": a["margin_per_hand"]["mean"],
            "margin_lo": a["margin_per_hand"]["lo"],
            "margin_hi": a["margin_per_hand"]["hi"],
            "margin_plain_lo": a["margin_per_hand_plain"]["lo"],
            "margin_plain_hi": a["margin_per_hand_plain"]["hi"],
            "points_per_hand": a["points_per_hand"],
            "scope_per_hand": a["scope_per_hand"],
        }
        for cat, outcome in a["categories"].items():
            for k, v in outcome.items():
                if cat == "settebello" and k == "tied":
                    continue
                row[f"{cat}_{k}"] = v
        for key, value in a["extras_per_hand"].items():
            row[f"extra_{key}"] = value
        row["forfeits"] = a["forfeits"]
        row["seconds_per_1000_hands"] = report["seconds_per_1000_hands"]
        rows.append(row)
    return rows


def write_csv(report: dict, path: str | os.PathLike) -> None:
    """One row per agent (the columns of :func:`report_rows`)."""
    rows = report_rows(report)
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def write_json(report: dict, path: str | os.PathLike) -> None:
    import json

    with open(path, "w") as fh:
        json.dump(report, fh, indent=2, default=_json_default)
        fh.write("\n")


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _console():
    """A rich console; wide when the output is a file or pipe so the tables stay on one line."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


def render_report(report: dict, console=None) -> None:
    """Print the report as a table with rich (or plain text when ``console`` is ``None`` and rich fails)."""
    from rich.table import Table

    console = console or _console()
    cfg = report["config"]
    title = (
        f"{' vs '.join(cfg['agents'])}: {report['deals']} duplicate deals x {cfg['rotations']} rotations "
        f"= {report['games']} games, {report['hands']} hands ({cfg['players']} players, rules {cfg['rules']}, "
        f"seed {cfg['seed']})"
    )
    table = Table(title=title, title_justify="left")
    for col in ("agent", "win rate [95% CI]", "plain CI", "margin/hand [95% CI]", "plain CI", "pts/hand", "scope/hand"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for a in report["agents"]:
        table.add_row(
            a["agent"],
            _fmt_ci(a["win_rate"], pct=True),
            _fmt_ci(a["win_rate_plain"], pct=True).split(" ", 1)[-1],
            _fmt_ci(a["margin_per_hand"]),
            _fmt_ci(a["margin_per_hand_plain"]).split(" ", 1)[-1],
            f"{a['points_per_hand']:.3f}",
            f"{a['scope_per_hand']:.3f}",
        )
    console.print(table)
    cats = Table(title="per hand: won / tied / lost", title_justify="left")
    cats.add_column("agent")
    names = list(report["agents"][0]["categories"]) if report["agents"] else []
    extra_keys = sorted({k for a in report["agents"] for k in a["extras_per_hand"]})
    for cat in names:
        cats.add_column(cat, justify="right")
    for key in extra_keys:
        cats.add_column(f"{key} pts", justify="right")
    for a in report["agents"]:
        cells = []
        for cat in names:
            c = a["categories"][cat]
            cells.append(
                f"{c['won']:.3f} / {c['lost']:.3f}"
                if cat == "settebello"
                else f"{c['won']:.3f} / {c['tied']:.3f} / {c['lost']:.3f}"
            )
        cells += [f"{a['extras_per_hand'].get(k, 0.0):.3f}" for k in extra_keys]
        cats.add_row(a["agent"], *cells)
    console.print(cats)
    console.print(
        f"{report['seconds_per_1000_hands']:.1f} CPU s per 1,000 hands (one process); wall {report['wall_seconds']:.1f} s"
    )
    for f in report["forfeits"][:10]:
        console.print(
            f"[red]forfeit[/red] deal {f['deal']} rotation {f['rotation']}: {f['agent']} {f['error']} ({f['state']})",
            markup=True,
            highlight=False,
        )
    if len(report["forfeits"]) > 10:
        console.print(f"... and {len(report['forfeits']) - 10} more forfeits (see the JSON)")
    if report["interrupted"]:
        console.print(
            f"[yellow]interrupted: {report['deals']} of {cfg['deals_requested']} deals finished[/yellow]", markup=True
        )


# --- tournaments ---------------------------------------------------------------------

ELO_PER_NATURAL_UNIT = 400 / math.log(10)
"""Bradley-Terry strengths in natural log units times this are Elo points."""


def bradley_terry(wins: np.ndarray, prior: float = 0.5, iters: int = 2000, tol: float = 1e-10) -> np.ndarray:
    """Log-strengths (mean zero) of the Bradley-Terry model by the MM algorithm (Hunter 2004).

    Args:
        wins: ``wins[i, j]`` games ``i`` won against ``j``.
        prior: pseudo-wins added both ways between every pair that met, so an undefeated
            agent still gets a finite rating.
    """
    w = np.asarray(wins, dtype=float).copy()
    k = len(w)
    met = (w + w.T) > 0
    w = w + prior * met
    games = w + w.T
    total_wins = w.sum(axis=1)
    p = np.ones(k)
    for _ in range(iters):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1), p)
        new = np.maximum(new, 1e-12)
        new /= math.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    theta = np.log(p)
    return theta - theta.mean()


def tournament(
    agents: Sequence[str],
    games: int = 100,
    rules: str | Rules | None = None,
    players: int = 2,
    workers: int = 1,
    seed: int = 0,
    progress: bool = False,
    bootstrap: int = 200,
    on_pair: Callable[[dict], None] | None = None,
) -> dict:
    """Play every pair of ``agents`` on the same duplicate deals and fit Bradley-Terry ratings.

    Ratings are in Elo points (mean zero) with 95% intervals from a bootstrap over deals.
    An interrupted run reports the pairs finished so far.
    """
    specs = list(agents)
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ValueError(f"a tournament needs at least two distinct agents, got {specs}")
    rules = get_rules(rules)
    k = len(specs)
    pairs = []
    per_deal_wins: dict[tuple[int, int], np.ndarray] = {}
    interrupted = False
    for i in range(k):
        for j in range(i + 1, k):
            if interrupted:
                break
            match = Match((specs[i], specs[j]), players, rules, seed)
            run = run_deals(match, games, workers, progress, desc=f"{specs[i]} vs {specs[j]}")
            report = summarize(match, run)
            pairs.append(report)
            if on_pair is not None:
                on_pair(report)
            # Per deal: wins of i and of j over all rotations.
            w = np.zeros((len(run.deals), 2))
            for d, records in enumerate(run.deals):
                for rec in records:
                    if rec["winner"] is not None:
                        w[d, rec["lineup"][rec["winner"]]] += 1
            per_deal_wins[(i, j)] = w
            interrupted = run.interrupted
    wins = np.zeros((k, k))
    for (i, j), w in per_deal_wins.items():
        wins[i, j] += w[:, 0].sum()
        wins[j, i] += w[:, 1].sum()
    theta = bradley_terry(wins)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(bootstrap):
        bw = np.zeros((k, k))
        for (i, j), w in per_deal_wins.items():
            if len(w) == 0:
                continue
            pick = w[rng.integers(len(w), size=len(w))]
            bw[i, j] += pick[:, 0].sum()
            bw[j, i] += pick[:, 1].sum()
        samples.append(bradley_terry(bw))
    samples_arr = np.array(samples) * ELO_PER_NATURAL_UNIT if samples else np.full((1, k), math.nan)
    ratings = []
    for a in range(k):
        played = bool(wins[a].sum() + wins[:, a].sum())
        ratings.append(
            {
                "agent": specs[a],
                "elo": float(theta[a] * ELO_PER_NATURAL_UNIT) if played else math.nan,
                "lo": float(np.percentile(samples_arr[:, a], 2.5)) if played else math.nan,
                "hi": float(np.percentile(samples_arr[:, a], 97.5)) if played else math.nan,
                "wins": int(wins[a].sum()),
                "games": int(wins[a].sum() + wins[:, a].sum()),
            }
        )
    ratings.sort(key=lambda r: -r["elo"] if not math.isnan(r["elo"]) else math.inf)
    return {
        "ratings": ratings,
        "wins": wins.astype(int).tolist(),
        "agents": specs,
        "pairs": pairs,
        "config": {"agents": specs, "rules": rules.name, "players": players, "seed": seed, "deals_per_pair": games},
        "interrupted": interrupted,
    }


def render_tournament(result: dict, console=None) -> None:
    """Print the ratings and the pair margins."""
    from rich.table import Table

    console = console or _console()
    table = Table(title="Bradley-Terry ratings (Elo scale, mean 0, 95% bootstrap CI over deals)", title_justify="left")
    for col in ("agent", "Elo", "95% CI", "wins / games"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for r in result["ratings"]:
        ci = "-" if math.isnan(r["lo"]) else f"[{r['lo']:+.0f}, {r['hi']:+.0f}]"
        elo = "-" if math.isnan(r["elo"]) else f"{r['elo']:+.0f}"
        table.add_row(r["agent"], elo, ci, f"{r['wins']} / {r['games']}")
    console.print(table)
    pairs = Table(title="pairs (first agent's view)", title_justify="left")
    for col in ("pair", "deals", "win rate [95% CI]", "margin/hand [95% CI]", "s / 1,000 hands"):
        pairs.add_column(col, justify="left" if col == "pair" else "right")
    for rep in result["pairs"]:
        a = rep["agents"][0]
        pairs.add_row(
            " vs ".join(rep["config"]["agents"]),
            str(rep["deals"]),
            _fmt_ci(a["win_rate"], pct=True),
            _fmt_ci(a["margin_per_hand"]),
            f"{rep['seconds_per_1000_hands']:.1f}",
        )
    console.print(pairs)
    if result["interrupted"]:
        console.print("[yellow]interrupted: ratings use the pairs finished so far[/yellow]", markup=True)


def plot_ratings(result: dict, path: str | os.PathLike) -> None:
    """Horizontal bar chart of the ratings with their 95% intervals, written as PNG."""
    # Figure objects, not pyplot: no global backend switch, so notebooks keep their inline plots.
    from matplotlib.figure import Figure

    rows = [r for r in result["ratings"] if not math.isnan(r["elo"])][::-1]
    fig = Figure(figsize=(7, 0.5 * len(rows) + 1.5))
    ax = fig.subplots()
    elo = np.array([r["elo"] for r in rows])
    err = np.array([[r["elo"] - r["lo"] for r in rows], [r["hi"] - r["elo"] for r in rows]])
    ax.barh([r["agent"] for r in rows], elo, xerr=err, color="#4c72b0", capsize=4)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("Bradley-Terry rating (Elo points, mean 0) with 95% CI")
    cfg = result["config"]
    ax.set_title(f"{cfg['deals_per_pair']} duplicate deals per pair, {cfg['players']} players", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
