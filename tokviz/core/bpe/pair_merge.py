"""The pair-rank BPE encoder: join the adjacent pair with the lowest merge rank, leftmost of equals.

Every merge-list tokenizer encodes a word through `PairMerges.merge`: trained BPE and minbpe files
(`tokviz.core.bpe.tokenizer.BpeTokenizer`) and Hugging Face BPE (`HfBpeModel`). Only merges of rank
< `limit` join (the step of a merge timeline). Two loops give the same result: short words keep a
list of the ranks of adjacent pairs (``min``/``index`` run in C), long ones a heap of
``rank << 32 | position`` with stale entries skipped, O(n log n).

Example, merges ``0: (a, b) -> X`` and ``1: (X, c) -> Y`` on ``a b c a b``: rank 0 joins the
leftmost ``a b`` first, then the other one, then rank 1: ``Y X``.

When a merge's parts are always made by earlier merges (trained BPE, minbpe), this equals
applying each merge in rank order to every occurrence, left to right (`reference.oracle_encode_chunk`).
What this leaves out: the starting symbols and spans of a word (the callers), tiktoken's
byte-rank rule (`byte_ranks`), SentencePiece's score rule (`tokviz.core.formats.sentencepiece.bpe`).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from itertools import pairwise

INF_RANK = 1 << 62  # "no limit" and "no such pair" in the rank loops
LONG_WORD = 64  # words of more symbols than this use the heap loop
_SHIFT = 32  # a pair key is left << 32 | right; a heap entry is rank << 32 | position
_MASK = (1 << _SHIFT) - 1

TraceStep = tuple[int, tuple[int, int], int, tuple[int, ...]]  # (rank, pair, new id, ids after)


def pair_key(left: int, right: int) -> int:
    """The key of an adjacent pair in a rank table: ``left << 32 | right``."""
    return (left << _SHIFT) | right


class PairMerges:
    """An ordered merge list as the encoder reads it: `rank_of` maps a pair's key (`pair_key`) to
    its rank, `new_ids[rank]` is the id that merge makes (a list, or a ``range`` when merge r makes
    ``base + r``). The caller decides which rank a repeated pair keeps."""

    __slots__ = ("new_ids", "rank_of")

    def __init__(self, rank_of: Mapping[int, int], new_ids: Sequence[int]) -> None:
        self.rank_of = rank_of
        self.new_ids = new_ids

    def pair_ranks(self, ids: Sequence[int]) -> list[int]:
        """The rank of each adjacent pair of `ids` (`INF_RANK` where no merge joins it)."""
        get = self.rank_of.get
        return [get((a << _SHIFT) | b, INF_RANK) for a, b in pairwise(ids)]

    def merge(self, ids: list[int], limit: int = INF_RANK, *, ranks: list[int] | None = None,
              firsts: list[int] | None = None, trace: list[tuple[int, int]] | None = None) -> list[int]:
        """The ids left after joining pairs of rank < `limit`; `ids` (and `ranks`) may be changed.

        `ranks`: the ranks of the adjacent pairs when the caller has them (else `pair_ranks`).
        `firsts`: ``list(range(len(ids)))`` to get back, in place, the position of each part's
        first symbol (for spans). `trace`: a list that receives ``(rank, first symbol of the left
        part)`` for each join, in order (`steps` replays it).
        """
        if len(ids) < 2 or limit <= 0:
            return ids
        if ranks is None:
            ranks = self.pair_ranks(ids)
        if len(ids) > LONG_WORD:
            return self._merge_heap(ids, ranks, limit, firsts, trace)
        rank_get, new_of, big = self.rank_of.get, self.new_ids, INF_RANK
        if trace is not None and firsts is None:
            firsts = list(range(len(ids)))
        while ranks:
            m = min(ranks)
            if m >= limit:  # ranks at or past the limit never join, so they need no masking
                break
            i = ranks.index(m)
            if trace is not None:
                trace.append((m, firsts[i]))  # type: ignore[index]
            ids[i] = new_of[m]
            del ids[i + 1], ranks[i]
            if firsts is not None:
                del firsts[i + 1]
            if i < len(ranks):
                ranks[i] = rank_get((ids[i] << _SHIFT) | ids[i + 1], big)
            if i:
                ranks[i - 1] = rank_get((ids[i - 1] << _SHIFT) | ids[i], big)
        return ids

    def _merge_heap(self, ids: list[int], ranks: list[int], limit: int, firsts: list[int] | None,
                    trace: list[tuple[int, int]] | None) -> list[int]:
        """`merge` of a long word: parts stay at their first symbol's position, linked to their
        live neighbours; a joined right part gets no next one, so its heap entries go stale."""
        rank_get, new_of, big = self.rank_of.get, self.new_ids, INF_RANK
        n = len(ids)
        nxt = list(range(1, n + 1))  # n: no next part
        prv = list(range(-1, n - 1))
        heap = [r << _SHIFT | i for i, r in enumerate(ranks) if r < limit]  # one int orders as (rank, position)
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            e = pop(heap)
            r, p = e >> _SHIFT, e & _MASK
            q = nxt[p]
            if q >= n or rank_get((ids[p] << _SHIFT) | ids[q]) != r:
                continue  # stale: p was joined into its left part, or its pair changed
            if trace is not None:
                trace.append((r, p))
            new = ids[p] = new_of[r]
            after = nxt[q]
            nxt[q] = n
            nxt[p] = after
            if after < n:
                prv[after] = p
                k = rank_get((new << _SHIFT) | ids[after], big)
                if k < limit:
                    push(heap, k << _SHIFT | p)
            o = prv[p]
            if o >= 0:
                k = rank_get((ids[o] << _SHIFT) | new, big)
                if k < limit:
                    push(heap, k << _SHIFT | o)
        live = []
        i = 0
        while i < n:
            live.append(i)
            i = nxt[i]
        if firsts is not None:
            firsts[:] = live
        return list(map(ids.__getitem__, live))

    def steps(self, ids: Sequence[int], limit: int = INF_RANK) -> list[TraceStep]:
        """``(rank, pair, new id, ids after)`` for each join `merge` makes on `ids`, in order.

        >>> PairMerges({pair_key(1, 2): 0, pair_key(3, 3): 1}, [3, 4]).steps([1, 2, 1, 2])
        [(0, (1, 2), 3, (3, 1, 2)), (0, (1, 2), 3, (3, 3)), (1, (3, 3), 4, (4,))]
        """
        events: list[tuple[int, int]] = []
        self.merge(list(ids), limit, trace=events)
        cur, firsts = list(ids), list(range(len(ids)))
        out = []
        for rank, first in events:
            i = bisect_left(firsts, first)
            pair = (cur[i], cur[i + 1])
            cur[i] = new = self.new_ids[rank]
            del cur[i + 1], firsts[i + 1]
            out.append((rank, pair, new, tuple(cur)))
        return out
