"""The compiled WordPiece trainer against the plain one: the very same steps (candidates, counts,
positions, lengths), the same segmentations after, its arrays growing, stopping and going on, its
exact score comparison, the fallbacks and the warm-up."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.core.wordpiece.arrays as arrays_module
from tests.jit_switch import jit_off
from tokviz.core.text.chunks import count_chunks
from tokviz.core.text.split import parse_split
from tokviz.core.wordpiece.compiled import CompiledWordPieceTrainer, load_kernels, make_trainer
from tokviz.core.wordpiece.timeline import WordPieceSettings, WordPieceTraining
from tokviz.core.wordpiece.trainer import WordPieceTrainer

KERNELS = load_kernels()
pytestmark = pytest.mark.skipif(KERNELS is None, reason="numba is not installed here (the compiled path is off)")
TINY = Path(__file__).resolve().parents[3] / "resources"
HYPOTHESIS = settings(max_examples=200, deadline=None, database=None)

words_st = st.dictionaries(st.text("abcé\U0001F600", min_size=1, max_size=9), st.integers(1, 40),
                           min_size=1, max_size=30)


def _both(counts: dict[str, int], **options) -> tuple[WordPieceTrainer, CompiledWordPieceTrainer]:
    words, weights = list(counts), list(counts.values())
    return (WordPieceTrainer(words, weights, **options),
            CompiledWordPieceTrainer(words, weights, kernels=KERNELS, **options))


def _all_segments(trainer, n: int) -> list[list[int]]:
    return [trainer.segments(i) for i in range(n)]


@HYPOTHESIS
@given(words_st, st.integers(1, 3), st.integers(1, 6), st.integers(0, 3))
def test_the_same_steps_as_the_plain_trainer(counts, min_count, n_candidates, first_id):
    """Random corpora over a few letters (runs such as "aaaa" merge left to right and overlap;
    astral characters; weights make equal scores common), trained to the end: every step's record
    is equal, candidates and first occurrences included, and so is every word's segmentation."""
    plain, compiled = _both(counts, min_count=min_count, n_candidates=n_candidates, first_id=first_id)
    assert list(compiled.steps()) == list(plain.steps())
    assert compiled.forms == plain.forms and compiled.length == plain.length
    assert _all_segments(compiled, len(counts)) == _all_segments(plain, len(counts))


def test_a_real_corpus_gives_the_same_steps(monkeypatch):
    """A real text's words (the bundled sample corpus) with room for few pairs at first, so that the
    set-up grows its arrays and table and the merges grow them again."""
    text = next(TINY.rglob("*.txt")).read_text(encoding="utf-8")
    counts = count_chunks([text], parse_split("whitespace"))
    monkeypatch.setattr(arrays_module, "FIRST_PAIRS", 4)
    plain, compiled = _both(counts, first_id=1)
    assert len(compiled.arrays.pairs) > 16 and compiled.arrays.meta[arrays_module.N_PAIRS] > 16
    got = list(compiled.steps(max_merges=3000))
    assert got == list(plain.steps(max_merges=3000)) and len(got) > 500


@pytest.mark.slow
@pytest.mark.parametrize(("name", "chars", "merges"), [("udhr2_all.txt", 2_000_000, 6000),
                                                      ("gutenberg30.txt", 3_000_000, 10000)])
def test_real_corpora_give_the_same_steps(corpus_text, name, chars, merges):
    """Hundreds of languages (thousands of base symbols, tens of thousands of live pairs) and a
    longer English run: the very steps of the plain trainer."""
    counts = count_chunks([corpus_text(name, chars)], parse_split("whitespace"))
    plain, compiled = _both(counts, first_id=1)
    got = list(compiled.steps(max_merges=merges))
    assert got == list(plain.steps(max_merges=merges)) and len(got) == merges


def test_stopping_and_going_on_gives_the_same_sequence():
    """A caller that stops early (a budget, or a generator closed mid-batch) and asks again gets the
    steps one run would give: what the kernels computed ahead waits in the queue."""
    counts = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5, "bunny": 3, "puns": 2, "hugging": 2}
    whole = list(CompiledWordPieceTrainer(list(counts), list(counts.values()), kernels=KERNELS).steps())
    trainer = CompiledWordPieceTrainer(list(counts), list(counts.values()), kernels=KERNELS)
    got = list(trainer.steps(max_merges=2))
    steps = trainer.steps()
    got += [next(steps), next(steps)]
    steps.close()  # the worker is stopped with more computed than taken
    got += list(trainer.steps(max_merges=6))
    got += list(trainer.steps())
    assert got == whole and [s.rank for s in got] == list(range(len(whole)))


def test_a_failure_in_the_kernels_reaches_the_caller(monkeypatch):
    """The merges run on a thread of their own: an error there is raised by `steps`, not lost (and
    nothing waits for a batch that never comes)."""
    trainer = CompiledWordPieceTrainer(["hug", "pug"], [2, 1], kernels=KERNELS)

    class Broken:
        def __getattr__(self, name):
            return getattr(KERNELS, name)

        @staticmethod
        def run_steps(*_args):
            raise MemoryError("no room")

    trainer.k = Broken()
    with pytest.raises(MemoryError, match="no room"):
        list(trainer.steps())


