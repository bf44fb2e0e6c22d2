"""Encoding a text piece by piece with the tokens of encoding it whole: memory follows the piece.

`encoded_pieces(model, source)` encodes each piece of a `TextSource` (whole lines) and gives its
`TextFacts` and `TokenPositions`, in the piece's own offsets. A piece is not encoded alone: a
tokenizer treats the start of a text specially (SentencePiece's dummy ``▁``, a pattern whose
match would have taken the line break before), so each piece after the first is encoded after
its context, the last line of the piece before (at most `CONTEXT_CHARS`), and only the tokens
after the context are its own. The seam is checked: the context's encoding must end in a token
boundary at the piece's start, its last token must be the previous piece's last token, and no
token may start before the seam and end after it. Where a seam fails the two pieces are encoded
as one (with the first one's context), so the tokens are always those of one encoding of the
text around each seam; for the tokenizers tokviz reads, whose decisions reach no further than a
pre-token, that is the whole text's encoding (the compare tests check it on real files).

What this leaves out: metrics (`metrics`), documents (`run`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain

import numpy as np

from .metrics import TextFacts, text_facts
from .source import StringSource, TextSource
from .tokens import ModelFacts, TokenPositions, byte_exact_start, positions_of

CONTEXT_CHARS = 256  # of the line before a piece, encoded in front of it
# Tokens with spans (not byte-exact tokenizers) are objects: a source's pieces are cut smaller for
# them. On udhr2 (5.7 MB) with Mistral's tokenizer.json, pieces of 2 million characters peaked at
# 1.27 GB and took 12.8 s; of 262,144, 266 MB and 10.6 s (the same tokens).
SPAN_PIECE_CHARS = 1 << 18


@dataclass(frozen=True, eq=False)
class EncodedPiece:
    """A piece of the text at char `offset`: its facts and its tokens (offsets in the piece)."""

    offset: int
    facts: TextFacts
    positions: TokenPositions
    context: str  # what was encoded in front of it


def _context(text: str) -> str:
    """The last line of `text` (with its line break), at most `CONTEXT_CHARS` of it."""
    end = len(text) - 1 if text.endswith("\n") else len(text)
    start = max(text.rfind("\n", 0, end) + 1, len(text) - CONTEXT_CHARS)
    return text[start:]


def _encode_after(model: ModelFacts, context: str, text: str, *, try_bytes: bool,
                  facts_of: Callable[[str], TextFacts] = text_facts) -> tuple[TextFacts, TokenPositions, int | None, bool]:
    """`text` encoded after `context`: its facts (`facts_of`) and tokens, the context's last token
    id (None: no token) and whether the seam is clean (a token boundary at the text's start)."""
    facts = facts_of(text)
    if not context:
        return facts, positions_of(model, text, facts.data, try_bytes=try_bytes), None, True
    cdata = context.encode("utf-8", "surrogatepass")
    both = positions_of(model, context + text, cdata + facts.data, try_bytes=try_bytes)
    cut = len(cdata) if both.in_bytes else len(context)
    j = int(np.searchsorted(both.starts, cut, "left"))
    clean = j == 0 or int(both.ends[:j].max()) <= cut
    last = int(both.ids[j - 1]) if j else None
    mine = TokenPositions(both.ids[j:], both.starts[j:] - cut, both.ends[j:] - cut, both.in_bytes)
    return facts, mine, last, clean


def encoded_pieces(model: ModelFacts, source: TextSource, *,
                   facts_of: Callable[[str], TextFacts] = text_facts) -> Iterator[EncodedPiece]:
    """Each piece of `source` with its tokens (module doc); none for an empty text. `facts_of`
    gives a text's facts (`text.FactsCache`: the pieces' facts shared by the models of a run)."""
    pending: EncodedPiece | None = None  # encoded, given once the seam after it holds
    pieces = source.pieces()
    first = next(pieces, None)
    if first is None:
        return
    try_bytes = byte_exact_start(model, first)
    texts: Iterator[str] = chain((first,), pieces)
    if not try_bytes:
        texts = (t for big in texts for t in StringSource(big, piece_chars=SPAN_PIECE_CHARS).pieces())
    for text in texts:
        if pending is None:
            facts, pos, _, _ = _encode_after(model, "", text, try_bytes=try_bytes, facts_of=facts_of)
            pending = EncodedPiece(0, facts, pos, "")
            continue
        before = pending.facts.text
        context = _context(before)
        facts, pos, last, clean = _encode_after(model, context, text, try_bytes=try_bytes, facts_of=facts_of)
        ids = pending.positions.ids
        if clean and (last is None or (len(ids) and int(ids[-1]) == last)):
            yield pending
            pending = EncodedPiece(pending.offset + len(before), facts, pos, context)
        else:  # the seam moved: one piece
            facts, pos, _, _ = _encode_after(model, pending.context, before + text, try_bytes=try_bytes,
                                                 facts_of=facts_of)
            pending = EncodedPiece(pending.offset, facts, pos, pending.context)
    if pending is not None:
        yield pending
