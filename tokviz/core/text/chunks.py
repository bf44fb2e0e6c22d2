"""Counting chunks: the deduplicated corpus that training works on.

`count_chunks` turns texts into an ordered ``{chunk: count}`` table (order = first appearance,
which the tie-break rule relies on). Special-token strings are cut out first and never counted.
Large texts are split at safe boundaries and counted in parallel worker processes; the result is
identical to counting serially. `count_word_table` does the same for word-frequency tables.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

import regex

from .split import Splitter, split_specials

PARALLEL_MIN_CHARS = 4_000_000  # below this, a process pool costs more than it saves
SLICE_CHARS = 2_000_000
# A cut between a letter and a line break that is followed by a letter ("a|\nB", "a|\r\nB") is a
# chunk boundary for the gpt2/gpt4/o200k patterns and for str.split(): the letter run ends there
# on both sides, and the line break is matched the same way whether or not text precedes it
# (cutting after the line break instead would change gpt2's `\s+(?!\S)` on "\r\n").
_SAFE_BOUNDARY = regex.compile(r"(?<=\p{L})(?=\r?\n\p{L})")
_PARALLEL_SPECS = frozenset({"gpt2", "gpt4", "o200k", "whitespace"})

ShouldStop = Callable[[], bool]
Progress = Callable[[int, int], None]


class Cancelled(Exception):
    """Raised inside counting when the caller's `should_stop` returns True."""


def _slices(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into pieces of about `size` characters at safe boundaries."""
    out = []
    pos = start
    while end - pos > size * 1.5:
        m = _SAFE_BOUNDARY.search(text, pos + size, end - size // 2)
        if m is None:
            break
        out.append((pos, m.start()))
        pos = m.start()
    out.append((pos, end))
    return out


def _count_slice(job: tuple[str, str | None, str]) -> dict[str, int]:
    spec, pattern, piece = job
    return Counter(Splitter(spec, pattern).chunks(piece))


def _merge_into(total: dict[str, int], part: Mapping[str, int]) -> None:
    get = total.get
    for chunk, n in part.items():
        total[chunk] = get(chunk, 0) + n


def count_chunks(
    texts: Iterable[str],
    splitter: Splitter,
    *,
    specials: tuple[str, ...] = (),
    processes: int | None = None,
    mp_context: str | None = None,
    should_stop: ShouldStop | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Count the chunks of `texts` in order of first appearance.

    `processes` caps the worker processes for large texts (default: all cores; 1 = serial);
    `mp_context` is the multiprocessing start method (default ``fork``; threaded callers such as
    the GUI pass ``spawn``).

    >>> from tokviz.core.text.split import parse_split
    >>> count_chunks(["low low lower"], parse_split("whitespace"))
    {'low': 2, 'lower': 1}
    """
    texts = list(texts)
    total_chars = sum(len(t) for t in texts) or 1
    done = 0
    total: dict[str, int] = {}
    for text in texts:
        for start, end, is_special in split_specials(text, specials):
            if is_special:
                continue
            if should_stop is not None and should_stop():
                raise Cancelled()
            if splitter.pattern is None:
                _merge_into(total, {text[start:end]: 1})
                done += end - start
                if progress is not None:
                    progress(done, total_chars)
            else:
                for part, n_chars in _count_range(text, start, end, splitter, processes, mp_context, should_stop):
                    _merge_into(total, part)
                    done += n_chars
                    if progress is not None:
                        progress(done, total_chars)
    return total


def _count_range(text, start, end, splitter, processes, mp_context, should_stop):
    """Yield (partial counter, characters it covers) for text[start:end], in order."""
    nproc = processes if processes is not None else (os.cpu_count() or 1)
    parallel = (
        nproc > 1
        and end - start >= PARALLEL_MIN_CHARS
        and splitter.spec in _PARALLEL_SPECS
        and sys.platform.startswith("linux")
    )
    slices = _slices(text, start, end, SLICE_CHARS)
    if not parallel or len(slices) < 2:
        for a, b in slices:
            if should_stop is not None and should_stop():
                raise Cancelled()
            yield Counter(splitter.chunks(text[a:b])), b - a
        return
    jobs = ((splitter.spec, splitter.pattern, text[a:b]) for a, b in slices)
    import multiprocessing  # only large corpora count in processes: not a start-up cost

    ctx = multiprocessing.get_context(mp_context or "fork")
    with ctx.Pool(min(nproc, len(slices))) as pool:
        for part, (a, b) in zip(pool.imap(_count_slice, jobs), slices):
            if should_stop is not None and should_stop():
                pool.terminate()
                raise Cancelled()
            yield part, b - a


def count_word_table(
    table: Mapping[str, int], splitter: Splitter, *, specials: tuple[str, ...] = ()
) -> dict[str, int]:
    """Chunk counts of a word-frequency table: each word split on its own, times its count."""
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
