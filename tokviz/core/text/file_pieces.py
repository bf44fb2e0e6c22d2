"""A corpus file as pieces read only when they are counted.

`file_pieces` cuts a UTF-8 file at safe cuts (`corpus.cut_file`: the pieces count exactly as the
whole text), checks that every piece decodes, and keeps only where each starts and ends: a
`FilePiece` is read and decoded by whoever counts it (`tokviz.core.text.chunks`). The corpus is
then never in memory whole, and a forked counting child reads its own pieces instead of
inheriting them: a child forked from a process that holds the text has every page of it in its
resident memory too, so the two processes of ``tokviz train`` held the text twice.

What this leaves out: the cut rule and decoding (`tokviz.core.text.corpus`), counting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tokviz.core.errors import CorpusError
from tokviz.core.io.safe_files import open_regular

from .corpus import cut_file, decode_utf8

COUNT_PIECE_BYTES = 2 << 20  # a piece a counting process holds at once: about this many bytes


def _version(st: os.stat_result) -> tuple[int, int, int, int]:
    """What tells one state of a file from another: its device, inode, size and change time."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


@dataclass(frozen=True, slots=True)
class FilePiece:
    """Bytes ``[start, end)`` of the UTF-8 text file `path`, read when counted (`read`), as the
    file was when it was cut (`version`: None, any state). ``len()`` is its length in bytes (a
    counting progress measures pieces by it)."""

    path: str
    start: int
    end: int
    errors: str = "strict"
    hint: str = ""
    version: tuple[int, int, int, int] | None = None

    def __len__(self) -> int:
        return self.end - self.start

    def read(self) -> str:
        """The piece's text (`CorpusError` where the file can no longer be read as it was). The
        path is opened as the scan opened it (`open_regular`: an ordinary file, never blocking),
        so a path swapped for a pipe or a device in between is refused, not waited on."""
        changed = CorpusError(f"{self.path}: the file changed while it was being read; try again")
        fd = open_regular(self.path, CorpusError)
        try:
            if self.version is not None and _version(os.fstat(fd)) != self.version:
                raise changed  # written to, or replaced, since it was cut: its pieces no longer fit it
            parts, at, left = [], self.start, len(self)
            while left > 0:
                data = os.pread(fd, left, at)
                if not data:
                    raise changed
                parts.append(data)
                at += len(data)
                left -= len(data)
        except OSError as exc:
            raise CorpusError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        finally:
            os.close(fd)
        data = b"".join(parts)
        return decode_utf8(data, name=self.path, errors=self.errors, hint=self.hint, offset=self.start)


def file_pieces(path: str | os.PathLike, *, errors: str = "strict", hint: str = "",
                piece_bytes: int | None = None) -> list[FilePiece]:
    """The file at `path` as `FilePiece`s of about `piece_bytes` (default `COUNT_PIECE_BYTES`),
    each checked to decode (the errors `read_text` gives, and now: a bad byte is found before any
    counting starts); an empty file is an error. ``"".join(p.read() for p in pieces) ==
    read_text(path)``."""
    name = str(path)
    before = _stat(name)
    cuts: list[tuple[int, int]] = []
    done = 0
    has_text = False
    for data in cut_file(path, COUNT_PIECE_BYTES if piece_bytes is None else piece_bytes):
        text = decode_utf8(data, name=name, errors=errors, hint=hint, offset=done)
        has_text = has_text or bool(text)
        if text:  # (a BOM alone is no text)
            cuts.append((done, done + len(data)))
        done += len(data)
        del data, text
    if not has_text:
        raise CorpusError(f"{path}: file is empty")
    if _stat(name) != before:
        raise CorpusError(f"{path}: the file changed while it was being read; try again")
    return [FilePiece(name, a, b, errors, hint, before) for a, b in cuts]


def _stat(path: str) -> tuple[int, int, int, int]:
    """`_version` of the ordinary file at `path` (refused as reading it refuses anything else)."""
    fd = open_regular(path, CorpusError)
    try:
        return _version(os.fstat(fd))
    finally:
        os.close(fd)
