"""Strength per millisecond: every agent of the standard 2-player game against one reference, beside its cost.

Each agent plays the same reference (``fsearch``, the compiled search at its default 256 worlds)
on the same duplicate deals (``scopa eval --fast AGENT REFERENCE --games N --seed S``: whole games
to 11, both seatings of every deal, 95% intervals clustered by deal), and its CPU milliseconds per
decision are measured on the same positions of heuristic self-play, the agents taking turns on
each position so that a change of load falls on all of them alike (one BLAS thread; see
``benchmarks/net_search_cost.py``). The agents: ``fsearch`` and ``netsearch`` at 16, 64, 256 and
1,024 worlds, the networks alone, ``heuristic`` and ``greedy``. The reference's own row is its
self-match, 0 by construction, so it is not played.

Each agent's report is kept in ``--out-dir`` (``<slug>.json``), and an agent whose report is there
is not played again: a stopped run resumes, and a later session can add agents or deals. ::

    python benchmarks/strength_per_ms.py --pairs 300 --record benchmarks/results/strength_per_ms.json \\
        --plot docs/img/strength_per_ms.png

The chart puts each agent's margin against the reference (points per hand, with its interval) over
its CPU ms per decision on a log scale, the search's curve drawn through the ``fsearch`` points.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, as the budget says
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from net_search_cost import ms_per_decision, positions  # noqa: E402

from scopa_env.bench.results import load_average, result_record  # noqa: E402

REFERENCE = "fsearch"
"""The fixed opponent: the compiled search at its defaults (256 worlds)."""
WORLDS = (16, 64, 256, 1024)
NETWORK = "zoo:standard-2p"
FAMILIES = {
    "fsearch": [f"fsearch:worlds={w}" for w in WORLDS],
    "netsearch": [f"netsearch:{NETWORK},worlds={w}" for w in WORLDS],
    "network": [NETWORK, "zoo:standard-2p-v2", "zoo:standard-2p-v3", "zoo:ppo-standard-2p", "zoo:dqn-standard-2p"],
    "baseline": ["heuristic", "greedy"],
    "network + exact endgame": [f"netsearch:{NETWORK},weight=1,worlds=1"],
}
"""The agents of the chart, by family (the search's curve is the ``fsearch`` family)."""
LABELS_LEFT = {"zoo:standard-2p-v2"}
"""Agents whose label goes on the left of their point (on the right it would cover another)."""
TITLE = "Strength per millisecond (standard, 2 players)"
ABOUT = (
    "Strength per millisecond in the standard 2-player game: each agent's margin against the compiled "
    "search fsearch (256 worlds) on the same held-out duplicate deals, beside its CPU ms per decision "
    "measured on the same positions (benchmarks/strength_per_ms.py)."
)


def slug(spec: str) -> str:
    """A file name for ``spec``."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", spec)


def family_of(spec: str) -> str:
    for family, specs in FAMILIES.items():
        if spec in specs:
            return family
    return "network" if spec.startswith(("zoo:", "dmc:")) else "other"


def select_mode_network(spec: str) -> bool:
    """Whether ``spec`` is a PPO or DQN network (``ppo:``, ``dqn:`` or such a zoo entry)."""
    prefix, _, name = spec.partition(":")
    if prefix in ("ppo", "dqn"):
        return True
    if prefix == "zoo":
        from train.zoo import algo_of

        return algo_of(name) in ("ppo", "dqn")
    return False


def pairs_for(spec: str, args: argparse.Namespace) -> int:
    """``--pairs``, or the ``--pairs-for SPEC=N`` of ``spec`` (the costliest agents on fewer deals)."""
    for item in args.pairs_for:
        name, _, count = item.rpartition("=")
        if name == spec:
            return int(count)
    return args.pairs


def kept_eval(path: Path, eval_args: list[str], pairs: int, seed: int) -> tuple[dict, bool]:
    """``scopa eval ... --games pairs --seed seed --json path``'s report, and whether it was played now: a
    report of the same deals already at ``path`` is taken back instead (a stopped run resumes)."""
    if path.exists():
        report = json.loads(path.read_text())
        if report.get("deals") == pairs and report.get("config", {}).get("seed") == seed:
            return report, False
    path.parent.mkdir(parents=True, exist_ok=True)
    command = ["scopa", "eval", *eval_args, "--games", str(pairs), "--seed", str(seed), "--json", str(path)]
    print("+", shlex.join(command), flush=True)
    subprocess.run([sys.executable, "-m", "scopa_app.cli", *command[1:]], check=True)
    return json.loads(path.read_text()), True


def play(spec: str, args: argparse.Namespace) -> dict:
    """The report of ``spec`` against the reference (from ``--out-dir`` when it is there)."""
    # the compiled evaluation plays DMC networks, netsearch and compiled players; PPO and DQN networks
    # play the same deals on the Python harness
    engine = ["--workers", "1"] if select_mode_network(spec) else ["--fast"]
    path = Path(args.out_dir) / f"{slug(spec)}.json"
    return kept_eval(path, [*engine, spec, args.reference], pairs_for(spec, args), args.seed)[0]


def margin_of(report: dict) -> dict:
    m = report["agents"][0]["margin_per_hand"]
    return {"margin": m["mean"], "margin_lo": m["lo"], "margin_hi": m["hi"]}


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    styles = {
        "fsearch": ("tab:blue", "o"),
        "netsearch": ("tab:orange", "s"),
        "network": ("tab:green", "^"),
        "baseline": ("tab:gray", "D"),
        "network + exact endgame": ("tab:red", "*"),
        "other": ("tab:purple", "v"),
    }
    for family, (color, marker) in styles.items():
        mine = sorted((r for r in rows if r["family"] == family), key=lambda r: r["ms"])
        if not mine:
            continue
        xs = [r["ms"] for r in mine]
        ys = [r["margin"] for r in mine]
        err = [[r["margin"] - r["margin_lo"] for r in mine], [r["margin_hi"] - r["margin"] for r in mine]]
        line = "-" if family in ("fsearch", "netsearch") else "none"
        ax.errorbar(xs, ys, yerr=err, color=color, marker=marker, linestyle=line, capsize=3, label=family)
        for r in mine:
            # these labels would cover the search's curve on the right
            left = family == "network + exact endgame" or r["label"] in LABELS_LEFT
            ax.annotate(
                r["label"],
                (r["ms"], r["margin"]),
                fontsize=7,
                xytext=(-6, 4) if left else (4, 4),
                textcoords="offset points",
                ha="right" if left else "left",
            )
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("CPU ms per decision (one core, log scale)")
    ax.set_ylabel(f"points per hand against {REFERENCE} [95% CI]")
    ax.set_title("Strength per millisecond, standard Scopa, 2 players")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def label_of(spec: str) -> str:
    if spec == REFERENCE:
        return "fsearch worlds=256"
    if spec in FAMILIES["network + exact endgame"]:
        return f"{NETWORK} + exact endgame"
    return spec.replace(f"netsearch:{NETWORK},", "netsearch ").replace("fsearch:", "fsearch ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", help="agent specs (default: the chart's list)")
    parser.add_argument("--add", nargs="+", default=[], help="agent specs added to the default list")
    parser.add_argument("--reference", default=REFERENCE)
    parser.add_argument("--pairs", type=int, default=300, help="duplicate deal pairs per agent (default 300)")
    parser.add_argument(
        "--pairs-for", nargs="+", default=[], metavar="SPEC=N", help="another deal count for some agents"
    )
    parser.add_argument("--seed", type=int, default=4242, help="the deals' seed (no training run uses it)")
    parser.add_argument("--timing-positions", type=int, default=200)
    parser.add_argument("--out-dir", default="docs/data/strength_per_ms", help="one report per agent, kept")
    parser.add_argument("--record", help="write the table as a result record (JSON)")
    parser.add_argument("--plot", help="write the chart (PNG)")
    args = parser.parse_args(argv)
    specs = args.agents or [s for family in FAMILIES.values() for s in family] + args.add
    specs = [s for s in specs if s != args.reference and s != f"{args.reference}:worlds=256"]
    load_start = load_average()
    views = [view for view, _ in positions(args.timing_positions, args.seed)]
    ms = dict(zip([args.reference, *specs], ms_per_decision([args.reference, *specs], views, args.seed)))
    print("CPU ms per decision:", {k: round(v, 3) for k, v in ms.items()}, flush=True)
    rows = [
        {
            "agent": f"{args.reference} (the reference)",
            "family": "fsearch",
            "label": f"{label_of(args.reference)} (reference)",
            "ms": ms[args.reference],
            "ratio_ms": 1.0,
            "margin": 0.0,
            "margin_lo": 0.0,
            "margin_hi": 0.0,
            "deals": 0,
        }
    ]
    for spec in specs:
        report = play(spec, args)
        rows.append(
            {
                "agent": spec,
                "family": family_of(spec),
                "label": label_of(spec),
                "ms": ms[spec],
                "ratio_ms": ms[spec] / ms[args.reference],
                **margin_of(report),
                "deals": report["deals"],
            }
        )
        r = rows[-1]
        print(
            f"{spec}: {r['margin']:+.3f} [{r['margin_lo']:+.3f}, {r['margin_hi']:+.3f}], {r['ms']:.2f} ms", flush=True
        )
    for r in rows:
        r["margin_text"] = f"{r['margin']:+.3f} [{r['margin_lo']:+.3f}, {r['margin_hi']:+.3f}]"
    command = " ".join(["python", "benchmarks/strength_per_ms.py", *(argv if argv is not None else sys.argv[1:])])
    if args.plot:
        plot(rows, args.plot)
    if args.record:
        record = result_record(
            command,
            rows,
            what=(
                f"each agent against {args.reference} on held-out duplicate deal pairs (the deals column) (seed {args.seed}, "
                "compiled core, whole games, 95% CIs clustered by deal), and its CPU ms per decision on "
                f"{args.timing_positions} positions of heuristic self-play, the agents taking turns on each"
            ),
            columns=[
                ("agent", "agent"),
                ("family", "family"),
                ("ms", "CPU ms per decision"),
                ("ratio_ms", f"ratio to {args.reference}'s ms"),
                ("margin_text", f"points per hand vs {args.reference} [95% CI]"),
                ("deals", "deal pairs"),
            ],
            load={"start": load_start, "end": load_average()},
            machine="this project's shared 2-core CPU machine",
            figure=args.plot,
        )
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        Path(args.record).write_text(json.dumps({"title": TITLE, "about": ABOUT, "records": [record]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
