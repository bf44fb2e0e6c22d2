"""The Viterbi engine's shortcuts against its slow, exact form: the numpy batch of many segments
equals the per-segment Python path, and the cached (relative) segments equal exact float32 replays."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core.pretrained import load_tokenizer
from tokviz.core.pretrained.spm.batch import PieceHashes, batch_relative
from tokviz.core.pretrained.spm.lattice import RESET, f32

from .spm_helpers import corpus_lines
from .viterbi_oracle import exact_oracle, relative_oracle


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
        ids, ends, total, margin, wmax = relative_oracle(lattice, seg)
        assert got[:3] == (ids, ends, total) and got[4] == wmax, seg
        assert got[3] <= margin * (1 + 1e-12), seg  # never less cautious


def test_exact_replay_agrees_where_decisions_are_safe(lattice):
    """Where a segment's margin says rounding cannot matter, the exact float32 run from a large
    accumulated score takes the same path."""
    checked = 0
    for seg in _segments(lattice)[:3000]:
        ids, ends, _, margin, wmax = lattice._relative(seg)
        # scores just inside a binade (largest ulp for their size) and in the middle of one
        for x in (0.0, -5000.25, -RESET * 0.9, -65535.99609375, -32767.998046875, -98304.0):
            m = abs(x) + wmax
            if m < RESET * 0.999 and not lattice.needs_exact(margin, m):
                checked += 1
                assert lattice._exact(seg, x)[:2] == (ids, ends), (seg, x)
    assert checked > 10_000


def test_the_bound_is_tight_enough_to_matter(lattice):
    """A margin just above half an ulp of the accumulated score's binade needs no replay; one
    below it does (the bound is the binade's half ulp, not twice the relative error)."""
    m = 70000.0  # binade [2**16, 2**17): ulp 2**-7
    assert lattice.needs_exact(2.0 ** -8, m)
    assert not lattice.needs_exact(2.0 ** -8 * 1.001, m)
    assert lattice.needs_exact(2.0 ** -9, 40000.0 * 0.99)


def test_the_forked_half_equals_one_process(lattice, monkeypatch):
    """`_batch` with half of the segments in a forked child gives what one process gives."""
    from tokviz.core.pretrained.spm import lattice as lattice_module
    from tokviz.core.processes.fork import can_fork

    if not can_fork():
        pytest.skip("forking is not safe here")
    segs = _segments(lattice)
    lattice._hashes = PieceHashes(lattice.ids, lattice.score_of)
    monkeypatch.setattr(lattice_module, "_PARALLEL_MIN", 10)
    monkeypatch.setattr(lattice_module, "_idle_core", lambda: True)  # fork whatever the machine's load
    forks = []
    real_fork = lattice_module.fork_call
    monkeypatch.setattr(lattice_module, "fork_call", lambda fn: forks.append(1) or real_fork(fn))
    assert lattice._batch(segs) == batch_relative(lattice._hashes, segs, lattice.unk_score)
    assert forks == [1]


def test_chain_in_python_equals_chain_in_numpy(lattice, monkeypatch):
    """The accumulated float32 score after many segments, resets included, is the same whether
    `_chain` adds in a Python loop or with numpy."""
    from tokviz.core.pretrained.spm import lattice as lattice_module

    paths = [lattice._relative(seg)[0] for seg in _segments(lattice)[:2000]]
    for x in (0.0, -99_990.5, -RESET * 0.5, 12.25):
        monkeypatch.setattr(lattice_module, "_CHAIN_LOOP", 0)
        by_numpy = lattice._chain(x, paths)
        monkeypatch.setattr(lattice_module, "_CHAIN_LOOP", 10**9)
        assert lattice._chain(x, paths) == by_numpy


_WORDS = st.text(st.sampled_from("\u2581\u2581abcdeiklmnorstuyáé\u0301ü\u4e00\u4e8c\u0915\u093f\u0627\u0644 "), max_size=24)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.one_of(_WORDS, st.text(max_size=20)))
def test_fast_viterbi_equals_the_plain_one(lattice, word):
    """`relative_path` and `exact_path` (the fast loops) give the plain oracle's paths and scores;
    the fast margin is never larger than the oracle's (never less cautious)."""
    ids, ends, total, margin, wmax = lattice._relative(word)
    o = relative_oracle(lattice, word)
    assert (ids, ends, total, wmax) == (o[0], o[1], o[2], o[4])
    assert margin <= o[3]
    for x in (0.0, -99_999.9, -100_000.5, 150_000.0, -65535.99609375):
        assert lattice._exact(word, x) == exact_oracle(lattice, word, x)


