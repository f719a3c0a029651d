"""Helpers shared by the tests of the OpenSpiel game (``tests/test_openspiel_*.py``): loading
``python_scopa``, random play through its chance nodes, the 52-card game's parameters, the presets
with declarations and a table Cirulla throws in. Import it after ``pytest.importorskip("pyspiel")``."""

from __future__ import annotations

import numpy as np
import pyspiel

import scopa_env.openspiel.game as og
from scopa_env.engine.cards import card_id
from scopa_env.engine.game import Game

F52 = {"rules": "french_52", "players": 8, "action_mode": "select"}
F52_MOVE = {"rules": "french_52", "players": 8, "action_mode": "move"}
"""The 52-card game for 8 players (Wikipedia's Scopa article, "Playing with French-suited cards")."""


def load(**params):
    return pyspiel.load_game(og.GAME_NAME, params)


def sample(state, rng: np.random.Generator) -> int:
    """A chance outcome by its probability, or a uniformly random legal action."""
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        return outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


def play_until(state, rng, decisions: int):
    """Play randomly until ``decisions`` decision nodes have passed (or the end); returns the state."""
    while not state.is_terminal() and decisions > 0:
        if not state.is_chance_node():
            decisions -= 1
        state.apply_action(sample(state, rng))
    while state.is_chance_node():
        state.apply_action(sample(state, rng))
    return state


DECLARING = ("scopa_bazzica", "sbarazzina", "piva", "cirulla")
"""The presets with declarations (``bazzica_points`` / ``hand_bonus_points``); Cirulla also has the
dealer's table bonus, the wildcard and ``redeal_next_dealer``."""


def thrown_in_table(rules) -> list[int]:
    """A table the rules throw in (wikipedia, Cirulla: "If two or more aces are dealt to the table")."""
    table = [card_id(0, 1), card_id(1, 1), card_id(0, 5), card_id(0, 6)]
    assert Game(2, rules, seed=0).needs_redeal(sum(1 << c for c in table))
    return sorted(table)
