"""Building the trainer from flat arrays (`BpeTrainer.from_flat`, what `Training` uses) gives the
same merges, counts, lengths and candidates as building it from lists of sequences, and the flat
base ids equal `BaseVocab.symbolize` of every chunk."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.timeline import base_ids
from tokviz.core.bpe.trainer import HF_BYTE_ORDER, BpeTrainer
from tokviz.core.bpe.units import BaseVocab

BYTES = [bytes([i]) for i in range(256)]


def _run(trainer: BpeTrainer, merges: int = 60):
    return [(s.pair, s.id, s.token, s.count, s.length, s.candidates) for s in trainer.steps(max_merges=merges)]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.binary(min_size=0, max_size=12).map(lambda b: bytes(x % 4 + 97 for x in b)),
                          st.integers(1, 5)), min_size=1, max_size=12),
       st.booleans(), st.integers(1, 3))
def test_from_flat_equals_from_lists(chunks, hf, min_count):
    seqs = [list(c) for c, _ in chunks]
    weights = [w for _, w in chunks]
    kw = {"min_count": min_count, "hf_order": HF_BYTE_ORDER if hf else None}
    listed = BpeTrainer(seqs, weights, BYTES, **kw)
    flat = np.array([x for s in seqs for x in s], dtype=np.int64)
    flat_trainer = BpeTrainer.from_flat(flat, [len(s) for s in seqs], np.array(weights), BYTES, **kw)
    assert flat_trainer.length == listed.length == sum(len(s) * w for s, w in zip(seqs, weights))
    assert flat_trainer.starts == listed.starts
    assert _run(flat_trainer) == _run(listed)
    assert [flat_trainer.segments(i) for i in range(len(seqs))] == [listed.segments(i) for i in range(len(seqs))]
    assert flat_trainer.all_segments() == [listed.segments(i) for i in range(len(seqs))]  # at once: the same


def test_from_flat_checks_lengths():
    with pytest.raises(ValueError):
        BpeTrainer.from_flat(np.zeros(2, np.int64), [1, 1], [1], BYTES)


@pytest.mark.parametrize("units,mark", [("bytes", None), ("bytes", "</w>"), ("chars", None), ("chars", "_")])
@pytest.mark.parametrize("chunks", [["low", " lower", "né", "😀!"], ["a"], ["\u3000x", "y"]])
def testbase_ids_concatenate_symbolize(units, mark, chunks):
    base = BaseVocab.from_chunks(units, chunks, mark)
    flat, lengths = base_ids(base, chunks)
    seqs = [base.symbolize(c) for c in chunks]
    assert flat.dtype == np.int64
    assert flat.tolist() == [x for s in seqs for x in s]
    assert lengths == [len(s) for s in seqs]


def test_setting_up_keeps_few_position_long_temporaries():
    """The set-up builds its four linked arrays and counts the first pairs one position-long
    array at a time: measured by tracemalloc (numpy's allocations included), the peak stays within
    ten arrays of a position's int64 (about six stay for the training: the four arrays, the
    pairs' positions, the chunk starts), where building them side by side took thirteen."""
    import tracemalloc

    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 12, 20_000)
    n = int(lengths.sum())
    flat = rng.integers(97, 123, n).astype(np.int64)
    weights = rng.integers(1, 50, len(lengths))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        trainer = BpeTrainer.from_flat(flat, lengths, weights, BYTES)
        live, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (live - before) / (8 * n) < 7
    assert (peak - before) / (8 * n) < 10
    assert trainer.length == int(np.dot(lengths, weights))
