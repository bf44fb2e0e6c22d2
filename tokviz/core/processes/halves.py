"""Encoding a big text in two processes: the second half in a forked child, the first here.

Used by a tokenizer given two ``processes`` (the caller's choice: `parallel`), and only where
forking is safe (`parallel.usable`). The child inherits the loaded tokenizer (no reload, no
pickling of the vocabulary), encodes its half and sends back the ids (an ``array('I')``, 4 bytes
each) and the chunks it newly cached, so the parent's cache ends as warm as after a one-process run. Any failure of the child
falls back to encoding its half here. What this leaves out: where the text may be cut
(`tokviz.core.text.fastsplit.cut_points`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

from .fork import here_and_forked

PARALLEL_MIN_CHARS = 1_000_000  # below this the fork costs more than it saves

__all__ = ["PARALLEL_MIN_CHARS", "run_halves"]


def run_halves(
    encode: Callable[[str], list[int]],
    new_entries: Callable[[], dict],
    merge_entries: Callable[[dict], None],
    text: str,
    cut: int,
    *,
    ids: bool = True,
) -> list:
    """``encode(text[:cut]) + encode(text[cut:])``, the second half in a forked child.

    `new_entries()` (called in the child after encoding) returns the cache entries it added;
    `merge_entries(d)` adds them to the parent's cache. With `ids` False `encode` returns any
    list (a few strings), sent back as it is rather than as an array of ids.
    """
    pack = (lambda part: array("I", part)) if ids else list
    left, (right, extra) = here_and_forked(lambda: encode(text[:cut]),
                                           lambda: (pack(encode(text[cut:])), new_entries()),
                                           lambda: (pack(encode(text[cut:])), None))  # (cache warm here)
    if extra is not None:
        merge_entries(extra)
    return left + (right.tolist() if ids else right)
