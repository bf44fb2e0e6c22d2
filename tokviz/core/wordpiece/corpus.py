"""The corpus as WordPiece training starts from it: the base vocabulary (plain first characters,
then ``##`` characters), every word as base ids, the weighted count of every base symbol, and of
every adjacent pair with the words it occurs in.

`initial_counts` counts with numpy over all the words at once; `initial_counts_slow` is the plain
loop it equals (used when sums could pass 64 bits, and the tests' oracle). What this leaves out:
the merges (`tokviz.core.wordpiece.trainer`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from .trainer_records import WordPieceStep, merge_record

CONTINUATION = "##"
SHIFT = 32  # a pair (a, b) is the key ``a << SHIFT | b``
_SUM_LIMIT = 1 << 62  # below this, 64-bit sums of the counts cannot overflow


def base_symbols(words: Sequence[str]) -> list[str]:
    """The base vocabulary of `words`: plain first characters, then ``##`` characters.

    >>> base_symbols(["hug", "bun"])
    ['b', 'h', '##g', '##n', '##u']
    """
    words = [w for w in words if w]
    first = set(map(itemgetter(0), words))
    rest = set("".join([w[1:] for w in words]))
    return sorted(first) + [CONTINUATION + c for c in sorted(rest)]


def symbolize(word: str, index: Mapping[str, int]) -> list[int]:
    """Base ids of `word` (``index`` maps vocabulary forms to ids); unknown characters -> -1."""
    if not word:
        return []
    return [index.get(word[0], -1)] + [index.get(CONTINUATION + c, -1) for c in word[1:]]


@dataclass
class InitialCounts:
    """Counts of the unmerged corpus. Pairs are keyed ``a << SHIFT | b``, in order of first
    occurrence (words in order, then left to right).

    >>> c = initial_counts(["hug", "hugs"], [10, 5], {"h": 0, "##g": 1, "##s": 2, "##u": 3})
    >>> c.words, c.tok_count, [(k >> SHIFT, k & 0xFFFFFFFF, n) for k, n in c.pair_count.items()]
    ([[0, 3, 1], [0, 3, 1, 2]], [15, 15, 5, 15], [(0, 3, 15), (3, 1, 15), (1, 2, 5)])
    """

    words: list[list[int]]  # each word as base ids
    tok_count: list[int]  # base id -> weighted occurrences
    pair_count: dict[int, int]  # pair -> weighted adjacent occurrences
    pair_words: dict[int, list[int]]  # pair -> the words it occurs in, ascending


def _n_ids(index: Mapping[str, int]) -> int:
    return max(index.values(), default=-1) + 1


def _missing(word: str) -> ValueError:
    return ValueError(f"word {word!r} has characters missing from the base symbols")


def initial_counts_slow(words: Sequence[str], weights: Sequence[int], index: Mapping[str, int]) -> InitialCounts:
    """`initial_counts` as a plain loop over every character."""
    out = InitialCounts([], [0] * _n_ids(index), {}, {})
    for wi, (word, w) in enumerate(zip(words, weights)):
        seq = symbolize(word, index)
        if -1 in seq:
            raise _missing(word)
        out.words.append(seq)
        for t in seq:
            out.tok_count[t] += w
        for i in range(len(seq) - 1):
            k = (seq[i] << SHIFT) | seq[i + 1]
            out.pair_count[k] = out.pair_count.get(k, 0) + w
            lst = out.pair_words.get(k)
            if lst is None:
                out.pair_words[k] = [wi]
            elif lst[-1] != wi:
                lst.append(wi)
    return out


def _sums(keys: np.ndarray, values: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, group starts in that order, exact sums of `values` per key) of a stable sort by
    key (`keys` below `n_keys`: a radix sort when they fit in 16 bits)."""
    order = np.argsort(keys.astype(np.int16) if n_keys <= 1 << 15 else keys, kind="stable")
    sk = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sk[1:] != sk[:-1])))
    return order, starts, np.add.reduceat(values[order], starts)


