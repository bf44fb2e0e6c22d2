"""Whitespace as `str.isspace` (and `str.split()`) sees it, for arrays of code points.

`space_mask(codes)` says which code points of a text (its UTF-32 as an array) are spaces, with one
table lookup per character: every such code point lies below U+3001. A table, not `np.isin`, which
sorts with `np.unique`, whose first call imports numpy.ma (10-20 ms while the window starts). The
token view's alignment and compare's word spans both ask it.
"""

from __future__ import annotations

from functools import cache

import numpy as np

_LIMIT = 0x3001  # every code point `str.isspace` accepts is below this


@cache
def space_codes() -> np.ndarray:
    """Code points `str.isspace` accepts, sorted: the separators of `str.split()`.

    >>> [hex(c) for c in space_codes()[:6]]
    ['0x9', '0xa', '0xb', '0xc', '0xd', '0x1c']
    """
    return np.array([c for c in range(_LIMIT) if chr(c).isspace()], dtype=np.uint32)


@cache
def _table() -> np.ndarray:
    """(_LIMIT + 1,) bool: whether each code point below `_LIMIT` is a space; the last entry
    (False) stands for every code point above."""
    table = np.zeros(_LIMIT + 1, dtype=bool)
    table[space_codes()] = True
    return table


def space_mask(codes: np.ndarray) -> np.ndarray:
    """Whether each code point of `codes` is a space.

    >>> space_mask(np.array([0x20, 0x61, 0x3000, 0x10FFFF], dtype=np.uint32)).tolist()
    [True, False, True, False]
    """
    return _table()[np.minimum(codes, _LIMIT)]
