"""Reading corpus files in slices, statistics, and the large-text line index."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import CorpusError, TrainSettings, save_timeline, train
from tokviz.engine import corpus_files
from tokviz.engine.corpus_files import (
    LoadedCorpus,
    LoadedModel,
    NotUtf8Error,
    corpus_stats,
    decode_in_slices,
    decode_pieces,
    head_lines,
    is_model_file,
    load_file,
)
from tokviz.engine.large_text import LargeText, split_pieces


def test_decode_keeps_characters_cut_between_slices(monkeypatch):
    monkeypatch.setattr(corpus_files, "SLICE", 3)
    text = "héllo wörld 👋 東京\n" * 3
    data = "\ufeff".encode() + text.encode()
    assert decode_in_slices(data, name="x") == text
    assert "".join(decode_pieces(data, name="x")) == text


def test_decode_refuses_binary_with_offset():
    with pytest.raises(CorpusError, match=r"x\.bin looks like a binary file \(NUL byte at offset 4\)"):
        decode_in_slices(b"abc\n\x00def", name="x.bin")


@pytest.mark.parametrize("slice_size", [2, 3, 1 << 18])
def test_decode_reports_first_bad_byte(monkeypatch, slice_size):
    monkeypatch.setattr(corpus_files, "SLICE", slice_size)
    data = "aé".encode() + b"\xff" + b"zz"
    with pytest.raises(NotUtf8Error) as info:
        decode_in_slices(data, name="latin.txt")
    assert info.value.offset == 3
    assert "first bad byte 0xFF at offset 3" in str(info.value)
    assert decode_in_slices(data, name="latin.txt", errors="replace") == "aé\ufffdzz"


def test_decode_pieces_are_line_aligned(monkeypatch):
    monkeypatch.setattr(corpus_files, "SLICE", 8)
    text = "".join(f"line {i}\n" for i in range(50)) + "end"
    pieces = decode_pieces(text.encode(), name="x")
    assert "".join(pieces) == text
    assert all(p.endswith("\n") for p in pieces[:-1])
    assert len(pieces) > 5


def test_stats_known_values():
    s = corpus_stats("low low\nlower lowest\n")
    assert (s.chars, s.bytes, s.lines, s.words, s.unique_words, s.distinct_chars) == (21, 21, 2, 4, 3, 9)
    e = corpus_stats("é 👋")
    assert (e.chars, e.bytes, e.lines, e.words) == (3, 7, 1, 2)
    assert corpus_stats("") == corpus_files.CorpusStats()


def test_stats_of_a_large_text_equal_the_string_stats(monkeypatch):
    text = "".join(f"word{i % 7} other{i % 3}\n" for i in range(5000))
    large = LargeText(list(split_pieces(text, 1000)))
    assert corpus_stats(large) == corpus_stats(text)


def test_word_count_stats_and_global_line_numbers():
    s = corpus_stats("low 5\nlower 2\nlow 1\n", word_counts=True)
    assert (s.table_entries, s.table_total, s.table_error) == (2, 8, None)
    text = "".join(f"w{i} {i}\n" for i in range(100)) + "broken line here\n"
    large = LargeText(list(split_pieces(text, 64)))
    bad = corpus_stats(large, word_counts=True, name="t.txt")
    assert bad.table_entries is None
    assert bad.table_error.startswith("t.txt:101:")


def test_head_lines():
    assert head_lines("ab\ncd\nef", 6) == "ab\ncd\n"
    assert head_lines("abcdef", 3) == "abc"
    assert head_lines("ab", 10) == "ab"


def test_load_small_file(tmp_path):
    p = tmp_path / "c.txt"
    p.write_bytes("low 5\r\nlower 2\r\n".encode())
    got = load_file(p)
    assert isinstance(got, LoadedCorpus)
    assert got.text == "low 5\r\nlower 2\r\n"
    assert (got.read_only, got.word_counts, got.crlf, got.n_bytes) == (False, True, True, 16)
    assert got.stats.words == 4


def test_load_large_file_as_pieces(tmp_path):
    p = tmp_path / "big.txt"
    text = "".join(f"line {i} é\n" for i in range(3000))
    p.write_text(text, encoding="utf-8")
    got = load_file(p, edit_limit=1000)
    assert got.read_only and got.text is None
    assert got.large.text() == text
    assert got.large.line(2999) == "line 2999 é"
    assert got.stats == corpus_stats(text)


def test_load_model_file(tmp_path):
    tl = train(TrainSettings(merges=3), texts=["aaabdaaabac"])
    p = tmp_path / "m.json"
    save_timeline(tl, p)
    assert is_model_file(p)
    got = load_file(p)
    assert isinstance(got, LoadedModel)
    assert [s.pair for s in got.timeline.steps] == [(97, 97), (256, 97), (257, 98)]
    json_text = tmp_path / "other.json"
    json_text.write_text(json.dumps({"format": "something else"}))
    assert not is_model_file(json_text)


def test_load_errors(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        load_file(tmp_path / "gone.txt")
    with pytest.raises(CorpusError, match="is a folder"):
        load_file(tmp_path)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab \n\r", max_size=200), st.integers(min_value=1, max_value=40))
def test_large_text_lines_round_trip(text, piece_chars):
    large = LargeText(list(split_pieces(text, piece_chars)))
    assert large.text() == text
    lines = [large.line(i) for i in range(large.n_lines)]
    longest = max((len(line) for line in text.split("\n")), default=0)
    if piece_chars > longest:  # no line had to be cut
        assert lines == [line.rstrip("\r") for line in text.split("\n")]
