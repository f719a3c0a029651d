"""What a DMC network inside the compiled search would cost per decision, next to ``fsearch``.

``netsearch`` (train/dmc/net_search.py) asks the network once per decision, at the root. Putting it
deeper, into every sampled world, is the lever named for a search that beats ``fsearch`` by a wide
margin (issue 35, item 2: at most 10 ms per move on one core). This script measures, in one run
and on the same positions (heuristic self-play of the standard 2-player game), what that costs:

* measured: CPU ms per decision of ``fsearch``, ``netsearch`` and the network alone
  (``zoo:standard-2p`` by default) over the same positions, taking turns on each;
* measured: the network's arithmetic per position (its trunk once, its head once per legal move),
  batched as a search would batch it, on one BLAS thread;
* derived from those two and the positions' mean legal moves and cards left: the CPU ms per
  decision of the network as the *leaf value* of every world one ply down (``worlds x moves``
  positions) and as the *rollout policy* of every world (``worlds x moves x plies left``
  positions). These count the network's arithmetic only, batched at its cheapest; building the
  observations and move features of each position comes on top, so they are lower bounds.

Every row gives its ratio to ``fsearch``'s time measured in the same run, so the ratios hold on a
loaded machine where the milliseconds do not. ::

    python benchmarks/net_search_cost.py --positions 300 --record benchmarks/results/net_search_cost.json
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, as the budget says
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from agents.registry import make_agent  # noqa: E402
from scopa_env.bench.results import load_average, missing_fields, result_record  # noqa: E402
from scopa_env.engine.game import Game  # noqa: E402
from scopa_env.engine.rules import get_rules  # noqa: E402
from train.dmc.net_search import _load  # noqa: E402

ABOUT = (
    "What a DMC network inside the compiled search would cost per decision, beside fsearch and netsearch "
    'measured in the same run (benchmarks/net_search_cost.py; docs/agents.md, "Search that uses the learned network").'
)
BUDGET_MS = 10.0
"""Issue 35's budget for a search with the network: CPU ms per move on one core."""


def positions(count: int, seed: int, rules: str = "standard", num_players: int = 2) -> list:
    """``count`` (view, cards left in hands and stock) of heuristic self-play (by default the standard
    2-player game), each with more than one legal move."""
    preset = get_rules(rules)
    pilot = make_agent("heuristic", seed=seed)
    out, game_seed = [], seed
    while len(out) < count:
        game = Game(num_players, preset, seed=game_seed, auto_next_hand=False)
        game_seed += 1
        while not game.hand_over and len(out) < count:
            view = game.view()
            if len(view.legal_pairs()) > 1:
                out.append((view, sum(h.bit_count() for h in game.hands) + len(game.stock)))
            game.play(pilot.act(view))
    return out


WARMUP_VIEWS = 50
"""Views each agent plays untimed before the timing: more than a hand's decisions with a choice
(the standard 2-player game has at most 36 decisions a hand, the 8-player game 48)."""


def ms_per_decision(specs: list[str], views: list, seed: int) -> list[float]:
    """Mean CPU ms of each spec's ``act`` over ``views``, the specs taking turns on each view so that a
    change of load falls on all of them alike. Each one first acts, untimed, on the first
    :data:`WARMUP_VIEWS` views: a whole hand of positions, so that one-time costs (a compile, a
    cache load, a network kept for the last round) fall outside the timing."""
    agents = [make_agent(spec, seed=seed) for spec in specs]
    for agent in agents:
        for view in views[:WARMUP_VIEWS]:
            agent.act(view)
    totals = [0.0] * len(agents)
    for view in views:
        for k, agent in enumerate(agents):
            start = time.process_time()
            agent.act(view)
            totals[k] += time.process_time() - start
    return [1000 * total / len(views) for total in totals]


def ms_per_position(net, obs_size: int, feat_size: int, batch: int, moves: int, reps: int) -> float:
    """CPU ms of the network's arithmetic per position (trunk once, head ``moves`` times) in batches of ``batch``."""
    rng = np.random.default_rng(0)
    obs = rng.random((batch, obs_size), dtype=np.float32)
    rows = np.repeat(np.arange(batch), moves)
    feats = rng.random((batch * moves, feat_size), dtype=np.float32)
    net.scores(obs, rows, feats)
    start = time.process_time()
    for _ in range(reps):
        net.scores(obs, rows, feats)
    return 1000 * (time.process_time() - start) / (reps * batch)


