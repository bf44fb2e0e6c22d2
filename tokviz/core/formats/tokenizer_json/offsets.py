"""The offsets `tokenizers` reports for a tokenizer.json encoding (``Encoding.offsets``), made from
tokviz's spans.

tokviz keeps one span convention for drawing (a token covering no input has an empty span where it
was inserted; see `tokviz.core.encoding.Encoding`); `tokenizers` differs in three ways, none
changing an id: every token a post-processor inserts is ``(0, 0)``, even the ``[SEP]`` after the
text; a ByteLevel or Roberta post-processor with ``trim_offsets`` moves each offset past the
spaces its token starts or ends with (``Ġworld`` covers ``world``); and where an NFC, NFKC, NFD or
NFKD normalizer composes or reorders characters, tokenizers aligns by position, not by origin
(``e`` + U+0301 composed to ``é`` covers the ``e`` alone, the accent no token), which needs the
text (`HfTokenizer.encode_as_reference`). What it leaves out: the offsets of pairs of sequences
and of ``is_pretokenized`` input (tokviz encodes one text).
"""

from __future__ import annotations

from tokviz.core.encoding import Encoding
from tokviz.core.formats.tokenizer_json.pretokenizers import BYTE_CHAR

_SPACE = BYTE_CHAR[ord(" ")]  # "Ġ": a space in a byte-level token


def hf_offsets(tokenizer, enc: Encoding, text: str | None = None, *, step: int | None = None) -> list[tuple[int, int]]:
    """``tokenizers.Tokenizer.encode(text).offsets`` for `enc`, `tokenizer`'s encoding of `text`
    (at merge `step`). Without `text`, the spans of characters a normalizer composed or
    reordered are tokviz's (each token over all the input its characters came from).

    >>> from tokviz.core.formats.tokenizer_json.decoders import PostProcessor
    >>> class Tok:
    ...     post_processor = PostProcessor([], [], trim=(False,))
    ...     def token_text(self, i): return ["Hello", "Ġworld", "Ġ"][i]
    >>> hf_offsets(Tok(), Encoding([0, 1, 2], [b"Hello", b" world", b" "], [(0, 5), (5, 11), (11, 12)]))
    [(0, 5), (6, 11), (12, 12)]
    """
    inserted = set(enc.inserted)
    spans = enc.spans
    if text is not None and tokenizer.normalizer is not None and not text.isascii():
        spans = _reference_spans(tokenizer, enc, text, step)
    out = [(0, 0) if i in inserted else (a, b) for i, (a, b) in enumerate(spans)]
    pp = tokenizer.post_processor
    if pp is not None and getattr(pp, "trim", None) is not None:
        (add_prefix_space,) = pp.trim
        k = 0  # index among the text's own tokens: the post-processor trims before it inserts
        for i, tid in enumerate(enc.ids):
            if i not in inserted:
                out[i] = _trimmed(tokenizer.token_text(tid), out[i], first=k == 0, add_prefix_space=add_prefix_space)
                k += 1
    return out


def _reference_spans(tokenizer, enc: Encoding, text: str, step: int | None) -> list[tuple[int, int]]:
    """The spans of `text`'s encoding with tokenizers' alignments, encoded as `enc` was (with or
    without added tokens and the post-processor: the one giving `enc`'s ids), else `enc`'s own."""
    for allowed in (None, ()):
        for post in (True, False):
            ref = tokenizer.encode_as_reference(text, step=step, add_special_tokens=post, allowed=allowed)
            if ref.ids == enc.ids:
                return ref.spans
    return enc.spans


def _is_space(c: str) -> bool:
    return c == _SPACE or c.isspace()


def _trimmed(token: str, span: tuple[int, int], *, first: bool, add_prefix_space: bool) -> tuple[int, int]:
    """tokenizers' ``process_offsets``: past the leading spaces, before the trailing ones (counted
    in the token's characters); the one space a prefix-adding pre-tokenizer put before the first
    token is kept."""
    a, b = span
    lead = 0
    while lead < len(token) and _is_space(token[lead]):
        lead += 1
    trail = 0
    while trail < len(token) and _is_space(token[-1 - trail]):
        trail += 1
    if lead:
        if (first or a == 0) and add_prefix_space and lead == 1:
            lead = 0
        a = min(a + lead, b)
    if trail and b >= trail:
        b = max(b - trail, a)
    return a, b
