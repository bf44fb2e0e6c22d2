"""SentencePiece's BPE encoder (``bpe_model.cc``): merging by piece score, not by merge rank.

A normalized sentence starts as characters (a user-defined symbol matched at a position is one
symbol that never merges). Every adjacent pair whose concatenation is a normal, user-defined or
unused piece goes on an agenda ordered by that piece's score, highest first (as floats, with -0.0
below +0.0, sentencepiece comparing their bits), ties to the leftmost pair; the best pair is
merged and the pairs it forms with its neighbours are added, until the agenda is empty. A merged
piece of type UNUSED is split back into the two symbols that formed it. Each final symbol becomes
its id; one that is not a normal, user-defined or used piece becomes the unknown id (-1 when the
model has none).

Only pieces `allowed` (a step on the merge timeline) may be formed. `sample` is BPE-dropout as
sentencepiece's ``SampleEncode`` runs it: the same loop, each pair that is still there when popped
skipped for good with probability p (`tokviz.core.formats.sentencepiece.dropout`).
As for the Unigram lattice, a sentence is cut where no piece can span and each part is cached.
A part of up to `SHORT` characters, with no step limit, in a model without unused pieces or
user-defined symbols, is merged by `score_merge.merge_word` (the same order, over a list of pair
scores: several times faster in Python); with numba, the new parts of such a model's text (up to
`COMPILED_LONGEST` characters) are merged in one compiled call of the same rule
(`score_kernels`), once a process has merged `COMPILE_MIN` words in Python or `warm_up` asked. From
then on, when only runs of ``▁`` hold a mark inside pieces, `encode_ids` cuts, looks up and merges a
whole text in one compiled call over a cache of arrays of its own (`CompiledScoreMerger.line_ids`).

How it relates to the other BPE encoders: the loop has the shape of `tokviz.core.bpe.pair_merge`'s
heap (lowest key first, leftmost of equals, stale entries skipped), but its key is the score of
the joined *string* (any two neighbours forming a piece may join, like tiktoken's byte-rank rule
in `tokviz.core.bpe.byte_ranks`), compared as sentencepiece compares floats, and unused pieces are
split back: a different rule, so it keeps its own loop.

What this leaves out: normalization, byte fallback and unknown runs (`tokenizer`).
"""

from __future__ import annotations

import heapq
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, chain, compress, repeat
from operator import is_

import regex

from tokviz.core import jit
from tokviz.core.formats.sentencepiece.score_compiled import CompiledScoreMerger
from tokviz.core.formats.sentencepiece.score_merge import (
    MARK,
    SHORT,
    marks_in_runs_only,
    merge_keys,
    merge_word,
    run_led_segments,
)
from tokviz.core.text import new_words
from tokviz.core.unigram.encoder.segments import cut_segments, inner_mark_pattern

_CACHE_SIZE = 200_000
# new parts up to this long take the compiled loop (a sentence of a script without spaces is one part):
# its rounds cost length squared, a million steps here, still less than the heap in Python; longer
# ones keep the heap, whose time and memory grow with the part
COMPILED_LONGEST = 1024
KERNELS = "tokviz.core.formats.sentencepiece.score_kernels"
# importing numba and loading the compiled loop costs ~0.5 s of CPU and ~110 MiB once per process,
# what the Python loop spends on ~30,000 new words (12-20 us each, against 4-7 compiled, wrapping
# included): a one-off command on a megabyte (30,000-50,000 new words) gains nothing by it and
# triples its memory, so it is loaded once the words merged in Python reach this many (or by
# `warm_up`, as the window does)
COMPILE_MIN = 100_000
PLAIN_WORDS = [0]  # new words this process has merged in Python with kernels allowed
_MAX_DEPTH = 100  # sentencepiece's kMaxBpeResegmentDepth
_UNUSED = 5
_MERGEABLE = (1, 4, 5)  # NORMAL, USER_DEFINED, UNUSED


