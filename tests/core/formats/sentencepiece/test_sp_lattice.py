"""The Viterbi engine's shortcuts against its slow, exact form: the numpy batch of many segments
equals the per-segment Python path, and the cached (relative) segments equal exact float32 replays.
These are the plain Python path's (``TOKVIZ_JIT=0``); the compiled one is `test_sp_kernels`'s."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.formats.sentencepiece.spm_helpers import corpus_lines, tied_lattice
from tests.core.formats.sentencepiece.viterbi_oracle import exact_oracle, relative_oracle
from tests.jit_switch import jit_off
from tokviz.core.loading import load_tokenizer
from tokviz.core.unigram.encoder.batch import batch_relative
from tokviz.core.unigram.encoder.lattice import RESET, f32
from tokviz.core.unigram.encoder.piece_hashes import PieceHashes


@pytest.fixture(scope="module")
def lattice(sp_model):
    with jit_off():
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
        ids, ends, _, margin, wmax = lattice.relative(seg)
        # scores just inside a binade (largest ulp for their size) and in the middle of one
        for x in (0.0, -5000.25, -RESET * 0.9, -65535.99609375, -32767.998046875, -98304.0):
            m = abs(x) + wmax
            if m < RESET * 0.999 and not lattice.needs_exact(margin, m):
                checked += 1
                assert lattice.exact(seg, x)[:2] == (ids, ends), (seg, x)
    assert checked > 10_000


def test_the_bound_is_tight_enough_to_matter(lattice):
    """A margin just above half an ulp of the accumulated score's binade needs no replay; one
    below it does (the bound is the binade's half ulp, not twice the relative error)."""
    m = 70000.0  # binade [2**16, 2**17): ulp 2**-7
    assert lattice.needs_exact(2.0 ** -8, m)
    assert not lattice.needs_exact(2.0 ** -8 * 1.001, m)
    assert lattice.needs_exact(2.0 ** -9, 40000.0 * 0.99)


def test_the_forked_half_equals_one_process(lattice, monkeypatch):
    """`relative_many` allowed two processes puts half of the segments in a forked child and gives
    what one process (the default) gives."""
    from tokviz.core.processes import fork
    from tokviz.core.processes.fork import can_fork
    from tokviz.core.unigram.encoder import lattice as lattice_module

    segs = _segments(lattice)
    monkeypatch.setattr(lattice_module, "_PARALLEL_MIN", 10)
    forks = []
    real_fork = fork.fork_call
    monkeypatch.setattr(fork, "fork_call", lambda fn: forks.append(1) or real_fork(fn))
    expected = batch_relative(PieceHashes(lattice.ids, lattice.score_of), segs, lattice.unk_score)
    assert lattice.relative_many(segs) == expected
    assert forks == []
    assert lattice.relative_many(segs, 2) == expected
    assert forks == ([1] if can_fork() else [])


def test_best_segments_passes_its_processes_down(lattice, monkeypatch):
    """The plain path's long texts compute their new segments with the processes they are given."""
    given = []
    real = type(lattice).relative_many
    monkeypatch.setattr(type(lattice), "relative_many", lambda self, missing, processes=1: given.append(processes)
                        or real(self, missing, 1))
    text = "".join(_segments(lattice)[:400])
    if lattice.compiled is not None or lattice.whole_text_exact:
        pytest.skip("the compiled Viterbi runs the whole text at once")
    one = lattice.best_segments(text)
    lattice.clear_caches()
    assert lattice.best_segments(text, processes=2) == one
    assert given == [1, 2]


def test_chain_in_python_equals_chain_in_numpy(lattice, monkeypatch):
    """The accumulated float32 score after many segments, resets included, is the same whether
    `chain_scores` adds in a Python loop or with numpy."""
    from tokviz.core.unigram.encoder import lattice as lattice_module

    paths = [lattice.relative(seg)[0] for seg in _segments(lattice)[:2000]]
    for x in (0.0, -99_990.5, -RESET * 0.5, 12.25):
        monkeypatch.setattr(lattice_module, "_CHAIN_LOOP", 0)
        by_numpy = lattice.chain_scores(x, paths)
        monkeypatch.setattr(lattice_module, "_CHAIN_LOOP", 10**9)
        assert lattice.chain_scores(x, paths) == by_numpy


_WORDS = st.text(st.sampled_from("\u2581\u2581abcdeiklmnorstuyáé\u0301ü\u4e00\u4e8c\u0915\u093f\u0627\u0644 "), max_size=24)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.one_of(_WORDS, st.text(max_size=20)))
def test_fast_viterbi_equals_the_plain_one(lattice, word):
    """`relative_path` and `exact_path` (the fast loops) give the plain oracle's paths and scores;
    the fast margin is never larger than the oracle's (never less cautious)."""
    ids, ends, total, margin, wmax = lattice.relative(word)
    o = relative_oracle(lattice, word)
    assert (ids, ends, total, wmax) == (o[0], o[1], o[2], o[4])
    assert margin <= o[3]
    for x in (0.0, -99_999.9, -100_000.5, 150_000.0, -65535.99609375):
        assert lattice.exact(word, x) == exact_oracle(lattice, word, x)


