"""Size limits on what training builds from a checkpoint or a config, and the strict checks of their numbers.

A checkpoint from someone else, or a config with one zero too many, must not allocate gigabytes,
run for hours or end in a traceback: every size is checked against these limits before anything
is built or read, with one line naming the file and the key.

===================  ===================  ==================================================================
limit                value                what it bounds
===================  ===================  ==================================================================
``MAX_PARAMETERS``   50,000,000           parameters of one network (200 MB of float32), counted from the
                                          layer sizes before it is built: checkpoints and configs alike
``MAX_LAYERS``       16                   hidden layers of one network
``MAX_WIDTH``        16,384               units of one hidden layer
``MAX_ENVS``         4,096                games stepped together (``n_envs``; DMC's ``selfplay_games`` and
                                          ``opponent_games``)
``MAX_TIMESTEPS``    10^12                ``total_timesteps`` and every other count of steps
``MAX_EVAL_PAIRS``   1,000,000            duplicate deals of one evaluation
``MEMORY_FRACTION``  1/2                  share of the machine's memory the buffers a config asks for may
                                          take (replay, rollout and label buffers)
``MAX_JSON_BYTES``   1 MiB                a checkpoint's ``meta.json`` (or a zoo ``card.json``)
===================  ===================  ==================================================================

The checks of a checkpoint's numbers are exact: an int is an ``int`` (not ``true``, not ``2.0``),
a list of layer sizes is a list of such ints, each within its range.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

MAX_PARAMETERS = 50_000_000
"""Parameters of one network (checkpoint or config): 200 MB of float32 weights."""
MAX_LAYERS = 16
"""Hidden layers of one network."""
MAX_WIDTH = 1 << 14
"""Units of one hidden layer (16,384)."""
MAX_ENVS = 4096
"""Games stepped together by one run."""
MAX_TIMESTEPS = 10**12
"""Any count of env steps or decisions in a config."""
MAX_EVAL_PAIRS = 1_000_000
"""Duplicate deals per opponent of one evaluation."""
MEMORY_FRACTION = 0.5
"""Share of the machine's memory that the buffers of a config may take."""
MAX_JSON_BYTES = 1 << 20
"""Largest ``meta.json`` or ``card.json`` read."""
MAX_NPZ_ARRAYS = 4 * MAX_LAYERS + 8
"""Most arrays in a ``weights.npz`` (a weight and a bias per layer of two networks)."""
WEIGHTS_SLACK = 1 << 20
"""Bytes a weights file may hold besides its float32 parameters (names, headers, alignment)."""


def shown(value: Any, width: int = 80) -> str:
    """``repr(value)`` cut to ``width`` characters; an int too long to print is described instead."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an int of {len(str(abs(value))) if value.bit_length() < 10_000 else 'thousands of'} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past Python's digit limit inside a list, a deep list
        return f"a {type(value).__name__} too large to show"
    return text if len(text) <= width else text[: width - 3] + "..."


# --- strict checks of numbers read from a file ------------------------------------------------------


def is_int(value: Any) -> bool:
    """An ``int`` (or NumPy integer), not a ``bool``."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def need_int(data: dict, key: str, low: int, high: int, where: str | Path) -> int:
    """``data[key]`` as an int in ``[low, high]``.

    Raises:
        ValueError: ``"<where>: <key> must be an int in [low, high], got <value>"``.
    """
    value = data.get(key)
    if not is_int(value) or not low <= value <= high:
        raise ValueError(f"{where}: {key} must be an int in [{low:,}, {high:,}], got {shown(value)}")
    return int(value)


def need_sizes(data: dict, key: str, where: str | Path) -> list[int]:
    """``data[key]`` as a list of 1 to :data:`MAX_LAYERS` layer sizes, each an int in [1, :data:`MAX_WIDTH`].

    Raises:
        ValueError: naming ``where`` and ``key``.
    """
    value = data.get(key)
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= MAX_LAYERS
        or not all(is_int(h) and 1 <= h <= MAX_WIDTH for h in value)
    ):
        raise ValueError(
            f"{where}: {key} must be a list of 1 to {MAX_LAYERS} layer widths from 1 to {MAX_WIDTH:,}, got "
            f"{shown(value)}"
        )
    return [int(h) for h in value]


# --- parameter counts ---------------------------------------------------------------------------------


def mlp_parameters(sizes: list[int]) -> int:
    """Weights and biases of fully connected layers ``sizes[0] -> sizes[1] -> ...``."""
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def ppo_parameters(obs_size: int, num_actions: int, net_arch: list[int], policy_net: str = "mlp") -> int:
    """Parameters of a MaskablePPO policy: actor and critic ``net_arch`` MLPs and their heads; for the
    card-wise network (``policy_net: cards``, ``net_arch[0]`` wide) an upper bound."""
    if policy_net == "cards":
        trunk, embed = net_arch[0], 64
        extractor = mlp_parameters([obs_size, embed, embed]) + mlp_parameters([obs_size + embed, trunk, trunk])
        return 2 * extractor + 200 * (trunk + embed + 1) + 10_000
    return mlp_parameters([obs_size, *net_arch, num_actions]) + mlp_parameters([obs_size, *net_arch, 1])


def dmc_parameters(obs_size: int, feature_size: int, trunk: list[int], head: list[int]) -> int:
    """Parameters of a DMC network: the state trunk, then the head over (trunk output, move features)."""
    return mlp_parameters([obs_size, *trunk]) + mlp_parameters([trunk[-1] + feature_size, *head, 1])


