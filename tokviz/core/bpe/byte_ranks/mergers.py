"""`Mergers`: which loop merges a batch of new chunks: one by one, the numpy rounds or the compiled one.

All give the one-chunk loop's ids. The compiled loop (`compiled`, numba) takes about half the CPU
per chunk, but importing numba and loading its kernels costs a fixed ~0.5 s: it is loaded only
before a text that a sample says will bring a hundred thousand new chunks or more (`prepare`,
`needs_kernels`: udhr2's 380 languages do, the 32 MB of gutenberg30's English does not), and
before a fork, so that both processes inherit it rather than each loading it. The numpy rounds
cost a fixed ~0.09 s the first time (numpy's import, the tables): a text a sample says will bring
few new chunks, while neither batch loop is built, is merged one chunk at a time and never imports
numpy (`one_by_one`: a megabyte of English, 16,000 new chunks, 0.32 s instead of 0.38 s for the
whole `tokviz encode`). Without numba (or with ``TOKVIZ_JIT=0``) the numpy rounds do the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tokviz.core import jit
from tokviz.core.text import new_words

from .one_chunk import LONG_PIECE, bpe_parts_heap

KERNELS = "tokviz.core.bpe.byte_ranks.kernels"  # imports numba
COMPILED_LONGEST = 4096  # longer pieces take the heap loop (the compiled loop's rounds cost length squared)
_EXPECTED_MIN = new_words.EXPECTED_MIN  # new chunks a whole text is expected to bring before the kernels load
_DENSITY_MIN = new_words.DENSITY_MIN  # ... and new words per character in its samples (English 0.004-0.007)
# new words a text is expected to bring below which it is merged one chunk at a time while no batch
# loop is built (a megabyte of English: ~3,700; two: ~9,600, where both ways take as long)
ONE_BY_ONE_MAX = 8_000
# new chunks merged one at a time after which the batch loop is built all the same: the sample counts
# words of letters, and a text of other chunks (numbers, code) may bring many more than it says
ONE_BY_ONE_LIMIT = 24_000


class Mergers:
    """``merge_all(pieces, thr)`` by the cheaper of the two batch loops; both made on first use."""

    def __init__(self, enc: Mapping[bytes, int], vocab: Sequence[bytes | None], big: int) -> None:
        self._enc, self._vocab, self._big = enc, vocab, big
        self._batch = None  # `merge_rounds.BatchMerger`
        self._compiled = None  # `compiled.CompiledMerger`
        self._no_kernels = False  # kernels off or not loadable here
        self.one_by_one = False  # the text being encoded brings too few new chunks to build a batch loop for
        self._one_by_one_done = 0  # new chunks merged one at a time so far

    @property
    def loaded(self):
        """The compiled loop if loaded (`compiled`), else None: nothing is loaded to say so."""
        return self._compiled

    def batch(self):
        """The numpy loop (`merge_rounds.BatchMerger`), built on first use."""
        if self._batch is None:
            from .merge_rounds import BatchMerger  # numpy: not for a short text's tokenizer

            self._batch = BatchMerger(self._enc, self._vocab, self._big)
        return self._batch

    def compiled(self):
        """The compiled loop, loaded on first use; None without kernels."""
        if self._compiled is None and not self._no_kernels:
            kernels = jit.kernels(KERNELS) if len(self._vocab) < 1 << 31 else None  # ids in the kernel's 32 bits
            if kernels is None:
                self._no_kernels = True
                return None
            from .compiled import CompiledMerger

            self._compiled = CompiledMerger(kernels, self._enc, len(self._vocab))
        return self._compiled

    def merge_all(self, pieces: Sequence[bytes], thr: int, *, as_text: bool = False) -> list:
        """The ids of each piece (2 bytes or more, not a token below `thr`) as a tuple, or with
        `as_text` as one string of decimal ids separated by spaces; the longest pieces (many rounds
        for a few pieces) one by one with the heap loop."""
        compiled = self._compiled
        longest = LONG_PIECE if compiled is None else COMPILED_LONGEST
        if max(map(len, pieces), default=0) <= longest:
            return self._merge(compiled, pieces, thr, as_text)
        long = [i for i, p in enumerate(pieces) if len(p) > longest]
        out: list = [()] * len(pieces)
        enc = self._enc
        for i in long:
            p = pieces[i]
            b = bpe_parts_heap(enc, p, thr)
            t = tuple([enc[p[b[k] : b[k + 1]]] for k in range(len(b) - 1)])
            out[i] = " ".join(map(str, t)) if as_text else t
        short = sorted(set(range(len(pieces))).difference(long))
        for i, t in zip(short, self._merge(compiled, [pieces[i] for i in short], thr, as_text) if short else []):
            out[i] = t
        return out

    def _merge(self, compiled, pieces: Sequence[bytes], thr: int, as_text: bool) -> list:
        if compiled is not None:
            with jit.announced():  # the first call on a machine compiles the kernels
                return compiled.merge_texts(pieces, thr) if as_text else compiled.merge_all(pieces, thr)
        batch = self.batch()
        return batch.merge_texts(pieces, thr) if as_text else batch.merge_all(pieces, thr)

    def warm_up(self) -> None:
        """Build the numpy loop now (while a window is idle)."""
        self.batch()

    def merged_one_by_one(self, n: int) -> None:
        """`n` more new chunks were merged one at a time: past `ONE_BY_ONE_LIMIT` in all, the batch
        loop takes over (the sample said fewer)."""
        self._one_by_one_done += n
        if self._one_by_one_done > ONE_BY_ONE_LIMIT:
            self.one_by_one = False

    def before_fork(self) -> None:
        """Build the numpy loop now, unless the text is merged one chunk at a time: before a fork,
        so that both processes inherit it rather than each building it."""
        if not self.one_by_one:
            self.batch()

    def prepare(self, text: str) -> None:
        """Choose how the new chunks of `text` will be merged, before encoding it (and before a
        fork, so that both processes inherit the choice): one by one when a sample says they will
        be few and no batch loop is built yet; the compiled loop, loaded now, when `text` will repay
        it (`needs_kernels`)."""
        few = self._batch is None and self._compiled is None and self._one_by_one_done <= ONE_BY_ONE_LIMIT
        may_load = self._compiled is None and not self._no_kernels and len(text) >= _EXPECTED_MIN
        if len(text) < ONE_BY_ONE_MAX or not (few or may_load):  # no sample needed (a text cannot
            self.one_by_one = few and len(text) < ONE_BY_ONE_MAX  # bring more new chunks than characters)
            return
        density = new_word_density(text, self._enc)
        self.one_by_one = few and density * len(text) < ONE_BY_ONE_MAX
        if may_load and _repays_kernels(density, len(text)):
            self.compiled()


def new_word_density(text: str, enc: Mapping[bytes, int]) -> float:
    """New words per character in a few slices of `text` (`new_words.new_word_density`): the
    distinct words (a chunk is mostly such a word after its space) that are not tokens."""
    return new_words.new_word_density(text, lambda w: (" " + w).encode("utf-8", "surrogatepass") in enc)


def needs_kernels(text: str, enc: Mapping[bytes, int]) -> bool:
    """Whether `text` is expected to bring enough new chunks to merge that the compiled loop should
    be loaded for it (`new_word_density`): many of them per character (`_DENSITY_MIN`: a text of
    many languages, not one language's repeated words), and many scaled to the whole text
    (`_EXPECTED_MIN`). False when the kernels are off (numba is imported only to say so for a text
    that would use them)."""
    return _repays_kernels(new_word_density(text, enc), len(text))


def _repays_kernels(density: float, n_chars: int) -> bool:
    """`needs_kernels` for a text of `n_chars` characters whose sample found `density`."""
    repays = new_words.repays_loading(density, n_chars, expected_min=_EXPECTED_MIN, density_min=_DENSITY_MIN)
    return repays and jit.enabled()
