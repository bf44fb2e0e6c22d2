"""Unigram (SentencePiece-style) training: a generator of `UnigramRound` records.

The corpus is a list of distinct words (chunks) with counts; with a `word_prefix` (default
``▁``, SentencePiece's marker) every word is read as ``▁word``, so pieces can tell a word start
from the inside of a word. The rules, exactly:

1. **Seed.** Count every substring of at most `max_piece_chars` characters (default 16) of every
   word, weighted by the word's count. Keep every single character, plus the `seed_size` minus
   that many longer substrings occurring at least `seed_min_count` times with the largest
   ``count * length`` (ties: the substring seen first); `seed_size` defaults to 10 times the
   target number of pieces. Initial log-probabilities are ``log(count * length)``, normalized
   (SentencePiece's seed scores).
2. **EM** (`em_iterations` per round, default 2). E-step: forward-backward over each word's
   lattice gives every piece's expected count (weighted by word counts). M-step: maximum
   likelihood, ``p(piece) = count / total`` (SentencePiece's digamma variant is not used; a
   count is floored at 1e-30 so no log-probability is -inf). Each E-step reports the corpus
   log-likelihood ``sum over words of count * log sum over segmentations of prod p(piece)``,
   which EM never lowers.
3. **Prune** (at the start of every round after round 0, while the vocabulary is larger than the
   target). Segment every word with Viterbi; ``freq(x)`` = weighted uses of piece x, ``F`` their
   sum. For a used piece x, take its best segmentation without x, ``alt(x)`` (Viterbi on the
   piece's own string with the one whole-piece edge removed), and SentencePiece's loss::

       loss(x) = freq(x) * [ log(freq(x) / F)
                             - sum over y in alt(x) of log((freq(y) + freq(x)) / (F + freq(x) * (len(alt(x)) - 1))) ]

   (SentencePiece multiplies by the weighted fraction of sentences whose segmentation uses x;
   with words as sentences that is freq(x) / (number of words) whenever x occurs at most once
   per word, a constant factor that does not change the ranking.) A piece no Viterbi
   segmentation uses has loss 0 (and no `alternative` is recorded for it). Single characters
   are never pruned. The round keeps ``floor(size * (1 - prune_fraction))`` pieces (at least
   the target, at most size - 1; exactly the target when that would leave less than 10% above
   it, so there is no tiny last round) and removes the others with the smallest loss; ties:
   lower score first, then the piece string. Then it renormalizes and runs its EM.

Scores are stored as integers: log-probabilities in units of 2**-20 nat (`SCORE_SCALE`), so that
sums over a segmentation are exact and Viterbi ties are well defined everywhere (training,
`tokviz.core.unigram.tokenizer`, saved models). With numba (`tokviz.core.jit`) the lattices are
compiled (`tokviz.core.unigram.compiled`: the same pieces, scores and pruning; log-likelihoods equal
to about 1e-15). Without it, numpy runs them, and a big corpus is trained in two processes when the
caller allows two (`processes`) and forking is safe (`tokviz.core.unigram.split`), to the same bytes. What this
leaves out: counting the corpus, settings and timelines (`tokviz.core.unigram.timeline`), the
rounds it yields, kept as arrays until read (`tokviz.core.unigram.rounds`), encoding
(`tokviz.core.unigram.tokenizer`).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from tokviz.core.errors import Cancelled

from .compiled import load_kernels, make_lattices
from .lattice import Lattices
from .rounds import SCORE_SCALE, PieceTable, RoundColumns, UnigramRound, order_by
from .settings import EM_ITERATIONS, MAX_PIECE_CHARS, PRUNE_FRACTION, WORD_PREFIX
from .split import SplitLattices, use_split

SEED_FACTOR = 10  # default seed size: this many times the target number of pieces
_FLOOR = 1e-30


def quantize(logp: np.ndarray) -> np.ndarray:
    """Log-probabilities -> integer scores (units of 2**-20 nat)."""
    return np.rint(np.asarray(logp) * SCORE_SCALE).astype(np.int64)


def first_by_keys(items: np.ndarray, n: int, key: np.ndarray, tie: np.ndarray, tie2: np.ndarray) -> np.ndarray:
    """The first `n` of `items` by (key, tie, tie2), in that order: ``items[np.lexsort((tie2, tie,
    key))][:n]`` for integer ties, `tie2` distinct and non-negative. The items whose key is below
    the n-th smallest are sorted by all three; of those whose key equals it (most of a round's
    candidates, whose unused pieces all lose 0), only the first needed are picked and sorted, by
    (tie, tie2) as one integer (`order_by`)."""
    if n <= 0:
        return items[:0]
    if n >= len(items):
        return items[np.lexsort((tie2, tie, key))]
    # the n-th smallest key: 0 when the cut falls among the zeros (the usual case), else by a sort
    # (np.partition takes 10x as long on a key of many equal values)
    nth = 0.0 if np.count_nonzero(key < 0) < n <= np.count_nonzero(key <= 0) else np.sort(key)[n - 1]
    below = np.flatnonzero(key < nth)
    at = np.flatnonzero(key == nth)
    below = below[np.lexsort((tie2[below], tie[below], key[below]))]
    return items[np.concatenate((below, at[order_by(tie[at], tie2[at], n - len(below))]))]


class Substrings(NamedTuple):
    """`substrings`' answer: occurrence i is ``texts[lat[i]][start[i]:end[i]]``; occurrences are
    in (text, start, end) order, and ``sid[i]`` numbers the distinct substrings in order of first
    occurrence. ``joined`` is the texts concatenated (to cut pieces from); ``order`` the rank of
    every distinct substring in Python's string order when the compiled trie gave it (else None)."""

    sid: np.ndarray
    lat: np.ndarray
    start: np.ndarray
    end: np.ndarray
    joined: str
    order: np.ndarray | None = None
    first: np.ndarray | None = None  # the compiled trie's: each number's first occurrence
    count: np.ndarray | None = None  # and its count (the texts' weights summed)


