"""Hugging Face pre-tokenizers: cutting normalized text into words, keeping character spans.

Each pre-tokenizer maps a list of `NormStr` pieces to a list of (non-empty) pieces, with HF's
split behaviours (``Removed``, ``Isolated``, ``MergedWithPrevious``, ``MergedWithNext``,
``Contiguous``). Supported: ``ByteLevel``, ``BertPreTokenizer``, ``Whitespace``,
``WhitespaceSplit``, ``Metaspace``, ``Split``, ``Punctuation``, ``Digits``, ``CharDelimiterSplit``,
``Sequence``; others raise `UnsupportedComponent`. What this leaves out: normalizers and models.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from itertools import compress

import regex

from tokviz.core.formats.tokenizer_json.normalizers import (
    Normalizer,
    NormStr,
    UnsupportedComponent,
    hf_pattern,
    per_char_memo,
)
from tokviz.core.text import unicode_tables as ut
from tokviz.core.text.fastsplit import HF_GPT2_PATTERN, FastSplitter
from tokviz.core.text.unicode_tables import PinnedPattern

BEHAVIOURS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (used by byte-level BPE vocabularies)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(
        range(ord("\xae"), ord("\xff") + 1)
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHAR = bytes_to_unicode()
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}


def to_byte_chars(s: str) -> str:
    """``"h\u00e9"`` -> ``"h\u00c3\u00a9"``: each UTF-8 byte as its byte-level character."""
    if s.isascii():
        return s.translate(_ASCII_TABLE)
    return s.encode("utf-8").decode("latin-1").translate(_LATIN1_TABLE)  # (each byte as one character)


_ASCII_TABLE = {b: BYTE_CHAR[b] for b in range(128)}
_LATIN1_TABLE = {b: BYTE_CHAR[b] for b in range(256)}
_BYTE_CHARS = per_char_memo(to_byte_chars)  # one character's byte-level characters, kept


def find_spans(text: str, pattern: PinnedPattern | Callable[[str], bool]) -> list[tuple[int, int, bool]]:
    """``(start, end, is_match)`` pieces covering `text` (HF's ``find_matches``)."""
    if not text:
        return [(0, 0, False)]
    out: list[tuple[int, int, bool]] = []
    prev = 0
    if isinstance(pattern, PinnedPattern):
        it = (m.span() for m in pattern.finditer(text))
    else:
        it = ((i, i + 1) for i in compress(range(len(text)), map(pattern, text)))
    for a, b in it:
        if prev != a:
            out.append((prev, a, False))
        out.append((a, b, True))
        prev = b
    if prev != len(text):
        out.append((prev, len(text), False))
    return out


def split_piece(ns: NormStr, pattern, behaviour: str, invert: bool = False) -> list[NormStr]:
    """HF's ``NormalizedString::split`` (empty pieces are dropped by the caller's rule too)."""
    matches = find_spans(ns.text, pattern)
    if invert:
        matches = [(a, b, not m) for a, b, m in matches]
    if behaviour == "isolated":
        splits = [(a, b, False) for a, b, _ in matches]
    elif behaviour == "removed":
        splits = matches
    else:
        splits = []
        prev = False
        seq = reversed(matches) if behaviour == "merged_with_next" else matches
        for a, b, m in seq:
            if behaviour == "contiguous":
                join = m == prev
            else:
                join = m and not prev
            if join and splits:
                x, y, _ = splits[-1]
                splits[-1] = (a, y, False) if behaviour == "merged_with_next" else (x, b, False)
            else:
                splits.append((a, b, False))
            prev = m
        if behaviour == "merged_with_next":
            splits.reverse()
    return [ns.slice(a, b) for a, b, remove in splits if not remove and b > a]


class PreTokenizer:
    word_map: Callable[[str], str] | None = None  # what the last step does to each word (ByteLevel's)

    @property
    def split_regexes(self) -> tuple[str, ...] | None:
        """The regexes this pre-tokenizer splits with, one after another (each match and the text
        between matches kept), or None when it splits otherwise (naming its family by pattern)."""
        return None

    def __call__(self, pieces: list[NormStr]) -> list[NormStr]:
        raise NotImplementedError

    def split_texts(self, texts: list[str]) -> list[str] | None:
        """The words of `__call__` as plain strings, for the ids path (no spans), or None when this
        pre-tokenizer has no such shortcut (those whose words depend on where the input starts)."""
        return None

    def split_unmapped(self, texts: list[str]) -> list[str] | None:
        """`split_texts` before `word_map` (so a word seen before is known by its text)."""
        return self.split_texts(texts)


class SplitPre(PreTokenizer):
    def __init__(self, pattern, behaviour: str, invert: bool = False) -> None:
        if not isinstance(pattern, PinnedPattern):  # a test of one character: answers kept
            pattern = per_char_memo(pattern)
        self.pattern, self.behaviour, self.invert = pattern, behaviour, invert

    def __call__(self, pieces: list[NormStr]) -> list[NormStr]:
        out = []
        plain = self.behaviour == "isolated" and not self.invert and isinstance(self.pattern, PinnedPattern)
        for p in pieces:
            if plain and p.spans is None:  # the id path: matches and the text between them
                out.extend(isolated_pieces(p, self.pattern))
            else:
                out.extend(split_piece(p, self.pattern, self.behaviour, self.invert))
        return out

    @property
    def split_regexes(self) -> tuple[str, ...] | None:  # type: ignore[override]
        plain = self.behaviour == "isolated" and not self.invert and isinstance(self.pattern, PinnedPattern)
        return (self.pattern.pattern,) if plain and self.pattern.literal is None else None

    def split_texts(self, texts: list[str]) -> list[str] | None:
        if self.invert or self.behaviour not in ("isolated", "removed"):
            return None
        if isinstance(self.pattern, PinnedPattern):
            if self.behaviour != "isolated":
                return None
            isolated = self.pattern.isolated
            return [w for t in texts for w in isolated(t)]
        keep = self.behaviour == "isolated"
        return [t[a:b] for t in texts for a, b in char_bounds(t, self.pattern, keep)]


def char_bounds(text: str, test: Callable[[str], bool], keep: bool) -> list[tuple[int, int]]:
    """``(start, end)`` of the runs of characters `test` rejects, and of each character it
    accepts when `keep` (``isolated``; else they are ``removed``), in order.

    >>> char_bounds("a, b", lambda c: c in ", ", True), char_bounds("a, b", str.isspace, False)
    ([(0, 1), (1, 2), (2, 3), (3, 4)], [(0, 2), (3, 4)])
    """
    out: list[tuple[int, int]] = []
    prev = 0
    for i in compress(range(len(text)), map(test, text)):
        if i > prev:
            out.append((prev, i))
        if keep:
            out.append((i, i + 1))
        prev = i + 1
    if prev < len(text):
        out.append((prev, len(text)))
    return out


def isolated_bounds(text: str, pattern: PinnedPattern) -> list[tuple[int, int]]:
    """``(start, end)`` of the non-empty matches and of the text between them, in order (HF's
    ``isolated`` split behaviour).

    >>> isolated_bounds("ab12c", PinnedPattern("[0-9]"))
    [(0, 2), (2, 3), (3, 4), (4, 5)]
    """
    out: list[tuple[int, int]] = []
    prev = 0
    for m in pattern.finditer(text):
        a, b = m.span()
        if a > prev:
            out.append((prev, a))
        if b > a:
            out.append((a, b))
        prev = b
    if prev < len(text):
        out.append((prev, len(text)))
    return out


def isolated_pieces(ns: NormStr, pattern: PinnedPattern) -> list[NormStr]:
    """`split_piece` with the ``isolated`` behaviour for a piece without spans."""
    text, first = ns.text, ns.first
    return [NormStr(text[a:b], None, first and a == 0) for a, b in isolated_bounds(text, pattern)]


class SequencePre(PreTokenizer):
    def __init__(self, parts: list[PreTokenizer]) -> None:
        self.parts = parts

    def __call__(self, pieces: list[NormStr]) -> list[NormStr]:
        for p in self.parts:
            pieces = p(pieces)
        return pieces

    def split_texts(self, texts: list[str]) -> list[str] | None:
        for p in self.parts:
            texts = p.split_texts(texts)  # type: ignore[assignment]
            if texts is None:
                return None
        return texts

    @property
    def word_map(self) -> Callable[[str], str] | None:  # type: ignore[override]
        return self.parts[-1].word_map if self.parts else None

    @property
    def split_regexes(self) -> tuple[str, ...] | None:  # type: ignore[override]
        out: tuple[str, ...] = ()
        for p in self.parts:
            mine = p.split_regexes
            if mine is None:
                return None
            out += mine
        return out

    def split_unmapped(self, texts: list[str]) -> list[str] | None:
        for k, p in enumerate(self.parts):
            texts = p.split_texts(texts) if k < len(self.parts) - 1 else p.split_unmapped(texts)  # type: ignore[assignment]
            if texts is None:
                return None
        return texts


class BertPre(SequencePre):
    """BertPreTokenizer: whitespace removed, then each punctuation character isolated. On the ids
    path one `re` pattern finds the same words (runs of other characters, single punctuation
    characters), with a bitmap-only class for texts without astral characters."""

    def __init__(self) -> None:
        super().__init__([SplitPre(ut.is_white_space, "removed"), SplitPre(ut.is_bert_punctuation, "isolated")])
        space = "".join(f"\\U{ord(c):08x}" for c in sorted(ut.WHITE_SPACE))
        ascii_punct = "!-/:-@\\[-`{-~"

        def words(high: int) -> re.Pattern:
            punct = ascii_punct + ut.BERT_PUNCTUATION.regex_class(high=high)[1:-1]
            return re.compile(f"[^{space}{punct}]+|[{punct}]")

        self._bmp, self._all = words(0xFFFF), words(0x10FFFF)

    def split_texts(self, texts: list[str]) -> list[str] | None:
        bmp, every = self._bmp.findall, self._all.findall
        return [w for t in texts for w in (bmp(t) if not t or max(t) < "\U00010000" else every(t))]

    def split_unmapped(self, texts: list[str]) -> list[str] | None:
        return self.split_texts(texts)  # (no mapping)


class ByteLevelPre(PreTokenizer):
    """Optional prefix space, GPT-2's split regex, then each byte as its byte-level character."""

    def __init__(self, add_prefix_space: bool = False, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.use_regex = use_regex
        self.regex = PinnedPattern(HF_GPT2_PATTERN, trusted=True)
        self.fast = FastSplitter(HF_GPT2_PATTERN, self.regex)

    def split_only(self, pieces: list[NormStr]) -> list[NormStr]:
        out = []
        for p in pieces:
            if self.add_prefix_space and not p.text.startswith(" "):
                p = p.prepend(" ")
            if self.use_regex and p.spans is None:  # the id path: the pattern matches all text
                out.extend(NormStr(w, None, p.first and k == 0) for k, w in enumerate(self.fast.findall(p.text)))
            elif self.use_regex:
                out.extend(split_piece(p, self.regex, "isolated"))
            elif p.text:
                out.append(p)
        return out

    def __call__(self, pieces: list[NormStr]) -> list[NormStr]:
        return [byte_level(p) for p in self.split_only(pieces)]

    word_map = staticmethod(to_byte_chars)

    @property
    def split_regexes(self) -> tuple[str, ...] | None:  # type: ignore[override]
        if self.add_prefix_space:
            return None
        return (self.regex.pattern,) if self.use_regex else ()

    def split_texts(self, texts: list[str]) -> list[str] | None:
        words = self.split_unmapped(texts)
        return None if words is None else list(map(to_byte_chars, words))

    def split_unmapped(self, texts: list[str]) -> list[str] | None:
        if self.add_prefix_space:
            return None
        if self.use_regex:
            return [w for t in texts for w in self.fast.findall(t) if w]
        return [t for t in texts if t]


def byte_level(p: NormStr) -> NormStr:
    if p.spans is None or p.text.isascii():  # ASCII: one byte-level character per character
        return NormStr(to_byte_chars(p.text), p.spans, p.first)
    return p.map_chars(_BYTE_CHARS)


class ByteLevelNormalizer(Normalizer):
    """The ``ByteLevel`` normalizer: each byte as its byte-level character, as the pre-tokenizer
    maps them but over the whole text (each character's bytes keep its span)."""

    def __call__(self, ns: NormStr) -> NormStr:
        return byte_level(ns)


class MetaspacePre(PreTokenizer):
    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        self.replacement, self.scheme, self.split = replacement, prepend_scheme, split

    def __call__(self, pieces: list[NormStr]) -> list[NormStr]:
        out = []
        rep = self.replacement
        for p in pieces:
            p = p.map_chars(lambda c: rep if c == " " else c) if " " in p.text else p
            if not p.text.startswith(rep) and (self.scheme == "always" or (self.scheme == "first" and p.first)):
                p = p.prepend(rep)
            if self.split:
                out.extend(split_piece(p, lambda c: c == rep, "merged_with_next"))
            elif p.text:
                out.append(p)
        return out

    def split_texts(self, texts: list[str]) -> list[str] | None:
        """`__call__`'s words as strings; None for the ``first`` scheme (it depends on where the
        input starts) and a replacement that is not one character (it never matches one)."""
        rep = self.replacement
        if self.scheme == "first" or len(rep) != 1:
            return None
        always = self.scheme == "always"
        words = self._words()
        out: list[str] = []
        for t in texts:
            if " " in t:
                t = t.replace(" ", rep)
            if always and not t.startswith(rep):
                t = rep + t
            if self.split:
                out.extend(words(t))
            elif t:
                out.append(t)
        return out

    def _words(self):
        """findall of the pieces ``merged_with_next`` makes: each replacement starts a word."""
        if self._split_words is None:
            r = regex.escape(self.replacement)
            self._split_words = regex.compile(f"[^{r}]+|{r}[^{r}]*").findall
        return self._split_words

    _split_words = None


def _behaviour(name: str | None, default: str) -> str:
    if name is None:
        return default
    snake = regex.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
    if snake not in BEHAVIOURS:
        raise UnsupportedComponent(f"unknown split behaviour {name!r}")
    return snake


def _is_numeric(c: str) -> bool:
    """Rust's char::is_numeric: category N (Unicode 16)."""
    if c < "\x80":
        return "0" <= c <= "9"
    return _NUMERIC.match(c) is not None and c not in ut.NEW_IN_UNICODE_17


_NUMERIC = regex.compile(r"\p{N}")


def build_pre_tokenizer(d: Mapping | None) -> PreTokenizer | None:
    """The pre-tokenizer of a tokenizer.json ``pre_tokenizer`` entry (None for none)."""
    if d is None:
        return None
    t = d.get("type")
    if t == "Sequence":
        return SequencePre([p for p in map(build_pre_tokenizer, d.get("pretokenizers", [])) if p])
    if t == "ByteLevel":
        return ByteLevelPre(d.get("add_prefix_space", True), d.get("use_regex", True))
    if t == "BertPreTokenizer":
        return BertPre()
    if t == "Whitespace":
        return SplitPre(PinnedPattern(r"\w+|[^\w\s]+", trusted=True), "removed", invert=True)
    if t == "WhitespaceSplit":
        return SplitPre(ut.is_white_space, "removed")
    if t == "CharDelimiterSplit":
        delim = d.get("delimiter", " ")
        return SplitPre(lambda c: c == delim, "removed")
    if t == "Punctuation":
        return SplitPre(ut.is_bert_punctuation, _behaviour(d.get("behavior"), "isolated"))
    if t == "Digits":
        return SplitPre(_is_numeric, "isolated" if d.get("individual_digits") else "contiguous")
    if t == "Metaspace":
        scheme = d.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if d.get("add_prefix_space", True) else "never"
        return MetaspacePre(d.get("replacement", "\u2581"), scheme, d.get("split", True))
    if t == "Split":
        return SplitPre(
            hf_pattern(d.get("pattern"), "Split pre-tokenizer"),
            _behaviour(d.get("behavior"), "isolated"),
            bool(d.get("invert", False)),
        )
    raise UnsupportedComponent(
        f"unsupported pre-tokenizer {t!r}; tokviz runs ByteLevel, BertPreTokenizer, Whitespace, "
        f"WhitespaceSplit, Metaspace, Split, Punctuation, Digits, CharDelimiterSplit and Sequence"
    )
