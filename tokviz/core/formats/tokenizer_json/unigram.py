"""Hugging Face ``Unigram`` and ``WordLevel`` models (tokenizer.json), run by tokviz's own code.

Unigram follows tokenizers' ``Unigram::tokenize``: the Viterbi of one pre-tokenized word
(`PieceLattice` in f64, scores from zero, every vocabulary entry a piece; an unknown character is
an edge scored ``min score - 10``), consecutive nodes with the unknown id fused into one string
(``fuse_unk``, always on), then each string looked up: a piece's id, else with ``byte_fallback``
its UTF-8 bytes as ``<0xNN>`` tokens (when all exist), else the unknown id. A word with an unknown
character and no ``unk_id`` is an error, as in tokenizers.

WordLevel maps a whole word to its id, else to the unknown token (an error without one).
Both take ``limit`` like the BPE model and ignore it: they have no merges to replay.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tokviz.core.algorithm.reach import Reason, pipeline_reason
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.errors import EncodeError, ModelFormatError
from tokviz.core.formats.tokenizer_json.normalizers import NormStr
from tokviz.core.io.checks import is_count
from tokviz.core.unigram.encoder.lattice import F64, UNK_PENALTY, PieceLattice

if TYPE_CHECKING:
    from tokviz.core.algorithm.records import LatticeView


Token = tuple[int, int, int]  # (id, start char, end char) in the word
_CACHE_SIZE = 200_000


class HfUnigramModel:
    """``HfUnigramModel([(piece, score), ...], unk_id=0, byte_fallback=False)``."""

    kind = "Unigram"
    n_merges = 0
    merge_pairs: list = []

    def __init__(self, vocab: Sequence[tuple[str, float]], *, unk_id: int | None, byte_fallback: bool = False) -> None:
        self.pieces = [p for p, _ in vocab]
        self.scores = [float(s) for _, s in vocab]
        if unk_id is not None and not 0 <= unk_id < len(self.pieces):
            raise ModelFormatError(f"Unigram: unk_id {unk_id} is not in the vocabulary ({len(self.pieces)} pieces)")
        self.vocab = {p: i for i, p in enumerate(self.pieces)}  # a repeated piece keeps its last id
        self.unk_id = unk_id
        self.unk_token = self.pieces[unk_id] if unk_id is not None else None
        self.byte_fallback = byte_fallback
        self.min_score = min(self.scores, default=math.inf)
        self.lattice = PieceLattice(self.pieces, self.scores, mode=F64, unk_id=unk_id,
                                    unk_score=self.min_score - UNK_PENALTY)
        self._byte_ids = [self.vocab.get(f"<0x{b:02X}>") for b in range(256)] if byte_fallback else None
        self._cache: dict[str, tuple[Token, ...]] = {}

    def score(self, token_id: int) -> float:
        return self.scores[token_id]

    def strings(self, word: str) -> list[tuple[int, int, bool]]:
        """(start, end, unknown) of the strings the Viterbi gives `word`, unknowns fused."""
        ids, ends = self.lattice.word_path(word)
        out: list[tuple[int, int, bool]] = []
        start = 0
        unk = self.unk_id
        for i, e in zip(ids, ends):
            is_unk = i < 0 or i == unk
            if is_unk and out and out[-1][2]:
                out[-1] = (out[-1][0], e, True)
            else:
                out.append((start, e, is_unk))
            start = e
        return out

    def tokenize(self, word: str, limit: int = INF_RANK) -> tuple[Token, ...]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        out: list[Token] = []
        vocab = self.vocab
        for a, b, _ in self.strings(word):
            s = word[a:b]
            tid = vocab.get(s)
            if tid is not None:
                out.append((tid, a, b))
                continue
            if self._byte_ids is not None:
                codes = [self._byte_ids[by] for by in s.encode("utf-8")]
                if None not in codes:
                    out.extend((c, a, b) for c in codes)  # type: ignore[misc]
                    continue
            if self.unk_id is None:
                raise EncodeError("an unknown piece, and the Unigram model has no unk_id")
            out.append((self.unk_id, a, b))
        result = tuple(out)
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[word] = result
        return result

    def tokenize_ids(self, word: str, limit: int = INF_RANK) -> list[int]:
        """The ids of `tokenize`."""
        return [t[0] for t in self.tokenize(word, limit)]

    # -- what the pipeline asks of any model (`HfTokenizer`, `tokviz.core.explain.tokens`) --

    lists_merges = False  # no merge list: a Viterbi over `lattice`
    continuation_mark = None
    whole_words = False

    def unreachable(self, tok, token_id: int) -> Reason | None:
        """``"viterbi"`` when the best path through the piece's own string is another segmentation,
        else None (the normalizer's part: `tokviz.core.explain.unigram.unreachable_pieces`)."""
        got = self.tokenize_ids(tok.token_text(token_id))
        return None if got == [token_id] else ("viterbi", tuple(got))

    def lattice_view(self, tok) -> LatticeView:
        """What explains the words of `tok` (this model's pipeline) on the lattice
        (`tokviz.core.explain.unigram`): a word is its first pre-tokenized word."""
        from tokviz.core.algorithm.records import LatticeView

        norm = tok.normalizer
        return LatticeView(self.lattice, self.scores, self.unk_id, lambda word: next(iter(tok.chunks(word)), ""),
                           lambda text: norm is not None and norm(NormStr(text, None)).text != text)


class WordLevelModel:
    """A word -> id table with an unknown token."""

    kind = "WordLevel"
    n_merges = 0
    merge_pairs: list = []
    byte_fallback = False

    def __init__(self, vocab: Mapping[str, int], *, unk_token: str) -> None:
        self.vocab = dict(vocab)
        self.unk_token = unk_token

    def tokenize(self, word: str, limit: int = INF_RANK) -> tuple[Token, ...]:
        if not word:
            return ()
        tid = self.vocab.get(word)
        if tid is None:
            tid = self.vocab.get(self.unk_token)
            if tid is None:
                raise EncodeError(f"the word {word[:40]!r} is not in the vocabulary and the unknown token "
                                  f"{self.unk_token!r} is not either")
        return ((tid, 0, len(word)),)

    def tokenize_ids(self, word: str, limit: int = INF_RANK) -> list[int]:
        """The ids of `tokenize`."""
        return [t[0] for t in self.tokenize(word, limit)]

    # -- what the pipeline asks of any model (`HfTokenizer`, `tokviz.core.explain.tokens`) --

    lists_merges = False  # no merge list: whole words
    continuation_mark = None
    whole_words = True  # one token per pre-tokenized word, or the unknown token
    lattice = None  # no piece lattice (a Unigram model's)

    def unreachable(self, tok, token_id: int) -> Reason | None:
        """Why the pipeline `tok` does not keep the word of token `token_id` whole (``"split"``,
        ``"normalized"``), or None."""
        return pipeline_reason(tok, token_id, tok.token_text(token_id))


def build_unigram(d: Mapping) -> HfUnigramModel:
    vocab = d.get("vocab")
    if not isinstance(vocab, list):
        raise ModelFormatError("Unigram: model.vocab must be a list of [piece, score] pairs")
    pairs = []
    for k, item in enumerate(vocab):
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], (int, float)) and not isinstance(item[1], bool)):
            raise ModelFormatError(f"Unigram: vocabulary entry {k} is not [piece, score]")
        if not math.isfinite(item[1]):
            raise ModelFormatError(f"Unigram: the score of {item[0]!r} is not a finite number")
        pairs.append((item[0], float(item[1])))
    unk = d.get("unk_id")
    if unk is not None and not is_count(unk):
        raise ModelFormatError("Unigram: unk_id must be a whole number >= 0 or null")
    if not pairs and unk is not None:
        raise ModelFormatError("Unigram: the vocabulary is empty but unk_id is set")
    return HfUnigramModel(pairs, unk_id=unk, byte_fallback=bool(d.get("byte_fallback", False)))


def build_word_level(d: Mapping) -> WordLevelModel:
    vocab = d.get("vocab")
    if not isinstance(vocab, Mapping) or not all(isinstance(k, str) for k in vocab):
        raise ModelFormatError("WordLevel: model.vocab must map words to ids")
    unk = d.get("unk_token", "<unk>")
    if not isinstance(unk, str):
        raise ModelFormatError("WordLevel: model.unk_token must be text")
    return WordLevelModel(vocab, unk_token=unk)
