"""Hugging Face normalizers, with each output character's span in the original text.

`NormStr` is a normalized string plus, per character, the ``(start, end)`` it came from in the
input (HF's ``NormalizedString`` alignments). With ``spans=None`` (the id path) only the text is
computed. Supported: ``BertNormalizer``, ``Lowercase``, ``Strip``, ``StripAccents``, ``NFD``,
``NFKD``, ``NFC``, ``NFKC``, ``Replace`` (string or regex), ``Prepend``, ``Sequence``. Others
(``Precompiled``, ``Nmt``, ...) raise `UnsupportedComponent` naming them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain, repeat

import regex

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.tokenizer_json import (
    case_mapping as cm,  # Lowercase with Rust's newer case tables, as tokenizers
)
from tokviz.core.formats.tokenizer_json import (
    unicode_forms as ud,  # NFD/NFKD/NFC/NFKC with Unicode 9.0's data, as tokenizers
)
from tokviz.core.text import unicode_tables as ut
from tokviz.core.text.unicode_tables import PinnedPattern


class UnsupportedComponent(ModelFormatError):
    """A tokenizer.json component tokviz cannot run (named in the message)."""


@dataclass
class NormStr:
    """Normalized text; `spans[i]` is the input span of `text[i]` (None on the id path)."""

    text: str
    spans: list[tuple[int, int]] | None
    first: bool = True  # the piece starts the input (Metaspace's "first" prepend scheme)

    @classmethod
    def of(cls, text: str, offset: int = 0, *, aligned: bool = True) -> "NormStr":
        spans = [(offset + i, offset + i + 1) for i in range(len(text))] if aligned else None
        return cls(text, spans, offset == 0)

    def map_chars(self, fn: Callable[[str], str]) -> "NormStr":
        """Replace every character by ``fn(c)`` (any length); new characters keep c's span."""
        if self.spans is None:
            return NormStr("".join(map(fn, self.text)), None, self.first)
        mapped = list(map(fn, self.text))
        lengths = list(map(len, mapped))
        if lengths.count(1) == len(lengths):  # one character for one: the spans stay as they are
            return NormStr("".join(mapped), self.spans, self.first)
        spans = list(chain.from_iterable(map(repeat, self.spans, lengths)))  # each span `n` times
        return NormStr("".join(mapped), spans, self.first)

    def replace_matches(self, pattern: PinnedPattern, content: str) -> "NormStr":
        """Replace each match by `content`; its characters get the span of the match's last
        character (as tokenizers aligns them). An empty match inserts `content` (spanning the
        character before it, or an empty span at the start), except right where the previous
        match ended, and empty text stays empty: the matches tokenizers' regex engine finds
        (Python's also finds those empty ones)."""
        if not self.text:
            return self
        if self.spans is None or (pattern.literal is not None and len(pattern.literal) == len(content) == 1):
            # (one character for one: every character keeps its own span)
            if pattern.literal:
                return NormStr(self.text.replace(pattern.literal, content), self.spans, self.first)
            return NormStr(hf_sub(pattern, content, self.text), None, self.first)
        out, spans, pos, last = [], [], 0, -1
        for m in pattern.finditer(self.text):
            a, b = m.span()
            if a == b == last:
                continue
            last = b
            out.append(self.text[pos:a])
            spans.extend(self.spans[pos:a])
            out.append(content)
            # tokenizers aligns the new characters with the match's last character (or, for an
            # empty match, the one before it; an empty span at the start)
            at = self.spans[b - 1] if b else (self.spans[0][0], self.spans[0][0])
            spans.extend([at] * len(content))
            pos = b
        out.append(self.text[pos:])
        spans.extend(self.spans[pos:])
        return NormStr("".join(out), spans, self.first)

    def prepend(self, s: str) -> "NormStr":
        """Add `s` in front; its characters get the span of the first character (as tokenizers'
        ``NormalizedString::prepend`` aligns them), or an empty one for empty text."""
        if self.spans is None:
            return NormStr(s + self.text, None, self.first)
        first = self.spans[0] if self.spans else (0, 0)
        return NormStr(s + self.text, [first] * len(s) + self.spans, self.first)

    def transformed(self, pairs: list[tuple[str, int]]) -> NormStr:
        """The text `pairs` spell (`unicode_forms.changes`), aligned as tokenizers'
        ``NormalizedString::transform`` aligns it: a character that takes the place of an input
        character gets its span, an inserted one the span of the input character before it."""
        src = self.spans
        if src is None:
            return NormStr("".join(c for c, _ in pairs), None, self.first)
        spans, pos = [], 0
        for _, change in pairs:
            if change > 0:
                spans.append(src[pos - 1] if pos else (src[0][0], src[0][0]))
            else:
                spans.append(src[pos])
                pos += 1 - change
        return NormStr("".join(c for c, _ in pairs), spans, self.first)

    def slice(self, a: int, b: int) -> "NormStr":
        spans = None if self.spans is None else self.spans[a:b]
        return NormStr(self.text[a:b], spans, self.first and a == 0)


