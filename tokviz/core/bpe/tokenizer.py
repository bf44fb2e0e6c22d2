"""`BpeTokenizer`: encode and decode with a trained merge list, at any step of its timeline.

Merge rank r creates id ``base_size + r``. Encoding a chunk applies the merges in rank order, each
to every occurrence left to right (exactly what training did), using only ranks below the step
limit: the shared pair-rank loop (`pair_merge`), which joins the lowest rank first, leftmost of
equals. Results are cached per chunk and per step. Method names follow tiktoken's grid: `encode`,
`encode_ordinary`, `decode`, `decode_bytes`, `decode_tokens_bytes`, `decode_with_offsets`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tokviz.core.algorithm.chunked import ChunkedTokenizer
from tokviz.core.algorithm.protocol import StepTimeline as Timeline  # a BPE `Timeline`
from tokviz.core.algorithm.records import UNK_TOKEN, LoadedMerge
from tokviz.core.errors import EncodeError
from tokviz.core.text.split import Splitter, parse_split
from tokviz.core.text.surrogates import surrogate_safe

from .dropout.sampled import MergeListDropout
from .pair_merge import PairMerges, pair_key
from .units import BaseVocab


@dataclass(frozen=True, slots=True)
class ExplainStep:
    """One merge that fired while segmenting a word (`rank` None for the starting units)."""

    rank: int | None
    pair: tuple[int, int] | None
    id: int | None
    ids: tuple[int, ...]  # the segmentation after this merge


def _utf8_len(c: str) -> int:
    o = ord(c)
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


def _extends(prefix: BpeTokenizer | None, base: BaseVocab, merges: list[tuple]) -> int:
    """How many of `merges` `prefix`'s tables hold (its merges begin `merges`, on the same base,
    and no [UNK] or special token of its own sits among them); 0 when it is no prefix."""
    if prefix is None or prefix.base is not base:
        return 0
    n = len(prefix.merges)
    placed = [*prefix.special_tokens.values(), *([] if prefix.unk_id is None else [prefix.unk_id])]
    if n > len(merges) or any(i < prefix.base_size + n for i in placed) or prefix.merges != merges[:n]:
        return 0
    return n


@surrogate_safe
class BpeTokenizer(MergeListDropout, ChunkedTokenizer):
    """A BPE tokenizer from base units, an ordered merge list, a split rule and special tokens."""

    kind = "bpe"  # what made it (the pretrained tokenizers say "tiktoken" or "hf")
    source: str | None = None  # the file it was loaded from, if any

    def __init__(
        self,
        base: BaseVocab,
        merges: Sequence[tuple[int, int]],
        splitter: Splitter,
        *,
        special_tokens: Mapping[str, int] | None = None,
        unk_id: int | None = None,
        name: str = "bpe",
        prefix: BpeTokenizer | None = None,
    ) -> None:
        """`prefix`: a tokenizer of the same base whose merges begin `merges` (a run that moved on);
        its tables are extended for the merges after its own instead of built again."""
        self.base = base
        self.splitter = splitter
        self.name = name
        self.merges = [tuple(m) for m in merges]
        self.base_size = base.size
        self.unk_id = unk_id
        self.special_tokens = dict(special_tokens or {})
        ranks: dict[int, int] = {}
        vocab = base.token_bytes()
        # unit_len: how many input units (bytes, or characters) each id covers
        if base.units == "bytes":
            unit_len = [1] * 256
        else:
            # The end-of-word marker counts as one unit as well: appended last, it lies past the
            # chunk's end and spans are clipped there; a literal marker character covers itself.
            unit_len = [1] * len(base.symbols)
        done = _extends(prefix, base, self.merges)
        if done:  # its base units and merges, before any [UNK] or special token it placed after them
            end = self.base_size + done
            ranks, vocab, unit_len = dict(prefix._pairs.rank_of), prefix._id_bytes[:end], prefix._unit_len[:end]
        for r, (a, b) in enumerate(self.merges[done:], done):
            ranks.setdefault(pair_key(a, b), r)  # a repeated pair keeps its first rank
            vocab.append(vocab[a] + vocab[b])
            unit_len.append(unit_len[a] + unit_len[b])
        self._pairs = PairMerges(ranks, range(self.base_size, self.base_size + len(self.merges)))
        extra = {}
        if unk_id is not None:
            extra[unk_id] = (UNK_TOKEN.encode(), 1)
        for s, i in self.special_tokens.items():
            extra[i] = (s.encode("utf-8"), 0)
        if extra:
            size = max(len(vocab), max(extra) + 1)
            vocab.extend([b""] * (size - len(vocab)))
            unit_len.extend([0] * (size - len(unit_len)))
            for i, (data, n) in extra.items():
                vocab[i], unit_len[i] = data, n
        self._id_bytes = vocab
        self._unit_len = unit_len
        self._index = base.index() if base.units == "chars" else None
        self._caches: dict[int, dict[str, tuple]] = {}

    @classmethod
    def from_timeline(cls, timeline: Timeline, prefix: BpeTokenizer | None = None) -> BpeTokenizer:
        return cls(
            timeline.base,
            timeline.merges(),
            parse_split(timeline.settings.split),
            special_tokens=timeline.special_ids,
            unk_id=timeline.unk_id,
            name="trained",
            prefix=prefix,
        )

    # -- vocabulary -------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return len(self._id_bytes)

    @property
    def n_merges(self) -> int:
        return len(self.merges)

    def token_bytes(self, token_id: int) -> bytes:
        self._check_ids([token_id])
        return self._id_bytes[token_id]

    def vocab(self) -> list[bytes]:
        """Bytes of every id (a copy)."""
        return list(self._id_bytes)

    def is_special(self, token_id: int) -> bool:
        """True for special tokens and ``[UNK]``."""
        return token_id == self.unk_id or token_id in self.special_tokens.values()

    def merge_of(self, token_id: int) -> tuple[int, int] | None:
        """The pair whose merge makes `token_id`, or None for base units and special tokens."""
        k = token_id - self.base_size
        return self.merges[k] if 0 <= k < len(self.merges) else None  # type: ignore[return-value]

    def clamp_step(self, step: int | None) -> int:
        """`step` limited to 0..n_merges (None = all merges): how many merges an encode uses."""
        if step is None:
            return len(self.merges)
        return max(0, min(int(step), len(self.merges)))

    _limit = _step_key = clamp_step

    def encode_chunk(
        self, chunk: str, *, step: int | None = None, cached: bool = True
    ) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
        """Ids and chunk-relative character spans of one pre-tokenized chunk at `step`."""
        limit = self.clamp_step(step)
        return self._chunk(chunk, limit) if cached else self._encode_chunk(chunk, limit)

    # -- encoding ---------------------------------------------------------------------------

    def _encode_chunk(self, chunk: str, limit: int) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
        """(ids, spans relative to the chunk start) for one chunk, not cached."""
        unk = -1 if self.unk_id is None else self.unk_id
        ids = self._pairs.merge(self.base.symbolize(chunk, index=self._index, unk_id=unk), limit)
        return tuple(ids), self._chunk_spans(chunk, ids)

    def unmerge_chunk(self, chunk: str, ids: Sequence[int], limit: int
                      ) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
        """`encode_chunk(chunk, step=limit)` from the chunk's ids at a later step: every token of
        merge rank >= `limit` is split back into its two parts. Exact because encoding applies
        merges in increasing rank order (a merge using a new token always ranks after the merge
        that made it), so the encoding at `limit` is the encoding at any later step stopped
        before its first merge of rank >= `limit`."""
        base, merges, n = self.base_size, self.merges, len(self.merges)
        out: list[int] = []
        stack = list(reversed(ids))
        while stack:
            t = stack.pop()
            r = t - base
            if limit <= r < n:
                a, b = merges[r]
                stack.append(b)
                stack.append(a)
            else:
                out.append(t)
        return tuple(out), self._chunk_spans(chunk, out)

    def _chunk_spans(self, chunk: str, ids: Sequence[int]) -> tuple[tuple[int, int], ...]:
        """Chunk-relative character spans of `ids`, the tokens of `chunk` in order."""
        unit_len = self._unit_len
        n_chars = len(chunk)
        spans = []
        pos = 0
        if self.base.units == "chars" or chunk.isascii():
            for t in ids:
                end = pos + unit_len[t]
                spans.append((min(pos, n_chars), min(end, n_chars)))
                pos = end
        else:
            char_of_byte = []
            for ci, c in enumerate(chunk):
                char_of_byte.extend([ci] * _utf8_len(c))
            n_bytes = len(char_of_byte)
            for t in ids:
                end = pos + unit_len[t]
                start_c = char_of_byte[pos] if pos < n_bytes else n_chars
                end_c = char_of_byte[end - 1] + 1 if end - 1 < n_bytes else n_chars
                spans.append((start_c, max(start_c, end_c)))
                pos = end
        return tuple(spans)

    # -- decoding ---------------------------------------------------------------------------

    def _check_ids(self, ids: Sequence[int]) -> None:
        n = len(self._id_bytes)
        for i in ids:
            if not isinstance(i, int) or not 0 <= i < n or (i >= self.base_size + len(self.merges) and not self._id_bytes[i]):
                raise EncodeError(f"id {i} is not in the vocabulary (valid ids: 0..{n - 1})")

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        self._check_ids(ids)
        return [self._id_bytes[i] for i in ids]


    # -- explaining -------------------------------------------------------------------------

    def explain(self, word: str, *, step: int | None = None) -> list[ExplainStep]:
        """The merges that fire on `word` (one chunk, marker appended), in order.

        The first entry is the starting segmentation; each later one names the merge (rank and
        pair) and the segmentation after it.
        """
        limit = self._limit(step)
        unk = -1 if self.unk_id is None else self.unk_id
        ids = self.base.symbolize(word, index=self._index, unk_id=unk)
        out = [ExplainStep(None, None, None, tuple(ids))]
        for rank, pair, new, after in self._pairs.steps(ids, limit):
            if out[-1].rank == rank:  # one merge joining several places is one step, as in training
                out[-1] = ExplainStep(rank, pair, new, after)
            else:
                out.append(ExplainStep(rank, pair, new, after))
        return out

    ids_by_merge_rank = True  # id base_size + r is made by merge r (the Tokenizer protocol's capability)

    def merge_list(self, **_: object) -> list[LoadedMerge]:
        """The merge timeline in rank order: merge r joins its pair into id ``base_size + r``."""
        vocab = self._id_bytes
        return [LoadedMerge(r, self.base_size + r, tuple(p), vocab[self.base_size + r])  # type: ignore[arg-type]
                for r, p in enumerate(self.merges)]
