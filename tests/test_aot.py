"""The ahead-of-time row loops and observers (scopa_env/fast/aot.py, built by setup.py at install):
the loops play exactly as the JIT's, are used only where they take a batch's arguments and match
the sources, and spare a fresh process the row loop's compile; the observers serve every preset's
env without importing numba; the compiled search's kernel searches as the JIT's and spares the
``fsearch`` agent's first move its compile. (That they write what write_observation writes is
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

from scopa_env.fast import BatchedScopa, aot, core, search
from scopa_env.fast.batch import aot_arg_kinds, compiled_rules
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
    monkeypatch.setattr(aot, "source_files", lambda name=None: tuple(copies))
    unchanged = aot.source_hash.__wrapped__()
    for copy in copies:
        text = copy.read_bytes()
        copy.write_bytes(text + b"\n# an edit\n")
        assert aot.source_hash.__wrapped__() != unchanged, f"an edit to {copy.name} left the hash as it was"
        copy.write_bytes(text)
    assert aot.source_hash.__wrapped__() == unchanged


def test_the_search_has_a_stamp_of_its_own(tmp_path, monkeypatch):
    """The search's extension is stale after an edit to ``search.py``, to any module of the compiled
    core it imports or to the build, and only the search's is after an edit to ``search.py`` (the
    row loops hold none of it); on copies of the files, so that no build goes stale."""
    fast = ROOT / "scopa_env" / "fast"
    real = aot.source_files
    search_files, core_files = set(real(aot.SEARCH)), set(real())
    # every module of the compiled core but the AEC env's row (core/row.py), which only the env helpers hold
    modules = {p for p in (fast / "core").glob("*.py") if p.name not in ("__init__.py", "row.py")}
    assert modules | {fast / "search.py", fast / "aot_build.py", fast / "layout.py"} <= search_files, [
        f.name for f in search_files
    ]
    assert fast / "search.py" not in core_files
    assert fast / "core" / "row.py" in core_files and fast / "core" / "row.py" not in search_files
    copies = {}
    for path in search_files | core_files:
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        copies[path] = copy
    monkeypatch.setattr(aot, "source_files", lambda name=None: tuple(copies[p] for p in real(name)))
    before = {name: aot.source_hash.__wrapped__(name) for name in (None, aot.SEARCH)}
    assert before[None] != before[aot.SEARCH]
    for path, copy in copies.items():
        text = copy.read_bytes()
        copy.write_bytes(text + b"\n# an edit\n")
        for name, files in ((aot.SEARCH, search_files), (None, core_files)):
            changed = aot.source_hash.__wrapped__(name) != before[name]
            assert changed == (path in files), (
                f"an edit to {path.name}: stamp of {name or 'the core'} changed={changed}"
            )
        copy.write_bytes(text)


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
    monkeypatch.setattr(aot, "source_hash", lambda name=None: -1)
    try:
        assert all(aot.load(name) is None for name in aot.EXTENSIONS)
        assert aot.search_for(_search_args(), search.aot_arg_kinds) is None
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
    assert aot.search_for(_search_args(), search.aot_arg_kinds) is None


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


@pytest.mark.slow  # a cold start of the JIT beside the built loops
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


@pytest.mark.parametrize("n", [2, 4])
def test_observe_moves_writes_the_observation_the_ids_and_their_mask(n):
    """The "move" observer export (``observe_moves_<players>_<sides>``) writes, at every point of
    random standard games, the observation the plain export writes, ``plain_move_ids``' ids and
    a mask that marks exactly them: one compiled call for the AEC env's "move" turns."""
    from scopa_env.engine.game import Game
    from scopa_env.engine.rules import get_rules

    rules = get_rules("standard")
    sides = rules.num_sides(n)
    plain, moves, move_ids = aot.observer(n, sides, checked=False), aot.observer(n, sides, moves=True), aot.move_ids()
    assert moves is not None, "the ahead-of-time extension is not built or stale (pip install -e . builds it)"
    pairs, starts = _enumeration_arrays(rules)
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(20):
        game = Game(n, rules, seed=seed, auto_next_hand=False)
        while not game.hand_over:
            seat = game.current
            parts = (*game.hands, *game.piles, *game.played, *game.revealed, *game.scope, *game.scores)
            parts += (
                game.table,
                len(game.stock),
                game.dealer,
                seat,
                -1 if game.last_capturer is None else game.last_capturer,
            )
            parts += (-1, 0, rules.deck_mask, rules.target, rules.hand_size, 40, False, 0, False)
            want, got = np.full(600, 9.0, np.float32), np.full(600, 9.0, np.float32)
            assert plain(want, seat, *parts) == 0
            mask, ids, ref = np.zeros(len(pairs), np.int8), np.empty(64, np.int64), np.empty(64, np.int64)
            count = moves(got, mask, ids, seat, *parts, 1, 0, pairs, starts)
            assert count == move_ids(game.hands[seat], game.table, 1, 0, pairs, starts, ref) > 0
            assert (got == want).all() and ids[:count].tolist() == ref[:count].tolist()
            assert np.flatnonzero(mask).tolist() == sorted(ids[:count].tolist())
            checked += 1
            legal = game.legal_pairs()
            game.play_pair(*legal[rng.integers(len(legal))])
    assert checked > 300


