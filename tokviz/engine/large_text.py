"""`LargeText`: a big text kept as line-aligned pieces, with a line index.

A 30 MB corpus is never joined into one Python string in the GUI process: building it is a single
C-level operation that holds the GIL for ~80 ms (longer when one emoji makes the whole string four
bytes per character). Pieces of about 256K characters each end after a newline, so every line lives
in one piece; a line longer than a piece is cut (the read-only view shows the parts as separate
lines). Training receives the pieces and joins them in its own process.

Pure Python (no Qt).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence

SAMPLE_CHARS = 5_000_000  # the corpus sample the token view's baselines read (joined by the loader)
LONGEST_SAMPLE = 2000  # lines sampled for the longest line


def _never() -> bool:
    return False


def _line_starts(piece: str) -> array:
    """Offsets where each line of `piece` starts (0 first); a final newline starts no line."""
    starts = array("q", [0])
    find = piece.find
    pos = find("\n")
    end = len(piece) - 1
    while 0 <= pos < end:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


class LargeText:
    """Read-only text as pieces. ``line(i)`` is line i without its newline.

    >>> t = LargeText(["ab\\ncd\\n", "ef"])
    >>> t.n_lines, [t.line(i) for i in range(t.n_lines)], t.n_chars
    (3, ['ab', 'cd', 'ef'], 8)
    """

    def __init__(self, pieces: Sequence[str], *, should_stop: Callable[[], bool] = _never) -> None:
        self.pieces: list[str] = [p for p in pieces if p]
        self._starts: list[array] = []
        self._first = array("q")  # global number of the first line of each piece
        total = 0
        for piece in self.pieces:
            if should_stop():
                from tokviz.core import Cancelled

                raise Cancelled()
            starts = _line_starts(piece)
            self._first.append(total)
            self._starts.append(starts)
            total += len(starts)
        if self.pieces and self.pieces[-1].endswith("\n"):  # an editor shows an empty last line
            self.pieces_end_with_newline = True
            total += 1
        else:
            self.pieces_end_with_newline = False
        self.n_lines = max(1, total)
        self.n_chars = sum(len(p) for p in self.pieces)
        self._prefix: tuple[int, str] = (0, "")  # the last prefix joined: asked again on every model switch
        # about the longest line (sampled), for a view's horizontal range: measured here, on the
        # loader's thread, not by the view on the GUI thread
        self.longest_line_sampled = max(self.line_lengths_sample(LONGEST_SAMPLE), default=0)

    @classmethod
    def from_text(cls, text: str, piece_chars: int = 1 << 18) -> LargeText:
        """Cut a string into line-aligned pieces (for tests and small inputs)."""
        return cls(list(split_pieces(text, piece_chars)))

    def line(self, i: int) -> str:
        """Line `i` (0-based) without its line break."""
        if not 0 <= i < self.n_lines:
            raise IndexError(f"line {i} out of range (0..{self.n_lines - 1})")
        k = bisect_right(self._first, i) - 1
        if k < 0 or i - self._first[k] >= len(self._starts[k]):
            return ""  # the empty line after a final newline
        starts = self._starts[k]
        local = i - self._first[k]
        piece = self.pieces[k]
        a = starts[local]
        b = starts[local + 1] - 1 if local + 1 < len(starts) else len(piece)
        if b == len(piece) and piece.endswith("\n"):
            b -= 1
        return piece[a:b].rstrip("\r")

    def line_lengths_sample(self, n: int = 20000) -> list[int]:
        """Lengths of up to about `n` lines spread over the text (for a horizontal scroll range)."""
        step = max(1, self.n_lines // n)
        return [len(self.line(i)) for i in range(0, self.n_lines, step)]

    def text(self) -> str:
        """The whole text as one string (expensive for big texts: avoid on the GUI thread)."""
        return "".join(self.pieces)

    def prefix(self, n_chars: int) -> str:
        """The first `n_chars` characters, joining only the pieces they need (the text is read-only:
        the same prefix is joined once, megabytes copied on the GUI thread once)."""
        if self._prefix[0] == n_chars:
            return self._prefix[1]
        out, have = [], 0
        for piece in self.pieces:
            if have >= n_chars:
                break
            out.append(piece[: n_chars - have])
            have += len(out[-1])
        text = "".join(out)
        self._prefix = (n_chars, text)
        return text

    def encoded_pieces(self) -> Iterable[bytes]:
        for piece in self.pieces:
            yield piece.encode("utf-8", "surrogatepass")


def split_pieces(text: str, piece_chars: int) -> Iterable[str]:
    """Cut `text` after a newline near every `piece_chars` characters (hard cut if none)."""
    pos, n = 0, len(text)
    while n - pos > piece_chars:
        cut = text.rfind("\n", pos, pos + piece_chars)
        end = cut + 1 if cut >= pos else pos + piece_chars
        yield text[pos:end]
        pos = end
    if pos < n:
        yield text[pos:]
