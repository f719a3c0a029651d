"""The layers: rules -> environments -> agents -> training -> applications, imports only pointing down.

The contract itself is import-linter's (``[tool.importlinter]`` in pyproject.toml, also run as
``lint-imports`` by the README's test command); these tests hold it, show that it can fail, and
check what it cannot see: import cycles, imports by string (importlib, runpy), the old module
paths kept as aliases, and the checkpoint agents registered through entry points only.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import grimp
import pytest
import tomllib
from importlinter import cli as importlinter_cli

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
PACKAGES = tuple(CONFIG["root_packages"])
LAYERS: list[list[str]] = [
    [name.strip() for name in layer.split("|")] for layer in CONFIG["contracts"][0]["layers"]
]  # top first


def layer_of(module: str) -> int | None:
    """Index of ``module``'s layer counted from the bottom (0: the rules engine), None if unlayered."""
    for depth, layer in enumerate(reversed(LAYERS)):
        if any(module == m or module.startswith(m + ".") for m in layer):
            return depth
    return None


def test_every_module_is_in_a_layer():
    """A module outside every layer would escape the contract."""
    graph = grimp.build_graph(*PACKAGES)
    loose = sorted(m for m in graph.modules if m not in PACKAGES and layer_of(m) is None and m != "scopa_env._moved")
    assert not loose, f"modules in no layer of [tool.importlinter]: {loose}"


def test_the_layers_contract_is_kept(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert importlinter_cli.lint_imports(config_filename="pyproject.toml") == 0, (
        "lint-imports reports a broken contract"
    )


def test_the_contract_fails_on_an_upward_import(tmp_path, monkeypatch):
    """The same kind of contract over a two-layer toy package breaks on one lazy upward import."""
    pkg = tmp_path / "toy"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "high.py").write_text("from toy.low import thing\n")
    (pkg / "low" / "thing.py").write_text("def f():\n    from toy import high  # lazy, upward\n")
    (tmp_path / "setup.cfg").write_text(
        "[importlinter]\nroot_package = toy\n\n[importlinter:contract:1]\nname = toy layers\ntype = layers\n"
        "layers =\n    toy.high\n    toy.low\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlinter_cli.lint_imports(config_filename="setup.cfg") == 1


def cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in imports.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_two_modules_import_each_other():
    """No circle of imports, direct or through others, lazy ones included (grimp reads them all)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        graph = grimp.build_graph(*PACKAGES)
    finally:  # the raised limit would outlive the test in this worker (tests/test_new_user.py reads YAML)
        sys.setrecursionlimit(limit)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    assert cycles(imports) == []


STRING_IMPORTERS = {
    ("importlib", "import_module"),
    ("runpy", "run_module"),
    ("importlib.util", "find_spec"),
}


def _string_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module named by a constant or an f-string's constant head) of each import by string."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = None
        if isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Name, ast.Attribute)):
            owner = ast.unparse(func.value)
            if (owner, func.attr) in STRING_IMPORTERS:
                name = func.attr
        elif isinstance(func, ast.Name) and func.id == "__import__":
            name = "__import__"
        if name is None:
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.append((node.lineno, arg.value))
        elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
            out.append((node.lineno, str(arg.values[0].value)))
        else:
            out.append((node.lineno, "<computed>"))
    return out


def test_no_import_by_string_points_up():
    """What import-linter cannot see: a module named in a string must be in the importer's layer or below."""
    bad = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            if module == "scopa_env._moved":
                continue  # the aliases of old paths, checked below
            for line, target in _string_imports(path):
                if target.split(".")[0] not in PACKAGES:
                    if target == "<computed>":
                        bad.append(f"{module}:{line} imports a computed module name")
                    continue
                here, there = layer_of(module), layer_of(target.rstrip("."))
                if here is None or there is None or there > here:
                    bad.append(f"{module}:{line} imports {target!r} by string, from a layer above")
    assert not bad, bad


def test_string_import_finder_sees_them(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "import importlib, runpy\nimportlib.import_module('train.x')\nrunpy.run_module(f'scopa_app.{n}')\n"
    )
    assert _string_imports(source) == [(2, "train.x"), (3, "scopa_app.")]


def test_moved_aliases_point_down_except_the_declared_ones():
    from scopa_env import _moved

    for old, new in _moved.MOVED.items():
        leaves_the_package = not new.startswith("scopa_env.")  # up into agents, train or the applications
        assert leaves_the_package == (old in _moved.UPWARD), (old, new)


@pytest.mark.parametrize("old", sorted(__import__("scopa_env._moved", fromlist=["MOVED"]).MOVED))
def test_old_import_paths_still_work(old):
    """Every module path of the former layout imports, as the very module of the new one, with a warning."""
    from scopa_env import _moved

    new = _moved.MOVED[old]
    if new == "scopa_env.openspiel.game":
        pytest.importorskip("pyspiel")
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught), old


@pytest.mark.parametrize("old", sorted(__import__("train._moved", fromlist=["MOVED"]).MOVED))
def test_old_train_paths_still_work(old):
    """Every module path of train/'s flat layout imports as the very module of its learner's package (so
    classes, functions and patches are the same objects), with a warning naming the new path."""
    from train import _moved

    new = _moved.MOVED[old]
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught), old


