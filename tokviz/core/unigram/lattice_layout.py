"""Where each edge of a word's Unigram lattice is drawn: the numbers behind the lattice view.

A word's lattice (`UnigramExplanation`) has nodes 0..n (the positions between its characters) and
an edge for every piece that matches a stretch of it. The view draws the nodes on a line and each
edge as a bar over the stretch it covers, on a row (`level`) of its own where bars would overlap:
the best path's pieces on row 0 (they never overlap: they tile the word), the others packed
greedily above it, shortest first. A piece of width 0 (a trained model's word-start marker alone)
sits on its node. `path_edges` finds the edges of any segmentation (an n-best one, a sampled one)
so that the view can highlight it.

    >>> from tokviz.core.unigram.tokenizer import LatticeEdge, Segmentation, UnigramExplanation
    >>> edges = (LatticeEdge(0, 1, 3, "a", -2 * 2**20), LatticeEdge(0, 2, 5, "ab", -3 * 2**20),
    ...          LatticeEdge(1, 2, 4, "b", -2 * 2**20))
    >>> best = Segmentation(("ab",), (5,), ((0, 2),), -3 * 2**20, 0.73)
    >>> lay = layout_lattice(UnigramExplanation("ab", edges, best, (best,), -2.69, 2))
    >>> [(e.piece, e.level, e.on_best) for e in lay.edges]
    [('ab', 0, True), ('a', 1, False), ('b', 1, False)]
    >>> lay.best_pieces, lay.best_log_prob
    (('ab',), -3.0)

What this leaves out: painting (`tokviz.panels.lattice`), computing the lattice
(`UnigramTokenizer.explain`, `tokviz.core.explain.unigram.UnigramExplainer.explain`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .tokenizer import Segmentation, UnigramExplanation
from .trainer import SCORE_SCALE

MAX_DRAWN_EDGES = 600  # a long word in a big vocabulary: the best path and the shortest others


@dataclass(frozen=True, slots=True)
class DrawnEdge:
    start: int  # nodes (positions in the word)
    end: int
    id: int  # -1: an unknown character
    piece: str
    log_prob: float  # the piece's score (nat)
    level: int  # row: 0 for the best path, 1, 2, ... above it
    on_best: bool


@dataclass(frozen=True)
class LatticeLayout:
    word: str
    n_nodes: int  # len(word) + 1
    edges: tuple[DrawnEdge, ...]  # best path first (left to right), then by level and start
    n_levels: int
    best_log_prob: float  # log-probability of the best segmentation (sum of its pieces' scores)
    best_prob: float  # its probability among all segmentations of the word
    n_segmentations: int
    hidden: int  # edges left out (beyond MAX_DRAWN_EDGES)

    @property
    def best_path(self) -> tuple[DrawnEdge, ...]:
        return tuple(e for e in self.edges if e.on_best)

    @property
    def best_pieces(self) -> tuple[str, ...]:
        return tuple(e.piece for e in self.best_path)

    def path_edges(self, seg: Segmentation) -> list[int]:
        """Indices into `edges` of the pieces of `seg` (one per piece that is drawn)."""
        where = {(e.start, e.end, e.piece): k for k, e in enumerate(self.edges)}
        keys = ((a, b, p) for (a, b), p in zip(seg.spans, seg.pieces))
        return [where[k] for k in keys if k in where]


def word_at(text: str, start: int, end: int) -> str:
    """The whitespace-delimited word of `text` holding the token at ``text[start:end]`` (its
    leading whitespace skipped: a ``▁word`` token's span may start at the space).

    >>> word_at("the unbelievable story", 3, 7), word_at("the unbelievable story", 9, 12), word_at("  ", 0, 1)
    ('unbelievable', 'unbelievable', '')
    """
    a = start
    while a < min(end, len(text)) and text[a].isspace():
        a += 1
    if a >= len(text) or text[a].isspace():
        return ""
    lo = a
    while lo > 0 and not text[lo - 1].isspace():
        lo -= 1
    hi = a
    while hi < len(text) and not text[hi].isspace():
        hi += 1
    return text[lo:hi]


def _overlaps(a: int, b: int, c: int, d: int) -> bool:
    """Do the stretches [a, b) and [c, d) share a point? (width 0 counts as half a character)"""
    return a < max(d, c + 0.5) and c < max(b, a + 0.5)


def layout_lattice(ex: UnigramExplanation, *, max_edges: int = MAX_DRAWN_EDGES) -> LatticeLayout:
    """The drawing of `ex`'s lattice (see the module docstring)."""
    # an edge is known by its stretch and its piece (a trained model's marker has width 0, so
    # "▁u" and "u" may cover the same stretch of the word)
    best_keys = {(a, b, p) for (a, b), p in zip(ex.best.spans, ex.best.pieces)}
    best, others = [], []
    for e in ex.edges:
        (best if (e.start, e.end, e.piece) in best_keys else others).append(e)
    best.sort(key=lambda e: (e.start, e.end))
    others.sort(key=lambda e: (e.end - e.start, e.start))
    keep = max(0, max_edges - len(best))
    hidden = max(0, len(others) - keep)
    others = others[:keep]
    rows: list[list[tuple[int, int]]] = []
    placed = []
    for e in others:
        for lvl, row in enumerate(rows):
            if not any(_overlaps(e.start, e.end, a, b) for a, b in row):
                row.append((e.start, e.end))
                break
        else:
            lvl = len(rows)
            rows.append([(e.start, e.end)])
        placed.append(DrawnEdge(e.start, e.end, e.id, e.piece, e.score / SCORE_SCALE, lvl + 1, False))
    placed.sort(key=lambda d: (d.level, d.start))
    drawn = [DrawnEdge(e.start, e.end, e.id, e.piece, e.score / SCORE_SCALE, 0, True) for e in best]
    return LatticeLayout(ex.word, len(ex.word) + 1, tuple(drawn + placed), len(rows) + 1,
                         ex.best.log_prob, ex.best.prob, ex.n_segmentations, hidden)
