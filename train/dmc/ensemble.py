"""One DMC network that scores every move with the mean of several networks' scores.

::

    python -m train.dmc.ensemble OUT CHECKPOINT CHECKPOINT [CHECKPOINT ...]

Each ``CHECKPOINT`` is a DMC checkpoint folder, a run folder (its ``best``) or ``zoo:NAME``, all of one
game (rules and players) and one set of move features, with as many trunk layers and as many head
layers as each other (the widths may differ). ``OUT`` becomes a plain DMC checkpoint (``weights.npz``
and ``meta.json``) whose network is the members side by side: their trunks stacked on the one
observation, their heads block-diagonal on their own trunk's output and the shared move features,
and a last layer that averages their scores. It plays as ``dmc:OUT`` wherever a DMC network plays,
at the cost of all the members' layers; its score of a move is the members' mean to float32
rounding (``tests/test_dmc_ensemble.py``). Networks with an endgame network are refused (its
override would not average).

``meta.json`` keeps each member's path, timestep and CPU-hours under ``ensemble``, and its own
``cpu_hours`` is their sum (counting each member's start where its meta.json names one): the cost of
training every member.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from train.checkpoint import write_meta
from train.dmc.agent import WEIGHTS_FILE, _layers, load_dmc, load_dmc_weights
from train.dmc.endgame import PREFIX as ENDGAME
from train.zoo import dmc_folder

SAME = ("algo", "feature_version", "rules", "num_players", "action_mode", "observation_size", "heuristic_features")
"""The meta.json entries every member must share: the game and the move features the network reads."""


def block_diagonal(blocks: list[np.ndarray]) -> np.ndarray:
    """The matrices of ``blocks`` along the diagonal of one, zero elsewhere."""
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), np.float32)
    r = c = 0
    for b in blocks:
        out[r : r + b.shape[0], c : c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def merge(members: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The weights of one network whose score is the mean of ``members``' (each ``trunk.{i}``/``head.{i}``)."""
    trunks = [_layers(w, "trunk") for w in members]
    heads = [_layers(w, "head") for w in members]
    if len({len(t) for t in trunks}) != 1 or len({len(h) for h in heads}) != 1:
        raise ValueError("the networks must have as many trunk layers and as many head layers as each other")
    out: dict[str, np.ndarray] = {}
    for i in range(len(trunks[0])):
        weights = [t[i][0] for t in trunks]
        out[f"trunk.{i}.weight"] = np.concatenate(weights) if i == 0 else block_diagonal(weights)
        out[f"trunk.{i}.bias"] = np.concatenate([t[i][1] for t in trunks])
    widths = [t[-1][0].shape[0] for t in trunks]
    last = len(heads[0]) - 1
    for i in range(last + 1):
        weights = [h[i][0] for h in heads]
        if i == 0:  # each member's first head layer reads its own trunk's output, then the shared move features
            mixed = block_diagonal([w[:, :width] for w, width in zip(weights, widths)])
            weight = np.concatenate([mixed, np.concatenate([w[:, width:] for w, width in zip(weights, widths)])], 1)
        else:
            weight = block_diagonal(weights)
        bias = np.concatenate([h[i][1] for h in heads])
        if i == last:  # one score: the mean of the members' (their rows summed, each in its own columns)
            weight = weight.sum(0, keepdims=True) / len(members)
            bias = np.array([bias.mean()], np.float32)
        out[f"head.{i}.weight"] = np.ascontiguousarray(weight, np.float32)
        out[f"head.{i}.bias"] = np.ascontiguousarray(bias, np.float32)
    return out


def cpu_hours(meta: dict) -> float:
    """A member's training CPU-hours, its start's included where its meta.json says."""
    value = meta.get("cpu_hours_with_init", meta.get("cpu_hours", 0.0))
    return float(value) if isinstance(value, (int, float)) else 0.0


def build(out: str | Path, specs: list[str]) -> dict:
    """Write the ensemble of ``specs`` to ``out`` (made; an existing checkpoint there is refused); its meta."""
    if len(specs) < 2:
        raise ValueError("name at least two checkpoints to average")
    out = Path(out)
    if (out / WEIGHTS_FILE).exists():
        raise ValueError(f"{str(out)!r} already holds a checkpoint: name a new folder")
    folders = [dmc_folder(s) for s in specs]
    loaded = [load_dmc_weights(f) for f in folders]
    first = loaded[0][1]
    for spec, (_, meta) in zip(specs, loaded):
        if ENDGAME in meta:
            raise ValueError(f"{spec}: has an endgame network, whose override would not average")
        differ = [k for k in SAME if meta.get(k) != first.get(k)]
        if differ:
            raise ValueError(f"{spec}: its {', '.join(differ)} differ from {specs[0]}'s; the members must match")
    weights = merge([w for w, _ in loaded])
    meta = {k: first[k] for k in SAME if k in first}
    meta |= {
        "trunk": [int(weights[f"trunk.{i}.bias"].shape[0]) for i in range(len(_layers(weights, "trunk")))],
        "net_arch": [int(weights[f"head.{i}.bias"].shape[0]) for i in range(len(_layers(weights, "head")) - 1)],
        "run": "ensemble",
        "cpu_hours": round(sum(cpu_hours(m) for _, m in loaded), 4),
        "ensemble": [
            {"checkpoint": s, "timestep": m.get("timestep"), "cpu_hours": cpu_hours(m)}
            for s, (_, m) in zip(specs, loaded)
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / WEIGHTS_FILE, **weights)
    write_meta(out, meta)
    load_dmc(out)  # the written checkpoint reads back as any other
    return meta


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.dmc.ensemble", description=__doc__.splitlines()[0])
    p.add_argument("out", help="the new checkpoint folder")
    p.add_argument("checkpoints", nargs="+", help="DMC checkpoint folders, run folders or zoo:NAME (two or more)")
    args = p.parse_args(argv)
    try:
        meta = build(args.out, args.checkpoints)
    except (ValueError, FileNotFoundError) as exc:
        p.exit(2, f"error: {exc}\n")
    print(
        json.dumps(
            {"out": args.out, "trunk": meta["trunk"], "net_arch": meta["net_arch"], "cpu_hours": meta["cpu_hours"]}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
