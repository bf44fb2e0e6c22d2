"""Corpus input: files read as bytes and decoded as UTF-8, word-frequency tables."""

from __future__ import annotations

import pytest

from tokviz.core import CorpusError, decode_utf8, looks_like_word_counts, parse_word_counts, read_text


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- reading files ------------------------------------------------------------------------------


def test_utf8_file_is_read_exactly(tmp_path):
    text = "Grüße, 世界 😀\n"
    assert read_text(write(tmp_path, "a.txt", text.encode("utf-8"))) == text


def test_bom_is_dropped(tmp_path):
    path = write(tmp_path, "bom.txt", b"\xef\xbb\xbfhello")
    assert read_text(path) == "hello"


def test_line_endings_are_kept_byte_for_byte(tmp_path):
    # Read as bytes: no newline translation, so CRLF and lone CR survive.
    path = write(tmp_path, "crlf.txt", b"a\r\nb\rc\n")
    assert read_text(path) == "a\r\nb\rc\n"


@pytest.mark.parametrize(
    ("data", "byte", "offset"),
    [
        (b"caf\xe9 au lait", 0xE9, 3),  # Latin-1
        (b"ok\xff", 0xFF, 2),
        (b"ab\xe2\x82", 0xE2, 2),  # truncated 3-byte sequence at the end
        (b"\xef\xbb\xbfab\x80", 0x80, 5),  # offset counts the BOM: it is a file offset
        (b"\xc0\xaf", 0xC0, 0),  # overlong encoding
    ],
)
def test_not_utf8_is_refused_with_name_and_first_bad_offset(tmp_path, data, byte, offset):
    path = write(tmp_path, "latin.txt", data)
    with pytest.raises(CorpusError) as info:
        read_text(path)
    message = str(info.value)
    assert str(path) in message
    assert f"0x{byte:02X}" in message
    assert f"offset {offset}" in message
    assert message.endswith("; convert it to UTF-8 first")  # core names no command-line option
    assert "\n" not in message
    with pytest.raises(CorpusError, match="; use --encoding-errors replace to read it anyway$"):
        read_text(path, hint="use --encoding-errors replace to read it anyway")  # the caller's own option


def test_encoding_errors_replace_reads_anyway(tmp_path):
    path = write(tmp_path, "latin.txt", b"caf\xe9 ok")
    assert read_text(path, errors="replace") == "caf\ufffd ok"


def test_unknown_encoding_errors_mode():
    with pytest.raises(CorpusError, match="unknown encoding-errors mode 'ignore'"):
        decode_utf8(b"abc", errors="ignore")


def test_binary_file_is_refused(tmp_path):
    path = write(tmp_path, "img.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(CorpusError) as info:
        read_text(path)
    assert str(info.value) == f"{path}: looks like a binary file (NUL byte at offset 8), not text"


def test_utf16_file_is_refused_as_binary(tmp_path):
    path = write(tmp_path, "u16.txt", "hi".encode("utf-16-le"))
    with pytest.raises(CorpusError, match="binary file"):
        read_text(path)


def test_binary_is_refused_even_when_replacing(tmp_path):
    path = write(tmp_path, "b.bin", b"abc\x00def")
    with pytest.raises(CorpusError, match="NUL byte at offset 3"):
        read_text(path, errors="replace")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.txt"
    with pytest.raises(CorpusError) as info:
        read_text(path)
    assert str(info.value) == f"{path}: no such file"


def test_folder_is_not_a_file(tmp_path):
    with pytest.raises(CorpusError) as info:
        read_text(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a folder, not a file"


def test_empty_file_is_an_error_unless_allowed(tmp_path):
    path = write(tmp_path, "empty.txt", b"")
    with pytest.raises(CorpusError) as info:
        read_text(path)
    assert str(info.value) == f"{path}: file is empty"
    assert read_text(path, allow_empty=True) == ""
    # a file holding only a BOM is empty too
    bom_only = write(tmp_path, "bom.txt", b"\xef\xbb\xbf")
    with pytest.raises(CorpusError, match="file is empty"):
        read_text(bom_only)


def test_decode_utf8_names_the_source():
    with pytest.raises(CorpusError, match=r"^<stdin>: not valid UTF-8 \(first bad byte 0xFE at offset 1\)"):
        decode_utf8(b"a\xfe", name="<stdin>")


# -- word-frequency tables ----------------------------------------------------------------------


def test_word_counts_space_and_tab_separated():
    table = parse_word_counts("low 5\nlower\t2\n\nlowest   1  \r\n")
    assert table == {"low": 5, "lower": 2, "lowest": 1}
    assert list(table) == ["low", "lower", "lowest"]


def test_word_counts_repeated_words_are_summed_in_first_order():
    table = parse_word_counts("b 1\na 2\nb 3\n")
    assert list(table.items()) == [("b", 4), ("a", 2)]


def test_word_counts_tab_keeps_spaces_inside_the_word():
    assert parse_word_counts("new york\t7\n") == {"new york": 7}
    assert parse_word_counts(" x\t3\n") == {" x": 3}  # tab tables keep leading space
    assert parse_word_counts("hello 12\t5\n") == {"hello 12": 5}


def test_word_counts_unicode_words():
    assert parse_word_counts("naïve 3\n日本 4\n") == {"naïve": 3, "日本": 4}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("low 5\nlower two\n", "t.txt:2: expected 'word count' or 'word<TAB>count', got 'lower two'"),
        ("justaword\n", "t.txt:1: expected"),
        ("minus -3\n", "t.txt:1: expected"),
        ("\n\n  \n", "t.txt: word-frequency table has no entries"),
    ],
)
def test_word_counts_errors(text, message):
    with pytest.raises(CorpusError) as info:
        parse_word_counts(text, name="t.txt")
    assert str(info.value).startswith(message)


def test_looks_like_word_counts():
    assert looks_like_word_counts("the 50\nun 20\nable\t25\n")
    assert not looks_like_word_counts("the quick brown fox 3\n")
    assert not looks_like_word_counts("To be, or not to be\n")
    assert not looks_like_word_counts("\n\n")
