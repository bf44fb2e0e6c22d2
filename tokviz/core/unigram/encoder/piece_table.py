"""`PieceTable`: a SentencePiece model's pieces kept as one string and offsets, and `PieceIndex`,
which finds a piece's ids, both built with numpy.

A ``.model`` file may hold ten million pieces. As a list of strings and dicts of piece -> id they
cost about 300 bytes each and seconds of Python loops; here a piece is a slice of one string,
made when it is asked for, and the lookup is a sorted array of hashes.

What this leaves out: reading the file (`proto`), what the pieces mean (`tokenizer`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from itertools import pairwise

import numpy as np

_CHUNK_CHARS = 1 << 22  # code points converted at once (16 MB as uint32)
_M64 = (1 << 64) - 1
_K1, _K2, _K3 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
# a seed per process: no file can be made to collide on purpose (collisions stay correct, only slower)
_SEED = secrets.randbits(64)


def first_invalid_utf8(blob: bytes, offsets: np.ndarray) -> int | None:
    """The first piece ``blob[offsets[k]:offsets[k+1]]`` that is not valid UTF-8 on its own, or None.

    One decode of the whole blob: when it is valid and no piece starts with a continuation byte,
    every piece starts on a character, so each is valid; otherwise the first bad piece is the
    first that starts with one or holds the first error."""
    arr = np.frombuffer(blob, dtype=np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    nonempty = ends > starts
    firsts = arr[np.minimum(starts, max(len(arr) - 1, 0))] if len(arr) else np.zeros(len(starts), np.uint8)
    bad = np.flatnonzero(nonempty & ((firsts & 0xC0) == 0x80))
    k = int(bad[0]) if len(bad) else None
    try:
        blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = int(np.searchsorted(offsets, exc.start, side="right")) - 1
        k = at if k is None else min(k, at)
    return k


class PieceTable(Sequence[str]):
    """The pieces as a sequence of strings: ``table[i]`` is ``text[starts[i]:starts[i+1]]``.

    `byte_lengths[i]` is piece i's length in UTF-8. Slices give lists."""

    def __init__(self, text: str, starts: np.ndarray, byte_lengths: np.ndarray) -> None:
        self.text = text
        self.starts = starts
        self.byte_lengths = byte_lengths

    @classmethod
    def from_utf8(cls, blob: bytes, offsets: np.ndarray) -> PieceTable:
        """The pieces ``blob[offsets[k]:offsets[k+1]]`` (each valid UTF-8: `first_invalid_utf8`)."""
        arr = np.frombuffer(blob, dtype=np.uint8)
        text = blob.decode("utf-8")
        byte_lengths = np.diff(offsets)
        if len(text) == len(blob):  # ASCII: characters are bytes
            return cls(text, offsets.astype(np.int64), byte_lengths)
        # a piece starts at its byte offset less the continuation bytes before it, counted in
        # blocks of the blob (bounded memory)
        before = np.empty(len(offsets), dtype=np.int64)
        base = done = 0
        block = 1 << 24
        for lo in range(0, len(arr), block):
            cont = np.flatnonzero((arr[lo : lo + block] & 0xC0) == 0x80)
            upto = int(np.searchsorted(offsets, lo + block, side="left"))
            before[done:upto] = base + np.searchsorted(cont, offsets[done:upto] - lo, side="left")
            base += len(cont)
            done = upto
        before[done:] = base
        return cls(text, offsets - before, byte_lengths)

    @classmethod
    def from_strings(cls, pieces: Sequence[str]) -> PieceTable:
        text = "".join(pieces)
        starts = np.zeros(len(pieces) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)), out=starts[1:])
        byte_lengths = np.fromiter((len(p.encode("utf-8", "surrogatepass")) for p in pieces), dtype=np.int64,
                                   count=len(pieces))
        return cls(text, starts, byte_lengths)

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("piece index out of range")
        return self.text[self.starts[i] : self.starts[i + 1]]

    def __iter__(self) -> Iterator[str]:
        text = self.text
        for a, b in pairwise(self.starts.tolist()):
            yield text[a:b]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PieceTable):
            return self.text == other.text and np.array_equal(self.starts, other.starts)
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def char_lengths(self) -> np.ndarray:
        return np.diff(self.starts)

    def chunks(self, ids: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(ids, code points, starts)`` for runs of the pieces `ids` (ascending; all when None):
        the code points (uint32) of the text from the run's first piece to past its last, and
        where each piece starts in them. Bounded memory, whatever the number of pieces."""
        if ids is None:
            ids = np.arange(len(self), dtype=np.int64)
        ends_at = self.starts[ids + 1]
        lo = 0
        while lo < len(ids):
            first = self.starts[ids[lo]]
            hi = max(lo + 1, int(np.searchsorted(ends_at, first + _CHUNK_CHARS, side="right")))
            run = ids[lo:hi]
            last = int(ends_at[hi - 1])
            cps = np.frombuffer(self.text[first:last].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            yield run, cps, self.starts[run] - first
            lo = hi

    def holding(self, char: str, *, inner: str = "") -> np.ndarray:
        """Whether each piece holds `char`; with ``inner="lead"`` only past its first character,
        with ``"tail"`` only before its last."""
        out = np.zeros(len(self), dtype=bool)
        if char not in self.text:
            return out
        c = ord(char)
        for run, cps, starts in self.chunks():
            at = np.flatnonzero(cps == c)
            if not len(at):
                continue
            k = np.searchsorted(starts, at, side="right") - 1
            rel = at - starts[k]
            if inner == "lead":
                keep = rel > 0
            elif inner == "tail":
                keep = rel < self.starts[run[k] + 1] - self.starts[run[k]] - 1
            else:
                keep = np.ones(len(at), dtype=bool)
            out[run[k[keep]]] = True
        return out

    def hashes(self) -> np.ndarray:
        """`piece_hash` of every piece (uint64), computed for all at once."""
        out = np.zeros(len(self), dtype=np.uint64)
        lengths = self.char_lengths()
        for run, cps, starts in self.chunks():
            pos = np.arange(len(cps), dtype=np.int64)
            pos -= np.repeat(starts, lengths[run])
            vals = _mix(cps.astype(np.uint64) * np.uint64(_K1) + pos.astype(np.uint64) * np.uint64(_K2)
                        + np.uint64(_SEED))
            some = lengths[run] > 0
            sums = np.zeros(len(run), dtype=np.uint64)
            if some.any():
                sums[some] = np.add.reduceat(vals, starts[some])
            out[run] = sums + _mix(lengths[run].astype(np.uint64) + np.uint64(_K3))
        return out


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, elementwise (wrapping uint64 arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _mix_int(x: int) -> int:
    x &= _M64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def piece_hash(s: str) -> int:
    """`PieceTable.hashes` of one string."""
    h = sum(_mix_int(ord(c) * _K1 + j * _K2 + _SEED) for j, c in enumerate(s))
    return (h + _mix_int(len(s) + _K3)) & _M64


class PieceIndex:
    """``PieceIndex(table).ids_of(piece)``: the ids whose piece is `piece`, ascending. Also finds
    repeated pieces (`repeats`). A sorted array of hashes, each candidate checked against the
    piece itself."""

    def __init__(self, table: PieceTable) -> None:
        self.table = table
        h = table.hashes()
        self.order = np.argsort(h).astype(np.int64 if len(h) >= 2**31 else np.int32)
        self.sorted = h[self.order]

    def ids_of(self, piece: str) -> list[int]:
        h = np.uint64(piece_hash(piece))
        lo = int(np.searchsorted(self.sorted, h, side="left"))
        hi = int(np.searchsorted(self.sorted, h, side="right"))
        table = self.table
        return [int(i) for i in self.order[lo:hi] if table[int(i)] == piece]

    def repeats(self) -> list[list[int]]:
        """The groups (ids ascending) of pieces that occur more than once."""
        s = self.sorted
        same = np.flatnonzero(s[1:] == s[:-1])
        if not len(same):
            return []
        groups: dict[str, list[int]] = {}
        table = self.table
        for i in np.unique(np.concatenate([self.order[same], self.order[same + 1]])).tolist():
            groups.setdefault(table[i], []).append(i)
        return [g for g in groups.values() if len(g) > 1]
