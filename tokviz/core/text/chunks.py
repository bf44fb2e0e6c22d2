"""Counting chunks: the deduplicated corpus that training works on.

`count_chunks` turns texts into an ordered ``{chunk: count}`` table (order = first appearance,
which the tie-break rule relies on). Special-token strings are cut out first and never counted.
Given more than one process (`processes`, chosen by the caller: `tokviz.core.processes.parallel`),
large texts are split at safe boundaries and counted by this process and forked children
together where forking is safe; the result is identical to counting serially.
`count_word_table` does the same for word-frequency tables; a `ChunkCounts` table holds chunks
already counted (a count file of the same split) and is used as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import regex

from tokviz.core.errors import Cancelled, CorpusError
from tokviz.core.processes.fork import ChildFailed, fork_call
from tokviz.core.processes.parallel import usable

from .file_pieces import FilePiece
from .split import Splitter, parse_split, split_specials

PARALLEL_MIN_CHARS = 4_000_000  # below this, forking costs more than it saves
SLICE_CHARS = 2_000_000
# A cut between a letter and a line break that is followed by a letter ("a|\nB", "a|\r\nB") is a
# chunk boundary for the gpt2/gpt4/o200k patterns and for str.split(): the letter run ends there
# on both sides, and the line break is matched the same way whether or not text precedes it
# (cutting after the line break instead would change gpt2's `\s+(?!\S)` on "\r\n").
SAFE_BOUNDARY = regex.compile(r"(?<=\p{L})(?=\r?\n\p{L})")
_PARALLEL_SPECS = frozenset({"gpt2", "gpt4", "o200k", "whitespace"})

ShouldStop = Callable[[], bool]
Progress = Callable[[int, int], None]


def counts_alike_in_pieces(split: str, specials: Sequence[str] = ()) -> bool:
    """Whether a text cut at `SAFE_BOUNDARY` cuts (or the ASCII subset of them that
    `corpus.cut_file` cuts at) counts exactly as the whole text: the split's chunks end
    there and no special token holds a line break or a carriage return (a special is cut out
    before counting, and the cut comes before a ``\r\n``).

    >>> counts_alike_in_pieces("gpt4"), counts_alike_in_pieces("regex:.+"), counts_alike_in_pieces("gpt2", ["a\\nb"])
    (True, False, False)
    """
    return parse_split(split).spec in _PARALLEL_SPECS and not any("\n" in s or "\r" in s for s in specials)


def safe_slices(text: str, start: int, end: int, size: int,
                boundary: regex.Pattern = SAFE_BOUNDARY) -> list[tuple[int, int]]:
    """Cut text[start:end] into pieces of about `size` characters at `boundary` cuts (the
    pieces a large text is counted in, one per process); one piece when there is no such cut.

    >>> safe_slices("ab\\ncd\\nef", 0, 8, 2)
    [(0, 2), (2, 5), (5, 8)]
    """
    out = []
    pos = start
    while end - pos > size * 1.5:
        m = boundary.search(text, pos + size, end - size // 2)
        if m is None:
            break
        out.append((pos, m.start()))
        pos = m.start()
    out.append((pos, end))
    return out


def _merge_into(total: dict[str, int], part: Mapping[str, int]) -> None:
    get = total.get
    for chunk, n in part.items():
        total[chunk] = get(chunk, 0) + n


def count_chunks(
    texts: Iterable[str | FilePiece],
    splitter: Splitter,
    *,
    specials: tuple[str, ...] = (),
    processes: int = 1,
    should_stop: ShouldStop | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Count the chunks of `texts` in order of first appearance.

    `processes`: how many processes may count a large text (this one and forked children; 1,
    the default: serial); more are only used where forking is safe, else counting is serial.
    A `FilePiece` is read when its turn comes; a run of them is shared out whole among the
    processes, each forked child reading its own (`_count_pieces`).

    >>> from tokviz.core.text.split import parse_split
    >>> count_chunks(["low low lower"], parse_split("whitespace"))
    {'low': 2, 'lower': 1}
    """
    texts = list(texts)[::-1]  # popped as counted: a text no one else holds is let go at once
    total_chars = sum(len(t) for t in texts) or 1  # (a `FilePiece` counts its bytes)
    done = 0
    total: dict[str, int] = {}
    while texts:
        if isinstance(texts[-1], FilePiece):
            run: list[FilePiece] = []
            while texts and isinstance(texts[-1], FilePiece):
                run.append(texts.pop())
            parts = _count_pieces(run, splitter, specials, processes, should_stop)
        else:
            parts = _count_text_parts(texts.pop(), splitter, specials, processes, should_stop)
        for part, n in parts:
            _merge_into(total, part)
            done += n
            if progress is not None:
                progress(done, total_chars)
    return total


def _count_text_parts(text: str, splitter: Splitter, specials: tuple[str, ...], processes: int,
                      should_stop: ShouldStop | None):
    """Yield (partial counts, characters they cover) for one text, special tokens cut out, in
    text order (a large range counted by several processes: `_count_range`)."""
    for start, end, is_special in split_specials(text, specials):
        if is_special:
            continue
        if should_stop is not None and should_stop():
            raise Cancelled()
        if splitter.pattern is None:
            yield {text[start:end]: 1}, end - start
        else:
            yield from _count_range(text, start, end, splitter, processes, should_stop)


