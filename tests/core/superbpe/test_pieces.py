"""SuperBPE's stage-2 chunks cut into stage-1 pieces and numbered: compiled, on `re`, in a forked child
while stage 1 merges; every way gives the same numbers and the same training."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokviz.core.superbpe.pieces as pieces_module
from tests.jit_switch import jit_off
from tokviz.core.bpe.timeline import Training, TrainSettings
from tokviz.core.processes.fork import can_fork
from tokviz.core.superbpe.pieces import COMPILED_SCHEMES, load_kernels, number_aside, numbered
from tokviz.core.superbpe.split import STAGE_TWO
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTraining
from tokviz.core.text.fastsplit import bmp_class_table
from tokviz.core.text.split import parse_split

SHAKESPEARE = Path(__file__).resolve().parents[4] / "shared" / "corpora" / "tinyshakespeare.txt"
KERNELS = load_kernels(parse_split("gpt4"))
needs_numba = pytest.mark.skipif(KERNELS is None, reason="numba is not installed here (the compiled path is off)")
# letters, numbers and spaces of several scripts, contractions in both cases, punctuation runs,
# line breaks of every kind, a combining mark, spaces that Python's \s has and Unicode's has not
ALPHABET = list("aZé中ж 	\n\r'sStTlLvVrReEdDmM1٣,.!—") + ["\u00a0", "\u2028", "\x0b", "\x1c", "\u0301", "\u3000"]
ODD = ("a  \nb  c   d!!  e--f 12345 g...\n\n  h'st  i ' t  j\t\tk \n \n l 1 2 33 m,, n "
       "café ٣٤٥٦ x\u00a0y 𝐀𝐁 z😀😀 it'S ") * 40


@pytest.fixture(scope="module")
def text() -> str:
    if not SHAKESPEARE.exists():
        pytest.skip("tinyshakespeare.txt is not in ../shared/corpora")
    return SHAKESPEARE.read_text(encoding="utf-8")[:30_000]


def _cut(text: str, spec: str) -> list[str]:
    """The pieces the kernel cuts `text` into (no words: every piece is reported as new)."""
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    empty = np.zeros(0, np.uint32)
    hashes, slots = KERNELS.word_table(empty, np.zeros(1, np.int64), 4)
    table = np.frombuffer(bmp_class_table(), dtype=np.uint8)
    nums, per, at, starts, stops = KERNELS.number_pieces(cps, np.array([len(text)]), table, COMPILED_SCHEMES[spec],
                                                         empty, np.zeros(1, np.int64), hashes, slots, 4)
    assert (nums == -1).all() and at.tolist() == list(range(len(nums))) and per.tolist() == [len(nums)]
    return [text[a:b] for a, b in zip(starts.tolist(), stops.tolist())]


@needs_numba
@pytest.mark.parametrize("spec", ["gpt4", "gpt2"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=st.lists(st.tuples(st.sampled_from(ALPHABET), st.integers(1, 5)), min_size=1, max_size=24))
def test_compiled_cut_is_the_splits_on_the_bmp(spec, runs):
    text = "".join(c * n for c, n in runs)
    assert _cut(text, spec) == parse_split(spec).chunks(text)


@needs_numba
@pytest.mark.parametrize("spec", ["gpt4", "gpt2"])
def test_compiled_cut_covers_text_beyond_the_bmp(spec):
    """Astral letters are classed as punctuation (pieces may then differ from the split's, which
    only costs a new piece): the pieces still cover the text, in order."""
    text = "a𝐀𝐁 b😀😀c 𝐀1 ' 😀s" * 3
    assert "".join(_cut(text, spec)) == text


def _stage_one(part: str, merges: int, split: str = "gpt4") -> list[str]:
    run = Training(TrainSettings(merges=merges, split=split), texts=[part])
    return list(run.count())


@needs_numba
@pytest.mark.parametrize(("split", "forget"), [("gpt4", 0), ("gpt4", 3), ("gpt2", 0), ("gpt2", 5)])
def test_compiled_numbering_equals_the_plain_one(monkeypatch, text, split, forget):
    """The same numbers, pieces a chunk and new pieces in order, also when stage 1 never saw some
    pieces (every `forget`-th word left out), and with the chunks taken a few at a time."""
    monkeypatch.setattr(pieces_module, "BLOCK_CHARS", 700)
    part = text + ODD
    words = _stage_one(part, 0, split)
    if forget:
        words = [w for i, w in enumerate(words) if i % forget]
    chunks = list(STAGE_TWO.count(part))
    fast = numbered(chunks, parse_split(split), words, KERNELS)
    plain = numbered(chunks, parse_split(split), words, None)
    assert fast.numbers.tolist() == plain.numbers.tolist()
    assert fast.per_chunk.tolist() == plain.per_chunk.tolist()
    assert fast.extra == plain.extra and (bool(plain.extra) or not forget)


def test_numbering_aside_in_a_child_equals_here(monkeypatch, text):
    if not can_fork():
        pytest.skip("no fork here")
    monkeypatch.setattr(pieces_module, "ASIDE_MIN_CHARS", 1_000)
    part = text + ODD
    words, chunks = _stage_one(part, 0), list(STAGE_TWO.count(part))
    child = number_aside(chunks, parse_split("gpt4"), words, 2, KERNELS)
    assert child is not None and child.pid != os.getpid()
    there, here = child.result(), numbered(chunks, parse_split("gpt4"), words, KERNELS)
    assert there.numbers.tolist() == here.numbers.tolist() and there.extra == here.extra
    assert number_aside(chunks, parse_split("gpt4"), words, 1, KERNELS) is None  # one process: none


def _steps(part: str, processes: int, **kw) -> list:
    run = SuperBpeTraining(SuperBpeSettings(merges=330, transition=300, **kw), texts=[part])
    run.prepare(processes=processes)
    return [(s.pair, s.id, s.token, s.count, s.length, s.candidates) for s in run.steps()]


@pytest.mark.parametrize("compiled", [True, False])
def test_training_with_the_numbering_aside_equals_one_process(monkeypatch, text, compiled):
    """Stage 1 merging here while a child numbers the stage-2 pieces: the very steps of a training
    in one process, compiled or not."""
    if compiled and KERNELS is None:
        pytest.skip("numba is not installed here")
    monkeypatch.setattr(pieces_module, "ASIDE_MIN_CHARS", 1_000)
    started = []
    aside = pieces_module.number_aside
    monkeypatch.setattr(pieces_module, "number_aside", lambda *a: started.append(a[3]) or aside(*a))
    part = text + ODD
    if compiled:
        two, one = _steps(part, 2), _steps(part, 1)
    else:
        with jit_off():
            two, one = _steps(part, 2), _steps(part, 1)
    assert two == one and len(one) == 330
    assert started == [2, 1]


def test_a_training_stopped_in_stage_one_ends_its_child(monkeypatch, text):
    """Leaving the steps during stage 1 (a cancel) kills the child numbering the pieces."""
    killed = []

    class Child:
        def result(self):
            raise AssertionError("stage 2 never starts")

        def kill(self):
            killed.append(1)

    monkeypatch.setattr(pieces_module, "number_aside", lambda *a: Child())
    run = SuperBpeTraining(SuperBpeSettings(merges=330, transition=300), texts=[text])
    run.prepare()
    steps = run.steps()
    for _, _ in zip(range(10), steps):
        pass
    steps.close()
    assert killed == [1]
