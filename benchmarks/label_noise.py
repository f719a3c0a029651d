"""Where a search label's noise lies, and how far a DMC network is from the search, move by move.

::

    python benchmarks/label_noise.py zoo:standard-2p --steps 150
    python benchmarks/label_noise.py runs/dmc_expert/latest --steps 150

The checkpoint plays its games against the compiled ``heuristic`` (256 games on the compiled core,
whole games, the learner's seat drawn per game). At every step, up to 48 positions with a choice
are valued three times by the compiled search (``search_values``): twice with 64 worlds
(``fsearch:worlds=64``, independent worlds: the labeller of ``configs/dmc_expert.yaml``) and once
with 256 worlds (the reference). The script prints, per legal move (squared hand points):

* the noise of a 64-world label, half the squared difference of the two labellings, split into
  its *level* (the mean over the position's moves: how good the sampled worlds are for the mover)
  and its *differences* (what is left: the part that ranks the moves);
* the network's error against the reference, split the same way;
* the regret of each chooser against the reference (the reference's value of its best move minus
  its value of the chosen move, per position): the network, a 64-world search, and ``search``'s
  compiled twin (``fsearch:worlds=64,ply_budget=2000,exact_cards=6``).

The 256-world reference is itself noisy, so the regrets are comparisons, not absolute numbers.
"""

from __future__ import annotations

import argparse

import numpy as np


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint", help="a DMC checkpoint folder or zoo:NAME (standard rules, 2 players)")
    p.add_argument("--steps", type=int, default=150, help="actor steps of the 256 games (default 150)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    from tqdm import tqdm

    from scopa_env.fast import BatchedScopa
    from scopa_env.fast.batch import max_threads
    from scopa_env.fast.features import heuristic_move_scores
    from scopa_env.fast.search import search_values
    from train.dmc.agent import flatten_legal, load_dmc_batch_policy
    from train.fast_eval import fsearch_config

    path = args.checkpoint
    if path.startswith("zoo:"):
        from train.zoo import checked_path

        path = checked_path(path[4:])
    try:
        policy, meta = load_dmc_batch_policy(path)
    except ValueError as exc:
        p.error(str(exc))
    if meta["rules"] != "standard" or int(meta["num_players"]) != 2:
        p.error(f"{args.checkpoint}: the script reads standard 2-player checkpoints, not {meta['rules']!r}")
    b = BatchedScopa(
        256,
        2,
        "standard",
        action_mode="move",
        episode="game",
        reward="points",
        opponent={"heuristic": 1.0},
        learner_seat="random",
        legal_width=128,
    )
    rng = np.random.default_rng(args.seed)
    b.reset(rng.integers(0, 2**62, 256))
    searches = {
        name: fsearch_config(spec)
        for name, spec in (
            ("a", "fsearch:worlds=64"),
            ("b", "fsearch:worlds=64"),
            ("ref", "fsearch:worlds=256"),
            ("twin", "fsearch:worlds=64,ply_budget=2000,exact_cards=6"),
        )
    }
    rows_out: dict[str, list[float]] = {
        k: [] for k in ("noise_level", "noise_diff", "net_level", "net_diff", "regret_net", "regret_64", "regret_twin")
    }
    threads = max_threads()
    for _ in tqdm(range(args.steps), desc="positions", unit="step"):
        choice = np.flatnonzero(b.legal_count > 1)
        games = np.sort(rng.choice(choice, size=min(48, choice.size), replace=False))
        if games.size:
            rows, cols, ids = flatten_legal(b.legal_ids, b.legal_count)
            h = heuristic_move_scores(b)[rows, cols] if policy.features.heuristic else None
            q = np.full(b.legal_ids.shape, np.nan)
            q[rows, cols] = policy.net.scores(b.obs, rows, policy.features(b.obs, rows, ids, h))
            v = {
                name: search_values(b, games, rng.integers(0, 2**62, games.size), C, threads)
                for name, C in searches.items()
            }
            for j, g in enumerate(games):
                n = b.legal_count[g]
                Q, A, B, R, T = q[g, :n], v["a"][j, :n], v["b"][j, :n], v["ref"][j, :n], v["twin"][j, :n]
                e = (A - B) / np.sqrt(2.0)  # one labelling's noise
                rows_out["noise_level"].append(e.mean() ** 2)
                rows_out["noise_diff"].append(((e - e.mean()) ** 2).mean())
                d = Q - R
                rows_out["net_level"].append(d.mean() ** 2)
                rows_out["net_diff"].append(((d - d.mean()) ** 2).mean())
                for key, values in (("regret_net", Q), ("regret_64", A), ("regret_twin", T)):
                    rows_out[key].append(R.max() - R[int(np.argmax(values))])
        b.step(policy(b.obs, b.legal_ids, b.legal_count, batch=b))
    print(f"{args.checkpoint}: {len(rows_out['noise_level']):,} positions with a choice")
    for key, values in rows_out.items():
        x = np.asarray(values, np.float64)
        print(f"  {key:12s} {x.mean():.4f} +- {1.96 * x.std(ddof=1) / np.sqrt(len(x)):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
