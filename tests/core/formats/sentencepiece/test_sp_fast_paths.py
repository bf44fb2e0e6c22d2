"""The shortcuts of SentencePiece encoding against the library and the general loops they stand in
for: BPE words merged by their list of pair scores (`score_merge.merge_word`) against the heap
(`SpBpe.trace`) and `sentencepiece`, cutting before runs of ``▁``, unknown pieces resolved on ids
alone, the merge timeline read lazily, and `encode` whose ids come first."""

from __future__ import annotations

import random

import pytest

from tests.core.formats.sentencepiece.spm_helpers import mistral_model, write_model
from tests.jit_switch import jit_off
from tokviz.core.errors import EncodeError
from tokviz.core.formats.sentencepiece import SentencePieceTokenizer
from tokviz.core.formats.sentencepiece.score_merge import marks_in_runs_only, run_led_segments
from tokviz.core.formats.sentencepiece.unknown_ids import resolve_unknowns
from tokviz.core.unigram.encoder.segments import cut_segments, inner_mark_pattern

spm = pytest.importorskip("sentencepiece")

BYTES = [(f"<0x{b:02X}>", 0.0, "byte") for b in range(256)]
# ties ("ab"/"bc", "ca"/"bca"), -0.0 below +0.0 ("xx"/"yy"), pieces that only a later merge can
# form, runs of marks; no unused or user-defined piece, so words take the short loop
MERGES = [("ab", -1.0, "normal"), ("bc", -1.0, "normal"), ("abc", -2.0, "normal"), ("ca", -3.0, "normal"),
          ("bca", -3.0, "normal"), ("xx", 0.0, "normal"), ("yy", -0.0, "normal"), ("xxyy", -0.0, "normal"),
          ("▁a", -4.0, "normal"), ("▁ab", -2.5, "normal"), ("▁▁", -6.0, "normal"), ("▁▁▁", -5.0, "normal"),
          ("cab", -0.5, "normal"), ("yx", 0.0, "normal")]
CHARS = [(c, -9.0, "normal") for c in "▁abcxy"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    path = write_model(tmp_path_factory.mktemp("fast") / "m.model", [("<s>", 0.0, "control"), *BYTES, *MERGES, *CHARS],
                       trainer={"model_type": 2, "byte_fallback": True},
                       normalizer={"name": "identity", "remove_extra_whitespaces": False})
    return SentencePieceTokenizer.from_file(path), spm.SentencePieceProcessor(model_file=str(path))


def _texts(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice("abcxy  é日") for _ in range(rnd.randint(0, 40))) for _ in range(n)]


def test_short_words_merge_as_the_heap_and_the_library(pair):
    ours, ref = pair
    for text in [*_texts(1, 400), "abcabc", "xxyyxx", "cabca", "   abc", "yxyxxy"]:
        norm = ours.normalize(text)
        assert ours.bpe.encode(norm) == ours.bpe.trace(norm)[1], text
        assert ours.encode_ids(text) == ref.encode(text), text
        assert ours.encode(text).ids == ref.encode(text), text


def test_long_words_and_steps_take_the_heap(pair):
    ours, ref = pair
    long = "abcxy" * 100  # longer than the short loop takes
    assert ours.encode_ids(long) == ref.encode(long)
    full = ours.encode_ids("abcabc")
    assert ours.encode_ids("abcabc", step=1) != full  # the first merge alone
    assert ours.encode_ids("abcabc", step=ours.n_merges) == full


def test_cutting_before_runs_of_marks_is_cutting_where_no_piece_spans():
    inner = ["▁▁", "▁▁▁", "▁▁▁▁"]
    assert marks_in_runs_only(inner)
    assert not marks_in_runs_only(["▁▁▁"]) and not marks_in_runs_only(["▁▁", "a▁b"])
    pattern = inner_mark_pattern(inner, False)
    rnd = random.Random(3)
    for _ in range(500):
        s = "".join(rnd.choice("▁▁ab") for _ in range(rnd.randint(0, 20)))
        assert run_led_segments(s) == [s[a:b] for a, b in cut_segments(s, pattern, False)], s


def test_unknowns_on_ids_alone():
    # "a" known (5), "é" unknown (-1), a run of two unknowns, unknown piece id 0 from the model
    norm, ids, ends = "aééa日", [5, -1, -1, 5, 0], [1, 2, 3, 4, 5]
    assert resolve_unknowns(norm, ids, ends, unknown={0}, unk_id=0, byte_ids=None) == [5, 0, 5, 0]
    byte_ids = [1000 + b for b in range(256)]
    assert resolve_unknowns(norm, ids, ends, unknown={0}, unk_id=0, byte_ids=byte_ids) == [
        5, 1000 + 0xC3, 1000 + 0xA9, 1000 + 0xC3, 1000 + 0xA9, 5, 1000 + 0xE6, 1000 + 0x97, 1000 + 0xA5]
    many = [-1] * 5000  # as many unknowns as tokens: one pass
    assert resolve_unknowns("é" * 5000, many, list(range(1, 5001)), unknown=(), unk_id=3, byte_ids=None) == [3]


