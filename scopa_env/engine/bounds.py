"""The seeds every environment accepts: ``None`` or an int in ``[0, 2**63)``.

One rule for the AEC env (:mod:`scopa_env.aec.scopa_v0`), the compiled core
(:class:`scopa_env.fast.batch.BatchedScopa`, one seed per game) and the vector envs
(:mod:`scopa_env.fast.vec_env`): NumPy's generators take any non-negative int, and the compiled
core keeps each game's seed in an int64, so a seed is a non-negative int below 2**63.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SEED_LIMIT = 2**63
"""Seeds are ints in ``[0, SEED_LIMIT)``."""
SEED_RULE = "None or an int in [0, 2**63)"


def _shown(value: Any) -> str:
    if isinstance(value, int) and value.bit_length() > 256:
        return f"an int of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an int (or ``None``) once it follows the seed rule.

    Raises:
        ValueError: ``"<name> must be None or an int in [0, 2**63), got <seed>"``.
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < SEED_LIMIT:
        raise ValueError(f"{name} must be {SEED_RULE}, got {_shown(seed)}")
    return int(seed)
