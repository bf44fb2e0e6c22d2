"""A deliberately slow, obviously correct parity-aware BPE trainer: the reference the fast one must match.

Parity-aware BPE (Foroutan, Sennrich et al. 2025, "Parity-aware Byte-Pair Encoding"; their
``parity_aware_learn_bpe.py``) trains on a multi-parallel corpus: one document per language, all
saying the same thing. Before every merge it measures each language's cost, the number of tokens
its document takes with the merges so far, picks the most expensive language (the first one on a
tie: their ``max(enumerate(lengths))``) and merges the pair that is most frequent *in that
language*. The merge is then applied in every language. The hybrid variant makes its first
`hybrid` merges as plain BPE does (the pair most frequent in all documents together) and only
then turns to parity.

Which text measures the cost: the reference code measures token counts on a multi-parallel
development set (``--dev``), raw counts with no normalisation (the texts are translations of each
other, so counts compare directly). Here each language's development text is its own training
document. Their other modes are left out: ``--ratio`` (compression against the pre-tokenized
length, scaled by a desired ratio per language) and the moving-window variant (a language served
more than ``alpha / languages`` of the last ``window`` merges is passed over).

Ties between pairs: the reference code takes the largest pair in string order; tokviz keeps its
BPE rule (the pair whose first occurrence comes first: chunks in order of first appearance in the
served document, then position), so a hybrid run whose global merges fill the budget is plain
BPE. Training stops, as theirs does, when the served language has no pair occurring `min_count`
times (even if another language still has one).

Every step recounts every pair of every document; one segmentation per distinct chunk (a chunk
is segmented the same way in every document). No speed tricks: if this and
`tokviz.core.parity_bpe.trainer` disagree, believe this.
"""

from __future__ import annotations

from dataclasses import dataclass

GLOBAL = -1  # the `served` of a step made for all documents together (the hybrid's first merges)


@dataclass(frozen=True)
class ReferenceStep:
    pair: tuple[int, int]
    id: int
    token: bytes
    count: int  # in the served document (a global step: in all of them)
    length: int  # tokens of all documents after the merge
    served: int  # the document the merge was chosen for, or GLOBAL
    saved: tuple[tuple[int, int], ...]  # (document, tokens it saved) where it saved any
    # (pair, count, first chunk, first offset) of the best pairs with at least min_count, winner
    # first; chunks are numbered in the served document (a global step: in all documents)
    candidates: tuple[tuple[tuple[int, int], int, int, int], ...]


def base_of(documents: list[dict[str, int]], units: str) -> tuple[list[bytes], dict[str, list[int]]]:
    """(token bytes of the base ids, base ids of every distinct chunk)."""
    chunks = list(dict.fromkeys(c for doc in documents for c in doc))
    if units == "bytes":
        return [bytes([i]) for i in range(256)], {c: list(c.encode("utf-8")) for c in chunks}
    symbols = sorted({ch for c in chunks for ch in c})
    index = {s: i for i, s in enumerate(symbols)}
    return [s.encode("utf-8") for s in symbols], {c: [index[ch] for ch in c] for c in chunks}


def _pair_counts(chunks: dict[str, int], seg: dict[str, list[int]], width: dict[str, list[int]]):
    """{pair: count} and {pair: (chunk index, offset in base units)} of its first occurrence."""
    counts: dict[tuple[int, int], int] = {}
    first: dict[tuple[int, int], tuple[int, int]] = {}
    for ci, (chunk, w) in enumerate(chunks.items()):
        ids, offset = seg[chunk], 0
        for i in range(len(ids) - 1):
            pair = (ids[i], ids[i + 1])
            counts[pair] = counts.get(pair, 0) + w
            first.setdefault(pair, (ci, offset))
            offset += width[chunk][i]
    return counts, first


def reference_train(documents: list[dict[str, int]], *, units: str = "bytes", max_merges: int | None = None,
                    min_count: int = 2, hybrid: int = 0, n_candidates: int = 5) -> list[ReferenceStep]:
    """Train on `documents` (one ``{chunk: count}`` per language, chunks in order of first
    appearance) by recounting everything at every step."""
    vocab, seg = base_of(documents, units)
    width = {c: [1] * len(ids) for c, ids in seg.items()}
    everything: dict[str, int] = {}  # all documents together, in order of first appearance
    for doc in documents:
        for c, w in doc.items():
            everything[c] = everything.get(c, 0) + w
    steps: list[ReferenceStep] = []
    while max_merges is None or len(steps) < max_merges:
        cost = [sum(len(seg[c]) * w for c, w in doc.items()) for doc in documents]
        served = GLOBAL if len(steps) < hybrid else cost.index(max(cost))
        counts, first = _pair_counts(everything if served == GLOBAL else documents[served], seg, width)
        ranked = sorted(counts, key=lambda p: (-counts[p], first[p]))
        if not ranked or counts[ranked[0]] < min_count:
            break
        best, new = ranked[0], len(vocab)
        vocab.append(vocab[best[0]] + vocab[best[1]])
        for c, ids in seg.items():  # merge left to right in every chunk
            out, wout, i = [], [], 0
            while i < len(ids):
                if i + 1 < len(ids) and (ids[i], ids[i + 1]) == best:
                    out.append(new)
                    wout.append(width[c][i] + width[c][i + 1])
                    i += 2
                else:
                    out.append(ids[i])
                    wout.append(width[c][i])
                    i += 1
            seg[c], width[c] = out, wout
        after = [sum(len(seg[c]) * w for c, w in doc.items()) for doc in documents]
        saved = tuple((d, b - a) for d, (b, a) in enumerate(zip(cost, after)) if b != a)
        cands = tuple((p, counts[p], *first[p]) for p in ranked[:n_candidates] if counts[p] >= min_count)
        steps.append(ReferenceStep(best, new, vocab[new], counts[best], sum(after), served, saved, cands))
    return steps
