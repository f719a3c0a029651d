"""Every code block in README.md and docs/*.md is run here, so the documentation cannot rot.

* ```` ```python ```` blocks run for real, in order, one namespace per file, in a temporary folder.
* ```` ```bash ```` blocks: every ``scopa ...`` command is parsed by the real ``scopa`` argument
  parser, and what it names is checked: presets resolve, agent names build, training configs load
  and validate (SB3 and RLlib alike). Cheap commands then run for real with a small budget
  (``play-random``, ``eval`` / ``tournament`` between built-in agents, ``train --help-config``).
  Install lines (``pip``, ``python3 -m venv``, ``.``/``source``) are what CI itself runs first;
  ``pytest`` lines are this suite. Commands that need a finished run folder, a checkpoint or a Ray
  cluster are parsed and validated only.
* Blocks without a language are synopses and sample output, not code.
* README.md stays a page for newcomers: under 10,000 bytes (tests/test_readme.py checks the rest of it,
  and runs its training snippet with a small budget).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

from scopa_app.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# What CI itself runs (installs, lint, this suite) is not re-run from inside the suite.
NOT_RERUN = (
    "pip ",
    "python3 -m venv",
    ". ",
    "source ",
    "pytest",
    "python -m pytest",
    "SCOPA_DIFF_GAMES=",
    "ruff ",
    "lint-imports",  # the import-layer contract (pyproject.toml)
    "mkdocs ",  # builds or serves the documentation site
    "jupyter ",  # a notebook server
    ".venv-rllib/bin/pip",
    ".venv-rllib/bin/python -m pytest",
    "tensorboard ",  # a viewer (a server)
    "python -m train.report",  # needs finished run folders
    "python -m train.checkpoint",  # needs a model.zip (tests/test_new_user.py runs the docs' line)
    "ray ",  # starts or stops a Ray cluster
    "python -m train.zoo.make",  # needs a finished run folder (tests/test_dmc.py checks the zoo)
    "python -m train.zoo.page",  # rewrites docs/zoo.md (tests/test_zoo_page.py checks it)
    "python benchmarks/learning_curves.py",  # needs finished run folders
    "python benchmarks/snapshot_curve.py",  # needs a run with kept weights (tests/test_dmc.py runs it)
    "python benchmarks/dmc_workers.py",  # minutes of measurement, with Ray (tests/test_dmc_ray.py runs the workers)
    "python benchmarks/endgame_distill.py",  # minutes of data and fitting (tests/test_endgame_distill.py runs it small)
    "python benchmarks/endgame_regret.py",  # of a distill run's checkpoints (tests/test_endgame_regret.py runs it)
    "python -m train.dmc.endgame_fit",  # minutes of labels and fitting (tests/test_endgame_net.py runs it small)
)
CHECKPOINT_PREFIXES = ("ppo:", "dqn:", "rllib:", "dmc:")
TRAINS = "MaskablePPO("
"""A README python block that trains: tests/test_readme.py runs it with a small budget instead."""
README_MAX_BYTES = 10_000


def blocks(path: Path, language: str) -> list[str]:
    return [code for lang, code in BLOCK.findall(path.read_text()) if lang == language]


def shell_commands(path: Path) -> list[str]:
    """The commands of a file's bash blocks: continuations joined, comments and ``&&`` chains split."""
    out = []
    for code in blocks(path, "bash"):
        for line in code.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                cmd = part.strip()
                if cmd and not cmd.startswith("#"):
                    out.append(cmd)
    return out


@pytest.mark.parametrize("path", [p for p in DOCS if blocks(p, "python")], ids=lambda p: p.name)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__docs__"}
    for i, code in enumerate(blocks(path, "python")):
        if path.name == "README.md" and TRAINS in code:
            continue  # run by tests/test_readme.py with a small step count
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"{path.name}[python block {i}]", "exec"), namespace)


def test_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size < README_MAX_BYTES, (
        f"README.md is {size} bytes; keep it under {README_MAX_BYTES} for newcomers and put details in docs/"
    )


SCOPA_COMMANDS = [(p, c) for p in DOCS for c in shell_commands(p) if c.startswith("scopa ")]


def test_docs_have_commands():
    assert len(SCOPA_COMMANDS) >= 10, "the docs show the scopa commands"
    other = [c for p in DOCS for c in shell_commands(p) if not c.startswith(("scopa ", "python -m train.rllib"))]
    for cmd in other:
        assert cmd.startswith(NOT_RERUN), f"a shell command the docs test does not know how to check: {cmd!r}"


