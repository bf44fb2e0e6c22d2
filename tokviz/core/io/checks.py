"""Checks for numbers read from files: counts, ids and ranks are whole numbers in a 64-bit range.

JSON and text files can hold any integer (``1e400`` is a float, ``2**70`` an int, ``true`` an int
to Python); every loader checks with these before a number sizes an array or reaches numpy.

    >>> is_count(3), is_count(-1), is_count(True), is_count(2**63)
    (True, False, False, False)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MAX_COUNT = 2**63 - 1  # counts, lengths, ids and ranks are 64-bit wherever they are computed


def is_count(x: object) -> bool:
    """A whole number from 0 to `MAX_COUNT` (``True`` is not a count)."""
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_COUNT


def ints_within(xs: Sequence, lo: int, hi: int) -> bool:
    """Every item of `xs` an int (not a bool) from `lo` to `hi`, checked in a few passes in C (a
    type set, `min`, `max`): for the long lists of a model file.

    >>> ints_within([3, 0, 7], 0, 7), ints_within([1, True], 0, 7), ints_within([1.0], 0, 7), ints_within([], 0, 0)
    (True, False, False, True)
    """
    return not xs or (set(map(type, xs)) <= {int} and lo <= min(xs) and max(xs) <= hi)


def all_counts(xs: Sequence) -> bool:
    """`is_count` for every item of `xs` (as `ints_within`)."""
    return ints_within(xs, 0, MAX_COUNT)


def all_numbers(xs: Sequence) -> bool:
    """Every item of `xs` a finite float or a count: what a float column of a model file may hold.

    >>> all_numbers([0.5, 2, -1.5]), all_numbers([float("nan")]), all_numbers([-1]), all_numbers(["1"])
    (True, False, False, False)
    """
    if set(map(type, xs)) <= {float}:
        return all(map(math.isfinite, xs))
    return all(is_count(x) or (type(x) is float and math.isfinite(x)) for x in xs)
