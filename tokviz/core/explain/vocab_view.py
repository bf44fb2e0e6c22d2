"""Vocabulary browser data: search (substring or regex), sort, and filter any tokenizer's tokens.

`VocabIndex` is built once per tokenizer (a few hundred ms for 200k tokens: build it in a worker)
and answers queries with an array of ids, which a virtual table model shows row by row.
Filters: ``partial_utf8`` (bytes that are not text on their own), ``whitespace`` (only
whitespace), ``digits`` (digits, with an optional leading space), ``non_latin`` (a letter of a
script other than Latin), ``special`` (special and added tokens). Filters combine with AND.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import regex

from tokviz.core.errors import TokvizError

FILTERS = ("partial_utf8", "whitespace", "digits", "non_latin", "special")
SORT_KEYS = ("id", "length", "bytes")
_BIT = {name: 1 << k for k, name in enumerate(FILTERS)}
_NON_LATIN_LETTER = regex.compile(r"[\p{L}--\p{Latin}]", flags=regex.V1)
_DIGITS = regex.compile(r" ?\p{Nd}+")


@dataclass(frozen=True)
class VocabEntry:
    """One row of the browser."""

    id: int
    token: bytes
    text: str  # readable: invalid UTF-8 bytes as \\xNN
    flags: frozenset[str]


def token_flags(data: bytes, *, special: bool = False) -> frozenset[str]:
    """The filter names that apply to one token's bytes."""
    out = set()
    if special:
        out.add("special")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        out.add("partial_utf8")
        text = data.decode("utf-8", errors="ignore")
    if text and text.isspace() and "partial_utf8" not in out:
        out.add("whitespace")
    if text and _DIGITS.fullmatch(text) and "partial_utf8" not in out:
        out.add("digits")
    if _NON_LATIN_LETTER.search(text):
        out.add("non_latin")
    return frozenset(out)


class VocabIndex:
    """Search, sort and filter the vocabulary of `tok` (any tokviz tokenizer)."""

    def __init__(self, tok) -> None:
        vocab = tok.vocab()
        special_ids = set(tok.special_tokens.values())
        ids, texts, tokens, lengths, flags = [], [], [], [], []
        for i, data in enumerate(vocab):
            if not data and i not in special_ids:
                continue
            data = data or b""
            sp = i in special_ids or tok.is_special(i)
            f = token_flags(data, special=sp)
            ids.append(i)
            tokens.append(data)
            texts.append(data.decode("utf-8", errors="backslashreplace"))
            lengths.append(len(data))
            flags.append(sum(_BIT[x] for x in f))
        self.ids = np.asarray(ids, dtype=np.int64)
        self.texts = texts
        self.tokens = tokens
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.flags = np.asarray(flags, dtype=np.int64)
        self._bytes_order: np.ndarray | None = None
        self._row = {int(i): r for r, i in enumerate(ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def entry(self, token_id: int) -> VocabEntry:
        r = self._row[token_id]
        return VocabEntry(token_id, self.tokens[r], self.texts[r],
                          frozenset(n for n, b in _BIT.items() if self.flags[r] & b))

    def count(self, name: str) -> int:
        """How many tokens a filter keeps."""
        return int(np.count_nonzero(self.flags & _BIT[name]))

    def query(
        self,
        search: str = "",
        *,
        use_regex: bool = False,
        case_sensitive: bool = False,
        filters: Collection[str] = (),
        sort: str = "id",
        descending: bool = False,
    ) -> np.ndarray:
        """Ids of the tokens matching `search` (in their readable text) and every filter, sorted
        by ``id``, ``length`` (in bytes) or ``bytes`` (byte order). A bad regex raises
        `TokvizError` with the reason."""
        unknown = set(filters) - set(FILTERS)
        if unknown:
            raise TokvizError(f"unknown vocabulary filter {sorted(unknown)[0]!r}; choose from {', '.join(FILTERS)}")
        if sort not in SORT_KEYS:
            raise TokvizError(f"unknown sort key {sort!r}; choose from {', '.join(SORT_KEYS)}")
        mask = np.ones(len(self.ids), dtype=bool)
        if filters:
            need = sum(_BIT[f] for f in filters)
            mask &= (self.flags & need) == need
        if search:
            if use_regex:
                try:
                    pat = regex.compile(search, 0 if case_sensitive else regex.IGNORECASE)
                except (regex.error, OverflowError, RecursionError) as exc:
                    raise TokvizError(f"invalid search regex {search!r}: {exc}") from None
                hit = [pat.search(t) is not None for t in self.texts]
            elif case_sensitive:
                hit = [search in t for t in self.texts]
            else:
                needle = search.casefold()
                hit = [needle in t.casefold() for t in self.texts]
            mask &= np.asarray(hit, dtype=bool)
        rows = np.flatnonzero(mask)
        if sort == "length":
            rows = rows[np.argsort(self.lengths[rows], kind="stable")]
        elif sort == "bytes":
            if self._bytes_order is None:
                order = sorted(range(len(self.tokens)), key=self.tokens.__getitem__)
                self._bytes_order = np.empty(len(order), dtype=np.int64)
                self._bytes_order[order] = np.arange(len(order))
            rows = rows[np.argsort(self._bytes_order[rows], kind="stable")]
        if descending:
            rows = rows[::-1]
        return self.ids[rows]
