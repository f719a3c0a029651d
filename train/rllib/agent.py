"""RLlib-trained policies as agents: ``rllib:PATH`` in :func:`agents.registry.make_agent`.

A checkpoint is a folder (``runs/<name>/best``, ``latest``, ``pool/iter_<N>``) with
``meta.json`` (``algo: rllib-ppo``, player count, rules, action mode, layer sizes, which
module plays each seat) and ``model.pt`` (the torch state dict of each module's
:class:`~train.rllib.network.ActorCritic`). Loading one needs torch only, not ray, so
``scopa eval rllib:runs/x greedy`` and ``scopa play`` work on any machine with the
``train`` extra. ``PATH`` may also be a run folder (its ``best`` checkpoint is used).

The agent plays the masked argmax of the policy from its seat's
:class:`~scopa_env.engine.game.PlayerView` (through :class:`train.sb3.policy_agent.PolicyAgent`).
"""

from __future__ import annotations

import json
from pathlib import Path

from train.sb3.policy_agent import META_FILE, PolicyAgent, find_checkpoint

ALGO = "rllib-ppo"
MODEL_FILE = "model.pt"


class RllibPolicyAgent(PolicyAgent):
    """A :class:`PolicyAgent` that picks the network of its seat (one per seat, or one shared).

    Args:
        nets: module id -> :class:`~train.rllib.network.ActorCritic`.
        seat_modules: the module id of each seat.
        num_players, rules, action_mode, name, seed: as :class:`PolicyAgent`.
    """

    def __init__(
        self, nets: dict, seat_modules: list[str], num_players: int, rules, action_mode: str, name: str, seed=None
    ) -> None:
        self.nets = nets
        self.seat_modules = list(seat_modules)
        super().__init__(nets[self.seat_modules[0]].greedy_action, num_players, rules, action_mode, name, seed)

    def act(self, view):
        self.policy = self.nets[self.seat_modules[view.seat % len(self.seat_modules)]].greedy_action
        return super().act(view)

    def __repr__(self) -> str:
        return f"RllibPolicyAgent({self.name})"


def save_checkpoint(folder: Path, states: dict[str, dict], meta: dict) -> None:
    """Write ``model.pt`` (module id -> state dict) and ``meta.json`` into ``folder``."""
    import numpy as np
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    tensors = {mid: {k: torch.as_tensor(np.asarray(v)) for k, v in st.items()} for mid, st in states.items()}
    torch.save(tensors, folder / MODEL_FILE)
    (folder / META_FILE).write_text(json.dumps({"algo": ALGO, **meta}, indent=2) + "\n")


def agent_from_states(states: dict[str, dict], meta: dict, name: str, seed=None) -> RllibPolicyAgent:
    """An agent from in-memory module states (self-play snapshots) or a loaded ``model.pt``."""
    from train.rllib.network import net_from_state

    nets = {
        mid: net_from_state(st, meta["observation_size"], meta["num_actions"], meta["net_arch"])
        for mid, st in states.items()
    }
    return RllibPolicyAgent(
        nets, meta["seat_modules"], meta["num_players"], meta["rules"], meta["action_mode"], name=name, seed=seed
    )


def load_rllib_agent(path: str, seed=None) -> RllibPolicyAgent:
    """The agent of an RLlib checkpoint folder (or of a run folder's ``best``).

    Raises:
        FileNotFoundError: no checkpoint there.
        ValueError: the folder holds another kind of checkpoint, or a broken one.
    """
    folder = find_checkpoint(path)
    meta = json.loads((folder / META_FILE).read_text())
    if meta.get("algo") != ALGO:
        algo = meta.get("algo", "?")
        raise ValueError(f"{str(path)!r} is a {algo} checkpoint, not an RLlib one: use '{algo}:{path}'")
    if not (folder / MODEL_FILE).is_file():
        raise FileNotFoundError(f"{str(path)!r} has no {MODEL_FILE}")
    import torch

    try:
        states = torch.load(folder / MODEL_FILE, map_location="cpu", weights_only=True)
        return agent_from_states(states, meta, name=f"rllib:{path}", seed=seed)
    except (RuntimeError, KeyError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{str(path)!r} is not a loadable RLlib checkpoint: {first}") from None
