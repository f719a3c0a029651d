"""Differential cases for the Rules fields the compiled core claims but no preset changes.

Every preset the core plays is compared with the AEC env step by step in ``tests/test_fast.py``
(``CASES``), and the scoring extras there (``EXTRAS_RULES``) on short decks. A field that no
preset sets (``scopa_points``, ``cappotto``), or that the core claims in the 52-card deck
(``french=True`` next to the field in ``scopa_env/engine/rules.py``) while ``french_52`` keeps
its standard value, is compared here, so that every claim of support has a case where the
field differs from the standard game (``tests/test_rules_fields.py`` checks that it has).
"""

from __future__ import annotations

import pytest
from test_fast import run_differential

from scopa_env.engine.rules import Rules, get_rules
from scopa_env.fast import check_supported

FIELD_CASES: dict[str, tuple[str, dict, tuple[int, ...]]] = {
    # 40 cards: what a scopa is worth and the 7-0 win, which no preset changes.
    "fields_40": ("standard", dict(scopa_points=2, cappotto=True, target=7), (2, 4)),
    # 52 cards, 8 players: the deal, capture and scoring fields the core claims there.
    "fields_52_play": (
        "french_52",
        dict(
            hand_size=6,
            kings_redeal=False,
            single_card_priority=False,
            capture_optional=True,
            last_play_scopa=True,
            scopa_points=2,
            target=7,
            cappotto=True,
            bonus_suit=1,
        ),
        (8,),
    ),
    "fields_52_deal": ("french_52", dict(table_size=12, deal_schedules={8: (3, 2)}), (8,)),
}
"""Name: (base preset, fields changed, player counts), each played on both engines."""


def field_case(name: str) -> Rules:
    base, changes, _ = FIELD_CASES[name]
    return get_rules(base).replace(name=name, **changes)


@pytest.mark.parametrize("name", sorted(FIELD_CASES))
def test_fields_no_preset_changes_play_the_same_game(name):
    """The same deals and moves give the same game in the core and the env, in both action modes."""
    rules = field_case(name)
    for n in FIELD_CASES[name][2]:
        check_supported(rules, n)
        games, steps = run_differential(rules, n, "select", "game", "points", 4, seed=3 + n)
        assert games >= 4 and steps > 0, f"{name} n={n}: {games} games"
        run_differential(rules, n, "move", "hand", "game", 4, seed=13 + n)
