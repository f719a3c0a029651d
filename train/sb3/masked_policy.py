"""The masked actor-critic policy of PPO with a cheaper rollout step.

sb3-contrib's ``MaskableActorCriticPolicy.forward`` (what ``MaskablePPO`` calls once per
vector step while collecting a rollout) builds a ``MaskableCategorical``: a torch
``Categorical`` over the raw logits, then a second one over the masked logits, each with
torch's argument checks, and samples and scores through them. That is about 20 µs per env
step of Python around the network (8 envs, 41 actions). :class:`MaskedPolicy` does the same
tensor operations, in the same order, without the distribution objects:

=====================  ==============================================================
step                   as in ``MaskableCategorical``
=====================  ==============================================================
normalize              ``logits - logsumexp(logits)`` (the first ``Categorical``)
mask                   ``where(mask, logits, -1e8)`` (``apply_masking``)
normalize again        the second ``Categorical``'s ``logits`` (also without a mask)
probabilities          ``softmax`` of those (``Categorical.probs``)
action                 ``multinomial(probs, 1, replacement=True)`` (``Categorical.sample``),
                       or ``argmax(probs)`` when deterministic (``mode``)
log-probability        the normalized masked logit of the action (``log_prob``)
=====================  ==============================================================

so actions, values and log-probabilities are bit-identical to the stock policy's for the
same weights, inputs and torch random state (``tests/test_speed_paths.py`` holds them
equal). Everything else (the loss's ``evaluate_actions``, ``predict``, saving and loading)
is the stock policy's; the weights are the same module tree, so checkpoints of either load
into the other.

Where it differs: the stock distribution validates its arguments, so NaN logits (a
diverged network) raise ``ValueError`` naming the constraint; here ``multinomial`` raises
``RuntimeError`` ("probability tensor contains either inf, nan or element < 0") instead.
Action spaces other than ``Discrete`` take the stock path.
"""

from __future__ import annotations

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

MASKED_LOGIT = -1e8
"""The logit of an illegal action (sb3-contrib's ``HUGE_NEG``)."""


class MaskedPolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` whose rollout step skips the distribution objects
    (see the module docstring); a drop-in for ``"MlpPolicy"`` in ``MaskablePPO``."""

    def forward(
        self,
        obs: th.Tensor,
        deterministic: bool = False,
        action_masks: np.ndarray | th.Tensor | None = None,
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Actions, values and log-probabilities of a batch (the stock ``forward``'s results)."""
        if not isinstance(self.action_space, spaces.Discrete):
            return super().forward(obs, deterministic, action_masks)
        features = self.extract_features(obs)
        if self.share_features_extractor:
            latent_pi, latent_vf = self.mlp_extractor(features)
        else:
            pi_features, vf_features = features
            latent_pi = self.mlp_extractor.forward_actor(pi_features)
            latent_vf = self.mlp_extractor.forward_critic(vf_features)
        values = self.value_net(latent_vf)
        logits = self.action_net(latent_pi).view(-1, int(self.action_space.n))
        logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        if action_masks is not None:
            masks = th.as_tensor(action_masks, dtype=th.bool, device=logits.device).reshape(logits.shape)
            logits = th.where(masks, logits, th.tensor(MASKED_LOGIT, dtype=logits.dtype, device=logits.device))
        # Normalized a second time even without a mask, as the stock distribution does.
        logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        probs = th.softmax(logits, dim=-1)
        if deterministic:
            actions = th.argmax(probs, dim=1)
        else:
            actions = th.multinomial(probs, 1, True).T.reshape(-1)
        log_prob = logits.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob


__all__ = ["MASKED_LOGIT", "MaskedPolicy"]
