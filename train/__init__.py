"""Training, the layer above the agents: masked PPO and DQN (Stable-Baselines3 family), deep
Monte-Carlo (DMC) and the RLlib backend, against the baselines and self-play (``scopa train``).

Each learner has its package, entered through one short module: :mod:`train.dmc` (``algo: dmc``,
:func:`train.dmc.dmc_dispatch`), :mod:`train.sb3` (``algo: ppo`` and ``dqn``,
:func:`train.sb3.trainer.train`) and :mod:`train.rllib` (``backend: rllib``, :func:`train.rllib.run`);
:mod:`train.zoo` holds the shipped networks. What they share stays here: the command line
(:mod:`train.cli`), the config (:mod:`train.config`) and its size limits (:mod:`train.limits`), the
single-agent env (:mod:`train.env`) and its opponents (:mod:`train.opponents`), the run folder
(:mod:`train.run`), checkpoints (:mod:`train.checkpoint`), evaluation (:mod:`train.evaluation`,
:mod:`train.fast_eval`), the report (:mod:`train.report`) and dataset batches (:mod:`train.dataset`).

The module paths of the former flat layout (``train.dmc_agent``, ``train.ppo``, ...) still import, as
aliases of the modules that moved (:mod:`train._moved`, one table, with a :class:`DeprecationWarning`
naming the new path), and ``train.dmc`` still has the names of the former ``train/dmc.py``.

The checkpoint agents (``ppo:PATH``, ``dqn:PATH``, ``dmc:PATH``, ``rllib:PATH``, ``zoo:NAME``,
``netsearch:CHECKPOINT``) are declared as ``scopa.agents`` entry points in ``pyproject.toml``;
:func:`agents.registry.make_agent` loads the one a spec names on first use. Importing this
package registers nothing and imports nothing else but the rules engine's package (whose
:mod:`scopa_env._moved` keeps the old paths).
"""

from scopa_env import _moved as _aliases
from train._moved import MOVED

_aliases.install(MOVED)
