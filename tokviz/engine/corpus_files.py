"""Reading corpus and model files for the app, and corpus statistics, in small slices.

Everything here runs on a worker thread and may be handed a 30 MB file, so no step holds the GIL
for long: bytes are decoded 1 MiB at a time, statistics are gathered slice by slice, and
`should_stop` is checked between slices. Messages say what is wrong and what to do.

Pure Python (no Qt). What it leaves out: threads (`tokviz.engine.tasks`) and the editor.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import regex

from tokviz.core import Cancelled, CorpusError, Timeline, TokvizError, looks_like_word_counts
from tokviz.core.model_files import MODEL_FORMATS, load_model
from tokviz.core.io.safe_files import read_head
from tokviz.core.text.corpus import UTF8_BOM, parse_word_counts, read_bytes

from .large_text import SAMPLE_CHARS, LargeText

EDIT_LIMIT_BYTES = 2 * 1024 * 1024  # larger files open in the read-only view
SLICE = 1 << 18  # characters (or bytes) handled per step: each step holds the GIL for ~5 ms
SNIFF_CHARS = 1 << 16  # how much text the word-frequency-table guess looks at
MODEL_SNIFF_BYTES = 512

ShouldStop = Callable[[], bool]
Progress = Callable[[str, float], None]  # (what, fraction 0..1)


class NotUtf8Error(CorpusError):
    """The file is text but not valid UTF-8; it can still be opened with replacement characters."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class CorpusStats:
    """Live statistics of a corpus text. Table figures are set in word-frequency mode."""

    chars: int = 0
    bytes: int = 0
    lines: int = 0
    words: int = 0
    unique_words: int = 0
    distinct_chars: int = 0
    table_entries: int | None = None
    table_total: int | None = None
    table_error: str | None = None


@dataclass(frozen=True)
class LoadedCorpus:
    """A text file read for the corpus panel: a string to edit, or a `LargeText` to view."""

    path: Path
    text: str | None  # None for a large file (see `large`)
    n_bytes: int
    stats: CorpusStats
    word_counts: bool  # looks like a ``word count`` table
    replaced: bool = False  # invalid UTF-8 was replaced with U+FFFD
    large: LargeText | None = field(default=None, repr=False)  # set for the read-only view
    crlf: bool = False  # the text has Windows line endings

    @property
    def read_only(self) -> bool:
        return self.large is not None


@dataclass(frozen=True)
class LoadedModel:
    path: Path
    timeline: Timeline


def _never() -> bool:
    return False


def _check(should_stop: ShouldStop) -> None:
    if should_stop():
        raise Cancelled()


def is_model_file(path: str | os.PathLike) -> bool:
    """True when the file starts like a saved tokviz model (JSON with the format header)."""
    try:
        head = read_head(path, MODEL_SNIFF_BYTES)  # never blocks: a FIFO is refused, not opened
    except TokvizError:
        return False
    return head.lstrip().startswith(b"{") and any(b'"%s"' % f.encode() in head for f in MODEL_FORMATS)


def _decoded_slices(
    data: bytes, *, name: str, errors: str, should_stop: ShouldStop, progress: Progress | None
):
    """Yield the UTF-8 text of `data` (BOM dropped) a slice at a time; refuse NUL bytes."""
    start = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    nul = data.find(b"\x00", start)
    if nul >= 0:
        raise CorpusError(
            f"{name} looks like a binary file (NUL byte at offset {nul}), not text. "
            "Open a plain-text (UTF-8) file instead."
        )
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    total = max(1, len(data) - start)
    for pos in range(start, len(data), SLICE):
        _check(should_stop)
        pending = len(decoder.getstate()[0])  # bytes of a character cut by the previous slice
        try:
            yield decoder.decode(data[pos : pos + SLICE], final=pos + SLICE >= len(data))
        except UnicodeDecodeError as exc:
            offset = pos - pending + exc.start
            bad = data[offset] if offset < len(data) else 0
            raise NotUtf8Error(
                f"{name} is not valid UTF-8 (first bad byte 0x{bad:02X} at offset {offset}). "
                "tokviz reads UTF-8 text: convert the file (for example with iconv), or open it "
                "with bad bytes replaced.",
                offset,
            ) from None
        if progress is not None:
            progress("Decoding", min(1.0, (pos + SLICE - start) / total))


def decode_in_slices(
    data: bytes,
    *,
    name: str,
    errors: str = "strict",
    should_stop: ShouldStop = _never,
    progress: Progress | None = None,
) -> str:
    """Decode UTF-8 (BOM dropped) a slice at a time. Refuses NUL bytes (binary files).

    >>> decode_in_slices("héllo".encode(), name="x")
    'héllo'
    """
    return "".join(_decoded_slices(data, name=name, errors=errors, should_stop=should_stop, progress=progress))


def decode_pieces(
    data: bytes,
    *,
    name: str,
    errors: str = "strict",
    should_stop: ShouldStop = _never,
    progress: Progress | None = None,
) -> list[str]:
    """Decode into line-aligned pieces of about `SLICE` characters (for `LargeText`), never
    building the whole text as one string.

    >>> decode_pieces(b"ab\\ncd", name="x")
    ['ab\\n', 'cd']
    """
    pieces: list[str] = []
    carry = ""
    for part in _decoded_slices(data, name=name, errors=errors, should_stop=should_stop, progress=progress):
        part = carry + part
        cut = part.rfind("\n")
        if cut < 0 and len(part) < 4 * SLICE:
            carry = part  # keep going until a line ends (or the piece gets too long)
            continue
        end = cut + 1 if cut >= 0 else len(part)
        pieces.append(part[:end])
        carry = part[end:]
    if carry:
        pieces.append(carry)
    return pieces


