"""SuperBPE's stage-2 start and counting: the fast paths equal the plain definitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokviz.core.superbpe.stage_two as stage_two_module
import tokviz.core.text.chunks as chunks_module
from tokviz.core.bpe.timeline import Training, TrainSettings
from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.processes.fork import can_fork
from tokviz.core.superbpe.pieces import load_kernels
from tokviz.core.superbpe.split import STAGE_TWO
from tokviz.core.superbpe.stage_two import Joins, stage_two_start
from tokviz.core.text.chunks import count_chunks
from tokviz.core.text.split import parse_split

SHAKESPEARE = Path(__file__).resolve().parents[4] / "shared" / "corpora" / "tinyshakespeare.txt"
# pieces meet in learned pairs here: runs of spaces before line breaks, punctuation runs, digits
KERNELS = load_kernels(parse_split("gpt4"))
ODD = ("a  \nb  c   d!!  e--f 12345 g...\n\n  h'st  i ' t  j\t\tk \n \n l 1 2 33 m,, n ") * 40


@pytest.fixture(scope="module")
def text() -> str:
    if not SHAKESPEARE.exists():
        pytest.skip("tinyshakespeare.txt is not in ../shared/corpora")
    return SHAKESPEARE.read_text(encoding="utf-8")[:30_000]


def _stage_one(part: str, merges: int):
    run = Training(TrainSettings(merges=merges), texts=[part])
    chunks1 = list(run.count())
    tl = run.prepare()
    pairs = [s.pair for s in run.steps()]
    segments = {c: run.trainer.segments(i) for i, c in enumerate(chunks1)}
    return tl, pairs, segments


@pytest.mark.parametrize(("extra", "forget"), [("", 0), (ODD, 0), (ODD, 3)])
def test_stage_two_start_equals_whole_chunk_merging(text, extra, forget):
    """The fast start (stage-1 pieces side by side, joinable ones merged again) equals merging every
    stage-2 chunk from its bytes, on text where pieces meet in learned pairs (" 't", "'st", spaces),
    and when stage 1 never saw some pieces (every `forget`-th: merged by the start itself)."""
    part = text + extra
    tl, pairs, segments = _stage_one(part, 300)
    if forget:
        segments = {c: ids for i, (c, ids) in enumerate(segments.items()) if i % forget}
    chunks2 = list(STAGE_TWO.count(part))
    flat, lengths = stage_two_start(tl.base, pairs, chunks2, parse_split("gpt4"), segments)
    whole = BpeTokenizer(tl.base, pairs, STAGE_TWO)
    expected = [whole.encode_chunk(c, step=len(pairs))[0] for c in chunks2]
    assert lengths == [len(e) for e in expected]
    assert flat.tolist() == [t for e in expected for t in e]


ALPHABET = "ab, \n"


@pytest.fixture(scope="module")
def byte_base():
    run = Training(TrainSettings(merges=0), texts=["a"])
    return run.prepare().base


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), min_size=1, max_size=60),
       words=st.lists(st.sampled_from(["a", "b", "ab", " a", " b", " ab", "aa", ",", ", ", " ", "\n"]),
                      min_size=15, max_size=100), compiled=st.booleans())
def test_stage_two_start_with_any_merges(byte_base, picks, words, compiled):
    """Merges of any pairs of a small alphabet's tokens, so that pieces join across many
    boundaries, close together and in cascades: the start still equals merging each chunk whole."""
    text = "".join(words)
    pool, pairs = [ord(c) for c in ALPHABET], []
    for x, y in picks:
        pair = (pool[x % len(pool)], pool[y % len(pool)])
        if pair not in pairs:
            pairs.append(pair)
            pool.append(byte_base.size + len(pairs) - 1)
    stage_one = BpeTokenizer(byte_base, pairs, parse_split("gpt4"))
    pieces = dict.fromkeys(p for c in STAGE_TWO.chunks(text) for p in parse_split("gpt4").chunks(c))
    segments = {w: list(stage_one.encode_chunk(w, step=len(pairs))[0]) for w in list(pieces)[::2]}  # some unseen
    chunks2 = list(STAGE_TWO.count(text))
    kernels = KERNELS if compiled else None
    flat, lengths = stage_two_start(byte_base, pairs, chunks2, parse_split("gpt4"), segments, kernels=kernels)
    whole = BpeTokenizer(byte_base, pairs, STAGE_TWO)
    expected = [whole.encode_chunk(c, step=len(pairs))[0] for c in chunks2]
    assert lengths == [len(e) for e in expected]
    assert flat.tolist() == [t for e in expected for t in e]


def test_stage_two_start_in_two_processes_equals_one(monkeypatch, text):
    """The chunks' second half worked out in a forked child: the same ids, in order."""
    monkeypatch.setattr(stage_two_module, "HALVES_MIN_CHARS", 1_000)
    forked = []
    fork = stage_two_module.here_and_forked
    monkeypatch.setattr(stage_two_module, "here_and_forked", lambda here, there: forked.append(1) or fork(here, there))
    part = text + ODD
    tl, pairs, segments = _stage_one(part, 300)
    chunks2 = list(STAGE_TWO.count(part))
    flat, lengths = stage_two_start(tl.base, pairs, chunks2, parse_split("gpt4"), segments, processes=2)
    alone, alone_lengths = stage_two_start(tl.base, pairs, chunks2, parse_split("gpt4"), segments)
    assert lengths == alone_lengths and flat.tolist() == alone.tolist()
    assert forked == [1] or not can_fork()


