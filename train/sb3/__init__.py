"""Masked PPO and DQN, the Stable-Baselines3 family (``algo: ppo``, ``algo: dqn``) on the single-agent env.

``scopa train CONFIG`` hands a config with ``algo: ppo`` or ``dqn`` (the keys of
:class:`~train.config.TrainConfig`) to :func:`train.sb3.trainer.train`, the entry of this package;
docs/training.md is the guide. The run folder, its evaluations and checkpoints are shared with the
other learners (:mod:`train.run`, :mod:`train.checkpoint`, :mod:`train.env`). The modules:

===============================  =================================================================================
:mod:`~train.sb3.trainer`        ``train(cfg)``: seed, open the run folder (:class:`train.run.Run`), train, report
:mod:`~train.sb3.ppo`            masked PPO (sb3-contrib ``MaskablePPO``)
:mod:`~train.sb3.masked_policy`  PPO's masked actor-critic policy with a cheaper rollout step
:mod:`~train.sb3.card_net`       the card-wise policy network of ``policy_net: cards``
:mod:`~train.sb3.dqn`            masked DQN in plain torch
:mod:`~train.sb3.networks`       DQN's Q-network
:mod:`~train.sb3.callbacks`      the SB3 callback that drives the run, and the TensorBoard charts
:mod:`~train.sb3.fast`           ``vec_env: fast`` (the compiled core's vector env) and ``reward_shaping``
:mod:`~train.sb3.pretrain`       the warm start: behaviour cloning of a teacher (``pretrain``)
:mod:`~train.sb3.policy_agent`   the checkpoints as agents (``ppo:PATH``, ``dqn:PATH``)
:mod:`~train.sb3.model_zip`      reading a Stable-Baselines3 ``model.zip`` as weights only
===============================  =================================================================================

Importing the package imports none of them (nor torch).
"""
