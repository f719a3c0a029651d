"""CFR on the small preset: OpenSpiel's solvers, exploitability against iterations, one plot.

The ``python_scopa`` game with ``rules="small"`` (one hand, hand-point margin) is written
out once as a Gambit tree (:func:`scopa_env.openspiel.game.export_efg`) and loaded as a
C++ game (``pyspiel.load_efg_game``); OpenSpiel's C++ CFR and CFR+ then run on it and
``pyspiel.exploitability`` (the mean of the two best responses' gains, in hand points)
measures each average policy. The copy has the same chance probabilities, payoffs and
information sets as the Python game, so this is CFR on the small Scopa itself, at C++ speed.

Run (the numbers and the plot in docs/openspiel.md)::

    python benchmarks/openspiel_cfr.py --iterations 1000 --json cfr_small.json --png docs/img/openspiel_cfr_small.png
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pyspiel

import scopa_env.openspiel.game as og

SOLVERS = {"cfr": pyspiel.CFRSolver, "cfr+": pyspiel.CFRPlusSolver}
"""OpenSpiel's tabular solvers compared here (C++)."""


def checkpoints(iterations: int, per_decade: int = 4) -> list[int]:
    """Iteration counts at which to measure, spread evenly on a log scale (1 and the last included)."""
    points = np.unique(
        np.round(np.logspace(0, np.log10(iterations), int(per_decade * np.log10(iterations)) + 1)).astype(int)
    )
    return sorted({1, iterations, *(int(p) for p in points if p <= iterations)})


def run(rules: str, iterations: int, solvers: list[str]) -> dict:
    game = pyspiel.load_game(og.GAME_NAME, {"rules": rules})
    start = time.process_time()
    tree = og.export_efg(game)
    copy = pyspiel.load_efg_game(tree.text)
    size = {
        "decision_nodes": tree.decision_nodes,
        "chance_nodes": tree.chance_nodes,
        "terminal_nodes": tree.terminal_nodes,
        "information_sets": [len(i) for i in tree.infosets],
        "export_cpu_seconds": time.process_time() - start,
    }
    print(f"{game}: {size}")
    uniform = pyspiel.exploitability(copy, pyspiel.UniformRandomPolicy(copy))
    curves = {}
    for name in solvers:
        solver = SOLVERS[name](copy)
        start = time.process_time()
        curve, done = [], 0
        for target in checkpoints(iterations):
            while done < target:
                solver.evaluate_and_update_policy()
                done += 1
            value = pyspiel.exploitability(copy, solver.average_policy())
            curve.append({"iteration": done, "exploitability": value, "cpu_seconds": time.process_time() - start})
            print(f"{name:5s} {done:6d} iterations: exploitability {value:.5f} hand points")
        curves[name] = curve
    return {"game": str(game), "size": size, "uniform_exploitability": uniform, "curves": curves}


def plot(result: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, curve in result["curves"].items():
        ax.loglog([c["iteration"] for c in curve], [c["exploitability"] for c in curve], marker=".", label=name)
    ax.axhline(result["uniform_exploitability"], color="gray", ls=":", label="uniform random policy")
    s = result["size"]
    ax.set_title(
        f"Small Scopa ({s['decision_nodes']:,} decision nodes, {sum(s['information_sets']):,} information sets)",
        fontsize=10,
    )
    ax.set_xlabel("iterations")
    ax.set_ylabel("exploitability of the average policy (hand points)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="small", help="preset (default small; the tree must fit in memory)")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--solvers", default="cfr,cfr+", help=f"comma-separated: {', '.join(SOLVERS)}")
    parser.add_argument("--json", metavar="PATH", help="write the curves as JSON")
    parser.add_argument("--png", metavar="PATH", help="write the plot")
    args = parser.parse_args()
    solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    unknown = [s for s in solvers if s not in SOLVERS]
    if unknown or args.iterations < 1:
        parser.error(
            f"solvers must be among {list(SOLVERS)} and iterations >= 1 (got {args.solvers!r}, {args.iterations})"
        )
    result = run(args.rules, args.iterations, solvers)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    if args.png:
        plot(result, args.png)


if __name__ == "__main__":
    main()
