"""Training, the layer above the agents: masked PPO and DQN (Stable-Baselines3 family), deep
Monte-Carlo (DMC) and the RLlib backend, against the baselines and self-play (``scopa train``).

The checkpoint agents (``ppo:PATH``, ``dqn:PATH``, ``dmc:PATH``, ``rllib:PATH``, ``zoo:NAME``,
``netsearch:CHECKPOINT``) are declared as ``scopa.agents`` entry points in ``pyproject.toml``;
:func:`agents.registry.make_agent` loads the one a spec names on first use. Importing this
package registers nothing and imports nothing else.
"""
