"""Smoke runs of every config with a tiny budget, determinism, resume, and configs rejected early
(unknown or mistyped keys, values out of their ranges) before anything is written."""

import csv
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")

from cli_helpers import one_line_error  # noqa: E402

from scopa_app.cli import main  # noqa: E402
from train.config import ConfigError, TrainConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# configs with `backend: rllib` belong to train/rllib and are smoke-tested in tests/test_rllib.py;
# `algo: dmc` configs in tests/test_dmc.py.
CONFIGS = [
    p
    for p in sorted((ROOT / "configs").glob("*.yaml"))
    if "backend" not in (data := yaml.safe_load(p.read_text()) or {}) and data.get("algo") != "dmc"
]

TINY = [
    "total_timesteps=256",
    "n_envs=2",
    "n_steps=64",
    "batch_size=32",
    "n_epochs=1",
    "net_arch=[32]",
    "eval_every=128",
    "eval_pairs=1",
    "final_eval_pairs=1",
    "learning_starts=64",
    "buffer_size=512",
    "target_update_interval=64",
    "selfplay_every=128",
    "pretrain_steps=256",
    "pretrain_epochs=1",
    "progress_bar=false",
]


def read_csv(path: Path) -> list[dict]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_there_are_the_documented_configs():
    names = {p.stem for p in CONFIGS}
    assert {"quickstart", "ppo_vs_heuristic", "ppo_selfplay", "dqn_vs_greedy"} <= names


QUICK_CONFIGS = {"quickstart", "dqn_vs_greedy", "ppo_vs_heuristic"}
"""The configs trained in the quick tier; the others (longer: curricula, self-play, the 52-card game) are ``slow``."""


@pytest.mark.parametrize(
    "config", [pytest.param(p, id=p.stem, marks=() if p.stem in QUICK_CONFIGS else pytest.mark.slow) for p in CONFIGS]
)
def test_every_config_trains_with_a_tiny_budget(config, tmp_path, scopa_cli):
    result = scopa_cli("train", str(config), f"runs_dir={tmp_path}", *TINY)
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / config.stem
    for name in ("config.yaml", "evaluations.csv", "report.md", "margin.png", "latest/meta.json", "best/meta.json"):
        assert (run / name).exists(), f"{name} missing from the run folder"
    rows = read_csv(run / "evaluations.csv")
    assert {r["opponent"] for r in rows} == set(TrainConfig.load(config).eval_opponents)
    assert any((run / "tb").iterdir()), "TensorBoard logs"


@pytest.mark.parametrize("config", ["quickstart", "ppo_vs_heuristic"])
def test_same_seed_same_metrics(config, tmp_path):
    from train.sb3.trainer import train

    runs = []
    for name in ("a", "b"):
        cfg = TrainConfig.load(
            ROOT / "configs" / f"{config}.yaml", [f"runs_dir={tmp_path}", f"name={name}", *TINY, "eval_pairs=2"]
        )
        runs.append(train(cfg, report=False).dir)
    a, b = (read_csv(r / "evaluations.csv") for r in runs)
    assert a == b, f"{config}: same seed and config must give the same evaluation metrics"


@pytest.mark.slow  # several training runs in subprocesses
def test_resume_refusals_and_checkpoint_agents(tmp_path, scopa_cli):
    config = ROOT / "configs" / "ppo_vs_heuristic.yaml"
    result = scopa_cli("train", str(config), f"runs_dir={tmp_path}", "name=r", *TINY, "--no-report")
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "r"

    # Resume a copy of the run for 128 more steps: evaluations continue after the last timestep, in the
    # copy (the folder given), and the original stays as it was.
    import shutil

    original = read_csv(run / "evaluations.csv")
    copy = tmp_path / "moved" / "r2"
    shutil.copytree(run, copy)
    result = scopa_cli("train", "--resume", str(copy), "total_timesteps=384", "--no-report")
    assert result.returncode == 0, result.stderr[-3000:]
    steps = [int(r["timestep"]) for r in read_csv(copy / "evaluations.csv")]
    assert steps[-1] >= 384 and steps == sorted(steps)
    assert read_csv(run / "evaluations.csv") == original, "resuming a copy wrote into the original run"
    run = copy

    # Another config or action space is refused, with a message naming the difference.
    result = scopa_cli("train", "--resume", str(run), "action_mode=move")
    assert result.returncode == 2 and "action_mode" in result.stderr
    result = scopa_cli("train", str(ROOT / "configs" / "dqn_vs_greedy.yaml"), "--resume", str(run))
    assert result.returncode == 2 and "algo" in result.stderr

    # The checkpoint is an agent: evaluate it by name (and the wrong prefix is refused).
    from agents.evaluate import evaluate
    from agents.registry import make_agent

    report = evaluate([f"ppo:{run / 'best'}", "random"], games=1)
    assert report["forfeits"] == []
    with pytest.raises(ValueError, match="not dqn"):
        make_agent(f"dqn:{run / 'best'}")
    result = scopa_cli("train", "--report", str(run), "final_eval_pairs=1")
    assert result.returncode == 0 and (run / "report.md").exists(), result.stderr[-2000:]


