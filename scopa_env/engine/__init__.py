"""The rules engine, the bottom layer: plain Python over a small game state.

* :mod:`~scopa_env.engine.cards`: card ids, suits, ranks, parsing and formatting;
* :mod:`~scopa_env.engine.rules`: the frozen :class:`~scopa_env.engine.rules.Rules`, capture rules, legal moves;
* :mod:`~scopa_env.engine.presets`: the named variants of the rule texts;
* :mod:`~scopa_env.engine.scoring`: a hand's score, primiera, the scoring extras;
* :mod:`~scopa_env.engine.game`: the game state machine (deal, moves, hands, games);
* :mod:`~scopa_env.engine.actions`: the action ids of the "move" and "select" modes;
* :mod:`~scopa_env.engine.modes`: the options every environment takes (action mode, episode, reward);
* :mod:`~scopa_env.engine.setup`: :class:`GameSetup`, one checked game (rules, players, modes) and what follows from it;
* :mod:`~scopa_env.engine.observation`: what one seat may see, as a float32 vector;
* :mod:`~scopa_env.engine.render`: text rendering of games and hand results.

Nothing here imports gymnasium, PettingZoo, numba or torch; everything above calls into it.
"""

# The named variants add themselves to ``rules.PRESETS`` when ``presets`` is imported; importing
# any engine module runs this file first, so the registry is always complete.
from scopa_env.engine import presets as _presets  # noqa: E402, F401