def initial_counts(words: Sequence[str], weights: Sequence[int], index: Mapping[str, int]) -> InitialCounts:
    """The counts of `words` (with `weights`) in base ids of `index` (`ValueError` naming a word
    with a character `index` lacks)."""
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    n = int(lengths.sum()) if len(words) else 0
    if not n or max(weights) * n >= _SUM_LIMIT:
        return initial_counts_slow(words, weights, index)
    codes = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    alphabet = np.unique(codes)
    inv = np.searchsorted(alphabet, codes)
    chars = list(map(chr, alphabet.tolist()))
    plain = np.array([index.get(c, -1) for c in chars], dtype=np.int64)
    cont = np.array([index.get(CONTINUATION + c, -1) for c in chars], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    first = np.zeros(n, dtype=bool)
    first[starts[lengths > 0]] = True
    ids = np.where(first, plain[inv], cont[inv])
    word_of = np.repeat(np.arange(len(words)), lengths)
    if (ids < 0).any():
        raise _missing(words[int(word_of[np.argmax(ids < 0)])])
    wt = np.asarray(weights, dtype=np.int64)[word_of]
    n_ids = _n_ids(index)
    tok_count = [0] * n_ids
    order, at, sums = _sums(ids, wt, n_ids)
    for t, c in zip(ids[order[at]].tolist(), sums.tolist()):
        tok_count[t] = c
    flat = ids.tolist()
    out_words = [flat[a:b] for a, b in zip(starts.tolist(), (starts + lengths).tolist())]
    inner = np.flatnonzero(~first[1:])  # positions i with i + 1 in the same word
    if not len(inner):
        return InitialCounts(out_words, tok_count, {}, {})
    dense = ids[inner] * n_ids + ids[inner + 1]  # the pair (a, b) as a * n_ids + b
    order, at, sums = _sums(dense, wt[inner], n_ids * n_ids)
    sk, wo = dense[order], word_of[inner][order]  # words ascending within a key (stable sort)
    keep = np.concatenate(([True], (sk[1:] != sk[:-1]) | (wo[1:] != wo[:-1])))
    word_lists = wo[keep].tolist()
    bounds = np.searchsorted(np.flatnonzero(keep), at).tolist() + [len(word_lists)]
    by_first = np.argsort(order[at], kind="stable").tolist()  # pairs in order of first occurrence
    pairs = sk[at]
    key_list, sum_list = ((pairs // n_ids << SHIFT) | (pairs % n_ids)).tolist(), sums.tolist()
    pair_count = {key_list[g]: sum_list[g] for g in by_first}
    pair_words = {key_list[g]: word_lists[bounds[g]:bounds[g + 1]] for g in by_first}
    return InitialCounts(out_words, tok_count, pair_count, pair_words)


N_CANDIDATES = 5  # pairs a step reports: the winner and the best runners-up


class TrainingStart:
    """What both WordPiece trainers start from: the checked arguments, the base vocabulary and the
    id layout (base symbol i gets ``first_id + i``; merge r gets ``first_id + len(symbols) + r``)."""

    def __init__(self, words: Sequence[str], weights: Sequence[int], *, symbols: Sequence[str] | None = None,
                 first_id: int = 0, min_count: int = 1, n_candidates: int = N_CANDIDATES) -> None:
        if len(words) != len(weights):
            raise ValueError("words and weights differ in length")
        if any(w <= 0 for w in weights):
            raise ValueError("word counts must be positive")
        self.symbols = list(base_symbols(words) if symbols is None else symbols)
        self.first_id = first_id
        self.min_count = max(1, min_count)
        self.n_candidates = max(1, n_candidates)
        self.forms = list(self.symbols)  # internal id -> vocabulary form
        self.rank = 0  # merges yielded so far
        self.length = 0  # the corpus's weighted length in tokens (set by the trainer)

    def record_merge(self, a: int, b: int, sites: int, candidates: tuple) -> WordPieceStep:
        """The record of the next merge, of (`a`, `b`) (internal ids, the winner of `candidates`)
        at `sites` weighted sites; the merged token's form is appended and the corpus shortened."""
        new = len(self.forms)
        form = self.forms[a] + self.forms[b][len(CONTINUATION):]
        self.forms.append(form)
        self.length -= sites
        step = merge_record(self.rank, new + self.first_id, form, self.length, candidates)
        self.rank += 1
        return step
