"""Torch batches of a search-labelled dataset (:mod:`agents.dataset`; docs/datasets.md).

:func:`torch_batches` yields the batches of :meth:`agents.dataset.PositionDataset.batches` as
dicts of torch tensors: the same keys, shapes and padding (``move_mask`` marks the real moves of
each position), the unsigned ``deal_seed`` as int64 bits (torch has no uint64 arithmetic).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from agents.dataset import PositionDataset, load_dataset


def to_torch(batch: dict[str, np.ndarray], device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """One numpy batch as tensors on ``device`` (``deal_seed`` reinterpreted as int64)."""
    out = {}
    for name, array in batch.items():
        if array.dtype == np.uint64:
            array = array.view(np.int64)
        out[name] = torch.from_numpy(np.ascontiguousarray(array)).to(device)
    return out


def torch_batches(
    data: PositionDataset | str | Path,
    batch_size: int = 256,
    shuffle: bool = False,
    seed: int | None = None,
    device: str | torch.device = "cpu",
) -> Iterator[dict[str, torch.Tensor]]:
    """Batches of a dataset (a :class:`~agents.dataset.PositionDataset` or a file path) as torch tensors."""
    if not isinstance(data, PositionDataset):
        data = load_dataset(data)
    for batch in data.batches(batch_size, shuffle, seed):
        yield to_torch(batch, device)
