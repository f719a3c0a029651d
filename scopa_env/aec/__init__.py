"""The PettingZoo AEC environment (:mod:`scopa_env.aec.scopa_v0`), an environment layer module.

It plays the rules engine (:mod:`scopa_env.engine`) and, where they are built, calls the compiled
core's ahead-of-time helpers (:mod:`scopa_env.fast`) for its observations and legal moves.
"""