def test_bad_configs_are_rejected_before_training(tmp_path, scopa_cli):
    with pytest.raises(ConfigError, match="valid keys: name, runs_dir"):
        TrainConfig.load(None, ["name=x", "learning_rat=0.1"])
    with pytest.raises(ConfigError, match="total_timesteps must be an int"):
        TrainConfig.load(None, ["name=x", "total_timesteps=lots"])
    with pytest.raises(ConfigError, match="action_mode must be one of"):
        TrainConfig.load(None, ["name=x", "action_mode=cards"])
    with pytest.raises(ConfigError, match="not found"):
        TrainConfig.load(tmp_path / "missing.yaml")
    assert TrainConfig.load(None, ["name=x", "total_timesteps=2e6"]).total_timesteps == 2_000_000
    bad = TrainConfig.load(None, ["name=x", "opponents=grandmaster"])
    with pytest.raises(ConfigError, match="grandmaster"):
        bad.check_agents()
    missing = TrainConfig.load(None, ["name=x", f"opponents=ppo:{tmp_path}/nothing"])
    with pytest.raises(ConfigError, match="no checkpoint"):
        missing.check_agents()
    (tmp_path / "typo.yaml").write_text("algo: ppo\nn_env: 4\n")
    result = scopa_cli("train", str(tmp_path / "typo.yaml"))
    assert result.returncode == 2 and "unknown key(s) ['n_env']" in result.stderr and "valid keys" in result.stderr


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("gamma", "7", "gamma must be in [0, 1]"),
        ("exploration_final_eps", "2", "exploration_final_eps must be in [0, 1]"),
        ("learning_rate", "-1", "learning_rate must be in (0, 1]"),
        ("seed", "-1", "seed must be in [0, 2147483647]"),
        ("clip_range", "0", "clip_range must be > 0"),
    ],
)
def test_config_ranges_are_checked_before_anything_is_written(tmp_path, capsys, key, value, words):
    pytest.importorskip("torch")

    (tmp_path / "c.yaml").write_text(f"algo: dqn\n{key}: {value}\n")
    with pytest.raises(ConfigError) as info:
        TrainConfig.load(tmp_path / "c.yaml")
    assert str(info.value) == f"{tmp_path / 'c.yaml'}: {words}, got {value}", "a value from the file blames the file"
    with pytest.raises(ConfigError) as info:
        TrainConfig.load(ROOT / "configs" / "quickstart.yaml", [f"{key}={value}"])
    assert str(info.value).startswith(f"command line ({key}={value}): {words}"), str(info.value)
    assert main(["train", str(tmp_path / "c.yaml"), f"runs_dir={tmp_path / 'runs'}"]) == 2
    assert words in one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "runs").exists(), "nothing was written"


def test_mistyped_keys_get_a_suggestion(tmp_path):
    with pytest.raises(
        ConfigError, match=r"^command line: unknown key\(s\) \['learning_rat'\] \(did you mean learning_rate\?\)"
    ):
        TrainConfig.load(ROOT / "configs" / "quickstart.yaml", ["learning_rat=0.1"])
    (tmp_path / "c.yaml").write_text("n_env: 4\n")
    with pytest.raises(ConfigError, match=r"c.yaml: unknown key\(s\) \['n_env'\] \(did you mean n_envs\?\)"):
        TrainConfig.load(tmp_path / "c.yaml")
