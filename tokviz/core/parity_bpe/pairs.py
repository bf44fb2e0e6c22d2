"""Every document's pairs in one state: the merges parity-aware BPE applies everywhere, one pass each.

All documents' deduplicated chunks are laid end to end in flat arrays with next/previous links,
as `tokviz.core.bpe.trainer.BpeTrainer` lays out one corpus, plus the document each position
belongs to (documents are contiguous, so positions ascending means documents ascending). A pair
keeps one list of its positions across all documents; its count is kept per document, and each
document has its own heap of ``(-count, first position, pair)`` keys (lazy, as BPE's) for
choosing its best pairs. A merge visits the pair's positions once, whatever the documents, and
updates the counts of the documents it passes through: small merges in a Python loop, large ones
vectorized in numpy with one group per (document, neighbour).

Two things keep it lean. A pair's occurrences are all created in one step (the merge that makes
its newer token, applied in every document at once), and afterwards its count in each document
only falls: so a pair enters a document's heap only if it has `min_count` occurrences there, and
keeps a position list only if it has them in some document (else no document can ever choose it).

The rule and the records are `tokviz.core.parity_bpe.trainer`'s; this is only the state.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from tokviz.core.bpe.pair_queue import linked, live_sites
from tokviz.core.bpe.trainer_records import Candidate

_SHIFT = 32
_MASK = (1 << _SHIFT) - 1
_S2 = 2 * _SHIFT  # a heap entry, as BPE's: (_CMAX - count) << _S1 | position << _S2 | pair key
_S1 = _S2 + 48
_KMASK = (1 << _S2) - 1
_PMASK = (1 << 48) - 1
_CMAX = 1 << 62
VECTOR_MIN_SITES = 192  # merges with at least this many possible sites run vectorized


def _as_array(a: np.ndarray) -> array:
    out = array("q")
    out.frombytes(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return out


def _positions(sp: np.ndarray, a: int, b: int) -> array:
    return _as_array(sp[a:b])


class DocumentPairs:
    """The pair counts, positions and heaps of all documents; `merge` applies one merge everywhere.

    >>> s = DocumentPairs([(np.array(list(b"aab")), [3]), (np.array(list(b"abab")), [4])], [[1], [2]], min_count=2)
    >>> s.cost.tolist(), s.best(1, 1)  # document 1's best pair: 'ab' (twice, weight 2)
    ([3, 8], [(416611827810, Candidate(pair=(97, 98), count=4, first_chunk=0, first_offset=0))])
    >>> s.merge((97 << 32) | 98, 256), s.cost.tolist()
    ({0: 1, 1: 4}, [2, 4])
    """

    def __init__(self, documents: Sequence[tuple[np.ndarray, Sequence[int]]], weights: Sequence[Sequence[int]], *,
                 min_count: int = 2, keep_all: bool = False) -> None:
        """`documents[d]`: (base ids of its distinct chunks laid end to end, their lengths);
        `weights[d]`: each chunk's count. `keep_all`: every pair keeps its positions, even one
        no document has `min_count` times (all documents together may: the hybrid's global
        merges); set it False when those are done."""
        self.min_count = max(1, min_count)
        self.keep_all = keep_all
        n_docs = len(documents)
        flat = np.concatenate([np.asarray(f, dtype=np.int64) for f, _ in documents]) if n_docs else np.zeros(0, np.int64)
        lens = np.concatenate([np.asarray(ln, dtype=np.int64).reshape(-1) for _, ln in documents])
        w = np.concatenate([np.asarray(x, dtype=np.int64).reshape(-1) for x in weights])
        chunk_doc = np.repeat(np.arange(n_docs, dtype=np.int64), [len(np.asarray(ln).reshape(-1)) for _, ln in documents])
        if len(lens) != len(w):
            raise ValueError("lengths and weights differ in length")
        n = len(flat)
        starts, nxt, prv = linked(lens)
        arrays = [_as_array(a) for a in (flat, nxt, prv, np.repeat(w, lens), np.repeat(chunk_doc, lens))]
        self.ids, self.nxt, self.prv, self.wts, self.doc = arrays
        self._np = tuple(np.frombuffer(a, dtype=np.int64) if n else np.zeros(0, np.int64) for a in arrays)
        self.starts = starts.tolist()  # each chunk's first position
        self.chunk0 = np.searchsorted(chunk_doc, np.arange(n_docs)).tolist()  # each document's first chunk
        self.cost = np.bincount(chunk_doc, weights=lens * w, minlength=n_docs).astype(np.int64)
        self.counts: list[dict[int, int]] = [{} for _ in range(n_docs)]  # per document: pair -> count
        self.first: list[dict[int, int]] = [{} for _ in range(n_docs)]  # per document: pair -> index in occ
        self.heaps: list[list[int]] = [[] for _ in range(n_docs)]
        self.occ: dict[int, array] = {}  # pair -> its positions in all documents, ascending
        if n > 1:
            pos = np.flatnonzero(self._np[1][:-1] >= 0)
            ids, _, _, wts, doc = self._np
            self._register((ids[pos] << _SHIFT) | ids[pos + 1], pos, doc[pos], wts[pos], push=False)
        for h in self.heaps:
            heapq.heapify(h)

    # -- registering new pairs ---------------------------------------------------------------------

    def _register(self, keys: np.ndarray, pos: np.ndarray, docs: np.ndarray, w: np.ndarray, *, push: bool = True) -> None:
        """Record brand-new pairs: `keys[i]` at `pos[i]` (ascending) in document `docs[i]`, weight `w[i]`."""
        if len(keys) == 0:
            return
        order = np.argsort(keys, kind="stable")  # positions (and so documents) stay ascending in a pair
        sk, sp, sd = keys[order], pos[order], docs[order]
        csum = np.concatenate(([0], np.cumsum(w[order])))
        new_key = np.concatenate(([True], sk[1:] != sk[:-1]))
        new_sub = new_key.copy()
        new_sub[1:] |= sd[1:] != sd[:-1]
        sub_a = np.flatnonzero(new_sub)
        sub_b = np.append(sub_a[1:], len(sk))
        key_a = np.flatnonzero(new_key)
        key_of_sub = np.cumsum(new_key)[sub_a] - 1
        sub_c = csum[sub_b] - csum[sub_a]
        ok = sub_c >= self.min_count
        kept = np.full(len(key_a), self.keep_all)
        kept[key_of_sub[ok]] = True  # pairs some document may choose
        key_b = np.append(key_a[1:], len(sk))
        occ = self.occ
        for k, a, b in zip(sk[key_a[kept]].tolist(), key_a[kept].tolist(), key_b[kept].tolist()):
            occ[k] = _positions(sp, a, b)
        counts, first, heaps = self.counts, self.first, self.heaps
        for k, d, c, i, p in zip(sk[sub_a].tolist(), sd[sub_a].tolist(), sub_c.tolist(),
                                 (sub_a - key_a[key_of_sub]).tolist(), sp[sub_a].tolist()):
            counts[d][k] = c
            if c >= self.min_count:
                first[d][k] = i
                e = ((_CMAX - c) << _S1) | (p << _S2) | k
                if push:
                    heapq.heappush(heaps[d], e)
                else:
                    heaps[d].append(e)

    # -- choosing ------------------------------------------------------------------------------------

    def _first_valid(self, d: int, key: int) -> int:
        """Position of the first live occurrence of `key` in document `d` (advancing its pointer)."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt = self.ids, self.nxt
        lst, fd = self.occ[key], self.first[d]
        i = fd[key]
        while True:
            p = lst[i]
            if ids[p] == a:
                q = nxt[p]
                if q >= 0 and ids[q] == b:
                    fd[key] = i
                    return p
            i += 1

    def _pop_valid(self, d: int) -> tuple[int, int, int] | None:
        """Pop document `d`'s best live heap entry as (count, first position, key)."""
        heap, counts, first, min_count = self.heaps[d], self.counts[d], self.first[d], self.min_count
        while heap:
            e = heapq.heappop(heap)
            key, pos, negc = e & _KMASK, (e >> _S2) & _PMASK, (e >> _S1) - _CMAX
            c = counts.get(key, 0)
            if c < min_count:  # can never win here again
                first.pop(key, None)
                if c <= 0:
                    counts.pop(key, None)
                continue
            p = self._first_valid(d, key)
            if c != -negc or p != pos:
                heapq.heappush(heap, ((_CMAX - c) << _S1) | (p << _S2) | key)
                continue
            return c, pos, key
        return None

    def best(self, d: int, n: int) -> list[tuple[int, Candidate]]:
        """Up to `n` (key, candidate) of document `d`'s best pairs with at least `min_count`
        occurrences there, best first (count, then first occurrence); the heap is left as it was."""
        found = []
        while len(found) < n:
            entry = self._pop_valid(d)
            if entry is None:
                break
            found.append(entry)
        heap, out, starts, chunk0 = self.heaps[d], [], self.starts, self.chunk0[d]
        for c, pos, key in found:
            heapq.heappush(heap, ((_CMAX - c) << _S1) | (pos << _S2) | key)
            chunk = bisect_right(starts, pos) - 1
            out.append((key, Candidate((key >> _SHIFT, key & _MASK), c, chunk - chunk0, pos - starts[chunk])))
        return out

    # -- merging -------------------------------------------------------------------------------------

    def merge(self, key: int, new: int) -> dict[int, int]:
        """Merge every live occurrence of `key` into token `new`; {document: tokens saved} where
        it saved any (the documents' costs are updated)."""
        positions = self.occ.pop(key, None)
        if positions is None:
            return {}
        if len(positions) >= VECTOR_MIN_SITES:
            saved = self._merge_vector(key, new, positions)
        else:
            saved = self._merge_loop(key, new, positions)
        counts, first, cost = self.counts, self.first, self.cost
        for d, n in saved.items():
            counts[d].pop(key, None)
            first[d].pop(key, None)
            cost[d] -= n
        return saved

    def _merge_loop(self, key: int, new: int, positions: array) -> dict[int, int]:
        """`BpeTrainer`'s merge loop, with each site's counts those of its document."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt, prv, wts, doc = self.ids, self.nxt, self.prv, self.wts, self.doc
        occ, all_counts = self.occ, self.counts
        new_hi = new << _SHIFT
        saved: dict[int, int] = {}
        created: dict[int, None] = {}  # pairs made here, in any document
        kept: set[int] = set()  # those some document may choose
        touched: dict[int, int] = {}  # pairs made in the current document -> index of its first position
        cur, counts, merged = -1, all_counts[0] if all_counts else {}, 0
        for p in positions:
            if ids[p] != a:
                continue
            q = nxt[p]
            if q < 0 or ids[q] != b:
                continue
            d = doc[p]
            if d != cur:
                if cur >= 0:
                    saved[cur] = merged
                    self._settle(cur, touched, kept)
                cur, counts, merged = d, all_counts[d], 0
                touched = {}
            w = wts[p]
            merged += w
            o = prv[p]
            if o >= 0:
                left = ids[o]
                counts[(left << _SHIFT) | a] -= w
                k = (left << _SHIFT) | new
                if k in counts:
                    counts[k] += w
                    occ[k].append(o)
                else:
                    counts[k] = w
                    lst = occ.get(k)
                    if lst is None:
                        occ[k] = array("q", (o,))
                        created[k] = None
                        touched[k] = 0
                    else:
                        touched[k] = len(lst)
                        lst.append(o)
            r = nxt[q]
            if r >= 0:
                right = ids[r]
                counts[(b << _SHIFT) | right] -= w
                k = new_hi | right
                if k in counts:
                    counts[k] += w
                    occ[k].append(p)
                else:
                    counts[k] = w
                    lst = occ.get(k)
                    if lst is None:
                        occ[k] = array("q", (p,))
                        created[k] = None
                        touched[k] = 0
                    else:
                        touched[k] = len(lst)
                        lst.append(p)
                prv[r] = p
            ids[p] = new
            ids[q] = -1
            nxt[p] = r
        if cur >= 0:
            saved[cur] = merged
            self._settle(cur, touched, kept)
        if not self.keep_all:
            for k in created:
                if k not in kept:
                    del occ[k]
        return saved

    def _settle(self, d: int, touched: dict[int, int], kept: set[int]) -> None:
        """Heap entries in document `d` for the pairs a merge made there with `min_count` occurrences."""
        counts, first, heap, min_count = self.counts[d], self.first[d], self.heaps[d], self.min_count
        for k, i in touched.items():
            c = counts[k]
            if c >= min_count:
                kept.add(k)
                first[k] = i
                p = self._first_valid(d, k)
                heapq.heappush(heap, ((_CMAX - c) << _S1) | (p << _S2) | k)

    def _merge_vector(self, key: int, new: int, positions: array) -> dict[int, int]:
        """`_merge_loop` in numpy: the same result, for pairs with many sites."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt, prv, wts, doc = self._np
        P, Q = live_sites(ids, nxt, np.frombuffer(positions, dtype=np.int64), a, b)
        if len(P) == 0:
            return {}
        L, R, W, D = prv[P], nxt[Q], wts[P], doc[P]
        touching = np.zeros(len(P), dtype=bool)
        touching[1:] = L[1:] == Q[:-1]  # the pair between two touching sites is counted on the right
        has_l = (L >= 0) & ~touching
        has_r = R >= 0
        counts = self.counts
        for d, tok, s in _sums(D[has_l], ids[L[has_l]], W[has_l]):
            counts[d][(tok << _SHIFT) | a] -= s
        for d, tok, s in _sums(D[has_r], ids[R[has_r]], W[has_r]):
            counts[d][(b << _SHIFT) | tok] -= s
        per_doc = np.bincount(D, weights=W)
        nz = np.flatnonzero(per_doc)
        saved = dict(zip(nz.tolist(), per_doc[nz].astype(np.int64).tolist()))
        ids[P] = new
        ids[Q] = -1
        nxt[P] = R
        prv[R[has_r]] = P[has_r]
        lp = prv[P]
        left = lp >= 0
        self._register((ids[lp[left]] << _SHIFT) | new, lp[left], D[left], W[left])
        right = has_r & (ids[np.where(has_r, R, 0)] != new)  # (new, new) is counted from the left
        self._register((new << _SHIFT) | ids[R[right]], P[right], D[right], W[right])
        return saved


def _sums(docs: np.ndarray, tokens: np.ndarray, weights: np.ndarray) -> list[tuple[int, int, int]]:
    """[(document, token, total weight)] for each distinct (document, token)."""
    if len(tokens) == 0:
        return []
    code = (docs << _SHIFT) | tokens
    u, inv = np.unique(code, return_inverse=True)
    s = np.bincount(inv.reshape(-1), weights=weights)
    return list(zip((u >> _SHIFT).tolist(), (u & _MASK).tolist(), s.astype(np.int64).tolist()))