@pytest.mark.parametrize("path, command", SCOPA_COMMANDS, ids=[f"{p.name}:{c[:60]}" for p, c in SCOPA_COMMANDS])
def test_scopa_commands_parse_validate_and_run(path, command, tmp_path, monkeypatch):
    from scopa_app.cli import main

    argv = shlex.split(command, comments=True)[1:]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed why
        pytest.fail(f"{path.name}: {command!r} does not parse (exit {exc.code})")
    monkeypatch.chdir(ROOT)
    if args.command == "train":
        check_train_command(args)
        if args.help_config:
            assert main(argv) == 0
        return
    specs = [getattr(args, name) for name in ("agents", "opponent") if getattr(args, name, None)]
    flat = [s for group in specs for s in (group if isinstance(group, list) else [group])]
    if any(str(s).startswith(CHECKPOINT_PREFIXES) for s in flat):
        return  # needs a trained run folder: parsed only
    if args.command in ("play", "web"):
        return  # interactive / a server: parsed only (tests/test_play.py and tests/test_web.py drive them)
    monkeypatch.chdir(tmp_path)
    if args.command == "play-random":
        argv = [*argv, "--quiet", "--hand"]
    elif args.command in ("eval", "tournament"):
        argv = _with_option(_with_option(argv, "--games", "2"), "--workers", "1")
    elif args.command == "bench":
        argv = _with_option(argv, "--seconds", "0.2")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = main(argv)
    assert status == 0, f"{path.name}: {command!r} failed (exit {status})"


def _with_option(argv: list[str], option: str, value: str) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == option:
            skip = True
            continue
        if a.startswith(option + "="):
            continue
        out.append(a)
    return [*out, option, value]


def check_train_command(args) -> None:
    """Load and validate the config a ``scopa train`` line names, with its overrides."""
    from train.config import TrainConfig
    from train.rllib.cli import load_rllib_config
    from train.rllib.config import validate_config

    if args.help_config or args.resume or args.report:
        return  # no config file of its own (resume/report need a run folder)
    overrides = list(args.overrides)
    rl = load_rllib_config(args.config, overrides)
    if rl is not None:
        data, run_dir = rl  # as train.rllib.run does: the run folder fixes name and runs_dir
        validate_config({**data, "name": run_dir.name, "runs_dir": str(run_dir.parent)}, source=args.config)
    else:
        from train.dmc.config import DmcConfig, is_dmc_config

        (DmcConfig if is_dmc_config(args.config, overrides) else TrainConfig).load(args.config, overrides)
    assert os.path.isfile(args.config)


# --- the API reference ---------------------------------------------------------------------------------

API_PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.M)
USER_TYPES = [
    "scopa_env.engine.rules.Move",  # what an agent's act returns (defined in scopa_env.engine.captures)
    "scopa_env.engine.game.PlayerView",  # what an agent's act is given
    "scopa_env.engine.rules.Rules",
    "scopa_env.engine.rules.get_rules",
    "agents.base.Agent",
    "scopa_env.aec.scopa_v0.env",  # the environments' constructors
    "scopa_env.aec.scopa_v0.raw_env",
    "train.env.ScopaGymEnv",
    "scopa_env.fast.batch.BatchedScopa",
    "scopa_env.fast.vec_env.ScopaVectorEnv",
    "scopa_env.fast.vec_env.ScopaSB3VecEnv",
    "scopa_env.engine.game.HandResult",  # the results and scores a user reads
    "scopa_env.engine.scoring.score_hand",
]
if (ROOT / "scopa_env" / "engine" / "setup.py").is_file():
    USER_TYPES.append("scopa_env.engine.setup.GameSetup")


def api_directives() -> list[str]:
    return [name for page in API_PAGES for name in DIRECTIVE.findall(page.read_text())]


def imported(dotted: str):
    """The object a directive's dotted path names: the longest importable module, then attributes."""
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        try:
            obj = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise  # the module is there but one of its imports is not
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("name", USER_TYPES)
def test_api_reference_renders_the_types_a_user_touches(name):
    """Each type a user touches has its own ``:::`` directive in docs/api/*.md, and its path imports."""
    assert name in api_directives(), f"no '::: {name}' in docs/api/*.md"
    assert imported(name) is not None


def test_api_directives_are_not_repeated():
    """A name rendered twice would give the site two anchors of the same id."""
    names = api_directives()
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
