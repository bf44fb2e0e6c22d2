"""Shrinking a text on which two tokenizers disagree to a minimal one: delta debugging on its
characters (Zeller and Hildebrandt 2002, "Simplifying and Isolating Failure-Inducing Input").

`shrink(text, fails)` removes chunks of characters while `fails(text)` stays true, halving the
chunk size when no chunk can go, and ends 1-minimal: removing any single character of the result
makes `fails` false. What this leaves out: what "fails" means (`tokviz.core.parity.search`).
"""

from __future__ import annotations

from collections.abc import Callable

from tokviz.core.errors import Cancelled


def shrink(text: str, fails: Callable[[str], bool], *, should_stop: Callable[[], bool] | None = None) -> str:
    """The smallest text ddmin finds from `text` (for which `fails` is true) on which `fails`
    is still true; 1-minimal. Raises `Cancelled` when `should_stop()` turns true.

    >>> shrink("xxaxxbxx", lambda s: "a" in s and "b" in s)
    'ab'
    >>> shrink("hello", lambda s: True)
    ''
    """
    chars = list(text)
    n = 2
    while len(chars) >= 2:
        size = -(-len(chars) // n)  # ceil
        for start in range(0, len(chars), size):
            if should_stop is not None and should_stop():
                raise Cancelled()
            rest = chars[:start] + chars[start + size:]
            if fails("".join(rest)):
                chars = rest
                n = max(n - 1, 2)
                break
        else:
            if size == 1:  # no single character can go: 1-minimal
                break
            n = min(len(chars), 2 * n)
    if len(chars) == 1 and fails(""):
        chars = []
    return "".join(chars)
