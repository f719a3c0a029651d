"""Inputs without bounds: checkpoints, configs, agent options and the compiled core's API
refuse sizes the machine cannot hold (or would search for hours) with one line naming the
problem, before any work: never a traceback, a hang or a huge allocation."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from checkpoint_helpers import ppo_meta

ROOT = Path(__file__).resolve().parents[1]
QUICK = 60
"""Seconds a refusal may take in a subprocess before the test calls it a hang (refusals take
well under a second; the bugs these tests hold off ran for minutes)."""


def one_line(message: str) -> str:
    assert "\n" not in message and "Traceback" not in message, f"expected one line, got:\n{message}"
    return message


def refused_in_subprocess(code: str) -> str:
    """Run ``code`` in a fresh interpreter; it must raise ``ValueError`` (printed as its one-line
    message) quickly, not hang, crash or succeed. Returns the message."""
    script = "import sys\ntry:\n" + textwrap.indent(textwrap.dedent(code), "    ")
    script += "\nexcept ValueError as exc:\n    print('REFUSED', exc)\n    sys.exit(0)\nprint('ACCEPTED')\n"
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=QUICK, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {QUICK} s (a hang, or a huge allocation):\n{code}")
    assert done.returncode == 0 and done.stdout.startswith("REFUSED "), (
        f"expected a one-line ValueError, got rc={done.returncode}\n{done.stdout}\n{done.stderr[-2000:]}"
    )
    return one_line(done.stdout.strip().removeprefix("REFUSED "))


# --- 1. checkpoints ------------------------------------------------------------------------------------


def ppo_folder(tmp_path: Path, meta: dict | str) -> Path:
    """A PPO checkpoint folder with ``meta`` (a dict, or raw text) and a small ``policy.pt``."""
    torch = pytest.importorskip("torch")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    torch.save({"w": torch.zeros(4)}, folder / "policy.pt")
    (folder / "meta.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
    return folder


@pytest.mark.parametrize("arch", [[16384] * 3, [16384] * 16, [4096, 4096, 4096, 4096]])
def test_ppo_net_arch_is_bounded_by_its_parameter_count(tmp_path, arch):
    """Widths and depths each within their limits can still make a network of billions of parameters."""
    folder = ppo_folder(tmp_path, ppo_meta(net_arch=arch))
    message = refused_in_subprocess(f"from agents.registry import make_agent\nmake_agent('ppo:{folder}')")
    assert "parameters" in message and "50,000,000" in message and str(folder) in message, message


@pytest.mark.parametrize("arch, words", [([65536] * 3, "from 1 to 16,384"), ([16384] * 3, "parameters")])
def test_dqn_model_declaring_wide_layers_is_refused_before_building(tmp_path, arch, words):
    torch = pytest.importorskip("torch")
    file = tmp_path / "model.pt"
    torch.save({"state_dict": {}, "obs_size": 376, "num_actions": 41, "net_arch": arch}, file)
    message = refused_in_subprocess(f"from train.checkpoint import load_q_network\nload_q_network({str(file)!r})")
    assert words in message and "bad network sizes" in message and str(file) in message, message


def test_a_weights_file_larger_than_its_network_is_refused_unread(tmp_path):
    """policy.pt may hold no more bytes than the parameters meta.json declares (plus a margin)."""
    torch = pytest.importorskip("torch")
    from agents.registry import make_agent

    folder = ppo_folder(tmp_path, ppo_meta())
    torch.save({"w": torch.zeros(3_000_000)}, folder / "policy.pt")  # 12 MB for a network of ~13,000
    with pytest.raises(ValueError) as info:
        make_agent(f"ppo:{folder}")
    assert "bytes" in one_line(str(info.value)) and "policy.pt" in str(info.value), str(info.value)


BIG_DIGITS = "7" * 5000


@pytest.mark.parametrize(
    "text, key",
    [
        (json.dumps(ppo_meta(num_players=2.0)), "num_players"),
        (json.dumps(ppo_meta(num_players=[])), "num_players"),
        (json.dumps(ppo_meta(num_actions=True)), "num_actions"),
        (json.dumps(ppo_meta(net_arch=[16.0])), "net_arch"),
        (json.dumps(ppo_meta(net_arch=[True])), "net_arch"),
        (json.dumps(ppo_meta(observation_size="376")), "observation_size"),
        (json.dumps(ppo_meta(timestep=-1)), "timestep"),
        (json.dumps(ppo_meta(net_arch=[0])).replace("[0]", "[" + BIG_DIGITS + "]"), "meta.json"),
        (json.dumps(ppo_meta(num_players=0)).replace(": 0,", ": " + BIG_DIGITS + ","), "meta.json"),
        ('{"algo": "ppo", "run": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
        ('{"algo": "ppo", "pad": "' + "x" * (2 << 20) + '"}', "meta.json"),
    ],
)
def test_odd_ppo_metadata_is_one_line(tmp_path, text, key):
    pytest.importorskip("sb3_contrib")
    from agents.registry import make_agent

    folder = ppo_folder(tmp_path, text)
    with pytest.raises(ValueError) as info:
        make_agent(f"ppo:{folder}")
    message = one_line(str(info.value))
    assert key in message and "meta.json" in message and len(message) < 600, message


# DMC checkpoints: weights.npz


def dmc_meta(**changes) -> dict:
    meta = {
        "algo": "dmc",
        "feature_version": 2,
        "rules": "standard",
        "num_players": 2,
        "action_mode": "move",
        "observation_size": 376,
        "heuristic_features": False,
        "trunk": [8],
        "net_arch": [4],
        "timestep": 0,
    }
    return {**meta, **changes}


def dmc_weights(trunk=(8,), head=(4,), obs=376, feats=126) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    out = {}
    sizes = [obs, *trunk]
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        out[f"trunk.{i}.weight"] = rng.standard_normal((b, a)).astype(np.float32)
        out[f"trunk.{i}.bias"] = np.zeros(b, np.float32)
    sizes = [sizes[-1] + feats, *head, 1]
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        out[f"head.{i}.weight"] = rng.standard_normal((b, a)).astype(np.float32)
        out[f"head.{i}.bias"] = np.zeros(b, np.float32)
    return out


def dmc_folder(tmp_path: Path, meta: dict | str | None = None, weights: dict | None = None) -> Path:
    folder = tmp_path / "dmc"
    folder.mkdir(exist_ok=True)
    meta = dmc_meta() if meta is None else meta
    (folder / "meta.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
    np.savez(folder / "weights.npz", **(dmc_weights() if weights is None else weights))
    return folder


def npy_header(shape: tuple[int, ...], dtype=np.float32) -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape})
    return buf.getvalue()  # the magic string, then the header


def test_a_small_dmc_checkpoint_still_loads(tmp_path):
    from train.dmc.agent import load_dmc

    net, meta = load_dmc(dmc_folder(tmp_path))
    assert meta["trunk"] == [8] and len(net.trunk) == 1 and len(net.head) == 2


def test_compressed_npz_is_not_inflated_before_its_shape_is_checked(tmp_path):
    """A 256 MiB array of zeros deflates to about 250 kB; its header is read, its data never."""
    from train.dmc.agent import load_dmc

    folder = dmc_folder(tmp_path)
    rows, cols = 8192, 8192
    with zipfile.ZipFile(folder / "weights.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        for name, array in dmc_weights().items():
            if name != "trunk.0.weight":
                zf.writestr(name + ".npy", npy_header(array.shape) + array.tobytes())
        with zf.open("trunk.0.weight.npy", "w", force_zip64=True) as fh:
            fh.write(npy_header((rows, cols)))
            zeros = bytes(cols * 4 * 256)
            for _ in range(rows // 256):
                fh.write(zeros)
    assert (folder / "weights.npz").stat().st_size < 2 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as info:
            load_dmc(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = one_line(str(info.value))
    assert "trunk.0.weight" in message and "(8192, 8192)" in message, message
    assert peak < 32 << 20, f"{peak >> 20} MiB allocated to refuse it"


@pytest.mark.parametrize(
    "member, header, words",
    [
        ("trunk.0.weight", npy_header((1 << 20, 1 << 20)), "(1048576, 1048576)"),  # 4 TiB declared
        ("trunk.0.weight", npy_header((8, 376), np.dtype("U10")), "float"),
        ("trunk.0.weight", npy_header((8, 376, 1)), "(8, 376, 1)"),
        ("trunk.0.weight", b"\x93NUMPY\x01\x00" + b"\x10\x00{'descr': 1}    \n", "header"),
        ("head.0.weight", npy_header((0, 134)), "(0, 134)"),  # a head of width 0
    ],
)
def test_npy_headers_are_checked_before_their_data(tmp_path, member, header, words):
    from train.dmc.agent import load_dmc

    folder = dmc_folder(tmp_path)
    with zipfile.ZipFile(folder / "weights.npz", "w") as zf:
        for name, array in dmc_weights().items():
            zf.writestr(name + ".npy", header if name == member else npy_header(array.shape) + array.tobytes())
    with pytest.raises(ValueError) as info:
        load_dmc(folder)
    message = one_line(str(info.value))
    assert words in message and "weights.npz" in message, message


@pytest.mark.parametrize(
    "changes, key",
    [
        ({"num_players": 2.0}, "num_players"),
        ({"num_players": []}, "num_players"),
        ({"num_players": True}, "num_players"),
        ({"feature_version": True}, "feature_version"),
        ({"heuristic_features": "yes"}, "heuristic_features"),
        ({"trunk": [0]}, "trunk"),
        ({"net_arch": [0]}, "net_arch"),
        ({"net_arch": "4"}, "net_arch"),
        ({"trunk": [1 << 20, 1 << 20]}, "trunk"),
        ({"trunk": [9]}, "trunk"),  # does not match the weights
        ({"rules": ["standard"]}, "rules"),
    ],
)
def test_odd_dmc_metadata_is_one_line(tmp_path, changes, key):
    from agents.registry import make_agent

    folder = dmc_folder(tmp_path, dmc_meta(**changes))
    with pytest.raises(ValueError) as info:
        make_agent(f"dmc:{folder}")
    message = one_line(str(info.value))
    assert key in message and str(folder) in message, message


def test_deep_or_huge_dmc_meta_is_one_line(tmp_path):
    from train.dmc.agent import load_dmc

    for text in ('{"algo": "dmc", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", '{"n": ' + BIG_DIGITS + "}"):
        folder = dmc_folder(tmp_path, text)
        with pytest.raises(ValueError) as info:
            load_dmc(folder)
        assert "meta.json" in one_line(str(info.value)), str(info.value)


def test_the_zoo_loads_and_a_deep_card_is_one_line(tmp_path, monkeypatch):
    import train.zoo as zoo

    name = zoo.names()[0]
    assert zoo.load_zoo_agent(name).name == f"zoo:{name}"
    fake = tmp_path / "zoo" / "deep"
    fake.mkdir(parents=True)
    (fake / "card.json").write_text("[" * 100_000 + "]" * 100_000)
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path / "zoo")
    with pytest.raises(ValueError) as info:
        zoo.card("deep")
    assert "card.json" in one_line(str(info.value)), str(info.value)


# --- 2. training configs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, words",
    [
        (["net_arch=[100000,100000,100000]"], "net_arch"),
        (["net_arch=[16384]", "action_mode=move"], "net_arch"),
        (["algo=dqn", "buffer_size=1e15"], "buffer_size"),
        (["algo=dqn", "buffer_size=1e9"], "of the machine's memory"),
        (["n_envs=100000"], "n_envs must be in [1, 4096]"),
        (["total_timesteps=1e30"], "total_timesteps must be in [1, 1000000000000]"),
        (["batch_size=1e12"], "batch_size"),
        (["algo=dqn", "batch_size=1e12"], "batch_size"),
        (["algo=dqn", "buffer_size=1000", "batch_size=2000"], "batch_size"),
        (["algo=ppo", "n_steps=10", "n_envs=2", "batch_size=64"], "batch_size"),
        (["eval_pairs=1e15"], "eval_pairs"),
        (["net_arch=[" + "[" * 5000 + "]" * 5000 + "]"], "nested"),
    ],
)
def test_train_config_sizes_are_bounded(overrides, words):
    from train.config import ConfigError, TrainConfig

    with pytest.raises(ConfigError) as info:
        TrainConfig.load(ROOT / "configs" / "quickstart.yaml", overrides)
    assert words in one_line(str(info.value)), str(info.value)


@pytest.mark.parametrize(
    "overrides, words",
    [
        (["trunk=[1000000000]"], "trunk"),
        (["net_arch=[100000,100000]"], "net_arch"),
        (["buffer_size=1e15"], "buffer_size"),
        (["batch_size=1e12"], "batch_size"),
        (["label_buffer_size=1e13"], "label_buffer_size"),
        (["selfplay_games=1e9"], "selfplay_games"),
        (["total_timesteps=1e30"], "total_timesteps"),
    ],
)
def test_dmc_config_sizes_are_bounded(overrides, words):
    from train.config import ConfigError
    from train.dmc.config import DmcConfig

    with pytest.raises(ConfigError) as info:
        DmcConfig.load(ROOT / "configs" / "dmc_standard.yaml", overrides)
    assert words in one_line(str(info.value)), str(info.value)


@pytest.mark.parametrize("which", ["train", "dmc"])
@pytest.mark.parametrize("text", ["net_arch: " + "[" * 100_000 + "]" * 100_000, "seed: " + BIG_DIGITS])
def test_odd_yaml_is_one_line(tmp_path, which, text):
    from train.config import ConfigError, TrainConfig
    from train.dmc.config import DmcConfig

    path = tmp_path / "c.yaml"
    path.write_text(("algo: dmc\n" if which == "dmc" else "") + text + "\n")
    with pytest.raises(ConfigError) as info:
        (DmcConfig if which == "dmc" else TrainConfig).load(path)
    assert str(path) in one_line(str(info.value)), str(info.value)


def test_every_shipped_config_is_within_the_bounds():
    from train.config import TrainConfig
    from train.dmc.config import DmcConfig, is_dmc_config

    for path in sorted((ROOT / "configs").glob("*.yaml")):
        if path.name.startswith("rllib"):
            continue
        (DmcConfig if is_dmc_config(str(path), []) else TrainConfig).load(path)


def test_config_docs_state_the_size_rules():
    from train.config import describe_fields

    text = describe_fields()
    for words in ("50,000,000 parameters", "4,096", "10^12", "of the machine's memory"):
        assert words in text, f"--help-config states {words!r}"
    doc = (ROOT / "docs" / "training.md").read_text()
    assert "50,000,000 parameters" in doc and "train/limits.py" in doc


# --- 3. agent options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, words",
    [
        ("fsearch:ab_depth=100", "ab_depth must be an int in [0, 8]"),
        ("fsearch:worlds=100000000", "worlds must be an int in [1, 65536]"),
        ("fsearch:exact_cards=40", "exact_cards must be an int in [0, 12]"),
        ("fsearch:exact_worlds=1000000", "exact_worlds must be an int in [1, 1024]"),
        ("fsearch:min_worlds=1000000", "min_worlds must be an int in [1, 65536]"),
        ("fsearch:ply_budget=1e12", "ply_budget"),
        ("fsearch:time_limit=1e9", "time_limit must be positive seconds in (0, 3600]"),
        ("fsearch:time_chunk=1000000", "time_chunk must be an int in [1, 65536]"),
        ("fsearch:infer_temp=1e9", "infer_temp must be a number in [0.01, 1000]"),
        ("search:max_worlds=100000000", "max_worlds must be an int in [1, 4096]"),
        ("search:ply_budget=1e15", "ply_budget"),
        ("search:time_limit=1e9", "time_limit must be positive seconds in (0, 3600]"),
        ("search:min_worlds=true", "min_worlds must be an int"),
    ],
)
def test_search_options_are_bounded(spec, words):
    message = refused_in_subprocess(f"from agents.registry import make_agent\nmake_agent({spec!r})")
    assert words in message, message


def test_agent_docs_give_the_option_ranges():
    from agents.fast_search import OPTION_RANGES as FAST
    from agents.search import OPTION_RANGES as SLOW

    doc = (ROOT / "docs" / "agents.md").read_text()
    for name, (_, high) in {**FAST, **SLOW}.items():
        assert f"`{name}`" in doc and f"{high:,}" in doc, f"docs/agents.md gives the range of {name}"


# --- 4. the compiled core's API and seeds --------------------------------------------------------------


def test_check_seed_rule():
    from scopa_env.engine.bounds import SEED_LIMIT, check_seed

    assert check_seed(None) is None and check_seed(0) == 0 and check_seed(np.int64(5)) == 5
    assert check_seed(SEED_LIMIT - 1) == SEED_LIMIT - 1
    for bad in (-1, SEED_LIMIT, True, 1.0, "3", [1]):
        with pytest.raises(ValueError, match=r"seed must be None or an int in \[0, 2\*\*63\)"):
            check_seed(bad)


def test_batch_api_errors_are_one_line():
    from scopa_env.fast.batch import BatchedScopa

    b = BatchedScopa(2)
    for call, words in (
        (lambda: b.reset([]), "seeds must have shape (2,)"),
        (lambda: b.reset([-1, 0]), "game 0: seeds value -1"),
        (lambda: b.reset(np.array([2**63 - 1, 2**64 - 1], np.uint64)), "game 1"),
    ):
        with pytest.raises(ValueError) as info:
            call()
        assert words in one_line(str(info.value)), str(info.value)
    b.reset([0, 1])
    out = np.zeros((2, b.layout.size), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError) as info:
        b.observe([0, 0], out=out)
    assert "writable" in one_line(str(info.value)), str(info.value)
    assert b.observe([0, 1]).shape == (2, b.layout.size)


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, True])
def test_envs_share_the_seed_rule(seed):
    from scopa_env.aec.scopa_v0 import raw_env
    from scopa_env.fast.vec_env import ScopaVectorEnv

    for reset in (lambda: raw_env().reset(seed=seed), lambda: ScopaVectorEnv(2).reset(seed=seed)):
        with pytest.raises(ValueError) as info:
            reset()
        assert "seed must be None or an int in [0, 2**63)" in one_line(str(info.value)), str(info.value)


def test_vector_env_seed_rows_stay_in_range():
    from scopa_env.fast.vec_env import ScopaVectorEnv

    env = ScopaVectorEnv(3)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=2**63 - 2)  # rows seed, seed + 1, seed + 2: the last does not fit
    env.reset(seed=2**63 - 3)
    env.reset(seed=[0, 1, 2])
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=[0, -1, 2])
