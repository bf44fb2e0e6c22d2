"""Batches: what a model receives. BOS/EOS insertion, padding to equal length, attention masks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import SettingsError


@dataclass(frozen=True)
class Batch:
    """A padded id matrix ``(rows, length)`` and its attention mask (1 = real token, 0 = padding)."""

    ids: np.ndarray  # (n, L) int64
    attention_mask: np.ndarray  # (n, L) int8
    lengths: list[int]  # real tokens per row, BOS/EOS included


def make_batch(
    rows: Sequence[Sequence[int]],
    *,
    pad_id: int,
    bos_id: int | None = None,
    eos_id: int | None = None,
    pad_side: str = "right",
    max_length: int | None = None,
) -> Batch:
    """Add BOS/EOS to each row, truncate to `max_length`, pad with `pad_id` on `pad_side`.

    >>> b = make_batch([[5, 6, 7], [8]], pad_id=0, bos_id=1)
    >>> b.ids.tolist(), b.attention_mask.tolist()
    ([[1, 5, 6, 7], [1, 8, 0, 0]], [[1, 1, 1, 1], [1, 1, 0, 0]])
    """
    if pad_side not in ("left", "right"):
        raise SettingsError(f"pad_side must be 'left' or 'right', got {pad_side!r}")
    if max_length is not None and max_length < 1:
        raise SettingsError(f"max_length must be at least 1, got {max_length}")
    full = []
    for row in rows:
        r = ([bos_id] if bos_id is not None else []) + list(row) + ([eos_id] if eos_id is not None else [])
        full.append(r[:max_length] if max_length is not None else r)
    width = max((len(r) for r in full), default=0)
    ids = np.full((len(full), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(full), width), dtype=np.int8)
    for i, r in enumerate(full):
        if not r:
            continue
        sl = slice(0, len(r)) if pad_side == "right" else slice(width - len(r), width)
        ids[i, sl] = r
        mask[i, sl] = 1
    return Batch(ids, mask, [len(r) for r in full])
