"""A corpus read in pieces: the pieces join to the file's text, are cut only where chunks end, and
count exactly as the whole text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import CorpusError, read_text
from tokviz.core.bpe.timeline import Training, TrainSettings, train
from tokviz.core.text.chunks import SAFE_BOUNDARY, count_chunks, counts_alike_in_pieces
from tokviz.core.text.corpus import read_text_pieces
from tokviz.core.text.split import parse_split

# letters (ASCII and not), line breaks, spaces, digits, astral characters: what the cuts depend on
TEXTS = st.text(st.sampled_from(["a", "Z", "é", "ж", "\n", "\r", " ", "7", "😀", ".", "\t"]), max_size=300)
# the same, with the places pieces are cut at ("Z\r\nZ", "a\nb") made likely
CUT_TEXTS = st.lists(st.sampled_from(["Za", "Z\r\nZ", "a\nb", " ж", "😀", "7.", "\t", "\r", "\n", "é"]),
                     max_size=80).map("".join)


def write(tmp_path, text: str | bytes):
    path = tmp_path / "corpus.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def cuts(pieces: list[str]) -> list[int]:
    out, pos = [], 0
    for p in pieces[:-1]:
        pos += len(p)
        out.append(pos)
    return out


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(TEXTS, CUT_TEXTS), size=st.integers(1, 40))
def test_pieces_join_to_the_text_and_are_cut_only_at_safe_boundaries(tmp_path_factory, text, size):
    path = write(tmp_path_factory.mktemp("p"), text)
    pieces = read_text_pieces(path, piece_bytes=size, allow_empty=True)
    assert "".join(pieces) == text
    assert all(pieces) or pieces == [""]
    for c in cuts(pieces):
        assert SAFE_BOUNDARY.match(text, c) is not None, (text, c)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(TEXTS, CUT_TEXTS), size=st.integers(1, 40),
       split=st.sampled_from(["gpt2", "gpt4", "o200k", "whitespace"]), specials=st.sampled_from([(), ("a\n",), ("Z\r",), ("7.",), ("a", "ж ")]))
def test_pieces_count_as_the_whole_text_wherever_that_is_claimed(tmp_path_factory, text, size, split, specials):
    path = write(tmp_path_factory.mktemp("c"), text)
    pieces = read_text_pieces(path, piece_bytes=size, allow_empty=True)
    splitter = parse_split(split)
    if counts_alike_in_pieces(split, specials):
        assert (list(count_chunks(pieces, splitter, specials=specials).items())
                == list(count_chunks([text], splitter, specials=specials).items()))


def test_a_long_file_comes_in_several_pieces(tmp_path):
    text = "".join(f"Line {i} of the corpus, with a word at its end\n" for i in range(5000)) + "😀 the end"
    pieces = read_text_pieces(write(tmp_path, text), piece_bytes=10_000)
    assert len(pieces) > 10
    assert "".join(pieces) == text
    assert max(map(len, pieces)) < 10_000 + 100  # cut soon after the size: every line ends a word


def test_a_file_without_a_safe_cut_is_one_piece(tmp_path):
    text = "1234 " * 10_000
    assert read_text_pieces(write(tmp_path, text), piece_bytes=100) == [text]


def test_bom_is_dropped_once(tmp_path):
    data = b"\xef\xbb\xbfab\ncd\nef\n\xef\xbb\xbfgh"
    assert "".join(read_text_pieces(write(tmp_path, data), piece_bytes=2)) == read_text(write(tmp_path, data))


@pytest.mark.parametrize("data", [
    b"word\nword\nword\ncaf\xe9 au lait",  # invalid UTF-8 in a later piece
    b"word\nword\nword\nab\x00cd",  # a NUL byte in a later piece
    b"",  # empty
])
def test_errors_read_as_the_whole_file_does(tmp_path, data):
    path = write(tmp_path, data)
    with pytest.raises(CorpusError) as whole:
        read_text(path)
    with pytest.raises(CorpusError) as pieces:
        read_text_pieces(path, piece_bytes=3)
    assert str(pieces.value) == str(whole.value)


def test_replacing_bad_bytes_gives_the_same_text(tmp_path):
    path = write(tmp_path, b"word\nword\nab\xe9\xff\nword\nx\xe2\x82")
    assert "".join(read_text_pieces(path, piece_bytes=2, errors="replace")) == read_text(path, errors="replace")


def test_which_splits_count_alike_in_pieces():
    assert all(counts_alike_in_pieces(s) for s in ("gpt2", "gpt4", "o200k", "whitespace"))
    assert not counts_alike_in_pieces("none")
    assert not counts_alike_in_pieces("regex:[^\\n]+")
    assert not counts_alike_in_pieces("gpt4", ["<|end|>\nUser"])
    assert not counts_alike_in_pieces("gpt4", ["b\r"])  # "ab|\r\ncd": it would span the cut
    assert counts_alike_in_pieces("gpt4", ["<|endoftext|>"])


def test_a_count_of_the_callers_own_leaves_the_texts_for_prepare():
    """Only `prepare` hands a BPE run's texts over to be let go as they are counted."""
    texts = ["low lower lowest\n", "newer wider\n"]
    run = Training(TrainSettings(merges=5), texts=texts)
    assert run.count() == count_chunks(texts, parse_split(run.settings.split))
    run.prepare()  # counts them again
    assert [s.pair for s in run.steps()] == [s.pair for s in train(TrainSettings(merges=5), texts=texts).steps]
    assert run.texts == []  # let go once counted


@pytest.mark.parametrize("where", ["missing.txt", "a-folder"])
def test_a_path_that_is_no_file_is_refused_as_read_text_refuses_it(tmp_path, where):
    (tmp_path / "a-folder").mkdir()
    with pytest.raises(CorpusError) as whole:
        read_text(tmp_path / where)
    with pytest.raises(CorpusError) as pieces:
        read_text_pieces(tmp_path / where)
    assert str(pieces.value) == str(whole.value)
