"""A soak anyone can rerun: random play over every preset and player count on both engines,
checking the bookkeeping of every hand and game.

    python benchmarks/soak.py                        # the full run: 1,000,000 compiled games
    python benchmarks/soak.py --quick                # a few thousand games, for a smoke check
    python benchmarks/soak.py --games 200 --presets standard,cirulla --out runs/soak.json

Engines: the Python engine (:class:`scopa_env.engine.game.Game`) and the compiled core
(:class:`scopa_env.fast.BatchedScopa`, "move" mode, a uniformly random legal move per step).
``--games`` compiled games are shared equally among the (preset, player count) cases, and
``--python-games`` (default ``--games // 200``) Python games likewise.

Checks (a failure is a *violation*, recorded with its case and a one-line detail):

* **cards**: every card of the deck is in exactly one place: the hands, the table, the piles
  or the stock. The compiled core is checked after every step, the engine after every hand's
  deal and at every hand end (after the leftover sweep);
* **hand**: at a hand end every card is in one pile (the counts of the hand score add up to
  the deck; a chiamarsi-fuori claim ends a hand early and is exempt);
* **score**: each side's game score equals the sum of the hand totals the engine's scoring
  reported (``HandResult.hand_score``, the core's ``hand_score``) plus the declarations
  (``HandResult.declared``; the core's declared points), after every hand and at the end.

``--plant cards`` or ``--plant score`` corrupts one state on purpose (a card on the table
and in a hand at once; a point out of nowhere) in each engine, so a test can see that the
soak fails (``tests/test_soak.py``). The run writes a results record (``--out``, default
``benchmarks/results/soak.json``; ``benchmarks/render_results.py`` renders it) and exits 1
when it found a violation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from scopa_env.bench.results import git_commit, load_average, missing_fields, result_record
from scopa_env.engine.cards import cards_of
from scopa_env.engine.game import Game
from scopa_env.engine.rules import PRESETS, Rules, get_rules
from scopa_env.fast import BatchedScopa
from scopa_env.fast import layout as L

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "soak.json"
FULL_GAMES = 1_000_000
QUICK_GAMES = 3_000
PYTHON_SHARE = 200
"""By default one Python game per this many compiled games (the engine is ~100x slower)."""
ROWS = 2048
"""Compiled games stepped together (at most the case's share)."""
LEGAL_WIDTH = 1024
"""Columns of the batch's legal move ids: more than any preset's position has."""
MAX_EXAMPLES = 20
"""Violations kept with their details (all are counted)."""
PLANTS = ("cards", "score")


@dataclass
class Case:
    """One (preset, player count) and what the soak found in it."""

    preset: str
    players: int
    compiled_games: int = 0
    compiled_hands: int = 0
    python_games: int = 0
    python_hands: int = 0
    violations: int = 0
    examples: list[dict] = field(default_factory=list)

    def violation(self, engine: str, kind: str, detail: str) -> None:
        self.violations += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append({"engine": engine, "kind": kind, "detail": detail})


def cases(presets: list[str] | None = None) -> list[Case]:
    """Every preset at every player count it allows (``presets``: only these)."""
    names = presets or sorted(PRESETS)
    return [Case(name, n) for name in names for n in get_rules(name).player_counts]


# --- the Python engine --------------------------------------------------------------------------


def _engine_cards(game: Game) -> tuple[bool, str]:
    """Whether every deck card is in exactly one place of ``game``; else what is wrong."""
    places = [*game.hands, game.table, *game.piles, sum(1 << c for c in game.stock)]
    union = 0
    for mask in places:
        if union & mask:
            return False, f"cards in two places: {cards_of(union & mask)}"
        union |= mask
    if union != game.rules.deck_mask:
        return (
            False,
            f"cards missing {cards_of(game.rules.deck_mask & ~union)}, extra {cards_of(union & ~game.rules.deck_mask)}",
        )
    return True, ""


def play_engine(case: Case, games: int, seed: int, plant: str | None, bar: tqdm) -> None:
    """``games`` whole games of uniformly random moves on the Python engine."""
    rules = get_rules(case.preset)
    rng = np.random.default_rng(seed)
    for g in range(games):
        game = Game(case.players, rules, seed=rng, auto_next_hand=False)
        sums = [0] * game.num_sides
        if not check_engine_deal(case, game, plant if g == 0 else None):
            continue  # a corrupted deal is not played on
        while True:
            pairs = game.legal_pairs()
            game.play_pair(*pairs[int(rng.integers(len(pairs)))])
            result = game.hand_result
            if result is None:
                continue
            case.python_hands += 1
            ok, why = _engine_cards(game)
            if not ok:
                case.violation("engine", "cards", f"hand end: {why}")
            claim = any(name in ("claim", "false_claim") for name, _ in result.events)
            if not claim and sum(len(p) for p in result.piles) != len(rules.deck):
                case.violation("engine", "hand", f"piles hold {sum(len(p) for p in result.piles)} cards")
            for side, row in enumerate(result.hand_score):
                sums[side] += row["total"]
            for side, named in enumerate(result.declared):
                sums[side] += sum(named.values())
            if not any(name == "coins_reset" for name, _ in result.events) and sums != game.scores:
                case.violation("engine", "score", f"scores {game.scores}, hand totals + declarations {sums}")
                sums = list(game.scores)
            if game.winner is not None:
                break
            game.next_hand()
            if not check_engine_deal(case, game, None):
                break
        case.python_games += 1
        bar.update(1)


def check_engine_deal(case: Case, game: Game, plant: str | None) -> bool:
    """Check the cards after a deal (``False``: a violation); ``plant`` corrupts the game first (the test's hook)."""
    if plant == "cards":
        seat = next(s for s, h in enumerate(game.hands) if h)
        game.table |= game.hands[seat] & -game.hands[seat]  # a hand card on the table too
    elif plant == "score":
        game.scores[0] += 1  # a point no hand awarded
    ok, why = _engine_cards(game)
    if not ok:
        case.violation("engine", "cards", f"after the deal: {why}")
    return ok


# --- the compiled core ----------------------------------------------------------------------------


def _popcount(a: np.ndarray) -> np.ndarray:
    return np.bitwise_count(a.view(np.uint64)).astype(np.int64)


def core_card_check(S: np.ndarray, rules: Rules, players: int, sides: int) -> np.ndarray:
    """Rows of the state matrix ``S`` where some deck card is not in exactly one place."""
    size = len(rules.deck)
    deck = S[:, L.COL_DECK : L.COL_DECK + size]
    in_stock = np.arange(size)[None, :] >= S[:, L.COL_STOCK_POS][:, None]
    stock = np.bitwise_or.reduce(np.where(in_stock, np.left_shift(1, deck), 0), axis=1)
    places = np.concatenate(
        [
            S[:, L.COL_HAND : L.COL_HAND + players],
            S[:, L.COL_TABLE : L.COL_TABLE + 1],
            S[:, L.COL_PILE : L.COL_PILE + sides],
            stock[:, None],
        ],
        axis=1,
    )
    union = np.bitwise_or.reduce(places, axis=1)
    counted = _popcount(places).sum(axis=1)
    return np.flatnonzero((union != rules.deck_mask) | (counted != size))


def play_core(case: Case, games: int, seed: int, plant: str | None, bar: tqdm, threads: int = 1) -> None:
    """At least ``games`` whole games of uniformly random legal moves on the compiled core."""
    rules = get_rules(case.preset)
    rows = max(1, min(ROWS, games))
    batch = BatchedScopa(rows, case.players, rules, action_mode="move", legal_width=LEGAL_WIDTH, threads=threads)
    sides = batch.num_sides
    S = batch._S  # the state matrix (scopa_env.fast.layout): read for the checks, written by --plant only
    batch.reset(np.arange(rows) + seed * 1_000_003)
    rng = np.random.default_rng(seed)
    everyone = np.arange(rows)
    sums = np.zeros((rows, sides), np.float64)  # per game: hand totals + declarations so far
    deck_size = len(rules.deck)
    score_cols = slice(L.COL_SCORE, L.COL_SCORE + sides)
    declared_cols = slice(L.COL_DECLARED, L.COL_DECLARED + sides)
    resets = rules.coins_reset != 0  # a Libyan reset zeroes scores: no running sum then
    done = 0
    planted = plant is None
    while done < games:
        if not planted:
            if plant == "cards":
                hand = S[0, L.COL_HAND]
                S[0, L.COL_TABLE] |= hand & -hand
            else:
                S[0, L.COL_SCORE] += 1
            planted = True
        declared_before = S[:, declared_cols].copy()
        actions = batch.legal_ids[everyone, (rng.random(rows) * batch.legal_count).astype(np.int64)]
        batch.step(actions)
        ended = batch.hand_ended
        over = batch.terminated
        claim = batch.claim != 0
        # declarations closed in this step (a hand ends on a card play, never on a declaration)
        sums[~ended] += S[~ended, declared_cols] - declared_before[~ended]
        if ended.any():
            idx = np.flatnonzero(ended)
            case.compiled_hands += len(idx)
            score = batch.hand_score[idx]
            sums[idx] += score[:, :, L.SCORE_TOTAL]
            counted = score[:, :, L.SCORE_NUM_CARDS].sum(axis=1)
            for i in idx[(counted != deck_size) & ~claim[idx]]:
                case.violation("core", "hand", f"row {i}: piles hold {int(counted[np.searchsorted(idx, i)])} cards")
        if over.any():
            idx = np.flatnonzero(over)
            final = batch.final_scores[idx]
            if not resets:
                for k in np.flatnonzero(np.any(final != sums[idx], axis=1)):
                    case.violation(
                        "core", "score", f"row {idx[k]}: final {final[k].tolist()}, totals {sums[idx[k]].tolist()}"
                    )
            sums[idx] = S[idx, score_cols]  # the next game's declarations made at its first deal, if any
            n = min(len(idx), games - done)
            done += len(idx)
            case.compiled_games += len(idx)
            bar.update(n)
        live = ~over
        if not resets:
            for i in np.flatnonzero(live & np.any(S[:, score_cols] != sums, axis=1)):
                case.violation(
                    "core", "score", f"row {i}: scores {S[i, score_cols].tolist()}, totals {sums[i].tolist()}"
                )
                sums[i] = S[i, score_cols]
        bad = core_card_check(S, rules, case.players, sides)
        if len(bad):
            for i in bad:
                case.violation("core", "cards", batch.describe(int(i)))
            batch.reset(np.arange(rows) + int(rng.integers(1 << 30)))  # the games start clean again
            sums[:] = 0


# --- the run --------------------------------------------------------------------------------------


def machine() -> str:
    return f"{platform.node() or 'unknown'}: {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}"


def run(args: argparse.Namespace) -> dict:
    todo = cases(args.presets.split(",") if args.presets else None)
    per_core = -(-args.games // len(todo))
    py_total = args.games // PYTHON_SHARE if args.python_games is None else args.python_games
    per_py = -(-py_total // len(todo)) if py_total else 0
    load_start = load_average()
    start = time.perf_counter()
    with tqdm(total=per_core * len(todo), desc="compiled games", unit="game", smoothing=0.05) as bar:
        for k, case in enumerate(todo):
            bar.set_postfix_str(f"{case.preset} {case.players}p")
            play_core(case, per_core, args.seed + k, args.plant, bar, args.threads)
    core_s = time.perf_counter() - start
    with tqdm(total=per_py * len(todo), desc="python games", unit="game", smoothing=0.05) as bar:
        for k, case in enumerate(todo):
            bar.set_postfix_str(f"{case.preset} {case.players}p")
            play_engine(case, per_py, args.seed + k, args.plant, bar)
    seconds = time.perf_counter() - start
    load_end = load_average()
    rows = [
        {
            "preset": c.preset,
            "players": c.players,
            "compiled_games": c.compiled_games,
            "compiled_hands": c.compiled_hands,
            "python_games": c.python_games,
            "python_hands": c.python_hands,
            "violations": c.violations,
        }
        for c in todo
    ]
    found = [dict(preset=c.preset, players=c.players, **e) for c in todo for e in c.examples]
    total = {
        "compiled_games": sum(c.compiled_games for c in todo),
        "compiled_hands": sum(c.compiled_hands for c in todo),
        "python_games": sum(c.python_games for c in todo),
        "python_hands": sum(c.python_hands for c in todo),
        "violations": sum(c.violations for c in todo),
    }
    record = result_record(
        "python benchmarks/soak.py " + " ".join(args.argv),
        rows,
        what="random play on both engines over every preset and player count: card conservation "
        "and score bookkeeping checked at every hand end",
        columns=[
            ("preset", "preset"),
            ("players", "players"),
            ("compiled_games", "compiled games"),
            ("compiled_hands", "compiled hands"),
            ("python_games", "Python games"),
            ("python_hands", "Python hands"),
            ("violations", "violations"),
        ],
        load={"start": load_start, "end": load_end},
        commit=git_commit(ROOT),
        id="soak",
        title="Soak: random play on both engines",
        machine=machine(),
        load_note=f"1/5/15-minute load average at the start and the end of the {seconds / 60:.1f}-minute run",
        seconds={"compiled": round(core_s, 1), "total": round(seconds, 1)},
        totals=total,
        violations_found=found,
        plant=args.plant,
    )
    return {
        "title": "Soak",
        "about": "benchmarks/soak.py: whole games of random moves on the Python engine and the compiled core; "
        "every card in exactly one place and every score the sum of what the hands awarded.",
        "records": [record],
    }


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", type=int, default=None, help=f"compiled games in all (default {FULL_GAMES:,})")
    p.add_argument("--quick", action="store_true", help=f"{QUICK_GAMES:,} compiled games")
    p.add_argument(
        "--python-games", type=int, default=None, help=f"Python games in all (default games // {PYTHON_SHARE})"
    )
    p.add_argument("--presets", default="", help="comma-separated presets (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="cores the compiled batch steps on (default 1)")
    p.add_argument("--plant", choices=PLANTS, default=None, help="corrupt one state per engine (tests/test_soak.py)")
    p.add_argument("--out", type=Path, default=OUT, help="results file (default benchmarks/results/soak.json)")
    args = p.parse_args(argv)
    if args.games is None:
        args.games = QUICK_GAMES if args.quick else FULL_GAMES
    if args.games < 1:
        p.error("--games must be at least 1")
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    data = run(args)
    record = data["records"][0]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    missing = missing_fields(record)
    if missing:
        raise ValueError(f"the soak's record lacks {missing}")
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    totals = record["totals"]
    print(
        f"{totals['compiled_games']:,} compiled games ({totals['compiled_hands']:,} hands), "
        f"{totals['python_games']:,} Python games ({totals['python_hands']:,} hands), "
        f"{totals['violations']} violations; load {record['load_average']}; {record['seconds']} s; "
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC -> {args.out}"
    )
    for e in record["violations_found"][:5]:
        print(f"  {e['preset']} {e['players']}p {e['engine']} {e['kind']}: {e['detail']}")
    return 1 if totals["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
