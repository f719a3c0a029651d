"""The whole tree of a small ``python_scopa`` game in Gambit's ``.efg`` format: :func:`export_efg`.

``pyspiel.load_efg_game`` loads it as a C++ game, so that OpenSpiel's CFR, best responses and
exploitability run on an exact copy at C++ speed (``rules="small"``: 138,600 decision nodes).
The walk goes over positions (:class:`~scopa_env.openspiel.position.Position`), not states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyspiel

from scopa_env.openspiel.position import Position

EFG_NODE_LIMIT = 2_000_000
"""Most nodes :func:`export_efg` writes (the small preset has about 185,000)."""


@dataclass
class TreeExport:
    """A game tree in Gambit's ``.efg`` format, for ``pyspiel.load_efg_game``.

    OpenSpiel's C++ algorithms (CFR, best responses, exploitability) run on the loaded
    copy at C++ speed, with the same chance probabilities, payoffs and information sets
    (an information set of the copy is one ``information_state_string`` of the game).
    Action names are the game's action ids, so ``efg_state.action_to_string(a)`` of the
    copy gives back the game's action id.
    """

    text: str
    infosets: list[list[str]]
    """Per player, the information-state string of the copy's information set ``i + 1`` at index ``i``."""
    decision_nodes: int
    chance_nodes: int
    terminal_nodes: int

    def efg_state(self, efg_game: pyspiel.Game, history: Sequence[int]) -> pyspiel.State:
        """The loaded copy's state after ``history`` (actions of the game, chance outcomes included).

        Read a solver's policy at a Scopa position with it:
        ``policy.get_state_policy(tree.efg_state(copy, state.history()))`` gives ``(copy action,
        probability)`` pairs, and ``int(efg_state.action_to_string(a))`` is the game's action.
        """
        state = efg_game.new_initial_state()
        for action in history:
            by_name = {state.action_to_string(a): a for a in state.legal_actions()}
            if str(action) not in by_name:
                raise ValueError(f"action {action} is not legal in the exported tree after {state.history()}")
            state.apply_action(by_name[str(action)])
        return state


def export_efg(game: pyspiel.Game, node_limit: int = EFG_NODE_LIMIT) -> TreeExport:
    """Write every history of ``game`` (a loaded ``python_scopa`` game) as a Gambit tree (meant for ``rules="small"``).

    Raises:
        ValueError: the tree has more than ``node_limit`` nodes (use a smaller preset).
    """
    n = game.num_players()
    players = " ".join(f'"Pl{p + 1}"' for p in range(n))
    lines = [f'EFG 2 R "{game}" {{ {players} }}', '""']
    numbers: list[dict[str, int]] = [{} for _ in range(n)]
    counts = [0, 0, 0]  # decision, chance, terminal

    def visit(pos: Position) -> None:
        if sum(counts) >= node_limit:
            raise ValueError(f"{game} has more than {node_limit:,} nodes; export a smaller game (rules='small')")
        if pos.over:
            counts[2] += 1
            lines.append(f't "" {counts[2]} "" {{ {" ".join(repr(float(r)) for r in pos.returns)} }}')
            return
        if pos.game is None:
            counts[1] += 1
            outcomes = pos.chance_outcomes()
            lines.append(f'c "" {counts[1]} "" {{ {" ".join(f"{chr(34)}{a}{chr(34)} {p!r}" for a, p in outcomes)} }} 0')
            actions = [a for a, _ in outcomes]
        else:
            counts[0] += 1
            player = pos.current_player()
            known = numbers[player]
            number = known.setdefault(pos.info_text(player), len(known) + 1)
            actions = pos.legal_actions()
            lines.append(f'p "" {player + 1} {number} "" {{ {" ".join(f"{chr(34)}{a}{chr(34)}" for a in actions)} }} 0')
        for a in actions:
            child = pos.copy()
            child.apply(a)
            visit(child)

    visit(Position.initial(game.setup))
    return TreeExport(
        text="\n".join(lines) + "\n",
        infosets=[list(known) for known in numbers],
        decision_nodes=counts[0],
        chance_nodes=counts[1],
        terminal_nodes=counts[2],
    )
