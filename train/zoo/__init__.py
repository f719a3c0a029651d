"""The model zoo: trained agents shipped inside the package, as ``zoo:NAME`` agents.

Every entry is a folder here holding a DMC checkpoint (``weights.npz`` + ``meta.json``,
see :mod:`train.dmc_agent`: plain arrays and JSON, nothing is executed when loading) and
``card.json``, the model card: the preset and player count, the config and seed it was
trained from, the training CPU-hours, its measured results against the baselines (hand-point
margin with its 95% CI, game win rate, and the per-hand rates of primiera, settebello,
coins, cards and scope, on duplicate deals), and the SHA-256 of its weights file.

::

    scopa zoo                                   # what is here, with its results
    scopa eval zoo:standard-2p heuristic --games 1000
    scopa play --opponent zoo:standard-2p
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from train.dmc_agent import WEIGHTS_FILE, DmcAgent, load_dmc
from train.limits import read_json

ZOO_DIR = Path(__file__).resolve().parent
CARD_FILE = "card.json"


def names() -> list[str]:
    """Names of the shipped agents (sorted)."""
    return sorted(p.name for p in ZOO_DIR.iterdir() if (p / CARD_FILE).is_file())


def path_of(name: str) -> Path:
    """The checkpoint folder of ``zoo:name``; an unknown name lists the known ones."""
    if name not in names():
        raise ValueError(f"no zoo agent {name!r}; the zoo has: {', '.join(names()) or 'nothing'} (see `scopa zoo`)")
    return ZOO_DIR / name


def card(name: str) -> dict:
    """The model card of ``zoo:name``."""
    data = read_json(path_of(name) / CARD_FILE)
    if not isinstance(data, dict):
        raise ValueError(f"{path_of(name) / CARD_FILE}: expected a JSON object, got {type(data).__name__}")
    return data


def weights_sha256(folder: Path) -> str:
    """SHA-256 of a checkpoint's weights file (read in chunks: its size is not trusted yet)."""
    digest = hashlib.sha256()
    with (folder / WEIGHTS_FILE).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def checked_path(name: str) -> Path:
    """The checkpoint folder of ``zoo:name`` once its weights match the card's hash."""
    folder = path_of(name)
    expected = card(name).get("weights_sha256")
    if expected != weights_sha256(folder):
        raise ValueError(f"zoo:{name}: {WEIGHTS_FILE} does not match the SHA-256 on its card (a damaged install?)")
    return folder


def load_zoo_agent(name: str, seed=None) -> DmcAgent:
    """``zoo:name`` as an agent (its weights are checked against the card's hash first)."""
    net, meta = load_dmc(checked_path(name))
    return DmcAgent(net, meta, name=f"zoo:{name}", seed=seed)


def describe() -> str:
    """A table of the zoo: each agent, its game, and its margins against the baselines."""
    lines = []
    for name in names():
        c = card(name)
        results = ", ".join(
            f"{r['opponent']} {r['margin']:+.3f} [{r['margin_lo']:+.3f}, {r['margin_hi']:+.3f}]"
            for r in c.get("results", [])
        )
        lines.append(
            f"zoo:{name}  {c['num_players']} players, rules {c['rules']!r}, {c['cpu_hours']:.2f} CPU-hours "
            f"({c['config']}, seed {c['seed']})\n    points per hand vs {results or '(not measured)'}"
        )
    return "\n".join(lines) if lines else "the zoo is empty"
