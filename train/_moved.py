"""Old import paths of the training modules that moved into the learners' packages, kept working.

``train/`` was one flat folder; the modules of deep Monte-Carlo are now in :mod:`train.dmc` and those
of the Stable-Baselines3 family in :mod:`train.sb3`. ``import train.dmc_agent`` still gives
:mod:`train.dmc.agent` (the same module object, so classes and patches are shared), with a
:class:`DeprecationWarning` naming the new path, by the finder of :mod:`scopa_env._moved`; the
former module ``train/dmc.py`` is the package :mod:`train.dmc` itself, which still has its names.
"""

from __future__ import annotations

MOVED: dict[str, str] = {
    "train.dmc_actors": "train.dmc.actors",
    "train.dmc_agent": "train.dmc.agent",
    "train.dmc_config": "train.dmc.config",
    "train.dmc_ray": "train.dmc.workers",
    "train.exploit": "train.dmc.exploit",
    "train.net_search": "train.dmc.net_search",
    "train.callbacks": "train.sb3.callbacks",
    "train.card_net": "train.sb3.card_net",
    "train.dqn": "train.sb3.dqn",
    "train.fast": "train.sb3.fast",
    "train.masked_policy": "train.sb3.masked_policy",
    "train.networks": "train.sb3.networks",
    "train.policy_agent": "train.sb3.policy_agent",
    "train.ppo": "train.sb3.ppo",
    "train.pretrain": "train.sb3.pretrain",
    "train.sb3_import": "train.sb3.model_zip",
    "train.trainer": "train.sb3.trainer",
}
"""Old module path -> where it lives now."""
