"""The encode/decode grid shared by the WordPiece and Unigram tokenizers (`PieceTokenizer`).

Both tokenizers cut text into chunks with a `Splitter` (words, by default) and map each chunk on
its own to pieces of a string vocabulary. A subclass implements two things:

- ``_encode_chunk(chunk, step) -> (ids, spans)``: the ids of one chunk, with character spans
  relative to the chunk start (an ``[UNK]`` covers the characters it stands for);
- ``_surface(token_id, first) -> str``: the text a token contributes when decoding (``first``:
  it is the first token of the decoded sequence).

This base does the rest the same way as `BpeTokenizer`: special tokens (tiktoken's
allowed/disallowed rules), per-step chunk caches, `Encoding` assembly with character spans, id
checks, and the decode grid (`decode`, `decode_bytes`, `decode_tokens_bytes`,
`decode_with_offsets`), where ``b"".join(decode_tokens_bytes(ids)) == decode_bytes(ids)``.

Id layout of both tokenizers: 0 is ``[UNK]``, then the user's special tokens, then the pieces.
What this leaves out: training, and how a piece vocabulary changes from step to step.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tokviz.core.algorithm.records import UNK_TOKEN
from tokviz.core.encoding import Encoding, encode_with_specials, uncovered
from tokviz.core.errors import EncodeError, ModelFormatError
from tokviz.core.text.split import Splitter
from tokviz.core.text.surrogates import surrogate_safe

UNK_ID = 0
_CACHE_STEPS = 6  # how many steps keep a chunk cache
_CACHE_SIZE = 200_000  # entries per cache before it is cleared

ChunkResult = tuple[tuple[int, ...], tuple[tuple[int, int], ...]]  # (ids, spans in the chunk)


@surrogate_safe
class PieceTokenizer:
    """Shared machinery; see the module docstring. `tokens[i]` is the vocabulary form of id i."""

    name = "pieces"

    def __init__(self, tokens: Sequence[bytes], splitter: Splitter, special_tokens: Sequence[str]) -> None:
        self.splitter = splitter
        self._tokens = list(tokens)  # id -> vocabulary form (UTF-8), e.g. b"##ing" or b"\xe2\x96\x81the"
        self.unk_id = UNK_ID
        self.special_tokens = {s: 1 + i for i, s in enumerate(special_tokens)}  # str -> id
        self.n_special = 1 + len(self.special_tokens)
        self._caches: dict[int, dict[str, ChunkResult]] = {}

    # -- to implement -------------------------------------------------------------------------

    def _step_key(self, step: int | None) -> int:
        """The clamped step (the cache key)."""
        raise NotImplementedError

    def _encode_chunk(self, chunk: str, step: int) -> ChunkResult:
        raise NotImplementedError

    def _surface(self, token_id: int, first: bool) -> str:
        raise NotImplementedError

    def n_vocab_at(self, step: int | None = None) -> int:
        """How many ids the vocabulary at `step` uses (ids ``0 .. n - 1``)."""
        raise NotImplementedError

    # -- vocabulary ---------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """Vocabulary size of the finished model (special tokens included)."""
        return self.n_vocab_at(None)

    def token_bytes(self, token_id: int) -> bytes:
        """The vocabulary form of an id (``b"##ing"`` for a WordPiece continuation)."""
        self._check_ids([token_id])
        return self._tokens[token_id]

    def token_str(self, token_id: int) -> str:
        return self.token_bytes(token_id).decode("utf-8")

    def vocab(self, *, step: int | None = None) -> list[bytes]:
        """Vocabulary forms of the ids of the vocabulary at `step` (a copy)."""
        return self._tokens[: self.n_vocab_at(step)]

    def _check_ids(self, ids: Sequence[int]) -> None:
        n = len(self._tokens)
        for i in ids:
            if not isinstance(i, int) or not 0 <= i < n:
                raise EncodeError(f"id {i} is not in the vocabulary (valid ids: 0..{n - 1})")

    # -- encoding -----------------------------------------------------------------------------

    def _cache(self, step: int) -> dict[str, ChunkResult]:
        cache = self._caches.get(step)
        if cache is None or len(cache) > _CACHE_SIZE:
            if cache is None and len(self._caches) >= _CACHE_STEPS:
                del self._caches[next(iter(self._caches))]
            cache = self._caches[step] = {}
        return cache

    def _chunk(self, chunk: str, step: int) -> ChunkResult:
        cache = self._cache(step)
        hit = cache.get(chunk)
        if hit is None:
            hit = cache[chunk] = self._encode_chunk(chunk, step)
        return hit

    def _encode_text(self, text: str, offset: int, step: int, out: Encoding) -> None:
        """Append the tokens of ordinary text (no specials) starting at `offset` to `out`."""
        tokens = self._tokens
        chunk_spans = self.splitter.spans(text)
        for a, b in chunk_spans:
            t_ids, rel = self._chunk(text[a:b], step)
            first = len(out.ids)
            out.unknown.extend(first + i for i, t in enumerate(t_ids) if t == UNK_ID)
            out.ids.extend(t_ids)
            out.tokens.extend([tokens[t] for t in t_ids])
            start = offset + a
            out.spans.extend([(start + x, start + y) for x, y in rel])
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
        """Encode `text` with the vocabulary at `step` (the finished model by default).

        Special tokens in `allowed_special` ("all" for every one) are encoded as such; any in
        `disallowed_special` ("all" = every special not allowed) found in the text is an error;
        the others are encoded as ordinary text.
        """
        key = self._step_key(step)
        return encode_with_specials(
            text, self.special_tokens, self._tokens.__getitem__,
            lambda part, offset, out: self._encode_text(part, offset, key, out),
            allowed_special=allowed_special, disallowed_special=disallowed_special,
        )

    def encode_ordinary(self, text: str, *, step: int | None = None) -> Encoding:
        """Encode `text` treating special-token strings as plain text."""
        out = Encoding([], [], [], [], [], [])
        self._encode_text(text, 0, self._step_key(step), out)
        return out

    def encode_ids(self, text: str, *, step: int | None = None) -> list[int]:
        """Just the ids of `encode_ordinary` (no spans, no token bytes)."""
        key = self._step_key(step)
        ids: list[int] = []
        for chunk in self.splitter.chunks(text):
            ids.extend(self._chunk(chunk, key)[0])
        return ids

    # -- decoding -----------------------------------------------------------------------------

    def _special_surface(self, token_id: int) -> str | None:
        if token_id == UNK_ID:
            return UNK_TOKEN
        if token_id < self.n_special:
            return self._tokens[token_id].decode("utf-8")
        return None

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """What each token contributes to `decode_bytes` (so the parts join to the whole)."""
        self._check_ids(ids)
        return [self._surface(t, i == 0).encode("utf-8") for i, t in enumerate(ids)]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.decode_tokens_bytes(ids))

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        """The text of `ids` (``[UNK]`` decodes to the text ``[UNK]``). `errors` is accepted for
        the same signature as `BpeTokenizer.decode`; pieces are whole characters, so it never
        matters."""
        self._check_ids(ids)
        return "".join(self._surface(t, i == 0) for i, t in enumerate(ids))

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """Decoded text and, per token, the character offset where its part of it starts."""
        self._check_ids(ids)
        parts = [self._surface(t, i == 0) for i, t in enumerate(ids)]
        offsets, n = [], 0
        for p in parts:
            offsets.append(n)
            n += len(p)
        return "".join(parts), offsets


# -- shared by the model files ----------------------------------------------------------------


def check_header(d: object, format_name: str, version: int) -> dict:
    """Check the ``{"format": ..., "version": ...}`` header of a saved model dict; return it."""
    if not isinstance(d, dict) or d.get("format") != format_name:
        raise ModelFormatError(f"not a {format_name} model (no 'format: {format_name}' header)")
    v = d.get("version")
    if not isinstance(v, int) or isinstance(v, bool):
        raise ModelFormatError(f"corrupt {format_name} model: missing format version")
    if v > version:
        raise ModelFormatError(
            f"{format_name} model version {v} is newer than this tokviz reads ({version}); update tokviz"
        )
    if v < 1:
        raise ModelFormatError(f"unknown {format_name} model version {v}")
    return d


def need(cond: bool, what: str) -> None:
    """Raise `ModelFormatError` saying `what` is wrong unless `cond`."""
    if not cond:
        raise ModelFormatError(f"corrupt model: {what}")


def check_specials(special_tokens: Sequence[str]) -> tuple[str, ...]:
    """Validate user special tokens (distinct, non-empty, not ``[UNK]``)."""
    from tokviz.core.errors import SettingsError

    specials = tuple(special_tokens)
    if any(not isinstance(s, str) or not s for s in specials):
        raise SettingsError("a special token cannot be empty")
    if len(set(specials)) != len(specials):
        raise SettingsError("special tokens must be distinct")
    if UNK_TOKEN in specials:
        raise SettingsError(f"{UNK_TOKEN} is always id 0; do not list it as a special token")
    return specials


class PieceLayout:
    """The id layout WordPiece and Unigram timelines share: 0 is ``[UNK]``, then the user's special
    tokens, then the pieces. A subclass has ``settings.special_tokens`` and `token_forms()`."""

    settings: object

    @property
    def n_special(self) -> int:
        return 1 + len(self.settings.special_tokens)

    @property
    def unk_id(self) -> int:
        return UNK_ID

    @property
    def special_ids(self) -> dict[str, int]:
        return {s: 1 + i for i, s in enumerate(self.settings.special_tokens)}

    def token_forms(self) -> list[str]:
        raise NotImplementedError

    def token_bytes(self) -> list[bytes]:
        """`token_forms` as UTF-8 (as `Timeline.token_bytes`)."""
        return [f.encode("utf-8") for f in self.token_forms()]

    def corpus_lines(self) -> list[str]:
        """The corpus half of `describe`: characters -> tokens at the last step, distinct words."""
        lines = []
        before, after = self.corpus_length, self.length_at(self.n_steps)
        if before and after:
            lines.append(f"Corpus: {before:,} characters → {after:,} tokens ({before / after:.2f} chars/token)")
        lines.append(f"{self.n_chunks:,} distinct words")
        return lines
