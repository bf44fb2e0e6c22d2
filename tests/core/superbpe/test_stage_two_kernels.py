"""SuperBPE's fast paths against the plain ones: the compiled stage-2 merge (`tokviz.core.superbpe.kernels`)
against `BpeTrainer`'s numpy merge, step by step and count by count, with numba and without; the stage-2
split's gap scan against its lossless pattern; the pair grouping against a stable argsort."""

from __future__ import annotations

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.jit_switch import jit_off
from tokviz.core.bpe import trainer as trainer_module
from tokviz.core.bpe.pair_queue import key_groups
from tokviz.core.bpe.trainer import HF_BYTE_ORDER, BpeTrainer
from tokviz.core.superbpe.compiled import StageTwoTrainer, load_kernels
from tokviz.core.superbpe.split import STAGE_TWO, STAGE_TWO_PATTERN
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTraining

KERNELS = load_kernels()
needs_numba = pytest.mark.skipif(KERNELS is None, reason="numba is not installed here (the compiled path is off)")
HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VOCAB = [bytes([i]) for i in range(256)]

corpora = st.lists(st.tuples(st.lists(st.sampled_from([97, 98, 99, 32]), min_size=1, max_size=40),
                             st.integers(1, 3)), min_size=1, max_size=8)


def _trainers(seqs, weights, hf):
    order = HF_BYTE_ORDER if hf else None
    lengths = [len(s) for s in seqs]
    flat = np.array([t for s in seqs for t in s], dtype=np.int64)
    plain = BpeTrainer.from_flat(flat, lengths, weights, VOCAB, hf_order=order)
    fast = StageTwoTrainer.from_flat(flat, lengths, weights, VOCAB, hf_order=order, kernels=KERNELS)
    return plain, fast.with_kernels(KERNELS)


def _live(counts: dict[int, int], min_count: int = 2) -> dict[int, int]:
    """The counts of the pairs that can still win: those below `min_count` are not kept exactly
    (a first pair below it is not stored, the compiled merge does not count one it makes)."""
    return {k: c for k, c in counts.items() if c >= min_count}


@needs_numba
@HYPOTHESIS
@given(corpus=corpora, hf=st.booleans())
def test_compiled_merge_equals_numpy_merge(corpus, hf):
    seqs, weights = [s for s, _ in corpus], [w for _, w in corpus]
    plain, fast = _trainers(seqs, weights, hf)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(trainer_module, "VECTOR_MIN_SITES", 1)  # every merge takes the vector path
        for a, b in zip(plain.steps(), fast.steps(), strict=True):
            assert a == b
            assert _live(plain.counts) == fast.live_pair_counts()
            assert plain.ids.tolist() == fast.ids.tolist() and plain.nxt.tolist() == fast.nxt.tolist()
            assert plain.prv.tolist() == fast.prv.tolist()
    assert [fast.segments(i) for i in range(len(seqs))] == [plain.segments(i) for i in range(len(seqs))]


@pytest.mark.parametrize("hf", [False, True])
@pytest.mark.parametrize("vector_min", [1, 64])
def test_deferred_pairs_give_every_step_and_runner_up_of_a_trainer_that_stores_all(monkeypatch, hf, vector_min):
    """Thousands of pairs, most deferred and stored only once the best counts come down to theirs:
    every step, its five candidates and the live counts are those of `BpeTrainer`, which stores
    every pair when it is made."""
    monkeypatch.setattr(trainer_module, "VECTOR_MIN_SITES", vector_min)
    rng = np.random.default_rng(7)
    alphabet = np.array(list(b"abcdefghijklmnop "))
    seqs = [alphabet[rng.zipf(1.6, size=int(rng.integers(5, 120))) % len(alphabet)].tolist() for _ in range(400)]
    weights = rng.integers(1, 6, size=len(seqs)).tolist()
    plain, fast = _trainers(seqs, weights, hf)
    fast.with_kernels(KERNELS)  # None without numba: the numpy merge, pairs deferred all the same
    assert fast.waiting > 200  # most first pairs wait
    stored = []
    for i, (a, b) in enumerate(zip(plain.steps(max_merges=600), fast.steps(max_merges=600), strict=True)):
        assert a == b
        stored.append(len(fast.counts))
        if i % 97 == 0:
            assert _live(plain.counts) == fast.live_pair_counts()
    assert len(stored) == 600 and fast.waiting > 0  # pairs whose counts never came near the top
    assert [fast.segments(i) for i in range(len(seqs))] == [plain.segments(i) for i in range(len(seqs))]


