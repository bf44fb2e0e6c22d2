"""The Unigram Viterbi of SentencePiece and Hugging Face tokenizers, exactly, including its floats.

Both libraries run the same "optimized" Viterbi (sentencepiece's ``EncodeOptimized``, tokenizers'
``encode_optimized``): positions left to right; from each start, every piece that matches there
relaxes the node at its end (``candidate > best`` replaces, so on a tie the earliest start, the
longest last piece, wins); when no one-character piece matches, an unknown edge of one character
scored ``min score - 10`` does. They differ in their numbers:

- tokenizers (`F64`) adds f64 scores: exactly Python's floats.
- sentencepiece 0.2.3 (`F32_SP`) adds float32 scores into float32 node scores, and whenever the
  score where a piece starts passes +-100000 it subtracts that score from every node reached so
  far (a "reset" that keeps the floats small). User-defined symbols score
  ``float(0.1 * (length in bytes - 1))``; unused pieces are skipped.

Running float32 arithmetic per edge in Python is slow, and caching by word is only sound when a
word's decisions do not depend on the score accumulated before it. So a text is cut where no
piece can span (before each ``▁`` when no piece holds one inside), each segment's best path is
computed once from zero in doubles (cached) together with how close its closest decision was,
and a segment is reused as is when that margin exceeds what rounding at the accumulated score can
move (error at most 2**-24 of the score per addition); otherwise it is recomputed with the exact
arithmetic from the exact accumulated score (kept lazily: only replayed along the chosen paths
when a close segment needs it). The result equals the library's on every input, at the speed of a
word cache.

What this leaves out: the tokenizers around it (unknown-token fusing, byte fallback, ids), and
explaining (`tokviz.core.pretrained.spm.explain`).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Collection, Sequence

import regex

from tokviz.core.errors import EncodeError

F64 = "f64"
F32_SP = "f32"
UNK_PENALTY = 10.0
FLT_MAX = 3.4028234663852886e38
RESET = 100000.0  # sentencepiece's kScoreResetThreshold
_CACHE_SIZE = 200_000
_F32 = struct.Struct("<f")
MARK = "\u2581"

Edge = tuple[int, int, int]  # (start, end, id) in characters of the segment; id -1 = unknown


def f32(x: float) -> float:
    """`x` rounded to the nearest float32 (ties to even), as a Python float."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


