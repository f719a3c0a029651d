"""What a new user tries first: ``gymnasium.make``, a plain Stable-Baselines3 ``model.zip`` into
``scopa eval``, Jupyter from the ``all`` extra, and messages that say what to do next."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
TRAINING_MD = ROOT / "docs" / "training.md"


def run_python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


# --- 1. gymnasium.make ---------------------------------------------------------------------------


def test_make_registers_without_torch():
    """``gymnasium.make("train.env:scopa_rl/Scopa-v0")`` works in a fresh process and imports no torch."""
    code = (
        "import sys, gymnasium as gym\n"
        "env = gym.make('train.env:scopa_rl/Scopa-v0')\n"
        "env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, 'torch' in sys.modules)\n"
    )
    done = run_python("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ScopaGymEnv", "False"], f"registered env, no torch: {done.stdout!r}"


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"episode": "game", "num_players": 4}, {"rules": "piva", "episode": "game"}, {"action_mode": "move"}],
    ids=["default", "scopone-game", "piva", "move"],
)
def test_made_env_passes_gymnasium_and_sb3_checkers(kwargs):
    """What ``make`` returns passes both env checkers with warnings turned into errors."""
    pytest.importorskip("stable_baselines3")
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    import train.env  # noqa: F401  (registers the id)

    env = gym.make("scopa_rl/Scopa-v0", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
        sb3_check_env(env.unwrapped)
    assert np.isfinite(env.observation_space.high).all(), "the registered env's Box is bounded"


def test_direct_env_keeps_its_defaults():
    """``ScopaGymEnv()`` (what ``scopa train`` builds) still raises on illegal actions and leaves scores unbounded."""
    from train.env import ScopaGymEnv

    env = ScopaGymEnv()
    assert env.illegal_action == "raise"
    assert np.isinf(env.observation_space.high[env.layout["scores"]]).all(), "no clipping unless asked"
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="legal actions"):
        env.step(illegal)


def test_score_bound_clips_the_scores_entries():
    """Past ``score_bound`` times the target the scores entries are clipped, so observations stay in the Box."""
    from train.env import ScopaGymEnv

    env = ScopaGymEnv(episode="game", score_bound=2.0)
    env.reset(seed=1)
    env.game.scores[:] = [5 * env.rules.target, env.rules.target]
    obs = env._observe()
    assert obs[env.layout["scores"]].tolist() == [2.0, 1.0], "own side's 5x target shows as 2.0"
    assert env.observation_space.contains(obs)
    with pytest.raises(ValueError, match="score_bound"):
        ScopaGymEnv(score_bound=float("inf"))


# --- 2. a plain SB3 model.zip to scopa eval and scopa play --------------------------------------------


@pytest.fixture(scope="module")
def sb3_model(tmp_path_factory):
    """A ``model.zip`` saved by ``MaskablePPO.save`` from the registered env, and the in-memory model."""
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import train.env  # noqa: F401

    folder = tmp_path_factory.mktemp("sb3")
    env = gym.make("scopa_rl/Scopa-v0")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, policy_kwargs={"net_arch": [48, 24]})
    model.save(folder / "model.zip")
    return folder, model


def docs_convert_command() -> list[str]:
    """The ``python -m train.checkpoint`` line of docs/training.md, as argv after the module."""
    lines = [ln for ln in TRAINING_MD.read_text().splitlines() if ln.startswith("python -m train.checkpoint ")]
    assert len(lines) == 1, "docs/training.md shows one conversion line"
    return shlex.split(lines[0])[3:]


def test_docs_conversion_line_writes_a_checkpoint_eval_and_play_take(sb3_model):
    """The docs' command converts the zip (weights only, no warning); the agent acts as the SB3 model."""
    from agents.registry import make_agent
    from train.sb3.policy_agent import load_batch_policy

    folder, model = sb3_model
    argv = docs_convert_command()
    done = run_python("-m", "train.checkpoint", *argv, cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "RuntimeWarning" not in done.stderr and "Warning" not in done.stderr, done.stderr
    out = folder / argv[argv.index("--out") + 1]
    policy, meta = load_batch_policy(out)
    assert meta["net_arch"] == [48, 24], "net_arch read from the weights' shapes"
    rng = np.random.default_rng(0)
    obs = rng.random((64, 376), dtype=np.float32)
    masks = rng.random((64, 41)) < 0.3
    masks[np.arange(64), rng.integers(41, size=64)] = True
    expected, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert (policy(obs, masks) == expected).all(), "the converted policy is the saved model's"
    agent = make_agent(f"ppo:{out}")
    assert agent.name.startswith("ppo:"), "scopa eval/play build the agent from the spec"


def test_conversion_infers_players_and_mode_and_refuses_what_it_cannot_rebuild(sb3_model, tmp_path):
    from train.checkpoint import import_sb3_zip, read_meta

    folder, _ = sb3_model
    out = import_sb3_zip(folder / "model.zip", tmp_path / "inferred", "standard")
    meta = read_meta(out)
    assert (meta["num_players"], meta["action_mode"]) == (2, "select"), "the only game of those sizes"
    with pytest.raises(ValueError, match="no game under 'scopone'"):
        import_sb3_zip(folder / "model.zip", tmp_path / "bad", "scopone")
    with pytest.raises(ValueError, match="already a checkpoint folder"):
        import_sb3_zip(folder / "model.zip", out, "standard")


def test_conversion_refuses_another_activation_and_split_widths(tmp_path):
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from train.checkpoint import import_sb3_zip
    from train.env import ScopaGymEnv

    env = ScopaGymEnv(illegal_action="lose")
    for name, kwargs, message in (
        ("relu", {"net_arch": [16], "activation_fn": torch.nn.ReLU}, "activation_fn"),
        ("split", {"net_arch": {"pi": [16], "vf": [8, 8]}}, "one net_arch for both"),
    ):
        MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, policy_kwargs=kwargs).save(tmp_path / f"{name}.zip")
        with pytest.raises(ValueError, match=message):
            import_sb3_zip(tmp_path / f"{name}.zip", tmp_path / name, "standard")
        assert not (tmp_path / name).exists(), "nothing is written for a refused model"


