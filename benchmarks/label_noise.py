"""Where a search label's noise lies, and how far a DMC network is from the search, move by move.

::

    python benchmarks/label_noise.py zoo:standard-2p --steps 150
    python benchmarks/label_noise.py runs/dmc_expert/latest --steps 150
    python benchmarks/label_noise.py zoo:french52-8p --steps 40 --labeller fsearch \
        --reference fsearch:worlds=1024 --chooser fsearch:worlds=32 --network runs/other/best

The checkpoint plays its games (its rules and player count, from its ``meta.json``) against the
compiled ``heuristic`` (256 games on the compiled core, whole games, the learner's seat drawn per
game). At every step, up to 48 positions with a choice are valued by the compiled search
(``search_values``): twice by the labeller (``--labeller``, default ``fsearch:worlds=64``,
independent worlds: the labeller of ``configs/dmc_expert.yaml``), once by the reference
(``--reference``, default ``fsearch:worlds=256``) and once by each ``--chooser``. The script
prints, per legal move (squared hand points):

* the noise of a label, half the squared difference of the two labellings, split into
  its *level* (the mean over the position's moves: how good the sampled worlds are for the mover)
  and its *differences* (what is left: the part that ranks the moves);
* the network's error against the reference, split the same way;
* the regret of each chooser against the reference (the reference's value of its best move minus
  its value of the chosen move, per position): the network, the labeller, each ``--network`` (another
  checkpoint of the game, scored on the same positions, with its paired difference from the first), and each
  ``--chooser`` (default, in the standard game: ``search``'s compiled twin,
  ``fsearch:worlds=64,ply_budget=2000,exact_cards=6``).

The reference is itself noisy, so the regrets are comparisons, not absolute numbers. ``--json``
writes the means and their 95% half-widths with the command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint", help="a DMC checkpoint folder or zoo:NAME")
    p.add_argument("--steps", type=int, default=150, help="actor steps of the 256 games (default 150)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--labeller", default="fsearch:worlds=64", help="the labelling search, run twice (its noise)")
    p.add_argument("--reference", default="fsearch:worlds=256", help="the search the regrets are measured against")
    p.add_argument(
        "--chooser",
        action="append",
        default=None,
        help="an fsearch spec whose regret is measured too, repeatable (default: the standard game's "
        "twin of search, fsearch:worlds=64,ply_budget=2000,exact_cards=6; none in other games)",
    )
    p.add_argument(
        "--network",
        action="append",
        default=[],
        help="another DMC checkpoint of the same game whose regret is measured on the same positions (the "
        "first checkpoint plays the games), with its difference from the first's, repeatable",
    )
    p.add_argument("--json", default=None, help="write the results (means, 95%% half-widths, command) here")
    args = p.parse_args(argv)

    from tqdm import tqdm

    from scopa_env.fast import BatchedScopa
    from scopa_env.fast.batch import max_threads
    from scopa_env.fast.features import heuristic_move_scores
    from scopa_env.fast.search import search_values
    from train.dmc.agent import flatten_legal, load_dmc_batch_policy
    from train.fast_eval import fsearch_config

    def load(spec: str):
        path = spec
        if path.startswith("zoo:"):
            from train.zoo import checked_path

            path = checked_path(path[4:])
        try:
            return load_dmc_batch_policy(path)
        except (ValueError, FileNotFoundError) as exc:
            p.error(str(exc))

    policy, meta = load(args.checkpoint)
    others = {}
    for spec in args.network:
        other, other_meta = load(spec)
        if (other_meta["rules"], other_meta["num_players"]) != (meta["rules"], meta["num_players"]):
            p.error(
                f"--network {spec} plays {other_meta['rules']} x {other_meta['num_players']}, not the checkpoint's game"
            )
        others[spec] = other
    standard = meta["rules"] == "standard" and int(meta["num_players"]) == 2
    choosers = args.chooser
    if choosers is None:
        choosers = ["fsearch:worlds=64,ply_budget=2000,exact_cards=6"] if standard else []
    try:
        searches = {"a": fsearch_config(args.labeller), "b": fsearch_config(args.labeller)}
        searches["ref"] = fsearch_config(args.reference)
        searches.update({f"c{k}": fsearch_config(spec) for k, spec in enumerate(choosers)})
    except ValueError as exc:
        p.error(str(exc))
    b = BatchedScopa(
        256,
        int(meta["num_players"]),
        meta["rules"],
        action_mode="move",
        episode="game",
        reward="points",
        opponent={"heuristic": 1.0},
        learner_seat="random",
        legal_width=128 if standard else None,
    )
    rng = np.random.default_rng(args.seed)
    b.reset(rng.integers(0, 2**62, 256))
    regrets = {"regret_net": "network", "regret_labeller": args.labeller}
    regrets.update({f"regret_c{k}": spec for k, spec in enumerate(choosers)})
    regrets.update({f"regret_n{k}": spec for k, spec in enumerate(others)})
    regrets.update({f"regret_n{k}_minus_net": f"{spec} - {args.checkpoint}" for k, spec in enumerate(others)})
    rows_out: dict[str, list[float]] = {k: [] for k in ("noise_level", "noise_diff", "net_level", "net_diff", *regrets)}
    threads = max_threads()
    hand_plane = b.setup.layout["hand"]
    held: list[int] = []
    """Per position, the cards in the mover's hand (the regrets by round, printed after the means)."""
    for _ in tqdm(range(args.steps), desc="positions", unit="step"):
        choice = np.flatnonzero(b.legal_count > 1)
        games = np.sort(rng.choice(choice, size=min(48, choice.size), replace=False))
        if games.size:
            rows, cols, ids = flatten_legal(b.legal_ids, b.legal_count)
            h = heuristic_move_scores(b)[rows, cols] if policy.features.heuristic else None
            q = np.full(b.legal_ids.shape, np.nan)
            feats = policy.features(b.obs, rows, ids, h)
            q[rows, cols] = policy.net.scores(b.obs, rows, feats)
            qs = []
            for other in others.values():
                qs.append(np.full(b.legal_ids.shape, np.nan))
                qs[-1][rows, cols] = other.net.scores(b.obs, rows, feats)
            v = {
                name: search_values(b, games, rng.integers(0, 2**62, games.size), C, threads)
                for name, C in searches.items()
            }
            for j, g in enumerate(games):
                n = b.legal_count[g]
                held.append(int(round(float(b.obs[g, hand_plane].sum()))))
                Q, A, B, R = q[g, :n], v["a"][j, :n], v["b"][j, :n], v["ref"][j, :n]
                e = (A - B) / np.sqrt(2.0)  # one labelling's noise
                rows_out["noise_level"].append(e.mean() ** 2)
                rows_out["noise_diff"].append(((e - e.mean()) ** 2).mean())
                d = Q - R
                rows_out["net_level"].append(d.mean() ** 2)
                rows_out["net_diff"].append(((d - d.mean()) ** 2).mean())
                chosen = {"regret_net": Q, "regret_labeller": A}
                chosen.update({f"regret_c{k}": v[f"c{k}"][j, :n] for k in range(len(choosers))})
                chosen.update({f"regret_n{k}": x[g, :n] for k, x in enumerate(qs)})
                for key, values in chosen.items():
                    rows_out[key].append(R.max() - R[int(np.argmax(values))])
                for k in range(len(qs)):
                    rows_out[f"regret_n{k}_minus_net"].append(rows_out[f"regret_n{k}"][-1] - rows_out["regret_net"][-1])
        b.step(policy(b.obs, b.legal_ids, b.legal_count, batch=b))
    n_positions = len(rows_out["noise_level"])
    print(f"{args.checkpoint}: {n_positions:,} positions with a choice; reference {args.reference}")
    summary = {}
    for key, values in rows_out.items():
        x = np.asarray(values, np.float64)
        mean, half = float(x.mean()), float(1.96 * x.std(ddof=1) / np.sqrt(len(x)))
        summary[key] = {"mean": round(mean, 5), "half_width": round(half, 5)}
        print(f"  {key:15s} {mean:.4f} +- {half:.4f}  {regrets.get(key, '')}")
    held_arr = np.asarray(held)
    by_hand = {}
    print("  by cards in the mover's hand (positions: regret of each chooser)")
    for k in sorted(set(held)):
        at = held_arr == k
        by_hand[str(k)] = {"positions": int(at.sum())} | {
            key: round(float(np.asarray(rows_out[key])[at].mean()), 5) for key in regrets
        }
        print(
            f"    {k:2d} cards: {int(at.sum()):6,}  "
            + "  ".join(f"{key} {by_hand[str(k)][key]:.4f}" for key in regrets)
        )
    if args.json:
        import json
        import shlex
        import sys

        out = {
            "command": "python benchmarks/label_noise.py " + shlex.join(sys.argv[1:] if argv is None else argv),
            "checkpoint": args.checkpoint,
            "rules": meta["rules"],
            "num_players": int(meta["num_players"]),
            "positions": n_positions,
            "labeller": args.labeller,
            "reference": args.reference,
            "choosers": {f"regret_c{k}": spec for k, spec in enumerate(choosers)},
            "networks": {f"regret_n{k}": spec for k, spec in enumerate(others)},
            "results": summary,
            "by_cards_in_hand": by_hand,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