def test_observe_moves_refuses_what_it_cannot_write():
    """-2 and nothing written (observation, mask) for a seat out of range, a short observation or
    a mask shorter than the enumeration; -1 with the observation written and the mask untouched
    where ``plain_move_ids`` refuses (here a short ``ids``): the env then finds the ids in Python
    (run in a subprocess, so a crash would show as its exit status)."""
    code = (
        "import numpy as np\n"
        "from scopa_env.fast import aot\n"
        "from scopa_env.engine.actions import move_enumeration\n"
        "from scopa_env.engine.game import Game\n"
        "g = Game(2, seed=1)\n"
        "pairs = np.array(move_enumeration(g.rules).pairs, np.int64).reshape(-1, 2)\n"
        "starts = np.searchsorted(pairs[:, 0], np.arange(41), side='left').astype(np.int64)\n"
        "def args(seat=0):\n"
        "    return (seat, *g.hands, *g.piles, *g.played, *g.revealed, *g.scope, *g.scores, g.table, len(g.stock),\n"
        "            g.dealer, g.current, -1, -1, 0, g.rules.deck_mask, 11, 3, 40, False, 0, False, 1, 0, pairs, starts)\n"
        "f = aot.observer(2, 2, moves=True)\n"
        "out, mask, ids = np.full(376, 7.0, np.float32), np.zeros(len(pairs), np.int8), np.empty(64, np.int64)\n"
        "print(f(out, mask, ids, *args(seat=2)), f(out[:375].copy(), mask, ids, *args()), f(out, mask[:-1].copy(), ids, *args()))\n"
        "print(bool((out == 7.0).all()), int(mask.sum()))\n"
        "print(f(out, mask, ids[:1].copy(), *args()), bool((out == 7.0).any()), int(mask.sum()))\n"
    )
    assert _lines_of_a_process(code) == ["-2 -2 -2", "True 0", "-1 False 0"]


def test_seed_words_are_numpys_seed_sequence():
    """The exported ``core.seed_words`` gives ``SeedSequence(seed).generate_state(4, np.uint64)``
    (what ``PCG64(seed)`` is seeded with) for seeds of one and two 32-bit words up to ``2**63 - 1``,
    and -1 with nothing written for a negative seed or a short ``out``."""
    words = aot.seed_words()
    assert words is not None, "the ahead-of-time extension is not built or stale (pip install -e . builds it)"
    out = np.empty(4, np.uint64)
    seeds = [0, 1, 2**32 - 1, 2**32, 2**63 - 1, *np.random.default_rng(0).integers(0, 2**63, 300).tolist()]
    for seed in seeds + list(range(2, 300)):
        assert words(seed, out) == 0
        assert out.tolist() == np.random.SeedSequence(seed).generate_state(4, np.uint64).tolist(), seed
    out[:] = 5
    assert words(-1, out) == -1 and words(3, out[:3].copy()) == -1 and out.tolist() == [5] * 4


