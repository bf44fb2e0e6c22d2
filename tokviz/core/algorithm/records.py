"""What a replay of step k shows, for every algorithm: segmentations, merge trees, trace lines.

The records are plain frozen dataclasses so the timeline panel draws BPE, WordPiece, Unigram and
loaded tokenizers the same way; `LoadedMerge` is one step of a merge list any BPE tokenizer gives
(``merge_list``), trained or loaded. The algorithms fill them in (`tokviz.core.bpe.replay`,
`tokviz.core.wordpiece.replay`, `tokviz.core.unigram.replay`, `LoadedTimeline`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

UNK_TOKEN = "[UNK]"  # the unknown token of the vocabulary-based algorithms (WordPiece, Unigram, BPE by chars)


@dataclass(frozen=True, slots=True)
class Segmentation:
    """Tokens of a text at one step; ``fresh`` = indices of tokens made by merge k."""

    text: str
    ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]  # character spans in `text`
    fresh: tuple[int, ...]
    step: int


@dataclass(frozen=True, slots=True)
class TreeNode:
    """A token and (for merged tokens) the two tokens it was made from."""

    id: int
    rank: int | None  # merge rank that made it; None for base units and special tokens
    children: tuple["TreeNode", ...] = ()

    def leaves(self) -> list[int]:
        if not self.children:
            return [self.id]
        return [leaf for c in self.children for leaf in c.leaves()]

    def depth(self) -> int:
        return 1 + max((c.depth() for c in self.children), default=0)


def steps_tree(steps, first: int, token_id: int, *, max_nodes: int = 2000) -> TreeNode:
    """The tree of `token_id` when merge step r (with a ``pair``) made id ``first + r``; other ids
    are leaves, and so is everything past `max_nodes` nodes."""
    budget = [max_nodes]

    def build(i: int) -> TreeNode:
        r = i - first
        budget[0] -= 1
        if not 0 <= r < len(steps) or budget[0] <= 0:
            return TreeNode(i, r if 0 <= r < len(steps) else None)
        a, b = steps[r].pair
        return TreeNode(i, r, (build(a), build(b)))

    try:
        return build(int(token_id))
    finally:
        del build  # a recursive closure is a reference cycle: freed now, not by the collector


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One line of a word trace: the merge that fired (None for the start) and the result."""

    rank: int | None
    pair: tuple[int, int] | None
    id: int | None
    ids: tuple[int, ...]


def segment_pieces(timeline, tokenizer, text: str, k: int) -> Segmentation:
    """Tokens of `text` at step k of a timeline whose tokenizer encodes each chunk on its own
    (WordPiece, Unigram); the tokens step k made (``timeline.new_id_at(k)``) are fresh.

    >>> from tokviz.core.wordpiece.timeline import WordPieceSettings, train_wordpiece
    >>> tl = train_wordpiece(WordPieceSettings(merges=1), texts=["ab ab ab c"])
    >>> seg = segment_pieces(tl, tl.tokenizer(), "ab c", 1)
    >>> [tl.token_forms()[i] for i in seg.ids], seg.fresh
    (['ab', 'c'], (0,))
    """
    enc = tokenizer.encode_ordinary(text, step=k)
    new = timeline.new_id_at(k)
    fresh = () if new is None else tuple(i for i, t in enumerate(enc.ids) if t == new)
    return Segmentation(text, tuple(enc.ids), tuple(enc.spans), fresh, k)


@dataclass(frozen=True, slots=True)
class LoadedMerge:
    """One merge of a loaded tokenizer's timeline (counts are unknown for loaded tokenizers).

    `index` is the position on the merge timeline (step k = merges with index < k), `id` the
    token it forms, `pair` the two ids it joins, or None when no merge forms the token (tiktoken
    can still produce it when a whole chunk equals it).
    """

    index: int
    id: int
    pair: tuple[int, int] | None
    token: bytes
    count: int | None = None  # unknown for loaded tokenizers

    @property
    def rank(self) -> int:
        """The merge index (as `MergeStep.rank`: the merge leading to step rank + 1)."""
        return self.index


@dataclass(frozen=True)
class LatticeView:
    """What explains the words of a loaded Unigram model, as its tokenizer gives it
    (``tok.lattice_view()``): the piece lattice (`PieceLattice`), each piece's score by id, the id
    an unknown edge stands for in a segmentation, `word` as the lattice reads it (normalized, the
    first pre-tokenized word), and whether the normalizer changes a text (then no normalized input
    holds it)."""

    lattice: object
    scores: Sequence[float]
    unk_id: int | None
    model_text: Callable[[str], str]
    changes: Callable[[str], bool]
