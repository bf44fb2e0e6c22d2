"""``encode_dropout`` of the tokenizers that run a BPE loop of their own: merge lists
(`BpeTokenizer`: trained BPE, minbpe) and tiktoken's rule (`RankBpeTokenizer`), as the first
bases of those classes. Each chunk of the tokenizer's own pre-tokenization is merged with dropout
(`pair_rank`, `byte_rank`), chunk after chunk from one generator, never through the chunk caches;
special-token text is ordinary text, as in ``encode_ordinary``, which p = 0 returns."""

from __future__ import annotations

import random
from itertools import pairwise

from tokviz.core.encoding import Encoding, uncovered
from tokviz.core.text.surrogates import surrogate_safe
from tokviz.core.text.token_text import byte_char_spans

from .byte_rank import dropout_parts
from .pair_rank import dropout_merge
from .rate import check_rate, make_rng


@surrogate_safe
class MergeListDropout:
    """`encode_dropout` of `BpeTokenizer` (it reads the tokenizer's splitter, base units, merge
    table, unknown id and spans)."""

    drops_merges = True  # the Tokenizer protocol's capability: encode_dropout samples segmentations

    def encode_dropout(self, text: str, *, dropout: float, seed: int | random.Random | None = None,
                       step: int | None = None) -> Encoding:
        """`encode_ordinary` with each merge skipped with probability `dropout` (BPE-dropout),
        the draws from `seed` (a seed or a ``random.Random``)."""
        p = check_rate(dropout)
        if p == 0.0:
            return self.encode_ordinary(text, step=step)
        rng, limit = make_rng(seed), self.clamp_step(step)
        unk = -1 if self.unk_id is None else self.unk_id
        out = Encoding([], [], [], [], [], [])
        id_bytes = self._id_bytes
        chunk_spans = self.splitter.spans(text)
        for a, b in chunk_spans:
            chunk = text[a:b]
            ids = dropout_merge(self._pairs, self.base.symbolize(chunk, index=self._index, unk_id=unk), p, rng, limit)
            if unk in ids:
                out.unknown.extend(len(out.ids) + k for k, t in enumerate(ids) if t == unk)
            out.ids.extend(ids)
            out.tokens.extend(id_bytes[t] for t in ids)
            out.spans.extend((a + x, a + y) for x, y in self._chunk_spans(chunk, ids))
        if not self.splitter.lossless:
            out.dropped.extend(uncovered(chunk_spans, len(text)))
        return out


@surrogate_safe
class ByteRankDropout:
    """`encode_dropout` of `RankBpeTokenizer` (it reads the tokenizer's split pattern, ranks and
    vocabulary)."""

    drops_merges = True

    def encode_dropout(self, text: str, *, dropout: float, seed: int | random.Random | None = None,
                       step: int | None = None) -> Encoding:
        """`encode_ordinary` with each join skipped with probability `dropout` (BPE-dropout)."""
        p = check_rate(dropout)
        if p == 0.0:
            return self.encode_ordinary(text, step=step)
        rng, thr = make_rng(seed), self._threshold(step)
        enc, vocab = self._enc, self._vocab
        out = Encoding([], [], [], [], [], [])
        chunk_spans = []
        for m in self._regex.finditer(text):
            a, b = m.span()
            if a == b:
                continue
            chunk_spans.append((a, b))
            chunk = m.group()
            piece = chunk.encode("utf-8")
            bounds = dropout_parts(enc, piece, p, rng, thr)
            ids = [enc[piece[x:y]] for x, y in pairwise(bounds)]
            out.ids.extend(ids)
            out.tokens.extend(vocab[i] for i in ids)
            out.spans.extend(byte_char_spans(chunk, [y - x for x, y in pairwise(bounds)], a))
        out.dropped.extend(uncovered(chunk_spans, len(text)))
        return out
