"""`BatchMerger`: tiktoken's merge loop over many chunks at once, one join per chunk per round.

The parts of every chunk of a batch lie in flat arrays (id, chunk number, rank of joining the part
with the next one; `big` where it cannot join or the next part belongs to another chunk). A round
finds each chunk's lowest rank (leftmost of equals), joins that pair, drops the finished chunks and
looks up the ranks of the (at most two) new pairs of every chunk in one `PairTable` call.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import add

import numpy as np

from .pair_table import PairTable
from .token_hashes import TokenHashes

_SLICE = 4096  # pairs looked up per C call
_NONE = np.iinfo(np.int32).max  # "cannot join" in the int32 arrays of a batch (ids stay below it)


class BatchMerger:
    """``merge_all(pieces, thr)``: the ids of each piece as `rank_bpe`'s one-piece loop gives them.

    Threads may share one: calls run one at a time (the pair table grows in place)."""

    def __init__(self, enc: Mapping[bytes, int], vocab: Sequence[bytes | None], big: int) -> None:
        n = self._n = len(vocab)
        get = enc.get
        at = vocab.__getitem__

        hashes = TokenHashes(enc, vocab)

        def missing(keys: np.ndarray) -> np.ndarray:
            out = np.full(len(keys), big, np.int64)
            left, right = np.divmod(keys, n)
            maybe = np.flatnonzero(hashes.may_be_token(left, right))  # the others are no token
            left, right = left[maybe].tolist(), right[maybe].tolist()
            ranks: list[int] = []
            for i in range(0, len(left), _SLICE):  # one C call holds the GIL: keep each short
                joined = map(add, map(at, left[i : i + _SLICE]), map(at, right[i : i + _SLICE]))
                ranks.extend(map(get, joined, repeat(big)))
            out[maybe] = ranks
            return out

        shared: list[int] = list(range(n))  # the dict's own int objects, so the cached tuples
        for r in enc.values():  # hold no new copy of each id (509 000 ids were 16 MB)
            shared[r] = r
        self._shared = shared
        self._lock = threading.Lock()
        self._pairs = PairTable(missing)
        if n >= _NONE:
            raise ValueError(f"a vocabulary of {n} ids is too big for int32 arrays")
        byte_ids = np.array([enc[bytes((b,))] for b in range(256)], np.int64)
        pairs = missing(np.repeat(byte_ids, 256) * n + np.tile(byte_ids, 256))  # [a * 256 + b]
        self._byte_ids = byte_ids.astype(np.int32)
        self._byte_pairs = np.minimum(pairs, _NONE).astype(np.int32)

    def _ranks(self, left: np.ndarray, right: np.ndarray, limit: int) -> np.ndarray:
        """Ranks of joining `left` and `right` (int32; `_NONE` where they do not join below `limit`)."""
        r = self._pairs.lookup(left.astype(np.int64) * self._n + right)
        return np.where(r < limit, r, _NONE).astype(np.int32)

    def merge_all(self, pieces: Sequence[bytes], thr: int) -> list[tuple[int, ...]]:
        """The ids of each piece (each at least 2 bytes), joining only tokens of rank < `thr`."""
        with self._lock:
            return self._merge_all(pieces, thr)

    def _merge_all(self, pieces: Sequence[bytes], thr: int) -> list[tuple[int, ...]]:
        big = _NONE
        limit = min(thr, big)
        lens = np.fromiter(map(len, pieces), np.int64, len(pieces))
        data = np.frombuffer(b"".join(pieces), np.uint8)
        ids = self._byte_ids[data]
        pid = np.repeat(np.arange(len(pieces), dtype=np.int32), lens)
        size = len(ids)
        pr = self._byte_pairs[data[:-1].astype(np.int32) * 256 + data[1:]]
        if limit < big:
            pr = np.where(pr < limit, pr, big).astype(np.int32)
        pr = np.append(pr, np.int32(big))
        pr[np.cumsum(lens) - 1] = big  # the last part of a piece joins nothing
        done_ids, done_pid = [], []
        while size:
            start = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
            lowest = np.repeat(np.minimum.reduceat(pr, start), np.diff(np.r_[start, size]))
            finished = lowest == big
            if finished.any():
                done_ids.append(ids[finished])
                done_pid.append(pid[finished])
            at = np.flatnonzero((pr == lowest) & ~finished)
            if not len(at):
                break
            cp = pid[at]
            at = at[np.r_[True, cp[1:] != cp[:-1]]]  # the leftmost lowest pair of each piece
            ids[at] = pr[at]
            keep = ~finished
            keep[at + 1] = False
            at = np.cumsum(keep)[at] - 1  # where the joined parts are once the rest is dropped
            ids, pid, pr = ids[keep], pid[keep], pr[keep]
            size = len(ids)
            pr[at] = big
            nxt = at[at + 1 < size]
            nxt = nxt[pid[nxt + 1] == pid[nxt]]
            pr[nxt] = self._ranks(ids[nxt], ids[nxt + 1], limit)
            prv = at[at > 0] - 1
            prv = prv[pid[prv] == pid[prv + 1]]
            pr[prv] = self._ranks(ids[prv], ids[prv + 1], limit)
        all_ids = np.concatenate(done_ids)
        all_pid = np.concatenate(done_pid)
        order = np.argsort(all_pid, kind="stable")
        flat = list(map(self._shared.__getitem__, all_ids[order].tolist()))
        ends = np.cumsum(np.bincount(all_pid, minlength=len(pieces))).tolist()
        return [tuple(flat[a:b]) for a, b in zip([0, *ends], ends)]
