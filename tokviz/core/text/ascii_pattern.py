"""A `regex` split pattern rewritten for Python's `re`, exact on ASCII text (most short texts).

Python's `re` scans a plain class as a bitmap, about twice as fast as `regex` scans Unicode
property classes. On a text of ASCII characters only a class's ASCII members matter, so each
property escape (``\\p{L}``, ``\\P{N}``, ``\\s``, ``\\S``, inside a class or not) is replaced by
its ASCII members, as `regex` itself finds them (``\\s`` on ASCII is ``\\t\\n\\x0b\\x0c\\r`` and
the space for `regex`, and also ``\\x1c``-``\\x1f`` for `re`: that is why it is rewritten too).
``\\w``, ``\\d`` and ``\\b`` mean the same on ASCII in both engines and stay. A pattern with
syntax only `regex` has, one `re` warns about, a case-insensitive part (whose property classes
`regex` case-folds), verbose mode or a negated escape inside a negated class is not rewritten.

    >>> ascii_pattern(r" ?\\p{N}+|\\s+")
    ' ?[\\\\x30\\\\x31\\\\x32\\\\x33\\\\x34\\\\x35\\\\x36\\\\x37\\\\x38\\\\x39]+|[\\\\x09\\\\x0a\\\\x0b\\\\x0c\\\\x0d\\\\x20]+'
    >>> ascii_pattern(r"(?i:'s)\\p{L}") is None
    True

What this leaves out: choosing the rewritten pattern for ASCII texts (`PinnedPattern.isolated`).
"""

from __future__ import annotations

import re
import warnings

import regex

_ASCII = [chr(i) for i in range(128)]
_REFUSED_FLAGS = re.compile(r"\(\?[a-zA-Z]*[ix]")  # caseless; verbose (a comment could hold a "[")


def _members(escape: str) -> str | None:
    """The ASCII characters `escape` (``\\p{L}``, ``\\S``, ...) matches for `regex`, as a class body."""
    try:
        test = regex.compile(escape)
    except regex.error:
        return None
    return "".join(f"\\x{ord(c):02x}" for c in _ASCII if test.match(c))


def ascii_pattern(pattern: str) -> str | None:
    """`pattern` for `re`, matching as `regex` does on ASCII text; None when it cannot be."""
    if _REFUSED_FLAGS.search(pattern):
        return None
    out: list[str] = []
    i, n, in_class, negated = 0, len(pattern), False, False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            kind = pattern[i + 1]
            if in_class and negated and kind in "PSWD":  # (`regex` reads ``[^\s\S]`` as any character)
                return None
            if kind in "pP":
                end = pattern.find("}", i) + 1 if pattern[i + 2 : i + 3] == "{" else i + 3
                if end <= i:
                    return None
            elif kind in "sS":
                end = i + 2
            else:
                out.append(pattern[i : i + 2])
                i += 2
                continue
            members = _members(pattern[i:end])
            if members is None:
                return None
            out.append(members if in_class else f"[{members}]" if members else "(?!)")
            i = end
            continue
        out.append(c)
        i += 1
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class, negated = True, pattern[i : i + 1] == "^"
            for literal in "^]":  # a leading ^ negates, a leading ] is a member
                if pattern[i : i + 1] == literal:
                    out.append(literal)
                    i += 1
    text = "".join(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(text)
        except (re.error, Warning):
            return None
    return text
