"""The Unigram Viterbi of SentencePiece, Hugging Face tokenizers and tokviz's trained models, exactly,
including the libraries' floats.

Both libraries run the same "optimized" Viterbi (sentencepiece's ``EncodeOptimized``, tokenizers'
``encode_optimized``): positions left to right; from each start, every piece that matches there
relaxes the node at its end (``candidate > best`` replaces, so on a tie the earliest start, the
longest last piece, wins); when no one-character piece matches, an unknown edge of one character
scored ``min score - 10`` does. They differ in their numbers:

- tokenizers (`F64`) adds f64 scores: exactly Python's floats.
- trained models (`INT`, `tokviz.core.unigram.tokenizer`) add integer scores (units of 2**-20
  nat), exactly at any size. The tie rule is the same strict ``>`` in the same order (higher
  total, then longest last piece, recursively to the left), so only the numbers differ: the plain
  path (`exact`, over a whole word or text: no segment cache) adds Python ints, and the compiled
  one (doubles) takes a text only when no sum on it can reach 2**53 (`compiled_max_len`), where
  doubles add integers exactly.
- sentencepiece 0.2.3 (`F32_SP`) adds float32 scores into float32 node scores, and whenever the
  score where a piece starts passes +-100000 it subtracts that score from every node reached so
  far (a "reset" that keeps the floats small). User-defined symbols score
  ``float(0.1 * (length in bytes - 1))``; unused pieces are skipped.

Running float32 arithmetic per edge in Python is slow, and caching by word is only sound when a word's decisions do
not depend on the score accumulated before it. So a text is cut where no piece can span (before each ``▁`` when no
piece holds one inside), each segment's best path is computed once from zero in doubles (cached) together with how
close its closest decision was, and a segment is reused as is when that margin exceeds what rounding at the
accumulated score can move (a float32 addition whose result is at most M in size errs by at most half an ulp of M's
binade, <= 2**-24 M; two paths of d1 and d2 edges can swap only when their gap is at most d1 + d2 such errors, and
the margin is the gap / (d1 + d2 + 1)); otherwise it is recomputed with the exact arithmetic from the exact
accumulated score (kept lazily: only replayed along the chosen paths when a close segment needs it). The result
equals the library's on every input, at the speed of a word cache. A long text first sorts out the segments whose
margin stands at any score (numpy over the cached margins), so its loop only adds their totals (`_scan`); a new word
reuses the nodes of the words met before that start the same way (`viterbi.relative_path`).

With numba installed, all of this is replaced by the compiled Viterbi of `kernels` (the same algorithm over the
whole text with the library's arithmetic done natively) once that pays for numba's import (`COMPILE_MIN`: about half
a megabyte on the plain path); the plain path above stays for installs without it. A model whose float32 scores are
large enough for a sum to reach +-inf (and then NaN, which holds to the end of the text) is run by one exact Viterbi
over the whole text instead.

What this leaves out: the tokenizers around it (byte fallback, ids), n-best and sampling (on `edges_by_end`'s edges).
"""

from __future__ import annotations

import array
import math
import sys
from collections.abc import Collection, Sequence
from functools import cached_property
from itertools import chain
from math import frexp, ldexp
from operator import itemgetter

import numpy as np

from tokviz.core import jit
from tokviz.core.errors import EncodeError
from tokviz.core.gc_pause import collector_paused
from tokviz.core.processes.fork import here_and_forked
from tokviz.core.processes.parallel import usable
from tokviz.core.unigram.encoder.piece_table import PieceTable

from .batch import MAX_SEGMENT, batch_relative, relative_columns, relative_tuples
from .piece_hashes import PieceHashes
from .scan import scan
from .scores import F32_SP, checked_scores, f32
from .segments import MARK, absolute_ends, cut_segments, inner_mark_pattern, segment_strings
from .viterbi import RESET, exact_path, relative_path