class SpBpe:
    """``SpBpe(pieces_map, scores, types, unk_id=..., user_defined=...)``: `pieces_map` maps every
    piece string to its id (sentencepiece's ``pieces_`` for BPE models)."""

    def __init__(self, pieces_map: Mapping[str, int], scores: Sequence[float], types: Sequence[int], *,
                 unk_id: int, user_defined: Sequence[str], whitespace_suffix: bool = False,
                 byte_ids: Sequence[int] | None = None) -> None:
        self.map = dict(pieces_map)
        self.byte_ids = byte_ids  # with byte fallback: the compiled line path gives unknown characters as bytes
        self.scores = scores
        self.types = types
        self.unk_id = unk_id
        self.mergeable = frozenset(i for i in self.map.values() if types[i] in _MERGEABLE and i != unk_id)
        self.unused = frozenset(i for i in self.map.values() if types[i] == _UNUSED)
        ud = sorted({s for s in user_defined if s}, key=len, reverse=True)
        self._ud = regex.compile("|".join(regex.escape(s) for s in ud)) if ud else None
        self._ud_first = {s[0] for s in ud}
        self.suffix = whitespace_suffix
        inner = [p for p, i in self.map.items() if MARK in (p[:-1] if whitespace_suffix else p[1:]) and i in self.mergeable]
        self._inner = inner_mark_pattern(inner, whitespace_suffix)
        self._runs_only = not whitespace_suffix and marks_in_runs_only(inner)  # `run_led_segments` cuts as `segments`
        # a part's ids only: one tuple a new word, not three, for the cyclic collector to meet (by
        # line, its passes over them took a tenth of the time); lengths come from the ids (`_lengths`)
        self._caches: dict[object, dict[str, tuple[int, ...]]] = {}
        self._char_lengths: list[int] | None = None
        self._short: tuple[dict[str, float], dict[str, int]] | None = None  # `merge_word`'s tables
        self._short_made = False
        self._compiled: CompiledScoreMerger | None = None  # `compiled`
        self._may_compile = jit.allowed()  # decided now, without importing numba

    def segments(self, s: str) -> list[tuple[int, int]]:
        """Cuts no piece can span (as `PieceLattice.segments`)."""
        return cut_segments(s, self._inner, self.suffix)

    def _symbols(self, s: str) -> tuple[list[int], list[int], list[bool]]:
        """Start, end and frozen flag of each initial symbol."""
        starts, ends, frozen = [], [], []
        ud, firsts = self._ud, self._ud_first
        pos, n = 0, len(s)
        while pos < n:
            m = ud.match(s, pos) if ud is not None and s[pos] in firsts else None
            end = m.end() if m is not None else pos + 1
            starts.append(pos)
            ends.append(end)
            frozen.append(m is not None)
            pos = end
        return starts, ends, frozen

    def _merge(self, s: str, allowed, trace: list | None = None,
               skip: Callable[[], bool] | None = None) -> tuple[tuple[int, int, int], ...]:
        """The pieces of one segment; `skip` (BPE-dropout): asked once for each pair popped that
        is still there, True drops that pair for good (sentencepiece's ``SampleEncode``)."""
        starts, ends, frozen = self._symbols(s)
        n = len(starts)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        alive = [True] * n
        pmap, scores, mergeable, unused = self.map, self.scores, self.mergeable, self.unused
        agenda: list[tuple[float, int, int, int, int]] = []  # (-score, -0.0 flag, left, right, size)
        rev: dict[str, tuple[str, str]] = {}
        push = heapq.heappush

        def add(left: int, right: int) -> None:
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                return
            piece = s[starts[left] : ends[right]]
            i = pmap.get(piece)
            if i is None or i not in mergeable or (allowed is not None and i not in allowed):
                return
            sc = scores[i]
            push(agenda, (-sc, 1 if sc == 0.0 and math.copysign(1.0, sc) < 0 else 0, left, right,
                          ends[right] - starts[left]))
            if i in unused:
                rev[piece] = (s[starts[left] : ends[left]], s[starts[right] : ends[right]])

        for i in range(1, n):
            add(i - 1, i)
        while agenda:
            _, _, left, right, size = heapq.heappop(agenda)
            if not alive[left] or not alive[right] or ends[right] - starts[left] != size:
                continue
            if skip is not None and skip():
                continue
            if trace is not None:
                trace.append((starts[left], ends[left], ends[right]))
            ends[left] = ends[right]
            alive[right] = False
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prv[nxt[right]] = left
            add(prv[left], left)
            add(left, nxt[left])
        out: list[tuple[int, int, int]] = []
        unk = self.unk_id
        k = 0
        while 0 <= k < n:
            # the piece, split back into its parts where it is unused (a stack, not a recursive
            # closure: that is a reference cycle, which a frozen collector never frees)
            todo = [(starts[k], ends[k], 0)]
            while todo:
                a, b, depth = todo.pop()
                w = s[a:b]
                i = pmap.get(w, unk)
                if depth > _MAX_DEPTH:
                    out.append((a, b, i))
                elif i == unk or i not in mergeable:
                    out.append((a, b, unk))
                elif i not in unused:
                    out.append((a, b, i))
                elif w not in rev:
                    out.append((a, b, unk))
                else:
                    left, _ = rev[w]
                    todo.append((a + len(left), b, depth + 1))  # after the left part
                    todo.append((a, a + len(left), depth + 1))
            k = nxt[k]
        return tuple(out)

    def trace(self, s: str, allowed=None) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """The merges that fire on `s` in order, as (start, middle, end) character positions, and
        the final pieces."""
        steps: list[tuple[int, int, int]] = []
        out = []
        for a, b in self.segments(s):
            part: list[tuple[int, int, int]] = []
            out.extend((x + a, y + a, i) for x, y, i in self._merge(s[a:b], allowed, part))
            steps.extend((x + a, m + a, y + a) for x, m, y in part)
        return steps, out

    def initial(self, s: str) -> list[tuple[int, int]]:
        """The symbols `s` starts as (characters, and user-defined symbols whole)."""
        starts, ends, _ = self._symbols(s)
        return list(zip(starts, ends))

    def sample(self, s: str, skip: Callable[[], bool], allowed=None) -> list[tuple[int, int, int]]:
        """`encode` with BPE-dropout: `skip()` is asked for each pair about to merge, segment
        after segment (never cached)."""
        out: list[tuple[int, int, int]] = []
        for a, b in self.segments(s):
            out.extend((x + a, y + a, i) for x, y, i in self._merge(s[a:b], allowed, None, skip))
        return out

    def short_tables(self) -> tuple[dict[str, float], dict[str, int]] | None:
        """`merge_word`'s tables, made on first use; None when the model needs `_merge`'s loop
        (unused pieces, user-defined symbols, a score that is not finite)."""
        if not self._short_made:
            self._short_made = True
            keys = None if self.unused or self._ud is not None else merge_keys(self.map, self.scores, self.mergeable)
            if keys is not None:
                self._short = (keys, {p: self.map[p] for p in keys})
        return self._short

    def _word(self, seg: str, allowed) -> tuple[int, ...]:
        """The ids of the pieces of one segment, in Python."""
        short = self.short_tables() if allowed is None and len(seg) <= SHORT else None
        if short is not None:
            return merge_word(seg, *short, self.unk_id)
        return tuple([i for _, _, i in self._merge(seg, allowed)])

    def _lengths(self) -> list[int]:
        """Each id's length in characters as a piece of a merge: its piece's, and 1 for the unknown
        id (a character no piece is; at index -1 too, for a model without one)."""
        if self._char_lengths is None:
            lengths = [1] * (max(self.map.values(), default=0) + 2)
            for piece, i in self.map.items():
                lengths[i] = len(piece)
            if self.unk_id >= 0:
                lengths[self.unk_id] = 1
            self._char_lengths = lengths
        return self._char_lengths

    def _words(self, segs: list[str], allowed, cache: dict) -> list[tuple[int, ...]]:
        """The ids of the pieces of each segment, cached; the new ones of a model `merge_word`
        serves in one compiled call once that pays (`_compiled_for`)."""
        hits = list(map(cache.get, segs))
        if all(hits):  # every hit a tuple of one id or more (true), a miss None
            return hits
        # a line brings a word or two no cache has seen: few steps in Python around them (by line,
        # these steps cost as much as the compiled merge), and none that another thread's use of
        # the cache could upset
        new = list(set(compress(segs, map(is_, hits, repeat(None)))))
        merger = self._compiled_for(len(new)) if allowed is None else None
        if merger is not None and max(map(len, new)) <= COMPILED_LONGEST:
            found = dict(zip(new, merger.merge_words(new)))
        else:
            fit = [w for w in new if len(w) <= COMPILED_LONGEST] if merger is not None else []
            found = dict(zip(fit, merger.merge_words(fit))) if fit else {}
            found.update((w, self._word(w, allowed)) for w in new if w not in found)
        if len(cache) + len(found) > _CACHE_SIZE:  # bounded memory: start over
            cache.clear()
        cache.update(found)
        return list(map(found.get, segs, hits))  # a new part's ids, else its hit

    def _compiled_for(self, n: int) -> CompiledScoreMerger | None:
        """The compiled merge loop if loaded, or loaded in this process for another model, or
        once the Python loop has merged about as many words as loading it costs
        (`COMPILE_MIN`); else None (the `n` new words are counted)."""
        if self._compiled is not None or not self._may_compile:
            return self._compiled
        if KERNELS in sys.modules or PLAIN_WORDS[0] + n >= COMPILE_MIN:
            return self.compiled()
        PLAIN_WORDS[0] += n
        return None

    def repaid_by(self, text: str) -> bool:
        """Whether the compiled merge loop, not loaded yet, repays numba's import before `text`:
        a sample of it says it will bring many words that are not pieces (`new_words`: udhr2
        does, English does not), and the model's words take the loop."""
        if self._compiled is not None or not self._may_compile or self.short_tables() is None:
            return False
        pieces = self.map
        known = (lambda w: w + MARK in pieces) if self.suffix else (lambda w: MARK + w in pieces)
        return new_words.repays_loading(new_words.new_word_density(text, known), len(text)) and jit.enabled()

    def compiled(self) -> CompiledScoreMerger | None:
        """The compiled merge loop, made on first use (numba is imported for it); None when
        kernels are off or do not load here, or the model needs `_merge`'s loop."""
        if self._compiled is None and self._may_compile:
            self._may_compile = False  # one try
            short = self.short_tables()
            kernels = jit.kernels(KERNELS) if short is not None else None
            if kernels is not None:
                self._compiled = CompiledScoreMerger(kernels, *short, self.unk_id, self.byte_ids)
        return self._compiled

    def _cache(self, allowed) -> dict:
        key = allowed  # None, or a frozenset (its hash is computed once)
        cache = self._caches.get(key)
        if cache is None:
            if len(self._caches) >= 6:
                del self._caches[next(iter(self._caches))]
            cache = self._caches[key] = {}
        return cache

    def encode(self, s: str, allowed=None) -> list[tuple[int, int, int]]:
        """(start, end, id) of the pieces of a normalized sentence; with `allowed` (a frozenset
        of ids), only those pieces are ever formed by a merge."""
        cache = self._cache(allowed)
        out: list[tuple[int, int, int]] = []
        segs = self.segments(s)
        length = self._lengths()
        for (a, _), ids in zip(segs, self._words([s[a:b] for a, b in segs], allowed, cache)):
            for i in ids:
                n = length[i]
                out.append((a, a + n, i))
                a += n
        return out

    def compiled_ids(self, s: str, allowed=None, *, raw: bool = False) -> list[int] | None:
        """`encode_ids`'s ids from compiled calls that cut, look up and merge the whole of `s`
        (`CompiledScoreMerger.line_ids`), an unknown character as its bytes' ids with `byte_ids`
        (`raw`: as `encode_ids` gives it, the unknown id); None where that path does not serve (not
        loaded, a step limit, marks inside other pieces)."""
        if allowed is None and self._runs_only and self._compiled is not None:
            return self._compiled.line_ids(s, raw=raw)
        return None

    def ends_of(self, ids: list[int]) -> list[int]:
        """The end positions of the pieces `ids` (raw: an unknown character is one id)."""
        return list(accumulate(map(self._lengths().__getitem__, ids)))

    def encode_ids(self, s: str, allowed=None) -> tuple[list[int], Callable[[], list[int]]]:
        """The ids of `encode`, and a function giving the pieces' end positions (wanted only
        when a piece is unknown)."""
        cache = self._cache(allowed)
        if self._runs_only:
            words = run_led_segments(s)
        else:
            words = [s[a:b] for a, b in self.segments(s)]
        ids = list(chain.from_iterable(self._words(words, allowed, cache)))
        return ids, lambda: self.ends_of(ids)
