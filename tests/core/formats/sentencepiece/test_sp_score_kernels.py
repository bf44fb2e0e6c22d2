"""The compiled SentencePiece BPE merge (`score_kernels`, `score_compiled`, numba) against the
Python loop it replaces (`score_merge.merge_word`) on random vocabularies and words (ties, -0.0,
multi-byte and unknown characters, pieces longer than 8 bytes), and against sentencepiece itself
through the tokenizer; and when a tokenizer loads it."""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.formats.sentencepiece.spm_helpers import corpus_lines, mistral_model
from tests.core.formats.sentencepiece.test_sp_fast_paths import pair  # noqa: F401 - a fixture
from tokviz.core import jit
from tokviz.core.formats.sentencepiece import bpe as sp_bpe
from tokviz.core.formats.sentencepiece.score_merge import merge_keys, merge_word

pytest.importorskip("numba")
ALPHABET = "ab\u2581é日😀"  # 1 to 4 bytes of UTF-8


def _kernels():
    k = jit.kernels(sp_bpe.KERNELS)
    if k is None:
        pytest.skip("TOKVIZ_JIT=0: the plain path is tested elsewhere")
    return k


@st.composite
def vocab_and_words(draw):
    """Pieces over `ALPHABET` with few distinct scores (ties, 0.0 and -0.0), and words over it
    and a character no piece has."""
    from tokviz.core.formats.sentencepiece.score_compiled import CompiledScoreMerger

    chars = draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=len(ALPHABET), unique=True))
    joined = draw(st.lists(st.text(alphabet=ALPHABET, min_size=2, max_size=12), max_size=40))
    pieces = list(dict.fromkeys([*chars, *joined]))
    scores = draw(st.lists(st.sampled_from([0.0, -0.0, -1.0, -2.5, -3.0, 1.5]), min_size=len(pieces),
                           max_size=len(pieces)))
    words = draw(st.lists(st.text(alphabet=ALPHABET + "x", min_size=1, max_size=30), min_size=1, max_size=12))
    keys = merge_keys({p: i for i, p in enumerate(pieces)}, scores, range(len(pieces)))
    ids = {p: i + 7 for i, p in enumerate(pieces)}
    return CompiledScoreMerger(_kernels(), keys, ids, -1), keys, ids, words


@settings(max_examples=60, deadline=None)
@given(case=vocab_and_words())
def test_compiled_equals_merge_word_on_random_vocabularies(case):
    merger, keys, ids, words = case
    assert merger.merge_words(words) == [merge_word(w, keys, ids, -1) for w in words]


def test_compiled_encodes_as_sentencepiece(pair):  # noqa: F811 - the fixture
    ours, ref = pair
    merger = ours.bpe.compiled()
    if merger is None:
        pytest.skip("TOKVIZ_JIT=0")
    rnd = random.Random(2)
    texts = ["".join(rnd.choice("abcxy  é日") for _ in range(rnd.randint(0, 40))) for _ in range(300)]
    texts += ["xxyyxx", "cabca", "   abc", "abcxy" * 100]
    keys, ids = ours.bpe.short_tables()
    words = [w for t in texts for w in ours.chunks(t)]
    assert merger.merge_words(words) == [merge_word(w, keys, ids, ours.bpe.unk_id) for w in words]
    assert [ours.encode_ids(t) for t in texts] == [ref.encode(t) for t in texts]
    assert [ours.encode(t).ids for t in texts] == [ref.encode(t) for t in texts]


def test_mistral_lines_and_a_long_text_through_the_compiled_loop_equal_sentencepiece():
    """Lines, and a text the line kernel takes in pieces (`CALL_CHARS`), with a run of marks
    longer than a piece."""
    spm = pytest.importorskip("sentencepiece")
    from tests.real_tokenizers import corpus
    from tokviz.core.formats.sentencepiece.score_compiled import CALL_CHARS
    from tokviz.core.loading import load_tokenizer

    path = mistral_model()
    ours, ref = load_tokenizer(path), spm.SentencePieceProcessor(model_file=str(path))
    if ours.bpe.compiled() is None:
        pytest.skip("TOKVIZ_JIT=0")
    lines = corpus_lines(40)
    assert [ours.encode_ids(line) for line in lines] == [ref.encode(line) for line in lines]
    text = corpus("udhr2_all.txt", 10 * CALL_CHARS) + "    " * CALL_CHARS
    assert ours.encode_ids(text) == ref.encode(text)
    assert ours.encode_ids("\n".join(lines)) == ref.encode("\n".join(lines))


def test_the_loop_loads_once_python_has_merged_enough_words(pair, monkeypatch):  # noqa: F811
    """A one-off text of few new words stays in Python (no numba import); the words merged in
    Python count, and past `COMPILE_MIN` the compiled loop takes over."""
    _kernels()
    ours, _ = pair
    bpe = type(ours.bpe)(ours.bpe.map, ours.bpe.scores, ours.bpe.types, unk_id=ours.bpe.unk_id, user_defined=())
    monkeypatch.delitem(sys.modules, sp_bpe.KERNELS)
    monkeypatch.setattr(sp_bpe, "PLAIN_WORDS", [0])
    monkeypatch.setattr(sp_bpe, "COMPILE_MIN", 30)
    assert bpe.encode_ids("abc\u2581cab")[0] and sp_bpe.KERNELS not in sys.modules  # normalized text: two words
    assert sp_bpe.PLAIN_WORDS[0] == 2
    words = "\u2581".join(f"{'ab' * k}c" for k in range(1, 40))
    want = bpe.encode_ids(words)[0]  # 39 new words: past the limit
    assert sp_bpe.KERNELS in sys.modules and bpe.compiled() is not None
    assert bpe.encode_ids(words)[0] == want


