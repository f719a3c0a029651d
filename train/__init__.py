"""Training: masked PPO and masked DQN against the baselines and self-play (``scopa train``).

Importing the package registers the ``ppo:PATH``, ``dqn:PATH`` and ``rllib:PATH`` checkpoint
agents in :mod:`agents.registry` (torch is imported only when one is loaded; ray never).
"""

from train.policy_agent import register as _register
from train.rllib.agent import register as _register_rllib

_register()
_register_rllib()
