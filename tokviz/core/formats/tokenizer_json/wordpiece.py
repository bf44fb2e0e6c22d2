"""Hugging Face's WordPiece model (BERT): greedy longest-match-first with the ``##`` continuation
prefix, through the shared encoder `tokviz.core.wordpiece.greedy`.

A model turns one pre-tokenized word into ``(id, start, end)`` tokens, `start`/`end` being
character positions in the word. At a word's start any vocabulary string may match (one that
begins with ``##`` too, as tokenizers does); after it, only continuation tokens, their prefix taken
off. A word longer than ``max_input_chars_per_word`` or with a position no token matches is one
unknown token. What this leaves out: reading the ``"model"`` object (`models.build_model`).
"""

from __future__ import annotations

from collections.abc import Mapping

from tokviz.core.algorithm.reach import Reason, pipeline_reason
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.errors import ModelFormatError
from tokviz.core.wordpiece.greedy import GreedyMatcher

CACHE_SIZE = 200_000  # words a model keeps the tokens of before its cache starts over
Token = tuple[int, int, int]  # (id, start char, end char) in the word


class WordPieceModel:
    """Greedy longest-match-first WordPiece (BERT)."""

    kind = "WordPiece"
    n_merges = 0

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.max_chars = max_input_chars_per_word
        if unk_token not in self.vocab:
            raise ModelFormatError(f"WordPiece: the unknown token {unk_token!r} is not in the vocabulary")
        self.unk_id = self.vocab[unk_token]
        self._cache: dict[str, tuple[Token, ...]] = {}
        plen = len(self.prefix)
        rest = {t[plen:]: i for t, i in self.vocab.items() if t.startswith(self.prefix) and len(t) > plen}
        self._greedy = GreedyMatcher(self.vocab, rest)

    def tokenize_ids(self, word: str, limit: int = INF_RANK) -> list[int]:
        """The ids of `tokenize` made without spans and not cached (the ids path keeps them)."""
        seg = self._greedy.segment(word, max_chars=self.max_chars)
        return [self.unk_id] if seg is None else seg[0]

    def tokenize(self, word: str, limit: int = INF_RANK) -> tuple[Token, ...]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        seg = self._greedy.segment(word, max_chars=self.max_chars)
        if seg is None:
            result: tuple[Token, ...] = ((self.unk_id, 0, len(word)),)
        else:
            result = tuple([(t, a, b) for t, (a, b) in zip(*seg)])
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[word] = result
        return result

    # -- what the pipeline asks of any model (`HfTokenizer`, `tokviz.core.explain.tokens`) --

    lists_merges = False  # no merge list: greedy matches

    @property
    def continuation_mark(self) -> str:
        """The ``##`` a continuing token's string starts with: not part of its text."""
        return self.prefix

    whole_words = False
    byte_fallback = False
    lattice = None  # no piece lattice (a Unigram model's)

    def unreachable(self, tok, token_id: int) -> Reason | None:
        """Why the pipeline `tok` does not encode a word-start token's string to it (``"split"``,
        ``"normalized"``), or None; continuing tokens (``##ing``) only occur inside words: None."""
        s = tok.token_text(token_id)
        return None if s.startswith(self.prefix) else pipeline_reason(tok, token_id, s)
