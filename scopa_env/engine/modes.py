"""The options every environment takes: its action mode, its episode and its reward.

One list of each for the AEC env (:mod:`scopa_env.aec.scopa_v0`), the compiled core
(:class:`scopa_env.fast.batch.BatchedScopa`), the OpenSpiel game (:mod:`scopa_env.openspiel`)
and the training envs and configs above them; :meth:`scopa_env.engine.setup.GameSetup.of` checks them,
once, for every entry point that builds a game.

===============  ==========================================================================
option           values
===============  ==========================================================================
``action_mode``  ``"move"``: one action id per (played card, captured set), see
                 :mod:`scopa_env.engine.actions`; ``"select"``: the card to play, then the
                 cards to capture one at a time
``episode``      ``"game"``: hands until a side reaches the target; ``"hand"``: one hand
``reward``       ``"game"``: +1 to the winning side, -1 to the others at the episode's end;
                 ``"points"``: at every hand end, the side's hand points minus the mean of
                 the others'
===============  ==========================================================================

Each environment picks its own default (the AEC env ``"move"``, ``"game"``, ``"game"``).
"""

from __future__ import annotations

ACTION_MODES = ("move", "select")
"""Values of ``action_mode``."""
EPISODES = ("game", "hand")
"""Values of ``episode``."""
REWARDS = ("game", "points")
"""Values of ``reward``."""
