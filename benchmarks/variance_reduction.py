"""Variance reduction, measured: the AIVAT-style chance correction beside the plain duplicate margin.

Issue 49: duplicate deals cancel the luck of the deals that both seatings of a pair see; a control
variate on every chance event (:mod:`agents.aivat`: each deal's value under a fixed estimate minus
its mean over the deals that could have come) is unbiased and removes the luck a value estimate can
see. This script fits that estimate on games apart from the measured ones (another master seed, one
shared estimate for every pair), then plays ``--pairs`` duplicate deals of each agent pair (standard
rules, 2 players, Python harness: the chance events are read from the engine) and prints, per pair:

* the plain margin per hand of the first agent, its 95% interval clustered by deal;
* the corrected margin and its interval (the same clusters), and the mean correction (zero in
  expectation: a check);
* ``ratio``: the plain interval's width over the corrected one's, with a bootstrap 95% interval over
  the deals;
* ``ceiling``: the same ratio with the estimate fit on the measured games themselves (biased, so
  never published as an estimate; it bounds what an estimate of this form can give);
* ``single``: the ratio on single games (each game its own cluster): how much luck the estimate sees
  before duplicate deals cancel it;
* ``duplicate``: the plain interval's width on single games over its width clustered by deal.

The decision of the issue: the correction goes into ``scopa eval`` and the leaderboard only where
``ratio`` reaches 1.5 (docs/benchmark.md, "Variance reduction: measured"). ::

    python benchmarks/variance_reduction.py --pairs 400 --record benchmarks/results/variance_reduction.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from agents.aivat import DealValue, aivat_summary, fit_value, game_corrections, leader_margin, run_traced  # noqa: E402
from agents.matches import Match  # noqa: E402
from agents.stats import ratio_ci  # noqa: E402
from scopa_env.bench.results import load_average, result_record  # noqa: E402

PAIRS = ("heuristic,heuristic", "heuristic,greedy", "greedy,random", "fsearch:worlds=16,heuristic")
"""A self-match and three ladder pairs of the standard game (first agent measured)."""
TRAIN = "heuristic,greedy"
TITLE = "Variance reduction: an AIVAT-style chance correction"
ABOUT = (
    "The plain duplicate margin beside the margin corrected by control variates on every deal (agents/aivat.py; "
    "Burch et al., AIVAT, AAAI 2018), on the same games: the width ratio decides whether `scopa eval` reports it "
    '(at least 1.5; docs/benchmark.md, "Variance reduction: measured").'
)


def width(ci: dict) -> float:
    return float(ci["hi"] - ci["lo"])


def per_deal(deals: list[list[dict]], value: DealValue, agent: int = 0) -> tuple[np.ndarray, ...]:
    """Per game of ``agent``: its deal, margin, correction and hands."""
    deal, margin, corr, hands = [], [], [], []
    for i, records in enumerate(deals):
        for rec in records:
            side = rec["lineup"].index(agent)
            deal.append(i)
            margin.append(sum(leader_margin(h, side) for h in rec["hands"]))
            corr.append(game_corrections(rec, value)[side])
            hands.append(len(rec["hands"]))
    return tuple(np.asarray(x, dtype=float) for x in (deal, margin, corr, hands))


def clustered(deal: np.ndarray, x: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(deal.astype(int), weights=x, minlength=n)


def bootstrap_ratio(plain: np.ndarray, corrected: np.ndarray, hands: np.ndarray, seed: int, draws: int = 400) -> dict:
    """A percentile 95% interval of the width ratio, resampling the deals."""
    rng = np.random.default_rng(seed)
    k = len(hands)
    out = []
    for _ in range(draws):
        pick = rng.integers(k, size=k)
        out.append(width(ratio_ci(plain[pick], hands[pick])) / width(ratio_ci(corrected[pick], hands[pick])))
    return {"lo": float(np.percentile(out, 2.5)), "hi": float(np.percentile(out, 97.5))}


def measure(pair: str, pairs: int, seed: int, value: DealValue, ridge: float) -> dict:
    specs = tuple(pair.split(","))
    match = Match(specs, 2, None, seed)
    start = time.perf_counter()
    deals = run_traced(match, pairs, progress=sys.stderr.isatty(), desc=" vs ".join(specs))
    seconds = time.perf_counter() - start
    row = aivat_summary(match, deals, value)[0]
    deal, margin, corr, hands = per_deal(deals, value)
    n = len(deals)
    dp, dc, dh = (clustered(deal, x, n) for x in (margin, margin - corr, hands))
    single_plain = ratio_ci(margin, hands)
    single_corr = ratio_ci(margin - corr, hands)
    games = [g for d in deals for g in d]
    ceiling = aivat_summary(match, deals, fit_value(games, None, ridge=ridge))[0]["width_ratio"]
    return {
        "pair": " vs ".join(specs),
        "deals": n,
        "plain": row["plain"],
        "corrected": row["corrected"],
        "correction": row["correction"],
        "ratio": row["width_ratio"],
        "ratio_ci": bootstrap_ratio(dp, dc, dh, seed),
        "ceiling": ceiling,
        "single": width(single_plain) / width(single_corr),
        "duplicate": width(single_plain) / width(row["plain"]),
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", action="append", help=f"agents A,B (default: {'; '.join(PAIRS)})")
    parser.add_argument("--pairs", type=int, default=400, help="duplicate deals per pair (default 400)")
    parser.add_argument("--seed", type=int, default=0, help="master seed of the measured deals")
    parser.add_argument("--train", default=TRAIN, help=f"the pair whose games fit the value estimate ({TRAIN})")
    parser.add_argument("--train-pairs", type=int, default=400)
    parser.add_argument("--train-seed", type=int, default=1, help="master seed of the fitting games (not --seed)")
    parser.add_argument("--ridge", type=float, default=10.0)
    parser.add_argument("--record", help="write the table as a result record (JSON)")
    args = parser.parse_args(argv)
    if args.train_seed == args.seed:
        parser.error("--train-seed must differ from --seed: the estimate is fit apart from the measured games")
    load_start = load_average()
    train = run_traced(Match(tuple(args.train.split(",")), 2, None, args.train_seed), args.train_pairs)
    value = fit_value([g for d in train for g in d], None, ridge=args.ridge)
    rows = []
    for pair in args.pair or PAIRS:
        row = measure(pair, args.pairs, args.seed, value, args.ridge)
        rows.append(row)
        p, c, m = row["plain"], row["corrected"], row["correction"]
        print(
            f"{row['pair']}: plain {p['mean']:+.3f} [{p['lo']:+.3f}, {p['hi']:+.3f}], "
            f"corrected {c['mean']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}], "
            f"ratio {row['ratio']:.3f} [{row['ratio_ci']['lo']:.3f}, {row['ratio_ci']['hi']:.3f}], "
            f"mean correction {m['mean']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}], ceiling {row['ceiling']:.3f}, "
            f"single games {row['single']:.3f}, duplicate gain {row['duplicate']:.3f} ({row['seconds']:.0f} s)",
            flush=True,
        )
    load_end = load_average()
    print(f"load average: {load_start} at the start, {load_end} at the end")
    if args.record:
        command = " ".join(
            ["python", "benchmarks/variance_reduction.py", *(argv if argv is not None else sys.argv[1:])]
        )
        for row in rows:
            row["ratio_text"] = f"{row['ratio']:.3f} [{row['ratio_ci']['lo']:.3f}, {row['ratio_ci']['hi']:.3f}]"
        record = result_record(
            command,
            rows,
            title=TITLE,
            what=(
                f"the first agent's margin per hand on the same duplicate deals, plain and corrected by control "
                f"variates on every deal (standard rules, 2 players, Python harness), 95% CIs clustered by deal; the "
                f"value estimate fit on {args.train_pairs} other deals of {args.train.replace(',', ' vs ')} (seed "
                f"{args.train_seed}); ratio: plain width over corrected width [bootstrap 95% CI]"
            ),
            columns=[
                ("pair", "pair"),
                ("deals", "duplicate deals"),
                ("plain", "plain margin [95% CI]"),
                ("corrected", "corrected margin [95% CI]"),
                ("correction", "mean correction [95% CI]"),
                ("ratio_text", "width ratio [95% CI]"),
                ("ceiling", "ratio, estimate fit on these games"),
                ("single", "ratio on single games"),
                ("duplicate", "duplicate's own gain"),
            ],
            load={"start": load_start, "end": load_end},
            machine="this project's shared 2-core CPU machine",
            facts=[
                {
                    "what": "decision",
                    "value": (
                        "used in `scopa eval` and the leaderboard only at a width ratio of 1.5 or more; "
                        + (
                            "reached"
                            if min(r["ratio"] for r in rows) >= 1.5
                            else "not reached, so both keep the plain margin"
                        )
                    ),
                }
            ],
        )
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        Path(args.record).write_text(json.dumps({"title": TITLE, "about": ABOUT, "records": [record]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
