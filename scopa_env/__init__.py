"""Scopa for reinforcement-learning research: the rules engine and the environments.

The package is in layers, each importing only the ones below it:

* :mod:`scopa_env.engine`: the rules (cards, :class:`Rules` and presets, scoring, the game);
* the environments: :mod:`scopa_env.aec` (the PettingZoo AEC env, also as ``scopa_env.scopa_v0``),
  :mod:`scopa_env.fast` (the compiled, batched core, its search and vector envs) and
  :mod:`scopa_env.openspiel` (the OpenSpiel game); :mod:`scopa_env.bench` measures them.

Above them: :mod:`agents`, then :mod:`train`, then the applications (:mod:`scopa_app`).
"""

from scopa_env import _moved
from scopa_env.engine.cards import card_name, format_card, format_cards, parse_card, parse_cards
from scopa_env.engine.game import Game, HandResult, PlayerView
from scopa_env.engine.rules import PRESETS, STANDARD, Move, Rules, get_rules, legal_moves
from scopa_env.engine.scoring import score_hand

_moved.install()

__all__ = [
    "PRESETS",
    "STANDARD",
    "Game",
    "HandResult",
    "Move",
    "PlayerView",
    "Rules",
    "card_name",
    "format_card",
    "format_cards",
    "get_rules",
    "legal_moves",
    "parse_card",
    "parse_cards",
    "score_hand",
    "scopa_v0",
]
__version__ = "0.2.0"


def __getattr__(name: str):
    if name == "scopa_v0":  # PettingZoo's convention: ``from scopa_env import scopa_v0``
        from scopa_env.aec import scopa_v0

        return scopa_v0
    raise AttributeError(f"module 'scopa_env' has no attribute {name!r}")
