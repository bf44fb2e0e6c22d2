"""SuperBPE's stage-2 chunks counted and cut into stage-1 pieces, each numbered: compiled, on `re`, in a
forked child while stage 1 merges; every way gives the same chunks, numbers and training."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import tokviz.core.superbpe.pieces as pieces_module
from tests.jit_switch import jit_off
from tokviz.core import jit
from tokviz.core.bpe.timeline import Training, TrainSettings
from tokviz.core.processes.fork import can_fork
from tokviz.core.superbpe.pieces import (
    CHUNK_KERNELS,
    COMPILED_SCHEMES,
    count_and_number,
    load_kernels,
    number_aside,
    numbered,
)
from tokviz.core.superbpe.split import STAGE_TWO
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTraining
from tokviz.core.text.chunks import count_chunks
from tokviz.core.text.fastsplit import class_table
from tokviz.core.text.split import parse_split

SHAKESPEARE = Path(__file__).resolve().parents[4] / "shared" / "corpora" / "tinyshakespeare.txt"
KERNELS = load_kernels(parse_split("gpt4"))
CHUNKS = jit.kernels(CHUNK_KERNELS)
needs_numba = pytest.mark.skipif(KERNELS is None, reason="numba is not installed here (the compiled path is off)")
# letters, numbers and spaces of several scripts, contractions in both cases, punctuation runs,
# line breaks of every kind, a combining mark, spaces that Python's \s has and Unicode's has not
ALPHABET = list("aZé中ж 	\n\r'sStTlLvVrReEdDmM1٣,.!—/") + ["\u00a0", "\u2028", "\x0b", "\x1c", "\u0301", "\u3000"]
ASTRAL = ["\U0001D400", "\U0001F600", "\U00010107", "\U00020000"]  # a letter, an emoji, a number, a CJK letter
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
    rows = KERNELS.word_table(empty, np.zeros(1, np.int64), 4)
    table = np.frombuffer(class_table(), dtype=np.uint8)
    nums, per, at, starts, stops = KERNELS.number_pieces(cps, np.array([0]), np.array([len(text)]), table,
                                                         COMPILED_SCHEMES[spec], empty, rows, 4)
    assert (nums == -1).all() and at.tolist() == list(range(len(nums))) and per.tolist() == [len(nums)]
    return [text[a:b] for a, b in zip(starts.tolist(), stops.tolist())]


@needs_numba
@pytest.mark.parametrize("spec", ["gpt4", "gpt2"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=st.lists(st.tuples(st.sampled_from(ALPHABET + ASTRAL), st.integers(1, 5)), min_size=1, max_size=24))
def test_compiled_cut_is_the_splits(spec, runs):
    text = "".join(c * n for c, n in runs)
    assert _cut(text, spec) == parse_split(spec).chunks(text)


@needs_numba
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=st.lists(st.tuples(st.sampled_from(ALPHABET + ASTRAL), st.integers(1, 5)), min_size=1, max_size=30),
       cuts=st.lists(st.integers(0, 60), max_size=3))
@example(runs=[(".", 2), ("\n", 1), ("/", 1), ("a", 1), (" ", 3), ("\n", 1)], cuts=[])  # "..\n/" and "   \n"
def test_compiled_stage_two_count_is_the_splits(runs, cuts):
    """The distinct stage-2 chunks, their counts and their order of first appearance, over texts
    side by side (a chunk never runs from one into the next)."""
    text = "".join(c * n for c, n in runs)
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    texts = [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    cps = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    ends = np.cumsum([len(t) for t in texts])
    first, length, count = CHUNKS.count_chunks(cps, ends - [len(t) for t in texts], ends,
                                               np.frombuffer(class_table(), dtype=np.uint8))
    joined = "".join(texts)
    found = {joined[a:a + n]: c for a, n, c in zip(first.tolist(), length.tolist(), count.tolist())}
    assert list(found.items()) == list(count_chunks(texts, STAGE_TWO).items())


def test_the_class_tables_are_every_planes():
    """The table of the planes with letters, numbers or spaces is the table of all 17, and the
    BMP's its start."""
    whole = class_table(planes=17)
    assert class_table() == whole and class_table(bmp=True) == whole[:0x10000]


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
def test_training_with_the_work_aside_equals_one_process(monkeypatch, text, compiled):
    """Stage 1 merging here while a child counts the stage-2 chunks and numbers their pieces
    (compiled), or numbers the pieces of the chunks counted here (not): the very steps of a training
    in one process."""
    if compiled and (KERNELS is None or CHUNKS is None):
        pytest.skip("numba is not installed here")
    monkeypatch.setattr(pieces_module, "ASIDE_MIN_CHARS", 1_000)
    started = []
    for name in ("count_aside", "number_aside"):
        aside = getattr(pieces_module, name)
        monkeypatch.setattr(pieces_module, name,
                            lambda *a, name=name, aside=aside: started.append((name, a[-2])) or aside(*a))
    part = text + ODD
    if compiled:
        two, one = _steps(part, 2), _steps(part, 1)
    else:
        with jit_off():
            two, one = _steps(part, 2), _steps(part, 1)
    assert two == one and len(one) == 330
    first = "count_aside" if compiled else "number_aside"
    assert started == [(first, 2), ("number_aside", 1)]