def test_fast_viterbi_on_real_segments(lattice):
    for seg in _segments(lattice)[:4000]:
        got, o = lattice._relative(seg), relative_oracle(lattice, seg)
        assert got[:3] == o[:3] and got[4] == o[4] and got[3] <= o[3], seg
        assert lattice._exact(seg, -99_990.0) == exact_oracle(lattice, seg, -99_990.0), seg


def _both_ways(lattice, text, monkeypatch):
    """`best_segments` of `text` by the numpy scan and by the loop (empty caches for each), and
    how many exact replays the scan made."""
    from tokviz.core.pretrained.spm import lattice as lattice_module

    replays = []
    real = type(lattice)._exact
    monkeypatch.setattr(type(lattice), "_exact", lambda self, s, x: replays.append(1) or real(self, s, x))
    lattice._cache.clear()
    monkeypatch.setattr(lattice_module, "_SCAN_MIN", 256)
    scanned = lattice.best_segments(text)
    lattice._cache.clear()
    monkeypatch.setattr(lattice_module, "_SCAN_MIN", 10**9)
    n = len(replays)
    looped = lattice.best_segments(text)
    return scanned, looped, n


def test_scan_equals_the_loop_on_a_long_text(lattice, monkeypatch):
    """Past 100000 in size the accumulated score makes close segments need exact replays and
    resets: the scan decides them as the loop does."""
    text = "\u2581".join(corpus_lines(3))[:400_000].replace(" ", "\u2581")
    scanned, looped, replays = _both_ways(lattice, text, monkeypatch)
    assert scanned == looped
    assert replays > 20


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.one_of(_WORDS, st.text(max_size=6)), min_size=300, max_size=900),
       pad=st.integers(0, 3000))
def test_scan_equals_the_loop_on_generated_text(lattice, monkeypatch, words, pad):
    # a long unknown-character run first takes the accumulated score far from 0 (and through resets)
    text = "\u2581" + "\u0b95" * pad + "\u2581" + "\u2581".join(w.replace(" ", "\u2581") for w in words)
    scanned, looped, _ = _both_ways(lattice, text, monkeypatch)
    assert scanned == looped


def test_gathered_chain_equals_chain(lattice):
    """`GatheredChain.run` (the scan's accumulation over runs of gathered scores) equals `_chain`."""
    from tokviz.core.pretrained.spm.batch import GatheredChain

    paths = [lattice._relative(seg)[0] for seg in _segments(lattice)[:3000]]
    gathered = GatheredChain(lattice._scores32_table(), paths)
    rng = random.Random(5)
    for _ in range(200):
        a = rng.randrange(len(paths))
        b = rng.randrange(a, len(paths) + 1)
        # accumulated scores are float32 values
        x = f32(rng.choice([0.0, -99_990.5, -RESET * 0.5, 12.25, -150_000.0, rng.uniform(-1e5, 1e5)]))
        assert gathered.run(x, a, b) == lattice._chain(x, paths[a:b]), (a, b, x)


@settings(max_examples=500, deadline=None)
@given(s=st.text(st.sampled_from("ab\u2581\u2581 \u0301"), max_size=12))
def test_segments_are_the_split_at_each_mark(s):
    """`segment_strings` (one regex pass) is the text split before each ``▁`` (after it with
    whitespace as a suffix), nothing dropped."""
    from tokviz.core.pretrained.spm.lattice import MARK, segment_strings

    parts = s.split(MARK)
    want = [MARK + p for p in parts[1:]]
    if parts[0]:
        want.insert(0, parts[0])
    assert segment_strings(s, None, False) == want
    suffix = [p + MARK for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    assert segment_strings(s, None, True) == (suffix if s else [])
