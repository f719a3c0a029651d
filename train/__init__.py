"""Training: masked PPO and masked DQN against the baselines and self-play (``scopa train``).

Importing the package registers the ``ppo:PATH`` and ``dqn:PATH`` checkpoint agents in
:mod:`agents.registry` (torch is imported only when one is loaded).
"""

from train.policy_agent import register as _register

_register()
