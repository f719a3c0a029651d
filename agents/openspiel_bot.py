"""OpenSpiel bots as kit agents: ``make_agent("openspiel:ismcts")``.

Spec grammar (after the ``openspiel:`` prefix)::

    ismcts                         OpenSpiel's information-set MCTS with its defaults here
    ismcts:key=value,key=value     with options (ints, floats, true/false)

==================  ==========================================================================
option              meaning (default)
==================  ==========================================================================
``simulations``     ISMCTS simulations per decision (``100``)
``uct_c``           exploration constant of the tree policy (``2.0``)
``rollouts``        random rollouts per leaf of OpenSpiel's ``RandomRolloutEvaluator`` (``1``)
``world_samples``   distinct determinized worlds per decision, ``-1`` unlimited (``-1``)
``final``           ``"max_visit"`` (most visited move) or ``"max_value"`` (``"max_visit"``)
==================  ==========================================================================

The bot searches the hand in progress as the OpenSpiel game ``python_scopa`` with
``episode="hand"`` and ``reward="points"`` (:mod:`scopa_env.openspiel.game`): its values
are hand-point margins, like those of the ``search`` agent. Each decision starts from
:func:`~scopa_env.openspiel.resample.state_from_view` of the agent's
:class:`~scopa_env.engine.game.PlayerView`; ISMCTS then redraws the hidden cards per simulation
with the kit's determinization (``resample_from_infostate``). The bot's random state, the
rollouts' and the redraws' come from the agent's seed, so a seed gives the same moves.

The agent plays "move" mode: the chosen action id is decoded to a
:class:`~scopa_env.engine.rules.Move`. ``seconds_per_move`` holds every decision's time (kept
across resets, for reports): CPU time of this process (``time.process_time``), as the
evaluation harness counts it, so other load on the machine does not inflate it.

Needs the ``openspiel`` extra (``pip install -e '.[openspiel]'``); without it the spec
fails with a one-line ``ValueError`` naming the extra.
"""

from __future__ import annotations

import time

import numpy as np

from agents.base import Agent
from agents.registry import parse_options
from scopa_env.engine.game import PlayerView
from scopa_env.engine.rules import Move, Rules, get_rules

PREFIX = "openspiel"
BOTS = ("ismcts",)
"""Bots the ``openspiel:`` prefix knows."""
FINAL_POLICIES = ("max_visit", "max_value")
INSTALL_HINT = "install the 'openspiel' extra: pip install -e '.[openspiel]'"


class ISMCTSAgent(Agent):
    """OpenSpiel's ISMCTS bot (``open_spiel.python.algorithms.ismcts``) behind the kit's agent interface.

    Args:
        simulations, uct_c, rollouts, world_samples, final: see the module docstring.
        seed: seeds the bot, its rollouts and its redraws of the hidden cards.
    """

    name = "openspiel:ismcts"

    def __init__(
        self,
        simulations: int = 100,
        uct_c: float = 2.0,
        rollouts: int = 1,
        world_samples: int = -1,
        final: str = "max_visit",
        seed: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(seed)
        for key, value, low in (("simulations", simulations, 1), ("rollouts", rollouts, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"openspiel:ismcts option {key} must be an int >= {low}, got {value!r}")
        if (
            isinstance(world_samples, bool)
            or not isinstance(world_samples, int)
            or world_samples in (0,)
            or world_samples < -1
        ):
            raise ValueError(f"openspiel:ismcts option world_samples must be -1 or an int >= 1, got {world_samples!r}")
        if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)) or uct_c < 0:
            raise ValueError(f"openspiel:ismcts option uct_c must be a number >= 0, got {uct_c!r}")
        if final not in FINAL_POLICIES:
            raise ValueError(f"openspiel:ismcts option final must be one of {FINAL_POLICIES}, got {final!r}")
        self.simulations = simulations
        self.uct_c = float(uct_c)
        self.rollouts = rollouts
        self.world_samples = world_samples
        self.final = final
        self.seconds_per_move: list[float] = []
        self._games: dict = {}

    def _game(self, rules: Rules, num_players: int):
        """The ``python_scopa`` hand game for these rules (cached)."""
        key = (rules, num_players)
        if key not in self._games:
            import pyspiel

            import scopa_env.openspiel.game  # noqa: F401 (registers python_scopa)

            if get_rules(rules.name) != rules:
                raise ValueError(f"rules {rules.name!r} cannot be loaded by name; the OpenSpiel game needs a preset")
            self._games[key] = pyspiel.load_game(
                "python_scopa", {"rules": rules.name, "players": num_players, "episode": "hand", "reward": "points"}
            )
        return self._games[key]

    def act(self, view: PlayerView) -> Move:
        from open_spiel.python.algorithms import ismcts, mcts

        from scopa_env.engine.actions import move_enumeration
        from scopa_env.openspiel.resample import state_from_view

        start = time.process_time()
        moves = view.legal_moves()
        if not moves:
            raise ValueError(f"player_{view.seat} has no legal move (is it their turn?)")
        if len(moves) == 1:
            self.seconds_per_move.append(time.process_time() - start)
            return moves[0]
        game = self._game(view.rules, view.num_players)
        state = state_from_view(game, view, self.rng)
        random_state = np.random.RandomState(int(self.rng.integers(2**31)))
        bot = ismcts.ISMCTSBot(
            game,
            mcts.RandomRolloutEvaluator(self.rollouts, random_state),
            self.uct_c,
            self.simulations,
            max_world_samples=self.world_samples,
            random_state=random_state,
            final_policy_type=(
                ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT
                if self.final == "max_visit"
                else ismcts.ISMCTSFinalPolicyType.MAX_VALUE
            ),
        )
        bot.set_resampler(lambda s, player: s.resample_from_infostate(player, random_state.uniform))
        action = int(bot.step(state))
        move = move_enumeration(view.rules).decode(action, view.table)
        self.seconds_per_move.append(time.process_time() - start)
        return move

    def __repr__(self) -> str:
        return f"ISMCTSAgent(simulations={self.simulations}, uct_c={self.uct_c}, rollouts={self.rollouts})"


def make_openspiel_agent(argument: str, seed=None, **kwargs) -> Agent:
    """Factory of ``openspiel:BOT[:key=value,...]`` specs (see the module docstring)."""
    bot, _, rest = argument.partition(":")
    bot = bot.strip()
    if bot not in BOTS:
        raise ValueError(f"unknown OpenSpiel bot {bot!r} in 'openspiel:{argument}'; known: {', '.join(BOTS)}")
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        raise ValueError(f"'openspiel:{argument}' needs OpenSpiel; {INSTALL_HINT}") from None
    options = {**kwargs, **parse_options(rest, f"openspiel:{argument}")}
    try:
        return ISMCTSAgent(seed=seed, **options)
    except TypeError as exc:
        raise ValueError(f"bad options for 'openspiel:{argument}': {exc}") from None


__all__ = ["BOTS", "ISMCTSAgent", "make_openspiel_agent"]