def _count_range(text, start, end, splitter, processes, should_stop):
    """Yield (partial counts, characters they cover) for text[start:end], in text order.

    In parallel, the range is shared out in contiguous runs of slices, one per process: forked
    children count the later runs (each sends back one table, already merged in order) while
    this process counts the first run slice by slice, so it checks `should_stop` and reports
    progress as before, and every core works, this one included. Each child inherits the text
    and the splitter: nothing is pickled on the way in.
    """
    own = splitter.safe_boundary  # a split whose chunks may run across `SAFE_BOUNDARY` cuts
    big = end - start >= PARALLEL_MIN_CHARS and (splitter.spec in _PARALLEL_SPECS or own is not None)
    nproc = usable(processes) if big else 1
    slices = safe_slices(text, start, end, SLICE_CHARS, SAFE_BOUNDARY if own is None else own)
    if nproc < 2 or len(slices) < 2:
        for a, b in slices:
            if should_stop is not None and should_stop():
                raise Cancelled()
            yield splitter.count(text[a:b]), b - a
        return
    shares = _share_out(slices, min(nproc, len(slices)))
    children = []
    try:
        for share in shares[1:]:
            children.append(fork_call(lambda share=share: _count_share(text, share, splitter)))
        for a, b in shares[0]:
            if should_stop is not None and should_stop():
                raise Cancelled()
            yield splitter.count(text[a:b]), b - a
        for child, share in zip(children, shares[1:]):
            if should_stop is not None and should_stop():
                raise Cancelled()
            yield child.result(), share[-1][1] - share[0][0]
    finally:
        for child in children:  # the ones still running when counting stops early
            child.kill()


def _count_pieces(run: list[FilePiece], splitter: Splitter, specials: tuple[str, ...], processes: int,
                  should_stop: ShouldStop | None):
    """Yield (counts, bytes covered) for file pieces `run`, in order. In parallel, the pieces are
    shared out in contiguous runs, one per process: the children are forked before this process
    reads anything, so none of them inherits text, and each reads and counts its own pieces
    while this one counts the first run piece by piece (checking `should_stop` between pieces).
    A child that fails (the file changed under it) is a `CorpusError` with its message."""
    nproc = usable(processes) if sum(map(len, run)) >= PARALLEL_MIN_CHARS else 1
    shares = _share_out(run, min(nproc, len(run)))
    if len(shares) < 2:  # one process, or one piece: each piece read here and counted as a text
        for piece in run:
            if should_stop is not None and should_stop():
                raise Cancelled()
            text = piece.read()
            given, seen, n_chars = 0, 0, max(1, len(text))
            for part, n in _count_text_parts(text, splitter, specials, processes, should_stop):
                seen += n
                step = seen * len(piece) // n_chars - given  # characters as a share of the piece's bytes
                given += step
                yield part, step
            if given < len(piece):
                yield {}, len(piece) - given
        return
    children = []
    try:
        for share in shares[1:]:
            children.append(fork_call(lambda share=share: _count_file_share(share, splitter, specials)))
        for piece in shares[0]:
            if should_stop is not None and should_stop():
                raise Cancelled()
            yield _count_text(piece.read(), splitter, specials), len(piece)
        for child, share in zip(children, shares[1:]):
            if should_stop is not None and should_stop():
                raise Cancelled()
            try:
                part = child.result()
            except ChildFailed as exc:  # its message is "Kind: what went wrong"; the second part says it
                raise CorpusError(str(exc).removeprefix("CorpusError: ")) from None
            yield part, sum(map(len, share))
    finally:
        for child in children:  # the ones still running when counting stops early
            child.kill()


def _count_file_share(share: list[FilePiece], splitter: Splitter, specials: tuple[str, ...]) -> dict[str, int]:
    """The counts of a run of file pieces, read here, merged in order (what a counting child sends back)."""
    total: dict[str, int] = {}
    for piece in share:
        _merge_into(total, _count_text(piece.read(), splitter, specials))
    return total


def _count_text(text: str, splitter: Splitter, specials: tuple[str, ...]) -> dict[str, int]:
    """The chunk counts of one text, counted here."""
    total: dict[str, int] = {}
    for part, _ in _count_text_parts(text, splitter, specials, 1, None):
        _merge_into(total, part)
    return total


def _share_out(slices: list[tuple[int, int]], n: int) -> list[list[tuple[int, int]]]:
    """`slices` cut into `n` contiguous runs of (nearly) equal length.

    >>> _share_out([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)], 2)
    [[(0, 1), (1, 2)], [(2, 3), (3, 4), (4, 5)]]
    """
    k = len(slices)
    return [slices[i * k // n:(i + 1) * k // n] for i in range(n)]


def _count_share(text: str, share: list[tuple[int, int]], splitter: Splitter) -> dict[str, int]:
    """The counts of a run of slices, merged in text order (what a counting child sends back)."""
    total: dict[str, int] = {}
    for a, b in share:
        _merge_into(total, splitter.count(text[a:b]))
    return total


class ChunkCounts(dict):
    """``{chunk: count}`` of chunks already split with the training's own split (a count file
    that `tokviz.core.text.count_files` read): training uses them as they are, unsplit."""


def count_word_table(
    table: Mapping[str, int], splitter: Splitter, *, specials: tuple[str, ...] = ()
) -> dict[str, int]:
    """Chunk counts of a word-frequency table: each word split on its own, times its count
    (a `ChunkCounts` table is already split: its positive counts as they are)."""
    if isinstance(table, ChunkCounts):
        return {c: n for c, n in table.items() if n > 0 and c not in specials}
    total: dict[str, int] = {}
    for word, n in table.items():
        if n <= 0:
            continue
        for start, end, is_special in split_specials(word, specials):
            if is_special:
                continue
            piece = word[start:end]
            for chunk in (splitter.chunks(piece) if splitter.pattern is not None else [piece]):
                total[chunk] = total.get(chunk, 0) + n
    return total