class PieceLattice:
    """The pieces a Viterbi may use, with their scores, and the cached best paths.

    `pieces[i]`/`scores[i]` for every id; `edge_ids` the ids that are edges (in the trie);
    `unk_id` the id of unknown edges (None: an unknown character is an error, as in tokenizers);
    `user_defined` ids that score as sentencepiece's user-defined symbols (F32_SP only).
    """

    def __init__(self, pieces: Sequence[str], scores: Sequence[float], *, mode: str = F64,
                 edge_ids: Collection[int] | None = None, unk_id: int | None = None,
                 unk_score: float | None = None, user_defined: Collection[int] = (),
                 whitespace_suffix: bool = False) -> None:
        self.mode = mode
        self.pieces = pieces
        self.unk_id = unk_id
        ids: dict[str, int] = {}
        ud = set(user_defined)
        for i in (range(len(pieces)) if edge_ids is None else sorted(edge_ids)):
            p = pieces[i]
            if p:
                ids[p] = i  # a repeated piece keeps its last id (tokenizers' token_to_ids)
        self.ids = ids
        # score of each edge piece as the Viterbi adds it
        sc: dict[int, float] = {}
        for p, i in ids.items():
            if i in ud and mode == F32_SP:
                sc[i] = f32(0.1 * (len(p.encode("utf-8")) - 1))  # GetUserDefinedScore(bytes)
            else:
                sc[i] = float(scores[i])
        self.edge_score = sc
        if unk_score is None:
            unk_score = (min((float(scores[i]) for i in ids.values()), default=0.0)) - UNK_PENALTY
        self.unk_score = f32(unk_score) if mode == F32_SP else unk_score
        self._ext = {p[:k] for p in ids for k in range(1, len(p))}  # proper prefixes: keep looking
        self._lookup = {p: (i, sc[i], p in self._ext) for p, i in ids.items()}
        for q in self._ext:
            self._lookup.setdefault(q, (None, 0.0, True))
        self.suffix = whitespace_suffix
        # pieces that hold the word marker where a segment boundary would be: they stop cutting there
        inner = [p for p in ids if MARK in (p[:-1] if whitespace_suffix else p[1:])]
        inner.sort(key=len, reverse=True)
        self._inner = regex.compile("|".join(regex.escape(p) for p in inner)) if inner else None
        self._cache: dict[str, tuple] = {}
        self._unit = 2.0 ** -24 if mode == F32_SP else 2.0 ** -53

    # -- lattice edges ---------------------------------------------------------------------------

    def edges_from(self, s: str, start: int) -> tuple[list[tuple[int, int, float]], bool]:
        """``(end, id, score)`` of the pieces matching at `start`, and whether a one-character
        piece is among them."""
        look = self._lookup
        n = len(s)
        out = []
        single = False
        end = start + 1
        while end <= n:
            hit = look.get(s[start:end])
            if hit is None:
                break
            if hit[0] is not None:
                out.append((end, hit[0], hit[1]))
                if end == start + 1:
                    single = True
            if not hit[2]:
                break
            end += 1
        return out, single

    # -- Viterbi -----------------------------------------------------------------------------------

    def _relative(self, s: str) -> tuple:
        """Best path of `s` from score 0 in doubles: ``(ids, ends, total, margin, wmax)`` with the
        pieces' ids (-1: unknown) and end positions, the path's score, the closest decision's
        margin (min over nodes of (best - runner-up) / (edges on both paths + 1)) and the largest
        |score| met. A decision with a margin above ``u * (|x| + wmax)`` cannot be changed by
        float rounding (relative error u per addition) when the segment starts at score x."""
        n = len(s)
        look = self._lookup
        unk = self.unk_score
        best: list = [0.0] + [None] * n
        second: list = [None] * (n + 1)
        depth = [0] * (n + 1)
        depth2 = [0] * (n + 1)
        back_s = [0] * (n + 1)
        back_i = [0] * (n + 1)
        for st in range(n):
            b = best[st]
            d = depth[st] + 1
            single = False
            end = st + 1
            while end <= n:
                hit = look.get(s[st:end])
                if hit is None:
                    break
                i = hit[0]
                if i is not None:
                    c = b + hit[1]
                    cur = best[end]
                    if cur is None:
                        best[end] = c
                        depth[end] = d
                        back_s[end] = st
                        back_i[end] = i
                    elif c > cur:
                        second[end] = cur
                        depth2[end] = depth[end]
                        best[end] = c
                        depth[end] = d
                        back_s[end] = st
                        back_i[end] = i
                    else:
                        sec = second[end]
                        if sec is None or c > sec:
                            second[end] = c
                            depth2[end] = d
                    if end == st + 1:
                        single = True
                if not hit[2]:
                    break
                end += 1
            if not single:
                c = b + unk
                end = st + 1
                cur = best[end]
                if cur is None:
                    best[end] = c
                    depth[end] = d
                    back_s[end] = st
                    back_i[end] = -1
                elif c > cur:
                    second[end] = cur
                    depth2[end] = depth[end]
                    best[end] = c
                    depth[end] = d
                    back_s[end] = st
                    back_i[end] = -1
                else:
                    sec = second[end]
                    if sec is None or c > sec:
                        second[end] = c
                        depth2[end] = d
        margin = math.inf
        for t in range(1, n + 1):
            sec = second[t]
            if sec is not None:
                g = (best[t] - sec) / (depth[t] + depth2[t] + 1)
                if g < margin:
                    margin = g
        wmax = max(map(abs, best))
        ids = []
        ends = []
        t = n
        while t > 0:
            ids.append(back_i[t])
            ends.append(t)
            t = back_s[t]
        ids.reverse()
        ends.reverse()
        return tuple(ids), tuple(ends), best[n], margin, wmax

    def _exact(self, s: str, x: float) -> tuple[tuple[int, ...], tuple[int, ...], float]:
        """Best path of `s` from the accumulated score `x` with the library's own arithmetic:
        ``(ids, ends, score at the end)``."""
        n = len(s)
        look = self._lookup
        unk = self.unk_score
        sp = self.mode == F32_SP
        best: list = [x] + [None] * n
        back_s = [0] * (n + 1)
        back_i = [0] * (n + 1)
        frontier = 0
        for st in range(n):
            b = best[st]
            if sp and (b < -RESET or b > RESET):
                for k in range(st + 1, frontier + 1):
                    if best[k] is not None:
                        best[k] = f32(best[k] - b)
                best[st] = b = 0.0
            single = False
            end = st + 1
            while end <= n:
                hit = look.get(s[st:end])
                if hit is None:
                    break
                if hit[0] is not None:
                    if end > frontier:
                        frontier = end
                    c = f32(b + hit[1]) if sp else b + hit[1]
                    cur = best[end]
                    if cur is None or c > cur:
                        best[end] = c
                        back_s[end] = st
                        back_i[end] = hit[0]
                    if end == st + 1:
                        single = True
                if not hit[2]:
                    break
                end += 1
            if not single:
                if st + 1 > frontier:
                    frontier = st + 1
                c = f32(b + unk) if sp else b + unk
                cur = best[st + 1]
                if cur is None or c > cur:
                    best[st + 1] = c
                    back_s[st + 1] = st
                    back_i[st + 1] = -1
        ids = []
        ends = []
        t = n
        while t > 0:
            ids.append(back_i[t])
            ends.append(t)
            t = back_s[t]
        ids.reverse()
        ends.reverse()
        return tuple(ids), tuple(ends), best[n]

    def _chain(self, x: float, ids: Sequence[int]) -> float:
        """The accumulated score after the pieces `ids` (a path no reset falls inside), with the
        library's arithmetic; the reset at the path's start is applied."""
        sc, unk = self.edge_score, self.unk_score
        if self.mode == F32_SP:
            if x < -RESET or x > RESET:
                x = 0.0
            for i in ids:
                x = f32(x + (unk if i < 0 else sc[i]))
        else:
            for i in ids:
                x = x + (unk if i < 0 else sc[i])
        return x

    def segment_strings(self, s: str) -> list[str]:
        """`s` cut where no piece can span: before each ``▁`` (after, with whitespace as a suffix)
        unless a piece holding ``▁`` inside covers it."""
        if self._inner is None:
            parts = s.split(MARK)
            if len(parts) == 1:
                return parts if s else []
            if self.suffix:
                out = [p + MARK for p in parts[:-1]]
                if parts[-1]:
                    out.append(parts[-1])
                return out
            out = [MARK + p for p in parts[1:]]
            if parts[0]:
                out.insert(0, parts[0])
            return out
        return [s[a:b] for a, b in self.segments(s)]

    def segments(self, s: str) -> list[tuple[int, int]]:
        """`segment_strings` as (start, end) positions."""
        n = len(s)
        if MARK not in s:
            return [(0, n)] if n else []
        if self._inner is None:
            out, pos = [], 0
            for part in self.segment_strings(s):
                out.append((pos, pos + len(part)))
                pos += len(part)
            return out
        if self.suffix:
            cuts = [m.end() for m in regex.finditer(MARK, s) if m.end() < n]
        else:
            cuts = [m.start() for m in regex.finditer(MARK, s) if m.start() > 0]
        blocked = set()
        for m in self._inner.finditer(s, overlapped=True):
            blocked.update(range(m.start() + 1, m.end()))
        cuts = [c for c in cuts if c not in blocked]
        bounds = [0, *cuts, n]
        return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]

    def _walk(self, parts: Sequence[str]):
        """(ids, ends) of each segment in `parts`, as the library's Viterbi over their
        concatenation gives them."""
        exact_x = 0.0  # the library's accumulated score where `pending` starts
        approx_x = 0.0
        pending: list[tuple[int, ...]] = []
        sp = self.mode == F32_SP
        unit = 2 * self._unit
        cache = self._cache
        info = self._relative
        for seg in parts:
            hit = cache.get(seg)
            if hit is None:
                if len(cache) >= _CACHE_SIZE:
                    cache.clear()
                hit = cache[seg] = info(seg)
            ids, ends, total, margin, wmax = hit
            if sp and (approx_x < -RESET or approx_x > RESET):
                approx_x = 0.0  # the reset where this segment starts (decided exactly below if close)
            m = abs(approx_x) + wmax
            if margin <= unit * m * 1.01 or (sp and m >= RESET * 0.999):
                for p in pending:
                    exact_x = self._chain(exact_x, p)
                pending.clear()
                ids, ends, exact_x = self._exact(seg, exact_x)
                approx_x = exact_x
            else:
                pending.append(ids)
                approx_x += total
            yield ids, ends

    def best_ids(self, s: str) -> list[int]:
        """The ids of the library's best path over `s` (-1 for an unknown character)."""
        out: list[int] = []
        for ids, _ in self._walk(self.segment_strings(s)):
            out.extend(ids)
        if self.unk_id is None and -1 in out:
            raise EncodeError("an unknown character, and the model has no unknown token (unk_id is null)")
        return out

    def best_path(self, s: str) -> list[Edge]:
        """The library's best path over all of `s` (a normalized sentence, or a word): (start,
        end, id) in characters, id -1 for an unknown character."""
        out: list[Edge] = []
        pos = 0
        for ids, ends in self._walk(self.segment_strings(s)):
            prev = pos
            for i, e in zip(ids, ends):
                out.append((prev, pos + e, i))
                prev = pos + e
            pos = prev
        if self.unk_id is None and any(e[2] < 0 for e in out):
            raise EncodeError("an unknown character, and the model has no unknown token (unk_id is null)")
        return out

    def word_path(self, word: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """tokenizers' Viterbi of one pre-tokenized word (scores from 0, f64): (ids, ends), cached."""
        if not word:
            return (), ()
        hit = self._cache.get(word)
        if hit is None:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            hit = self._cache[word] = self._relative(word)
        if self.unk_id is None and -1 in hit[0]:
            raise EncodeError("an unknown character, and the model has no unknown token (unk_id is null)")
        return hit[0], hit[1]
