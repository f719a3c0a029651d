"""Every field of :class:`~scopa_env.engine.rules.Rules` is documented, declared, tested and, where the
compiled core claims it, compared with the engine.

For each field (``dataclasses.fields(Rules)``):

* a docstring under it in the class body of ``scopa_env/engine/rules.py`` (read with ``ast``);
* a declaration of the backends that play it (``metadata=backends(...)``, :class:`Support`);
* a rule test that names it and cites the rule text: a case of a test in ``tests/`` whose own
  text holds the field's name and a quoted source (``pagat: "..."``, ``wikipedia-scopa.txt:
  "..."``, ``booklet: "..."``, as the rule tests quote ``shared/rules-sources/``). A case is a
  test function's body, alone or with one row of its ``pytest.mark.parametrize`` list or of a
  module-level table it reads, so a name in one row and a quote in another do not make a case. Labels
  (``name``, ``description``: ``Support.rule=False``) have no rule text;
* where the compiled core claims it (``fast=True``), a differential case in the 40-card deck
  whose value of the field differs from the standard game's: a preset of ``tests/test_fast.py``'s
  differential cases (every preset the core plays, ``supported_presets``), a row of its
  ``EXTRAS_RULES`` or of ``tests/test_fast_fields.py``'s ``FIELD_CASES``; where it claims the
  52-card deck too (``french=True``), such a case with ``ranks_per_suit=13`` as well.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from pathlib import Path

import pytest
from test_fast import EXTRAS_RULES, supported_presets
from test_fast_fields import FIELD_CASES, field_case

from scopa_env.engine import rules as rules_module
from scopa_env.engine.rules import STANDARD, Rules, Support, get_rules, support_of

TESTS = Path(__file__).resolve().parent
FIELDS = [f.name for f in dataclasses.fields(Rules)]
CITATION = re.compile(r"\b(pagat|wikipedia|booklet|scopa-rules-short|web-game-help)\b[^\n]{0,160}?[\"“]", re.I)
"""A named source followed on the same line by a quotation mark: how the rule tests quote the texts."""


def field_docstrings() -> dict[str, str]:
    """Field name -> the string literal right under it in the class body of :class:`Rules`."""
    tree = ast.parse(Path(rules_module.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Rules")
    out = {}
    for stmt, after in zip(cls.body, [*cls.body[1:], None]):
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            doc = (
                after.value.value
                if isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                else ""
            )
            out[stmt.target.id] = doc.strip()
    return out


def _rows(node: ast.AST) -> list[ast.AST]:
    """The rows of a literal table: list/tuple/set items, dict items (key and value)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Dict):
        return [ast.Tuple(elts=[k, v]) for k, v in zip(node.keys, node.values) if k is not None]
    return []


def _text(lines: list[str], node: ast.AST) -> str:
    """The source lines of ``node`` (whole lines: a row's comment beside it is part of the row)."""
    if isinstance(node, ast.Tuple) and not hasattr(node, "lineno"):  # a dict item made above
        return "\n".join(_text(lines, e) for e in node.elts)
    return "\n".join(lines[node.lineno - 1 : node.end_lineno])


def _cases(path: Path) -> list[tuple[str, str]]:
    """``(test name, text)`` of every case of every test function in one test module."""
    source = path.read_text()
    tree, lines = ast.parse(source), source.splitlines()
    tables = {}
    for stmt in tree.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        for t in targets:
            if isinstance(t, ast.Name) and getattr(stmt, "value", None) is not None and _rows(stmt.value):
                tables[t.id] = stmt.value
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.name.startswith("test"):
            continue
        body = "\n".join(_text(lines, stmt) for stmt in fn.body)
        out.append((fn.name, body))
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id in tables}
        for deco in fn.decorator_list:
            if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize") and len(deco.args) > 1:
                values = deco.args[1]
                if isinstance(values, ast.Name) and values.id in tables:
                    used.add(values.id)
                else:
                    out += [(fn.name, body + "\n" + _text(lines, row)) for row in _rows(values)]
        for name in sorted(used):
            out += [(f"{fn.name} ({name})", body + "\n" + _text(lines, row)) for row in _rows(tables[name])]
    return out


