"""Corpus input: reading text files safely and parsing word-frequency tables.

Files are read as bytes and decoded as UTF-8 (a BOM is allowed and dropped). Anything that is not
text is refused with a message naming the file and what is wrong. Splitting text into chunks is
`tokviz.core.text.split`'s job; counting chunks is `tokviz.core.text.chunks`'.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from tokviz.core.errors import CorpusError
from tokviz.core.io.safe_files import MAX_TEXT_BYTES, read_file_blocks, read_file_bytes, read_head

UTF8_BOM = b"\xef\xbb\xbf"
ENCODING_ERRORS = ("strict", "replace")

# Where a file may be cut into pieces that count like the whole: after an ASCII letter followed by a
# line break and a letter (`tokviz.core.text.chunks.SAFE_BOUNDARY`'s cuts, on bytes; a cut at an
# ASCII byte never splits a UTF-8 sequence, so the pieces decode as the whole does).
_SAFE_CUT = re.compile(rb"(?<=[A-Za-z])(?=\r?\n[A-Za-z])")
_WORD_COUNT_LINE = re.compile(r"^(?P<word>.+?)(?:\t|[ ]+)(?P<count>[0-9]+)[ \t]*$")


MAX_TABLE_UNITS = 2**62  # characters a word-count table may stand for (64-bit counts, with room)

def decode_utf8(data: bytes, *, name: str = "<text>", errors: str = "strict", hint: str = "",
                offset: int = 0) -> str:
    """Decode `data` as UTF-8 (BOM allowed). Refuse NUL bytes and invalid UTF-8 unless replacing;
    the message ends with `hint`, what the caller offers to do about it (an option it has).
    `offset`: where `data` starts in its file (a part read on its own: no BOM past the start,
    offsets in messages counted from the file's start).

    >>> decode_utf8(b"\\xef\\xbb\\xbfhi")
    'hi'
    """
    if errors not in ENCODING_ERRORS:
        raise CorpusError(f"unknown encoding-errors mode {errors!r}; use 'strict' or 'replace'")
    skip = len(UTF8_BOM) if offset == 0 and data.startswith(UTF8_BOM) else 0
    nul = data.find(b"\x00", skip)
    if nul >= 0:
        raise CorpusError(f"{name}: looks like a binary file (NUL byte at offset {offset + nul}), not text")
    try:
        return data[skip:].decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{name}: not valid UTF-8 (first bad byte 0x{data[skip + exc.start]:02X} at offset "
            f"{offset + skip + exc.start}); {hint or 'convert it to UTF-8 first'}"
        ) from None


def read_bytes(path: str | os.PathLike) -> bytes:
    """Read a whole file, turning OS errors into a one-line `CorpusError`."""
    return read_file_bytes(path, limit=MAX_TEXT_BYTES, error=CorpusError)


def read_text(path: str | os.PathLike, *, errors: str = "strict", allow_empty: bool = False, hint: str = "") -> str:
    """Read a UTF-8 text file; an empty file is an error unless `allow_empty`."""
    data = read_bytes(path)
    text = decode_utf8(data, name=str(path), errors=errors, hint=hint)
    if not text and not allow_empty:
        raise CorpusError(f"{path}: file is empty")
    return text


def cut_file(path: str | os.PathLike, piece_bytes: int) -> Iterator[bytes]:
    """The bytes of the file at `path` in pieces of about `piece_bytes`, cut only at safe cuts
    (`_SAFE_CUT`; a piece runs on until one comes), one piece in memory at a time (`CorpusError`
    where it cannot be read). A cut is at an ASCII byte, so each piece decodes as its part of
    the whole does (`tokviz.core.text.file_pieces`)."""
    size = max(1, piece_bytes)
    buf = bytearray()  # bytes read and not handed out yet
    scanned = 0  # `buf` has no safe cut past `size` before this (a file without cuts is scanned once)
    for block in read_file_blocks(path, limit=MAX_TEXT_BYTES, error=CorpusError):
        buf += block
        while len(buf) > size:
            found = _SAFE_CUT.search(buf, max(size, scanned - 8))  # the first cut past the piece's size
            if found is None:
                scanned = len(buf)
                break
            end = found.start()
            with memoryview(buf) as view:
                data = bytes(view[:end])  # one copy (a slice of the bytearray would be another)
            del buf[:end]
            scanned = 0
            yield data
            del data
    if buf:
        yield bytes(buf)


def read_text_head(path: str | os.PathLike, max_chars: int, *, errors: str = "strict") -> str:
    """The first `max_chars` characters of a UTF-8 text file, reading only the bytes they can take
    (4 per character at most): a ranking over a corpus's start need not read 30 MB to use 2 MB.
    A character cut at the end of what was read is dropped, not refused."""
    data = read_head(path, 4 * max_chars + 4, CorpusError)
    end = len(data)
    if len(data) > 4 * max_chars:  # the file goes on: back off to a character's first byte
        while end > 0 and (data[end - 1] & 0xC0) == 0x80:
            end -= 1
        end = max(0, end - 1)
    return decode_utf8(data[:end], name=str(path), errors=errors)[:max_chars]


def parse_word_counts(text: str, *, name: str = "<table>") -> dict[str, int]:
    """Parse lines ``word count`` or ``word<TAB>count`` into an ordered {word: count} table.

    Blank lines are skipped, repeated words are summed, order is first appearance. The table may
    stand for at most `MAX_TABLE_UNITS` characters (count times length, summed): training counts
    in 64-bit integers, and a bigger table would wrap them silently.

    >>> parse_word_counts("low 5\\nlower\\t2\\n")
    {'low': 5, 'lower': 2}
    """
    table: dict[str, int] = {}
    units = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _WORD_COUNT_LINE.match(line.rstrip(" \r"))  # tab tables keep leading spaces
        if m is None:
            raise CorpusError(
                f"{name}:{lineno}: expected 'word count' or 'word<TAB>count', got {line[:40]!r}"
            )
        word, count = m.group("word"), int(m.group("count"))
        if "\t" not in line:
            word = word.strip()
        units += count * max(1, len(word) + 1)
        if units > MAX_TABLE_UNITS:
            raise CorpusError(f"{name}:{lineno}: the counts add up to more text than tokviz can count "
                              f"({MAX_TABLE_UNITS:,} characters); scale the counts down")
        table[word] = table.get(word, 0) + count
    if not table:
        raise CorpusError(f"{name}: word-frequency table has no entries")
    return table


def looks_like_word_counts(text: str, *, sample_lines: int = 200) -> bool:
    """Guess whether `text` is a word-frequency table (every sampled line is ``word count``)."""
    seen = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        if not _WORD_COUNT_LINE.match(line.strip(" \r")) or len(line.split()) > 2 and "\t" not in line:
            return False
        seen += 1
        if seen >= sample_lines:
            break
    return seen > 0