F64 = "f64"
INT = "int"
_EXACT_DOUBLES = 2**53  # integers below this in size are added exactly by doubles
UNK_PENALTY = 10.0
FLT_MAX = 3.4028234663852886e38
_CACHE_SIZE = 200_000
_PREFIXES_SIZE = 200_000  # node states kept by prefix (about 36 MB at most)
_BATCH = 48  # this many uncached segments are computed together in numpy
_FILL_CHUNK = 4096  # up to this many at once (a megabyte's new words at once: 20 MB more at the peak)
_PARALLEL_MIN = 6_000  # this many new segments are split with a forked child (`relative_many`)
_CHAIN_LOOP = 400  # up to this many segments, `chain_scores` adds in Python
_SCAN_MIN = 256  # from this many segments on, `best_segments` sorts them out first (`_scan`)
_ROUND = array.array("f", [0.0])  # storing a float in it rounds it to float32
KERNELS = "tokviz.core.unigram.encoder.kernels"
# loading the compiled Viterbi (numba, cached kernels: ~0.25 s of CPU once) costs what the plain path loses to it
# on this many characters (rent until renting cost the price: 512 KiB as long either way, 1 MiB faster compiled);
# a vocabulary of COMPILE_PIECES is compiled from its first text (plain tables: ~500 B a piece, the trie's ~200)
COMPILE_MIN = 600_000
COMPILE_PIECES = 500_000
_PLAIN_CHARS = [0]  # characters this process has run through the plain path with kernels allowed
Edge = tuple[int, int, int]  # (start, end, id) in characters of the segment; id -1 = unknown