# -- Unicode helpers -------------------------------------------------------------------------------


def _lower(c: str) -> str:
    return cm.lower_char(c)  # per character: no final-sigma context, as Rust's char::to_lowercase


class _PerCharMemo(dict):
    """A function of one character with its answers kept: a text's characters are mapped by
    C-level dict lookups once seen (encoding many short texts meets the same characters again)."""

    def __init__(self, fn: Callable[[str], str]) -> None:
        super().__init__()
        self.fn = fn

    def __missing__(self, c: str) -> str:
        value = self[c] = self.fn(c)
        return value


def per_char_memo(fn: Callable[[str], object]) -> Callable[[str], object]:
    """`fn` of one character, its answers kept (`fn` must depend on the character alone)."""
    return _PerCharMemo(fn).__getitem__


_BERT_CLEAN = _PerCharMemo(ut.bert_clean).__getitem__
_CHINESE_SPACED = _PerCharMemo(lambda c: f" {c} " if ut.is_chinese_char(c) else c).__getitem__
_LOWER = _PerCharMemo(_lower).__getitem__
_NO_NONSPACING = _PerCharMemo(lambda c: "" if ut.is_nonspacing_mark(c) else c).__getitem__
_NO_MARK = _PerCharMemo(lambda c: "" if ut.is_mark(c) else c).__getitem__


def decompose(ns: NormStr, compat: bool) -> NormStr:
    """NFD / NFKD with spans: decompose each character, then put runs of combining marks in
    canonical order (stable sort by combining class), which is how NFD is defined."""
    form = "NFKD" if compat else "NFD"
    text = ns.text
    if ns.spans is None or text.isascii():
        return NormStr(ud.normalize(form, text), ns.spans, ns.first)
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    one = ud.char_form(form)
    for c, sp in zip(text, ns.spans):
        d = one(c) if ord(c) >= 0x80 else c
        chars.extend(d)
        spans.extend([sp] * len(d))
    i, n = 0, len(chars)
    comb = ud.combining
    while i < n:
        if comb(chars[i]) == 0:
            i += 1
            continue
        j = i
        while j < n and comb(chars[j]):
            j += 1
        if j - i > 1:
            run = sorted(range(i, j), key=lambda k: comb(chars[k]))
            chars[i:j], spans[i:j] = [chars[k] for k in run], [spans[k] for k in run]
        i = j
    return NormStr("".join(chars), spans, ns.first)


def compose(ns: NormStr, compat: bool) -> NormStr:
    """NFC / NFKC. Spans per cluster (a starter and what follows it up to the next starter that
    composes with nothing before it); if clustering would change the result, one span for all."""
    form = "NFKC" if compat else "NFC"
    whole = ud.normalize(form, ns.text)
    if ns.spans is None or ns.text.isascii():
        return NormStr(whole, ns.spans, ns.first)
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    text, src = ns.text, ns.spans
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and (ud.combining(text[j]) or ut.is_mark(text[j]) or 0x1160 <= ord(text[j]) <= 0x11FF):
            j += 1
        part = ud.normalize(form, text[i:j])
        out.append(part)
        spans.extend([(src[i][0], src[j - 1][1])] * len(part))
        i = j
    if "".join(out) != whole:
        all_span = (src[0][0], src[-1][1]) if src else (0, 0)
        return NormStr(whole, [all_span] * len(whole), ns.first)
    return NormStr(whole, spans, ns.first)


