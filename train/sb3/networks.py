"""The masked DQN's Q-network, apart from its training loop so that loading a checkpoint
(:mod:`train.checkpoint`) needs torch and this module only."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class QNetwork(nn.Module):
    """MLP from the observation to one Q-value per action id."""

    def __init__(self, obs_size: int, num_actions: int, net_arch: list[int]) -> None:
        super().__init__()
        self.obs_size, self.num_actions, self.net_arch = obs_size, num_actions, list(net_arch)
        layers: list[nn.Module] = []
        width = obs_size
        for h in net_arch:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, num_actions))
        self.net = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)

    @torch.no_grad()
    def greedy_action(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The legal action with the highest Q-value (the :data:`~train.sb3.policy_agent.PolicyFn` of a DQN agent)."""
        q = self(torch.as_tensor(obs, dtype=torch.float32).unsqueeze(0))
        return int(masked_argmax(q, torch.as_tensor(mask, dtype=torch.bool).unsqueeze(0))[0])

    @torch.no_grad()
    def greedy_actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Per row, the legal action with the highest Q-value (a batch policy)."""
        q = self(torch.as_tensor(obs, dtype=torch.float32))
        return masked_argmax(q, torch.as_tensor(masks, dtype=torch.bool)).numpy()


def masked_argmax(q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row, the argmax of ``q`` over the actions where ``mask`` is True."""
    return q.masked_fill(~mask, -torch.inf).argmax(dim=1)
