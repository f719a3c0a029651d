"""The masked PPO RLModule (RLlib's new API stack) used by every RLlib run.

The module reads the env's Dict observation: ``observation`` feeds the networks and
``action_mask`` sets the logits of illegal actions to the float32 minimum. The masked
logits are what RLlib samples from (exploration), takes the argmax of (inference) and
uses in the PPO loss (train forward: ratio, entropy and KL), so illegal actions have
probability zero everywhere. The value head sees the observation only.

Imports ray: load it only where ray is installed.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.models.torch.torch_distributions import TorchCategorical

from train.rllib.network import ActorCritic


class MaskedActorCriticModule(TorchRLModule, ValueFunctionAPI):
    """PPO module over ``{"observation", "action_mask"}``; ``model_config = {"net_arch": [256, 256]}``."""

    def setup(self) -> None:
        obs_space = self.observation_space["observation"]
        hidden = list(self.model_config.get("net_arch", [256, 256]))
        self.net = ActorCritic(int(obs_space.shape[0]), int(self.action_space.n), hidden)
        self.action_dist_cls = TorchCategorical

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: self.net.masked_logits(obs["observation"], obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.net.value(batch[Columns.OBS]["observation"])

    def get_inference_action_dist_cls(self):
        return TorchCategorical

    def get_exploration_action_dist_cls(self):
        return TorchCategorical

    def get_train_action_dist_cls(self):
        return TorchCategorical
