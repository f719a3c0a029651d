"""The model zoo: trained agents shipped inside the package, as ``zoo:NAME`` agents.

Every entry is a folder here holding a checkpoint as ``weights.npz`` + ``meta.json`` (plain
arrays and JSON, nothing is executed when loading): a DMC network (:mod:`train.dmc.agent`), or a
PPO or DQN network of the Stable-Baselines3 path (:mod:`train.zoo.policies`, the card's
``algo`` says which), and ``card.json``, the model card: the preset and player count, the config and seed it was
trained from, the training CPU-hours, its measured results against the baselines (hand-point
margin with its 95% CI, game win rate, and the per-hand rates of primiera, settebello,
coins, cards and scope, on duplicate deals), and the SHA-256 of its weights file.

::

    scopa zoo                                   # what is here, with its results
    scopa eval zoo:standard-2p heuristic --games 1000
    scopa eval --fast zoo:ppo-standard-2p heuristic --games 10000
    scopa play --opponent zoo:standard-2p

An entry is refused, in one line and before any game, for a game it was not trained for
(another preset or player count): the agents' ``mismatch`` says why.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from train.dmc.agent import WEIGHTS_FILE, DmcAgent, find_dmc_checkpoint, load_dmc
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


def dmc_folder(spec: str | Path) -> Path:
    """The checkpoint folder of ``zoo:NAME`` (its hash checked against the card) or of a checkpoint or run folder."""
    if isinstance(spec, str) and spec.startswith("zoo:"):
        return checked_path(spec[4:])
    return find_dmc_checkpoint(spec)


def algo_of(name: str) -> str:
    """The algorithm of ``zoo:name``'s network: ``"dmc"``, ``"ppo"`` or ``"dqn"`` (its card says)."""
    algo = card(name).get("algo", "dmc")
    if algo not in ("dmc", "ppo", "dqn"):
        raise ValueError(f"zoo:{name}: the card's algo is {algo!r}, not dmc, ppo or dqn")
    return algo


def load_zoo_agent(name: str, seed=None):
    """``zoo:name`` as an agent (its weights are checked against the card's hash first): a
    :class:`~train.dmc.agent.DmcAgent`, or a :class:`~train.sb3.policy_agent.PolicyAgent` for a PPO or
    DQN entry."""
    folder = checked_path(name)
    if algo_of(name) == "dmc":
        net, meta = load_dmc(folder)
        agent = DmcAgent(net, meta, name=f"zoo:{name}", seed=seed)
        agent.weights_sha256 = card(name)["weights_sha256"]
        return agent
    from train.sb3.policy_agent import PolicyAgent
    from train.zoo.policies import load_network, single_policy

    net, meta = load_network(folder)
    agent = PolicyAgent(
        single_policy(net, meta),
        meta["num_players"],
        meta["rules"],
        meta["action_mode"],
        name=f"zoo:{name}",
        seed=seed,
    )
    agent.weights_sha256 = card(name)["weights_sha256"]
    return agent


def load_zoo_batch_policy(name: str):
    """``(policy, meta)`` of a PPO or DQN entry as a batch policy over "select"- or "move"-mode
    observations and dense masks (what :func:`train.fast_eval.evaluate_fast` plays)."""
    if algo_of(name) == "dmc":
        raise ValueError(f"zoo:{name} is a DMC network; load it with train.dmc.agent.load_dmc_batch_policy")
    from train.zoo.policies import batch_policy, load_network

    net, meta = load_network(checked_path(name))
    return batch_policy(net, meta), meta


def default_for(rules: str, num_players: int) -> str | None:
    """The zoo's agent for a game (a preset name and player count): the entry with the highest
    margin against ``heuristic`` on its card (ties: the first name); ``None`` when none plays it."""
    best, best_margin = None, -float("inf")
    for name in names():
        c = card(name)
        if c.get("rules") != rules or c.get("num_players") != num_players:
            continue
        margin = next((r["margin"] for r in c.get("results", []) if r.get("opponent") == "heuristic"), -1e9)
        if best is None or margin > best_margin:
            best, best_margin = name, margin
    return best


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
            f"zoo:{name}  {c.get('algo', 'dmc')}, {c['num_players']} players, rules {c['rules']!r}, "
            f"{c['cpu_hours']:.2f} CPU-hours "
            f"({c['config']}, seed {c['seed']})\n    points per hand vs {results or '(not measured)'}"
        )
    return "\n".join(lines) if lines else "the zoo is empty"
