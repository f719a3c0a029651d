"""README.md is the newcomer's page: its two opening commands are what CI runs, its training snippet
runs (here with a small budget), its links resolve, its results summary matches docs/results.md, and it
tells no measurement history (that lives in benchmarks/results/ and docs/results.md)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BASH = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
PYTHON = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
MAIN_COMMAND = (
    'python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e ".[all]" '
    "&& scopa train configs/quickstart.yaml"
)
TEST_COMMAND = (
    'python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e ".[all]" '
    '&& ruff check . && ruff format --check . && lint-imports && mkdocs build --strict && python -m pytest -n 2 -m "not slow"'
)
SMALL_BUDGET = {  # the training snippet's budget -> what this test runs
    r"total_timesteps=[\d_]+": "total_timesteps=128",
    r"n_steps=\d+": "n_steps=64",
    r"games=\d+": "games=2",
}
HISTORY = re.compile(r"\bissue \d+|\brounds?\b|\b20\d\d-\d\d-\d\d\b|\bafter issue\b", re.I)


def readme() -> str:
    return README.read_text()


def test_opening_commands_are_the_main_job_and_ci():
    blocks = [b.strip() for b in BASH.findall(readme())]
    assert blocks[0] == MAIN_COMMAND, "README's first bash block installs and trains configs/quickstart.yaml"
    assert blocks[1] == TEST_COMMAND, "README's second bash block is the test command .ci/run extracts and runs"


def test_training_snippet_runs(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    snippets = [code for code in PYTHON.findall(readme()) if "MaskablePPO(" in code]
    assert len(snippets) == 1, "README has one Stable-Baselines3 training snippet"
    code = snippets[0]
    for pattern, small in SMALL_BUDGET.items():
        code, n = re.subn(pattern, small, code)
        assert n == 1, f"the snippet's budget {pattern!r} appears once (found {n}); update SMALL_BUDGET"
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    namespace: dict = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md[training snippet]", "exec"), namespace)
    report = namespace["report"]
    assert report["config"]["agents"][:2] == ["mine:ppo", "greedy"], "the trained agent played greedy"
    assert report["deals"] == 2, "the small budget played two duplicate deals"
    assert "mean" in out.getvalue(), "the snippet prints the margin with its CI"


def test_links_resolve():
    for target in re.findall(r"\]\(([^)]+)\)", readme()):
        if target.startswith(("http://", "https://")):
            continue
        path = target.split("#")[0]
        assert (ROOT / path).exists(), f"README links to {target}, which is not in the repository"


def test_no_measurement_history():
    found = [m.group(0) for m in HISTORY.finditer(readme())]
    assert not found, f"README tells history ({found}); measurements go to benchmarks/results/*.json"


def test_results_summary_is_in_the_results_page():
    text = readme()
    section = text.split("## Results", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert 0 < len(rows) <= 8, f"the README's results summary has at most eight rows, not {len(rows)}"
    page = (ROOT / "docs" / "results.md").read_text()
    for row in rows:
        figures = re.findall(r"[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]|\d{1,3}(?:,\d{3})+", row)
        assert figures, f"a summary row without a figure: {row}"
        for figure in figures:
            assert figure in page, f"README's {figure!r} ({row}) is not on docs/results.md"