class PieceLattice:
    """The pieces a Viterbi may use, with their scores, and the cached best paths.

    `pieces[i]`/`scores[i]` for every id; `edge_ids` the ids that are edges (in the trie);
    `unk_id` the id of unknown edges (None: an unknown character is an error, as in tokenizers);
    `user_defined` ids that score as sentencepiece's user-defined symbols (F32_SP only). With
    `INT`, scores are integers and `unk_score` must be given.
    """

    def __init__(self, pieces: Sequence[str], scores: Sequence[float], *, mode: str = F64,
                 edge_ids: Collection[int] | None = None, unk_id: int | None = None,
                 unk_score: float | None = None, user_defined: Collection[int] = (),
                 whitespace_suffix: bool = False) -> None:
        self.mode = mode
        self.pieces = pieces
        self.unk_id = unk_id
        if isinstance(pieces, PieceTable) and edge_ids is not None:
            # the edges' pieces are distinct (the caller's table), read from the table as they are
            table, pids = pieces, np.asarray(edge_ids, dtype=np.int64)
            if not (pids[1:] > pids[:-1]).all():
                pids = np.unique(pids)
            rows = pids
        else:
            ids: dict[str, int] = {}
            for i in (range(len(pieces)) if edge_ids is None else sorted(edge_ids)):
                p = pieces[i]
                if p:
                    ids[p] = i  # a repeated piece keeps its last id (tokenizers' token_to_ids)
            self.ids = ids
            table = PieceTable.from_strings(list(ids))
            pids = np.fromiter(ids.values(), dtype=np.int64, count=len(ids))
            rows = np.arange(len(ids), dtype=np.int64)
        self._edges = (table, rows, pids)
        # score of each piece as the Viterbi adds it (user-defined symbols: sentencepiece's formula)
        sc = checked_scores(scores, len(pieces), mode)
        ud = np.asarray(user_defined, dtype=np.int64)
        if mode == F32_SP and len(ud):
            if isinstance(pieces, PieceTable):
                size = pieces.byte_lengths[ud]
            else:
                size = np.array([len(pieces[i].encode("utf-8")) for i in ud.tolist()], dtype=np.int64)
            sc[ud] = (0.1 * (size - 1)).astype(np.float32)  # GetUserDefinedScore(bytes)
        self.scores64 = sc
        if mode == INT:
            if unk_score is None:
                raise ValueError("an integer lattice needs its unknown score")
            self._int_scores = [int(x) for x in scores]
            unk_score = int(unk_score)
        if unk_score is None:
            unk_score = (float(sc[pids].min()) if len(pids) else 0.0) - UNK_PENALTY
        self.unk_score = f32(unk_score) if mode == F32_SP else unk_score
        self._prefixes: dict[str, tuple] = {}  # node states by prefix (`relative_path`)
        self.suffix = whitespace_suffix
        # pieces that hold the word marker where a segment boundary would be: they stop cutting there
        inner = table.holding(MARK, inner="tail" if whitespace_suffix else "lead")[rows]
        self._inner = inner_mark_pattern([table[int(r)] for r in rows[inner]], whitespace_suffix)
        self._cache: dict[str, tuple] = {}
        # with numba (`tokviz.core.jit`), the Viterbi runs compiled over a trie (`kernels`): sentencepiece's
        # over whole texts, tokenizers' and trained models' word by word (`word_path`); made on first use
        # (`compiled`; `best_segments`: `compiled_for`). Whether kernels may be used is decided now
        # (`jit.allowed`, numba not imported for it)
        self.loaded = None  # `compiled` once made
        top = max(abs(self.unk_score), float(np.abs(sc[pids]).max()) if len(pids) else 0.0)
        # the longest text the compiled Viterbi takes (integers: while doubles add them exactly)
        self.compiled_max_len = (_EXACT_DOUBLES // max(int(top), 1) - 2) if mode == INT else math.inf
        self._may_compile, self._n_edges = bool(len(pids)) and self.compiled_max_len > 0 and jit.allowed(), len(pids)
        self._word_paths: dict[str, tuple] = {}  # `word_path`'s cache on the compiled path
        # the plain path's numpy batch piece table (`best_segments` over long texts), on first use
        self.hashes: PieceHashes | None = None
        # sentencepiece's float32 sums can reach +-inf only with scores this large (a reset
        # subtracts up to longest + 1 node scores): then NaN can follow and hold for the rest of
        # the text, which no cached segment knows, so the plain path runs one exact Viterbi; and
        # integers are always added that way (their segments' margins would never be needed)
        longest = int(table.char_lengths()[rows].max()) if len(rows) else 1
        self.whole_text_exact = mode == INT or (mode == F32_SP and (top + RESET) * (longest + 2) >= FLT_MAX / 2)
        self.zero = 0 if mode == INT else 0.0  # the score a path starts from (an int stays exact)
        self._scores32: np.ndarray | None = None  # `scores32_table`
        self.unit_roundoff = 2.0 ** -24 if mode == F32_SP else 2.0 ** -53
        self.half_ulp_exp = -25 if mode == F32_SP else -54

    @property
    def compiled(self):
        """The compiled Viterbi (`kernels.CompiledPieces`), made on first use; None when kernels
        are off or do not load here (numba is imported for it)."""
        if self.loaded is None and self._may_compile:
            self._may_compile = False  # one try
            kernels = jit.kernels(KERNELS)
            if kernels is not None:
                table, rows, pids = self._edges
                self.loaded = kernels.CompiledPieces.from_table(table, rows, pids, self.scores64, self.unk_score,
                                                                   f32=self.mode == F32_SP)
        return self.loaded

    @compiled.setter
    def compiled(self, value) -> None:  # a test's kernels
        self.loaded = value

    def compiled_for(self, n: int, *, count: bool = True):
        """The compiled Viterbi for a text of `n` characters: `compiled` if made, or loaded elsewhere
        in the process, or once the plain path has cost about what loading it costs (`COMPILE_MIN`,
        `COMPILE_PIECES`); else None (with `count`, the text counts toward that)."""
        if n > self.compiled_max_len:
            return None
        if self.loaded is not None or not self._may_compile:
            return self.loaded
        big = self._n_edges >= COMPILE_PIECES and "ids" not in self.__dict__
        if big or KERNELS in sys.modules or _PLAIN_CHARS[0] + n >= COMPILE_MIN:
            return self.compiled
        if count:
            _PLAIN_CHARS[0] += n
        return None

    @cached_property
    def ids(self) -> dict[str, int]:
        """piece -> id of the pieces the Viterbi may use (made on first use from a `PieceTable`)."""
        table, rows, pids = self._edges
        text, starts = table.text, table.starts
        cuts = map(slice, starts[rows].tolist(), starts[rows + 1].tolist())
        return dict(zip(map(text.__getitem__, cuts), pids.tolist()))

    @cached_property
    def score_of(self) -> list[float] | list[int]:
        """Each id's score as the Viterbi adds it, as Python floats (ints with `INT`): the plain
        path's table."""
        return self._int_scores if self.mode == INT else self.scores64.tolist()

    @cached_property
    def _walk_tables(self) -> tuple[dict[str, int], dict[str, int], list[int]]:
        """The plain Viterbi's tables: the longest piece starting (ending) with each two
        characters (lookups from (to) a position stop there), and every piece's length."""
        heads: dict[str, int] = {}
        tails: dict[str, int] = {}
        for p in self.ids:
            n = len(p)
            if n > 1:
                h, e = p[:2], p[-2:]
                if heads.get(h, 0) < n:
                    heads[h] = n
                if tails.get(e, 0) < n:
                    tails[e] = n
        return heads, tails, [len(p) for p in self.pieces]

    # -- lattice edges ---------------------------------------------------------------------------

    def edges_from(self, s: str, start: int) -> tuple[list[tuple[int, int, float]], bool]:
        """``(end, id, score)`` of the pieces matching at `start`, and whether a one-character
        piece is among them."""
        ids, sc = self.ids, self.score_of
        out = []
        i = ids.get(s[start])
        if i is not None:
            out.append((start + 1, i, sc[i]))
        for end in range(start + 2, min(start + self._walk_tables[0].get(s[start : start + 2], 0), len(s)) + 1):
            i = ids.get(s[start:end])
            if i is not None:
                out.append((end, i, sc[i]))
        return out, bool(out) and out[0][0] == start + 1

    def edges_by_end(self, s: str) -> list[list[tuple[int, int, float]]]:
        """``edges[t]``: ``(start, id, score)`` of every edge of `s`'s lattice ending at t, by
        increasing start: the pieces matching there (`edges_from`) and, where no one-character
        piece does, the unknown edge (id -1, `unk_score`). n-best and sampling walk these."""
        edges: list[list[tuple[int, int, float]]] = [[] for _ in range(len(s) + 1)]
        unk = self.unk_score
        for st in range(len(s)):
            found, single = self.edges_from(s, st)
            for end, i, sc in found:
                edges[end].append((st, i, sc))
            if not single:
                edges[st + 1].append((st, -1, unk))
        return edges

    # -- Viterbi -----------------------------------------------------------------------------------

    def relative(self, s: str) -> tuple:
        """Best path of `s` from score 0 in doubles: ``(ids, ends, total, margin, wmax)`` with the
        pieces' ids (-1: unknown) and end positions, the path's score, the closest decision's
        margin (a lower bound of min over nodes of (best - runner-up) / (edges on both paths + 1))
        and the largest |score| met. A decision with a margin above ``u * (|x| + wmax)`` cannot be
        changed by float rounding (relative error u per addition) when the segment starts at x."""
        if len(self._prefixes) >= _PREFIXES_SIZE:
            self._prefixes.clear()
        _, tails, plen = self._walk_tables
        return relative_path(s, self._prefixes, self.ids.get, self.score_of, tails.get, self.unk_score, plen)

    def exact(self, s: str, x: float) -> tuple[tuple[int, ...], tuple[int, ...], float]:
        """Best path of `s` from the accumulated score `x` with the library's own arithmetic:
        ``(ids, ends, score at the end)``."""
        heads, _, plen = self._walk_tables
        return exact_path(s, x, self.ids.get, self.score_of, heads.get, self.unk_score, plen, self.mode == F32_SP)

    def chain_scores(self, x: float, paths: Sequence[tuple[int, ...]]) -> float:
        """The accumulated score after the segments' pieces `paths` (no reset falls inside a
        segment), with the library's arithmetic: float32 sums, reset to 0 where a segment starts
        beyond +-100000 (tokenizers: plain sums)."""
        sc, unk = self.score_of, self.unk_score
        if self.mode != F32_SP:
            for ids in paths:
                for i in ids:
                    x = x + (unk if i < 0 else sc[i])
            return x
        if len(paths) <= _CHAIN_LOOP:  # a few segments: a Python loop beats numpy's overheads
            r = _ROUND
            for ids in paths:
                if x < -RESET or x > RESET:
                    x = 0.0
                for i in ids:
                    r[0] = x + (unk if i < 0 else sc[i])
                    x = r[0]
            return x
        vals = [unk if i < 0 else sc[i] for ids in paths for i in ids]
        starts = np.cumsum([0] + [len(ids) for ids in paths[:-1]])
        arr = np.asarray(vals, dtype=np.float32)
        k = 0
        while True:
            if x < -RESET or x > RESET:
                x = 0.0
            acc = np.add.accumulate(np.concatenate([np.asarray([x], np.float32), arr[starts[k]:]]))
            # the value where each later segment starts; a reset there starts over from it
            at = acc[starts[k + 1:] - starts[k]]
            over = np.flatnonzero((at < -RESET) | (at > RESET))
            if not over.size:
                return float(acc[-1])
            k += 1 + int(over[0])
            x = float(at[over[0]])

    def scores32_table(self) -> np.ndarray:
        """`score_of` and, last (for id -1), the unknown score, as float32."""
        if self._scores32 is None:
            self._scores32 = np.asarray(self.score_of + [self.unk_score], dtype=np.float32)
        return self._scores32

    def needs_exact(self, margin: float, m: float) -> bool:
        """Whether a segment whose closest decision has this `margin` (see `relative`) must be
        replayed with the library's arithmetic when its scores reach at most `m` in size: the
        margin is no more than the rounding error of one addition there (half an ulp of the
        binade of ``1.01 m``, the 1% covering the doubles' own error and the accumulated score's
        drift), nor than ``1.01 m`` times the unit roundoff."""
        mm = m * 1.01
        return margin <= mm * self.unit_roundoff and margin <= ldexp(1.0, frexp(mm)[1] + self.half_ulp_exp)

    def segment_strings(self, s: str) -> list[str]:
        """`s` cut where no piece can span (see `cut_segments`)."""
        return segment_strings(s, self._inner, self.suffix)

    def segments(self, s: str) -> list[tuple[int, int]]:
        """`segment_strings` as (start, end) positions."""
        return cut_segments(s, self._inner, self.suffix)

    def _fill(self, parts: Sequence[str], processes: int = 1) -> None:
        """Compute the uncached segments of `parts` together (`batch_relative`) when there are many
        (in up to `processes` processes)."""
        cache = self._cache
        missing = [s for s in dict.fromkeys(parts) if s not in cache and len(s) <= MAX_SEGMENT]
        if len(missing) < _BATCH:
            return
        if len(cache) + len(missing) >= _CACHE_SIZE:
            cache.clear()
        step = len(missing) if usable(processes) >= 2 else _FILL_CHUNK  # one chunk at a time: less memory
        for a in range(0, len(missing), step):
            cache.update(zip(missing[a : a + step], self.relative_many(missing[a : a + step], processes)))

    def relative_many(self, missing: list[str], processes: int = 1) -> list[tuple]:
        """`relative` of each of `missing` (segments of at most `MAX_SEGMENT` characters),
        computed together in numpy (`batch_relative`); many segments given two `processes` where
        forking is safe: half of them in a forked child (it inherits the piece table), the other
        half here at the same time."""
        if self.hashes is None:
            self.hashes = PieceHashes(self.ids, self.score_of)
        if not self.hashes.ok:  # two pieces share a hash: one by one
            return [self.relative(s) for s in missing]
        table, unk = self.hashes, self.unk_score
        if len(missing) < _PARALLEL_MIN or usable(processes) < 2:
            return batch_relative(table, missing, unk)
        half = len(missing) // 2
        left, right = here_and_forked(lambda: relative_columns(table, missing[:half], unk),
                                      lambda: relative_columns(table, missing[half:], unk))
        return relative_tuples(left) + relative_tuples(right)

    def clear_caches(self) -> None:
        """Forget every cached path: the next texts are computed from scratch, as after loading."""
        self._cache.clear()
        self._prefixes.clear()
        self._word_paths.clear()

    def best_path(self, s: str, *, processes: int = 1) -> tuple[list[int], list[int]]:
        """The library's best path over all of `s` (a normalized sentence): the ids (-1 for an
        unknown character) and end positions of its pieces, in characters."""
        ids, seg_ends = self.best_segments(s, processes=processes)
        return ids, absolute_ends(seg_ends)

    def best_segments(self, s: str, *, processes: int = 1, arrays: bool = False) -> tuple[list[int], list]:
        """The ids of the library's best path over `s` (-1 for an unknown character) and, per
        segment, its pieces' end positions in it (`absolute_ends` makes them positions in `s`).
        With a compiled Viterbi (`compiled`), the whole of `s` is one segment (with `arrays`, its
        ids and ends as the kernel's numpy arrays). Given two `processes`
        (`tokviz.core.processes.parallel`), the plain path computes many new segments in two."""
        kernels = self.compiled_for(len(s))
        if kernels is not None or self.whole_text_exact:
            if kernels is not None:
                ids_a, ends_a = kernels.best_path(s)
                if arrays and not (self.unk_id is None and len(ids_a) and ids_a.min() < 0):
                    return ids_a, [ends_a]
                ids, ends = ids_a.tolist(), tuple(ends_a.tolist())
            else:
                ids_t, ends, _ = self.exact(s, self.zero)
                ids = list(ids_t)
            if self.unk_id is None and -1 in ids:
                raise EncodeError("an unknown character, and the model has no unknown token (unk_id is null)")
            return ids, [ends]
        parts = self.segment_strings(s)
        out_ids: list[int] = []
        out_ends: list[tuple[int, ...]] = []
        exact_x = 0.0  # the library's accumulated score where `pending` starts
        approx_x = 0.0
        pending: list[tuple[int, ...]] = []
        sp = self.mode == F32_SP
        unit = self.unit_roundoff * 1.01  # a quick first test: needs_exact is never true above it
        if len(parts) >= _BATCH:
            # many new tuples, no reference cycles: the collector's passes would only cost time
            with collector_paused():
                self._fill(parts, processes)
                if len(parts) >= _SCAN_MIN:
                    if sp and self.hashes is None:
                        self.hashes = PieceHashes(self.ids, self.score_of)  # `_scan`'s float32 replays
                    return self._scan(parts)
        # beyond these, a reset may fall at or inside the segment: decided exactly
        band = RESET * 0.999 if sp else math.inf
        hits = self.hits(parts)
        if sp:
            # |the score before any segment| <= the sum of |totals| (+1 for rounding): when every
            # margin stands there, the loop below takes each cached path as it is
            top = sum(abs(h[2]) for h in hits) + 1.0
            if top + max((h[4] for h in hits), default=0.0) < band and all(
                    h[3] > unit * (top + h[4]) for h in hits):
                return list(chain.from_iterable(map(itemgetter(0), hits))), list(map(itemgetter(1), hits))
        for seg, hit in zip(parts, hits):
            ids, ends, total, margin, wmax = hit
            near_reset = False
            if -band <= approx_x <= band:
                m = abs(approx_x) + wmax
                if margin > unit * m and m < band:  # the common case: the cached path stands
                    pending.append(ids)
                    approx_x += total
                    out_ids += ids
                    out_ends.append(ends)
                    continue
            elif abs(approx_x) > RESET * 1.001:
                approx_x = 0.0  # the reset where this segment starts
            else:
                near_reset = True  # which side of the threshold: decided exactly
            m = abs(approx_x) + wmax
            if near_reset or (margin <= unit * m and self.needs_exact(margin, m)) or m >= band:
                if pending:
                    exact_x = self.chain_scores(exact_x, pending)
                    pending.clear()
                ids, ends, exact_x = self.exact(seg, exact_x)
                approx_x = exact_x
            else:
                pending.append(ids)
                approx_x += total
            out_ids += ids
            out_ends.append(ends)
        if self.unk_id is None and -1 in out_ids:
            raise EncodeError("an unknown character, and the model has no unknown token (unk_id is null)")
        return out_ids, out_ends

    def hits(self, parts: Sequence[str]) -> list[tuple]:
        """The cached relative path of every part (computed and cached where missing)."""
        cache = self._cache
        hits = list(map(cache.get, parts))
        if None in hits:
            for k, seg in enumerate(parts):
                if hits[k] is None:
                    hit = cache.get(seg)
                    if hit is None:
                        if len(cache) >= _CACHE_SIZE:
                            cache.clear()
                        hit = cache[seg] = self.relative(seg)
                    hits[k] = hit
        return hits

    def _scan(self, parts: Sequence[str]) -> tuple[list[int], list[tuple[int, ...]]]:
        """`best_segments` for many segments: the same decisions as its loop (`scan`)."""
        return scan(self, parts, self.mode == F32_SP)

    def word_path(self, word: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The Viterbi of one pre-tokenized word from score 0 (tokenizers' f64, or integers): (ids,
        ends), cached."""
        if not word:
            return (), ()
        if self.compiled is not None and not self.compiled.f32 and len(word) <= self.compiled_max_len:
            hit = self._word_paths.get(word)
            if hit is None:
                if len(self._word_paths) >= _CACHE_SIZE:
                    self._word_paths.clear()
                ids, ends = self.compiled.best_path(word)
                hit = self._word_paths[word] = (tuple(ids.tolist()), tuple(ends.tolist()))
        else:
            hit = self._cache.get(word)
            if hit is None:
                if len(self._cache) >= _CACHE_SIZE:
                    self._cache.clear()
                # integers: one exact pass (Python ints never round; no margins to divide)
                hit = self._cache[word] = self.exact(word, self.zero) if self.mode == INT else self.relative(word)
        if self.unk_id is None and -1 in hit[0]:
            raise EncodeError("an unknown character, and the model has no unknown token (unk_id is null)")
        return hit[0], hit[1]
