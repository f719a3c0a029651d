"""Reading a Stable-Baselines3 ``model.zip`` (``MaskablePPO.save``) as weights only, and the network they imply.

A ``model.zip`` holds (among others)::

    policy.pth    the policy's state dict: tensors only, read with torch.load(weights_only=True)
    data          JSON; some entries carry cloudpickled objects (":serialized:"), never unpickled here

Only ``policy.pth`` is loaded. ``data`` is parsed as JSON (which runs no code) for two plain
entries: ``policy_kwargs``, to refuse a network this kit would rebuild differently (another
activation function, features extractor or separate extractors), and ``num_timesteps``.

The architecture comes from the tensors' shapes. MaskablePPO's ``MlpPolicy`` with
``net_arch=[h1, h2, ...]`` stores::

    mlp_extractor.policy_net.{0,2,4,...}.weight/.bias   (h1, obs_size), (h2, h1), ...
    mlp_extractor.value_net.{0,2,4,...}.weight/.bias    the same widths
    action_net.weight/.bias                             (num_actions, h_last)
    value_net.weight/.bias                              (1, h_last)

:func:`mlp_architecture` reads ``(obs_size, num_actions, net_arch)`` back from them;
:mod:`train.checkpoint` turns the result into a checkpoint folder
(``python -m train.checkpoint model.zip --out FOLDER --rules PRESET``).
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POLICY_ENTRY = "policy.pth"
DATA_ENTRY = "data"
MAX_ENTRY_BYTES = 1 << 30
"""Largest entry read from a zip (a zip bomb is refused)."""
PLAIN_POLICY_KWARGS = ("net_arch", "ortho_init")
"""``policy_kwargs`` this kit's PPO policy rebuilds (``ortho_init`` only changes the initial weights)."""


@dataclass(frozen=True)
class Sb3Architecture:
    """What a MaskablePPO ``MlpPolicy`` state dict's shapes say about its network."""

    obs_size: int
    """Width of the observation the policy reads."""
    num_actions: int
    """Number of discrete actions it scores."""
    net_arch: list[int]
    """Hidden layer widths, the same for the policy and the value network."""