def test_a_text_of_many_new_words_loads_the_loop_before_it_and_english_does_not():
    """`prepare_for` (compare, before its children fork): udhr2's 380 languages bring many words
    that are not pieces, the compiled loop is loaded for them at once; a long English text's
    common words are pieces and its rare ones repeat, so it keeps Python's loop until
    `COMPILE_MIN` words have taken it."""
    _kernels()
    from tests.real_tokenizers import corpus
    from tokviz.core.formats.sentencepiece import SentencePieceTokenizer

    english = SentencePieceTokenizer.from_file(mistral_model())
    assert not english.bpe.repaid_by(corpus("gutenberg30.txt", 10_000_000))
    assert not english.bpe.repaid_by(corpus("udhr2_all.txt", 1_000_000))  # too few new words in all
    many = SentencePieceTokenizer.from_file(mistral_model())
    udhr = corpus("udhr2_all.txt", None)
    assert many.bpe.repaid_by(udhr)
    many.prepare_for(udhr)
    assert not many.bpe.repaid_by(udhr) and many.bpe.compiled() is not None  # loaded: nothing left to repay


def _expected_line(line: str, keys, ids, byte_ids) -> list[int]:
    """`merge_word` over the run-led parts of `line`, an unknown character as its bytes' ids
    (`byte_ids`) or -1."""
    from tokviz.core.formats.sentencepiece.score_merge import run_led_segments

    length = {i: len(p) for p, i in ids.items()}
    out: list[int] = []
    for seg in run_led_segments(line):
        a = 0
        for i in merge_word(seg, keys, ids, -1):
            n = length.get(i, 1)
            out.extend([byte_ids[b] for b in seg[a : a + n].encode()] if i == -1 and byte_ids else [i])
            a += n
    return out


@settings(max_examples=60, deadline=None)
@given(case=vocab_and_words(), fallback=st.booleans(), entries=st.integers(1, 6))
def test_line_kernel_equals_merge_word_on_random_vocabularies(case, fallback, entries):
    """`CompiledScoreMerger.line_ids`: whole lines cut before runs of marks, looked up and merged in
    one call, through a cache that starts with room for one word, grows and starts over (after
    `entries` words); each line twice (the second time from the cache)."""
    from tokviz.core.formats.sentencepiece.score_compiled import CompiledScoreMerger

    _, keys, ids, words = case
    byte_ids = list(range(1000, 1256)) if fallback else None
    merger = CompiledScoreMerger(_kernels(), keys, ids, -1, byte_ids, line_entries=entries, first_bits=1)
    lines = ["".join(words), "\u2581".join(words), *words, "\u2581\u2581" + "x\u2581".join(words[::-1])]
    for line in lines + lines:
        assert merger.line_ids(line) == _expected_line(line, keys, ids, byte_ids)


def test_the_line_kernel_leaves_long_parts_and_lone_surrogates_to_the_word_path():
    from tokviz.core.formats.sentencepiece.score_compiled import LINE_LONGEST, CompiledScoreMerger

    keys = merge_keys({"a": 0, "b": 1, "ab": 2}, [-1.0, -1.0, -0.5], range(3))
    merger = CompiledScoreMerger(_kernels(), keys, {"a": 0, "b": 1, "ab": 2}, -1)
    assert merger.line_ids("\u2581" + "ab" * LINE_LONGEST) is None
    assert merger.line_ids("a\ud800b") is None
    longest = "\u2581ab" + "a" * (LINE_LONGEST - 3)  # a part of LINE_LONGEST characters
    assert merger.line_ids("ab" + longest) == [2, -1, 2, *[0] * (LINE_LONGEST - 3)]


def test_threads_share_the_line_cache_as_sentencepiece_encodes():
    """Two threads encode udhr2's lines with one Mistral tokenizer whose line cache starts small,
    grows and starts over meanwhile: every line is sentencepiece's."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.real_tokenizers import corpus
    from tokviz.core.loading import load_tokenizer

    spm = pytest.importorskip("sentencepiece")
    path = mistral_model()
    ours, ref = load_tokenizer(path), spm.SentencePieceProcessor(model_file=str(path))
    if ours.bpe.compiled() is None:
        pytest.skip("TOKVIZ_JIT=0")
    keys, ids = ours.bpe.short_tables()
    ours.bpe.compiled().__init__(_kernels(), keys, ids, ours.bpe.unk_id, ours.bpe.byte_ids, line_entries=3000,
                                 first_bits=4)
    lines = corpus("udhr2_all.txt", 400_000).split("\n")
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(ours.encode_ids, lines, chunksize=64))
    assert got == list(map(ref.encode, lines))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab\u2581", max_size=80), size=st.integers(1, 12))
def test_run_led_pieces_cut_where_parts_start(text, size):
    """A long text's pieces for the line kernel: they join to the text, and their parts are its parts."""
    from tokviz.core.formats.sentencepiece.score_compiled import run_led_pieces
    from tokviz.core.formats.sentencepiece.score_merge import run_led_segments

    pieces = run_led_pieces(text, size)
    assert "".join(pieces) == text
    assert [p for piece in pieces for p in run_led_segments(piece)] == run_led_segments(text)

