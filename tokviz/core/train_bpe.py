"""Incremental BPE training: a generator of `MergeStep` records, one per merge.

The corpus is a list of base-id sequences (deduplicated chunks) with weights (how often each chunk
occurs). All sequences are laid end to end in flat arrays with next/previous links; each pair keeps
the positions where it occurs (appended in increasing order) and a weighted count. A merge visits
only the positions of its pair and updates the neighbouring pairs' counts.

Choosing the winner: the highest count; among equal counts, the pair whose first occurrence comes
first (chunks in order of first appearance, then position in the chunk). A heap holds
``(-count, first_position, pair)`` keys with lazy invalidation. This is exact because a pair's
occurrences are all created in the step that creates its newer token; afterwards its count only
falls and its first occurrence only moves later, so a stale key is never better than the truth.

Counting is naive: ``a a a`` holds the pair ``(a, a)`` twice; merging replaces left to right.
What this leaves out: reading and splitting the corpus (`tokviz.core.chunks`), ids of special
tokens (`tokviz.core.timeline`).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

_SHIFT = 32
_MASK = (1 << _SHIFT) - 1
N_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pair that could have been merged at a step, with its count and first occurrence."""

    pair: tuple[int, int]
    count: int
    first_chunk: int  # index of the (deduplicated, first-appearance ordered) chunk
    first_offset: int  # position of the pair's left symbol in that chunk, in base symbols


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge of the training timeline. Step k of the timeline = the first k merges."""

    rank: int  # 0-based merge index
    pair: tuple[int, int]  # (left id, right id)
    id: int  # id of the new token
    token: bytes  # bytes of the new token (UTF-8 for character units)
    count: int  # weighted count of the pair when it won
    length: int  # corpus length in tokens (weighted) after the merge
    candidates: tuple[Candidate, ...] = ()  # best pairs at this step, winner first


class BpeTrainer:
    """Holds the mutable training state; iterate `steps()` to run merges one at a time.

    >>> t = BpeTrainer([list(b"aaabdaaabac")], [1], [bytes([i]) for i in range(256)])
    >>> [(s.pair, s.count) for s in t.steps(max_merges=3)]
    [((97, 97), 4), ((256, 97), 2), ((257, 98), 2)]
    """

    def __init__(
        self,
        seqs: Sequence[Sequence[int]],
        weights: Sequence[int],
        token_bytes: Sequence[bytes],
        *,
        n_candidates: int = N_CANDIDATES,
    ) -> None:
        if len(seqs) != len(weights):
            raise ValueError("seqs and weights differ in length")
        self.token_bytes = list(token_bytes)
        self.next_id = len(self.token_bytes)
        self.n_candidates = max(1, n_candidates)
        ids: list[int] = []
        wts: list[int] = []
        starts: list[int] = []
        for seq, w in zip(seqs, weights):
            starts.append(len(ids))
            ids.extend(seq)
            wts.extend([w] * len(seq))
        n = len(ids)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        ends = starts[1:] + [n]
        for s, e in zip(starts, ends):
            if e > s:
                nxt[e - 1] = -1
                prv[s] = -1
        self.ids, self.nxt, self.prv, self.wts = ids, nxt, prv, wts
        self.starts = starts
        self.length = sum(len(s) * w for s, w in zip(seqs, weights))
        self.rank = 0
        self._count_initial_pairs()

    def _count_initial_pairs(self) -> None:
        ids, nxt, wts = self.ids, self.nxt, self.wts
        counts: dict[int, int] = {}
        occ: dict[int, list[int]] = {}
        for p in range(len(ids) - 1):
            if nxt[p] < 0:
                continue
            key = (ids[p] << _SHIFT) | ids[p + 1]
            lst = occ.get(key)
            if lst is None:
                occ[key] = [p]
                counts[key] = wts[p]
            else:
                lst.append(p)
                counts[key] += wts[p]
        self.counts, self.occ = counts, occ
        self.first = dict.fromkeys(occ, 0)  # key -> index of the first possibly valid position
        heap = [(-c, occ[k][0], k) for k, c in counts.items()]
        heapq.heapify(heap)
        self.heap = heap

    # -- winner selection -------------------------------------------------------------------

    def _first_valid(self, key: int) -> int:
        """Position of the first live occurrence of `key` (advancing its lazy pointer)."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt = self.ids, self.nxt
        lst = self.occ[key]
        i = self.first[key]
        while True:
            p = lst[i]
            if ids[p] == a:
                q = nxt[p]
                if q >= 0 and ids[q] == b:
                    self.first[key] = i
                    return p
            i += 1

    def _pop_valid(self) -> tuple[int, int, int] | None:
        """Pop the best live heap entry as (count, first_position, key), refreshing stale keys."""
        heap, counts = self.heap, self.counts
        while heap:
            negc, pos, key = heapq.heappop(heap)
            c = counts.get(key, 0)
            if c <= 0:
                if key in self.occ and c <= 0:
                    del self.occ[key], self.first[key]
                    counts.pop(key, None)
                continue
            if c != -negc:
                heapq.heappush(heap, (-c, self._first_valid(key), key))
                continue
            p = self._first_valid(key)
            if p != pos:
                heapq.heappush(heap, (negc, p, key))
                continue
            return c, pos, key
        return None

    def candidates(self, n: int) -> list[tuple[int, int, int]]:
        """The `n` best live pairs as (count, first_position, key), best first; heap unchanged."""
        found = []
        while len(found) < n:
            entry = self._pop_valid()
            if entry is None:
                break
            found.append(entry)
        for c, pos, key in found:
            heapq.heappush(self.heap, (-c, pos, key))
        return found

    def _candidate(self, count: int, pos: int, key: int) -> Candidate:
        chunk = bisect_right(self.starts, pos) - 1
        return Candidate((key >> _SHIFT, key & _MASK), count, chunk, pos - self.starts[chunk])

    # -- merging ----------------------------------------------------------------------------

    def _merge(self, key: int, new: int) -> int:
        """Merge every live occurrence of `key` into token `new`; return the weighted sites."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt, prv, wts = self.ids, self.nxt, self.prv, self.wts
        counts, occ = self.counts, self.occ
        positions = occ.pop(key)
        start = self.first.pop(key)
        new_hi = new << _SHIFT
        touched: dict[int, None] = {}
        merged = 0
        for i in range(start, len(positions)):
            p = positions[i]
            if ids[p] != a:
                continue
            q = nxt[p]
            if q < 0 or ids[q] != b:
                continue
            w = wts[p]
            merged += w
            o = prv[p]
            if o >= 0:
                left = ids[o]
                k = (left << _SHIFT) | a
                counts[k] -= w
                k = (left << _SHIFT) | new
                if k in counts:
                    counts[k] += w
                    occ[k].append(o)
                else:
                    counts[k] = w
                    occ[k] = [o]
                    touched[k] = None
            r = nxt[q]
            if r >= 0:
                right = ids[r]
                k = (b << _SHIFT) | right
                counts[k] -= w
                k = new_hi | right
                if k in counts:
                    counts[k] += w
                    occ[k].append(p)
                else:
                    counts[k] = w
                    occ[k] = [p]
                    touched[k] = None
                prv[r] = p
            ids[p] = new
            ids[q] = -1
            nxt[p] = r
        counts.pop(key, None)
        first, heap = self.first, self.heap
        for k in touched:
            first[k] = 0
            c = counts[k]
            if c > 0:
                heapq.heappush(heap, (-c, self._first_valid(k), k))
        return merged

    def steps(self, *, max_merges: int | None = None, min_count: int = 2) -> Iterator[MergeStep]:
        """Yield merges until `max_merges` are done or the best count falls below `min_count`."""
        min_count = max(1, min_count)
        while max_merges is None or self.rank < max_merges:
            best = self.candidates(self.n_candidates)
            if not best or best[0][0] < min_count:
                return
            count, pos, key = best[0]
            self._pop_valid()  # remove the winner's heap entry (it is the top)
            new = self.next_id
            token = self.token_bytes[key >> _SHIFT] + self.token_bytes[key & _MASK]
            self.token_bytes.append(token)
            self.next_id += 1
            self.length -= self._merge(key, new)
            step = MergeStep(
                rank=self.rank,
                pair=(key >> _SHIFT, key & _MASK),
                id=new,
                token=token,
                count=count,
                length=self.length,
                candidates=tuple(self._candidate(*c) for c in best),
            )
            self.rank += 1
            yield step

    def segments(self, chunk: int) -> list[int]:
        """Current token ids of deduplicated chunk number `chunk` (for inspection and tests)."""
        out = []
        p = self.starts[chunk]
        end = self.starts[chunk + 1] if chunk + 1 < len(self.starts) else len(self.ids)
        if p >= end:
            return out
        while p >= 0:
            out.append(self.ids[p])
            p = self.nxt[p]
        return out
