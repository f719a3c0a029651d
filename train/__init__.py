"""Training: masked PPO and masked DQN against the baselines and self-play (``scopa train``).

Importing the package registers the ``ppo:PATH``, ``dqn:PATH``, ``dmc:PATH`` and ``rllib:PATH``
checkpoint agents, the shipped ``zoo:NAME`` agents and ``netsearch:CHECKPOINT`` (the compiled
search mixed with a DMC network, :mod:`train.net_search`) in :mod:`agents.registry` (torch is
imported only when a PPO or DQN checkpoint is loaded; DMC and zoo agents run on numpy; ray never).
"""

from train.dmc_agent import register as _register_dmc
from train.net_search import register as _register_net_search
from train.policy_agent import register as _register
from train.rllib.agent import register as _register_rllib
from train.zoo import register as _register_zoo

_register()
_register_rllib()
_register_dmc()
_register_zoo()
_register_net_search()
