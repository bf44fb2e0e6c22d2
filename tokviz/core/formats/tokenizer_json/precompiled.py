"""The SentencePiece normalizers of tokenizer.json files: ``Precompiled`` and ``Nmt``.

``Precompiled`` carries a SentencePiece charsmap (base64 in ``precompiled_charsmap``, as T5,
XLM-R, mBART, ALBERT files do; read by `CharsMap`) and applies it the way tokenizers does, which
is not SentencePiece's way: the text is cut into extended grapheme clusters; a cluster shorter
than 6 UTF-8 bytes that starts with a key of the map is replaced whole by the replacement of the
*shortest* such key; otherwise each character of the cluster that is a key is replaced. Only
places holding a character that can take part in a key are looked at (`CharsMap.hot`).

Grapheme clusters come from the `regex` module's ``\\X``; a cluster only matters here when it is
shorter than 6 bytes and holds a mapped character, where its Unicode version does not change it.

``Nmt`` drops ASCII control characters and turns a few spaces and format characters into " ".
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

import regex

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.sentencepiece.charsmap import CharsMap
from tokviz.core.formats.tokenizer_json.normalizers import Normalizer, NormStr

_GRAPHEME = regex.compile(r"\X")


class PrecompiledNormalizer(Normalizer):
    """``PrecompiledNormalizer(blob)``; an empty blob normalizes nothing."""

    def __init__(self, blob: bytes) -> None:
        self.charsmap = CharsMap(blob) if blob else None
        if self.charsmap is not None:
            try:
                self.charsmap.strings.decode("utf-8")
            except UnicodeDecodeError:
                raise ModelFormatError("Precompiled: the charsmap's replacements are not UTF-8") from None
            cm = self.charsmap
            self._hot = frozenset(cm.single) | frozenset(cm.continuing)

    def _line(self, text: str, spans: list | None, out: list[str], out_spans: list | None) -> None:
        """Normalize one line; `spans` are its characters' input spans (None on the id path)."""
        cm = self.charsmap
        single = cm.single  # type: ignore[union-attr]
        hot = self._hot
        for m in _GRAPHEME.finditer(text):
            g = m.group()
            a, b = m.span()
            if hot.isdisjoint(g):
                out.append(g)
                if out_spans is not None:
                    out_spans.extend(spans[a:b])  # type: ignore[index]
                continue
            if len(g) == 1 or len(g.encode("utf-8")) < 6:
                norm = cm.first(g)  # type: ignore[union-attr]
                if norm is not None:
                    out.append(norm)
                    if out_spans is not None:
                        out_spans.extend([(spans[a][0], spans[b - 1][1])] * len(norm))  # type: ignore[index]
                    continue
            for k, c in enumerate(g):
                r = single.get(c)
                r = c if r is None else r
                out.append(r)
                if out_spans is not None:
                    out_spans.extend([spans[a + k]] * len(r))  # type: ignore[index]

    def __call__(self, ns: NormStr) -> NormStr:
        if self.charsmap is None or self._hot.isdisjoint(ns.text):
            return ns
        spans = ns.spans
        out: list[str] = []
        out_spans: list | None = [] if spans is not None else None
        pos = 0
        hot = self._hot
        # a line break is a grapheme cluster of its own (CR LF one cluster): lines without
        # mapped characters are copied, and a line whose break alone is mapped (the charsmap
        # maps "\n") is copied up to it
        for line in ns.text.splitlines(keepends=True):
            end = pos + len(line)
            sub = spans[pos:end] if spans is not None else None
            if hot.isdisjoint(line):
                out.append(line)
                if out_spans is not None:
                    out_spans.extend(sub)  # type: ignore[arg-type]
            else:
                cut = len(line) - _break_length(line)
                if cut < len(line) and hot.isdisjoint(line[:cut]):
                    out.append(line[:cut])
                    if out_spans is not None:
                        out_spans.extend(sub[:cut])  # type: ignore[index]
                    self._line(line[cut:], sub[cut:] if sub is not None else None, out, out_spans)
                else:
                    self._line(line, sub, out, out_spans)
            pos = end
        return NormStr("".join(out), out_spans, ns.first)


_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")  # what splitlines cuts after


def _break_length(line: str) -> int:
    """The length of the line break ending `line` (as `str.splitlines` keeps it): 0, 1 or 2."""
    if line.endswith("\r\n"):
        return 2
    return 1 if line and line[-1] in _LINE_BREAKS else 0


_NMT_DROP = {c: None for c in [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]}
_NMT_SPACE = {c: " " for c in [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581,
                               0xFEFF, 0xFFFD]}
_NMT_TABLE = {**_NMT_DROP, **_NMT_SPACE}


class NmtNormalizer(Normalizer):
    def __call__(self, ns: NormStr) -> NormStr:
        if ns.spans is None:
            return NormStr(ns.text.translate(_NMT_TABLE), None, ns.first)
        return ns.map_chars(lambda c: c.translate(_NMT_TABLE))


def build_precompiled(d: Mapping) -> Normalizer:
    """The ``Precompiled`` and ``Nmt`` entries of a tokenizer.json ``normalizer``."""
    if d.get("type") == "Nmt":
        return NmtNormalizer()
    raw = d.get("precompiled_charsmap")
    if raw is None or raw == "":
        return PrecompiledNormalizer(b"")
    if not isinstance(raw, str):
        raise ModelFormatError("Precompiled: precompiled_charsmap must be base64 text")
    try:
        blob = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise ModelFormatError("Precompiled: precompiled_charsmap is not valid base64") from None
    return PrecompiledNormalizer(blob)
