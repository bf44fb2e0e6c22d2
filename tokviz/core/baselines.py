"""Baseline tokenizers for comparison with BPE: character-level and word-level, with ``[UNK]``.

Both build their vocabulary from a corpus and fill in the same method grid as every tokenizer
(`tokviz.core.algorithm.protocol.Tokenizer`; ``step`` is accepted and ignored: they have no
timeline, and they know no special tokens), so panels can show them side by side (the classic lesson: a character vocabulary trained on
``the cat sat on the mat`` cannot spell ``flew``; a word vocabulary cannot spell ``cats``).

`CorpusUnits` counts a corpus's characters, words and bytes for them (and for the unit counts of
the token view) slice by slice: one `Counter` over 5 million characters is a single call that holds
the interpreter lock for 0.2 s on an idle machine and far longer on a busy one, and a worker thread
doing that freezes the window that long.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .algorithm.defaults import TokenizerDefaults
from .algorithm.reach import Reason, text_reason
from .algorithm.records import UNK_TOKEN
from .encoding import Encoding, uncovered
from .errors import EncodeError
from .text.split import parse_split
from .text.surrogates import surrogate_safe


@surrogate_safe
class _VocabTokenizer(TokenizerDefaults):
    """Shared decoding for tokenizers whose vocabulary is a list of strings."""

    name = "baseline"
    separator = ""

    ids_by_merge_rank = False  # the Tokenizer protocol's capabilities (tokviz.core.algorithm.protocol)
    takes_processes = one_off_paths = ranks_merges = False

    def unreachable(self, token_id: int) -> Reason | None:
        return text_reason(self, token_id)

    def lattice_view(self) -> None:
        return None

    def __init__(self, pieces: Sequence[str]) -> None:
        self.pieces = [UNK_TOKEN, *pieces]  # id 0 is [UNK]
        self._index = {p: i for i, p in enumerate(self.pieces)}
        self.unk_id = 0

    @property
    def n_vocab(self) -> int:
        return len(self.pieces)

    def token_bytes(self, token_id: int) -> bytes:
        self._check_ids([token_id])
        return self.pieces[token_id].encode("utf-8")

    def vocab(self) -> list[bytes]:
        """Bytes of every id (``[UNK]`` first)."""
        return [p.encode("utf-8") for p in self.pieces]

    def _check_ids(self, ids: Sequence[int]) -> None:
        for i in ids:
            if not isinstance(i, int) or not 0 <= i < len(self.pieces):
                raise EncodeError(f"id {i} is not in the vocabulary (valid ids: 0..{len(self.pieces) - 1})")

    def _spans(self, text: str) -> list[tuple[int, int]]:
        raise NotImplementedError

    def encode(self, text: str, *, step: int | None = None, allowed_special="all", disallowed_special=()) -> Encoding:
        return self._encoding(text, self._spans(text))

    def encode_ordinary(self, text: str, *, step: int | None = None) -> Encoding:
        return self._encoding(text, self._spans(text))

    def encode_ids(self, text: str, *, step: int | None = None) -> list[int]:
        return self._encoding(text, self._spans(text)).ids

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """Each token's text with the separator it is decoded with (words: a space before all but the first)."""
        self._check_ids(ids)
        sep = self.separator
        return [((sep if k else "") + self.pieces[i]).encode("utf-8") for k, i in enumerate(ids)]

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        self._check_ids(ids)
        return self.separator.join(self.pieces[i] for i in ids)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.decode(ids).encode("utf-8")

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """The decoded text and the character offset where each token starts in it."""
        parts = [p.decode("utf-8") for p in self.decode_tokens_bytes(ids)]
        offsets, pos = [], 0
        for k, part in enumerate(parts):
            offsets.append(pos + (len(self.separator) if k else 0))
            pos += len(part)
        return "".join(parts), offsets

    def _encoding(self, text: str, spans: list[tuple[int, int]]) -> Encoding:
        ids = [self._index.get(text[a:b], 0) for a, b in spans]
        return Encoding(
            ids=ids,
            tokens=[self.pieces[i].encode("utf-8") for i in ids],
            spans=spans,
            unknown=[k for k, i in enumerate(ids) if i == 0],
            dropped=uncovered(spans, len(text)),
        )


class CharTokenizer(_VocabTokenizer):
    """One token per character; the vocabulary is the corpus's characters (sorted)."""

    name = "characters"

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> "CharTokenizer":
        return CorpusUnits.count(texts).char_tokenizer()

    def _spans(self, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i in range(len(text))]


class WordTokenizer(_VocabTokenizer):
    """One token per whitespace-separated word; vocabulary by frequency (ties: first seen)."""

    name = "words"
    separator = " "

    def __init__(self, pieces: Sequence[str]) -> None:
        super().__init__(pieces)
        self._splitter = parse_split("whitespace")

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, max_size: int | None = None) -> "WordTokenizer":
        return CorpusUnits.count(texts).word_tokenizer(max_size=max_size)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        return self._splitter.spans(text)


SLICE_CHARS = 1 << 16  # characters counted per call: about a millisecond


def whitespace_slices(text: str, size: int = SLICE_CHARS) -> Iterator[str]:
    """`text` in slices of about `size` characters, each cut just before whitespace, so that
    ``str.split()`` of every slice gives the words of the whole text, in order.

    >>> list(whitespace_slices("one two three", 5))
    ['one two', ' three']
    """
    start, n = 0, len(text)
    while start < n:
        end = start + size
        while end < n and not text[end].isspace():  # to the end of the word being cut
            end += 1
        yield text[start:end]
        start = end


@dataclass
class CorpusUnits:
    """A corpus's characters, whitespace-separated words (both in first-seen order) and the
    counts of its 256 byte values (UTF-8)."""

    chars: Counter
    words: Counter
    byte_counts: list[int]

    @classmethod
    def count(cls, texts: Iterable[str], *, should_stop: Callable[[], bool] | None = None) -> "CorpusUnits":
        """Count `texts` a slice at a time (`whitespace_slices`); `should_stop()` is asked between
        slices (raise from it to stop).

        >>> u = CorpusUnits.count(["the cat", " the hat"])
        >>> u.words.most_common(1), u.chars["t"], u.byte_counts[ord("h")]
        ([('the', 2)], 4, 3)
        """
        chars: Counter = Counter()
        words: Counter = Counter()
        byte_counts = np.zeros(256, dtype=np.int64)
        for text in texts:
            for piece in whitespace_slices(text):
                if should_stop is not None:
                    should_stop()
                chars.update(piece)
                words.update(piece.split())
                byte_counts += np.bincount(np.frombuffer(piece.encode("utf-8", "surrogatepass"), np.uint8),
                                           minlength=256)
        return cls(chars, words, byte_counts.tolist())

    def char_tokenizer(self) -> CharTokenizer:
        return CharTokenizer(sorted(self.chars))

    def word_tokenizer(self, *, max_size: int | None = None) -> WordTokenizer:
        """The most frequent words (at most `max_size` - 1 of them, beside ``[UNK]``; ties: first seen)."""
        top = self.words.most_common(None if max_size is None else max(0, max_size - 1))
        return WordTokenizer([w for w, _ in top])