@needs_numba
@HYPOTHESIS
@given(corpus=corpora, big=st.booleans())
def test_compiled_first_pairs_equal_the_sorted_ones(corpus, big):
    seqs, weights = [s for s, _ in corpus], [w for _, w in corpus]
    if big:  # ids above 2**16, as after many merges
        seqs = [[t * 1000 for t in s] for s in seqs]
    lengths = [len(s) for s in seqs]
    flat = np.array([t for s in seqs for t in s], dtype=np.int64)
    plain = BpeTrainer.from_flat(flat, lengths, weights, [b"x"] * (max(flat) + 1))
    ids, nxt, wts = (np.frombuffer(a, dtype=np.int64) for a in (plain.ids, plain.nxt, plain.wts))
    keys, starts, ends, sums, pos = KERNELS.first_pair_groups(ids, nxt, wts, int(flat.max()) + 1)
    sk, sp, sw = trainer_module.first_pairs(ids, nxt, wts)
    s0, e0, w0 = trainer_module.sorted_groups(sk, sw)
    assert keys.tolist() == sk[s0].tolist() and starts.tolist() == s0.tolist() and ends.tolist() == e0.tolist()
    assert sums.tolist() == w0.tolist() and pos.tolist() == sp.tolist()


def test_without_numba_the_stage_two_trainer_is_bpes():
    with jit_off():
        assert load_kernels() is None
        fast = StageTwoTrainer([list(b"aaabdaaabac")], [1], VOCAB).with_kernels(load_kernels())
    assert [(s.pair, s.count) for s in fast.steps(max_merges=3)] == [((97, 97), 4), ((256, 97), 2), ((257, 98), 2)]


TEXT = ("It was the best of times, it was the worst of times -- 1859, 1860!! and so on... of the "
        "people, for the people;  by the people.\n\n\"Yes,\" said he -- \"of the 2 of them.\"\n") * 6


@pytest.mark.parametrize("tie_break", ["first", "hf"])
def test_superbpe_merges_the_same_with_and_without_numba(monkeypatch, tie_break):
    monkeypatch.setattr(trainer_module, "VECTOR_MIN_SITES", 2)

    def merges():
        s = SuperBpeSettings(merges=80, transition=30, tie_break=tie_break)
        return [(m.pair, m.count, m.length) for m in SuperBpeTraining(s, texts=[TEXT]).run().steps]

    with jit_off():
        plain = merges()
    assert merges() == plain
    assert len(plain) == 80


@HYPOTHESIS
@given(text=st.text(alphabet=st.sampled_from("ab é1٣ .,!?-/\n\r\t\u3000"), max_size=60))
def test_stage_two_gap_scan_equals_the_lossless_pattern(text):
    expected = [c for c in regex.findall(STAGE_TWO_PATTERN, text) if c]
    assert STAGE_TWO.chunks(text) == expected
    assert "".join(expected) == text
    assert STAGE_TWO.count(text) == {c: expected.count(c) for c in expected}


@HYPOTHESIS
@given(parts=st.lists(st.sampled_from(["ab", "é", "1", "٣", "²", "1234", "\u0558", " ", "   ", ".", ",!?", "-/", "“",
                                        "\n", "\r\n", "\t", "\xa0", "\u2028", "\u3000", "\x1c"]), max_size=30))
def test_stage_two_split_on_re_equals_the_pinned_one(parts):
    """The long-text split on `re` (classes over the BMP) gives the chunks of the pinned pattern,
    characters new in Unicode 17 (U+0558) and spaces Python's `\\s` differs on (U+001C) included."""
    text = "".join(parts)
    assert STAGE_TWO.bmp_chunks(text) == STAGE_TWO.chunks(text)  # (a short text: the pinned path)
    assert STAGE_TWO.bmp_chunks(text + "\U0001F600") is None  # astral: the pinned path


@HYPOTHESIS
@given(pairs=st.lists(st.tuples(st.one_of(st.integers(0, 40), st.integers(0, 2**31 - 1)), st.integers(0, 2**31 - 1)),
                      max_size=50))
def test_pair_groups_keep_a_stable_order(pairs):
    keys = np.array([(a << 32) | b for a, b in pairs], dtype=np.int64)
    pos = np.arange(len(keys), dtype=np.int64) * 3
    w = np.arange(len(keys), dtype=np.int64) + 1
    sk, sp, starts, ends, sums = key_groups(keys, pos, w)
    order = np.argsort(keys, kind="stable")
    assert sk.tolist() == keys[order].tolist() and sp.tolist() == pos[order].tolist()
    assert sums.tolist() == [int(w[order][a:b].sum()) for a, b in zip(starts.tolist(), ends.tolist())]
