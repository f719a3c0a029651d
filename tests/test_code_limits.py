"""No function of the packages is over 100 lines or takes more than 12 parameters (issue 50).

Read from the sources with ``ast``, nothing imported. A function's lines run from its ``def`` to
its last line (decorators left out; its docstring, comments and nested functions counted); its
parameters are the positional-only, positional and keyword-only ones (``self`` and ``cls``
among them), ``*args`` and ``**kwargs`` one each. Every function counts: methods, nested
functions, the numba kernels.

The functions that still break a limit are in :data:`ALLOWED`, each with why; a new one fails
:func:`test_no_function_is_over_the_limits`, and an entry that no longer breaks a limit (or no
longer exists) fails :func:`test_the_allowed_list_holds_only_offenders`, so the list only shrinks.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scopa_env", "agents", "train", "scopa_app")
"""The packages held to the limits (their ``.py`` files, every depth)."""
MAX_LINES = 100
MAX_PARAMETERS = 12

ALLOWED = {
    # A position from its parts, every part a keyword with a default (scenarios and tests name
    # the few they set); a bundle of the parts would be the same list under another name.
    "scopa_env/engine/game.py::Game.from_deal": "19 parameters: one keyword per part of a position",
    # The fsearch agent's options, each a keyword (agent specs name them: fsearch:worlds=64).
    "agents/fast_search.py::FastSearchAgent.__init__": "13 parameters: self, seed and the 11 search options",
}
"""``"path::qualified name"`` of each function allowed over a limit, and why."""


@functools.cache
def _functions() -> tuple[tuple[str, int, int], ...]:
    """``(key, lines, parameters)`` of every function in :data:`PACKAGES`, ``key`` as in :data:`ALLOWED`."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            found += _walk(ast.parse(path.read_text(), filename=relative), relative, "")
    return tuple(found)


def _walk(node: ast.AST, path: str, prefix: str):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + child.name
            args = child.args
            parameters = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
            parameters += (args.vararg is not None) + (args.kwarg is not None)
            yield f"{path}::{name}", child.end_lineno - child.lineno + 1, parameters
            yield from _walk(child, path, name + ".")
        elif isinstance(child, ast.ClassDef):
            yield from _walk(child, path, prefix + child.name + ".")
        else:
            yield from _walk(child, path, prefix)


def _offenders() -> dict[str, str]:
    """Every function over a limit: ``key -> "N lines, M parameters"``."""
    return {
        key: f"{lines} lines, {parameters} parameters"
        for key, lines, parameters in _functions()
        if lines > MAX_LINES or parameters > MAX_PARAMETERS
    }


def test_the_walk_finds_the_functions():
    """The walk sees the packages' functions: methods, nested functions and kernels by their qualified names."""
    keys = {key for key, _, _ in _functions()}
    assert len(keys) > 1000, len(keys)
    for key in (
        "scopa_env/fast/core/kernels.py::batch_rows",
        "scopa_env/fast/batch.py::BatchedScopa.step",
        "scopa_env/fast/search.py::search_rows.run",
    ):
        assert key in keys, key


def test_no_function_is_over_the_limits():
    new = {key: what for key, what in _offenders().items() if key not in ALLOWED}
    assert not new, (
        f"functions over {MAX_LINES} lines or {MAX_PARAMETERS} parameters (split them, or pass a bundle: "
        "scopa_env/fast/core/bundles.py):\n" + "\n".join(f"  {key}: {what}" for key, what in sorted(new.items()))
    )


def test_the_allowed_list_holds_only_offenders():
    stale = sorted(set(ALLOWED) - set(_offenders()))
    assert not stale, f"within the limits now (or gone): take them off ALLOWED in {Path(__file__).name}: {stale}"