@functools.cache
def all_cases() -> list[tuple[str, str]]:
    paths = [p for p in sorted(TESTS.glob("test_*.py")) if p.name != Path(__file__).name]  # not this walk
    return [(f"{p.name}::{name}", text) for p in paths for name, text in _cases(p)]


def rule_tests(field: str) -> list[str]:
    """The tests with a case that names ``field`` (as a word) and quotes a rule text."""
    word = re.compile(rf"\b{field}\b")
    return sorted({name for name, text in all_cases() if word.search(text) and CITATION.search(text)})


@functools.cache
def differential_rules() -> list[Rules]:
    """Every rules object the differential tests play on both engines (see the module docstring)."""
    out = [get_rules(name) for name in supported_presets()]
    # as test_scoring_extras_play_the_same_game builds them
    out += [STANDARD.replace(name=name, player_counts=(2, 4), **changes) for name, changes in EXTRAS_RULES.items()]
    out += [field_case(name) for name in FIELD_CASES]
    return out


def differential_cases(field: str, cards: int | None = None) -> list[str]:
    """Names of the differential rules (with a ``cards``-card deck, if given) whose ``field`` is not the
    standard game's."""
    return [
        r.name
        for r in differential_rules()
        if cards in (None, r.num_card_ids) and getattr(r, field) != getattr(STANDARD, field)
    ]


@pytest.mark.parametrize("field", FIELDS)
def test_every_field_has_a_docstring(field):
    doc = field_docstrings().get(field, "")
    assert doc, (
        f"Rules.{field} has no docstring under it in scopa_env/engine/rules.py: say what it does and quote the rule"
    )


@pytest.mark.parametrize("field", FIELDS)
def test_every_field_declares_its_backends(field):
    assert isinstance(support_of(field), Support), (
        f"Rules.{field} declares no backends: give it metadata=backends(fast=..., french=..., openspiel=..., "
        f"features=..., search=...) in scopa_env/engine/rules.py"
    )


@pytest.mark.parametrize("field", FIELDS)
def test_every_rule_field_has_a_rule_test_citing_its_text(field):
    support = support_of(field)
    if support is not None and not support.rule:
        assert field in ("name", "description"), f"Rules.{field} is declared a label (rule=False), not a rule"
        return
    assert rule_tests(field), (
        f"no test in tests/ names Rules.{field} in a case that quotes its rule text "
        f'(e.g. a parametrize row with "standard,{field}=..." and \'pagat: "..."\')'
    )


@pytest.mark.parametrize("field", FIELDS)
def test_every_field_the_core_claims_has_a_differential_case(field):
    support = support_of(field)
    if support is None or not support.rule:
        return
    if support.fast:  # ranks_per_suit differs from the standard game's only in the 52-card deck
        assert differential_cases(field), (
            f"Rules.{field} is declared fast=True but no differential case (tests/test_fast.py presets and "
            f"EXTRAS_RULES, tests/test_fast_fields.py FIELD_CASES) changes it"
        )
    if support.french:
        assert differential_cases(field, 52), (
            f"Rules.{field} is declared french=True but no differential case changes it in the 52-card deck "
            f"(add one to tests/test_fast_fields.py FIELD_CASES)"
        )


def test_the_readers_find_what_they_look_for():
    """The walk reads what it checks: every field's docstring, the rule tests and differential cases of
    a field known to have them, and none for a name no test uses."""
    assert field_docstrings().keys() == set(FIELDS), "the docstring reader misses fields"
    assert "pagat" in field_docstrings()["kings_redeal"], field_docstrings()["kings_redeal"]
    assert "test_rules_by_field.py::test_capture_fields" in rule_tests("capture_sum"), rule_tests("capture_sum")
    assert rule_tests("no_such_field") == [], "a name no test uses has rule tests"
    assert "escoba" in differential_cases("capture_sum", 40), "no differential case of capture_sum"
    assert differential_cases("hand_size", 52) == ["fields_52_play"], differential_cases("hand_size", 52)
