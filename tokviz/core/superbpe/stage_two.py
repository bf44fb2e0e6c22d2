"""Where SuperBPE's stage 2 starts: each stage-2 chunk as the stage-1 merges leave it.

Each stage-2 chunk starts as the first t merges leave it when applied in rank order over the whole
chunk (what the finished tokenizer does). Worked out from the stage-1 pieces, which stage 1 already
merged: two neighbouring runs of text, each merged on its own, merge the same as one run unless
they are *joinable*: some token the left run ever ended with (its last token, that token's right
part, and so on down its right spine) and some token the right run ever started with (down its
left spine) form a merged pair (a merge crossing the boundary would join two such tokens first).
Joinable neighbours are merged again as one run from base units, until no two neighbours are
joinable. Rare: the stage-1 split keeps spaces at word starts, so two pieces seldom meet in a
learned pair.

The common case runs in numpy over every piece boundary of the corpus at once (`Joins.many`, and
a gather of the pieces' ids); Python steps in only for the chunks with a joinable boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain

import numpy as np

from tokviz.core.bpe.timeline import base_ids
from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.gc_pause import release_free_memory
from tokviz.core.processes.fork import here_and_forked
from tokviz.core.processes.parallel import usable
from tokviz.core.text.split import Splitter

from .pieces import Numbered, number_pieces, pieces_splitter
from .split import STAGE_TWO

_SHIFT = 32
HALVES_MIN_CHARS = 4_000_000  # below this, a forked child costs more than it saves
HALVES_MIN_PIECES = HALVES_MIN_CHARS // 5  # the same in stage-1 pieces (4.5 characters each in English)


class Joins:
    """Which pairs of tokens are joinable across a boundary, for the merges `pairs`.

    >>> j = Joins([(97, 98), (256, 99), (99, 97)], 256)   # "ab", "ab"+"c", "ca"
    >>> j.joinable(97, 98), j.joinable(97, 257), j.joinable(257, 256), j.joinable(98, 99)
    (True, False, True, False)
    >>> j.many(np.array([97, 97, 257, 98]), np.array([98, 257, 256, 99])).tolist()
    [True, False, True, False]
    """

    def __init__(self, pairs: Sequence[tuple[int, int]], n_base: int) -> None:
        self.pairs, self.n_base = pairs, n_base
        n = n_base + len(pairs)
        parts = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        self._left = np.concatenate((np.full(n_base, -1, np.int64), parts[:, 0]))  # token -> left part
        self._right = np.concatenate((np.full(n_base, -1, np.int64), parts[:, 1]))
        self._keys = np.unique((parts[:, 0] << _SHIFT) | parts[:, 1]) if len(parts) else np.zeros(0, np.int64)
        self._n = n
        self._spines: tuple[dict[int, tuple[int, ...]], ...] = ({}, {})  # token -> its left / right spine
        self._partners: dict[int, set[int]] = {}  # token -> the tokens a merge joins it to on its right
        for a, b in pairs:
            self._partners.setdefault(a, set()).add(b)
        self._starts: dict[int, frozenset[int]] = {}  # token -> its left spine as a set
        self._follows: dict[int, frozenset[int]] = {}  # token -> every token a merge joins to its right spine
        self.known: dict[tuple[int, int], bool] = {}
        # each token's first and last base unit (a spine keeps them), and the (last unit of a
        # pair's left part, first unit of its right part) of every merge: `may_join`
        first = np.arange(n, dtype=np.int64)
        last = first.copy()
        for t, (a, b) in enumerate(pairs, start=n_base):
            first[t], last[t] = first[a], last[b]
        self._first_unit, self._last_unit = first, last
        ends = np.unique(last[parts[:, 0]] * n_base + first[parts[:, 1]]) if len(parts) else np.zeros(0, np.int64)
        self._ends = ends

    def _spine(self, t: int, side: int) -> tuple[int, ...]:
        hit = self._spines[side].get(t)
        if hit is None:
            below = self._spine(self.pairs[t - self.n_base][side], side) if t >= self.n_base else ()
            hit = self._spines[side][t] = (t, *below)
        return hit

    def joinable(self, left: int, right: int) -> bool:
        """Does a merge join a token of `left`'s right spine to one of `right`'s left spine?"""
        hit = self.known.get((left, right))
        if hit is None:
            firsts = self._starts.get(right)
            if firsts is None:
                firsts = self._starts[right] = frozenset(self._spine(right, 0))
            after = self._follows.get(left)
            if after is None:
                partners = self._partners
                after = self._follows[left] = frozenset().union(*(partners.get(x, ()) for x in self._spine(left, 1)))
            hit = self.known[left, right] = not after.isdisjoint(firsts)
        return hit

    def may_join(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """False where ``(left[i], right[i])`` cannot be joinable: every token of a right spine
        ends with its token's last base unit and every token of a left spine starts with its
        token's first, so a joinable pair's units are those of some merge. A few lookups a
        boundary, where `many` sorts them: most boundaries of a text (" the" | " cat") fail it.

        >>> j = Joins([(97, 98), (256, 99), (99, 97)], 256)   # "ab", "ab"+"c", "ca"
        >>> j.may_join(np.array([97, 257, 256, 99, 98]), np.array([98, 256, 99, 98, 99])).tolist()
        [True, True, True, False, True]
        >>> j.joinable(98, 99)  # a necessary condition only: "b" | "c" has the units of "ab" + "c"
        False
        """
        keys = self._last_unit[np.asarray(left, dtype=np.int64)] * self.n_base
        keys += self._first_unit[np.asarray(right, dtype=np.int64)]
        ends = self._ends
        if len(ends) == 0:
            return np.zeros(len(keys), dtype=bool)
        table = self.unit_table()
        if table is not None:
            return table[keys]
        at = np.minimum(np.searchsorted(ends, keys), len(ends) - 1)
        return ends[at] == keys

    def unit_table(self) -> np.ndarray | None:
        """`may_join`'s table of every pair of units (a bool at ``last * n_base + first``) for a small
        alphabet (bytes), else None (a search among the pairs of units some merge joins)."""
        if self.n_base > 1 << 12:
            return None
        table = np.zeros(self.n_base * self.n_base, dtype=bool)
        table[self._ends] = True
        return table

    def may_join_pieces(self, numbers: np.ndarray, inner: np.ndarray, first_of: np.ndarray, last_of: np.ndarray,
                        kernels) -> np.ndarray | None:
        """`may_join` of every boundary k with `inner[k]` between pieces ``numbers[k]`` and
        ``numbers[k + 1]`` (`first_of`, `last_of`: each piece's first and last token), compiled
        (`piece_kernels.may_join`, one pass, no temporaries of the boundaries' length); None where
        `kernels` are not loaded or the alphabet is too big for a table."""
        table = self.unit_table() if kernels is not None and len(self._ends) else None
        if table is None:
            return None
        return kernels.may_join(numbers, inner, self._last_unit[last_of], self._first_unit[first_of], self.n_base,
                                table)

    def many(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """`joinable` of each ``(left[i], right[i])`` at once: walk both spines, looking every
        pair of spine tokens up among the merged pairs."""
        out = np.zeros(len(left), dtype=bool)
        keys = self._keys
        if len(keys) == 0:
            return out
        rows, x = np.arange(len(left)), np.asarray(left, dtype=np.int64)
        while len(rows):  # x: the next token down each left token's right spine
            r, xs, y = rows, x, np.asarray(right, dtype=np.int64)[rows]
            while len(r):  # y: the next token down each right token's left spine
                k = (xs << _SHIFT) | y
                at = np.minimum(np.searchsorted(keys, k), len(keys) - 1)
                hit = keys[at] == k
                out[r[hit]] = True
                y = self._left[y]
                go = ~hit & (y >= 0)
                r, xs, y = r[go], xs[go], y[go]
            x = self._right[x]
            go = (x >= 0) & ~out[rows]
            rows, x = rows[go], x[go]
        return out


def _lone_joins_merged(P, counts, flags, first_of, last_of, seg_len, seg_flat, texts, joins: Joins, merged):
    """The chunks whose joinable boundaries are all lone ones, each pair of pieces around one merged
    as one run, in numpy: what `_rejoined` makes of them, where its Python took 0.47 s for
    gutenberg30's 22,000 chunks with a joinable boundary.

    A lone boundary (no other joinable one within two pieces) between pieces i and i + 1: the two
    become the run merged from their text, R; the result stands unless R's first token differs from
    piece i's and joins piece i - 1's last, or R's last token differs from piece i + 1's and joins
    piece i + 2's first (a cascade: the chunk is left to `_rejoined`, as are chunks with joinable
    boundaries close together). Each distinct pair is merged once; R is appended to the pieces
    (`seg_len`, `seg_flat`) and replaces the pair in `P`. Returns the new `P`, `counts`, `flags`
    (those of the chunks left), `seg_len` and `seg_flat`."""
    flagged = np.flatnonzero(flags)
    ends = np.cumsum(counts)
    chunk = np.searchsorted(ends, flagged, side="right")
    near = np.diff(flagged) < 3
    lone = np.ones(len(flagged), dtype=bool)
    lone[1:] &= ~near
    lone[:-1] &= ~near
    i = flagged[lone]
    a, b = P[i].astype(np.int64), P[i + 1].astype(np.int64)
    n_seg = len(seg_len)
    pairs, which = np.unique(a * n_seg + b, return_inverse=True)
    runs = [merged(texts[k // n_seg] + texts[k % n_seg]) for k in pairs.tolist()]
    r_first = np.fromiter((r[0] for r in runs), dtype=np.int64, count=len(runs))[which]
    r_last = np.fromiter((r[-1] for r in runs), dtype=np.int64, count=len(runs))[which]
    ok = np.ones(len(i), dtype=bool)
    c = chunk[lone]
    ask = (i > ends[c] - counts[c]) & (r_first != first_of[a])  # a piece before, and R starts otherwise
    if ask.any():
        ok[ask] = ~joins.many(last_of[P[i[ask] - 1]], r_first[ask])
    ask = (i + 2 < ends[c]) & (r_last != last_of[b])  # a piece after, and R ends otherwise
    if ask.any():
        ok[ask] &= ~joins.many(r_last[ask], first_of[P[i[ask] + 2]])
    simple = np.zeros(len(flagged), dtype=bool)
    simple[np.flatnonzero(lone)[ok]] = True
    left = np.zeros(len(counts), dtype=bool)  # chunks left to `_rejoined`
    left[chunk[~simple]] = True
    use = simple & ~left[chunk]
    if not use.any():
        return P, counts, flags, seg_len, seg_flat
    j = flagged[use]
    P = P.copy()
    P[j] = n_seg + which[use[lone]]
    keep = np.ones(len(P), dtype=bool)
    keep[j + 1] = False
    removed = j + 1
    P = P[keep]
    counts = counts - np.bincount(chunk[use], minlength=len(counts))
    still = flagged[left[chunk]]  # the flagged boundaries left, renumbered as their left piece is
    flags = np.zeros(max(len(P) - 1, 0), dtype=bool)
    flags[still - np.searchsorted(removed, still)] = True
    r_len = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
    r_flat = np.fromiter((t for r in runs for t in r), dtype=np.int64, count=int(r_len.sum()))
    return P, counts, flags, np.concatenate((seg_len, r_len)), np.concatenate((seg_flat, r_flat))


def _rejoined(ids: list[int], offs: list[int], flagged: list[int], text_of, joinable, merged) -> list[int]:
    """A chunk's ids once runs of it are merged again wherever neighbours are joinable.

    `ids`: its pieces' ids side by side, piece i's from ``offs[i]`` (one more offset than
    pieces); `flagged`: the boundaries (i: after piece i) whose pieces are joinable;
    ``text_of(lo, hi)``: the text of pieces lo..hi-1; `merged(text)`: a run merged from base
    units. The pieces beside a flagged boundary are runs of their own, the stretches between them
    one run each; a run is pushed and, while the last two runs are joinable, they become one run
    merged again. A run that was never merged again keeps its slice of `ids` (no text or list is
    built for it: most of a chunk is such stretches)."""
    runs: list[list] = []  # [first piece, end piece, its own ids, or None: a slice of `ids`]

    def first(run: list) -> int:
        return ids[offs[run[0]]] if run[2] is None else run[2][0]

    def last(run: list) -> int:
        return ids[offs[run[1]] - 1] if run[2] is None else run[2][-1]

    def push(lo: int, hi: int) -> None:
        runs.append([lo, hi, None])
        while len(runs) > 1 and joinable(last(runs[-2]), first(runs[-1])):
            right, left = runs.pop(), runs.pop()
            runs.append([left[0], right[1], merged(text_of(left[0], right[1]))])

    pos, n = 0, len(offs) - 1
    for h in sorted({j for i in flagged for j in (i, i + 1)}):
        if h > pos:
            push(pos, h)
        push(h, h + 1)
        pos = h + 1
    if pos < n:
        push(pos, n)
    out: list[int] = []
    for lo, hi, own in runs:
        out.extend(ids[offs[lo]:offs[hi]] if own is None else own)
    return out


def _ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The indices of the ranges ``[starts[i], stops[i])`` side by side, and where each range
    begins among them.

    >>> [x.tolist() for x in _ranges(np.array([5, 0]), np.array([7, 3]))]
    [[5, 6, 0, 1, 2], [0, 2]]
    """
    lens = stops - starts
    begin = np.cumsum(lens) - lens
    return np.repeat(starts - begin, lens) + np.arange(int(lens.sum())), begin


def stage_two_start(base, pairs: Sequence[tuple[int, int]], chunks: Sequence[str], stage_one: Splitter,
                    segments: Mapping[str, Sequence[int]], *, processes: int = 1,
                    numbered: Numbered | None = None, kernels=None) -> tuple[np.ndarray, list[int]]:
    """Each stage-2 chunk's ids after the stage-1 merges `pairs` in rank order over the whole chunk,
    laid end to end, and each chunk's length. `segments`: the stage-1 chunks' ids after stage 1.

    `numbered`: the chunks' pieces numbered already against the keys of `segments`
    (`tokviz.core.superbpe.pieces`, e.g. in a child while stage 1 merged), else they are numbered
    here. `kernels`: `piece_kernels` where loaded (else the plain path). With `processes` and
    chunks of `HALVES_MIN_CHARS` or more, the first half of the chunks is worked out here and the
    second in a forked child, the same ids: each chunk's start depends on it alone."""
    if not pairs:
        return base_ids(base, chunks)
    n = len(pairs)
    whole = BpeTokenizer(base, pairs, STAGE_TWO)
    joins = Joins(pairs, base.size)
    known: dict[str, Sequence[int]] = {}  # the same few joins recur (' “' + 'I': 1,400 times in 40,000 chunks)

    def merged(text: str) -> Sequence[int]:
        ids = known.get(text)
        if ids is None:
            ids = known[text] = whole.encode_chunk(text, step=n, cached=False)[0]
        return ids

    words = list(segments)
    if numbered is not None:
        def job(part: Numbered) -> tuple[np.ndarray, list[int]]:
            return _start_from(part, segments, words, joins, merged, kernels)

        # (compiled, the start takes 0.3 s for gutenberg30's 6.5 million pieces: less than a child costs)
        if kernels is None and len(numbered.per_chunk) > 1 and len(numbered.numbers) >= HALVES_MIN_PIECES \
                and usable(processes) > 1:
            return _in_halves(job, numbered.halves())
        return job(numbered)
    split = pieces_splitter(stage_one, chunks)  # (built before a fork: the child has it too)

    def start(part: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        return _start_from(number_pieces(part, split, words), segments, words, joins, merged, kernels)

    chars = np.cumsum(np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks)))
    if len(chunks) > 1 and chars[-1] >= HALVES_MIN_CHARS and usable(processes) > 1:
        half = int(np.searchsorted(chars, chars[-1] // 2)) + 1
        return _in_halves(start, (chunks[:half], chunks[half:]))
    return start(chunks)


def _in_halves(job, halves) -> tuple[np.ndarray, list[int]]:
    """``job`` of the first half here and of the second in a forked child, joined."""
    first, second = here_and_forked(lambda: job(halves[0]), lambda: job(halves[1]))
    flat, lengths = np.concatenate((first[0], second[0])), first[1] + second[1]
    del first, second
    release_free_memory()  # the child's answer was read into the heap: hand back what it took
    return flat, lengths


def _start_from(numbered: Numbered, segments: Mapping[str, Sequence[int]], words: list[str], joins: Joins,
                merged, kernels=None) -> tuple[np.ndarray, list[int]]:
    """`stage_two_start` of the chunks `numbered` cut into pieces (`words`: the keys of
    `segments`); `merged` merges a run of text from its units; `kernels` (`piece_kernels`, or None)
    lay the pieces' ids out and filter the boundaries compiled."""
    counts, P = numbered.per_chunk, numbered.numbers
    segs = list(segments.values())
    segs.extend(merged(p) for p in numbered.extra)
    seg_len = np.fromiter(map(len, segs), dtype=np.int64, count=len(segs))
    seg_off = np.concatenate(([0], np.cumsum(seg_len)))
    seg_flat = np.fromiter(chain.from_iterable(segs), dtype=np.int64, count=int(seg_off[-1]))
    first_of, last_of = seg_flat[seg_off[:-1]], seg_flat[seg_off[1:] - 1]
    # the boundary after piece i joins it to piece i + 1 of the same chunk
    ends = np.cumsum(counts)
    inner = np.ones(max(len(P) - 1, 0), dtype=bool)
    inner[ends[:-1] - 1] = False
    flags = np.zeros(len(inner), dtype=bool)
    # only the boundaries whose end units some merge joins can be joinable (most are not)
    maybe = joins.may_join_pieces(P, inner, first_of, last_of, kernels) if inner.any() else None
    if maybe is not None:
        inner = maybe
        L, R = last_of[P[:-1][inner]], first_of[P[1:][inner]]
    elif inner.any():
        L, R = last_of[P[:-1][inner]], first_of[P[1:][inner]]
        maybe = joins.may_join(L, R)
        inner[np.flatnonzero(inner)[~maybe]] = False
        L, R = L[maybe], R[maybe]
    if inner.any():
        # each distinct boundary asked once (numpy's sort: a tenth of a second for 6 million,
        # where an argsort took 1.4 s), then every boundary looked up among the few joinable ones
        # (a search among all the distinct ones is random access: 3x as long)
        width = int(R.max()) + 1
        packed = L * width + R
        ordered = np.sort(packed)
        keys = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
        joinable = keys[joins.many(keys // width, keys % width)]
        if len(joinable):  # looked up only where the left token is one a joinable boundary has (1%)
            lefts = np.zeros(int(L.max()) + 1, dtype=bool)
            lefts[joinable // width] = True
            near = np.flatnonzero(lefts[L])
            at = np.minimum(np.searchsorted(joinable, packed[near]), len(joinable) - 1)
            hit = np.zeros(len(packed), dtype=bool)
            hit[near] = joinable[at] == packed[near]
            flags[inner] = hit
    texts = words + numbered.extra  # piece number -> its text
    if flags.any():
        P, counts, flags, seg_len, seg_flat = _lone_joins_merged(P, counts, flags, first_of, last_of, seg_len, seg_flat,
                                                                texts, joins, merged)
    if flags.any():
        P, counts, seg_len, seg_flat = _chunks_rejoined(P, counts, flags, segs, seg_len, seg_flat, texts, joins,
                                                        merged)
    # every chunk is now its pieces' ids side by side, laid out once
    seg_off = np.concatenate(([0], np.cumsum(seg_len)))
    lens = seg_len[P]
    if kernels is not None:
        flat = kernels.laid_out(P, seg_off, seg_flat)
    else:
        flat = np.repeat(seg_off[P] - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(int(lens.sum()))
        flat = seg_flat[flat]
    lengths = np.add.reduceat(lens, np.cumsum(counts) - counts).tolist() if len(counts) else []
    return flat, lengths


def _chunks_rejoined(P, counts, flags, segs, seg_len, seg_flat, texts, joins: Joins, merged):
    """The chunks with a joinable boundary (`flags`), each merged again by `_rejoined` and made one
    piece of its own, appended to the pieces (`seg_len`, `seg_flat`; `segs`: the ids of the pieces
    these chunks hold). Returns the new `P`, `counts`, `seg_len` and `seg_flat`."""
    flagged = np.flatnonzero(flags)  # boundary i: after piece i
    ends = np.cumsum(counts)
    chunk = np.searchsorted(ends, flagged, side="right")
    slow, first = np.unique(chunk, return_index=True)
    starts = (ends - counts)[slow]
    runs = []
    for c, a, f0, f1 in zip(slow.tolist(), starts.tolist(), first.tolist(), [*first[1:].tolist(), len(flagged)]):
        pieces = P[a:a + int(counts[c])].tolist()
        ids, offs = [], [0]
        for p in pieces:
            ids.extend(segs[p])
            offs.append(len(ids))
        runs.append(_rejoined(ids, offs, (flagged[f0:f1] - a).tolist(),
                              lambda lo, hi, pieces=pieces: "".join([texts[p] for p in pieces[lo:hi]]),
                              joins.joinable, merged))
    keep = np.ones(len(P), dtype=bool)
    keep[_ranges(starts + 1, ends[slow])[0]] = False  # each chunk's first piece stands for all of it
    P = P.copy()
    P[starts] = len(seg_len) + np.arange(len(slow))
    P = P[keep]
    counts = counts.copy()
    counts[slow] = 1
    r_len = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
    r_flat = np.fromiter((t for r in runs for t in r), dtype=np.int64, count=int(r_len.sum()))
    return P, counts, np.concatenate((seg_len, r_len)), np.concatenate((seg_flat, r_flat))