def test_fast_viterbi_on_real_segments(lattice):
    for seg in _segments(lattice)[:4000]:
        got, o = lattice.relative(seg), relative_oracle(lattice, seg)
        assert got[:3] == o[:3] and got[4] == o[4] and got[3] <= o[3], seg
        assert lattice.exact(seg, -99_990.0) == exact_oracle(lattice, seg, -99_990.0), seg


def _both_ways(lattice, text, monkeypatch, batch_min: int = 16):
    """`best_segments` of `text` by the numpy scan and by the loop (empty caches for each), and
    how many exact replays the scan made (one by one and together)."""
    from tokviz.core.unigram.encoder import lattice as lattice_module
    from tokviz.core.unigram.encoder import scan as scan_module

    replays = []
    real = type(lattice).exact
    monkeypatch.setattr(type(lattice), "exact", lambda self, s, x: replays.append(1) or real(self, s, x))
    real_batch = scan_module.batch_exact
    monkeypatch.setattr(scan_module, "batch_exact", lambda t, segs, *a: replays.extend([1] * len(segs)) or
                        real_batch(t, segs, *a))
    monkeypatch.setattr(scan_module, "_BATCH_MIN", batch_min)
    lattice.clear_caches()
    monkeypatch.setattr(lattice_module, "_SCAN_MIN", 256)
    scanned = lattice.best_segments(text)
    lattice.clear_caches()
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
    assert _both_ways(lattice, text, monkeypatch, 10**9)[:2] == (looped, looped)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.one_of(_WORDS, st.text(max_size=6)), min_size=300, max_size=900),
       pad=st.integers(0, 3000), batch_min=st.sampled_from([1, 16, 10**9]))
def test_scan_equals_the_loop_on_generated_text(lattice, monkeypatch, words, pad, batch_min):
    # a long unknown-character run first takes the accumulated score far from 0 (and through resets)
    text = "\u2581" + "\u0b95" * pad + "\u2581" + "\u2581".join(w.replace(" ", "\u2581") for w in words)
    scanned, looped, _ = _both_ways(lattice, text, monkeypatch, batch_min)
    assert scanned == looped


def test_batch_exact_equals_one_by_one(lattice):
    """`batch_exact` from scores all over the float32 range equals `exact` per segment, and
    leaves out (None) exactly the segments where a reset falls inside."""
    from tokviz.core.unigram.encoder.batch import batch_exact

    segs = _segments(lattice)[:3000]
    rng = random.Random(11)
    starts = [f32(rng.choice([0.0, -5000.25, -RESET * 0.9, -65535.99609375, -99_990.0, -99_999.9,
                              rng.uniform(-99_000, 0)])) for _ in segs]
    table = PieceHashes(lattice.ids, lattice.score_of)
    got = batch_exact(table, segs, lattice.unk_score, np.asarray(starts, dtype=np.float32), True)
    left_out = 0
    for seg, x, r in zip(segs, starts, got):
        want = lattice.exact(seg, x)
        if r is None:
            left_out += 1
            # a reset inside: the exact replay's score at the end is not the plain sum from x
            assert x < -RESET * 0.99, (seg, x)
        else:
            assert r == want, (seg, x)
    assert 0 < left_out < len(segs) // 2