def _ranks_first(c1, a1, b1, p1, c2, a2, b2, p2) -> bool:
    """`ranks_before` on two pairs with these counts and first occurrences."""
    pairs = np.zeros((2, arrays_module.PAIR_COLUMNS), dtype=np.int64)
    pairs[0, :3] = (0, 1, c1)
    pairs[1, :3] = (2, 3, c2)
    toks = np.zeros((4, arrays_module.TOK_COLUMNS), dtype=np.int64)
    toks[:, arrays_module.T_COUNT] = (a1, b1, a2, b2)
    return KERNELS.ranks_before(0, c1 / (a1 * b1), p1, 1, c2 / (a2 * b2), p2, pairs, toks)


COUNT = st.integers(1, 2**31 - 1)


@settings(max_examples=300, deadline=None, database=None)
@given(COUNT, COUNT, COUNT, COUNT, COUNT, COUNT, st.integers(1, 1000), st.booleans())
def test_scores_are_compared_exactly(c1, a1, b1, c2, a2, b2, scale, tie):
    """`ranks_before` against exact fractions on counts up to 2**31 (products up to 2**93), scores
    equal (the same fraction, scaled) or not; equal scores go to the earlier first occurrence."""
    if tie:
        c2, a2, b2 = (c1 * scale, a1 * scale, b1) if max(c1, a1) * scale < 2**31 else (c1, a1, b1)
    first, second = Fraction(c1, a1 * b1), Fraction(c2, a2 * b2)
    for p1, p2 in ((5, 9), (9, 5)):
        assert _ranks_first(c1, a1, b1, p1, c2, a2, b2, p2) == (first > second or (first == second and p1 < p2))


def test_near_equal_scores_that_floats_cannot_tell_apart():
    """1 / (m (m + 2)) against 1 / (m + 1)**2, with m near 2**31: the denominators differ by one in
    2**62, closer than floats can tell; the exact comparison still ranks them."""
    m = 2**31 - 3
    f1, f2 = 1 / (m * (m + 2)), 1 / ((m + 1) * (m + 1))
    assert abs(f1 - f2) <= 1e-12 * f1  # the floats leave it to the exact comparison
    assert _ranks_first(1, m, m + 2, 9, 1, m + 1, m + 1, 5)
    assert not _ranks_first(1, m + 1, m + 1, 5, 1, m, m + 2, 9)
    # the same with big counts: the cross products (about 2**93) differ above their low 32 bits
    c, m = 2**31 - 1, 2**31 - 5
    assert abs(c / (m * (m + 4)) - c / ((m + 2) * (m + 2))) <= 1e-12 * c / (m * (m + 4))
    assert (c * (m + 2) * (m + 2) - c * m * (m + 4)) >> 32 > 0
    assert _ranks_first(c, m, m + 4, 9, c, m + 2, m + 2, 5)
    assert not _ranks_first(c, m + 2, m + 2, 5, c, m, m + 4, 9)


def test_make_trainer_falls_back_to_the_plain_trainer():
    """Kernels switched off, or counts past the kernels' 32 bits: the plain trainer, the same steps."""
    counts = {"hug": 10, "pug": 5, "hugs": 5}
    assert isinstance(make_trainer(list(counts), list(counts.values())), CompiledWordPieceTrainer)
    with jit_off():
        assert type(make_trainer(list(counts), list(counts.values()))) is WordPieceTrainer
    big = [2**31, 5, 5]
    plain = make_trainer(list(counts), big)
    assert type(plain) is WordPieceTrainer
    assert [s.pair for s in plain.steps()] == [s.pair for s in WordPieceTrainer(list(counts), big).steps()]


def test_the_timeline_trains_on_the_compiled_path(monkeypatch):
    """`WordPieceTraining` uses the compiled trainer when the kernels load, with the plain path's
    model."""
    text = "hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5
    used = []
    use_kernels = CompiledWordPieceTrainer.use_kernels
    monkeypatch.setattr(CompiledWordPieceTrainer, "use_kernels", lambda self, k: used.append(k) or use_kernels(self, k))
    compiled = WordPieceTraining(WordPieceSettings(vocab_size=30), texts=[text]).run()
    assert used == [KERNELS]
    with jit_off():
        plain = WordPieceTraining(WordPieceSettings(vocab_size=30), texts=[text]).run()
    assert compiled.steps == plain.steps and len(compiled.steps) > 5


WARM_UP_CHECK = """
import json
from tokviz.core.wordpiece.compiled import warm_up
from tokviz.core.wordpiece import kernels
from tokviz.core.text import trie_table
ok = warm_up()
print(json.dumps([ok, {f.__name__: len(f.signatures) for f in (kernels.set_up, kernels.run_steps, trie_table.rehash)}]))
"""


def test_the_warm_up_loads_every_kernel_a_training_calls():
    """In a fresh interpreter the warm-up leaves the set-up, the merge loop and the table's rehash
    loaded, so a first training compiles nothing silently."""
    done = subprocess.run([sys.executable, "-c", WARM_UP_CHECK], capture_output=True, text=True, timeout=900,
                          check=True)
    ok, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert ok and loaded == {"set_up": 1, "run_steps": 1, "rehash": 1}
