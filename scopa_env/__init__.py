"""Scopa for reinforcement-learning research: rules engine, PettingZoo environment."""

# The named variants register themselves in PRESETS here (presets imports rules, never the reverse).
from scopa_env import presets  # noqa: F401
from scopa_env.cards import card_name, format_card, format_cards, parse_card, parse_cards
from scopa_env.game import Game, HandResult, PlayerView
from scopa_env.rules import PRESETS, STANDARD, Move, Rules, get_rules, legal_moves
from scopa_env.scoring import score_hand

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
]
__version__ = "0.1.0"
