"""Cutting a ``tokenizer.json``'s added tokens out of text, as tokenizers' ``AddedVocabulary`` does.

Added tokens are matched before anything else, longest first, with their flags: ``single_word``
(not inside a word), ``lstrip`` / ``rstrip`` (the match swallows the whitespace beside it) and
``normalized`` (matched in the normalized text, so the pattern holds the normalized form). Text
between matches is encoded by the model; a match can be kept as text (`literal_test`: special
tokens inside character ranges a user typed). The pieces between added tokens are encoded
independently, so their encodings can be reused (`PieceCache`): a chat whose one message changed
re-encodes that message only.

What this leaves out: the pipeline that uses these (`tokviz.core.pretrained.hf.tokenizer`).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Callable, Collection, Sequence

import regex

from tokviz.core.encoding import Encoding
from tokviz.core.special_tokens import AddedToken

AsText = Callable[[int, int, int], bool]  # (start, end, token id) -> keep the match as text


class AddedPatterns:
    """The alternation of the allowed added tokens, built once per set of allowed tokens."""

    def __init__(self, tokens: Sequence[AddedToken], normalize: Callable[[str], str] | None) -> None:
        self._tokens = list(tokens)
        self._normalize = normalize
        self._cache: dict[tuple[frozenset[str], bool], Alternation | None] = {}

    def get(self, allowed: Collection[str], normalized: bool) -> "Alternation | None":
        """The pattern of the allowed tokens with this ``normalized`` flag; group ``t<id>`` names
        the token. None when there are none."""
        key = (allowed if isinstance(allowed, frozenset) else frozenset(allowed), normalized)
        if key not in self._cache:
            if len(self._cache) > 16:
                self._cache.clear()
            self._cache[key] = self._build(key[0], normalized)
        return self._cache[key]

    def _build(self, allowed: frozenset[str], normalized: bool) -> "Alternation | None":
        toks = [t for t in self._tokens if t.content in allowed and t.normalized == normalized and t.content]
        if not toks:
            return None
        alts, firsts = [], set()
        for t in sorted(toks, key=lambda t: len(t.content), reverse=True):
            content = t.content
            if normalized and self._normalize is not None:  # matched in normalized text
                content = self._normalize(content)
            firsts.add(content[:1])  # "" (a token the normalizer empties): no quick test
            p = regex.escape(content)
            if t.single_word:
                p = rf"(?<!\w){p}(?!\w)"
            if t.lstrip:
                p = r"\s*" + p
            if t.rstrip:
                p = p + r"\s*"
            alts.append(f"(?P<t{t.id}>{p})")
        return Alternation("|".join(alts), firsts)


class Alternation:
    """The pattern of some added tokens (``finditer`` as a compiled pattern's), with a quick
    test first: a text holding none of the characters the tokens start with has no match (every
    match holds its token's text whole), so most texts never run the alternation of hundreds of
    tokens, and it is compiled only when a text first needs it."""

    def __init__(self, pattern: str, firsts: Collection[str]) -> None:
        self.pattern = pattern  # the source (a cache key)
        self._first = re.compile("[" + "".join(map(re.escape, sorted(firsts))) + "]") if "" not in firsts else None
        self._compiled: regex.Pattern | None = None

    def finditer(self, text: str):
        if self._first is not None and self._first.search(text) is None:
            return iter(())
        if self._compiled is None:
            self._compiled = regex.compile(self.pattern)
        return self._compiled.finditer(text)


def split_added(text: str, pattern: Alternation | regex.Pattern | None, as_text: AsText | None = None
                ) -> list[tuple[int, int, int | None]]:
    """``(start, end, added id or None)`` pieces of `text`; a match for which
    ``as_text(start, end, id)`` is true stays ordinary text.

    >>> split_added("a<s>b", regex.compile("(?P<t1><s>)"))
    [(0, 1, None), (1, 4, 1), (4, 5, None)]
    """
    if pattern is None or not text:
        return [(0, len(text), None)] if text else []
    out: list[tuple[int, int, int | None]] = []
    pos = 0
    for m in pattern.finditer(text):
        a, b = m.span()
        tid = int(m.lastgroup[1:])  # type: ignore[index]
        if a == b or (as_text is not None and as_text(a, b, tid)):
            continue
        if a > pos:
            out.append((pos, a, None))
        out.append((a, b, tid))
        pos = b
    if pos < len(text):
        out.append((pos, len(text), None))
    return out


def literal_test(literal: Sequence[tuple[int, int]], special_ids: Collection[int]) -> AsText | None:
    """``as_text(start, end, id)``: a special token lying inside one of the `literal` spans."""
    if not literal:
        return None
    spans = sorted(literal)
    starts = [s for s, _ in spans]

    def as_text(a: int, b: int, tid: int) -> bool:
        k = bisect.bisect_right(starts, a) - 1
        return tid in special_ids and k >= 0 and b <= spans[k][1]

    return as_text


def literal_inside(literal: Sequence[tuple[int, int]], a: int, b: int) -> tuple[tuple[int, int], ...]:
    """The parts of the `literal` spans inside ``[a, b)``, relative to `a` (a piece's cache key)."""
    return tuple((max(s, a) - a, min(e, b) - a) for s, e in literal if s < b and e > a)


class PieceCache:
    """The encodings of the last pieces of text between added tokens (relative spans), so a chat
    whose one message changed re-encodes only that message's piece. Thread-safe: a superseded
    render may still be encoding while the next one starts."""

    MAX_PIECES = 4096
    MAX_CHARS = 1 << 16  # longer pieces are not kept

    def __init__(self) -> None:
        self._items: dict[tuple, tuple[Encoding, list]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple[Encoding, list] | None:
        with self._lock:
            hit = self._items.pop(key, None)
            if hit is not None:
                self._items[key] = hit  # most recent last
            return hit

    def put(self, key: tuple, piece: Encoding, covered: list[tuple[int, int]]) -> tuple[Encoding, list]:
        """Keep a piece's encoding with the text its tokens cover, merged into a few ranges."""
        value = (piece, merge_spans(covered))
        if len(key[0]) <= self.MAX_CHARS:
            with self._lock:
                if len(self._items) >= self.MAX_PIECES:
                    del self._items[next(iter(self._items))]
                self._items[key] = value
        return value


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans joined.

    >>> merge_spans([(3, 4), (0, 2), (2, 3), (6, 7)])
    [(0, 4), (6, 7)]
    """
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def append_shifted(out: Encoding, covered: list, piece: Encoding, piece_covered: list, offset: int) -> None:
    """Append a piece encoded at position 0 to `out` as if it were encoded at `offset`."""
    base = len(out.ids)
    out.ids.extend(piece.ids)
    out.tokens.extend(piece.tokens)
    out.spans.extend([(x + offset, y + offset) for x, y in piece.spans])
    if piece.unknown:
        out.unknown.extend([i + base for i in piece.unknown])
    if piece.special:
        out.special.extend([i + base for i in piece.special])
    covered.extend([(x + offset, y + offset) for x, y in piece_covered])
