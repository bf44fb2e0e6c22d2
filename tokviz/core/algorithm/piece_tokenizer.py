"""The vocabulary-based tokenizers WordPiece and Unigram share (`PieceTokenizer`): a string
vocabulary, its id layout and how ids decode.

Both cut text into chunks with a `Splitter` (words, by default) and map each chunk on its own to
pieces of a string vocabulary; the encode/decode grid is `ChunkedTokenizer`'s. A subclass
implements ``_step_key``, ``_encode_chunk`` (see `tokviz.core.algorithm.chunked`), `n_vocab_at`
and ``_surface(token_id, first) -> str``: the text a token contributes when decoding (``first``:
it is the first token of the decoded sequence).

Id layout of both tokenizers: 0 is ``[UNK]``, then the user's special tokens, then the pieces.
What this leaves out: training, and how a piece vocabulary changes from step to step.
"""

from __future__ import annotations

from collections.abc import Sequence

from tokviz.core.algorithm.chunked import ChunkedTokenizer, ChunkResult
from tokviz.core.algorithm.defaults import TimelineDefaults
from tokviz.core.algorithm.records import UNK_TOKEN
from tokviz.core.errors import EncodeError, ModelFormatError
from tokviz.core.text.split import Splitter
from tokviz.core.text.surrogates import surrogate_safe

UNK_ID = 0


@surrogate_safe
class PieceTokenizer(ChunkedTokenizer):
    """Shared machinery; see the module docstring. `tokens[i]` is the vocabulary form of id i."""

    name = "pieces"

    def __init__(self, tokens: Sequence[bytes], splitter: Splitter, special_tokens: Sequence[str]) -> None:
        self.splitter = splitter
        self._id_bytes = list(tokens)  # id -> vocabulary form (UTF-8), e.g. b"##ing" or b"\xe2\x96\x81the"
        self.unk_id = UNK_ID
        self.special_tokens = {s: 1 + i for i, s in enumerate(special_tokens)}  # str -> id
        self.n_special = 1 + len(self.special_tokens)
        self._caches: dict[int, dict[str, ChunkResult]] = {}

    # -- to implement -------------------------------------------------------------------------

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
        return self._id_bytes[token_id]

    def token_str(self, token_id: int) -> str:
        return self.token_bytes(token_id).decode("utf-8")

    def vocab(self, *, step: int | None = None) -> list[bytes]:
        """Vocabulary forms of the ids of the vocabulary at `step` (a copy)."""
        return self._id_bytes[: self.n_vocab_at(step)]

    def _check_ids(self, ids: Sequence[int]) -> None:
        n = len(self._id_bytes)
        for i in ids:
            if not isinstance(i, int) or not 0 <= i < n:
                raise EncodeError(f"id {i} is not in the vocabulary (valid ids: 0..{n - 1})")

    # -- decoding -----------------------------------------------------------------------------

    def _special_surface(self, token_id: int) -> str | None:
        if token_id == UNK_ID:
            return UNK_TOKEN
        if token_id < self.n_special:
            return self._id_bytes[token_id].decode("utf-8")
        return None

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """What each token contributes to `decode_bytes` (``[UNK]`` decodes to the text ``[UNK]``)."""
        self._check_ids(ids)
        return [self._surface(t, i == 0).encode("utf-8") for i, t in enumerate(ids)]


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
    """Validate user special tokens (`check_special_tokens`, and not ``[UNK]``)."""
    from tokviz.core.algorithm.staged import check_special_tokens
    from tokviz.core.errors import SettingsError

    specials = check_special_tokens(special_tokens)
    if UNK_TOKEN in specials:
        raise SettingsError(f"{UNK_TOKEN} is always id 0; do not list it as a special token")
    return specials


class PieceLayout(TimelineDefaults):
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