_SPACE = regex.compile(r"\s")


def _slices_at_spaces(text: str, size: int = SLICE) -> list[tuple[int, int]]:
    """Cut `text` into pieces of about `size` characters, each cut just after a whitespace."""
    out = []
    pos = 0
    n = len(text)
    while n - pos > size:
        m = _SPACE.search(text, pos + size)
        if m is None:
            break
        out.append((pos, m.end()))
        pos = m.end()
    out.append((pos, n))
    return out


def corpus_stats(
    text: str | LargeText,
    *,
    word_counts: bool = False,
    should_stop: ShouldStop = _never,
    progress: Progress | None = None,
    name: str = "table",
) -> CorpusStats:
    """Characters, UTF-8 bytes, lines, whitespace-separated words, unique words, distinct chars.

    In word-frequency mode, also the number of table entries and the sum of their counts (or the
    parse error, e.g. ``table:3: expected 'word count'``).

    >>> s = corpus_stats("low low\\nlower\\n")
    >>> (s.chars, s.bytes, s.lines, s.words, s.unique_words, s.distinct_chars)
    (14, 14, 2, 3, 2, 7)
    """
    if isinstance(text, LargeText):
        pieces = text.pieces  # line-aligned: no word is cut
        n_chars = text.n_chars
    else:
        pieces = [text[a:b] for a, b in _slices_at_spaces(text)] if len(text) > SLICE else [text]
        n_chars = len(text)
    n_bytes = words = lines = 0
    uniq: set[str] = set()
    chars: set[str] = set()
    for i, piece in enumerate(pieces):
        _check(should_stop)
        n_bytes += len(piece.encode("utf-8", "surrogatepass"))
        lines += piece.count("\n")
        split = piece.split()
        words += len(split)
        uniq.update(split)
        chars.update(piece)
        if progress is not None:
            progress("Counting", (i + 1) / len(pieces))
    if pieces and pieces[-1] and not pieces[-1].endswith("\n"):
        lines += 1
    entries = total = error = None
    if word_counts:
        try:
            table = _parse_table(pieces, name=name, should_stop=should_stop)
        except CorpusError as exc:
            error = str(exc)
        else:
            entries, total = len(table), sum(table.values())
    return CorpusStats(n_chars, n_bytes, lines, words, len(uniq), len(chars), entries, total, error)


def _parse_table(pieces: list[str], *, name: str, should_stop: ShouldStop) -> dict[str, int]:
    """`parse_word_counts` over line-aligned pieces (line numbers in errors stay global)."""
    if len(pieces) == 1:
        return parse_word_counts(pieces[0], name=name)
    table: dict[str, int] = {}
    first_line = 0
    for piece in pieces:
        _check(should_stop)
        try:
            part = parse_word_counts(piece, name=name) if piece.strip() else {}
        except CorpusError as exc:
            m = regex.match(rf"{regex.escape(name)}:(\d+):", str(exc))
            if m is None:
                raise
            raise CorpusError(f"{name}:{first_line + int(m.group(1))}:{str(exc)[m.end():]}") from None
        for word, n in part.items():
            table[word] = table.get(word, 0) + n
        first_line += piece.count("\n")
    if not table:
        raise CorpusError(f"{name}: word-frequency table has no entries")
    return table


def head_lines(text: str, n: int) -> str:
    """The whole lines within the first `n` characters of `text` (at least one line).

    >>> head_lines("ab\\ncd\\nef", 6)
    'ab\\ncd\\n'
    """
    if len(text) <= n:
        return text
    cut = text.rfind("\n", 0, n)
    return text[: cut + 1] if cut >= 0 else text[:n]


def load_file(
    path: str | os.PathLike,
    *,
    errors: str = "strict",
    edit_limit: int = EDIT_LIMIT_BYTES,
    should_stop: ShouldStop = _never,
    progress: Progress | None = None,
) -> LoadedCorpus | LoadedModel:
    """Read a corpus (text) or a saved model (detected from its header).

    Files over `edit_limit` bytes come back as a `LargeText` for the read-only view."""
    path = Path(path)
    if is_model_file(path):
        return LoadedModel(path, load_model(path))  # BPE, WordPiece or Unigram
    if progress is not None:
        progress("Reading", 0.0)
    data = read_bytes(path)
    _check(should_stop)
    n_bytes = len(data) - (len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0)
    kw = dict(name=path.name, errors=errors, should_stop=should_stop, progress=progress)
    if n_bytes <= edit_limit:
        text = decode_in_slices(data, **kw)
        del data
        head = head_lines(text, SNIFF_CHARS)
        guess = looks_like_word_counts(head)
        stats = corpus_stats(text, word_counts=guess, should_stop=should_stop, progress=progress, name=path.name)
        return LoadedCorpus(path, text, n_bytes, stats, guess, errors != "strict", None, "\r\n" in head)
    pieces = decode_pieces(data, **kw)
    del data
    large = LargeText(pieces, should_stop=should_stop)
    large.prefix(SAMPLE_CHARS)  # joined here, off the GUI thread: the token view asks for it on open
    head = head_lines(pieces[0], SNIFF_CHARS) if pieces else ""
    guess = looks_like_word_counts(head)
    stats = corpus_stats(large, word_counts=guess, should_stop=should_stop, progress=progress, name=path.name)
    return LoadedCorpus(path, None, n_bytes, stats, guess, errors != "strict", large, "\r\n" in head)
