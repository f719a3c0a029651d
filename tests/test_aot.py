"""The ahead-of-time row loops and observers (scopa_env/fast/aot.py, built by setup.py at install):
the loops play exactly as the JIT's, are used only where they take a batch's arguments and match
the sources, and spare a fresh process the row loop's compile; the observers serve every preset's
env without importing numba. (That they write what write_observation writes is
tests/test_env_speed_paths.py's.)

Cold-start times themselves are measured by ``scopa bench``, never asserted here.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scopa_env.fast import BatchedScopa, aot, core
from scopa_env.fast.batch import aot_arg_kinds
from scopa_env.fast.observers import observers_for

ROOT = Path(__file__).resolve().parents[1]


def test_every_extension_is_built_and_fresh():
    """``pip install -e .`` builds them (setup.py); a missing or stale one is a failed install, never a skip:
    the tests below check what the extensions compute and would otherwise test nothing."""
    missing = [name for name in aot.EXTENSIONS if aot.load(name) is None]
    assert not missing, (
        f"ahead-of-time extensions missing or stale: {missing}; rebuild with "
        "`pip install -e . --no-deps --no-build-isolation` (setup.py's build_ext)"
    )


def test_setup_builds_every_extension():
    """setup.py's list of extensions is aot.EXTENSIONS (setup.py cannot import the package to read it)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    specs = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EXTENSIONS" for t in node.targets)
    )
    assert tuple(specs) == aot.EXTENSIONS


def test_an_edit_to_any_file_of_the_core_makes_the_extensions_stale(tmp_path, monkeypatch):
    """``aot.source_hash`` reads every module of the compiled core (its ``__init__``, which only
    re-exports, aside) and the build (``aot.source_files``), and an edit to any one of them changes
    it (on copies of them, so that no build goes stale)."""
    fast = ROOT / "scopa_env" / "fast"
    files = aot.source_files()
    modules = {p for p in (fast / "core").glob("*.py") if p.name != "__init__.py"}
    assert modules | {fast / "aot_build.py"} <= set(files), [f.name for f in files]
    copies = []
    for path in files:
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        copies.append(copy)
    monkeypatch.setattr(aot, "source_files", lambda: tuple(copies))
    unchanged = aot.source_hash.__wrapped__()
    for copy in copies:
        text = copy.read_bytes()
        copy.write_bytes(text + b"\n# an edit\n")
        assert aot.source_hash.__wrapped__() != unchanged, f"an edit to {copy.name} left the hash as it was"
        copy.write_bytes(text)
    assert aot.source_hash.__wrapped__() == unchanged