class AnyOf:
    """A quick test: does a text hold a character of these ranges? A `re` class, bitmap-only for
    texts without astral characters (a class with astral ranges is tried range by range)."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        def search(high: int):
            parts = [f"\\U{a:08x}-\\U{min(b, high):08x}" for a, b in ranges if a <= high]
            return re.compile("[" + "".join(parts) + "]" if parts else "(?!)").search

        self._bmp, self._all = search(0xFFFF), search(0x10FFFF)

    def holds(self, text: str) -> bool:
        if text.isascii():  # (known without a pass)
            return self._bmp(text) is not None
        return (self._bmp if max(text) < "\U00010000" else self._all)(text) is not None


def _ranges(table: ut.CharTable) -> list[tuple[int, int]]:
    return list(zip(table.starts, table.ends))


# what clean_text may change (control and format characters, whitespace but the space), the
# characters handle_chinese_chars spaces out, the marks BertNormalizer's accent stripping removes
_BERT_CLEANED = [(0, 0x1F), *_ranges(ut.BERT_OTHER), *((ord(c), ord(c)) for c in ut.WHITE_SPACE if c != " ")]
_BERT_CHANGED = {(clean, cjk): AnyOf([*(_BERT_CLEANED if clean else []), *(ut.CJK_RANGES if cjk else [])])
                 for clean in (False, True) for cjk in (False, True)}
_BERT_MARKS = AnyOf(_ranges(ut.BERT_NONSPACING_MARK))


# -- normalizers -----------------------------------------------------------------------------------


class Normalizer:
    def __call__(self, ns: NormStr) -> NormStr:
        raise NotImplementedError

    def as_reference(self, ns: NormStr) -> NormStr:
        """`__call__` with the spans `tokenizers` aligns (they differ where NFC, NFD and their
        compatibility forms compose or reorder: `NormStr.transformed`)."""
        return self(ns)

    def text(self, text: str) -> str:
        """The normalized text alone (the ids path)."""
        return self(NormStr(text, None)).text


class SequenceNormalizer(Normalizer):
    def __init__(self, parts: list[Normalizer]) -> None:
        self.parts = parts

    def __call__(self, ns: NormStr) -> NormStr:
        for p in self.parts:
            ns = p(ns)
        return ns

    def as_reference(self, ns: NormStr) -> NormStr:
        for p in self.parts:
            ns = p.as_reference(ns)
        return ns

    def text(self, text: str) -> str:
        for p in self.parts:
            text = p.text(text)
        return text


class BertNormalizer(Normalizer):
    """Clean control characters, space out CJK ideographs, strip accents, lowercase."""

    def __init__(self, clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True):
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.lowercase = lowercase
        self._changes = _BERT_CHANGED[bool(clean_text), bool(handle_chinese_chars)]
        clean = _BERT_CLEAN if clean_text else None
        spaced = _CHINESE_SPACED if handle_chinese_chars else None
        self._per_char = per_char_memo(lambda c: "".join(map(spaced, clean(c))) if clean and spaced else (clean or spaced)(c))

    def _text(self, text: str) -> str:
        """`__call__` on text alone (the ids path): a pass is skipped when the text holds no
        character it changes."""
        if self._changes.holds(text):
            text = "".join(map(self._per_char, text))
        if self.strip_accents and not text.isascii():
            text = ud.normalize("NFD", text)
            if _BERT_MARKS.holds(text):
                text = "".join(map(_NO_NONSPACING, text))
        if self.lowercase:
            text = cm.lower_text(text) if "\u03a3" not in text else "".join(map(_LOWER, text))
        return text

    def __call__(self, ns: NormStr, *, reference: bool = False) -> NormStr:
        if ns.spans is None:
            return NormStr(self._text(ns.text), None, ns.first)
        if self.clean_text:
            ns = ns.map_chars(_BERT_CLEAN)
        if self.handle_chinese_chars:
            ns = ns.map_chars(_CHINESE_SPACED)
        if self.strip_accents:
            nfd = UnicodeForm("NFD")
            ns = StripAccents(nonspacing_only=True)(nfd.as_reference(ns) if reference else nfd(ns))
        if self.lowercase:
            ns = Lowercase()(ns)
        return ns

    def as_reference(self, ns: NormStr) -> NormStr:
        return self(ns, reference=True)


class Lowercase(Normalizer):
    def __call__(self, ns: NormStr) -> NormStr:
        if ns.spans is None and "\u03a3" not in ns.text:
            return NormStr(cm.lower_text(ns.text), None, ns.first)  # per character but for the final-sigma rule
        return ns.map_chars(_LOWER)


class StripAccents(Normalizer):
    """Remove combining marks (HF applies it after an NFD normalizer). BertNormalizer removes
    only non-spacing marks (Mn); the StripAccents normalizer every mark (M)."""

    def __init__(self, nonspacing_only: bool = False) -> None:
        self.strip = _NO_NONSPACING if nonspacing_only else _NO_MARK

    def __call__(self, ns: NormStr) -> NormStr:
        if ns.text.isascii():
            return ns
        return ns.map_chars(self.strip)


class UnicodeForm(Normalizer):
    def __init__(self, form: str) -> None:
        self.form = form

    def __call__(self, ns: NormStr) -> NormStr:
        compat = self.form.startswith("NFK")
        return decompose(ns, compat) if self.form.endswith("D") else compose(ns, compat)

    def as_reference(self, ns: NormStr) -> NormStr:
        if ns.spans is None or ns.text.isascii():
            return self(ns)
        return ns.transformed(ud.changes(self.form, ns.text))


class Strip(Normalizer):
    def __init__(self, left: bool = True, right: bool = True) -> None:
        self.left, self.right = left, right

    def __call__(self, ns: NormStr) -> NormStr:
        t = ns.text
        a, b = 0, len(t)
        while self.left and a < b and ut.is_white_space(t[a]):
            a += 1
        while self.right and b > a and ut.is_white_space(t[b - 1]):
            b -= 1
        return ns.slice(a, b)


class Replace(Normalizer):
    def __init__(self, pattern: PinnedPattern, content: str) -> None:
        self.pattern, self.content = pattern, content

    def __call__(self, ns: NormStr) -> NormStr:
        return ns.replace_matches(self.pattern, self.content)


class Prepend(Normalizer):
    """Add a prefix to non-empty text (HF leaves empty text alone)."""

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def __call__(self, ns: NormStr) -> NormStr:
        return ns.prepend(self.prepend) if ns.text else ns

    def text(self, text: str) -> str:
        return self.prepend + text if text else text


def hf_sub(pattern: PinnedPattern, content: str, text: str) -> str:
    """`text` with every match of `pattern` replaced by `content`, as tokenizers' regex engine
    finds them: no empty match where the previous match ended (Python's finds one there)."""
    last = -1

    def repl(m) -> str:
        nonlocal last
        a, b = m.span()
        if a == b == last:
            return ""
        last = b
        return content

    return pattern.sub(repl, text)


def hf_pattern(d: object, what: str) -> PinnedPattern:
    """``{"String": "x"}`` or ``{"Regex": "..."}`` as a compiled pattern."""
    if isinstance(d, Mapping) and "String" in d:
        return PinnedPattern.of_literal(str(d["String"]))
    if isinstance(d, Mapping) and "Regex" in d:
        from tokviz.core.text.token_text import VETTED_PATTERNS, python_pattern

        try:
            return PinnedPattern(python_pattern(d["Regex"]), trusted=d["Regex"] in VETTED_PATTERNS)
        except regex.error as exc:
            raise ModelFormatError(f"{what}: invalid regex {d['Regex']!r}: {exc}") from None
    raise ModelFormatError(f"{what}: pattern must be {{'String': ...}} or {{'Regex': ...}}, got {d!r}")


def build_normalizer(d: Mapping | None) -> Normalizer | None:
    """The normalizer of a tokenizer.json ``normalizer`` entry (None for none)."""
    if d is None:
        return None
    t = d.get("type")
    if t == "Sequence":
        return SequenceNormalizer([n for n in map(build_normalizer, d.get("normalizers", [])) if n])
    if t == "BertNormalizer":
        return BertNormalizer(
            d.get("clean_text", True), d.get("handle_chinese_chars", True),
            d.get("strip_accents"), d.get("lowercase", True),
        )
    if t == "Lowercase":
        return Lowercase()
    if t == "StripAccents":
        return StripAccents()
    if t in ("NFD", "NFKD", "NFC", "NFKC"):
        return UnicodeForm(t)
    if t == "Strip":
        return Strip(d.get("strip_left", True), d.get("strip_right", True))
    if t == "Replace":
        return Replace(hf_pattern(d.get("pattern"), "Replace normalizer"), d.get("content", ""))
    if t == "Prepend":
        return Prepend(d.get("prepend", ""))
    raise UnsupportedComponent(
        f"unsupported normalizer {t!r}; tokviz runs BertNormalizer, Lowercase, Strip, "
        f"StripAccents, NFD, NFKD, NFC, NFKC, Replace, Prepend and Sequence"
    )
