"""Surrogate code points in text to encode: tiktoken's rule, applied once for every tokenizer.

A Python string can hold UTF-16 surrogates (U+D800..U+DFFF): text pasted into a Qt widget, read
from JSON (``"\\ud83d\\udc4d"``) or built by hand. They have no UTF-8 form, so a byte-level
tokenizer cannot encode them as they are. tokviz follows tiktoken's ``encode``: a high surrogate
followed by a low one is joined into the character they stand for (``"\\ud83d\\udc4d"`` is 👍),
every other surrogate becomes U+FFFD. Every tokenizer family gets its text through
`surrogate_safe`, so the rule holds for all of them in the same way, and the spans of the result
still index the text the caller passed (a joined pair is one character of two code points).

    >>> fix_surrogates("a\\ud83d\\udc4db\\udc00")
    ('a👍b\\ufffd', [0, 1, 3, 4, 5])
    >>> fix_surrogates("plain")
    ('plain', None)

What this leaves out: invalid UTF-8 *bytes* (a file or an argument), which readers refuse before
any text exists (``tokviz.core.text.corpus``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

_ANY = re.compile("[\ud800-\udfff]")
_PAIR_OR_LONE = re.compile("([\ud800-\udbff][\udc00-\udfff])|[\ud800-\udfff]")

ENCODE_METHODS = ("encode", "encode_ordinary", "encode_ids", "encode_sampled", "encode_dropout")  # those a class defines


def has_surrogates(text: str) -> bool:
    """True when `text` holds a surrogate code point (O(1) for ASCII text)."""
    return not text.isascii() and _ANY.search(text) is not None


def fix_surrogates(text: str) -> tuple[str, list[int] | None]:
    """(`text` with pairs joined and lone surrogates replaced, start of each of its characters
    in `text` plus ``len(text)`` at the end), or (`text`, None) when there is nothing to fix.

    Gives exactly ``text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")``, the
    repair tiktoken applies, and the positions needed to map spans back to `text`.
    """
    if not has_surrogates(text):
        return text, None
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for m in _PAIR_OR_LONE.finditer(text):
        a, b = m.span()
        parts.append(text[pos:a])
        starts.extend(range(pos, a))
        if m.group(1):  # (high, low) -> the code point they encode
            hi, lo = ord(text[a]), ord(text[a + 1])
            parts.append(chr(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)))
        else:
            parts.append("\ufffd")
        starts.append(a)
        pos = b
    parts.append(text[pos:])
    starts.extend(range(pos, len(text) + 1))
    return "".join(parts), starts


def _remap(enc, starts: list[int]):
    """Spans of an `Encoding` of the fixed text, turned into spans of the original text."""
    enc.spans[:] = [(starts[a], starts[b]) for a, b in enc.spans]
    enc.dropped[:] = [(starts[a], starts[b]) for a, b in enc.dropped]
    return enc


def _safe(method: Callable, returns_encoding: bool) -> Callable:
    @functools.wraps(method)
    def wrapper(self, text: str, *args, **kwargs):
        fixed, starts = fix_surrogates(text)
        result = method(self, fixed, *args, **kwargs)
        return _remap(result, starts) if starts is not None and returns_encoding else result

    wrapper.surrogate_safe = True  # type: ignore[attr-defined]
    return wrapper


def surrogate_safe(cls: type) -> type:
    """Class decorator: the `ENCODE_METHODS` `cls` defines itself get the surrogate rule above
    (subclasses inherit the wrapped methods)."""
    for name in ENCODE_METHODS:
        method = cls.__dict__.get(name)
        if method is not None and not getattr(method, "surrogate_safe", False):
            setattr(cls, name, _safe(method, returns_encoding=name != "encode_ids"))
    return cls
