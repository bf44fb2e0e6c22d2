"""Hugging Face decoders and post-processors.

Decoders turn token strings back into text exactly as tokenizers' ``decode_chain`` does.
``raw=True`` keeps bytes that are not valid UTF-8 (as lone surrogates, so
``.encode("utf-8", "surrogateescape")`` gives them back) instead of U+FFFD: that is
`decode_bytes`. Supported decoders: ``ByteLevel``, ``ByteFallback``, ``Fuse``, ``Strip``,
``Replace``, ``Metaspace``, ``WordPiece``, ``BPEDecoder``, ``CTC``, ``Sequence``. Post-processors
(special tokens around the text): ``TemplateProcessing``, ``BertProcessing``,
``RobertaProcessing``, ``ByteLevel`` (no tokens) and ``Sequence``.
"""

from __future__ import annotations

from collections.abc import Mapping

import regex

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.tokenizer_json.normalizers import UnsupportedComponent, hf_pattern
from tokviz.core.formats.tokenizer_json.pretokenizers import CHAR_BYTE
from tokviz.core.text.unicode_tables import PinnedPattern

_BYTE_TOKEN = regex.compile(r"<0x(\+[0-9a-fA-F]|[0-9a-fA-F]{2})>")


def _utf8(data: bytes, raw: bool) -> str:
    return data.decode("utf-8", "surrogateescape" if raw else "replace")


class Decoder:
    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        raise NotImplementedError


class SequenceDecoder(Decoder):
    def __init__(self, parts: list[Decoder]) -> None:
        self.parts = parts

    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        for p in self.parts:
            tokens = p(tokens, raw)
        return tokens


class ByteLevelDecoder(Decoder):
    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        data = bytearray()
        for t in tokens:
            try:
                data.extend(CHAR_BYTE[c] for c in t)
            except KeyError:
                data.extend(t.encode("utf-8", "surrogateescape"))
        return [_utf8(bytes(data), raw)]


class ByteFallbackDecoder(Decoder):
    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        out: list[str] = []
        pending = bytearray()

        def flush() -> None:
            if not pending:
                return
            try:
                out.append(bytes(pending).decode("utf-8"))
            except UnicodeDecodeError:
                if raw:
                    out.append(bytes(pending).decode("utf-8", "surrogateescape"))
                else:
                    out.extend(["\ufffd"] * len(pending))
            pending.clear()

        for t in tokens:
            m = _BYTE_TOKEN.fullmatch(t) if len(t) == 6 else None
            if m is not None:
                pending.append(int(m.group(1), 16))
            else:
                flush()
                out.append(t)
        flush()
        return out


class FuseDecoder(Decoder):
    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        return ["".join(tokens)]


class StripDecoder(Decoder):
    def __init__(self, content: str, start: int, stop: int) -> None:
        self.content, self.start, self.stop = content, start, stop

    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        out = []
        for t in tokens:
            a = 0
            while a < min(self.start, len(t)) and t[a] == self.content:
                a += 1
            b = len(t)
            for _ in range(self.stop):
                if b > a and t[b - 1] == self.content:
                    b -= 1
                else:
                    break
            out.append(t[a:b])
        return out


class ReplaceDecoder(Decoder):
    def __init__(self, pattern: PinnedPattern, content: str) -> None:
        self.pattern, self.content = pattern, content

    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        if self.pattern.literal is not None:
            return [t.replace(self.pattern.literal, self.content) for t in tokens]
        return [self.pattern.sub(lambda m: self.content, t) for t in tokens]


class MetaspaceDecoder(Decoder):
    def __init__(self, replacement: str = "\u2581", prepend: bool = True) -> None:
        self.replacement, self.prepend = replacement, prepend

    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        out = []
        for i, t in enumerate(tokens):
            out.append(t.replace(self.replacement, "" if i == 0 and self.prepend else " "))
        return out


