"""`ChunkedTokenizer`: the encode/decode grid of every tokenizer that cuts text into chunks and
encodes each chunk on its own, written once.

A tokenizer of this kind (trained BPE, WordPiece, Unigram) has a `Splitter` (``splitter``), its
special tokens (``special_tokens``: text -> id), an unknown id or None (``unk_id``) and the bytes
form of every id (``_id_bytes``: a list, id -> bytes). It implements two things:

- ``_step_key(step) -> int``: the step clamped to what the model has (the chunk caches' key);
- ``_encode_chunk(chunk, key) -> (ids, spans)``: one chunk's ids, with character spans relative
  to the chunk's start, not cached.

This base does the rest: per-step chunk caches (bounded), `Encoding` assembly with character
spans, unknown and dropped text, tiktoken's allowed/disallowed rules for special tokens
(`encode`), the fast ids path (`encode_ids`), and the decode grid from ``decode_tokens_bytes``
(`decode_bytes`, `decode`, `decode_with_offsets`), so ``b"".join(decode_tokens_bytes(ids)) ==
decode_bytes(ids)`` for every tokenizer.

    >>> from tokviz.core.text.split import parse_split
    >>> class Letters(ChunkedTokenizer):
    ...     def __init__(self):
    ...         self.splitter, self.special_tokens, self.unk_id = parse_split("whitespace"), {"<s>": 26}, None
    ...         self._id_bytes, self._caches = [bytes([97 + i]) for i in range(26)] + [b"<s>"], {}
    ...     def _step_key(self, step): return 0
    ...     def _encode_chunk(self, chunk, key):
    ...         return tuple(ord(c) - 97 for c in chunk), tuple((i, i + 1) for i in range(len(chunk)))
    ...     def decode_tokens_bytes(self, ids): return [self._id_bytes[i] for i in ids]
    >>> e = Letters().encode("ab <s>c", allowed_special="all")
    >>> e.ids, e.spans
    ([0, 1, 26, 2], [(0, 1), (1, 2), (3, 6), (6, 7)])
    >>> Letters().decode_with_offsets([0, 1, 26])
    ('ab<s>', [0, 1, 2])

What this leaves out: the algorithms (how a chunk becomes ids) and the tokenizers loaded from
other formats, whose batched paths are their own (`tokviz.core.formats`, `tokviz.core.bpe.ranked`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tokviz.core.encoding import Encoding, encode_with_specials, offsets_of, uncovered
from tokviz.core.text.split import Splitter
from tokviz.core.text.surrogates import surrogate_safe

from .defaults import TokenizerDefaults
from .reach import Reason, text_reason

CACHE_STEPS = 6  # how many steps keep a chunk cache
CACHE_SIZE = 200_000  # entries per cache before it is cleared

ChunkResult = tuple[tuple[int, ...], tuple[tuple[int, int], ...]]  # (ids, spans in the chunk)


@surrogate_safe
class ChunkedTokenizer(TokenizerDefaults):
    """The shared grid; see the module docstring. Text with lone surrogates is repaired as
    tiktoken does before any encode (`surrogate_safe`)."""

    splitter: Splitter
    special_tokens: dict[str, int]
    unk_id: int | None
    _id_bytes: list[bytes]
    _caches: dict[int, dict[str, ChunkResult]]

    ids_by_merge_rank = False  # the Tokenizer protocol's capabilities (tokviz.core.algorithm.protocol)
    takes_processes = one_off_paths = ranks_merges = False

    def unreachable(self, token_id: int) -> Reason | None:
        return text_reason(self, token_id)

    def lattice_view(self) -> None:
        return None  # a Unigram model trained here is explained by its timeline

    # -- to implement -------------------------------------------------------------------------

    def _step_key(self, step: int | None) -> int:
        """The clamped step (the cache key)."""
        raise NotImplementedError

    def _encode_chunk(self, chunk: str, key: int) -> ChunkResult:
        raise NotImplementedError

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """What each token contributes to `decode_bytes` (the parts join to the whole)."""
        raise NotImplementedError

    # -- chunks -------------------------------------------------------------------------------

    def chunks(self, text: str) -> list[str]:
        """The pre-tokenizer chunks of `text` (what the algorithm runs on, one at a time)."""
        return self.splitter.chunks(text)

    def _cache(self, key: int) -> dict[str, ChunkResult]:
        cache = self._caches.get(key)
        if cache is None or len(cache) > CACHE_SIZE:
            if cache is None and len(self._caches) >= CACHE_STEPS:
                del self._caches[next(iter(self._caches))]
            cache = self._caches[key] = {}
        return cache

    def _chunk(self, chunk: str, key: int) -> ChunkResult:
        """`_encode_chunk`, cached per step."""
        cache = self._cache(key)
        hit = cache.get(chunk)
        if hit is None:
            hit = cache[chunk] = self._encode_chunk(chunk, key)
        return hit

    # -- encoding -----------------------------------------------------------------------------

    def _encode_text(self, text: str, offset: int, key: int, out: Encoding) -> None:
        """Append the tokens of ordinary text (no specials) starting at `offset` to `out`."""
        cache = self._cache(key)
        ids, tokens, spans = out.ids, out.tokens, out.spans
        id_bytes, unk = self._id_bytes, self.unk_id
        chunk_spans = self.splitter.spans(text)
        for a, b in chunk_spans:
            chunk = text[a:b]
            hit = cache.get(chunk)
            if hit is None:
                hit = cache[chunk] = self._encode_chunk(chunk, key)
            t_ids, rel = hit
            if unk is not None and unk in t_ids:
                first = len(ids)
                out.unknown.extend(first + i for i, t in enumerate(t_ids) if t == unk)
            ids.extend(t_ids)
            tokens.extend([id_bytes[t] for t in t_ids])
            start = offset + a
            spans.extend([(start + x, start + y) for x, y in rel])
        if not self.splitter.lossless:
            out.dropped.extend((offset + x, offset + y) for x, y in uncovered(chunk_spans, len(text)))

    def encode(
        self,
        text: str,
        *,
        step: int | None = None,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = "all",
    ) -> Encoding:
        """Encode `text` with the model at `step` (the finished model by default).

        Special tokens in `allowed_special` ("all" for every one) are encoded as such; any in
        `disallowed_special` ("all" = every special not allowed) found in the text is an error;
        the others are encoded as ordinary text.
        """
        key = self._step_key(step)
        return encode_with_specials(
            text, self.special_tokens, self._id_bytes.__getitem__,
            lambda part, offset, out: self._encode_text(part, offset, key, out),
            allowed_special=allowed_special, disallowed_special=disallowed_special,
        )

    def encode_ordinary(self, text: str, *, step: int | None = None) -> Encoding:
        """Encode `text` treating special-token strings as plain text."""
        out = Encoding([], [], [], [], [], [])
        self._encode_text(text, 0, self._step_key(step), out)
        return out

    def encode_ids(self, text: str, *, step: int | None = None) -> list[int]:
        """Just the ids of `encode_ordinary` (the fast path: no spans, no token bytes)."""
        key = self._step_key(step)
        cache = self._cache(key)
        ids: list[int] = []
        for chunk in self.splitter.chunks(text):
            hit = cache.get(chunk)
            if hit is None:
                hit = cache[chunk] = self._encode_chunk(chunk, key)
            ids.extend(hit[0])
        return ids

    # -- decoding -----------------------------------------------------------------------------

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.decode_tokens_bytes(ids))

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        """The text of `ids` (invalid UTF-8 from partial tokens becomes U+FFFD by default)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """Decoded text and, per token, the character offset where it starts (tiktoken's rule:
        a token starting inside a character points at that character)."""
        return offsets_of(self.decode_tokens_bytes(ids))