def read_zip(zip_path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(state_dict, data)`` of a ``model.zip``: ``policy.pth`` through ``torch.load(weights_only=True)``
    and the ``data`` entry as JSON (``{}`` when absent or not JSON); nothing is unpickled.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a zip, no ``policy.pth``, an entry too large, or Python objects besides weights.
    """
    zip_path = Path(zip_path)
    if not zip_path.is_file():
        raise FileNotFoundError(f"no file {str(zip_path)!r}")
    try:
        with zipfile.ZipFile(zip_path) as zf:
            state = _load_state(_entry(zf, POLICY_ENTRY, zip_path), f"{zip_path}:{POLICY_ENTRY}")
            data = _json_entry(zf, zip_path)
    except zipfile.BadZipFile:
        raise ValueError(f"{zip_path}: not a zip file (expected a Stable-Baselines3 model.zip)") from None
    return state, data


def check_policy_kwargs(data: dict[str, Any], zip_path: str | Path) -> None:
    """Refuse a model whose ``policy_kwargs`` (read as JSON) change the network beyond its layer widths.

    Raises:
        ValueError: names the keys this kit cannot rebuild.
    """
    kwargs = data.get("policy_kwargs", {})
    if not isinstance(kwargs, dict):
        raise ValueError(f"{zip_path}: policy_kwargs is not a JSON object")
    # kwargs that are not JSON (an activation class, say) are stored pickled, with a readable copy of each key beside.
    extra = sorted(k for k in kwargs if not k.startswith(":") and k not in PLAIN_POLICY_KWARGS)
    if extra or ":serialized:" in kwargs:
        shown = ", ".join(f"{k}={kwargs[k]}" for k in extra) or "holding Python objects"
        raise ValueError(
            f"{zip_path}: trained with policy_kwargs {shown}; this kit rebuilds MaskablePPO's default MlpPolicy "
            f"(tanh, one shared flat extractor) with only net_arch changed, so it would play another function"
        )


def timesteps(data: dict[str, Any]) -> int | None:
    """The model's ``num_timesteps`` when ``data`` holds it as a plain non-negative int."""
    value = data.get("num_timesteps")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def mlp_architecture(state: dict[str, Any], name: str) -> Sb3Architecture:
    """The architecture a MaskablePPO ``MlpPolicy`` state dict holds (see the module docstring).

    Raises:
        ValueError: other entries than that policy's, layers that do not chain, or different
            policy and value widths (this kit's checkpoints use one ``net_arch`` for both).
    """
    shapes = {k: tuple(getattr(v, "shape", ())) for k, v in state.items()}
    widths = {}
    for net in ("policy_net", "value_net"):
        widths[net] = _chain(shapes, f"mlp_extractor.{net}", name)
    pi, vf = widths["policy_net"], widths["value_net"]
    if [w for w, _ in pi] != [w for w, _ in vf]:
        raise ValueError(
            f"{name}: the policy's hidden layers are {[w for w, _ in pi]} wide and the value net's "
            f"{[w for w, _ in vf]}; this kit's PPO checkpoints use one net_arch for both"
        )
    if not pi:
        raise ValueError(f"{name}: no hidden layers (net_arch=[]); this kit's PPO networks have at least one")
    obs_size = pi[0][1]
    last = pi[-1][0]
    action = _linear(shapes, "action_net", last, name)
    value = _linear(shapes, "value_net", last, name)
    if value != 1:
        raise ValueError(f"{name}: value_net gives {value} outputs, expected 1")
    expected = {
        f"mlp_extractor.{net}.{2 * i}.{p}" for net in widths for i in range(len(pi)) for p in ("weight", "bias")
    }
    expected |= {f"{head}.{p}" for head in ("action_net", "value_net") for p in ("weight", "bias")}
    extra = sorted(set(shapes) - expected)
    if extra:
        raise ValueError(
            f"{name}: entries {', '.join(extra[:4])}{', ...' if len(extra) > 4 else ''} are not MaskablePPO's "
            f"MlpPolicy's (a custom policy or features extractor?)"
        )
    return Sb3Architecture(obs_size=obs_size, num_actions=action, net_arch=[w for w, _ in pi])


def _chain(shapes: dict[str, tuple], prefix: str, name: str) -> list[tuple[int, int]]:
    """``(out, in)`` of the Linear layers ``prefix.0``, ``prefix.2``, ... (activations sit in between)."""
    layers: list[tuple[int, int]] = []
    i = 0
    while f"{prefix}.{i}.weight" in shapes:
        w, b = shapes[f"{prefix}.{i}.weight"], shapes.get(f"{prefix}.{i}.bias")
        if len(w) != 2 or b != (w[0],):
            raise ValueError(f"{name}: {prefix}.{i} has weight {w} and bias {b}; expected (out, in) and (out,)")
        if layers and w[1] != layers[-1][0]:
            raise ValueError(f"{name}: {prefix}.{i} takes {w[1]} inputs but the layer before gives {layers[-1][0]}")
        layers.append((w[0], w[1]))
        i += 2
    return layers


def _linear(shapes: dict[str, tuple], prefix: str, inputs: int, name: str) -> int:
    w, b = shapes.get(f"{prefix}.weight"), shapes.get(f"{prefix}.bias")
    if w is None or len(w) != 2 or w[1] != inputs or b != (w[0],):
        raise ValueError(f"{name}: {prefix} has weight {w} and bias {b}; expected (outputs, {inputs}) and (outputs,)")
    return w[0]


def _entry(zf: zipfile.ZipFile, entry: str, zip_path: Path) -> bytes:
    try:
        info = zf.getinfo(entry)
    except KeyError:
        raise ValueError(f"{zip_path}: no {entry} inside (not a Stable-Baselines3 model.zip?)") from None
    if info.file_size > MAX_ENTRY_BYTES:
        raise ValueError(f"{zip_path}: {entry} is larger than {MAX_ENTRY_BYTES >> 20} MiB; refused")
    return zf.read(info)


def _json_entry(zf: zipfile.ZipFile, zip_path: Path) -> dict[str, Any]:
    if DATA_ENTRY not in zf.namelist():
        return {}
    try:
        data = json.loads(_entry(zf, DATA_ENTRY, zip_path))
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _load_state(raw: bytes, name: str) -> dict[str, Any]:
    import torch

    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError(
            f"{name}: holds Python objects besides weights; refused (loading them could run code from the file)"
        ) from None
    except Exception as exc:  # torch raises RuntimeError, EOFError ... on a broken file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "the file ends early"
        raise ValueError(f"{name}: not a readable weights file ({first})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{name}: expected a state dict of tensors")
    return state
