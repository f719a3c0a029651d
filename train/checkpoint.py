"""Checkpoint folders: what they hold, and loading them without running code from the files.

A checkpoint is a folder (``runs/<name>/best``, ``latest``, ``pool/step_<N>``)::

    meta.json        plain JSON: algo, action_mode, num_players, rules, net_arch, policy_net,
                     observation_size, num_actions, timestep, run
    policy.pt        PPO: the state dict of the MaskablePPO policy (tensors only)
    model.pt         DQN: the Q-network's state dict and its sizes
    train_state.pt   for resuming: the optimizer (DQN: and the target network)
    state.json       latest/ only: the run's progress (:class:`train.run.RunState`)

Every ``.pt`` file is read with ``torch.load(weights_only=True)``, which accepts tensors,
numbers, strings, lists and dicts and refuses anything else; the network is rebuilt from
``meta.json``, checked, and the weights are put into it. Nothing in a checkpoint can run
code, so a checkpoint from someone else is as safe to load as a JSON file.

Nor can it make the loader allocate gigabytes: ``meta.json`` is read with :mod:`train.limits`'
strict checks (exact ints, bounded layer sizes) and the network's parameter count is bounded
(:data:`~train.limits.MAX_PARAMETERS`) before anything is built; a weights file larger than
the parameters it should hold is refused unread, and the rest is memory-mapped
(``torch.load(mmap=True)``), so a tensor cannot claim more bytes than the file has.

Stable-Baselines3's own format (``model.zip``, how PPO checkpoints were saved before) is
never loaded: its ``data`` entry holds cloudpickled Python objects (``":serialized:"``)
that would run code on load. ``python -m train.checkpoint PATH`` converts such a folder:
it reads only the zip's weights (``policy.pth``, with ``weights_only``) and writes
``policy.pt``; the pickled entries are never read. ``python -m train.checkpoint model.zip
--out FOLDER --rules PRESET`` does the same for a zip saved by ``MaskablePPO.save`` outside
this kit: the network is read back from the weights' shapes (:mod:`train.sb3.model_zip`) and
the folder gets a ``meta.json``.
"""

from __future__ import annotations

import io
import json
import pickle
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from scopa_env.engine.actions import MAX_MOVE_ACTIONS
from scopa_env.engine.modes import ACTION_MODES
from scopa_env.engine.rules import ALLOWED_PLAYER_COUNTS, get_rules
from scopa_env.engine.setup import GameSetup
from train.limits import (  # noqa: F401 (re-exported: the limits on net_arch)
    MAX_LAYERS,
    MAX_PARAMETERS,
    MAX_TIMESTEPS,
    MAX_WIDTH,
    is_int,
    mlp_parameters,
    need_int,
    need_sizes,
    parameters_problem,
    ppo_parameters,
    read_json,
    shown,
    weights_bytes,
)

META_FILE = "meta.json"
MODEL_FILES = {"ppo": "policy.pt", "dqn": "model.pt"}
"""The weights file of each Stable-Baselines3-path algorithm."""
TRAIN_STATE_FILE = "train_state.pt"
SB3_ZIP = "model.zip"
"""Stable-Baselines3's pickling format (refused; see the module docstring)."""

POLICY_NETS = ("mlp", "cards")
MAX_ZIP_ENTRY = 1 << 30
"""Largest entry read from a ``model.zip`` when converting (a zip bomb is refused)."""


# --- finding and describing a checkpoint -------------------------------------------------------


