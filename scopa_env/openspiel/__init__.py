"""The engine as an OpenSpiel game (``python_scopa``), an environment layer package (the ``openspiel`` extra).

Importing :mod:`scopa_env.openspiel.game` imports ``pyspiel`` and registers the game with it.
"""
