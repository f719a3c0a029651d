"""The policy network of RLlib runs, as plain torch (no ray needed to play a checkpoint).

:class:`ActorCritic` maps the env's ``observation`` vector to action logits and a value.
The RLlib module (:mod:`train.rllib.module`) holds one as ``self.net`` and masks the
logits; a checkpoint agent (:mod:`train.rllib.agent`) loads the same state dict into a
bare :class:`ActorCritic` and plays the masked argmax.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

MASKED_LOGIT = torch.finfo(torch.float32).min
"""Logit of an illegal action: zero probability after the softmax, finite in the loss."""


def mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers with ReLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate policy and value MLPs (as SB3's ``net_arch=[...]``).

    Args:
        obs_size: width of the observation vector.
        num_actions: 41 ("select") or the move count ("move").
        hidden: hidden layer sizes of each MLP.
    """

    def __init__(self, obs_size: int, num_actions: int, hidden: list[int]) -> None:
        super().__init__()
        self.pi = mlp([obs_size, *hidden, num_actions])
        self.vf = mlp([obs_size, *hidden, 1])

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Logits with every action whose mask entry is 0 set to :data:`MASKED_LOGIT`."""
        return self.pi(obs).masked_fill(mask == 0, MASKED_LOGIT)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.vf(obs).squeeze(-1)

    @torch.no_grad()
    def greedy_action(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The legal action with the highest logit (what checkpoint agents play)."""
        o = torch.as_tensor(obs, dtype=torch.float32).unsqueeze(0)
        m = torch.as_tensor(np.asarray(mask, dtype=np.int8)).unsqueeze(0)
        return int(self.masked_logits(o, m).argmax(-1).item())


def net_from_state(state: dict, obs_size: int, num_actions: int, hidden: list[int]) -> ActorCritic:
    """An :class:`ActorCritic` from a state dict (numpy or torch values, keys with or without ``net.``)."""
    net = ActorCritic(obs_size, num_actions, hidden)
    tensors = {
        (k[len("net.") :] if k.startswith("net.") else k): torch.as_tensor(np.asarray(v)) for k, v in state.items()
    }
    net.load_state_dict(tensors)
    net.eval()
    return net