def measure(checkpoint: str, num_positions: int, worlds: int, seed: int) -> tuple[list[dict], dict]:
    """The rows of the record and the positions' facts."""
    net, meta = _load(checkpoint)  # a bad checkpoint stops the run before any position is played
    found = positions(num_positions, seed)
    views = [view for view, _ in found]
    moves = statistics.fmean(len(view.legal_pairs()) for view in views)
    cards_left = statistics.fmean(left for _, left in found)
    plies_after = max(cards_left - 1.0, 0.0)  # a rollout plays every card left after the candidate move
    obs_size = int(meta["observation_size"])
    feat_size = net.head[0][0].shape[1] - net.trunk[-1][0].shape[0]
    k = max(1, round(moves))
    one = ms_per_position(net, obs_size, feat_size, 1, k, reps=400)
    batched = ms_per_position(net, obs_size, feat_size, worlds * k, k, reps=5)
    fsearch, netsearch, alone = ms_per_decision(["fsearch", f"netsearch:{checkpoint}", checkpoint], views, seed)
    rows = [
        {"what": "fsearch (the default: 256 worlds)", "how": "measured", "ms": fsearch},
        {
            "what": f"netsearch:{checkpoint}",
            "how": "measured",
            "ms": netsearch,
        },
        {"what": f"{checkpoint} alone", "how": "measured", "ms": alone},
        {"what": "network arithmetic, one position", "how": "measured, batch 1", "ms": one},
        {
            "what": f"network as the leaf value of {worlds} worlds, one ply down",
            "how": f"{worlds} worlds x {moves:.2f} moves positions at the batched cost",
            "ms": worlds * moves * batched,
        },
        {
            "what": f"network as the rollout policy of {worlds} worlds",
            "how": f"{worlds} worlds x {moves:.2f} moves x {plies_after:.1f} plies positions at the batched cost",
            "ms": worlds * moves * plies_after * batched,
        },
    ]
    for row in rows:
        row["ratio_to_fsearch"] = row["ms"] / fsearch
        row["ratio_to_budget"] = row["ms"] / BUDGET_MS
    facts = {
        "positions": len(views),
        "mean_legal_moves": moves,
        "mean_cards_left": cards_left,
        "network_ms_per_position_batched": batched,
        "batch_positions": worlds * k,
    }
    return rows, facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint", default="zoo:standard-2p", help="a DMC checkpoint or zoo agent (default zoo:standard-2p)"
    )
    parser.add_argument("--positions", type=int, default=300, help="positions of heuristic self-play (default 300)")
    parser.add_argument(
        "--worlds", type=int, default=256, help="worlds of the search the network would sit in (default fsearch's 256)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", type=Path, help="write the measurement record (JSON) here")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.worlds < 1:
        parser.error("--positions and --worlds must be at least 1")
    command = shlex.join(["python", "benchmarks/net_search_cost.py", *(argv if argv is not None else sys.argv[1:])])
    load_start = load_average()
    try:
        rows, facts = measure(args.checkpoint, args.positions, args.worlds, args.seed)
    except (ValueError, OSError) as exc:  # a bad checkpoint or spec
        print(f"net_search_cost: {exc}", file=sys.stderr)
        return 2
    load = {"start": load_start, "end": load_average()}
    for row in rows:
        print(f"{row['what']:<58} {row['ms']:10.3f} ms  x{row['ratio_to_fsearch']:9.2f} fsearch  ({row['how']})")
    print(
        f"{facts['positions']} positions, {facts['mean_legal_moves']:.2f} legal moves and "
        f"{facts['mean_cards_left']:.1f} cards left on average; load {load}"
    )
    if args.record:
        record = result_record(
            command,
            rows,
            what=(
                "CPU ms per decision of fsearch, netsearch and the network alone, measured on the same "
                "positions of heuristic self-play (standard, 2 players), and of the network put into "
                "every sampled world of the search, derived from its batched arithmetic (lower bounds)"
            ),
            columns=[
                ("what", "what"),
                ("how", "how"),
                ("ms", "CPU ms per decision"),
                ("ratio_to_fsearch", "ratio to fsearch"),
                ("ratio_to_budget", f"ratio to {BUDGET_MS:g} ms"),
            ],
            load=load,
            machine="this project's shared 2-core CPU machine",
            measured=facts,
            facts=[
                {"what": "positions", "value": f"{facts['positions']}, heuristic self-play, more than one legal move"},
                {"what": "mean legal moves", "value": f"{facts['mean_legal_moves']:.2f}"},
                {"what": "mean cards left in hands and stock", "value": f"{facts['mean_cards_left']:.1f}"},
                {
                    "what": "network arithmetic per position, batched",
                    "value": f"{facts['network_ms_per_position_batched']:.4f} ms in batches of {facts['batch_positions']}",
                },
            ],
        )
        missing = missing_fields(record)
        if missing:
            raise ValueError(f"a result record needs {', '.join(missing)}")
        record = {"title": "A network inside the compiled search: the cost", "about": ABOUT, "records": [record]}
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {args.record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