# --- the compiled search ------------------------------------------------------------------------


def _search_args(rules="standard", players=2, plies=3, games=6, seed=3, C=None, obs=False):
    """``search_kernel``'s arguments as ``search_rows`` makes them, for the positions of ``games``
    "move"-mode games ``plies`` random plies in (with empty inference rows where ``obs``)."""
    batch = BatchedScopa(games, players, rules=rules, action_mode="move", episode="hand")
    batch.reset(np.arange(games) + seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        batch.step(np.array([rng.choice(ids[:k]) for ids, k in zip(batch.legal_ids, batch.legal_count)]))
    P, F, TBL, _ = compiled_rules(batch.rules, players)
    S = batch._S.copy()
    rows = np.full((games, search.MAX_OBS, search.OBS_W), -1, np.int64) if obs else None
    C = search.search_config(worlds=8) if C is None else C
    return search._kernel_args(
        S, search.hand_counts(S, players), np.arange(games) + seed, search.search_params(P), F, TBL, C, rows
    )


def _outputs(kernel, args) -> tuple[np.ndarray, np.ndarray]:
    """``(out, values)`` of one call of ``kernel`` on fresh copies of the outputs in ``args``
    (their last, the bundle ``search.Found``)."""
    found = search.Found(*(np.zeros_like(a) for a in args[-1]))
    kernel(*args[:-1], found)
    return found.moves, found.values


@pytest.mark.parametrize(
    ("rules", "players", "plies", "settings"),
    [
        ("standard", 2, 3, {}),
        ("standard", 2, 7, {"rollout": "heuristic", "ab_depth": 2, "worlds": 6}),
        ("standard", 2, 31, {"exact_cards": 8, "exact_worlds": 2}),  # the last round, stock empty: one world
        ("scopone", 4, 27, {"exact_cards": 12, "exact_worlds": 2}),  # several worlds solved
        ("scopone", 4, 5, {"ply_budget": 600, "min_worlds": 2}),  # the budget lowers the worlds
        ("napola", 3, 4, {"rollout": "heuristic"}),
        ("escoba", 2, 3, {"ab_depth": 1}),
        ("french_52", 8, 9, {"worlds": 4}),
    ],
)
def test_aot_search_searches_as_the_jit(rules, players, plies, settings):
    """The install-time search kernel takes every preset's arguments and gives the JIT's moves, move
    indices, worlds and values exactly, position by position, for the rollout players, alpha-beta,
    the exact endgame and the ply budget."""
    C = search.search_config(**{"worlds": 8, **settings})
    args = _search_args(rules, players, plies, C=C)
    built = aot.search_for(args, search.aot_arg_kinds)
    assert built is not None, f"the built search does not take {rules} with {players} players"
    (out, values), (jit_out, jit_values) = _outputs(built, args), _outputs(search.search_kernel, args)
    np.testing.assert_array_equal(out, jit_out, err_msg=f"moves differ ({rules}, {players} players)")
    np.testing.assert_array_equal(values, jit_values, err_msg=f"values differ ({rules}, {players} players)")
    assert (out[:, search.OUT_WORLDS] > 0).all() and np.abs(values).sum() > 0, "a position had one move"


def test_aot_search_weighs_worlds_as_the_jit():
    """With inference on (the other seats' plays this round weighing the worlds), the agent's
    positions searched by the built kernel and the JIT's give the same values."""
    from agents.fast_search import FastSearchAgent
    from scopa_env.engine.game import Game

    agent = FastSearchAgent(seed=1, worlds=8, inference=True)
    compared = 0
    for seed in range(4):
        game = Game(2, seed=seed, auto_next_hand=False)
        for _ in range(5):
            game.play_pair(*game.legal_pairs()[0])
        row, counts, _, P, F, TBL, obs = agent._kernel_inputs(game.view())
        assert (obs[0, :, search.OBS_SEAT] >= 0).any(), "no play to infer from"
        args = search._kernel_args(row[None], counts[None], np.array([seed]), P, F, TBL, agent.C, obs)
        built = aot.search_for(args, search.aot_arg_kinds)
        assert built is not None, "the built search does not take the agent's inference rows"
        for a, b in zip(_outputs(built, args), _outputs(search.search_kernel, args)):
            np.testing.assert_array_equal(a, b, err_msg=f"game {seed}")
        compared += 1
    assert compared == 4


def test_search_rows_takes_the_built_kernel_only_for_its_argument_types():
    """``search_rows``' arguments for every preset the search plays have the built types, while an
    array of another type, layout or writability is the JIT's (pycc would read it as the built one)."""
    from scopa_env.engine.rules import PRESETS

    kinds = search.aot_arg_kinds()
    for name, rules in PRESETS.items():
        for n in rules.player_counts:
            try:
                P, F, TBL, _ = compiled_rules(rules, n)
            except NotImplementedError:
                continue
            S = np.zeros((2, core.NUM_COLS), np.int64)
            counts, seeds, C = np.zeros((2, core.MAX_PLAYERS), np.int64), np.arange(2), search.search_config()
            args = search._kernel_args(S, counts, seeds, search.search_params(P), F, TBL, C, None)
            assert aot.search_for(args, search.aot_arg_kinds) is not None, (name, n)
    positions, rules, C, found = _search_args()
    for what, changed in (
        ("F writable: another type to numba", (positions, rules._replace(floats=rules.floats.copy()), C, found)),
        ("TBL int32", (positions, rules._replace(tables=rules.tables.astype(np.int32)), C, found)),
        ("S in Fortran order", (positions._replace(state=np.asfortranarray(positions.state)), rules, C, found)),
        ("strided inference rows", (positions._replace(plays=positions.plays[:, :, :1]), rules, C, found)),
        ("a plain tuple for a bundle", (tuple(positions), rules, C, found)),
        ("the move pairs given", (positions, rules._replace(pairs=np.zeros((1, 2), np.int64)), C, found)),
    ):
        assert aot.search_for(changed, search.aot_arg_kinds) is None, (what, kinds)


def test_array_kinds_tell_apart_what_numba_types_tell_apart():
    """``aot.array_kinds``, read from numpy where ``numba.typeof`` is slow, is equal for two arrays
    exactly where their numba types are: one row or several, C or Fortran order, a strided view,
    read-only, another dtype or dimension count."""
    from numba import typeof

    base = np.arange(24, dtype=np.int64).reshape(4, 6)
    frozen = base.copy()
    frozen.flags.writeable = False
    arrays = [base, base[:1], base[1:3], np.asfortranarray(base), base[:, ::2], base.T, frozen, frozen[:1],
              base.astype(np.int32), base.ravel(), base.ravel()[::2], base.reshape(2, 3, 4), np.zeros((1, 1)),
              np.zeros((3, 1))]  # fmt: skip
    for a in arrays:
        for b in arrays:
            same = aot.array_kinds((a,)) == aot.array_kinds((b,))
            assert same == (typeof(a) == typeof(b)), (typeof(a), typeof(b))
    assert aot.array_kinds((base, [1, 2])) is None
    # a bundle: by its class, its None fields and its arrays' kinds, as numba's type of it
    bundles = [core.Games(base, frozen), core.Games(base, base), core.Games(frozen, base), (base, frozen),
               core.Rules(base, base, base, None, None), core.Rules(base, base, base, base, None),
               core.Rules(base, base, base, None, base)]  # fmt: skip
    for a in bundles:
        for b in bundles:
            kinds_a, kinds_b = aot.array_kinds((a,)), aot.array_kinds((b,))
            if kinds_a is not None and kinds_b is not None:
                assert (kinds_a == kinds_b) == (typeof(a) == typeof(b)), (typeof(a), typeof(b))
    assert aot.array_kinds(((base, frozen),)) is None, "a plain tuple is not a bundle"


def test_aot_search_releases_the_gil():
    """Built like the JIT's ``nogil=True`` kernel, the search's wrapper releases the GIL around the
    call (it calls ``PyEval_SaveThread``, which the row loops' wrappers, holding it, do not), so
    ``search_rows``' threads search at once."""
    built = Path(aot.load(aot.SEARCH).__file__).read_bytes()
    plain = Path(aot.load("plain").__file__).read_bytes()
    assert b"PyEval_SaveThread" in built
    assert b"PyEval_SaveThread" not in plain


def test_a_fresh_process_compiles_no_search(tmp_path):
    """On an empty numba cache a fresh process's ``fsearch`` agent makes its first move on the
    standard game, and ``scopa eval --fast``'s warm-up searches, without compiling the search
    kernel, and says nothing of a compile."""
    code = (
        "from agents.fast_search import FastSearchAgent\n"
        "from scopa_env.engine.game import Game\n"
        "from scopa_env.fast import search\n"
        "from train.fast_eval import _warm_up_search\n"
        "g = Game(2, seed=1)\n"
        "FastSearchAgent(seed=0).act(g.view(g.current))\n"
        "_warm_up_search('fsearch:worlds=8', 2, g.rules)\n"
        "print(search.search_kernel.signatures)\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "[]", out.stdout
    assert "compiling" not in out.stderr, out.stderr


def test_a_compile_on_a_cold_cache_is_announced_once(tmp_path):
    """``aot.announce_compile`` says its line on stderr when numba is about to compile the kernel
    (once however often it is called or registered), never when numba loads it from its cache
    (a second process on the same cache) or for another kernel; on a small kernel of its own."""
    (tmp_path / "kernels_here.py").write_text(
        "from numba import njit\n"
        "@njit(cache=True)\n"
        "def twice(x):\n"
        "    return 2 * x\n"
        "@njit(cache=True)\n"
        "def thrice(x):\n"
        "    return 3 * x\n"
    )
    code = (
        "from kernels_here import thrice, twice\n"
        "from scopa_env.fast.aot import announce_compile\n"
        "announce_compile(twice, 'compiling twice')\n"
        "announce_compile(twice, 'compiling twice again')\n"
        "print(thrice(1), twice(2), twice(3), twice(2.5))\n"
    )
    env = dict(
        os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)])
    )
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)]
    runs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True))
    assert runs[0].stdout.split() == ["3", "4", "6", "5.0"], runs[0].stdout
    assert runs[0].stderr.splitlines() == ["compiling twice"], runs[0].stderr
    assert runs[1].stderr == "", "a warm cache compiles nothing: " + runs[1].stderr


