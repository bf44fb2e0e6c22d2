"""Checks for numbers read from files: counts, ids and ranks are whole numbers in a 64-bit range.

JSON and text files can hold any integer (``1e400`` is a float, ``2**70`` an int, ``true`` an int
to Python); every loader checks with these before a number sizes an array or reaches numpy.

    >>> is_count(3), is_count(-1), is_count(True), is_count(2**63)
    (True, False, False, False)
"""

from __future__ import annotations

MAX_COUNT = 2**63 - 1  # counts, lengths, ids and ranks are 64-bit wherever they are computed


def is_count(x: object) -> bool:
    """A whole number from 0 to `MAX_COUNT` (``True`` is not a count)."""
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_COUNT
