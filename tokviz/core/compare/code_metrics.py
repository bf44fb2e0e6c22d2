"""How a tokenizer cuts source code: identifiers and indentation.

Two spans of a text, each with the number of tokens overlapping it:

- code identifiers: names written in snake_case, with a leading underscore, or in camelCase
  (``max_len``, ``_cache``, ``getValue``; a plain word such as ``value`` is prose as much as code
  and is left out). ``identifier_fragmentation``: mean tokens per identifier (1: each kept whole);
- indentation: the spaces and tabs that start a line with more on it.
  ``indentation_tokens``: mean tokens overlapping one line's indentation.

On prose both are rare and the figures are None when a text has neither. Nothing here parses
code: a whitespace-and-name reading that works for any language. What this leaves out: counting
over documents (`tallies`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from .text import TextFacts

IDENTIFIER = re.compile(r"(?<![\w])(?:_\w*[A-Za-z0-9]\w*|[A-Za-z][A-Za-z0-9]*_\w*|[a-z][a-z0-9]*[A-Z]\w*)(?![\w])",
                        re.ASCII)
INDENT = re.compile(r"^[ \t]+(?=\S)", re.MULTILINE)


def span_tokens(facts: TextFacts, pattern: re.Pattern, overlaps: Callable[[np.ndarray, np.ndarray], np.ndarray],
                in_bytes: bool) -> tuple[np.ndarray, np.ndarray]:
    """The char offsets of `pattern`'s matches in ``facts.text`` and the number of tokens
    overlapping each (`overlaps`: `text.Overlaps` of the tokens' positions, in bytes, or in chars
    when not `in_bytes`).

    >>> from tokviz.core.compare.text import Overlaps, text_facts
    >>> f = text_facts("    x = max_len\\n")  # tokens: "    ", "x", " =", " max", "_len", "\\n"
    >>> o = Overlaps(np.array([0, 4, 5, 7, 11, 15]), np.array([4, 5, 7, 11, 15, 16]))
    >>> [a.tolist() for a in span_tokens(f, IDENTIFIER, o, True)], [a.tolist() for a in span_tokens(f, INDENT, o, True)]
    ([[8], [2]], [[0], [1]])
    """
    lo, hi = facts.matches(pattern)
    if not len(lo):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    bounds = (facts.char_bytes[lo], facts.char_bytes[hi]) if in_bytes else (lo, hi)
    return lo, overlaps(*bounds)