def test_the_agent_and_the_fast_evaluation_announce_the_search_compile_first(monkeypatch):
    """The ``fsearch`` agent's first decision registers the notice for the search kernel
    (``aot.announce_compile``) before it searches; ``scopa eval --fast`` registers it and searches
    once before its progress bar starts, so a compile is neither silent nor in the bar's ETA, and
    the bar moves by whole batches, so that no game alone sets its rate."""
    import tqdm

    from agents.fast_search import COMPILE_NOTICE, FastSearchAgent
    from scopa_env.engine.game import Game
    from train import fast_eval

    events = []
    real_rows = search.search_rows

    def announce(kernel, message):
        events.append(("announce", kernel is search.search_kernel, message))

    def rows(*args, **kwargs):
        events.append("search")
        return real_rows(*args, **kwargs)

    class Bar:
        def __init__(self, *args, **kwargs):
            events.append("bar")

        def update(self, n):
            events.append(("games", n))

        def close(self):
            pass

    monkeypatch.setattr(aot, "announce_compile", announce)
    monkeypatch.setattr(search, "search_rows", rows)
    monkeypatch.setattr(tqdm, "tqdm", Bar)
    notice = ("announce", True, COMPILE_NOTICE)
    FastSearchAgent(seed=0, worlds=4).act(Game(2, seed=2).view())
    assert events[:2] == [notice, "search"], events
    events.clear()
    fast_eval.evaluate_fast_sides("fsearch:worlds=2", "greedy", 3, batch_size=2, progress=True)
    assert events[:3] == [notice, "search", "bar"], events[:4]
    # the bar moves by whole batches (2 then 1 deals, per seating): a batch's games end together
    assert [e for e in events if e[0] == "games"] == [("games", 2), ("games", 1)] * 2, events
    assert "compiling the compiled search once" in COMPILE_NOTICE