def _play(batch: BatchedScopa, steps: int, seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    batch.reset(np.arange(batch.num_games) + seed)
    out = []
    for _ in range(steps):
        if batch.action_mode == "select":
            actions = (rng.random(batch.action_mask.shape) * batch.action_mask).argmax(1)
        else:
            counts = batch.legal_count
            actions = batch.legal_ids[np.arange(batch.num_games), (rng.random(batch.num_games) * counts).astype(int)]
        batch.step(actions)
        out.append(
            (batch.obs.copy(), batch.rewards.copy(), batch._S.copy(), batch._hand_score.copy(), batch._info.copy())
        )
    return out


@pytest.mark.parametrize(
    ("opponent", "mode", "players", "rules"),
    [
        (None, "select", 2, "standard"),
        (None, "move", 4, "standard"),
        ("greedy", "select", 4, "scopone"),
        ("random", "move", 3, "standard"),
        ("heuristic", "select", 2, "standard"),
        ({"greedy": 0.5, "heuristic": 0.5}, "move", 2, "napola"),
    ],
)
def test_aot_loops_play_as_the_jit(opponent, mode, players, rules, monkeypatch):
    """Every observation, reward, state row, hand score and info row equal, step by step, over
    auto-reset episodes, for the opponents, modes, player counts and standard-capture presets."""
    kwargs = dict(rules=rules, opponent=opponent, action_mode=mode, episode="hand")
    fast = BatchedScopa(16, players, **kwargs)
    jit = BatchedScopa(16, players, **kwargs)
    jit._rows = core.batch_rows
    a, b = _play(fast, 120, seed=7), _play(jit, 120, seed=7)
    assert fast._rows is not core.batch_rows, "the batch did not take the ahead-of-time loop"
    for k, (x, y) in enumerate(zip(a, b)):
        for name, u, v in zip(("obs", "rewards", "state", "hand score", "info"), x, y):
            np.testing.assert_array_equal(u, v, err_msg=f"{name} differs at step {k}")


def test_jit_where_the_arguments_differ():
    """A decision preset (``D`` an array), a variant's captures (``VAR``) and several threads keep
    the JIT's row loop."""
    for batch in (
        BatchedScopa(4, 2, rules="chiamarsi_fuori"),
        BatchedScopa(4, 2, rules="escoba"),
        BatchedScopa(4, 2, threads=2),
    ):
        batch.reset(np.arange(4))
        assert batch._rows in (None, core.batch_rows), batch.rules.name


def test_stale_or_switched_off_extension_is_not_used(monkeypatch):
    """A build from other sources (another source hash) or ``SCOPA_AOT=0``: the JIT plays and
    the env's observers are written in Python."""
    from scopa_env.engine.observation import ObservationLayout

    aot.load.cache_clear()
    monkeypatch.setattr(aot, "source_hash", lambda: -1)
    try:
        assert all(aot.load(name) is None for name in aot.EXTENSIONS)
        assert aot.observer(2, 2) is None
        assert aot.card_capture() is None
        assert not observers_for(ObservationLayout(2)).ahead_of_time
        batch = BatchedScopa(4, 2)
        batch.reset(np.arange(4))
        assert batch._rows is core.batch_rows
    finally:
        aot.load.cache_clear()
    monkeypatch.undo()
    monkeypatch.setenv(aot.ENV_SWITCH, "0")
    assert (
        aot.rows_for(
            BatchedScopa(4, 2)._kernel_args(np.zeros(4, np.int64), np.zeros((4, 1), np.float32)), aot_arg_kinds
        )
        is None
    )
    assert aot.observer(2, 2) is None
    assert aot.card_capture() is None
    assert not observers_for(ObservationLayout(3)).ahead_of_time


def test_every_preset_has_an_observer():
    """Every preset's players and sides (so its env's observers) are among the exported observers."""
    from scopa_env.engine.rules import PRESETS

    for name, rules in PRESETS.items():
        for n in rules.player_counts:
            assert (n, rules.num_sides(n)) in aot.OBSERVERS, (name, n)


def test_env_observes_through_the_extension_without_numba():
    """A fresh process's env observes through the compiled observer and never imports numba."""
    code = (
        "import sys\n"
        "from scopa_env import scopa_v0\n"
        "from scopa_env.fast.observers import observers_for\n"
        "e = scopa_v0.env(num_players=4, action_mode='select')\n"
        "e.reset(seed=1)\n"
        "obs = e.last()[0]['observation']\n"
        "print(observers_for(e.unwrapped.layout).ahead_of_time, 'numba' in sys.modules, obs.shape[0] == e.unwrapped.layout.size)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "True"], out.stdout


def test_a_fresh_process_compiles_no_row_loop(tmp_path):
    """On an empty numba cache a standard batch resets and steps without compiling the row loop."""
    code = (
        "import numpy as np\n"
        "from scopa_env.fast import BatchedScopa, core\n"
        "b = BatchedScopa(4, 2)\n"
        "b.reset(np.arange(4))\n"
        "b.step(b.action_mask.argmax(1))\n"
        "print(len(core.batch_rows.signatures))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "0", out.stdout
    env[aot.ENV_SWITCH] = "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "1", "with SCOPA_AOT=0 the JIT compiles it"


def _lines_of_a_process(code: str) -> list[str]:
    """The output lines of ``code`` run in a fresh Python process, which must exit cleanly (a
    crash, say a segfault in an extension, shows as its exit status)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    return out.stdout.splitlines()


def test_observation_need_is_every_layouts_size():
    """``core.observation_need``, the bound the exported observers check ``out`` against, is each
    preset's layout size (with the wildcard's one-hot at its last entry where there is one): a
    layout that grows without it would be refused, never written past."""
    from scopa_env.engine.observation import ObservationLayout
    from scopa_env.engine.rules import PRESETS

    for name, rules in PRESETS.items():
        for n in rules.player_counts:
            layout = ObservationLayout.for_rules(n, rules)
            wild = core.MAX_RANK if layout.wildcard else 0
            need = core.observation_need(n, layout.num_sides, layout.cards, bool(layout.declarations), wild)
            assert need == layout.size, (name, n)
            if wild:
                assert core.observation_need(n, layout.num_sides, layout.cards, bool(layout.declarations), 1) < need


def test_exported_observer_refuses_what_it_cannot_write():
    """The exported observer returns -1 and writes nothing for a seat out of range, a plane width
    over the 52-card deck's or an ``out`` shorter than the observation; ``aot.observer`` checks
    that ``out`` is a float32 array first (pycc's wrapper reads another as float32, past its end)
    and names it in a TypeError (run in a subprocess, so a crash would show as its exit status)."""
    code = (
        "import numpy as np\n"
        "from scopa_env.fast import aot\n"
        "from scopa_env.engine.game import Game\n"
        "g = Game(2, seed=1)\n"
        "def args(seat=0, width=40):\n"
        "    return (seat, *g.hands, *g.piles, *g.played, *g.revealed, *g.scope, *g.scores, g.table, len(g.stock),\n"
        "            g.dealer, g.current, -1, -1, 0, g.rules.deck_mask, 11, 3, width, False, 0, False)\n"
        "raw, checked = aot.observer(2, 2, checked=False), aot.observer(2, 2)\n"
        "out = np.full(376, 7.0, np.float32)\n"
        "print(raw(out, *args(seat=2)), raw(out, *args(seat=-1)), raw(out, *args(width=53)), raw(out[:375].copy(), *args()))\n"
        "print(bool((out == 7.0).all()), raw(out, *args()), bool((out == 7.0).any()))\n"
        "for bad in (np.zeros(376), [0.0] * 376, np.zeros(752, np.float32)[::2]):\n"
        "    try:\n"
        "        checked(bad, *args())\n"
        "        print('accepted')\n"
        "    except TypeError as exc:\n"
        "        print('TypeError', str(exc).split()[0])\n"
    )
    assert _lines_of_a_process(code) == ["-1 -1 -1 -1", "True 0 False"] + ["TypeError out"] * 3


def test_compiled_observer_refuses_a_game_that_does_not_fit():
    """A game of another player count, or with a seat's list grown or shrunk, is a ValueError
    naming the layout, and an out-of-range wildcard rank writes nothing out of bounds: never a
    crash (run in a subprocess, so a crash would show as its exit status)."""
    code = (
        "from scopa_env.engine.game import Game\n"
        "from scopa_env.engine.observation import ObservationLayout\nfrom scopa_env.fast.observers import observation_array, observers_for\n"
        "cases = [(Game(3, seed=1), ObservationLayout(2)), (Game(3, seed=1), ObservationLayout(4))]\n"
        "for attr, extra in (('hands', [0]), ('piles', [0]), ('scores', [0])):\n"
        "    g = Game(2, seed=1)\n"
        "    setattr(g, attr, getattr(g, attr) + extra)\n"
        "    cases.append((g, ObservationLayout(2)))\n"
        "g = Game(2, seed=1)\n"
        "g.scope = g.scope[:1]\n"
        "cases.append((g, ObservationLayout(2)))\n"
        "for game, layout in cases:\n"
        "    assert observers_for(layout).ahead_of_time\n"
        "    try:\n"
        "        observation_array(game, 0, layout)\n"
        "        print('accepted')\n"
        "    except ValueError as exc:\n"
        "        print('ValueError', str(exc).split(';')[0])\n"
        "g = Game(2, 'cirulla', seed=1)\n"
        "g.wild_rank = 10**6\n"
        "layout = ObservationLayout.for_rules(2, g.rules)\n"
        "print('wild', observation_array(g, 0, layout)[layout['wild_rank']].sum())\n"
    )
    lines = _lines_of_a_process(code)
    assert lines[:2] == [
        "ValueError the observation layout is for 2 players and 2 sides",
        "ValueError the observation layout is for 4 players and 2 sides",
    ]
    assert lines[2:6] == ["ValueError the observation layout is for 2 players and 2 sides"] * 4, lines
    assert lines[6] == "wild 0.0"


CAPTURE_RULES = [
    ("standard", {}),
    ("scopa_corse", {}),  # capture_optional: the trail is an outcome beside every capture
    ("standard", {"single_card_priority": False}),  # singles compete with sets
]


@pytest.mark.parametrize(("preset", "changes"), CAPTURE_RULES)
def test_card_capture_is_the_rules_one_outcome(preset, changes):
    """The exported ``core.card_capture`` gives, for every card of the mover's hand at every point
    of random games, what ``Game.card_outcomes`` says: its one captured mask (0: to the table),
    or -1 where it has several. Pagat: "If there are several matching cards the player must
    choose just one of those cards to capture" and "If there is more than one such set, the
    player chooses which set to capture": a choice "select" mode asks for, which this never makes."""
    from scopa_env.engine.game import Game
    from scopa_env.engine.rules import get_rules

    rules = get_rules(preset).replace(**changes)
    capture = aot.card_capture()
    flags = (int(rules.single_card_priority), int(rules.capture_optional))
    rng = np.random.default_rng(3)
    counts = {"one": 0, "several": 0}
    for n in (2, 4):
        for seed in range(40):
            game = Game(n, rules, seed=seed, auto_next_hand=False)
            while not game.hand_over:
                hand = game.hands[game.current]
                for card in (c for c in range(40) if hand >> c & 1):
                    outcomes = game.card_outcomes(card)
                    want = outcomes[0] if len(outcomes) == 1 else -1
                    assert capture(card, game.table, *flags) == want, (preset, changes, seed, card, game.table)
                    counts["one" if want >= 0 else "several"] += 1
                pairs = game.legal_pairs()
                game.play_pair(*pairs[rng.integers(len(pairs))])
    assert counts["one"] > 1000 and counts["several"] > 20, counts


def test_card_capture_refuses_what_is_not_a_40_card_deck_card_and_table():
    """A card id or table outside the 40-card deck is -1 (the env then asks the rules), never a
    shift past the word, while a real card still captures (the Two of the second suit, id 11,
    takes the first suit's, id 1); an int beyond 64 bits is an OverflowError (run in a
    subprocess, so a crash would show as its exit status)."""
    code = (
        "from scopa_env.fast import aot\n"
        "f = aot.card_capture()\n"
        "print([f(c, t, 1, 0) for c, t in ((40, 0), (-1, 0), (63, 1), (64, 1), (3, 1 << 45), (3, -2), (11, 1 << 1))])\n"
        "try:\n"
        "    f(1 << 70, 0, 1, 0)\n"
        "except OverflowError:\n"
        "    print('OverflowError')\n"
    )
    assert _lines_of_a_process(code) == ["[-1, -1, -1, -1, -1, -1, 2]", "OverflowError"]


def _enumeration_arrays(rules):
    """``(PAIRS, starts)`` as the env hands them to ``plain_move_ids``."""
    from scopa_env.engine.actions import move_enumeration

    pairs = np.array(move_enumeration(rules).pairs, np.int64).reshape(-1, 2)
    return pairs, np.searchsorted(pairs[:, 0], np.arange(41), side="left").astype(np.int64)


@pytest.mark.parametrize(("preset", "changes"), CAPTURE_RULES)
def test_move_ids_are_the_enumerations_ids_of_the_legal_moves(preset, changes):
    """The exported ``core.plain_move_ids`` gives, at every point of random games, the "move" ids
    of ``Game.legal_pairs`` in their order (``MoveEnumeration.ids``)."""
    from scopa_env.engine.actions import move_enumeration
    from scopa_env.engine.game import Game
    from scopa_env.engine.rules import get_rules

    rules = get_rules(preset).replace(**changes)
    move_ids = aot.move_ids()
    pairs, starts = _enumeration_arrays(rules)
    enumeration = move_enumeration(rules)
    out = np.empty(256, np.int64)
    flags = (int(rules.single_card_priority), int(rules.capture_optional))
    rng = np.random.default_rng(5)
    checked = 0
    for n in (2, 4):
        for seed in range(30):
            game = Game(n, rules, seed=seed, auto_next_hand=False)
            while not game.hand_over:
                legal = game.legal_pairs()
                count = move_ids(game.hands[game.current], game.table, *flags, pairs, starts, out)
                assert out[:count].tolist() == enumeration.ids(legal, game.table), (preset, seed, game.table)
                checked += 1
                game.play_pair(*legal[rng.integers(len(legal))])
    assert checked > 1000


def test_move_ids_refuse_what_does_not_fit():
    """-1 and nothing read or written out of bounds where the hand or table is outside the 40-card
    deck, ``starts`` is short or points past ``PAIRS``, ``PAIRS`` is not two columns, a move is not
    in it, or ``out`` is too short; an array of another type, shape or layout is a TypeError
    naming it (run in a subprocess, so a crash would show as its exit status)."""
    code = (
        "import numpy as np\n"
        "from scopa_env.fast import aot\n"
        "from scopa_env.engine.actions import move_enumeration\n"
        "from scopa_env.engine.rules import get_rules\n"
        "f = aot.move_ids()\n"
        "pairs = np.array(move_enumeration(get_rules('standard')).pairs, np.int64).reshape(-1, 2)\n"
        "starts = np.searchsorted(pairs[:, 0], np.arange(41), side='left').astype(np.int64)\n"
        "out = np.empty(64, np.int64)\n"
        "hand, table = (1 << 3) | (1 << 15), (1 << 2) | (1 << 12)  # a Four trails, a Six takes both Threes\n"
        "trails_only = pairs.copy()\n"
        "trails_only[:, 1] = 0\n"
        "print(f(hand, table, 1, 0, pairs, starts, out))\n"
        "bad = [(1 << 45, table, pairs, starts, out), (hand, -1, pairs, starts, out),\n"
        "       (hand, table, pairs, starts[:40].copy(), out), (hand, table, pairs, starts + 10**6, out),\n"
        "       (hand, table, np.ascontiguousarray(pairs[:, :1]), starts, out),\n"
        "       (hand, table, pairs[:100].copy(), starts, out), (hand, table, trails_only, starts, out),\n"
        "       (hand, table, pairs, starts, out[:1].copy())]\n"
        "print([f(h, t, 1, 0, p, s, o) for h, t, p, s, o in bad])\n"
        "typed = [(pairs.astype(np.int32), starts, out), (pairs[:, ::-1], starts, out),\n"
        "         (pairs.ravel(), starts, out), (pairs, starts.astype(float), out), (pairs, starts, [0] * 64)]\n"
        "for p, s, o in typed:\n"
        "    try:\n"
        "        f(hand, table, 1, 0, p, s, o)\n"
        "        print('accepted')\n"
        "    except TypeError as exc:\n"
        "        print('TypeError', str(exc).split()[0])\n"
    )
    lines = _lines_of_a_process(code)
    assert lines[:2] == ["2", "[-1, -1, -1, -1, -1, -1, -1, -1]"], lines
    assert lines[2:] == ["TypeError pairs"] * 3 + ["TypeError starts", "TypeError out"], lines