@pytest.mark.parametrize("share", [0.001, 0.3, 0.9])
def test_unknowns_fused_the_same_few_or_many(share):
    """Rare unknowns take the list path, many the numpy one: both fuse each run into its first."""
    rnd = random.Random(int(share * 1000))
    ids = [rnd.choice((-1, 7)) if rnd.random() < share else rnd.randrange(8, 50) for _ in range(30_000)]
    want, prev = [], False
    for i in ids:
        unknown = i in (-1, 7)
        if not (unknown and prev):
            want.append(3 if i == -1 else i)
        prev = unknown
    assert resolve_unknowns("", ids, [], unknown={7}, unk_id=3, byte_ids=None) == want


def test_encode_reads_ids_first_and_checks_specials_at_once(pair):
    ours, ref = pair
    text = "abc 日本 xxyy"
    lazy, full = ours.encode(text), ours.encode_ordinary(text)
    assert lazy.ids == ref.encode(text)
    assert (lazy.tokens, lazy.spans, lazy.unknown) == (full.tokens, full.spans, full.unknown)
    assert ours.encode(text).spans == full.spans  # spans read first: everything at once
    with pytest.raises(EncodeError, match="unknown special token"):
        ours.encode(text, allowed_special={"<s>"})


def test_the_merge_timeline_is_read_lazily_and_equals_the_rows():
    tok = SentencePieceTokenizer.from_file(mistral_model())
    merges = tok.merge_list()
    assert len(merges) == tok.n_merges == len(merges.ids)
    for k in (0, 1, 500, len(merges) - 1, -1):
        m = merges[k]
        i = merges.ids[k]
        assert (m.id, m.pair, m.token) == (i, tok.merge_of(i), tok.token_bytes(i))
    assert [m.id for m in merges[:3]] == list(merges.ids[:3])


def _merge_order_by_python(tok) -> list[int]:
    """The timeline's order as a plain sort gives it: the best score first, ties by id."""
    pieces, scores = tok.proto.pieces, tok.proto.scores
    cand = [i for i in tok.bpe.mergeable if len(pieces[i]) > 1 and int(tok.types[i]) != 4]  # 4: user-defined
    return sorted(cand, key=lambda i: (-scores[i], i))


@pytest.mark.parametrize("odd", [(), (("zz", float("nan"), "normal"),), (("zq", float("-inf"), "normal"),
                                                                           ("qz", float("inf"), "normal"))])
def test_the_merge_order_is_the_best_score_first_ties_by_id(tmp_path, odd):
    pieces = [("<s>", 0.0, "control"), ("<unk>", 0.0, "unknown"), *MERGES, ("ud", -0.1, "user"), *odd,
              *CHARS, *[(c, -9.0, "normal") for c in "zqud"]]
    tok = SentencePieceTokenizer.from_file(write_model(tmp_path / "m.model", pieces, trainer={"model_type": 2}))
    assert tok.merge_list().ids == _merge_order_by_python(tok)
    if not odd:
        assert [tok.proto.pieces[i] for i in tok.merge_list().ids[:4]] == ["xx", "yy", "xxyy", "yx"]  # ties by id


def test_mistral_merge_order_as_a_plain_sort_gives_it():
    tok = SentencePieceTokenizer.from_file(mistral_model())
    assert tok.merge_list().ids == _merge_order_by_python(tok)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_full_cache_starts_over_without_changing_a_line_or_a_text(pair, monkeypatch, compiled):
    """The parts' cache is bounded: when a line or a text would fill it, it starts over with what
    that call needs; ids stay the library's, by line and whole, in Python and compiled."""
    from tokviz.core.formats.sentencepiece import bpe as sp_bpe

    tok, ref = pair
    if compiled:
        pytest.importorskip("numba")
        if tok.bpe.compiled() is None:
            pytest.skip("compiled kernels off here")
    monkeypatch.setattr(sp_bpe, "_CACHE_SIZE", 12)
    lines = _texts(7, 200)
    assert [tok.encode_ids(t) for t in lines] == [ref.encode(t) for t in lines]
    whole = " ".join(lines)
    assert tok.encode_ids(whole) == ref.encode(whole)


@pytest.mark.parametrize("compiled", [False, True])
def test_pieces_placed_from_their_ids_are_the_heaps(compiled):
    """The cache holds a part's ids alone: each piece's length comes from its id (1 for an unknown
    character), and the pieces land where the heap loop puts them, in Python and compiled, on
    Mistral's model and texts with characters it does not know."""
    from tests.core.formats.sentencepiece.spm_helpers import corpus_lines

    if compiled:
        tok = SentencePieceTokenizer.from_file(mistral_model())
        if tok.bpe.compiled() is None:
            pytest.skip("compiled kernels off here")
    else:
        with jit_off():
            tok = SentencePieceTokenizer.from_file(mistral_model())
    for line in [*corpus_lines(50)[:300], "a\u0378b \U0001d400x", "▁▁ ▁x"]:
        norm = tok.normalize(line)
        assert tok.bpe.encode(norm) == tok.bpe.trace(norm)[1], line