def test_joins_at_once_equal_one_by_one(text):
    tl, pairs, _ = _stage_one(text + ODD, 300)
    joins = Joins(pairs, tl.base.size)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, tl.base.size + len(pairs), size=(3000, 2))
    ids[:1000] = rng.integers(tl.base.size, tl.base.size + len(pairs), size=(1000, 2))
    many = joins.many(ids[:, 0], ids[:, 1]).tolist()
    one = [joins.joinable(int(a), int(b)) for a, b in ids]
    assert many == one and any(one) and not all(one)
    maybe = joins.may_join(ids[:, 0], ids[:, 1]).tolist()
    assert all(m for m, j in zip(maybe, one) if j)  # the filter never drops a joinable pair
    assert not all(maybe)  # and drops some


@pytest.mark.parametrize("processes", [1, 2])
def test_stage_two_counts_cut_a_large_text_only_between_chunks(monkeypatch, text, processes):
    """A text counted in slices gives the chunks of the whole text, in order: the stage-2 chunks
    run across lines, so the slices cannot be cut at line starts as the stage-1 splits' are."""
    monkeypatch.setattr(chunks_module, "SLICE_CHARS", 500)
    monkeypatch.setattr(chunks_module, "PARALLEL_MIN_CHARS", 1_000)
    part = text + ODD
    expected: dict[str, int] = {}
    for c in STAGE_TWO.chunks(part):
        expected[c] = expected.get(c, 0) + 1
    counted = count_chunks([part], STAGE_TWO, processes=processes)
    assert list(counted.items()) == list(expected.items())


@pytest.mark.parametrize("n_base", [300, 5000])  # a table of unit pairs; a search among them
def test_may_join_is_the_end_units_of_some_merge(n_base):
    rng = np.random.default_rng(n_base)
    pairs: list[tuple[int, int]] = []
    for t in range(n_base, n_base + 400):
        a, b = (int(x) for x in rng.integers(0, t, 2))
        pairs.append((a, b))
    joins = Joins(pairs, n_base)

    def ends(t: int) -> tuple[int, int]:  # (first unit, last unit), from the definition
        if t < n_base:
            return t, t
        a, b = pairs[t - n_base]
        return ends(a)[0], ends(b)[1]

    units = {(ends(a)[1], ends(b)[0]) for a, b in pairs}
    left, right = rng.integers(0, n_base + 400, 2000), rng.integers(0, n_base + 400, 2000)
    left[:500], right[:500] = zip(*[pairs[i] for i in rng.integers(0, 400, 500)])  # merges themselves: True
    expected = [(ends(int(a))[1], ends(int(b))[0]) in units for a, b in zip(left, right)]
    assert joins.may_join(left, right).tolist() == expected
    assert all(expected[:500])
