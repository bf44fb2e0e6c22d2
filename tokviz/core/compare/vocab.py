"""Two vocabularies side by side: shared tokens (by bytes), tokens only in one, their overlap.

`vocabulary_at(timeline, step)` is ``{token bytes: id}`` of the vocabulary at a step (for timelines
that list merges, the tokens later merges make are left out; other timelines give their finished
vocabulary). `compare_vocabularies` lines two of them up: the shared tokens with their id and
merge rank in each (the step that made them; None for base units and specials), the tokens only
in A or only in B, the Jaccard overlap of the two sets, and a histogram of token lengths (in
bytes) for each. What this leaves out: drawing, and the metrics of encoding a text (`run`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class VocabToken:
    """A token of A or B or both: its bytes, id and merge rank in each (None where absent)."""

    data: bytes
    id_a: int | None = None
    id_b: int | None = None
    rank_a: int | None = None
    rank_b: int | None = None


@dataclass(frozen=True)
class VocabComparison:
    names: tuple[str, str]
    shared: tuple[VocabToken, ...]  # by rank in A, then id in A
    only_a: tuple[VocabToken, ...]
    only_b: tuple[VocabToken, ...]
    lengths_a: dict[int, int]  # token length in bytes -> how many tokens of A
    lengths_b: dict[int, int]

    @property
    def jaccard(self) -> float:
        """|A ∩ B| / |A ∪ B| over token bytes."""
        union = len(self.shared) + len(self.only_a) + len(self.only_b)
        return len(self.shared) / union if union else 0.0


def _later_ids(timeline, step: int) -> set[int]:
    """Ids that only steps after `step` make."""
    formed = [timeline.new_id_at(j) for j in range(1, timeline.n_steps + 1)]
    return set(formed[step:]) - set(formed[:step]) - {None}


def vocabulary_at(timeline, step: int | None = None) -> dict[bytes, int]:
    """``{bytes: id}`` of the vocabulary at `step` (the first id of bytes written twice wins;
    empty tokens are left out).

    >>> from tokviz.core import TrainSettings, train
    >>> tl = train(TrainSettings(merges=2, units="chars"), texts=["aaab"])
    >>> sorted(vocabulary_at(tl, 1).items())
    [(b'[UNK]', 3), (b'a', 0), (b'aa', 2), (b'b', 1)]
    """
    later = _later_ids(timeline, step) if step is not None and timeline.lists_merges else set()
    out: dict[bytes, int] = {}
    for i, data in enumerate(timeline.token_bytes()):
        if data and i not in later:
            out.setdefault(data, i)
    return out


def _lengths(vocab: dict[bytes, int]) -> dict[int, int]:
    hist: dict[int, int] = {}
    for data in vocab:
        hist[len(data)] = hist.get(len(data), 0) + 1
    return dict(sorted(hist.items()))


def compare_vocabularies(a, b, *, names: tuple[str, str] = ("A", "B"), step_a: int | None = None,
                         step_b: int | None = None) -> VocabComparison:
    """Line up the vocabularies of timelines `a` and `b` (each at its step).

    >>> from tokviz.core import TrainSettings, train
    >>> a = train(TrainSettings(merges=1, units="chars"), texts=["aaab"])
    >>> b = train(TrainSettings(merges=1, units="chars"), texts=["abab"])
    >>> c = compare_vocabularies(a, b)
    >>> [t.data for t in c.shared], [t.data for t in c.only_a], [t.data for t in c.only_b], round(c.jaccard, 2)
    ([b'a', b'b', b'[UNK]'], [b'aa'], [b'ab'], 0.6)
    >>> c.only_a[0].rank_a, c.lengths_a
    (0, {1: 2, 2: 1, 5: 1})
    """
    va, vb = vocabulary_at(a, step_a), vocabulary_at(b, step_b)

    def token(data: bytes) -> VocabToken:
        ia, ib = va.get(data), vb.get(data)
        return VocabToken(data, ia, ib, a.step_of(ia) if ia is not None else None,
                          b.step_of(ib) if ib is not None else None)

    def order(t: VocabToken, rank, ident) -> tuple:
        r = rank(t)
        return (r is not None, r if r is not None else 0, ident(t))

    shared = sorted((token(d) for d in va if d in vb), key=lambda t: order(t, lambda x: x.rank_a, lambda x: x.id_a))
    only_a = sorted((token(d) for d in va if d not in vb), key=lambda t: order(t, lambda x: x.rank_a, lambda x: x.id_a))
    only_b = sorted((token(d) for d in vb if d not in va), key=lambda t: order(t, lambda x: x.rank_b, lambda x: x.id_b))
    return VocabComparison(names, tuple(shared), tuple(only_a), tuple(only_b), _lengths(va), _lengths(vb))


def merge_tree_lines(timeline, token_id: int, show: Callable[[bytes], str]) -> list[str]:
    """How `token_id` was built, one merge per line, the top first, indented by depth (base units
    and specials: one line). `show` writes a token's bytes.

    >>> from tokviz.core import TrainSettings, train
    >>> tl = train(TrainSettings(merges=2, units="chars"), texts=["abcabc abc"])
    >>> merge_tree_lines(tl, 5, lambda b: b.decode())
    ['abc = ab + c (merge 2)', '  ab = a + b (merge 1)']
    """
    vocab = timeline.token_bytes()
    tree = timeline.merge_tree(token_id)
    if tree is None or not tree.children:
        return [f"{show(vocab[token_id])} (a base unit or special token)"]
    lines = []
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if node.children:
            parts = " + ".join(show(vocab[c.id]) for c in node.children)
            rank = "" if node.rank is None else f" (merge {node.rank + 1})"
            lines.append(f"{'  ' * depth}{show(vocab[node.id])} = {parts}{rank}")
            stack.extend((c, depth + 1) for c in reversed(node.children))
    return lines