def test_eval_of_a_bare_zip_says_how_to_convert(sb3_model, capsys):
    from scopa_app.cli import main

    folder, _ = sb3_model
    assert main(["eval", f"ppo:{folder / 'model.zip'}", "random", "--games", "2"]) != 0
    err = capsys.readouterr().err
    assert "python -m train.checkpoint" in err and "--out" in err, err


def test_checkpoint_module_runs_without_runpy_warning():
    """Nothing imports train.checkpoint on ``import train``, so runpy has nothing to warn about."""
    done = run_python("-W", "error::RuntimeWarning", "-m", "train.checkpoint", "--help")
    assert done.returncode == 0 and "RuntimeWarning" not in done.stderr, done.stderr
    assert re.search(r"--out", done.stdout), "the help shows the import of a plain model.zip"


# --- 3. Jupyter from the install the README gives ------------------------------------------------


def test_all_extra_brings_jupyterlab():
    """``pip install -e ".[all]"`` (README's install) includes the ``notebooks`` extra, which has JupyterLab."""
    from importlib.metadata import metadata

    requires = metadata("scopa-rl").get_all("Requires-Dist") or []
    notebooks = [r for r in requires if r.endswith('extra == "notebooks"')]
    assert any(r.startswith("jupyterlab") for r in notebooks), f"notebooks extra: {notebooks}"
    (everything,) = [r for r in requires if r.endswith('extra == "all"')]
    assert "notebooks" in everything.split("[")[1].split("]")[0].split(","), everything
    readme = (ROOT / "README.md").read_text()
    assert "pip install jupyterlab" not in readme, "the README's install already brings JupyterLab"


# --- 4. messages that say what to do next ----------------------------------------------------------