def test_scores_before_each_segment(lattice):
    """`GatheredChain.before_each` is `run` from the first segment to each one, and with a
    limit stops at the first segment whose score reaches it."""
    from tokviz.core.unigram.encoder.batch import GatheredChain

    paths = [lattice.relative(seg)[0] for seg in _segments(lattice)[:3000]]
    gathered = GatheredChain(lattice.scores32_table(), paths)
    for x in (0.0, f32(-99_990.5), f32(12.25)):
        vals, k = gathered.before_each(x, 0, window=700)
        assert k == len(paths)
        for j in range(0, len(paths) + 1, 97):
            assert float(vals[j]) == gathered.run(x, 0, j), (x, j)
        a = 1234
        limit = np.full(len(paths), 40_000.0)
        part, k = gathered.before_each(float(vals[a]), a, limit)
        reached = [j for j in range(a, len(paths)) if abs(0.0 if abs(vals[j]) > RESET else vals[j]) >= 40_000.0]
        assert k == (reached[0] if reached else len(paths))
        assert np.array_equal(part, vals[a:k + 1])


def test_gathered_chain_equals_chain(lattice):
    """`GatheredChain.run` (the scan's accumulation over runs of gathered scores) equals `chain_scores`."""
    from tokviz.core.unigram.encoder.batch import GatheredChain

    paths = [lattice.relative(seg)[0] for seg in _segments(lattice)[:3000]]
    gathered = GatheredChain(lattice.scores32_table(), paths)
    rng = random.Random(5)
    for _ in range(200):
        a = rng.randrange(len(paths))
        b = rng.randrange(a, len(paths) + 1)
        # accumulated scores are float32 values
        x = f32(rng.choice([0.0, -99_990.5, -RESET * 0.5, 12.25, -150_000.0, rng.uniform(-1e5, 1e5)]))
        assert gathered.run(x, a, b) == lattice.chain_scores(x, paths[a:b]), (a, b, x)


@settings(max_examples=500, deadline=None)
@given(s=st.text(st.sampled_from("ab\u2581\u2581 \u0301"), max_size=12))
def test_segments_are_the_split_at_each_mark(s):
    """`segment_strings` (one regex pass) is the text split before each ``▁`` (after it with
    whitespace as a suffix), nothing dropped."""
    from tokviz.core.unigram.encoder.lattice import MARK, segment_strings

    parts = s.split(MARK)
    want = [MARK + p for p in parts[1:]]
    if parts[0]:
        want.insert(0, parts[0])
    assert segment_strings(s, None, False) == want
    suffix = [p + MARK for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    assert segment_strings(s, None, True) == (suffix if s else [])


@pytest.mark.parametrize("seed", [1, 2])
def test_scan_where_replays_change_paths(monkeypatch, seed):
    """On a text whose accumulated score passes several resets and whose segments tie, the scan
    (its replays made together, redone where a replayed path changes the scores after it) gives
    the loop's result and the plain float32 Viterbi's over the whole text."""
    from tokviz.core.unigram.encoder import scan as scan_module

    lattice = tied_lattice()
    rng = random.Random(seed)
    words = ["".join(rng.choice("abc") for _ in range(rng.randrange(1, 9))) for _ in range(14_000)]
    text = "\u2581" + "\u2581".join(words)
    diffs = []
    real = scan_module.Float32Scan.replay
    monkeypatch.setattr(scan_module.Float32Scan, "replay", lambda self, picks: diffs.extend(d := real(self, picks)) or d)
    scanned, looped, replays = _both_ways(lattice, text, monkeypatch)
    assert scanned == looped
    assert len(diffs) > 20 and replays > 1000  # the cases this test is for did happen
    ids, ends, _ = exact_oracle(lattice, text, 0.0)
    assert scanned[0] == list(ids)


@settings(max_examples=200, deadline=None)
@given(keys=st.sets(st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 64), st.integers(2**64 - 64, 2**64 - 1)),
                    max_size=300),
       others=st.lists(st.integers(0, 2**64 - 1), max_size=50))
def test_hash_index_finds_every_key_and_nothing_else(keys, others):
    """`HashIndex.lookup` gives each key's position and -1 for anything else, probing past
    occupied places (keys that share slots: small and near 2**64 values; 0 is a key too)."""
    from tokviz.core.unigram.encoder.piece_hashes import HashIndex

    keys = list(keys)
    index = HashIndex(np.asarray(keys, dtype=np.uint64))
    where = {k: i for i, k in enumerate(keys)}
    queries = keys + others + [0, 1, 2**64 - 1]
    got = index.lookup(np.asarray(queries, dtype=np.uint64)).tolist()
    assert got == [where.get(q, -1) for q in queries]
