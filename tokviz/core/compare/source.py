"""The text a comparison measures, read in pieces of whole lines: a corpus is never held whole.

`pieces()` gives the text in order, each piece ending with a line break (``\\n``) or at the
text's end, about `PIECE_CHARS` characters (`PIECE_BYTES` bytes from a file) each, a line longer
than that being one piece; joined, the pieces are the text, and each pass reads it again.
`StringSource` cuts a text in memory; `FileSource` reads a UTF-8 file a block at a time with the
checks of `tokviz.core.text.corpus.read_text` (only ordinary files, a BOM dropped, NUL bytes and
invalid UTF-8 refused with the same one-line `CorpusError` and file offsets), so measuring a
220 MB corpus holds a few megabytes of it at a time. A ``\\n`` byte is never inside a UTF-8
sequence, so a file's blocks are cut there and decoded on their own.

What this leaves out: encoding the pieces (`tokens.encoded_pieces`), documents (`documents`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from tokviz.core.errors import CorpusError
from tokviz.core.io.safe_files import open_regular
from tokviz.core.text.corpus import decode_utf8

PIECE_CHARS = 1 << 21  # a piece in memory: big enough to encode in two processes (`processes.halves`)
PIECE_BYTES = 1 << 22  # a block of a file; with its UTF-8 at 1-4 bytes a character, about as many
# the piece a comparison measures (`run`: one process a model, several models at once): one model
# on gutenberg30, 803 -> 354 MB and 9.3 -> 8.3 s; udhr2 455 -> 231 MB
SIDE_PIECE_SIZE = 1 << 20


class TextSource(Protocol):
    def pieces(self) -> Iterator[str]: ...

    def smaller(self, size: int) -> TextSource:
        """The same text in pieces of at most about `size` (characters of a string, bytes of a
        file), or smaller ones already asked for."""
        ...


class StringSource:
    """A text in memory, in pieces of whole lines.

    >>> [len(p) for p in StringSource("ab\\n" * 4, piece_chars=5).pieces()]
    [6, 6]
    """

    def __init__(self, text: str, *, piece_chars: int | None = None) -> None:
        self.text, self.piece_chars = text, piece_chars

    def smaller(self, size: int) -> StringSource:
        """The text in pieces of at most about `size` characters (or smaller ones already asked for).

        >>> [len(p) for p in StringSource("ab\\n" * 4).smaller(5).pieces()]
        [6, 6]
        """
        return StringSource(self.text, piece_chars=min(size, self.piece_chars or PIECE_CHARS))

    def pieces(self) -> Iterator[str]:
        text, n, start = self.text, len(self.text), 0
        while start < n:
            nl = text.find("\n", start + (self.piece_chars or PIECE_CHARS) - 1)
            end = n if nl < 0 else nl + 1
            yield text if start == 0 and end == n else text[start:end]
            start = end


class FileSource:
    """A UTF-8 file, in pieces of whole lines. Opening it checks it is an ordinary file; reading
    checks its bytes (`CorpusError`, one line, naming the file)."""

    def __init__(self, path: str | os.PathLike, *, piece_bytes: int | None = None) -> None:
        self.path, self.piece_bytes = Path(path), piece_bytes
        os.close(open_regular(self.path, CorpusError))

    def smaller(self, size: int) -> FileSource:
        return FileSource(self.path, piece_bytes=min(size, self.piece_bytes or PIECE_BYTES))

    def pieces(self) -> Iterator[str]:
        fd = open_regular(self.path, CorpusError)
        try:
            offset, parts = 0, []  # file offset of `parts`, the blocks read since the last line break
            while block := self._read(fd):
                nl = block.rfind(b"\n")
                if nl < 0:  # inside a long line: read on to its end
                    parts.append(block)
                    continue
                parts.append(block[: nl + 1])
                data = b"".join(parts)
                yield decode_utf8(data, name=str(self.path), offset=offset)
                offset += len(data)
                parts = [block[nl + 1:]]
            if any(parts):
                yield decode_utf8(b"".join(parts), name=str(self.path), offset=offset)
        finally:
            os.close(fd)

    def _read(self, fd: int) -> bytes:
        try:
            return os.read(fd, self.piece_bytes or PIECE_BYTES)
        except OSError as exc:
            raise CorpusError(f"{self.path}: cannot read ({exc.strerror or exc})") from None

    def check(self) -> int:
        """Read the whole file once: its length in characters, or the `CorpusError` reading it
        would give later (so a caller can refuse a bad file before measuring anything)."""
        return sum(map(len, self.pieces()))


def as_source(text: str | TextSource) -> TextSource:
    """`text` as a source (a string is cut in memory)."""
    return StringSource(text) if isinstance(text, str) else text
