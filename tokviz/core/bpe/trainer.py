"""Incremental BPE training: a generator of `MergeStep` records, one per merge.

The corpus is a list of base-id sequences (deduplicated chunks) with weights (how often each chunk
occurs). All sequences are laid end to end in flat arrays with next/previous links; each pair keeps
the positions where it occurs (appended in increasing order) and a weighted count. A merge visits
only the positions of its pair and updates the neighbouring pairs' counts.

Choosing the winner: the highest count; among equal counts, the pair whose first occurrence comes
first (chunks in order of first appearance, then position in the chunk). A heap holds
``(-count, first_position, pair)`` keys with lazy invalidation (`tokviz.core.bpe.pair_queue`). This is exact because a pair's
occurrences are all created in the step that creates its newer token; afterwards its count only
falls and its first occurrence only moves later, so a stale key is never better than the truth.

Tie-break ``hf`` (Hugging Face tokenizers' `BpeTrainer`): among equal counts the smallest
``(left id, right id)`` wins, with base ids ranked by `hf_order` (for bytes: `HF_BYTE_ORDER`, the
code points of GPT-2's byte-to-unicode characters). The trainer then works on ids relabelled into
that order, keys ``(-count, 0, pair)`` (so the pair itself breaks ties), and maps ids back to the
caller's when it reports a step. HF counts pairs exactly as here and merges left to right; it
gives a merge that spells an existing token that token's id, which cannot happen in training
without special tokens or word-boundary marks (a span that becomes a token in one place has the
same segmentation wherever its edges are token edges, so its first merge fires everywhere).

Counting is naive: ``a a a`` holds the pair ``(a, a)`` twice; merging replaces left to right.
The arrays are `array('q')` with zero-copy numpy views: merges with few sites run as a plain
loop, merges with many sites (the early, frequent pairs) run vectorized on the same state.
What this leaves out: reading and splitting the corpus (`tokviz.core.text.chunks`), ids of special
tokens (`tokviz.core.bpe.timeline`).
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterator, Sequence
from itertools import chain

import numpy as np

from tokviz.core.gc_pause import release_free_memory

from .pair_queue import CMAX as _CMAX
from .pair_queue import KMASK as _KMASK
from .pair_queue import MASK as _MASK
from .pair_queue import PMASK as _PMASK
from .pair_queue import S1 as _S1
from .pair_queue import S2 as _S2
from .pair_queue import SHIFT as _SHIFT
from .pair_queue import PairQueue, link_ends, live_sites, sorted_groups, stable_order
from .trainer_records import Candidate, MergeStep

N_CANDIDATES = 5
VECTOR_MIN_SITES = 64  # merges with at least this many possible sites run vectorized in numpy
RELEASE_MIN_POSITIONS = 1 << 15  # units of the distinct chunks from which freed heap is worth handing back
RELEASE_EVERY = 2048  # merges between two hand-backs (each well under a millisecond)

# Hugging Face's ByteLevel alphabet sorted by code point: bytes GPT-2 shows as themselves
# (printable Latin-1), then the others, which it maps to U+0100 and up in byte order.
_PRINTABLE = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
HF_BYTE_SEQUENCE = sorted(_PRINTABLE) + [b for b in range(256) if b not in _PRINTABLE]
HF_BYTE_ORDER = tuple(HF_BYTE_SEQUENCE.index(b) for b in range(256))  # byte -> HF id


def _bytes_of(a: np.ndarray) -> memoryview:
    """The raw bytes of an int64 array, to copy position runs out of it without Python ints."""
    return memoryview(np.ascontiguousarray(a, dtype=np.int64)).cast("B")


def _q_array(values: np.ndarray) -> array:
    """`values` copied into an ``array('q')`` (one copy)."""
    out = array("q")
    out.frombytes(_bytes_of(values))
    return out


def _positions(raw: memoryview, a: int, b: int) -> array:
    """Positions ``a..b-1`` of `raw` as an ``array('q')``: 8 bytes a position, not a Python int
    each (a 10 MB run of one character has ten million of them)."""
    out = array("q")
    out.frombytes(raw[8 * a : 8 * b])
    return out


def first_pairs(ids: np.ndarray, nxt: np.ndarray, wts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of neighbours before any merge, grouped by key in a stable order: (keys,
    positions, weights). Built one position-long array at a time, each temporary let go before
    the next is made (the whole of gutenberg30: about 21 MB above the trainer's arrays at the peak).

    >>> [x.tolist() for x in first_pairs(np.array([5, 3, 5, 3]), np.array([1, 2, 3, -1]), np.array([1, 1, 1, 1]))]
    [[12884901893, 21474836483, 21474836483], [1, 0, 2], [1, 1, 1]]
    """
    pos = np.flatnonzero(nxt[:-1] >= 0)
    keys = ids[pos]
    keys <<= _SHIFT
    after = pos + 1
    keys |= ids[after]
    del after
    order = stable_order(keys)
    keys = keys[order]
    pos = pos[order]
    del order
    return keys, pos, wts[pos]