def find_checkpoint(path: str | Path) -> Path:
    """The checkpoint folder named by ``path``: a checkpoint folder, a run folder (its
    ``best``) or a file inside a checkpoint folder.

    Raises:
        FileNotFoundError: nothing there, or no ``meta.json``.
    """
    p = Path(path)
    if p.is_file() and (p.parent / META_FILE).is_file():
        p = p.parent
    if p.is_dir() and not (p / META_FILE).exists() and (p / "best" / META_FILE).exists():
        p = p / "best"
    if not p.exists():
        raise FileNotFoundError(f"no checkpoint at {str(path)!r}")
    if p.is_file() and p.suffix == ".zip":
        raise FileNotFoundError(
            f"{str(path)!r} is a Stable-Baselines3 model.zip, not a checkpoint folder; convert it (weights only) "
            f"with `python -m train.checkpoint {path} --out FOLDER --rules PRESET`"
        )
    if not (p / META_FILE).is_file():
        raise FileNotFoundError(f"{str(path)!r} is not a checkpoint folder (no {META_FILE}); use runs/<name>/best")
    return p


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``meta.json`` of a checkpoint (see :func:`find_checkpoint`) as a dict with an ``algo``.

    Raises:
        ValueError: the file is not a JSON object with an ``algo`` string (the message names the file).
    """
    file = find_checkpoint(path) / META_FILE
    meta = read_json(file)
    if not isinstance(meta, dict):
        raise ValueError(f"{file}: expected a JSON object, got {type(meta).__name__}")
    if not isinstance(meta.get("algo"), str):
        raise ValueError(f'{file}: no \'algo\' entry (such as "ppo" or "dqn")')
    return meta


def write_meta(folder: Path, meta: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")


def check_meta(meta: dict[str, Any], where: str | Path) -> GameSetup:
    """Check a PPO or DQN ``meta.json`` entry by entry; returns the game it describes (rules, player
    count and action mode), which the loaders pass on.

    Raises:
        ValueError: a missing or bad entry, named with the file.
    """

    def bad(key: str, need: str) -> ValueError:
        return ValueError(f"{where}: {key} must be {need}, got {shown(meta.get(key))}")

    n = meta.get("num_players")
    if not is_int(n) or n not in ALLOWED_PLAYER_COUNTS:
        raise bad("num_players", "2, 3, 4, 6 or 8")
    if not isinstance(meta.get("rules"), str):
        raise bad("rules", "a rules preset name")
    try:
        setup = GameSetup.of(meta["rules"], n)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if meta.get("action_mode") not in ACTION_MODES:
        raise bad("action_mode", f"one of {list(ACTION_MODES)}")
    setup = setup.with_modes(action_mode=meta["action_mode"])
    need_sizes(meta, "net_arch", where)
    if meta.get("policy_net", "mlp") not in POLICY_NETS:
        raise bad("policy_net", f"one of {list(POLICY_NETS)}")
    if "timestep" in meta:
        need_int(meta, "timestep", 0, MAX_TIMESTEPS, where)
    for key, expected in (("observation_size", setup.observation_size), ("num_actions", setup.num_actions)):
        if key in meta and (not is_int(meta[key]) or meta[key] != expected):
            raise ValueError(
                f"{where}: {key} is {shown(meta[key])} but {n} players under {setup.rules.name!r} in "
                f"{meta['action_mode']!r} mode need {expected}"
            )
    problem = parameters_problem(network_parameters(meta, setup), f"the {meta.get('algo', 'ppo')} network")
    if problem:
        raise ValueError(f"{where}: {problem}")
    return setup


def network_parameters(meta: dict[str, Any], setup: GameSetup) -> int:
    """Parameters of the network a checked ``meta.json`` describes (PPO: actor and critic; DQN: the Q-network)
    for its game ``setup`` (:func:`check_meta`'s)."""
    obs_size, actions = setup.observation_size, setup.num_actions
    if meta.get("algo") == "dqn":
        return mlp_parameters([obs_size, *meta["net_arch"], actions])
    return ppo_parameters(obs_size, actions, meta["net_arch"], meta.get("policy_net", "mlp"))


# --- weights ---------------------------------------------------------------------------------------


MAX_WEIGHTS_BYTES = weights_bytes(4 * MAX_PARAMETERS)
"""Largest ``.pt`` file read when the network it holds is not known yet: a network, its target
network and Adam's two moments, each of :data:`~train.limits.MAX_PARAMETERS`."""


def load_weights(file: Path, max_bytes: int = MAX_WEIGHTS_BYTES) -> Any:
    """``torch.load(file, weights_only=True, mmap=True)`` on the CPU, with one-line errors naming the file.

    Args:
        max_bytes: a larger file is refused unread (:func:`train.limits.weights_bytes` of the
            parameters it should hold).

    Raises:
        FileNotFoundError: no such file.
        ValueError: too large, unreadable, truncated, or holding Python objects besides weights.
    """
    if not file.is_file():
        raise FileNotFoundError(f"{file.parent}: no {file.name} in this checkpoint")
    size = file.stat().st_size
    if size > max_bytes:
        raise ValueError(
            f"{file}: {size:,} bytes, more than the {max_bytes:,} its network's parameters can take; refused unread"
        )
    return _load_weights_from(file, str(file))


def _load_weights_from(fh, name: str) -> Any:
    import torch

    try:
        if isinstance(fh, Path):  # mapped, not read: a tensor cannot claim more bytes than the file has
            return torch.load(fh, map_location="cpu", weights_only=True, mmap=True)
        return torch.load(fh, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError(
            f"{name}: holds Python objects besides weights; refused (loading them could run code from the file)"
        ) from None
    except Exception as exc:  # torch raises RuntimeError, EOFError, OSError ... on a broken file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "the file ends early"
        raise ValueError(f"{name}: not a readable weights file ({first})") from None


def check_finite(weights: dict[str, Any], name: str) -> None:
    """Refuse weights (torch tensors or numpy arrays by name) holding NaN or infinite values,
    naming the file and the first such tensor: such a network forfeits every game it plays."""
    for key, value in weights.items():
        finite = value.isfinite().all() if hasattr(value, "isfinite") else np.isfinite(value).all()
        if not bool(finite):
            raise ValueError(f"{name}: tensor {key!r} holds NaN or infinite values; refused (a diverged training run?)")


def load_state(module, state: Any, name: str) -> None:
    """``module.load_state_dict(state)`` (strict), with a one-line error naming the file."""
    import torch

    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{name}: expected a state dict of tensors")
    check_finite(state, name)
    try:
        module.load_state_dict(state)
    except RuntimeError as exc:
        lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
        detail = lines[1] if len(lines) > 1 else lines[0] if lines else "mismatch"
        raise ValueError(f"{name}: does not fit the network meta.json describes ({detail})") from None


# --- PPO -------------------------------------------------------------------------------------------


def _no_learning(_progress: float) -> float:
    return 0.0


def build_ppo_policy(meta: dict[str, Any], where: str | Path = META_FILE):
    """An untrained MaskablePPO policy of the architecture ``meta`` describes (checked first).

    The global torch generator is left as it was (the initial weights are overwritten anyway).
    """
    import torch
    from gymnasium import spaces

    setup = check_meta(meta, where)
    arch = list(meta["net_arch"])
    obs_space = spaces.Box(-np.inf, np.inf, (setup.observation_size,), np.float32)
    action_space = spaces.Discrete(setup.num_actions)
    with torch.random.fork_rng(devices=[]):
        if meta.get("policy_net", "mlp") == "cards":
            from train.sb3.card_net import CardPolicy, card_policy_kwargs

            if setup.action_mode != "select":
                raise ValueError(f"{where}: policy_net cards needs action_mode select")
            kwargs = card_policy_kwargs(setup.num_players, setup.rules, trunk=arch[0])
            policy = CardPolicy(obs_space, action_space, _no_learning, **kwargs)
        else:
            from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

            policy = MaskableActorCriticPolicy(obs_space, action_space, _no_learning, net_arch=arch)
    return policy


def load_ppo_policy(folder: Path, meta: dict[str, Any]):
    """The MaskablePPO policy of a checkpoint folder, in evaluation mode.

    Raises:
        ValueError: an SB3 ``model.zip`` instead of ``policy.pt`` (refused, with how to
            convert it), or broken files (the message names the file).
    """
    file = folder / MODEL_FILES["ppo"]
    if not file.exists() and (folder / SB3_ZIP).exists():
        raise ValueError(sb3_zip_refusal(folder))
    setup = check_meta(meta, folder / META_FILE)
    state = load_weights(file, weights_bytes(network_parameters(meta, setup)))
    policy = build_ppo_policy(meta, folder / META_FILE)
    load_state(policy, state, str(file))
    policy.set_training_mode(False)
    return policy


def save_ppo(folder: Path, policy) -> None:
    """Write a PPO policy's ``policy.pt`` and its optimizer's ``train_state.pt``."""
    import torch

    torch.save(policy.state_dict(), folder / MODEL_FILES["ppo"])
    torch.save({"optimizer": policy.optimizer.state_dict()}, folder / TRAIN_STATE_FILE)


def restore_ppo(folder: Path, policy) -> None:
    """Put a checkpoint's weights and optimizer state into a MaskablePPO policy (resuming)."""
    file = folder / MODEL_FILES["ppo"]
    if not file.exists() and (folder / SB3_ZIP).exists():
        raise ValueError(sb3_zip_refusal(folder))
    count = sum(p.numel() for p in policy.parameters())
    load_state(policy, load_weights(file, weights_bytes(count)), str(file))
    extra = load_weights(folder / TRAIN_STATE_FILE, weights_bytes(3 * count))  # Adam: two moments per weight
    if not isinstance(extra, dict) or "optimizer" not in extra:
        raise ValueError(f"{folder / TRAIN_STATE_FILE}: no optimizer state")
    try:
        policy.optimizer.load_state_dict(extra["optimizer"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{folder / TRAIN_STATE_FILE}: the optimizer state does not fit ({exc})") from None


def ppo_predictor(policy):
    """The masked greedy :data:`~train.sb3.policy_agent.PolicyFn` of a policy (or a MaskablePPO model)."""

    def act(obs: np.ndarray, mask: np.ndarray) -> int:
        action, _ = policy.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    return act


def ppo_batch_policy(policy):
    """The masked greedy batch policy (``(B, size)``, ``(B, A)`` -> ``(B,)``) of a policy or model."""

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = policy.predict(obs, action_masks=masks, deterministic=True)
        return actions

    return act


# --- DQN -------------------------------------------------------------------------------------------


def load_q_network(file: str | Path, max_bytes: int = MAX_WEIGHTS_BYTES):
    """The Q-network saved in a DQN ``model.pt`` (sizes and state dict), in evaluation mode.

    The sizes are checked, and the parameter count bounded, before the network is built;
    ``max_bytes`` bounds the file (see :func:`load_weights`).
    """
    from train.sb3.networks import QNetwork

    file = Path(file)
    data = load_weights(file, max_bytes)
    keys = ("state_dict", "obs_size", "num_actions", "net_arch")
    if not isinstance(data, dict) or not set(keys) <= set(data):
        raise ValueError(f"{file}: not a DQN model file (expected the entries {', '.join(keys)})")
    where = f"{file}: bad network sizes"
    obs_size = need_int(data, "obs_size", 1, 1 << 16, where)
    actions = need_int(data, "num_actions", 1, MAX_MOVE_ACTIONS, where)
    arch = need_sizes(data, "net_arch", where)
    problem = parameters_problem(mlp_parameters([obs_size, *arch, actions]), "the Q-network")
    if problem:
        raise ValueError(f"{file}: bad network sizes: {problem}")
    net = QNetwork(obs_size, actions, arch)
    load_state(net, data["state_dict"], str(file))
    net.eval()
    return net


def load_dqn(folder: Path, meta: dict[str, Any]):
    """The Q-network of a DQN checkpoint folder, checked against its ``meta.json``."""
    setup = check_meta(meta, folder / META_FILE)
    net = load_q_network(folder / MODEL_FILES["dqn"], weights_bytes(network_parameters(meta, setup)))
    want = (setup.observation_size, setup.num_actions)
    if (net.obs_size, net.num_actions) != want:
        raise ValueError(
            f"{folder / MODEL_FILES['dqn']}: the network maps {net.obs_size} inputs to {net.num_actions} actions, "
            f"but meta.json's game needs {want[0]} to {want[1]}"
        )
    return net


# --- Stable-Baselines3 zips ------------------------------------------------------------------------


def sb3_zip_refusal(folder: Path) -> str:
    """Why a folder's ``model.zip`` is not loaded, and what to do (one line)."""
    zip_path = folder / SB3_ZIP
    objects = _serialized_entries(zip_path)
    listed = f" ({', '.join(objects[:3])}{', ...' if len(objects) > 3 else ''})" if objects else ""
    return (
        f"{zip_path}: a Stable-Baselines3 model.zip, which stores pickled Python objects{listed} that could run "
        f"code when loaded, so it is refused; convert a checkpoint you trust with "
        f"`python -m train.checkpoint {folder}` (it reads only the weights), or train it again"
    )


def _serialized_entries(zip_path: Path) -> list[str]:
    """Keys of the zip's ``data`` JSON that carry cloudpickled objects (read as JSON, never unpickled)."""
    try:
        with zipfile.ZipFile(zip_path) as zf:
            info = zf.getinfo("data")
            if info.file_size > MAX_ZIP_ENTRY:
                return []
            data = json.loads(zf.read(info))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError):
        return []
    if not isinstance(data, dict):
        return []
    return sorted(k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v)


def convert_sb3_checkpoint(path: str | Path) -> Path:
    """Write ``policy.pt`` (and ``train_state.pt``) from a PPO folder's SB3 ``model.zip``.

    Only the zip's ``policy.pth`` and ``policy.optimizer.pth`` are read, with
    ``weights_only``; its pickled ``data`` entries are not. Returns the written file.
    """
    import torch

    folder = find_checkpoint(path)
    meta = read_meta(folder)
    if meta["algo"] != "ppo":
        raise ValueError(f"{folder}: a {meta['algo']} checkpoint; only PPO checkpoints were saved as model.zip")
    zip_path = folder / SB3_ZIP
    if not zip_path.is_file():
        raise FileNotFoundError(f"{folder}: no {SB3_ZIP} to convert")
    policy = build_ppo_policy(meta, folder / META_FILE)
    try:
        with zipfile.ZipFile(zip_path) as zf:
            state = _zip_weights(zf, "policy.pth", zip_path)
            optimizer = (
                _zip_weights(zf, "policy.optimizer.pth", zip_path) if "policy.optimizer.pth" in zf.namelist() else None
            )
    except zipfile.BadZipFile:
        raise ValueError(f"{zip_path}: not a readable zip file") from None
    load_state(policy, state, f"{zip_path}:policy.pth")
    out = folder / MODEL_FILES["ppo"]
    torch.save(policy.state_dict(), out)
    if optimizer is not None:
        torch.save({"optimizer": optimizer}, folder / TRAIN_STATE_FILE)
    return out


def _zip_weights(zf: zipfile.ZipFile, name: str, zip_path: Path) -> Any:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"{zip_path}: no {name} inside") from None
    if info.file_size > MAX_ZIP_ENTRY:
        raise ValueError(f"{zip_path}: {name} is larger than {MAX_ZIP_ENTRY >> 20} MiB")
    return _load_weights_from(io.BytesIO(zf.read(info)), f"{zip_path}:{name}")


def import_sb3_zip(
    zip_path: str | Path,
    out: str | Path,
    rules: str,
    num_players: int | None = None,
    action_mode: str | None = None,
) -> Path:
    """Write the checkpoint folder ``out`` (``meta.json``, ``policy.pt``) from a ``model.zip`` saved by
    ``MaskablePPO.save`` with an ``MlpPolicy``, reading only its weights (:mod:`train.sb3.model_zip`).

    ``net_arch`` comes from the weights' shapes; ``num_players`` and ``action_mode``, when not
    given, are the only ones whose observation and action sizes under ``rules`` fit them.

    Raises:
        FileNotFoundError: no such zip.
        ValueError: an unknown preset, a network this kit cannot rebuild, sizes no game fits, or
            ``out`` already a checkpoint folder (the message says which).
    """
    import torch

    from train.sb3.model_zip import POLICY_ENTRY, check_policy_kwargs, mlp_architecture, read_zip, timesteps

    zip_path, out = Path(zip_path), Path(out)
    preset = get_rules(rules)
    if (out / META_FILE).exists():
        raise ValueError(f"{out}: already a checkpoint folder; choose another --out")
    state, data = read_zip(zip_path)
    check_policy_kwargs(data, zip_path)
    arch = mlp_architecture(state, f"{zip_path}:{POLICY_ENTRY}")
    sizes = {}
    for n in ALLOWED_PLAYER_COUNTS if num_players is None else (num_players,):
        for mode in ACTION_MODES if action_mode is None else (action_mode,):
            try:
                game = GameSetup.of(preset, n, mode)
                sizes[n, mode] = (game.observation_size, game.num_actions)
            except ValueError:  # a player count or action mode this preset does not have
                continue
    fits = [key for key, size in sizes.items() if size == (arch.obs_size, arch.num_actions)]
    if len(fits) != 1:
        games = "; ".join(f"{n} players, {m}: {o} -> {a}" for (n, m), (o, a) in sizes.items()) or "none"
        raise ValueError(
            f"{zip_path}: the policy maps {arch.obs_size} observation entries to {arch.num_actions} actions; "
            + ("no game" if not fits else "more than one game")
            + f" under {rules!r} with these options has those sizes ({games})"
            + ("" if not fits else "; give --players and --action-mode")
        )
    ((n, mode),) = fits
    meta = {
        "algo": "ppo",
        "action_mode": mode,
        "num_players": n,
        "rules": rules,
        "net_arch": arch.net_arch,
        "policy_net": "mlp",
        "observation_size": arch.obs_size,
        "num_actions": arch.num_actions,
        "timestep": timesteps(data) or 0,
        "run": out.name,
        "converted_from": zip_path.name,
    }
    policy = build_ppo_policy(meta, f"{zip_path} as {out / META_FILE}")
    load_state(policy, state, f"{zip_path}:{POLICY_ENTRY}")
    out.mkdir(parents=True, exist_ok=True)
    torch.save(policy.state_dict(), out / MODEL_FILES["ppo"])
    write_meta(out, meta)  # last: a folder is a checkpoint only once its weights are there
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m train.checkpoint PATH [PATH ...]``: convert SB3 ``model.zip`` PPO checkpoints;
    ``python -m train.checkpoint model.zip --out FOLDER --rules PRESET``: import a plain SB3 model."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m train.checkpoint",
        description="Convert PPO checkpoints saved as Stable-Baselines3 model.zip into policy.pt, or a model.zip "
        "saved by MaskablePPO.save into a checkpoint folder (--out), reading only their weights (never their "
        "pickled objects).",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="checkpoint folder (or run folder: its best/) holding a model.zip; or, with --out, a model.zip",
    )
    parser.add_argument("--out", metavar="FOLDER", help="import the model.zip PATH into this new checkpoint folder")
    parser.add_argument("--rules", metavar="PRESET", help="with --out: the rules preset the model was trained under")
    parser.add_argument(
        "--players",
        type=int,
        choices=ALLOWED_PLAYER_COUNTS,
        metavar="N",
        help="with --out: the player count (inferred when only one fits)",
    )
    parser.add_argument(
        "--action-mode", choices=ACTION_MODES, help="with --out: the action mode (inferred when only one fits)"
    )
    args = parser.parse_args(argv)
    if args.out is None:
        for name in ("rules", "players", "action_mode"):
            if getattr(args, name) is not None:
                parser.error(f"--{name.replace('_', '-')} goes with --out (importing a model.zip)")
        for path in args.paths:
            p = Path(path)
            if p.is_file() and p.suffix == ".zip" and not (p.parent / META_FILE).is_file():
                parser.error(f"{path} is a model.zip outside a checkpoint folder: give --out FOLDER --rules PRESET")
    elif len(args.paths) != 1 or args.rules is None:
        parser.error("--out imports one model.zip and needs --rules PRESET (the preset it was trained under)")
    try:
        if args.out is not None:
            out = import_sb3_zip(args.paths[0], args.out, args.rules, args.players, args.action_mode)
            meta = read_meta(out)
            print(
                f"wrote {out} (ppo, {meta['num_players']} players, {meta['rules']}, {meta['action_mode']}, "
                f"net_arch {meta['net_arch']}); try: scopa eval ppo:{out} heuristic"
            )
            return 0
        for path in args.paths:
            print(f"wrote {convert_sb3_checkpoint(path)}")
    except (ValueError, FileNotFoundError) as exc:
        print(f"python -m train.checkpoint: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