def test_old_train_paths_name_no_module_that_still_stands():
    """An alias never hides a module: each old path's file is gone, each new one is there."""
    from train import _moved

    for old, new in _moved.MOVED.items():
        assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), old
        assert (ROOT / (new.replace(".", "/") + ".py")).is_file(), new


def test_train_dmc_keeps_the_names_of_the_former_module():
    """``train.dmc`` was the learner's module before it was the package: every name the learner's module
    has (its own and those it imports) is still found there, as the same object."""
    import train.dmc
    from train.dmc import learner

    names = [n for n in vars(learner) if not n.startswith("__")]
    assert {"train", "DmcConfig", "build_learner", "Segment", "collect", "learn", "seed_and_device"} <= set(names)
    for name in names:
        assert getattr(train.dmc, name) is getattr(learner, name), name
    from train.dmc import EVALUATED_DIR, Actors, DmcConfig, dmc_dispatch, is_dmc_config  # noqa: F401

    with pytest.raises(ImportError):
        from train.dmc import no_such_name  # noqa: F401


def test_importing_a_dmc_module_loads_not_the_learner():
    """``dmc:PATH`` agents import :mod:`train.dmc.agent`; the package's old names wait until asked for."""
    code = "import sys, train.dmc.agent; print('train.dmc.learner' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"], out.stderr[-800:]


def test_agent_entry_points_name_the_new_paths():
    """pyproject's ``scopa.agents`` entry points name the modules where they live now, not the aliases."""
    from train import _moved

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["scopa.agents"]
    for prefix, target in declared.items():
        module, _, name = target.partition(":")
        assert module not in _moved.MOVED, (prefix, target)
        assert callable(getattr(importlib.import_module(module), name)), target


def test_old_names_used_in_docs_resolve():
    """A few names the guides import from the old paths (docs before the layered layout)."""
    from scopa_env.engine.game import Game
    from scopa_env.engine.rules import get_rules

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from scopa_env.game import Game as OldGame
        from scopa_env.play import TerminalGame
        from scopa_env.rules import get_rules as old_get_rules

    assert OldGame is Game and old_get_rules is get_rules and TerminalGame.__module__ == "scopa_app.play"


def test_python_m_on_an_old_path_runs_the_new_module():
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "scopa_env.fast.bench", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0 and "usage" in out.stdout.lower(), out.stderr[-400:]


def test_importing_train_registers_nothing():
    """Checkpoint agents come from entry points, loaded when a spec names them, not from import side effects."""
    code = textwrap.dedent(
        """
        import sys
        import agents.registry as r, train
        assert not r._FACTORIES, r._FACTORIES
        assert "torch" not in sys.modules and "train.dmc.agent" not in sys.modules
        r.make_agent("zoo:standard-2p")
        assert "train.zoo" in sys.modules and set(r._FACTORIES) == {"zoo"}
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr[-800:]


def test_every_declared_agent_prefix_is_known():
    from agents.registry import ARGUMENT_OF, known_specs

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["scopa.agents"]
    assert {f"{p}:{ARGUMENT_OF.get(p, 'PATH')}" for p in declared} <= set(known_specs())
    assert "zoo:NAME" in known_specs(), "zoo: takes a name (scopa zoo lists them), not a path"


def test_another_package_adds_an_agent_through_an_entry_point(tmp_path):
    """A researcher's package declares ``[project.entry-points."scopa.agents"]``; its spec then works."""
    (tmp_path / "myagents.py").write_text(
        "from agents.random_agent import RandomAgent\n"
        "def make(argument, seed=None):\n"
        "    agent = RandomAgent(seed=seed)\n"
        "    agent.name = 'mine:' + argument\n"
        "    return agent\n"
    )
    info = tmp_path / "myagents-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myagents\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[scopa.agents]\nmine = myagents:make\n")
    code = "from agents.registry import make_agent; print(make_agent('mine:x', seed=1).name)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=_env_with_path(tmp_path)
    )
    assert out.stdout.strip() == "mine:x", out.stderr[-800:]


def _env_with_path(path: Path) -> dict:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
    return env


# --- import direction -----------------------------------------------------------------------------


def imports_of(module: str) -> set[str]:
    """Every module ``module`` imports, at the top or inside a function."""
    tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def reaches(start: str, target: str, within: tuple[str, ...]) -> bool:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for dep in imports_of(module):
            if dep == target:
                return True
            if dep.startswith(within) and (ROOT / (dep.replace(".", "/") + ".py")).is_file():
                todo.append(dep)
    return False


def test_dependency_arrows_go_one_way():
    """rules <- presets, and dqn -> run -> policy_agent without a way back (issue 17's two import circles)."""
    from scopa_env.engine.rules import PRESETS

    assert reaches("scopa_env.engine.presets", "scopa_env.engine.rules", ("scopa_env",))
    assert not reaches("scopa_env.engine.rules", "scopa_env.engine.presets", ("scopa_env",)), "rules imports presets"
    assert reaches("train.sb3.dqn", "train.sb3.policy_agent", ("train",))
    for module in ("train.run", "train.sb3.policy_agent", "train.checkpoint"):
        assert not reaches(module, "train.sb3.dqn", ("train",)), f"{module} leads back to train.sb3.dqn"
    assert "chkobba" in PRESETS, "the package still registers every preset"