@needs_numba
def test_counting_and_numbering_aside_equals_counting_here(text):
    """The chunks counted and their pieces numbered in one go, special tokens cut out, equal the
    counts of the stage-2 split and the numbering of those chunks."""
    part = text[:5000] + "<|end|>" + ODD + "<|end|>"
    texts = [part, "second <|end|> text 12345"]
    words = _stage_one(part, 0)
    counted = count_and_number(texts, ("<|end|>",), COMPILED_SCHEMES["gpt4"], words, KERNELS, CHUNKS)
    counts = count_chunks(texts, STAGE_TWO, specials=("<|end|>",))
    plain = numbered(list(counts), parse_split("gpt4"), words, None)
    assert counted.weights.tolist() == list(counts.values())
    assert counted.numbered.numbers.tolist() == plain.numbers.tolist()
    assert counted.numbered.per_chunk.tolist() == plain.per_chunk.tolist()
    assert counted.numbered.extra == plain.extra


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


WARM_UP_CHECK = """
import json
from tokviz.core.superbpe.warm_up import warm_up
from tokviz.core.superbpe import chunk_kernels, kernels, piece_kernels
ok = warm_up()
kinds = {f.__name__: sorted(str(s[0]).split("(")[1].split(",")[0] for s in f.signatures)
         for f in (kernels.merge_step, kernels.first_pair_groups, kernels.live_counts,
                   piece_kernels.number_pieces, piece_kernels.word_table, piece_kernels.laid_out,
                   piece_kernels.may_join, chunk_kernels.count_chunks)}
print(json.dumps([ok, kinds]))
"""


@needs_numba
def test_the_warm_up_loads_every_kernel_a_training_calls():
    """In a fresh interpreter, the warm-up leaves each kernel loaded for the argument types a big
    training passes (16-bit and 32-bit code points; the numbered pieces as 32-bit, the plain ones
    as 64-bit numbers), so that none is compiled silently at the transition."""
    done = subprocess.run([sys.executable, "-c", WARM_UP_CHECK], capture_output=True, text=True, timeout=900,
                          check=True)
    ok, kinds = json.loads(done.stdout.strip().splitlines()[-1])
    assert ok
    assert kinds == {"merge_step": ["int64"], "first_pair_groups": ["int64"], "live_counts": ["int64"],
                     "number_pieces": ["uint16", "uint32"], "word_table": ["uint32"],
                     "laid_out": ["int32", "int64"], "may_join": ["int32", "int64"],
                     "count_chunks": ["uint16", "uint32"]}


def test_a_failed_child_leaves_the_counting_to_the_training(monkeypatch, text):
    """The child that counts the stage-2 chunks fails (here it raises): the training counts them
    itself at the transition and makes the very steps of a training in one process."""
    if KERNELS is None or CHUNKS is None or not can_fork():
        pytest.skip("numba is not installed here, or no fork")
    monkeypatch.setattr(pieces_module, "ASIDE_MIN_CHARS", 1_000)
    failed = []

    def broken(*_args):
        raise MemoryError("no room")

    aside = pieces_module.count_aside
    monkeypatch.setattr(pieces_module, "count_and_number", broken)
    monkeypatch.setattr(pieces_module, "count_aside", lambda *a: failed.append(1) or aside(*a))
    part = text + ODD
    assert _steps(part, 2) == _steps(part, 1)
    assert failed == [1]
