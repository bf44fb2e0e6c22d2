"""`CompiledMerger`: tiktoken's merge loop over many pieces in one compiled call (`kernels`, numba).

Same answers as `merge_rounds.BatchMerger` and the one-chunk loop; used for big batches when the
compiled kernels are on (`tokviz.core.jit`), where importing numba costs less than the numpy rounds
would. The kernel sees only arrays built here from a validated ``{bytes: rank}`` (ranks distinct,
every byte a token). What this leaves out: choosing it and loading the kernels (`mergers`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType

import numpy as np

from .pair_ranks import shared_ids
from .word_cache_arrays import WordCacheArrays

CHUNK_LONGEST = 4096  # bytes: `chunk_ids` merges chunks of up to this many (a list with a longer one: None)
# chunks a call at most: the kernel holds the GIL (its cache is shared by the threads), a few milliseconds a call
CALL_CHUNKS = 8192


class CompiledMerger:
    """``merge_all(pieces, thr)``: the ids of each piece, as `BatchMerger.merge_all` gives them."""

    def __init__(self, kernels: ModuleType, enc: Mapping[bytes, int], n_vocab: int) -> None:
        self._k = kernels
        self._shared = shared_ids(enc, n_vocab)
        self._names: list[str] | None = None  # each id in decimal, made on first use
        self._widths = np.zeros(0, np.int64)
        tokens = list(enc)
        rank = np.fromiter(enc.values(), np.int64, len(tokens))
        size = np.fromiter(map(len, tokens), np.int64, len(tokens))
        start = np.cumsum(size) - size
        self._tok_data = np.frombuffer(b"".join(tokens), np.uint8)
        self._start_of = np.zeros(int(rank.max()) + 1, np.int64)  # where rank r's bytes start
        self._start_of[rank] = start
        self._bits = max(8, (len(tokens) * 5 // 4).bit_length())  # under 80% full: a smaller table, fewer cache misses
        self._table = kernels.build_table(self._tok_data, start, size, rank, self._bits)
        self._byte_ids = np.array([enc[bytes((b,))] for b in range(256)], np.int64)
        self._pairs = kernels.byte_pair_ranks(self._table, self._bits, self._tok_data, self._start_of)
        self.cache = WordCacheArrays(kernels, CHUNK_LONGEST)  # `chunk_ids`'s
        self._work = np.empty((3, CHUNK_LONGEST + 1), np.int64)  # its scratch (it holds the GIL)

    def chunk_ids(self, chunks: Sequence[str]) -> np.ndarray | None:
        """The ids of `chunks` laid end to end, with every token (no step limit), in one call that
        keeps the chunks' ids in a cache of arrays (`WordCacheArrays`: no dictionary lookup, set or
        tuple per chunk); None when a chunk is longer than `CHUNK_LONGEST` bytes or holds a lone
        surrogate (the caller's own path says what to do with it)."""
        try:
            data = "".join(chunks).encode("utf-8")
        except UnicodeEncodeError:
            return None
        counts = np.fromiter(map(len, chunks), np.int64, len(chunks))
        arrays = self.cache.arrays
        out = self._k.chunk_ids(data, counts, self._k.BIG, self._byte_ids, self._pairs, self._table, self._bits,
                                self._tok_data, self._start_of, *arrays, self._work)
        if arrays[3][3] and self.cache.after(arrays):
            return None
        return out

    def lists_ids(self, chunk_lists: Iterable[Sequence[str]], other: Callable[[Sequence[str]], list[int]]) -> list[int]:
        """The ids of every list of chunks one after the other (`chunk_ids`, or `other` for a
        list it leaves)."""
        out: list[int] = []
        for whole in chunk_lists:
            for a in range(0, len(whole), CALL_CHUNKS):
                chunks = whole[a : a + CALL_CHUNKS] if len(whole) > CALL_CHUNKS else whole
                ids = self.chunk_ids(chunks)
                out.extend(other(chunks) if ids is None else ids.tolist())
        return out

    def lists_text(self, chunk_lists: Iterable[Sequence[str]], other: Callable[[Sequence[str]], list[int]]) -> str:
        """`lists_ids` as decimal numbers separated by spaces."""
        names = self._id_names()
        return " ".join(map(names.__getitem__, self.lists_ids(chunk_lists, other)))

    def _id_names(self) -> list[str]:
        """Each id in decimal, made on first use."""
        if self._names is None:
            self._names = list(map(str, range(len(self._shared))))
            self._widths = np.fromiter(map(len, self._names), np.int64, len(self._names)) + 1  # and a space
        return self._names

    def _merge(self, pieces: Sequence[bytes], thr: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, counts)``: the ids of all pieces one after the other, how many each has."""
        lens = np.fromiter(map(len, pieces), np.int64, len(pieces))
        starts = np.cumsum(lens) - lens
        data = np.frombuffer(b"".join(pieces), np.uint8)
        return self._k.merge_pieces(data, starts, lens, min(int(thr), int(self._k.BIG)), self._byte_ids,
                                    self._pairs, self._table, self._bits, self._tok_data, self._start_of)

    def merge_all(self, pieces: Sequence[bytes], thr: int) -> list[tuple[int, ...]]:
        """The ids of each piece, joining only tokens of rank < `thr`."""
        ids, counts = self._merge(pieces, thr)
        flat = list(map(self._shared.__getitem__, ids.tolist()))
        ends = np.cumsum(counts).tolist()
        return list(map(tuple, map(flat.__getitem__, map(slice, [0, *ends[:-1]], ends))))  # no Python loop

    def merge_texts(self, pieces: Sequence[bytes], thr: int) -> list[str]:
        """`merge_all`'s ids of each piece as decimal numbers separated by spaces: all written in
        one string, each piece's a slice of it (no tuple per piece)."""
        ids, counts = self._merge(pieces, thr)
        if not len(ids):
            return [""] * len(pieces)
        whole = " ".join(map(self._id_names().__getitem__, ids.tolist()))
        start = np.concatenate(([0], np.cumsum(self._widths[ids])))  # where id k starts in `whole`
        ends = np.cumsum(counts)
        a = start[ends - counts].tolist()
        b = (start[ends] - 1).tolist()  # without the space after the last id
        return list(map(whole.__getitem__, map(slice, a, b)))
