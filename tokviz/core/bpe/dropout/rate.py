"""The dropout rate, the random generator every dropout loop draws from, and the queue order both
rank-based loops share (`kept_entries`)."""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Iterator

from tokviz.core.errors import EncodeError


def check_rate(p: object) -> float:
    """`p` as a float in [0, 1], or an `EncodeError` saying what is allowed."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise EncodeError(f"dropout must be a number from 0 to 1, not {p!r}")
    return float(p)


def make_rng(seed: int | random.Random | None) -> random.Random:
    """The generator a sampled encode draws from: `seed` itself when it is one, else a new one
    seeded with it (None: seeded from the system)."""
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def kept_entries(heap: list[int], p: float, rng: random.Random) -> Iterator[int]:
    """Pop `heap` lowest first, dropping each entry with probability `p`; the entries dropped
    since the last kept one go back on the heap before that one is yielded (a skipped merge may
    still happen later, as in BPE-dropout's reference loop). The caller may push onto `heap`
    between two entries."""
    pop, push, draw = heapq.heappop, heapq.heappush, rng.random
    skipped: list[int] = []
    while heap:
        e = pop(heap)
        if draw() < p:
            skipped.append(e)
            continue
        if skipped:
            for s in skipped:
                push(heap, s)
            skipped.clear()
        yield e
