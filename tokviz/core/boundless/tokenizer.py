"""`BoundlessTokenizer`: BPE inside each pretoken, then supermerges across whole pretokens.

Encoding is two passes, as the paper's inference reduces to when no token is ever deleted: first
each chunk with the ordinary merges (BPE's cached per-chunk encoder), then, over every stretch of
adjacent chunks that each came out as one token, the supermerges in rank order, each left to
right (the shared pair-rank loop, `PairMerges`). A supermerge's parts are always made by earlier
steps, so this equals interleaving both kinds of step by rank. Only steps below the step limit
are used, of either kind.

    >>> from tokviz.core.boundless.timeline import BoundlessSettings, train_boundless
    >>> tl = train_boundless(BoundlessSettings(merges=7), texts=[" of the of the of the"])
    >>> tl.kinds()[4:], tl.tokenizer().encode(" of the").tokens
    (['merge', 'supermerge', 'supermerge'], [b' of the'])

What this leaves out: dropout (`encode_dropout` samples the ordinary merges only).
"""

from __future__ import annotations

from collections.abc import Sequence

from tokviz.core.bpe.pair_merge import PairMerges, pair_key
from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.encoding import Encoding, uncovered
from tokviz.core.text.split import parse_split

NO_PAIR = (-1, -1)  # stands for a supermerge in the per-chunk merge list: no adjacent pair is it


class BoundlessTokenizer(BpeTokenizer):
    """A BPE tokenizer whose merge list also holds supermerges (`kinds[r]` says which)."""

    kind = "boundless"

    def __init__(self, base, steps: Sequence[tuple[tuple[int, int], str]], splitter, *,
                 special_tokens=None, unk_id=None, name: str = "boundless") -> None:
        """`steps`: each step's ``(pair, kind)`` in rank order."""
        pairs = [p for p, _ in steps]
        self.kinds = [k for _, k in steps]
        supers = [r for r, k in enumerate(self.kinds) if k == "supermerge"]
        word_pairs = list(pairs)
        for r in supers:
            word_pairs[r] = NO_PAIR
        super().__init__(base, word_pairs, splitter, special_tokens=special_tokens, unk_id=unk_id, name=name)
        self.merges = [tuple(p) for p in pairs]
        n = self.base_size
        for r in supers:  # the bytes and width of a superword: its two parts'
            a, b = pairs[r]
            self._id_bytes[n + r] = self._id_bytes[a] + self._id_bytes[b]
            self._unit_len[n + r] = self._unit_len[a] + self._unit_len[b]
        ranks: dict[int, int] = {}
        for r in supers:
            ranks.setdefault(pair_key(*pairs[r]), r)
        self._supers = PairMerges(ranks, range(n, n + len(pairs)))
        self._first_super = supers[0] if supers else len(pairs)

    @classmethod
    def from_timeline(cls, timeline) -> BoundlessTokenizer:
        return cls(timeline.base, [(s.pair, s.kind) for s in timeline.steps], parse_split(timeline.settings.split),
                   special_tokens=timeline.special_ids, unk_id=timeline.unk_id, name="trained")

    def is_superword(self, token_id: int) -> bool:
        """True for ids made by a supermerge."""
        r = token_id - self.base_size
        return 0 <= r < len(self.kinds) and self.kinds[r] == "supermerge"

    # -- the second pass ------------------------------------------------------------------------

    def _joined(self, results: list, limit: int, starts: Sequence[int] | None = None) -> tuple[list, list]:
        """The ids of consecutive chunk results after the supermerges below `limit` joined runs
        of one-token chunks, and (when the chunks' `starts` are given) each token's span."""
        ids_out: list[int] = []
        spans: list[tuple[int, int]] = []
        i, n = 0, len(results)
        while i < n:
            ids, rel = results[i]
            if len(ids) != 1:
                ids_out.extend(ids)
                if starts is not None:
                    s0 = starts[i]
                    spans.extend((s0 + x, s0 + y) for x, y in rel)
                i += 1
                continue
            j = i + 1
            while j < n and len(results[j][0]) == 1:
                j += 1
            seq = [results[c][0][0] for c in range(i, j)]
            firsts = list(range(len(seq)))
            seq = self._supers.merge(seq, limit, firsts=firsts)
            ids_out.extend(seq)
            if starts is not None:
                lasts = [f - 1 for f in firsts[1:]] + [j - i - 1]
                for a, b in zip(firsts, lasts):
                    spans.append((starts[i + a] + results[i + a][1][0][0], starts[i + b] + results[i + b][1][0][1]))
            i = j
        return ids_out, spans

    def _encode_text(self, text: str, offset: int, key: int, out: Encoding) -> None:
        if key <= self._first_super:  # no supermerge yet: BPE's path
            super()._encode_text(text, offset, key, out)
            return
        chunk_spans = self.splitter.spans(text)
        results = [self._chunk(text[a:b], key) for a, b in chunk_spans]
        ids, spans = self._joined(results, key, [offset + a for a, _ in chunk_spans])
        unk = self.unk_id
        if unk is not None and unk in ids:
            first = len(out.ids)
            out.unknown.extend(first + i for i, t in enumerate(ids) if t == unk)
        id_bytes = self._id_bytes
        out.ids.extend(ids)
        out.tokens.extend([id_bytes[t] for t in ids])
        out.spans.extend(spans)
        if not self.splitter.lossless:
            out.dropped.extend((offset + x, offset + y) for x, y in uncovered(chunk_spans, len(text)))

    def encode_ids(self, text: str, *, step: int | None = None) -> list[int]:
        key = self._step_key(step)
        if key <= self._first_super:
            return super().encode_ids(text, step=step)
        results = [self._chunk(c, key) for c in self.splitter.chunks(text)]
        return self._joined(results, key)[0]