class BpeTrainer(PairQueue):
    """Holds the mutable training state; iterate `steps()` to run merges one at a time.

    >>> t = BpeTrainer([list(b"aaabdaaabac")], [1], [bytes([i]) for i in range(256)])
    >>> [(s.pair, s.count) for s in t.steps(max_merges=3)]
    [((97, 97), 4), ((256, 97), 2), ((257, 98), 2)]
    >>> t = BpeTrainer([list(b"aaabdaaabac")], [1], [bytes([i]) for i in range(256)], hf_order=HF_BYTE_ORDER)
    >>> [(s.pair, s.count) for s in t.steps(max_merges=3)]  # ties: 'a' (HF id 64) before 'aa' (256)
    [((97, 97), 4), ((97, 98), 2), ((256, 257), 2)]
    """

    def __init__(
        self,
        seqs: Sequence[Sequence[int]],
        weights: Sequence[int],
        token_bytes: Sequence[bytes],
        *,
        min_count: int = 2,
        n_candidates: int = N_CANDIDATES,
        hf_order: Sequence[int] | None = None,
    ) -> None:
        """`hf_order`: None for first-occurrence ties; else tie-break ``hf`` with base id i
        ranked `hf_order[i]` (a permutation of the base ids)."""
        if len(seqs) != len(weights):
            raise ValueError("seqs and weights differ in length")
        lengths = [len(seq) for seq in seqs]
        flat = np.fromiter(chain.from_iterable(seqs), dtype=np.int64, count=sum(lengths))
        self._init(flat, lengths, weights, token_bytes, min_count=min_count,
                   n_candidates=n_candidates, hf_order=hf_order)

    @classmethod
    def from_flat(
        cls,
        ids: np.ndarray,
        lengths: Sequence[int] | np.ndarray,
        weights: Sequence[int] | np.ndarray,
        token_bytes: Sequence[bytes],
        *,
        min_count: int = 2,
        n_candidates: int = N_CANDIDATES,
        hf_order: Sequence[int] | None = None,
    ) -> BpeTrainer:
        """The same trainer from the sequences laid end to end: `ids` (base ids), and each
        sequence's length, so a large corpus never becomes a list of Python lists.

        >>> t = BpeTrainer.from_flat(np.frombuffer(b"aaabdaaabac", np.uint8), [11], [1], [bytes([i]) for i in range(256)])
        >>> [(s.pair, s.count) for s in t.steps(max_merges=3)]
        [((97, 97), 4), ((256, 97), 2), ((257, 98), 2)]
        """
        if len(lengths) != len(weights):
            raise ValueError("lengths and weights differ in length")
        self = cls.__new__(cls)
        self._init(np.asarray(ids, dtype=np.int64), lengths, weights, token_bytes, min_count=min_count,
                   n_candidates=n_candidates, hf_order=hf_order)
        return self

    def _init(self, flat: np.ndarray, lengths, weights, token_bytes, *, min_count: int,
              n_candidates: int, hf_order: Sequence[int] | None) -> None:
        """Set up from the flat base ids of every sequence (int64) and the sequences' lengths."""
        self._hf = hf_order is not None
        self._tie_mask = 0 if self._hf else -1  # heap order: -count, position & mask, pair
        self._out: list[int] | None = None  # internal base id -> caller's id (hf only)
        if self._hf:
            order = list(hf_order)
            if sorted(order) != list(range(len(token_bytes))):
                raise ValueError("hf_order must be a permutation of the base ids")
            if order != sorted(order):
                out = [0] * len(order)
                for i, r in enumerate(order):
                    out[r] = i
                self._out = out
                flat = np.asarray(order, dtype=np.int64)[flat]
                token_bytes = [token_bytes[i] for i in out]
        self.token_bytes = list(token_bytes)
        self.next_id = len(self.token_bytes)
        self._seen: dict[int, tuple[int, Candidate]] = {}  # key -> (heap entry, record)
        self.n_candidates = max(1, n_candidates)
        # A pair below min_count can never win (counts only fall after a pair appears), so a
        # first pair below it is not stored at all (`counts` gives 0 for it, and a merge beside
        # it stores what it takes away, below zero: a million dict entries fewer in SuperBPE's
        # stage 2); a pair a merge makes below it keeps a count, with no positions or heap entry.
        self.min_count = max(1, min_count)
        lens = np.asarray(lengths, dtype=np.int64).reshape(-1)
        w = np.asarray(weights, dtype=np.int64).reshape(-1)
        n = len(flat)
        # built one at a time, each numpy temporary let go once copied (six position-long arrays
        # at the peak, the caller's base ids among them)
        starts_np, last, first = link_ends(lens)
        self.ids = _q_array(flat)
        self.nxt = _q_array(np.arange(1, n + 1, dtype=np.int64))
        self.prv = _q_array(np.arange(-1, n - 1, dtype=np.int64))
        self.wts = _q_array(np.repeat(w, lens))
        arrays = (self.ids, self.nxt, self.prv, self.wts)
        self._np = tuple(
            np.frombuffer(a, dtype=np.int64) if n else np.zeros(0, np.int64) for a in arrays
        )
        self._np[1][last] = -1
        self._np[2][first] = -1
        self.starts = starts_np.tolist()
        self.length = int(np.dot(lens, w)) if len(lens) else 0
        self.rank = 0
        self._held = []
        self._count_initial_pairs()

    def _count_initial_pairs(self) -> None:
        ids, nxt, _, wts = self._np
        counts: dict[int, int] = defaultdict(int)  # first pairs below min_count: not stored
        occ: dict[int, array | memoryview | int] = {}
        heap: list[int] = []
        if len(ids) > 1:
            heap = self._add_groups(*first_pairs(ids, nxt, wts), counts, occ)
        self.counts, self.occ = counts, occ
        self.first = dict.fromkeys(occ, 0)  # key -> index of the first possibly valid position
        heapq.heapify(heap)
        self.heap = heap

    def _add_groups(self, sk, sp, sw, counts, occ) -> list[int]:
        """Register the first pairs: `sk`, `sp`, `sw` the keys, positions and weights of every
        occurrence, grouped by key (`first_pairs`); returns their heap entries (not yet a heap).
        Their positions stay in one buffer, grouped by pair, and `occ` holds each pair's range of it
        until the pair is first read (`PairQueue._hold`). An array a pair took 1.8 s for the 480,000
        pairs of SuperBPE's stage 2, of which a few thousand are ever read."""
        if len(sk) == 0:
            return []
        starts, ends, sums = sorted_groups(sk, sw)
        keep = sums >= self.min_count  # the others can never win (see `_init`)
        starts, ends = starts[keep], ends[keep]
        group_keys = sk[starts].tolist()
        group_counts = sums[keep].tolist()
        first_pos = (sp[starts] & self._tie_mask).tolist()
        counts.update(zip(group_keys, group_counts))
        occ.update(zip(group_keys, self._hold(sp, starts, ends)))
        return [((_CMAX - c) << _S1) | (p0 << _S2) | k for k, c, p0 in zip(group_keys, group_counts, first_pos)]

    # -- winner selection -------------------------------------------------------------------

    def _candidate(self, entry: int) -> Candidate:
        """The `Candidate` record of a live pair from its heap entry; the runners-up of one step
        are mostly those of the step before, unchanged (the same entry: the same count, so the
        same first position), so the record is reused."""
        key = entry & _KMASK
        seen = self._seen.get(key)
        if seen is not None and seen[0] == entry:
            return seen[1]
        count, pos = _CMAX - (entry >> _S1), (entry >> _S2) & _PMASK
        if self._hf:
            pos = self._first_valid(key)
        chunk = bisect_right(self.starts, pos) - 1
        pair = (key >> _SHIFT, key & _MASK) if self._out is None else self._pair_out(key)
        cand = Candidate(pair, count, chunk, pos - self.starts[chunk])
        self._seen[key] = (entry, cand)
        return cand

    def _pair_out(self, key: int) -> tuple[int, int]:
        """The pair of `key` in the caller's ids."""
        a, b = key >> _SHIFT, key & _MASK
        out = self._out
        if out is not None:
            n = len(out)
            return (out[a] if a < n else a, out[b] if b < n else b)
        return a, b

    # -- merging ----------------------------------------------------------------------------

    def _merge(self, key: int, new: int) -> int:
        """Merge every live occurrence of `key` into token `new`; return the weighted sites."""
        positions = self.occ.pop(key)
        if type(positions) is int:  # still a range of a held buffer
            positions = self._held_range(positions)
        start = self.first.pop(key)
        if self._vectorized(len(positions) - start):
            merged = self._merge_vector(key, new, positions, start)
        else:
            merged = self._merge_loop(key, new, positions, start)
        self.counts.pop(key, None)
        return merged

    def _vectorized(self, sites: int) -> bool:
        """Whether a merge with `sites` possible sites runs vectorized (`_merge_vector`)."""
        return sites >= VECTOR_MIN_SITES

    def _merge_vector(self, key: int, new: int, positions: array, start: int) -> int:
        """`_merge_loop` in numpy: the same result, for pairs with many sites."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt, prv, wts = self._np
        # a view: `positions` is no longer in occ
        P, Q = live_sites(ids, nxt, np.frombuffer(positions, dtype=np.int64)[start:], a, b)
        if len(P) == 0:
            return 0
        L, R = prv[P], nxt[Q]
        W = wts[P]
        merged = int(W.sum())
        counts = self.counts
        # Before: (x, a) at L, (a, b) at P, (b, y) at Q. When two sites touch (L == previous Q),
        # the pair between them is one occurrence: count it on the right side only.
        touching = np.zeros(len(P), dtype=bool)
        touching[1:] = L[1:] == Q[:-1]
        has_l = (L >= 0) & ~touching
        has_r = R >= 0
        for tok, d in self._sum_by_token(ids[L[has_l]], W[has_l]):
            counts[(tok << _SHIFT) | a] -= d
        for tok, d in self._sum_by_token(ids[R[has_r]], W[has_r]):
            counts[(b << _SHIFT) | tok] -= d
        counts[key] -= merged
        # relink: P takes the new token, Q disappears
        ids[P] = new
        ids[Q] = -1
        nxt[P] = R
        prv[R[has_r]] = P[has_r]
        # After: (x, new) at prv[P] and (new, y) at P, where y is not itself a new token
        # (that pair, (new, new), is already counted from the left).
        lp = prv[P]
        left = lp >= 0
        self._add_pairs(lp[left], ids[lp[left]], W[left], lambda t: (t << _SHIFT) | new)
        right = has_r & (ids[np.where(has_r, R, 0)] != new)
        self._add_pairs(P[right], ids[R[right]], W[right], lambda t: (new << _SHIFT) | t)
        return merged

    @staticmethod
    def _sum_by_token(tokens: np.ndarray, weights: np.ndarray) -> list[tuple[int, int]]:
        """[(token, total weight)] for each distinct token id."""
        if len(tokens) == 0:
            return []
        sums = np.bincount(tokens, weights=weights)
        nz = np.flatnonzero(sums)
        return list(zip(nz.tolist(), sums[nz].astype(np.int64).tolist()))

    def _add_pairs(self, pos: np.ndarray, tokens: np.ndarray, weights: np.ndarray, key_of) -> None:
        """Register brand-new pairs: the one at `pos[i]` is ``key_of(tokens[i])``."""
        if len(pos) == 0:
            return
        order = np.argsort(tokens, kind="stable")  # positions stay ascending within a token
        st = tokens[order]
        bounds = np.flatnonzero(st[1:] != st[:-1]) + 1
        starts = [0, *bounds.tolist()]
        ends = [*bounds.tolist(), len(st)]
        csum = np.concatenate(([0], np.cumsum(weights[order]))).tolist()
        sp = pos[order]
        raw, first_pos = _bytes_of(sp), sp[starts].tolist()
        toks = st[starts].tolist()
        counts, occ, first, heap = self.counts, self.occ, self.first, self.heap
        min_count, mask = self.min_count, self._tie_mask
        for t, a, b, p0 in zip(toks, starts, ends, first_pos):
            k = key_of(t)
            c = csum[b] - csum[a]
            counts[k] = c
            if c < min_count:
                continue
            occ[k] = _positions(raw, a, b)
            first[k] = 0
            heapq.heappush(heap, ((_CMAX - c) << _S1) | ((p0 & mask) << _S2) | k)

    def _merge_loop(self, key: int, new: int, positions: array, start: int) -> int:
        """Merge the live sites of `key` among `positions[start:]` one by one."""
        a, b = key >> _SHIFT, key & _MASK
        ids, nxt, prv, wts = self.ids, self.nxt, self.prv, self.wts
        counts, occ = self.counts, self.occ
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
                    occ[k] = array("q", (o,))
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
                    occ[k] = array("q", (p,))
                    touched[k] = None
                prv[r] = p
            ids[p] = new
            ids[q] = -1
            nxt[p] = r
        first, heap, min_count, hf = self.first, self.heap, self.min_count, self._hf
        for k in touched:
            c = counts[k]
            if c >= min_count:
                first[k] = 0
                p = 0 if hf else self._first_valid(k)
                heapq.heappush(heap, ((_CMAX - c) << _S1) | (p << _S2) | k)
            else:
                del occ[k]
        return merged

    def steps(self, *, max_merges: int | None = None) -> Iterator[MergeStep]:
        """Yield merges until `max_merges` are done or no pair reaches `min_count`."""
        release = len(self.ids) >= RELEASE_MIN_POSITIONS
        seen = self._seen
        while max_merges is None or self.rank < max_merges:
            if release and self.rank % RELEASE_EVERY == 0:  # what setting up and the vectorized merges freed
                release_free_memory()
            entries = self.next_best(self.n_candidates)
            if not entries:
                return
            self._out_of_heap = self._out_of_heap[1:]  # the winner's entry is used up; the runners-up stay out
            key = entries[0] & _KMASK
            # before the merge moves positions; a record seen with the same entry is reused (`_candidate`)
            cands = tuple([h[1] if (h := seen.get(e & _KMASK)) is not None and h[0] == e else self._candidate(e)
                           for e in entries])
            seen.pop(key, None)  # a merged pair never occurs again
            new = self.next_id
            token = self.token_bytes[key >> _SHIFT] + self.token_bytes[key & _MASK]
            self.token_bytes.append(token)
            self.next_id += 1
            self.length -= self._merge(key, new)
            won = cands[0]  # the winner's record: its pair and count objects serve the step too
            step = MergeStep(
                rank=self.rank,
                pair=won.pair,
                id=new,
                token=token,
                count=won.count,
                length=self.length,
                candidates=cands,
            )
            self.rank += 1
            yield step

    def all_segments(self) -> list[list[int]]:
        """`segments` of every chunk, at once: a merge keeps its left position, so a chunk's live
        positions in order are its tokens (0.6 s -> 0.1 s for SuperBPE's 125,000 stage-1 chunks)."""
        ids = self._np[0]
        live = np.flatnonzero(ids >= 0)
        starts = np.asarray(self.starts, dtype=np.int64)
        per_chunk = np.bincount(np.searchsorted(starts, live, side="right") - 1, minlength=len(starts))
        tokens = ids[live]
        if self._out is not None:
            out = np.asarray(self._out, dtype=np.int64)
            tokens = np.where(tokens < len(out), out[np.minimum(tokens, len(out) - 1)], tokens)
        flat, ends = tokens.tolist(), np.cumsum(per_chunk).tolist()
        return [flat[a:b] for a, b in zip([0, *ends[:-1]], ends)]

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
        if self._out is not None:
            n = len(self._out)
            out = [self._out[x] if x < n else x for x in out]
        return out
