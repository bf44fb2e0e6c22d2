"""Where a normalized text can be cut so that no piece spans the cut: before each ``▁`` (after
it, with whitespace as a suffix), unless a piece holding ``▁`` inside covers the place. The
Unigram lattice (`lattice`) and the BPE model (`bpe`) segment texts there.

What this leaves out: the segments' best paths (`lattice`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import regex

MARK = "\u2581"
_MARK_LED = re.compile("\u2581[^\u2581]*")


def inner_mark_pattern(pieces, whitespace_suffix: bool):
    """A regex of the pieces holding ``▁`` where a cut would go (not first; not last with whitespace
    as a suffix), longest first; None when there are none."""
    inner = sorted((p for p in pieces if MARK in (p[:-1] if whitespace_suffix else p[1:])), key=len, reverse=True)
    return regex.compile("|".join(regex.escape(p) for p in inner)) if inner else None


def cut_segments(s: str, inner, suffix: bool) -> list[tuple[int, int]]:
    """(start, end) of the parts of `s` no piece can span: cut before each ``▁`` (after it, with
    whitespace as a suffix) unless an occurrence of an `inner` piece covers the place."""
    n = len(s)
    if MARK not in s:
        return [(0, n)] if n else []
    if inner is None:
        out, pos = [], 0
        for part in segment_strings(s, None, suffix):
            out.append((pos, pos + len(part)))
            pos += len(part)
        return out
    if suffix:
        cuts = [m.end() for m in regex.finditer(MARK, s) if m.end() < n]
    else:
        cuts = [m.start() for m in regex.finditer(MARK, s) if m.start() > 0]
    blocked = set()
    for m in inner.finditer(s, overlapped=True):
        blocked.update(range(m.start() + 1, m.end()))
    bounds = [0, *(c for c in cuts if c not in blocked), n]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def segment_strings(s: str, inner, suffix: bool) -> list[str]:
    """`cut_segments` as strings (without `inner` pieces: a plain split at ``▁``)."""
    if inner is not None:
        return [s[a:b] for a, b in cut_segments(s, inner, suffix)]
    if suffix:
        parts = s.split(MARK)
        if len(parts) == 1:
            return parts if s else []
        out = [p + MARK for p in parts[:-1]]
        if parts[-1]:
            out.append(parts[-1])
        return out
    if not s:
        return []
    out = _MARK_LED.findall(s)  # each ▁ with what follows up to the next (one pass, no joining)
    head = s.find(MARK)
    if head != 0:
        out.insert(0, s if head < 0 else s[:head])
    return out


def absolute_ends(seg_ends: Sequence[tuple[int, ...]]) -> list[int]:
    """Per-segment end positions (each segment counted from 0) as positions in the whole text."""
    out: list[int] = []
    pos = 0
    for ends in seg_ends:
        if not ends:
            continue
        if pos:
            out.extend([pos + e for e in ends])
        else:
            out.extend(ends)
        pos += ends[-1]
    return out