_CLEANUP = [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
            (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]


def cleanup(text: str) -> str:
    for a, b in _CLEANUP:
        text = text.replace(a, b)
    return text


class WordPieceDecoder(Decoder):
    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix, self.cleanup = prefix, cleanup

    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        out = []
        for i, t in enumerate(tokens):
            if i:
                t = t.replace(self.prefix, "", 1) if t.startswith(self.prefix) else " " + t
            out.append(cleanup(t) if self.cleanup else t)
        return out


class CtcDecoder(Decoder):
    """Speech models' CTC output: repeats collapse, the pad token goes, the word delimiter is a space."""

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad, self.delimiter, self.cleanup = pad_token, word_delimiter_token, cleanup

    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        out = []
        for k, t in enumerate(tokens):
            if k and t == tokens[k - 1]:
                continue
            t = t.replace(self.pad, "") if self.pad else t
            if self.cleanup:
                t = cleanup(t).replace(self.delimiter, " ") if self.delimiter else cleanup(t)
            if t:
                out.append(t)
        return out


class BpeSuffixDecoder(Decoder):
    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def __call__(self, tokens: list[str], raw: bool) -> list[str]:
        n = len(tokens)
        return [t.replace(self.suffix, "" if i == n - 1 else " ") for i, t in enumerate(tokens)]


def build_decoder(d: Mapping | None) -> Decoder | None:
    if d is None:
        return None
    t = d.get("type")
    if t == "Sequence":
        return SequenceDecoder([x for x in map(build_decoder, d.get("decoders", [])) if x])
    if t == "ByteLevel":
        return ByteLevelDecoder()
    if t == "ByteFallback":
        return ByteFallbackDecoder()
    if t == "Fuse":
        return FuseDecoder()
    if t == "Strip":
        return StripDecoder(d.get("content", " "), int(d.get("start", 0)), int(d.get("stop", 0)))
    if t == "Replace":
        return ReplaceDecoder(hf_pattern(d.get("pattern"), "Replace decoder"), d.get("content", ""))
    if t == "Metaspace":
        scheme = d.get("prepend_scheme")
        prepend = scheme != "never" if scheme is not None else d.get("add_prefix_space", True)
        return MetaspaceDecoder(d.get("replacement", "\u2581"), prepend)
    if t == "WordPiece":
        return WordPieceDecoder(d.get("prefix", "##"), d.get("cleanup", True))
    if t == "BPEDecoder":
        return BpeSuffixDecoder(d.get("suffix", "</w>"))
    if t == "CTC":
        return CtcDecoder(d.get("pad_token", "<pad>"), d.get("word_delimiter_token", "|"), d.get("cleanup", True))
    raise UnsupportedComponent(
        f"unsupported decoder {t!r}; tokviz runs ByteLevel, ByteFallback, Fuse, Strip, Replace, "
        f"Metaspace, WordPiece, BPEDecoder, CTC and Sequence"
    )


# -- post-processors -------------------------------------------------------------------------------


class PostProcessor:
    """Special tokens put before and after the text of a single sequence; `trim` is
    ``(add_prefix_space,)`` when it trims the spaces off token offsets (ByteLevel, Roberta
    ``trim_offsets``), else None (ids do not change, only the offsets tokenizers reports)."""

    def __init__(self, before: list[int], after: list[int], *, trim: tuple[bool] | None = None) -> None:
        self.before, self.after, self.trim = before, after, trim


def _trim(d: Mapping) -> tuple[bool] | None:
    """ByteLevel's and RobertaProcessing's ``trim_offsets`` (both on by default)."""
    return (bool(d.get("add_prefix_space", True)),) if d.get("trim_offsets", True) else None


def _template_ids(d: Mapping) -> PostProcessor:
    specials = d.get("special_tokens", {})
    before: list[int] = []
    after: list[int] = []
    seen_sequence = False
    for piece in d.get("single", []):
        if "Sequence" in piece:
            if seen_sequence:
                raise UnsupportedComponent("TemplateProcessing with the sequence twice")
            seen_sequence = True
        elif "SpecialToken" in piece:
            name = piece["SpecialToken"]["id"]
            try:
                ids = list(specials[name]["ids"])
            except KeyError:
                raise ModelFormatError(f"TemplateProcessing: special token {name!r} has no ids") from None
            (after if seen_sequence else before).extend(ids)
        else:
            raise UnsupportedComponent(f"TemplateProcessing piece {piece!r}")
    return PostProcessor(before, after)


def build_post_processor(d: Mapping | None) -> PostProcessor | None:
    if d is None:
        return None
    t = d.get("type")
    if t == "TemplateProcessing":
        return _template_ids(d)
    if t in ("BertProcessing", "RobertaProcessing"):
        try:
            return PostProcessor([int(d["cls"][1])], [int(d["sep"][1])],
                                 trim=_trim(d) if t == "RobertaProcessing" else None)
        except (KeyError, IndexError, TypeError, ValueError):
            raise ModelFormatError(f"{t}: needs cls and sep as [token, id]") from None
    if t == "ByteLevel":
        return PostProcessor([], [], trim=_trim(d))
    if t == "Sequence":
        before: list[int] = []
        after: list[int] = []
        trim = None
        for p in map(build_post_processor, d.get("processors", [])):
            if p is not None:
                before, after, trim = p.before + before, after + p.after, trim or p.trim
        return PostProcessor(before, after, trim=trim)
    raise UnsupportedComponent(
        f"unsupported post-processor {t!r}; tokviz runs TemplateProcessing, BertProcessing, "
        f"RobertaProcessing, ByteLevel and Sequence"
    )
