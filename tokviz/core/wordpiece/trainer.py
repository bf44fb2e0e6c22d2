"""Incremental WordPiece training: a generator of `WordPieceStep` records, one per merge.

The corpus is a list of distinct words (chunks, in order of first appearance) with counts. A word
starts as characters: the first is a plain piece (``u``), every other one a continuation piece
(``##n``). The base vocabulary is the plain characters sorted by code point, then the continuation
characters sorted by code point.

Each step merges the pair (a, b) with the highest score

    score(a, b) = count(ab) / (count(a) * count(b))

where count(ab) is the weighted number of adjacent occurrences of the pair and count(a) the
weighted number of occurrences of token a, both in the current segmentation of the corpus.
Worked example: ``hug x10, pug x5, pun x12, bun x4, hugs x5`` (the Hugging Face course corpus):
count(##g) = 20, count(##s) = 5, count(##g ##s) = 5, so score(##g, ##s) = 5 / (20 * 5) = 1/20,
which beats the most frequent pair (##u, ##g) = 20 / (36 * 20) = 1/36.

Ties, exactly: equal scores (compared as exact fractions) go to the pair whose first occurrence
comes first: words in order of first appearance, then the pair's character offset in the word
(the BPE trainer's rule). Counting is naive (``##a ##a ##a`` holds the pair twice) and a merge
replaces occurrences left to right. The merged token is plain if its left part is plain, else a
continuation: ``h`` + ``##u`` -> ``hu``, ``##u`` + ``##g`` -> ``##ug``. Pairs below `min_count`
never win. The same piece string can in principle come out of two different merges; it then
has two ids and encoders use the lower one.

How it stays fast: a merge revisits only the words that contain the pair, and only the pairs
next to a merged site change count. Scores also change when count(a) or count(b) change, which
touches every pair containing a or b. Pairs are therefore grouped by their right token b: inside
group b the order is that of count(xb) / count(x) (count(b) is common to all), so when count(b)
falls the group keeps its order and only its one entry in the global heap moves. When count(a)
falls, the pairs (a, y) move up inside their groups (a left token has few distinct right
neighbours). Entries are otherwise lazy: a pair's count only falls after the step that creates
it and its first occurrence only moves later, so a stale entry is never worse than the truth.
Keys are exact: ``count(ab) * 2**K // (count(a) * count(b))`` with ``2**K`` above the square of
any denominator, so distinct fractions never share a key and equal fractions always do; inside a
group, ``count(ab) / count(a)`` as a float while the corpus is shorter than 2**26 (a fraction of
at most 1, distinct ones at least 2**-52 apart: rounding keeps their order and equal ones equal),
else ``count(ab) * 2**G // count(a)`` the same way. A pair's first position is
cached with the version of the word it is in: it can only move when that word is merged.

What this leaves out: counting the corpus (`tokviz.core.text.chunks`), the counts before any merge
(`tokviz.core.wordpiece.corpus`), merging inside one word (`tokviz.core.wordpiece.word_merge`), the
group keys and stale-entry dropping (`tokviz.core.wordpiece.lazy_heaps`),
settings, timelines and ids of special tokens (`tokviz.core.wordpiece.timeline`), encoding
(`tokviz.core.wordpiece.tokenizer`).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterator, Sequence

from .corpus import SHIFT, TrainingStart, initial_counts
from .lazy_heaps import drop_stale, group_key_for, score_shift
from .trainer_records import WordPieceCandidate, WordPieceStep
from .word_merge import MASK, merge_many, merge_one

MIN_COMPACT = 64  # heaps shorter than this are never compacted
_SHIFT, _MASK = SHIFT, MASK


class WordPieceTrainer(TrainingStart):
    """Holds the mutable training state; iterate `steps()` to run merges one at a time.

    Ids: base symbol i gets ``first_id + i``; merge r gets ``first_id + len(symbols) + r``.

    >>> t = WordPieceTrainer(["hug", "pug", "pun", "bun", "hugs"], [10, 5, 12, 4, 5])
    >>> [(s.text, s.count, s.left_count, s.right_count) for s in t.steps(max_merges=2)]
    [('##gs', 5, 20, 5), ('hu', 15, 15, 36)]
    """

    def __init__(self, words: Sequence[str], weights: Sequence[int], **options) -> None:
        super().__init__(words, weights, **options)  # symbols, first_id, min_count, n_candidates
        index = {s: i for i, s in enumerate(self.symbols)}
        self.tok_len = [1] * len(self.symbols)  # internal id -> characters covered
        self.weights = [int(w) for w in weights]
        counts = initial_counts(words, self.weights, index)
        self.tok_count = counts.tok_count  # internal id -> weighted occurrences
        self.words: list[list[int]] = counts.words
        self.starts: list[int] = []  # global character position of each word's start
        pos = 0
        for word in words:
            self.starts.append(pos)
            pos += len(word)
        self.length = sum(len(s) * w for s, w in zip(self.words, self.weights))
        # exact keys: 2**K exceeds the square of any count(a) * count(b) (scores); inside a group
        # the key of count(ab) / count(a) (`tokviz.core.wordpiece.lazy_heaps`)
        self._k = score_shift(self.length)
        self._group_key = group_key_for(self.length)
        self.pair_count: dict[int, int] = {}
        self.pair_words: dict[int, list[int]] = {}  # tracked pairs only: words (ascending)
        self.first_idx: dict[int, int] = {}  # lazy pointer into pair_words[key]
        self.version = [0] * len(self.words)  # word -> how many merges changed it
        self.first_seen: dict[int, tuple[int, int, int]] = {}  # key -> (word, its version, position)
        self.by_left: dict[int, set[int]] = {}  # token -> tracked pairs with it on the left
        # Pairs are grouped by their right token b: groups[b] is a heap of (-count(ab) * 2**G //
        # count(a), first position, key); pinned[key] is the pair's current entry there. The
        # global heap holds one entry per group, (-score key, first position, b) of its best
        # pair; group_pinned[b] is the current one.
        # A pinned entry is the very tuple in the heap (a copy left behind is stale); a sequence
        # number in every entry keeps equal keys apart.
        self.groups: dict[int, list[tuple[int, int, int, int]]] = {}
        self.pinned: dict[int, tuple[int, int, int, int]] = {}
        self.group_pinned: dict[int, tuple[int, int, int, int]] = {}
        self.heap: list[tuple[int, int, int, int]] = []
        # group -> pairs whose key rose while still below the group's top (`_raise_left`)
        self._raise_later: defaultdict[int, set[int]] = defaultdict(set)
        # A heap is compacted (its stale entries dropped) once it is twice as long as after the
        # last compaction: dropping them in bulk is cheaper than popping each past the top.
        self._limit: dict[int, int] = {}  # group -> length that triggers its compaction
        self._heap_limit = MIN_COMPACT
        self._n = 0
        self._seen: dict[int, tuple[tuple[int, int, int, int], WordPieceCandidate]] = {}  # key -> (state, record)
        self.pair_count.update(counts.pair_count)
        for k, lst in counts.pair_words.items():
            if self.pair_count[k] >= self.min_count:
                self._track(k, lst)
                self._push_pair(k, self._first_pos(k))

    # -- state --------------------------------------------------------------------------------

    def _track(self, k: int, words: list[int]) -> None:
        self.pair_words[k] = words
        self.first_idx[k] = 0
        self.by_left.setdefault(k >> _SHIFT, set()).add(k)

    def _untrack(self, k: int) -> None:
        if self.pair_words.pop(k, None) is not None:
            del self.first_idx[k]
            self.by_left[k >> _SHIFT].discard(k)
        self.pinned.pop(k, None)
        self.first_seen.pop(k, None)

    def _score_key(self, k: int) -> int:
        """count(ab) * 2**K // (count(a) * count(b)): the exact order of the scores."""
        return (self.pair_count[k] << self._k) // (self.tok_count[k >> _SHIFT] * self.tok_count[k & _MASK])

    def _first_pos(self, k: int) -> int:
        """Global character position of the first live occurrence of pair `k`."""
        lst = self.pair_words[k]
        i = self.first_idx[k]
        seen = self.first_seen.get(k)
        if seen is not None and seen[0] == lst[i] and seen[1] == self.version[seen[0]]:
            return seen[2]  # its word has not changed since
        a, b = k >> _SHIFT, k & _MASK
        tok_len = self.tok_len
        while True:
            w = lst[i]
            seq = self.words[w]
            off = 0
            for j in range(len(seq) - 1):
                if seq[j] == a and seq[j + 1] == b:
                    self.first_idx[k] = i
                    pos = self.starts[w] + off
                    self.first_seen[k] = (w, self.version[w], pos)
                    return pos
                off += tok_len[seq[j]]
            i += 1

    def _seq(self) -> int:
        self._n += 1
        return self._n

    def _push_pair(self, k: int, pos: int) -> None:
        """Give pair `k` an entry with its true key in its group (unless its entry there is
        already as good) and raise the group if needed (`_group_key`, `_seq` and
        `_offer_group` written out: this runs for every pair next to every merge)."""
        c, ca = self.pair_count[k], self.tok_count[k >> _SHIFT]
        neg = -self._group_key(c, ca)
        old = self.pinned.get(k)
        if old is not None and (old[0] < neg or (old[0] == neg and old[1] <= pos)):
            return
        self._n = n = self._n + 1
        entry = self.pinned[k] = (neg, pos, n, k)
        b = k & _MASK
        group = self.groups.get(b)
        if group is None:
            group = self.groups[b] = []
        heapq.heappush(group, entry)
        if len(group) > self._limit.get(b, MIN_COMPACT):
            self._compact_group(b)
        gneg = -((c << self._k) // (ca * self.tok_count[b]))
        old = self.group_pinned.get(b)
        if old is None or gneg < old[0] or (gneg == old[0] and pos < old[1]):
            self._n = n = n + 1
            entry = self.group_pinned[b] = (gneg, pos, n, b)
            heapq.heappush(self.heap, entry)
            if len(self.heap) > self._heap_limit:
                self._compact_heap()

    def _raise_left(self, t: int, pending: set[int]) -> None:
        """After count(t) fell: `_push_pair` for every tracked live pair (t, y) at its first
        position, written out with count(t) hoisted (the hottest loop of training).

        A group's global entry is never worse than any entry in the group, except for the
        groups in `pending`, whose count fell and which are not raised yet: so a pair that does
        not become the top of its group needs no global score (most do not)."""
        ct, shift, group_key = self.tok_count[t], self._k, self._group_key
        counts, tok_count, later = self.pair_count, self.tok_count, self._raise_later
        pinned, groups, group_pinned, push = self.pinned, self.groups, self.group_pinned, heapq.heappush
        n, min_count, limit = self._n, self.min_count, self._limit
        for x in self.by_left.get(t, ()):
            entry = pinned.get(x)
            if entry is None:
                continue
            c = counts[x]
            if c < min_count:
                continue
            neg = -group_key(c, ct)
            if entry[0] <= neg:
                continue  # its entry (at the same position) is already as good
            b = x & _MASK
            group = groups[b]  # a pinned pair has its group
            if neg > group[0][0] and b not in pending:
                # still below its group's top: raised when the group is next looked at (a pair
                # whose left token merges often is raised many times before that)
                later[b].add(x)
                continue
            n += 1
            pos = entry[1]
            entry = pinned[x] = (neg, pos, n, x)
            push(group, entry)
            if len(group) > limit.get(b, MIN_COMPACT):
                self._compact_group(b)
            if group[0] is not entry and b not in pending:
                continue
            gneg = -((c << shift) // (ct * tok_count[b]))
            old = group_pinned.get(b)
            if old is None or gneg < old[0] or (gneg == old[0] and pos < old[1]):
                n += 1
                entry = group_pinned[b] = (gneg, pos, n, b)
                push(self.heap, entry)
                if len(self.heap) > self._heap_limit:
                    self._compact_heap()
        self._n = n

    def _offer_group(self, b: int, g: tuple[int, int]) -> None:
        """Give group `b` the global entry `g` if that is better than its current one."""
        old = self.group_pinned.get(b)
        if old is None or g < old[:2]:
            entry = self.group_pinned[b] = (*g, self._seq(), b)
            heapq.heappush(self.heap, entry)
            if len(self.heap) > self._heap_limit:
                self._compact_heap()

    def _compact_group(self, b: int) -> None:
        """Drop the stale entries of group `b` (never while `candidates` has entries out)."""
        self._limit[b] = 2 * drop_stale(self.groups[b], self.pinned) + MIN_COMPACT

    def _compact_heap(self) -> None:
        """Drop the stale entries of the global heap (never while `candidates` has groups out)."""
        self._heap_limit = 2 * drop_stale(self.heap, self.group_pinned) + MIN_COMPACT

    def _raise_deferred(self, b: int) -> None:
        """Give the pairs of group `b` whose raise `_raise_left` put off their true keys."""
        pinned, counts, group = self.pinned, self.pair_count, self.groups[b]
        for x in self._raise_later.pop(b):
            entry = pinned.get(x)  # None: gone; a count below the minimum: `_group_top` drops it
            if entry is not None and counts[x] >= self.min_count:
                neg = -self._group_key(counts[x], self.tok_count[x >> _SHIFT])
                if entry[0] > neg:
                    entry = pinned[x] = (neg, entry[1], self._seq(), x)
                    heapq.heappush(group, entry)
        if len(group) > self._limit.get(b, MIN_COMPACT):
            self._compact_group(b)

    def _group_top(self, b: int) -> tuple[int, int, int, int] | None:
        """The best live entry (-group key, pos, seq, key) of group `b`, refreshing stale
        entries; it is left in place."""
        if b in self._raise_later:
            self._raise_deferred(b)
        h = self.groups.get(b)
        pinned, counts, tok_count, group_key = self.pinned, self.pair_count, self.tok_count, self._group_key
        first_seen, version = self.first_seen, self.version
        while h:
            top = h[0]
            neg, pos, _, k = top
            if pinned.get(k) is not top:
                heapq.heappop(h)  # superseded, or the pair is gone
                continue
            c = counts[k]
            if c < self.min_count:
                heapq.heappop(h)
                self._untrack(k)
                continue
            true_neg = -group_key(c, tok_count[k >> _SHIFT])
            if true_neg == neg:
                seen = first_seen.get(k)  # `_first_pos`'s cache (set with first_idx, so its word)
                p = seen[2] if seen is not None and seen[1] == version[seen[0]] else self._first_pos(k)
            else:
                p = pos
            if true_neg != neg or p != pos:
                entry = pinned[k] = (true_neg, p, self._seq(), k)
                heapq.heapreplace(h, entry)
                continue
            return top
        return None

    def _raise_group(self, b: int) -> None:
        """Re-enter group `b` at its true best key (after count(b) fell)."""
        top = self._group_top(b)
        if top is not None:
            self._offer_group(b, (-self._score_key(top[3]), top[1]))

    # -- winner selection ---------------------------------------------------------------------

    def _pop_group(self) -> tuple[int, tuple[int, int, int, int], tuple[int, int]] | None:
        """Pop the group holding the best live pair: (b, its best entry, (-its score key, its
        position)). The group's global entry leaves the heap (`candidates` puts it back); the pair
        entry stays."""
        heap, gp = self.heap, self.group_pinned
        while heap:
            first = heap[0]
            neg, pos, _, b = first
            if gp.get(b) is not first:
                heapq.heappop(heap)
                continue
            top = self._group_top(b)
            if top is None:
                heapq.heappop(heap)
                del gp[b]
                continue
            g = (-self._score_key(top[3]), top[1])
            if g != (neg, pos):
                entry = gp[b] = (*g, self._seq(), b)
                heapq.heapreplace(heap, entry)
                continue
            heapq.heappop(heap)
            return b, top, g
        return None

    def candidates(self, n: int) -> list[tuple[int, int, int]]:
        """The `n` best live pairs as (-score key, first position, key), best first; the state is
        left as it was. The next group is looked at only when its entry (never worse than its best
        pair) beats every pair taken so far; a group's next pair only while more are wanted."""
        found: list[tuple[int, int, int]] = []
        taken_groups: list[int] = []
        taken_pairs: list[tuple[int, tuple[int, int, int, int]]] = []
        merge: list[tuple[int, int, int, int]] = []  # (-score key, pos, key, b)
        heap, groups = self.heap, self.groups
        while len(found) < n:
            if heap and (not merge or heap[0][:2] < merge[0][:2]):
                nxt = self._pop_group()
                if nxt is not None:
                    b, entry, g = nxt
                    taken_groups.append(b)
                    taken_pairs.append((b, heapq.heappop(groups[b])))
                    heapq.heappush(merge, (*g, entry[3], b))
                continue
            if not merge:
                break
            neg, pos, k, b = heapq.heappop(merge)
            found.append((neg, pos, k))
            if len(found) < n:
                top = self._group_top(b)
                if top is not None:
                    taken_pairs.append((b, heapq.heappop(groups[b])))
                    heapq.heappush(merge, (-self._score_key(top[3]), top[1], top[3], b))
        for b, entry in taken_pairs:
            heapq.heappush(groups[b], entry)
        for b in taken_groups:
            heapq.heappush(heap, self.group_pinned[b])
        return found

    def _candidate(self, pos: int, k: int) -> WordPieceCandidate:
        """The record of a live pair; an unchanged runner-up keeps the record of the step before."""
        a, b = k >> _SHIFT, k & _MASK
        c, ca, cb = self.pair_count[k], self.tok_count[a], self.tok_count[b]
        state = (c, ca, cb, pos)
        seen = self._seen.get(k)
        if seen is not None and seen[0] == state:
            return seen[1]
        w = bisect_right(self.starts, pos) - 1
        fid = self.first_id
        cand = WordPieceCandidate((a + fid, b + fid), c / (ca * cb), c, ca, cb, w, pos - self.starts[w])
        self._seen[k] = (state, cand)
        return cand

    # -- merging ------------------------------------------------------------------------------

    def _merge(self, k: int, new: int) -> int:
        """Merge every occurrence of pair `k` into token `new`; return the weighted sites."""
        a, b = k >> _SHIFT, k & _MASK
        lst = self.pair_words[k]
        start = self.first_idx[k]
        counts = self.pair_count
        created: dict[int, None] = {}
        merged_total = 0
        all_words = self.words
        for w in lst[start:]:
            seq = all_words[w]
            n = len(seq)
            sites: list[int] = []  # old positions of the merged sites, left to right
            try:
                i = seq.index(a)  # the list scans run in C
                while i < n - 1:
                    if seq[i + 1] == b:
                        sites.append(i)
                        i += 2
                    else:
                        i += 1
                    if i < n - 1:
                        i = seq.index(a, i)
            except ValueError:
                pass
            if not sites:
                continue
            weight = self.weights[w]
            merged_total += len(sites) * weight
            if len(sites) == 1:  # the usual case, written out
                out, delta = merge_one(seq, sites[0], k, new)
            else:
                out, delta = merge_many(seq, sites, new)
            self.words[w] = out
            self.version[w] += 1
            for x, d in delta.items():
                if not d:
                    continue
                c = counts.get(x)
                if c is None:  # a new pair (it contains `new`)
                    counts[x] = d * weight
                    created[x] = None
                    words = self.pair_words.get(x)
                    if words is None:
                        self.pair_words[x] = [w]  # tracked (or not) once the step is done
                    else:
                        words.append(w)
                elif x in created:
                    counts[x] = c + d * weight
                    self.pair_words[x].append(w)
                else:
                    c += d * weight
                    if c <= 0:
                        del counts[x]
                        self._untrack(x)
                    else:
                        counts[x] = c
        self._untrack(k)
        counts.pop(k, None)
        self.tok_count[a] -= merged_total
        self.tok_count[b] -= merged_total
        self.tok_count.append(merged_total)
        for x in created:
            words = self.pair_words.pop(x)
            if counts[x] >= self.min_count:
                self._track(x, words)
                self._push_pair(x, self._first_pos(x))
        pending = {t for t in (a, b) if self.tok_count[t] > 0}
        for t in list(pending):
            # count(t) fell: pairs (t, y) rise within their groups, group t rises as a whole
            self._raise_left(t, pending)
            self._raise_group(t)
            pending.discard(t)
        return merged_total

    def steps(self, *, max_merges: int | None = None) -> Iterator[WordPieceStep]:
        """Yield merges until `max_merges` are done or no pair reaches `min_count`."""
        while max_merges is None or self.rank < max_merges:
            best = self.candidates(self.n_candidates)
            if not best:
                return
            cands = tuple([self._candidate(pos, k) for _, pos, k in best])
            _, _, k = best[0]
            self._seen.pop(k, None)  # merged: it never comes back
            a, b = k >> _SHIFT, k & _MASK
            self.tok_len.append(self.tok_len[a] + self.tok_len[b])
            yield self.record_merge(a, b, self._merge(k, len(self.forms)), cands)

    def segments(self, chunk: int) -> list[int]:
        """Current ids of word number `chunk` (for inspection and tests)."""
        return [t + self.first_id for t in self.words[chunk]]