def parameters_problem(count: int, what: str) -> str | None:
    """Why a network of ``count`` parameters is refused (``None``: it is not)."""
    if count <= MAX_PARAMETERS:
        return None
    return (
        f"{what} has {count:,} parameters, more than the limit of {MAX_PARAMETERS:,} (train/limits.py MAX_PARAMETERS)"
    )


def weights_bytes(parameters: int) -> int:
    """Most bytes a weights file of ``parameters`` float32 values may take (:data:`WEIGHTS_SLACK` more)."""
    return 4 * parameters + parameters // 64 + WEIGHTS_SLACK


# --- memory ----------------------------------------------------------------------------------------------


def machine_memory() -> int:
    """Bytes of physical memory of this machine (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX
        return 0


def size_text(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def memory_problem(nbytes: float, what: str) -> str | None:
    """Why ``nbytes`` for ``what`` do not fit in :data:`MEMORY_FRACTION` of the machine's memory (``None``: they do)."""
    total = machine_memory()
    if not total or nbytes <= MEMORY_FRACTION * total:
        return None
    return (
        f"{what} needs {size_text(nbytes)}, more than {MEMORY_FRACTION:.0%} of the machine's memory "
        f"({size_text(total)}; train/limits.py MEMORY_FRACTION)"
    )


# --- files ---------------------------------------------------------------------------------------------


def read_json(file: Path) -> Any:
    """A small JSON file, with one-line errors naming it.

    Raises:
        ValueError: larger than :data:`MAX_JSON_BYTES`, unreadable, not JSON, nested too deeply,
            or holding a number too long to read.
    """
    try:
        if file.stat().st_size > MAX_JSON_BYTES:
            raise ValueError(f"{file}: larger than {MAX_JSON_BYTES >> 10} KiB; not a checkpoint's metadata")
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{file}: not a text file") from None
    except OSError as exc:
        raise ValueError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{file}: not valid JSON (nested too deeply)") from None
    except ValueError:  # Python's limit on the digits of an int
        raise ValueError(f"{file}: not valid JSON (a number too long to read)") from None


ArrayCheck = Callable[[dict[str, tuple[tuple[int, ...], np.dtype]]], None]


def read_npz(file: Path, check: ArrayCheck) -> dict[str, np.ndarray]:
    """The float arrays of a ``.npz`` file, read only once ``check`` has accepted their shapes.

    Each member's ``.npy`` header is read first (shape and dtype, not the data): a member that
    is not a float array of 1 or 2 dimensions is refused, then ``check`` gets ``{name: (shape,
    dtype)}`` and raises ``ValueError`` for shapes it does not expect, and only then is each
    array read (so a small compressed file cannot be inflated to gigabytes first).

    Raises:
        ValueError: one line naming the file (and the array).
    """
    try:
        with zipfile.ZipFile(file) as zf:
            members = zf.infolist()
            if len(members) > MAX_NPZ_ARRAYS:
                raise ValueError(f"{file}: {len(members):,} entries, more than {MAX_NPZ_ARRAYS} arrays of a network")
            headers = {}
            for info in members:
                name = info.filename.removesuffix(".npy")
                if name == info.filename:
                    raise ValueError(f"{file}: entry {shown(info.filename)} is not an array (.npy)")
                with zf.open(info) as fh:
                    headers[name] = _npy_header(fh, file, name)
            check({name: (shape, dtype) for name, (shape, dtype, _) in headers.items()})
            out = {}
            for info in members:
                name = info.filename.removesuffix(".npy")
                with zf.open(info) as fh:
                    out[name] = np.lib.format.read_array(fh, allow_pickle=False)
                if out[name].shape != headers[name][0]:
                    raise ValueError(f"{file}: {name} is shorter than its header says")
            return out
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, KeyError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{file}: not a readable weights file ({first})") from None


def _npy_header(fh, file: Path, name: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise ValueError(f"format version {version}")
    except (ValueError, EOFError, SyntaxError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else "ends early"
        raise ValueError(f"{file}: not a readable weights file ({name}: a broken .npy header: {first})") from None
    if dtype.kind != "f" or dtype.hasobject or dtype.itemsize > 8:
        raise ValueError(f"{file}: not a readable weights file ({name}: expected a float array, got dtype {dtype})")
    if not 1 <= len(shape) <= 2 or not all(1 <= d for d in shape):
        raise ValueError(f"{file}: {name} must be a vector or a matrix with no empty side, got shape {shape}")
    if math.prod(shape) > MAX_PARAMETERS:
        raise ValueError(
            f"{file}: {name} has shape {shape}: {math.prod(shape):,} values, more than the limit of "
            f"{MAX_PARAMETERS:,} parameters (train/limits.py MAX_PARAMETERS)"
        )
    return tuple(int(d) for d in shape), dtype, fortran


def layer_widths(shapes: dict, prefix: str, width: int) -> list[int]:
    """The output widths of the ``{prefix}.{i}.weight/bias`` arrays of a weights file's ``shapes`` (name ->
    ``(shape, dtype)``, read from the headers), checked to chain from ``width`` inputs layer by layer.

    Raises:
        ValueError: a layer whose shapes do not take the width before it, named.
    """
    outs, i = [], 0
    while f"{prefix}.{i}.weight" in shapes:
        w, b = f"{prefix}.{i}.weight", f"{prefix}.{i}.bias"
        (w_shape, _), (b_shape, _) = shapes[w], shapes.get(b, ((), None))
        if len(w_shape) != 2 or w_shape[1] != width or b_shape != (w_shape[0],):
            raise ValueError(
                f"{w} has shape {w_shape} and {b} {b_shape or 'is missing'}; the layer takes "
                f"{width} inputs, so they must be (units, {width}) and (units,)"
            )
        width = w_shape[0]
        outs.append(width)
        i += 1
    return outs
