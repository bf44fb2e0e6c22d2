"""Tokens as bytes and text: UTF-8 byte runs to character spans, id checks against a vocabulary,
split patterns translated for Python's `re` (`python_pattern`, `VETTED_PATTERNS`), a token shown
as text. Shared by every byte-level tokenizer; knows no file format and no algorithm.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tokviz.core.errors import EncodeError


def utf8_len(c: str) -> int:
    o = ord(c)
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


def byte_char_spans(chunk: str, lengths: Iterable[int], start: int) -> list[tuple[int, int]]:
    """Character spans of consecutive byte runs of `chunk` (UTF-8), shifted by `start`.

    A run holding part of a character gets the span of the whole character, so two halves of an
    emoji share one span.

    >>> byte_char_spans("h\u00e9", [1, 1, 1], 10)
    [(10, 11), (11, 12), (11, 12)]
    """
    spans = []
    pos = 0
    if chunk.isascii():
        for n in lengths:
            spans.append((start + pos, start + pos + n))
            pos += n
        return spans
    char_of_byte: list[int] = []
    for ci, c in enumerate(chunk):
        char_of_byte.extend([ci] * utf8_len(c))
    n_bytes, n_chars = len(char_of_byte), len(chunk)
    for n in lengths:
        end = pos + n
        a = char_of_byte[pos] if pos < n_bytes else n_chars
        b = char_of_byte[end - 1] + 1 if 0 < end <= n_bytes else n_chars
        spans.append((start + a, start + max(a, b)))
        pos = end
    return spans


def check_ids(ids: Sequence[int], vocab: Sequence[bytes | None]) -> None:
    n = len(vocab)
    for i in ids:
        if not isinstance(i, int) or not 0 <= i < n or vocab[i] is None:
            raise EncodeError(f"id {i!r} is not in the vocabulary (valid ids: 0..{n - 1})")


# Published pre-tokenizer patterns, as tokenizer.json files write them, known to match in linear time
# (no nested quantifier, no quantified alternation whose branches overlap): DeepSeek V3's three
# Split patterns. A file's pattern equal to one of these may run on Python's faster `re` for ASCII
# text, which has no time limit; any other pattern from a file runs on `regex` with one
# (`tokviz.core.text.pattern_limits`). Tested on runs of one character in a child with a CPU limit.
VETTED_PATTERNS = frozenset({
    "\\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
})


def python_pattern(pattern: str) -> str:
    """A Rust (tiktoken) / Oniguruma pattern for Python's `regex`: ``$`` becomes ``\\Z``.

    In Rust's regex, ``$`` without the multi-line flag means end of text; in Python it also
    matches before a final newline. An escaped ``$`` and one inside a class stay as they are.

    >>> print(python_pattern("x+$|[$]"))
    x+\\Z|[$]
    """
    out = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a leading ] is a literal
                out.append("]")
                i += 1
            continue
        elif c == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def display_token(data: bytes) -> str:
    """A token's bytes as readable text: invalid UTF-8 bytes as ``\\xNN``."""
    return data.decode("utf-8", errors="backslashreplace")