def test_ctrl_c_before_the_first_checkpoint_says_how_to_start_again(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    import train.sb3.trainer
    from scopa_app.cli import main

    def interrupted(cfg, resume=False, report=True):
        raise KeyboardInterrupt

    monkeypatch.setattr(train.sb3.trainer, "train", interrupted)
    argv = ["train", str(ROOT / "configs" / "quickstart.yaml"), f"runs_dir={tmp_path}", "name=ctrlc"]
    assert main(argv) == 130, "Ctrl-C exits with 130"
    err = capsys.readouterr().err.strip()
    assert "before the first checkpoint" in err and "scopa train " in err and "quickstart.yaml" in err, err
    assert "\n" not in err, "one line"


def test_ctrl_c_after_a_checkpoint_says_how_to_resume_or_report(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    import train.sb3.trainer
    from scopa_app.cli import main

    def interrupted(cfg, resume=False, report=True):
        latest = Path(cfg.runs_dir) / cfg.name / "latest"
        latest.mkdir(parents=True)
        (latest / "state.json").write_text('{"timestep": 20000}')
        raise KeyboardInterrupt

    monkeypatch.setattr(train.sb3.trainer, "train", interrupted)
    assert main(["train", str(ROOT / "configs" / "quickstart.yaml"), f"runs_dir={tmp_path}", "name=ctrlc"]) == 130
    err = capsys.readouterr().err
    run_dir = tmp_path / "ctrlc"
    assert f"scopa train --resume {run_dir}" in err and f"scopa train --report {run_dir}" in err, err
    assert "step 20,000" in err, err


def test_resume_before_the_first_checkpoint_names_what_is_missing(tmp_path):
    pytest.importorskip("torch")
    from train.config import ConfigError, TrainConfig
    from train.run import resume_config

    run_dir = tmp_path / "early"
    run_dir.mkdir()
    TrainConfig.load(ROOT / "configs" / "quickstart.yaml").dump(run_dir / "config.yaml")
    with pytest.raises(ConfigError) as info:
        resume_config(run_dir, None, [])
    message = str(info.value)
    assert "latest/meta.json is missing" in message and "no config.yaml" not in message, message
    assert f"scopa train {run_dir / 'config.yaml'}" in message, "says how to start it again"
    (run_dir / "config.yaml").unlink()
    with pytest.raises(ConfigError, match="has no config.yaml"):
        resume_config(run_dir, None, [])


def test_unknown_algo_lists_dmc_too():
    from train.config import ConfigError, TrainConfig

    with pytest.raises(ConfigError, match=r"algo must be one of \['ppo', 'dqn', 'dmc'\], got 'dqnn'"):
        TrainConfig.load(ROOT / "configs" / "quickstart.yaml", ["algo=dqnn"])


@pytest.mark.parametrize(
    "command, option",
    [("eval", "--json"), ("eval", "--csv"), ("tournament", "--png"), ("tournament", "--json")],
)
def test_output_in_a_missing_folder_is_refused_before_any_game(command, option, tmp_path, monkeypatch, capsys):
    import scopa_app.evaluate
    from scopa_app.cli import main

    def no_games(*args, **kwargs):
        raise AssertionError("a game was played before the output path was checked")

    monkeypatch.setattr(scopa_app.evaluate, "run_deals", no_games)
    monkeypatch.setattr(scopa_app.evaluate, "tournament", no_games)
    path = tmp_path / "missing" / "out.file"
    assert main([command, "random", "greedy", "--games", "2", option, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"scopa {command}: error: {option} ") and "does not exist" in err and "\n" not in err, err


def test_a_word_at_the_move_prompt_says_what_is_expected():
    from test_play import run_script

    code, text, _ = run_script(["clear", "2d"])
    assert "'clear' is not a move" in text and "number (1-3)" in text, text
    assert "unknown rank" not in text, "a word is not read as a card with an odd rank"


@pytest.mark.parametrize("command", ["play-random", "play"])
def test_negative_seed_names_the_option(command, capsys):
    from scopa_app.cli import main

    with pytest.raises(SystemExit) as info:
        main([command, "--seed", "-1"])
    assert info.value.code == 2
    assert "argument --seed: must be a non-negative integer, got -1" in capsys.readouterr().err


def test_play_doc_gives_the_real_default_opponent():
    from scopa_app.play import default_opponent

    line = next(ln for ln in (ROOT / "docs" / "play.md").read_text().splitlines() if ln.startswith("* `--opponent`"))
    assert f"`{default_opponent('standard', 2)}` for the standard" in line, line
    assert "(default `heuristic`)" not in line


def test_docs_evaluate_each_quick_run_with_its_algorithm():
    """A ``PREFIX:runs/NAME`` in the docs, where ``configs/NAME.yaml`` trains that run, uses that config's algo."""
    import yaml

    found = 0
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for prefix, name in re.findall(r"\b(ppo|dqn|dmc):runs/(\w+)", doc.read_text()):
            config = ROOT / "configs" / f"{name}.yaml"
            if config.is_file():
                found += 1
                algo = yaml.safe_load(config.read_text()).get("algo", "ppo")
                assert prefix == algo, f"{doc.name}: {prefix}:runs/{name} but {config.name} trains {algo}"
    assert found, "the docs evaluate at least one run of a shipped config"


def test_switching_card_style_renames_the_cards_in_the_banner():
    """The web page's banner is rewritten in the new card style (app.js restyleMessage, run in node)."""
    import json
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    static = ROOT / "scopa_app" / "web" / "static"
    app = (static / "app.js").read_text()
    start = app.index("  function restyleMessage(")
    body = app[start : app.index("\n  }\n", start) + 4]
    switch = app[app.index("  function switchStyle()") :]
    assert "restyleMessage(" in switch[: switch.index("\n  }\n")], "switchStyle restyles the banner"
    script = (
        (static / "cards.js").read_text()
        + "\nconst box = {textContent: "
        + json.dumps("Your Sette di denari can take Re di coppe, so it cannot be trailed.")
        + "};\nconst $ = () => box;\n"
        + body
        + "\nrestyleMessage('italian', 'french');\nconsole.log(box.textContent);\n"
    )
    done = subprocess.run([node, "-"], input=script, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Your Seven of diamonds can take King of hearts, so it cannot be trailed.", (
        done.stdout
    )


# --- 5. what a new user still hits (issue 49) ----------------------------------------------------


def fake_sb3_run(run_dir: Path, done: int, algo: str = "ppo") -> Path:
    """A PPO or DQN run folder of configs/quickstart.yaml whose ``latest`` has trained ``done`` steps."""
    import json

    from train.checkpoint import MODEL_FILES, write_meta
    from train.config import IDENTITY_KEYS, TrainConfig

    cfg = TrainConfig.load(ROOT / "configs" / "quickstart.yaml", [f"algo={algo}"])
    run_dir.mkdir(parents=True)
    cfg.dump(run_dir / "config.yaml")
    latest = run_dir / "latest"
    write_meta(latest, {**{k: getattr(cfg, k) for k in IDENTITY_KEYS}, "timestep": done})
    (latest / MODEL_FILES[algo]).write_bytes(b"")
    (latest / "state.json").write_text(json.dumps({"timestep": done}))
    return run_dir


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_resume_below_the_steps_done_is_refused_and_leaves_the_config(algo, tmp_path, capsys):
    """``--resume RUN total_timesteps=100`` after 150,000 steps: one line naming the steps done, and
    config.yaml is not rewritten (it still reproduces the report)."""
    from scopa_app.cli import main

    run_dir = fake_sb3_run(tmp_path / "quickstart", 150_000, algo)
    before = (run_dir / "config.yaml").read_bytes()
    assert main(["train", "--resume", str(run_dir), "total_timesteps=100"]) == 2
    err = capsys.readouterr().err.strip()
    assert "already trained 150,000 steps" in err and "total_timesteps=100" in err and "\n" not in err, err
    assert (run_dir / "config.yaml").read_bytes() == before, "a refused resume rewrote config.yaml"


def test_resume_at_the_saved_budget_or_above_is_accepted(tmp_path):
    """The saved budget (a run may end past it) and a larger one still resume."""
    from train.run import resume_config

    run_dir = fake_sb3_run(tmp_path / "quickstart", 151_552)
    assert resume_config(run_dir, None, []).total_timesteps == 150_000
    assert resume_config(run_dir, None, ["total_timesteps=400000"]).total_timesteps == 400_000


def test_dmc_resume_below_the_steps_done_is_refused_and_leaves_the_config(tmp_path, capsys):
    """The DMC path of ``--resume`` refuses a budget below its decisions done the same way."""
    import json

    from scopa_app.cli import main
    from train.dmc.config import DmcConfig

    run_dir = tmp_path / "dmc_run"
    (run_dir / "latest").mkdir(parents=True)
    DmcConfig.from_dict({"name": "dmc_run", "runs_dir": str(tmp_path), "total_timesteps": 2000}).dump(
        run_dir / "config.yaml"
    )
    (run_dir / "latest" / "state.json").write_text(json.dumps({"timestep": 2048}))
    before = (run_dir / "config.yaml").read_bytes()
    assert main(["train", "--resume", str(run_dir), "total_timesteps=100"]) == 2
    err = capsys.readouterr().err.strip()
    assert "already trained 2,048 steps" in err and "\n" not in err, err
    assert (run_dir / "config.yaml").read_bytes() == before, "a refused resume rewrote config.yaml"


@pytest.mark.parametrize("limit", [None, 20_000], ids=["default-limit", "raised-limit"])
@pytest.mark.parametrize("override", [[], ["seed=3"]], ids=["file", "with-override"])
def test_a_config_nested_too_deeply_is_one_line(override, limit, tmp_path, capsys):
    """Too deep is too deep whatever the recursion limit: a parse that succeeds under a raised limit
    (another library or test may raise it) is refused alike, and an override as deep is too."""
    from scopa_app.cli import main

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit or old)
    deep = tmp_path / "deep.yaml"
    deep.write_text("net_arch: " + "[" * 3000 + "]" * 3000 + "\n")
    try:
        assert main(["train", str(deep), *override]) == 2
    finally:
        sys.setrecursionlimit(old)
    err = capsys.readouterr().err.strip()
    assert err == f"scopa train: error: {deep}: not valid YAML (nested too deeply)", err
    assert main(["train", "configs/quickstart.yaml", "net_arch=" + "[" * 40 + "]" * 40]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "scopa train: error: override net_arch=...: bad value (nested too deeply)", err


def test_a_broken_yaml_file_is_one_line(tmp_path, capsys):
    from scopa_app.cli import main

    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nnet_arch: [16\nseed: 3\n")
    assert main(["train", str(broken)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"scopa train: error: {broken}: not valid YAML") and "\n" not in err, err


USER_AGENTS = """
from agents.base import Agent
from agents.random_agent import RandomAgent


class MyAgent(RandomAgent):
    name = "mine"


class WrongAct(RandomAgent):
    def act(self):
        return None
"""


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    """A user's own agents module in the working folder (``scopa`` is started there), cleaned up after."""
    from agents.registry import user_class

    module = f"my_agents_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(USER_AGENTS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield module
    sys.modules.pop(module, None)
    user_class.cache_clear()


def test_module_class_plays_in_eval_and_tournament(user_folder, capsys):
    """``module:Class`` from the working folder works wherever an agent is named, not only in the leaderboard."""
    from scopa_app.cli import main

    spec = f"{user_folder}:MyAgent"
    assert main(["eval", spec, "greedy", "--games", "2", "--no-progress"]) == 0, capsys.readouterr().err
    assert spec in capsys.readouterr().out
    assert main(["tournament", spec, "random", "--games", "1", "--no-progress", "--png", ""]) == 0
    assert spec in capsys.readouterr().out


def test_module_class_plays_in_play_and_web(user_folder, monkeypatch, capsys):
    from scopa_app.cli import main
    from scopa_app.play import new_terminal_game

    spec = f"{user_folder}:MyAgent"

    def leave(prompt):
        raise EOFError

    tg = new_terminal_game(opponent=spec, input_fn=leave, output_fn=lambda text: None)
    assert type(tg.agents[1]).__name__ == "MyAgent", tg.agents
    pytest.importorskip("uvicorn")
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    assert main(["web", "--port", "0", "--opponent", spec]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("command", ["eval", "leaderboard"])
def test_a_wrong_act_signature_is_refused_before_any_game(user_folder, command, monkeypatch, capsys):
    """``act(self)`` is caught before the first game, in one line naming the interface."""
    import agents.leaderboard
    import scopa_app.evaluate
    from scopa_app.cli import main

    def no_games(*args, **kwargs):
        raise AssertionError("a game was played before the interface was checked")

    for module in (scopa_app.evaluate, agents.leaderboard):
        monkeypatch.setattr(module, "run_deals", no_games)
    monkeypatch.setattr(agents.leaderboard, "play_deals_compiled", no_games)
    argv = [command, f"{user_folder}:WrongAct", *(["greedy"] if command == "eval" else ["--quick"]), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert f"{user_folder}:WrongAct.act() does not take one view" in err and "act(self, view)" in err, err
    assert "\n" not in err, err


def test_a_typo_in_the_class_name_names_the_module_and_the_class(user_folder, capsys):
    from scopa_app.cli import main

    assert main(["eval", f"{user_folder}:MyAgnt", "greedy", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"the module {user_folder}" in err and "has no 'MyAgnt'" in err, err
    assert f"did you mean {user_folder}:MyAgent?" in err and "is nothing" not in err, err


def test_bad_agent_options_list_the_valid_ones(capsys):
    from scopa_app.cli import main

    assert main(["eval", "fsearch:wrlds=64", "greedy"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no option 'wrlds'; fsearch takes worlds," in err and "\n" not in err, err


def test_one_card_in_hand_is_said_in_the_singular():
    from test_play import run_script

    from scopa_env.engine.cards import parse_cards
    from scopa_env.engine.game import Game
    from scopa_env.engine.rules import STANDARD

    hands, table = [parse_cards("2d"), parse_cards("Ac")], parse_cards("7c 7s")
    used = set(hands[0] + hands[1] + table)
    game = Game.from_deal(hands, table, [c for c in STANDARD.deck if c not in used], dealer=1, seed=0)
    _, text, _ = run_script(["5", "m4"], game)
    assert "you hold 1 card: choose 1 or name a card" in text, text
    assert "there is 1 legal move: choose m1" in text, text
    assert "1 cards" not in text and "1..1" not in text, text


@pytest.mark.parametrize(
    "files, hidden",
    [({"train.py": "x = 1\n"}, "train.py"), ({"agents/__init__.py": "", "agents/mine.py": ""}, "agents")],
    ids=["train.py", "agents-folder"],
)
def test_a_users_train_or_agents_in_the_working_folder_is_named_in_one_line(files, hidden, tmp_path):
    """``python -m scopa_app.cli`` searches the working folder first: a user's ``train.py`` or ``agents/``
    there would replace the kit's package, so it is named before anything is imported from it."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    done = run_python("-m", "scopa_app.cli", "eval", "random", "greedy", "--games", "1", cwd=tmp_path)
    err = done.stderr.strip()
    assert done.returncode == 2 and "Traceback" not in err and "\n" not in err, err
    assert err.startswith(f"scopa: error: {tmp_path / hidden} hides the kit's ") and "rename it" in err, err


def test_a_folder_of_data_named_agents_is_no_problem(tmp_path):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "notes.txt").write_text("checkpoints I like\n")
    done = run_python("-m", "scopa_app.cli", "presets", cwd=tmp_path)
    assert done.returncode == 0 and "standard" in done.stdout, done.stderr


def test_a_module_class_named_like_a_kit_package_says_so(tmp_path):
    """``scopa eval train:MyAgent`` with the user's own ./train.py: the name is the kit's, said in one line."""
    (tmp_path / "train.py").write_text(USER_AGENTS)
    scopa = Path(sys.executable).parent / "scopa"
    done = subprocess.run(
        [str(scopa), "eval", "train:MyAgent", "greedy"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    err = done.stderr.strip()
    assert done.returncode == 2 and "\n" not in err, err
    assert "your ./train.py cannot be imported under the kit's package name: rename it" in err, err
