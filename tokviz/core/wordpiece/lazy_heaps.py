"""What the WordPiece trainer's lazy heaps need besides the heap module: exact keys for the
fractions they order (`score_shift`, `group_key_for`), and dropping the stale entries they pile up.

A heap entry is ``(-key, first position, sequence number, id)``; the trainer pins the current
entry of each id (``pinned[id] is entry``), so any other entry for that id is stale.
What this leaves out: the heaps themselves and when they are used (`tokviz.core.wordpiece.trainer`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from functools import partial
from operator import truediv

FLOAT_KEYS_BELOW = 1 << 26  # corpus lengths for which float keys of count(ab) / count(a) order exactly


def _shifted_div(shift: int, c: int, d: int) -> int:
    """``c * 2**shift // d``: an exact integer key of the fraction c / d."""
    return (c << shift) // d


def score_shift(length: int) -> int:
    """K for the exact score keys ``count(ab) * 2**K // (count(a) * count(b))`` of a corpus of
    `length` weighted characters: 2**K exceeds the square of any denominator, so distinct
    fractions never share a key and equal ones always do."""
    return 4 * max(1, length).bit_length() + 2


def group_key_for(length: int) -> Callable[[int, int], float | int]:
    """The key of count(ab) / count(a) (at most 1) for a corpus of `length` weighted characters:
    the float quotient below 2**26 (distinct fractions are then at least 2**-52 apart, more than
    two roundings), else ``c * 2**G // d`` with 2**G above the square of any count.

    >>> group_key_for(1000)(1, 3), group_key_for(2**26)(1, 4)
    (0.3333333333333333, 18014398509481984)
    """
    if length < FLOAT_KEYS_BELOW:
        return truediv
    return partial(_shifted_div, 2 * max(1, length).bit_length() + 2)


def drop_stale(heap: list[tuple], pinned: dict[int, tuple]) -> int:
    """Keep (in place) the entries of `heap` that are still pinned (``pinned[entry[3]] is
    entry``), as a heap again; return how many are left."""
    heap[:] = [e for e in heap if pinned.get(e[3]) is e]
    heapq.heapify(heap)
    return len(heap)