def substrings(texts: Sequence[str], max_chars: int, *, kernels=None, weights: np.ndarray | None = None) -> Substrings:
    """Every substring of at most `max_chars` characters of every text, as arrays (`Substrings`).
    With `kernels` (`compiled.load_kernels`) a compiled trie numbers them (and orders them, and
    gives each number's first occurrence and count: `weights` per text, default 1); without, numpy
    (`_substring_ids`); the numbers and occurrences are the same."""
    joined = "".join(texts)
    n = len(joined)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if kernels is not None:
        m = np.minimum(lengths, max_chars)  # a text of length L has sum(min(L - j, max_chars)) substrings
        total = int((m * (m + 1) // 2 + (lengths - m) * max_chars).sum())
        weights = np.ones(len(texts)) if weights is None else np.asarray(weights, dtype=np.float64)
        sid, lat, start, end, parent, last, first, count = kernels.substring_table(codes, lengths, weights,
                                                                                   max_chars, total)
        return Substrings(sid, lat, start, end, joined, kernels.trie_preorder(parent, last), first, count)
    pos = np.arange(n, dtype=np.int64)
    text_end = np.repeat(np.cumsum(lengths), lengths)
    room = np.minimum(text_end - pos, max_chars)
    first_slot = np.concatenate(([0], np.cumsum(room)[:-1])) if n else pos
    total = int(room.sum())
    sid = _substring_ids(codes, room, first_slot, total, max_chars)
    occ_pos = np.repeat(pos, room)
    occ_len = np.arange(total, dtype=np.int64) - np.repeat(first_slot, room) + 1
    text_start = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(texts) else lengths
    lat = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)[occ_pos] if n else occ_pos
    start = occ_pos - text_start[lat]
    return Substrings(sid, lat, start, start + occ_len, joined)


def string_ranks(strings: Sequence[str], order: np.ndarray | None = None) -> np.ndarray:
    """The rank of each of `strings` (distinct) in Python's string order; `order`: their ranks among
    some superset (`Substrings.order`), when known."""
    rank = np.empty(len(strings), dtype=np.int64)
    if order is not None:
        rank[np.argsort(order)] = np.arange(len(strings))
    else:
        rank[sorted(range(len(strings)), key=strings.__getitem__)] = np.arange(len(strings))
    return rank


def _substring_ids(codes: np.ndarray, room: np.ndarray, first_slot: np.ndarray, total: int,
                   max_chars: int) -> np.ndarray:
    """`substrings`' numbers in numpy: the substrings are compared exactly, one length after the
    other: by their characters packed into a 64-bit word while they fit, then by (group of the
    substring one character shorter, last character)."""
    n = len(codes)
    present = np.zeros(int(codes.max()) + 1 if n else 1, dtype=bool)
    present[codes] = True
    n_alpha = int(present.sum())
    dense = (np.cumsum(present) - 1).astype(np.uint64).take(codes) + np.uint64(1)  # 0 = no character
    bits = n_alpha.bit_length()
    per_word = 64 // bits
    sid = np.empty(total, dtype=np.int64)
    word = np.zeros(n, dtype=np.uint64)
    group = np.empty(n, dtype=np.int64)
    n_groups = 0
    for length in range(1, max_chars + 1):
        starts = np.flatnonzero(room >= length)
        if not len(starts):
            break
        last = dense[starts + length - 1]
        if length <= per_word:
            key = word[starts] = (word[starts] << np.uint64(bits)) | last
        else:
            key = group[starts].astype(np.uint64) * np.uint64(n_alpha + 1) + last
        order = np.argsort(key)
        sk = key[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = sk[1:] != sk[:-1]
        gid = np.empty(len(order), dtype=np.int64)
        gid[order] = np.cumsum(new) - 1 + n_groups
        n_groups += int(new.sum())
        group[starts] = gid
        sid[first_slot[starts] + length - 1] = gid
    first = np.full(n_groups, total, dtype=np.int64)
    np.minimum.at(first, sid, np.arange(total, dtype=np.int64))
    is_first = np.zeros(total, dtype=bool)
    is_first[first] = True
    return (np.cumsum(is_first) - 1).take(first)[sid]


class UnigramTrainer:
    """Holds the training state; iterate `rounds()` for one `UnigramRound` per round."""

    def __init__(
        self,
        words: Sequence[str],
        weights: Sequence[int],
        *,
        target_pieces: int,
        word_prefix: str | None = WORD_PREFIX,
        max_piece_chars: int = MAX_PIECE_CHARS,
        seed_size: int | None = None,
        seed_min_count: int = 2,
        prune_fraction: float = PRUNE_FRACTION,
        em_iterations: int = EM_ITERATIONS,
        n_special: int = 1,
        processes: int = 1,
    ) -> None:
        self.processes = processes  # more than 1: big batches may be split with a forked child
        if len(words) != len(weights):
            raise ValueError("words and weights differ in length")
        if len(words) and (min(weights) <= 0 or not all(words)):
            raise ValueError("words must be non-empty and their counts positive")
        kernels = load_kernels()  # None: the numpy path
        self.target = target_pieces
        self.prune_fraction = prune_fraction
        self.em_iterations = em_iterations
        self.n_special = n_special
        texts = [word_prefix + w for w in words] if word_prefix else [w for w in words]
        self.weights = np.asarray(weights, dtype=np.float64)
        self.corpus_length = int(sum(map(operator.mul, map(len, words), weights)))
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        sid, occ_lat, occ_start, occ_end, joined, order, first, count = substrings(
            texts, max_piece_chars, kernels=kernels, weights=self.weights)
        n_sub = int(sid.max()) + 1 if len(sid) else 0
        if count is None:  # the numpy path
            count = np.bincount(sid, weights=self.weights[occ_lat], minlength=n_sub)
            prev_max = np.maximum.accumulate(np.concatenate(([-1], sid[:-1]))) if len(sid) else sid
            first = np.flatnonzero(sid > prev_max)  # first occurrence of each substring id
        sub_len = occ_end[first] - occ_start[first]
        coverage = count * sub_len
        chars = np.flatnonzero(sub_len == 1)
        multi = np.flatnonzero((sub_len > 1) & (count >= seed_min_count))
        if seed_size is None:
            seed_size = SEED_FACTOR * target_pieces
        n_multi = max(0, seed_size - len(chars))
        multi = multi[order_by(-coverage[multi].astype(np.int64), multi)][:n_multi]  # coverages are whole
        selected = np.sort(np.concatenate((chars, multi)))
        piece_of = np.full(n_sub, -1, dtype=np.int64)
        piece_of[selected] = np.arange(len(selected))
        text_start = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        seen = first[selected]
        self.occ_text = occ_lat[seen]
        self.occ_start = occ_start[seen]
        at = (text_start[self.occ_text] + self.occ_start).tolist()
        self.pieces = [joined[a:a + n] for a, n in zip(at, sub_len[selected].tolist())]
        self.piece_len = sub_len[selected]
        # rank of each piece string, for exact tie-breaking in numpy
        self.piece_rank = string_ranks(self.pieces, None if order is None else order[selected])
        self.table = PieceTable(self.pieces, self.piece_rank)  # what the rounds' columns index into
        self.logp = np.log(coverage[selected]) - np.log(coverage[selected].sum())
        if kernels is not None:
            occurrences = kernels.occurrences_of(sid, occ_lat, occ_start, occ_end, piece_of)
        else:
            piece = piece_of.take(sid)
            keep = np.flatnonzero(piece >= 0)
            occurrences = tuple(x.take(keep) for x in (occ_lat, occ_start, occ_end, piece))
        del sid, occ_lat, occ_start, occ_end  # (the seed's occurrences are let go before the lattices' are laid out)
        self.lattice = make_lattices(kernels, lengths, *occurrences)
        self.alive = np.ones(len(self.pieces), dtype=bool)
        self.n_chars = len(chars)

    should_stop = None  # set to a callable: checked between the phases of a round (raises Cancelled)

    def _check_stop(self) -> None:
        if self.should_stop is not None and self.should_stop():
            raise Cancelled()

    @property
    def size(self) -> int:
        return int(self.alive.sum())

    def next_size(self, size: int | None = None) -> int:
        """How many of `size` (default: the current size) pieces the next prune keeps:
        ``floor(size * (1 - prune_fraction))``, but at least the target, at most
        ``size - 1``, and the target itself when the usual cut would leave less than 10% above
        it (no tiny last round)."""
        size = self.size if size is None else size
        keep = int(size * (1.0 - self.prune_fraction))
        if keep < self.target * 1.1:
            keep = self.target
        return max(self.target, min(keep, size - 1))

    def rounds_needed(self) -> int:
        """How many prune rounds will follow round 0 (fewer if only characters are left)."""
        size, n = self.size, 0
        while size > max(self.target, self.n_chars):
            size, n = self.next_size(size), n + 1
        return n

    # -- EM -------------------------------------------------------------------------------------

    def m_step(self, counts: np.ndarray) -> np.ndarray:
        """The M-step: log-probabilities of the pieces from their expected `counts` (alive pieces
        floored, dead ones -inf)."""
        c = np.where(self.alive, np.maximum(counts, _FLOOR), 0.0)
        live = np.flatnonzero(self.alive)  # the logarithms of these only (a late round: a tenth of the seed)
        out = np.full(len(c), -np.inf)
        out[live] = np.log(c[live]) - np.log(c.sum())
        return out

    def _em(self) -> list[np.ndarray]:
        """The round's E- and M-steps: log Z per word before each M-step."""
        zs = []
        for _ in range(self.em_iterations):
            self._check_stop()
            counts, z = self.lattice.e_step(self.logp, self.weights, len(self.pieces))
            zs.append(z)
            self.logp = self.m_step(counts)
        return zs

    def _scores(self) -> tuple[np.ndarray, np.ndarray]:
        """(integer scores, the same as exact floats; dead pieces -inf)."""
        q = np.zeros(len(self.pieces), dtype=np.int64)
        q[self.alive] = quantize(self.logp[self.alive])
        qf = np.where(self.alive, q / SCORE_SCALE, -np.inf)
        return q, qf

    # -- pruning --------------------------------------------------------------------------------

    def _alternatives(self, idx: np.ndarray, qf: np.ndarray):
        """Best segmentation of each piece ``idx[k]`` without the piece itself, as arrays
        (k, start, end, piece), one row per token."""
        return self.lattice.alternatives(self.occ_text[idx], self.occ_start[idx], self.piece_len[idx], qf, pieces=idx)

    def _prune(self, q: np.ndarray, qf: np.ndarray, freq: np.ndarray) -> dict[str, np.ndarray] | None:
        """Prune for the next round; returns the pruned pieces' `RoundColumns` fields (in pruning
        order), or None when only single characters are left."""
        n_prune = self.size - self.next_size()
        cand = np.flatnonzero(self.alive & (self.piece_len > 1))
        if not len(cand):
            return None
        used = cand[freq[cand] > 0]
        loss = np.zeros(len(self.pieces))
        k = s = p = np.zeros(0, dtype=np.int64)
        if len(used):
            k, s, _, p = self._alternatives(used, qf)
            self._check_stop()
            total = freq.sum()
            fi = freq[used]
            n_alt = np.bincount(k, minlength=len(used))
            logsum_alt = np.log(total + fi * (n_alt - 1))
            term = np.log(freq[p] + fi[k]) - logsum_alt[k]
            logprob_alt = np.bincount(k, weights=term, minlength=len(used))
            loss[used] = fi * (np.log(fi) - np.log(total) - logprob_alt)
        chosen = first_by_keys(cand, n_prune, loss[cand], q[cand], self.piece_rank[cand])
        pruned = {"pruned": chosen, "loss": loss[chosen], "freq": np.rint(freq[chosen]).astype(np.int64),
                  "pruned_scores": q[chosen], **self._alt_columns(chosen, used[k], s, p)}
        self.alive[chosen] = False
        self.lattice = self.lattice.subset(self.alive)
        live = self.logp[self.alive]
        top = live.max()
        self.logp = np.where(self.alive, self.logp - (top + np.log(np.exp(live - top).sum())), -np.inf)
        return pruned

    def _alt_columns(self, chosen: np.ndarray, owner: np.ndarray, start: np.ndarray,
                     piece: np.ndarray) -> dict[str, np.ndarray]:
        """The alternatives of the `chosen` pieces from the rows (owner, start, piece) of every used
        piece's: ``alt_offsets`` and ``alt_pieces`` (`RoundColumns`)."""
        at = np.full(len(self.pieces), -1, dtype=np.int64)
        at[chosen] = np.arange(len(chosen))
        row_at = at[owner]
        rows = np.flatnonzero(row_at >= 0)
        row_at, start, piece = row_at[rows], start[rows], piece[rows]
        order = np.lexsort((start, row_at))
        offsets = np.zeros(len(chosen) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_at, minlength=len(chosen)), out=offsets[1:])
        return {"alt_offsets": offsets, "alt_pieces": piece[order].astype(np.int64)}

    # -- rounds ---------------------------------------------------------------------------------

    def _record(self, index: int, lls: tuple[float, ...], q: np.ndarray, freq: np.ndarray,
                pruned: dict[str, np.ndarray]) -> UnigramRound:
        alive = np.flatnonzero(self.alive)
        return UnigramRound(
            index=index,
            vocab_size=self.n_special + len(alive),
            log_likelihood=lls[-1],
            em_log_likelihood=lls,
            viterbi_tokens=int(round(freq.sum())),
            columns=RoundColumns(self.table, alive, q[alive], **pruned),
        )

    def rounds(self) -> Iterator[UnigramRound]:
        """Round 0 (seed + EM), then prune + EM rounds until the target size is reached."""
        split = None
        if isinstance(self.lattice, Lattices) and use_split(self.lattice, self.processes):
            self.lattice = split = SplitLattices(self.lattice, self.weights)
        try:
            yield from self._rounds()
        finally:
            if split is not None:
                split.close()

    def _rounds(self) -> Iterator[UnigramRound]:
        index = 0
        pruned: dict[str, np.ndarray] = {}  # the pieces pruned at the start of the round
        while True:
            zs = self._em()
            self._check_stop()
            q, qf = self._scores()
            # log Z after the last M-step, and the Viterbi segmentation's uses of each piece
            z, freq = self.lattice.log_z_and_freq(self.logp, qf, self.weights, len(self.pieces))
            # the log-likelihoods, one after the other: a multi-threaded BLAS wakes its
            # threads once per round, not once per dot product
            lls = self.lattice.log_likelihoods(self.weights, (*zs, z))
            self._check_stop()
            yield self._record(index, tuple(lls), q, freq, pruned)
            if self.size <= self.target:
                return
            pruned = self._prune(q, qf, freq)
            if pruned is None:
                return  # only single characters are left
            index += 1
