"""The Unigram Viterbi of `lattice` compiled with numba (imported only when `tokviz.core.jit` says so).

The same algorithm as `viterbi.exact_path` over a whole text, with the library's own arithmetic
done natively: float32 node scores and resets past +-100000 for sentencepiece, doubles for
tokenizers. As in both libraries, a node's first candidate always takes it, whatever its score
(scores of -1e308 add up to -inf, and an -inf candidate must still set the node), and a reset
moves only the nodes already set: a node is set once its start (`back_start`) is not -1, so
back-pointers always lead back to node 0 and nothing is read out of bounds (`CompiledPieces`
refuses non-finite scores and ids without one before any kernel runs).

Pieces sit in a trie over code points kept as one open-addressing hash table: the child of node
``v`` by code point ``c`` is stored under the key ``v << 21 | c`` (exact, no hashing collisions to
resolve; one row ``(key, child)`` per slot), so the pieces matching at a position are found by
walking the text from there until the trie has no child. Every walk starts at the root, whose
children by the BMP's code points are also kept in a plain array (`root_children`): one hash
lookup fewer a position, about 7% of the Viterbi's time on English. `whole_pieces` runs it over many short
texts in one call (is each piece its own best path? the glitch finder).

`fused_ids` fuses each run of unknown characters into the unknown token as it reads the path back,
as sentencepiece does without byte fallback: a line costs one call and one list.

What this leaves out: choosing this path (`lattice.PieceLattice`), byte fallback.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tokviz.core.text.trie_table import EMPTY, SHIFT, find_slot, rehash
from tokviz.core.unigram.encoder.piece_table import PieceTable

from .piece_hashes import joined_code_points, text_code_points

_RESET = 100000.0  # sentencepiece's kScoreResetThreshold
ROOT_CHARS = 1 << 16  # the root's children by these code points sit in an array (`root_children`)


@njit(cache=True, nogil=True)
def _insert(table, bits, node_piece, n_nodes, cps, starts, lengths, pids):  # pragma: no cover - compiled
    """Add pieces to the trie (`table` with ``2**bits`` rows, kept at most half full: it doubles
    when it would be more; `node_piece` each node's piece id or -1, grown as needed):
    ``(table, bits, node_piece, n_nodes)`` after."""
    size = 1 << bits
    shift, mask = np.uint64(64 - bits), size - 1
    for p in range(len(starts)):
        node = 0
        for j in range(starts[p], starts[p] + lengths[p]):
            key = (node << SHIFT) | np.int64(cps[j])
            s = find_slot(table, key, shift, mask)
            if table[s, 0] == EMPTY:
                if 2 * (n_nodes + 1) > size:
                    bits += 1
                    size = 1 << bits
                    shift, mask = np.uint64(64 - bits), size - 1
                    table = rehash(table, bits)
                    s = find_slot(table, key, shift, mask)
                if n_nodes >= len(node_piece):
                    grown = np.full(2 * len(node_piece), -1, dtype=np.int32)
                    grown[: len(node_piece)] = node_piece
                    node_piece = grown
                table[s, 0] = key
                table[s, 1] = n_nodes
                n_nodes += 1
            node = table[s, 1]
        node_piece[node] = pids[p]
    return table, bits, node_piece, n_nodes


def root_children(table: np.ndarray) -> np.ndarray:
    """The trie root's child by each code point below `ROOT_CHARS`, -1 for none: the first step of
    every walk is read from this array, not the hash table (about a fifth of the lookups)."""
    root = np.full(ROOT_CHARS, -1, dtype=np.int64)
    keys = table[:, 0]
    first = (keys != EMPTY) & (keys >> SHIFT == 0) & (keys < ROOT_CHARS)  # the root's own keys are code points
    root[keys[first]] = table[first, 1]
    return root


@njit(cache=True, nogil=True)
def _relax(cps, lo, n, table, root, node_piece, bits, scores, unk, reset, best, back, back_start):  # pragma: no cover
    """The Viterbi over ``cps[lo:lo+n]`` (nodes 0..n; `best` holds the start score at node 0,
    `back_start` -1 at nodes 1..n: not set yet): fills the best scores and each node's best piece
    and where it starts. `root`: `root_children` of `table`."""
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    frontier = 0
    for st in range(n):
        b = best[st]
        if reset and (b < -_RESET or b > _RESET):
            for k in range(st + 1, frontier + 1):
                if back_start[k] >= 0:
                    best[k] = best[k] - b
            best[st] = 0
            b = best[st]
        node = 0
        single = False
        end = st
        while end < n:
            c = np.int64(cps[lo + end])
            if node == 0 and c < ROOT_CHARS:
                node = root[c]
                if node < 0:
                    break
            else:
                s = find_slot(table, (node << SHIFT) | c, shift, mask)
                if table[s, 0] == EMPTY:
                    break
                node = table[s, 1]
            end += 1
            pid = node_piece[node]
            if pid >= 0:
                if end == st + 1:
                    single = True
                c = b + scores[pid]
                if back_start[end] < 0 or c > best[end]:
                    best[end] = c
                    back[end] = pid
                    back_start[end] = st
                if end > frontier:
                    frontier = end
        if not single:  # no one-character piece: the unknown edge
            c = b + unk
            if back_start[st + 1] < 0 or c > best[st + 1]:
                best[st + 1] = c
                back[st + 1] = -1
                back_start[st + 1] = st
            if st + 1 > frontier:
                frontier = st + 1


@njit(cache=True, nogil=True)
def _back_pointers(cps, table, root, node_piece, bits, scores, unk, reset):  # pragma: no cover
    """Each node's best piece and where it starts, over the whole of `cps` from score 0."""
    n = len(cps)
    best = np.full(n + 1, -np.inf, dtype=scores.dtype)
    best[0] = 0
    back = np.empty(n + 1, dtype=np.int32)
    back_start = np.full(n + 1, -1, dtype=np.int64)
    _relax(cps, 0, n, table, root, node_piece, bits, scores, unk, reset, best, back, back_start)
    return back, back_start


@njit(cache=True, nogil=True)
def _viterbi(cps, table, root, node_piece, bits, scores, unk, reset):  # pragma: no cover
    n = len(cps)
    back, back_start = _back_pointers(cps, table, root, node_piece, bits, scores, unk, reset)
    count = 0
    t = n
    while t > 0:
        if not 0 <= back_start[t] < t:  # every node is set (each start sets the next one)
            raise ValueError("the Viterbi left a node without a best piece")
        count += 1
        t = back_start[t]
    ids = np.empty(count, dtype=np.int64)
    ends = np.empty(count, dtype=np.int64)
    t = n
    k = count - 1
    while t > 0:
        ids[k] = back[t]
        ends[k] = t
        t = back_start[t]
        k -= 1
    return ids, ends


@njit(cache=True, nogil=True)
def _fused(utf32, table, root, node_piece, bits, scores, unk, reset, unk_id):  # pragma: no cover
    """`_viterbi`'s ids alone over the text `utf32` (its UTF-32-LE bytes: a line's array is made
    here, cheaper than in Python), each run of unknown characters as the one id `unk_id` (as
    sentencepiece's ids without byte fallback): read back from the end into one array."""
    cps = np.frombuffer(utf32, dtype=np.uint32)
    n = len(cps)
    back, back_start = _back_pointers(cps, table, root, node_piece, bits, scores, unk, reset)
    out = np.empty(n, dtype=np.int32)  # (the trie's ids are 32-bit: `CompiledPieces`)
    k = n
    t = n
    after_unknown = False  # the piece after this one (read before it) is an unknown character
    while t > 0:
        if not 0 <= back_start[t] < t:
            raise ValueError("the Viterbi left a node without a best piece")
        pid = back[t]
        if pid >= 0 or not after_unknown:
            k -= 1
            out[k] = pid if pid >= 0 else unk_id
        after_unknown = pid < 0
        t = back_start[t]
    return out[k:]


@njit(cache=True, nogil=True)
def _whole(cps, starts, table, root, node_piece, bits, scores, unk, reset, want):  # pragma: no cover
    """For each text ``cps[starts[k]:starts[k+1]]``: is its best path the one piece ``want[k]``?"""
    n_max = 0
    for k in range(len(want)):
        n_max = max(n_max, starts[k + 1] - starts[k])
    best = np.empty(n_max + 1, dtype=scores.dtype)
    back = np.empty(n_max + 1, dtype=np.int32)
    back_start = np.empty(n_max + 1, dtype=np.int64)
    out = np.zeros(len(want), dtype=np.bool_)
    for k in range(len(want)):
        lo, n = starts[k], starts[k + 1] - starts[k]
        if n == 0:
            continue
        best[0] = 0
        for t in range(1, n + 1):
            best[t] = -np.inf
            back_start[t] = -1
        _relax(cps, lo, n, table, root, node_piece, bits, scores, unk, reset, best, back, back_start)
        out[k] = back_start[n] == 0 and back[n] == want[k]
    return out


def checked_scores(scores, unk_score: float, dtype) -> tuple[np.ndarray, np.floating]:
    """`scores` and `unk_score` as `dtype`, refused (ValueError) unless every one is a finite number
    there: both libraries refuse other scores, and the kernels are only tested on finite ones."""
    with np.errstate(over="ignore", invalid="ignore"):  # float32 overflow -> inf, refused below
        arr = np.asarray(scores, dtype=np.float64).astype(dtype)
        unk = dtype(unk_score)
    if arr.ndim != 1 or not (np.isfinite(arr).all() and np.isfinite(unk)):
        raise ValueError("Unigram scores must be finite numbers")
    return arr, unk


class CompiledPieces:
    """The trie of a lattice's pieces and their scores, for `best_path`.

    `ids` maps piece -> id (the pieces the Viterbi may use); `scores[id]` is the score it adds;
    `f32`: sentencepiece's float32 arithmetic with resets (else doubles, tokenizers')."""

    def __init__(self, ids: dict[str, int], scores, unk_score: float, *, f32: bool) -> None:
        pids = np.fromiter(ids.values(), dtype=np.int64, count=len(ids))
        self._setup(PieceTable.from_strings(list(ids)), np.arange(len(ids), dtype=np.int64), pids, scores,
                    unk_score, f32)

    @classmethod
    def from_table(cls, table: PieceTable, rows: np.ndarray, pids: np.ndarray, scores, unk_score: float, *,
                   f32: bool) -> CompiledPieces:
        """The pieces ``table[rows[k]]`` with ids ``pids[k]`` (`rows` ascending, pieces distinct)."""
        out = cls.__new__(cls)
        out._setup(table, rows, pids, scores, unk_score, f32)
        return out

    def _setup(self, table: PieceTable, rows: np.ndarray, pids: np.ndarray, scores, unk_score: float,
               f32: bool) -> None:
        self.dtype = np.float32 if f32 else np.float64
        self.scores, self.unk = checked_scores(scores, unk_score, self.dtype)
        # the kernels index scores with the ids, and keep them in 32 bits
        n = len(self.scores)
        if n > np.iinfo(np.int32).max or (len(pids) and not 0 <= pids.min() <= pids.max() < n):
            raise ValueError("a piece id has no score")
        pid32 = pids.astype(np.int32)
        # grown while built (at most half full), in runs of pieces: the code points of a run at a time
        bits = max(8, int(2 * len(rows) + 1).bit_length())
        trie = np.full((1 << bits, 2), EMPTY, dtype=np.int64)
        node_piece = np.full(max(len(rows), 16), -1, dtype=np.int32)
        n_nodes = 1
        lengths = table.char_lengths()
        done = 0
        for run, cps, starts in table.chunks(rows):
            k = len(run)
            trie, bits, node_piece, n_nodes = _insert(trie, bits, node_piece, n_nodes, cps, starts, lengths[run],
                                                      pid32[done : done + k])
            done += k
        self.node_piece = node_piece[:n_nodes].copy()
        del node_piece
        # pieces share prefixes (250k pieces of 1.35M characters make 264k nodes): the final table
        # is at most half full, no bigger
        self.bits = max(8, int(2 * n_nodes).bit_length())
        self.table = trie if self.bits == bits else rehash(trie, self.bits)
        self.root = root_children(self.table)
        self.f32 = f32
        self._trie = (self.table, self.root, self.node_piece, self.bits, self.scores, self.unk, f32)  # `_fused`'s

    def whole_pieces(self, texts: list[str], want: list[int]) -> np.ndarray:
        """For each of `texts` (from score 0): is its best path the single piece ``want[k]``?"""
        cps, starts, _ = joined_code_points(texts)
        return _whole(cps, np.append(starts, len(cps)), self.table, self.root, self.node_piece, self.bits, self.scores,
                      self.unk, self.f32, np.asarray(want, dtype=np.int64))

    def fused_ids(self, s: str, unk_id: int) -> np.ndarray:
        """The ids of `best_path` over `s` with each run of unknown characters as `unk_id`."""
        return _fused(s.encode("utf-32-le", "surrogatepass"), *self._trie, unk_id)

    def best_path(self, s: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids, ends) of the best path over `s` from score 0: ids -1 for unknown characters,
        ends in characters."""
        return _viterbi(text_code_points(s), self.table, self.root, self.node_piece, self.bits, self.scores, self.unk,
                        self.f32)
