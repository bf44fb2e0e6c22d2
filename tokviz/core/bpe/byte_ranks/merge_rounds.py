"""`BatchMerger`: tiktoken's merge loop over many chunks at once, one join per chunk per round.

Chunks of about the same length share a table with a row per byte position and a column per
chunk (`_merge_block`): each part keeps its place, holding its id, the key ``rank * width + place``
of joining it with the next live part (``n * width`` where it joins nothing or is dead) and links
to its live neighbours. A round takes each column's minimum key (the lowest rank, leftmost of
equals: one fast reduction down the columns), joins those pairs, marks the right parts dead and
looks up the ranks of the (at most two) new pairs of every chunk in one `PairTable` call; only
the chunks that join touch anything else.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from .pair_ranks import PairRanks, byte_pair_ranks, shared_ids
from .pair_table import PairTable

_NONE = np.iinfo(np.int32).max  # "cannot join" in the int32 arrays of a batch (ids stay below it)
_MIN_WIDTH = 8  # the narrowest table of a batch (fewer tables, fewer rounds)
_KEY32_MAX = _NONE  # keys rank * width + place up to this fit int32 (beyond: int64)


class BatchMerger:
    """``merge_all(pieces, thr)``: the ids of each piece as `rank_bpe`'s one-piece loop gives them.

    Threads may share one: calls run one at a time (the pair table grows in place)."""

    def __init__(self, enc: Mapping[bytes, int], vocab: Sequence[bytes | None], big: int) -> None:
        n = self._n = len(vocab)
        if n >= _NONE:
            raise ValueError(f"a vocabulary of {n} ids is too big for int32 arrays")
        self._enc = enc
        self._shared_ids: list[int] | None = None  # `shared_ids`, made for the first ids as tuples
        self._lock = threading.Lock()
        self._pairs = PairTable(PairRanks(enc, vocab, big))
        self._byte_ids = np.array([enc[bytes((b,))] for b in range(256)], np.int32)
        self._byte_pairs = np.minimum(byte_pair_ranks(enc, big), _NONE).astype(np.int32)  # [a * 256 + b]

    @property
    def _shared(self) -> list[int]:
        if self._shared_ids is None:
            self._shared_ids = shared_ids(self._enc, self._n)
        return self._shared_ids

    def _ranks(self, left: np.ndarray, right: np.ndarray, limit: int) -> np.ndarray:
        """Ranks of joining `left` and `right` (int32; `_NONE` where they do not join below `limit`)."""
        r = self._pairs.lookup(left.astype(np.int64) * self._n + right)
        return np.where(r < limit, r, _NONE).astype(np.int32)

    def merge_all(self, pieces: Sequence[bytes], thr: int) -> list[tuple[int, ...]]:
        """The ids of each piece (each at least 2 bytes), joining only tokens of rank < `thr`."""
        with self._lock:
            return self._merge_all(pieces, thr, False)

    def merge_texts(self, pieces: Sequence[bytes], thr: int) -> list[str]:
        """`merge_all`, each piece's ids as one string of decimal ids separated by spaces (no
        tuples made on the way)."""
        with self._lock:
            return self._merge_all(pieces, thr, True)

    def _merge_all(self, pieces: Sequence[bytes], thr: int, as_text: bool) -> list:
        out: list = [()] * len(pieces)
        lens = np.fromiter(map(len, pieces), np.int64, len(pieces))
        width = np.maximum(_MIN_WIDTH, 1 << np.ceil(np.log2(np.maximum(lens, 1))).astype(np.int64))
        for w in np.unique(width).tolist():  # pieces of about the same length together
            where = np.flatnonzero(width == w).tolist()
            some = list(map(pieces.__getitem__, where))
            for i, t in zip(where, self._merge_block(some, w, min(thr, _NONE), as_text)):
                out[i] = t
        return out

    def _merge_block(self, pieces: list[bytes], width: int, limit: int, as_text: bool) -> list:
        """`merge_all` of pieces of at most `width` (a power of two) bytes, laid out as a
        ``(width, pieces)`` table: part ``w`` of piece ``c`` at ``w * R + c``. Parts stay where they
        started (a joined right part is marked dead), so a piece's lowest rank and leftmost place
        is one minimum down its column of keys ``rank * width + w``."""
        n_pieces, n = len(pieces), self._n
        lens = np.fromiter(map(len, pieces), np.int64, n_pieces)
        data = np.frombuffer(b"".join(pieces), np.uint8)
        col = np.repeat(np.arange(n_pieces), lens)
        pos = np.arange(len(data)) - np.repeat(np.cumsum(lens) - lens, lens)
        at = pos * n_pieces + col
        size = width * n_pieces
        key_type = np.int32 if (n + 1) * width <= _KEY32_MAX else np.int64
        none = n * width  # the key of a part that joins nothing (ranks are below n)
        shift = width.bit_length() - 1
        ids = np.zeros(size, np.int32)
        ids[at] = self._byte_ids[data]
        keys = np.full(size, none, key_type)
        inner = pos < lens[col] - 1  # a part with a next one
        pr = self._byte_pairs[data[:-1].astype(np.int32) * 256 + data[1:]][inner[:-1]] if len(data) > 1 else None
        if pr is not None:
            keys[at[inner]] = np.where(pr < limit, pr, n).astype(key_type) * width + pos[inner]
        nxt = np.repeat(np.arange(1, width + 1, dtype=np.int32), n_pieces)
        nxt[at[~inner]] = width  # the last part: no next one
        prv = np.repeat(np.arange(-1, width - 1, dtype=np.int32), n_pieces)
        alive = np.zeros(size, bool)
        alive[at] = True
        table = keys.reshape(width, n_pieces)
        while True:
            low = table.min(axis=0)
            act = np.flatnonzero(low < none)
            if not len(act):
                break
            low = low[act]
            p = (low & (width - 1)).astype(np.int64)
            f = p * n_pieces + act
            ids[f] = low >> shift  # the joined part takes the rank as its id
            fb = nxt[f].astype(np.int64) * n_pieces + act  # the right part, now dead
            keys[fb] = none
            alive[fb] = False
            c = nxt[fb]
            nxt[f] = c
            keys[f] = none
            right = c < width
            fl, fc = f[right], c[right].astype(np.int64) * n_pieces + act[right]
            prv[fc] = p[right]
            q = prv[f]
            left = q >= 0
            fq, fm = q[left].astype(np.int64) * n_pieces + act[left], f[left]
            r = self._ranks(np.concatenate((ids[fl], ids[fq])), np.concatenate((ids[fc], ids[fm])), limit)
            r = np.minimum(r, n).astype(key_type) * width
            keys[fl] = r[: len(fl)] + p[right]
            keys[fq] = r[len(fl) :] + q[left]
        alive2 = alive.reshape(width, n_pieces).T
        live = ids.reshape(width, n_pieces).T[alive2].tolist()
        ends = np.cumsum(alive2.sum(axis=1)).tolist()
        if as_text:
            names = list(map(str, live))
            return [" ".join(names[a:b]) for a, b in zip([0, *ends], ends)]
        flat = list(map(self._shared.__getitem__, live))
        return [tuple(flat[a:b]) for a, b in zip([0, *ends], ends)]
