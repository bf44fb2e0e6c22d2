"""The Viterbi engine's shortcuts against its slow, exact form: the numpy batch of many segments
equals the per-segment Python path, and the cached (relative) segments equal exact float32 replays."""

from __future__ import annotations

import random

import pytest

from tokviz.core.pretrained import load_tokenizer
from tokviz.core.pretrained.spm.batch import PieceHashes, batch_relative
from tokviz.core.pretrained.spm.lattice import RESET

from .spm_helpers import corpus_lines


@pytest.fixture(scope="module")
def lattice(sp_model):
    return load_tokenizer(sp_model("unigram-nmt")).lattice


def _segments(lattice) -> list[str]:
    tok_norm = [seg for line in corpus_lines(13) for seg in lattice.segment_strings(line.replace(" ", "\u2581"))]
    rng = random.Random(3)
    noise = ["".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(1, 14))) for _ in range(500)]
    return list(dict.fromkeys(tok_norm + noise))


def test_batch_equals_one_by_one(lattice):
    segs = _segments(lattice)
    table = PieceHashes(lattice.ids, lattice.score_of)
    assert table.ok
    for seg, got in zip(segs, batch_relative(table, segs, lattice.unk_score)):
        ids, ends, total, margin, wmax = lattice._relative(seg)
        assert got[:3] == (ids, ends, total) and got[4] == wmax, seg
        assert got[3] <= margin * (1 + 1e-12), seg  # never less cautious


def test_exact_replay_agrees_where_decisions_are_safe(lattice):
    """Where a segment's margin says rounding cannot matter, the exact float32 run from a large
    accumulated score takes the same path."""
    for seg in _segments(lattice)[:3000]:
        ids, ends, _, margin, wmax = lattice._relative(seg)
        for x in (0.0, -5000.25, -RESET * 0.9):
            if margin > 2 * 2.0 ** -24 * (abs(x) + wmax) * 1.01:
                assert lattice._exact(seg, x)[:2] == (ids, ends), (seg, x)
