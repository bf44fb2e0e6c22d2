"""`HfExplaining`: how a tokenizer.json pipeline explains itself, as a mixin of `HfTokenizer`: its
merge list and each token's merge, why a token cannot be reached (its model's check), a Unigram
model's lattice view, and the merges that fire on a word (replayed from the model's own loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokviz.core.algorithm.records import LoadedMerge
from tokviz.core.bpe.tokenizer import ExplainStep

if TYPE_CHECKING:
    from tokviz.core.algorithm.reach import Reason
    from tokviz.core.algorithm.records import LatticeView


class HfExplaining:
    """The explaining half of `HfTokenizer` (it needs ``model``, ``chunks``, ``_limit``,
    ``_bytes_table`` and ``_merge_of`` from the tokenizer)."""

    def merge_list(self, **_: object) -> list[LoadedMerge]:
        """The merge list in rank order (empty for WordPiece)."""
        if not self.model.lists_merges:
            return []
        vocab = self._bytes_table()
        return [
            LoadedMerge(r, new, pair, vocab[new] or b"")
            for r, (pair, new) in enumerate(zip(self.model.merge_pairs, self.model.merge_ids))
        ]

    def merge_of(self, token_id: int) -> tuple[int, int] | None:
        """The (first) merge that forms `token_id`, or None."""
        if not self.model.lists_merges:
            return None
        if self._merge_of is None:
            m: dict[int, tuple[int, int]] = {}
            for pair, new in zip(self.model.merge_pairs, self.model.merge_ids):
                m.setdefault(new, pair)
            self._merge_of = m
        return self._merge_of.get(token_id)

    def unreachable(self, token_id: int) -> Reason | None:
        """Why encoding the token's own string does not give it back: the model's check."""
        return self.model.unreachable(self, token_id)

    def lattice_view(self) -> LatticeView | None:
        """What explains a Unigram model's words (`tokviz.core.explain.unigram`), else None."""
        return None if self.model.lattice is None else self.model.lattice_view(self)

    def explain(self, word: str, *, step: int | None = None) -> list[ExplainStep]:
        """The merges that fire on the words of `word` (normalized and pre-tokenized), in
        order; each entry's `ids` is the whole segmentation after that merge."""
        words = self.chunks(word)
        limit = self._limit(step)
        model = self.model
        if not model.lists_merges:
            ids = tuple(t[0] for w in words for t in model.tokenize(w))
            return [ExplainStep(None, None, None, ids)]
        current = [list(model.start_ids(w)) for w in words]
        out = [ExplainStep(None, None, None, tuple(i for c in current for i in c))]
        for k, w in enumerate(words):
            for rank, pair, new, after in model.trace(w, limit):
                current[k] = list(after)
                out.append(ExplainStep(rank, pair, new, tuple(i for c in current for i in c)))
        return out
