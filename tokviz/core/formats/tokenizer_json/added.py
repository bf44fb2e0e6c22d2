"""Cutting a ``tokenizer.json``'s added tokens out of text, as tokenizers' ``AddedVocabulary`` does.

Added tokens are found as tokenizers finds them: the leftmost-longest occurrences of their texts
(one sorted table of all of them, `tokviz.core.text.literals.Literals`, where tokenizers builds
one Aho-Corasick automaton; never one pattern per token), then each match's flags:
``single_word`` (a match inside a word is dropped), ``lstrip`` / ``rstrip`` (the match swallows
the whitespace beside it) and ``normalized`` (matched in the normalized text, so the table holds
the normalized form). Text between matches is encoded by the model; a match can be kept as text
(`literal_test`: special tokens inside character ranges a user typed). The pieces between added
tokens are encoded independently, so their encodings can be reused (`PieceCache`): a chat whose
one message changed re-encodes that message only.

What this leaves out: the pipeline that uses these (`tokviz.core.formats.tokenizer_json.tokenizer`).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Collection, Sequence

import regex

from tokviz.core.encoding import Encoding
from tokviz.core.special_tokens import AddedToken
from tokviz.core.text.literals import Literals

AsText = Callable[[int, int, int], bool]  # (start, end, token id) -> keep the match as text

# tokenizers' tests around a match (Rust's Unicode \w and \s, as the regex module's)
_WORD = regex.compile(r"\w")
_SPACES_BEFORE = regex.compile(r"(?r)\s*")
_SPACES_AFTER = regex.compile(r"\s*")


class AddedPatterns:
    """The matchers of the allowed added tokens, built once per set of allowed tokens."""

    def __init__(self, tokens: Sequence[AddedToken], normalize: Callable[[str], str] | None) -> None:
        self._tokens = list(tokens)
        self._normalize = normalize
        self._cache: dict[tuple[frozenset[str], bool], AddedMatcher | None] = {}

    def get(self, allowed: Collection[str], normalized: bool) -> "AddedMatcher | None":
        """The matcher of the allowed tokens with this ``normalized`` flag; None when there are none."""
        key = (allowed if isinstance(allowed, frozenset) else frozenset(allowed), normalized)
        if key not in self._cache:
            if len(self._cache) > 16:
                self._cache.clear()
            self._cache[key] = self._build(key, normalized)
        return self._cache[key]

    def _build(self, key: tuple[frozenset[str], bool], normalized: bool) -> "AddedMatcher | None":
        allowed = key[0]
        toks = [t for t in self._tokens if t.normalized == normalized and t.content and t.content in allowed]
        if not toks:
            return None
        if normalized and self._normalize is not None:  # matched in normalized text
            contents = [self._normalize(t.content) for t in toks]
        else:
            contents = [t.content for t in toks]
        return AddedMatcher(toks, Literals(contents), key)


class AddedMatcher:
    """Some added tokens (`tokens`, and `literals` of their texts in the same order), matched as
    tokenizers' ``find_matches`` does; `key` identifies the set (a cache key)."""

    def __init__(self, tokens: Sequence[AddedToken], literals: Literals, key: object) -> None:
        self.tokens = tokens
        self.literals = literals
        self.key = key

    def split(self, text: str, as_text: AsText | None = None) -> list[tuple[int, int, int | None]]:
        """`split_added` with these tokens. A match the flags or `as_text` drop still ends where
        it ends: the search goes on after it (as the automaton's does)."""
        out: list[tuple[int, int, int | None]] = []
        pos = 0  # the end of the last piece
        n = len(text)
        tokens = self.tokens
        for a, b, k in self.literals.finditer(text):
            tok = tokens[k]
            if tok.single_word and ((a > 0 and _WORD.match(text, a - 1)) or (b < n and _WORD.match(text, b))):
                continue
            if as_text is not None and as_text(a, b, tok.id):
                continue
            start, stop = a, b
            if tok.lstrip:  # the whitespace before, unless the last piece took it
                start = max(_SPACES_BEFORE.match(text, 0, a).start(), pos)  # type: ignore[union-attr]
            if tok.rstrip:
                stop = _SPACES_AFTER.match(text, b).end()  # type: ignore[union-attr]
            start = max(start, pos)  # (the last token's rstrip may have run into this match)
            if stop <= start:
                continue
            if start > pos:
                out.append((pos, start, None))
            out.append((start, stop, tok.id))
            pos = stop
        if pos < n:
            out.append((pos, n, None))
        return out


def split_added(text: str, added: AddedMatcher | None, as_text: AsText | None = None
                ) -> list[tuple[int, int, int | None]]:
    """``(start, end, added id or None)`` pieces of `text`; a match for which
    ``as_text(start, end, id)`` is true stays ordinary text.

    >>> tok = AddedToken(1, "<s>")
    >>> split_added("a<s>b", AddedMatcher([tok], Literals(["<s>"]), None))
    [(0, 1, None), (1, 4, 1), (4, 5, None)]
    """
    if added is None or not text:
        return [(0, len(text), None)] if text else []
    return added.split(text, as_text)


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
