"""A corpus read in pieces (`file_pieces`, read when counted): the pieces join to the file's text,
are cut only where chunks end, and count exactly as the whole text, in one process or several."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import CorpusError, read_text
from tokviz.core.bpe.timeline import Training, TrainSettings, train
from tokviz.core.text.chunks import SAFE_BOUNDARY, count_chunks, counts_alike_in_pieces
from tokviz.core.text.file_pieces import FilePiece, file_pieces
from tokviz.core.text.split import parse_split

# letters (ASCII and not), line breaks, spaces, digits, astral characters: what the cuts depend on
TEXTS = st.text(st.sampled_from(["a", "Z", "é", "ж", "\n", "\r", " ", "7", "😀", ".", "\t"]), max_size=300)
# the same, with the places pieces are cut at ("Z\r\nZ", "a\nb") made likely
CUT_TEXTS = st.lists(st.sampled_from(["Za", "Z\r\nZ", "a\nb", " ж", "😀", "7.", "\t", "\r", "\n", "é"]),
                     max_size=80).map("".join)


def read_text_pieces(path, *, piece_bytes: int | None = None, allow_empty: bool = False,
                     errors: str = "strict") -> list[str]:
    """The texts of `file_pieces` (an empty file, when allowed: one empty piece)."""
    try:
        return [p.read() for p in file_pieces(path, piece_bytes=piece_bytes, errors=errors)]
    except CorpusError as exc:
        if allow_empty and str(exc).endswith("file is empty"):
            return [""]
        raise


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
       split=st.sampled_from(["gpt2", "gpt4", "o200k", "whitespace"]),
       specials=st.sampled_from([(), ("a\n",), ("Z\r",), ("7.",), ("a", "ж ")]))
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


def test_file_pieces_hold_no_text_and_read_their_own_bytes(tmp_path):
    text = "".join(f"Line {i} of the corpus ends in a word\n" for i in range(3000)) + "é😀 the end"
    path = write(tmp_path, "\ufeff" + text)  # a BOM: dropped from the first piece only
    pieces = file_pieces(path, piece_bytes=5_000)
    assert len(pieces) > 10 and all(isinstance(p, FilePiece) for p in pieces)
    assert [p.start for p in pieces[1:]] == [p.end for p in pieces[:-1]]  # back to back
    assert sum(map(len, pieces)) == path.stat().st_size
    assert "".join(p.read() for p in pieces) == text


@pytest.mark.parametrize("change", ["shorter", "same size", "longer"])
def test_a_piece_of_a_file_that_changed_is_refused(tmp_path, change):
    """Cut, then written to: whether it shrank, grew or kept its size, its pieces no longer fit
    it (a piece would start inside a character, or count another text than was cut)."""
    path = write(tmp_path, "word\nword\n" * 1000)
    pieces = file_pieces(path, piece_bytes=100)
    before = path.stat()
    new = {"shorter": b"short", "same size": b"WORD\nWORD\n" * 1000, "longer": b"word\nword\n" * 1001}[change]
    path.write_bytes(new)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))  # (a coarse clock may not move)
    with pytest.raises(CorpusError, match="changed while it was being read"):
        pieces[0].read()
    assert pieces[0].path == str(path)


@pytest.mark.parametrize("processes", [1, 2])
def test_pieces_counted_by_several_processes_count_as_the_whole_text(tmp_path, monkeypatch, processes):
    """A run of pieces is shared out whole among the processes; each forked child reads its own."""
    from tokviz.core.text import chunks

    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1)
    text = "".join(f"Row {i} holds a word\nnext {i % 7} ünï\r\nend. 😀 {i * 31}\n" for i in range(2000))
    path = write(tmp_path, text)
    pieces = file_pieces(path, piece_bytes=3_000)
    assert len(pieces) > 20
    seen = []
    splitter = parse_split("gpt4")
    got = count_chunks(pieces, splitter, processes=processes, specials=("end.",),
                       progress=lambda done, total: seen.append((done, total)))
    assert list(got.items()) == list(count_chunks([text], splitter, specials=("end.",)).items())
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)


def test_pieces_of_several_files_count_in_order_in_two_processes(tmp_path, monkeypatch):
    from tokviz.core.text import chunks

    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1)
    texts = ["".join(f"first {i} file line\n" for i in range(900)), "".join(f"Second {i} ünï\n" for i in range(700))]
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"f{i}.txt")
        paths[-1].write_text(text, encoding="utf-8")
    pieces = [p for path in paths for p in file_pieces(path, piece_bytes=2_000)]
    splitter = parse_split("gpt4")
    assert list(count_chunks(pieces, splitter, processes=2).items()) == list(count_chunks(texts, splitter).items())


def test_a_piece_a_counting_child_cannot_read_is_one_line(tmp_path, monkeypatch):
    from tokviz.core.text import chunks

    monkeypatch.setattr(chunks, "PARALLEL_MIN_CHARS", 1)
    path = write(tmp_path, "word\nword\n" * 2000)
    pieces = file_pieces(path, piece_bytes=1_000)
    path.write_bytes(path.read_bytes()[:12_000])  # cut short between reading the cuts and counting:
    with pytest.raises(CorpusError) as err:  # this process's pieces read, the child's do not
        count_chunks(pieces, parse_split("gpt4"), processes=2)
    assert str(err.value) == f"{path}: the file changed while it was being read; try again"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_piece_whose_file_became_a_pipe_is_refused_not_waited_on(tmp_path):
    path = write(tmp_path, "word\nword\n" * 200)
    pieces = file_pieces(path, piece_bytes=100)
    path.unlink()
    os.mkfifo(path)  # nothing ever writes to it: a plain open would wait for ever
    with pytest.raises(CorpusError, match="not an ordinary file"):
        pieces[0].read()
