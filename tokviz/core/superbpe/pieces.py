"""SuperBPE's stage-2 chunks cut into stage-1 pieces, each piece numbered as a stage-1 word, and the
chunks themselves counted, while stage 1 still merges.

The stage-2 start (`tokviz.core.superbpe.stage_two`) lays each chunk out as its pieces' ids after
stage 1. Which chunks the corpus holds, how often, and which pieces each holds need no merge, so a
forked child works them out during stage 1, when one core would otherwise idle: with numba and the
``gpt4`` or ``gpt2`` split, all of it compiled from the texts (`count_aside`, `count_and_number`:
`chunk_kernels` count, `piece_kernels` cut and number; no chunk is made a string); otherwise the
chunks counted with the stage-1 pieces are numbered (`number_aside`: compiled, `number_compiled`,
or the split's pattern on Python's `re` and a dict, `number_pieces`).

What this leaves out: what the numbers become (`tokviz.core.superbpe.stage_two`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from tokviz.core import jit
from tokviz.core.gc_pause import collector_paused
from tokviz.core.processes.fork import Forked, fork_call
from tokviz.core.processes.parallel import available_memory, usable
from tokviz.core.text.fastsplit import ASTRAL, BMP_MIN_CHARS, bmp_pattern, class_table
from tokviz.core.text.split import SPLIT_PRESETS, Splitter, python_regex_pattern, split_specials
from tokviz.core.text.unicode_tables import PinnedPattern

ASIDE_MIN_CHARS = 4_000_000  # below this, a forked child costs more than it saves
ASIDE_BYTES_PER_CHAR = 16  # the counting child's peak: the texts joined, their code points, the chunk tables
COMPILED_MIN_CHARS = 1_000_000  # below this, `re` numbers the pieces as fast as the kernels' set-up
BLOCK_CHARS = 1 << 20  # the compiled numbering takes the chunks this many characters at a time
COMPILED_SCHEMES = {"gpt2": 0, "gpt4": 1}  # `piece_kernels`' schemes
KERNELS = "tokviz.core.superbpe.piece_kernels"
CHUNK_KERNELS = "tokviz.core.superbpe.chunk_kernels"


def load_kernels(stage_one: Splitter) -> ModuleType | None:
    """The compiled numbering for the split `stage_one`, or None: kernels are off, do not load, or
    do not know that split (`tokviz.core.jit`)."""
    return jit.kernels(KERNELS) if stage_one.spec in COMPILED_SCHEMES else None


@dataclass(frozen=True)
class Numbered:
    """Stage-2 chunks cut into stage-1 pieces, each piece as a number: `numbers` side by side,
    `per_chunk` pieces a chunk (integer arrays); a number below the count of stage-1 words is that word, the
    others are the `extra` pieces stage 1 never saw, in order of first appearance."""

    numbers: np.ndarray
    per_chunk: np.ndarray
    extra: list[str]

    def halves(self) -> tuple[Numbered, Numbered]:
        """The first half of the chunks (by pieces) and the rest."""
        ends = np.cumsum(self.per_chunk)
        half = min(int(np.searchsorted(ends, ends[-1] // 2)) + 1, len(ends)) if len(ends) else 0
        cut = int(ends[half - 1]) if half else 0
        return (Numbered(self.numbers[:cut], self.per_chunk[:half], self.extra),
                Numbered(self.numbers[cut:], self.per_chunk[half:], self.extra))


def number_pieces(chunks: Sequence[str], split: Callable[[str], list[str]], words: Sequence[str]) -> Numbered:
    """The pieces `split` cuts `chunks` into, numbered against `words`, written straight into one
    array (a list a chunk, then joined, took a quarter more)."""
    number = {p: i for i, p in enumerate(words)}
    extra: list[str] = []
    numbers, per_chunk = array("q"), array("q")
    extend, known_piece = numbers.extend, number.__getitem__
    with collector_paused():
        for chunk in chunks:
            pieces = split(chunk)
            before = len(numbers)
            try:
                extend(map(known_piece, pieces))
            except KeyError:  # a piece stage 1 never saw: the chunk again, one piece at a time
                del numbers[before:]
                for p in pieces:
                    i = number.get(p)
                    if i is None:
                        i = number[p] = len(number)
                        extra.append(p)
                    numbers.append(i)
            per_chunk.append(len(pieces))
    return Numbered(_int64(numbers), _int64(per_chunk), extra)


def _int64(values: array) -> np.ndarray:
    return np.frombuffer(values, dtype=np.int64) if len(values) else np.zeros(0, np.int64)


def _code_points(text: str, narrow: bool = True) -> np.ndarray:
    """`text`'s code points, with `narrow` 16 bits each where it has none beyond U+FFFF (half the
    memory the kernels stream through, beside a training on the other core)."""
    if narrow and ASTRAL.search(text) is None:
        return np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _table_for(cps: np.ndarray) -> np.ndarray:
    """The class table `cps` need: the BMP's for 16-bit code points, else every plane's."""
    return np.frombuffer(class_table(bmp=cps.dtype == np.uint16), dtype=np.uint8)


class _Numberer:
    """The compiled numbering (`piece_kernels.number_pieces`) against `words`, a block of chunks
    at a time; pieces that are no word (a cut of its own, a piece stage 1 never saw) are numbered
    here, in order of first appearance."""

    def __init__(self, scheme: int, words: Sequence[str], kernels: ModuleType) -> None:
        word_len = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self.wstarts = np.concatenate(([0], np.cumsum(word_len)))
        self.wcps = _code_points("".join(words), narrow=False)
        self.bits = max(4, (2 * len(words)).bit_length())  # at most half full
        self.rows = kernels.word_table(self.wcps, self.wstarts, self.bits)
        self.scheme, self.n_words, self.kernels = scheme, len(words), kernels
        self.number: dict[str, int] = {}
        self.extra: list[str] = []
        self.numbers: list[np.ndarray] = []
        self.per_chunk: list[np.ndarray] = []

    def block(self, text: str, cps: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        """Number the chunks ``text[starts[i]:ends[i]]`` (`cps`: `text`'s code points)."""
        nums, per, at, a, b = self.kernels.number_pieces(cps, starts, ends, _table_for(cps), self.scheme, self.wcps,
                                                         self.rows, self.bits)
        if len(at):
            number, extra, new = self.number, self.extra, []
            for s, e in zip(a.tolist(), b.tolist()):
                p = text[s:e]
                i = number.get(p)
                if i is None:
                    i = number[p] = self.n_words + len(extra)
                    extra.append(p)
                new.append(i)
            nums[at] = new
        self.numbers.append(nums.astype(np.int32) if self.n_words + len(self.extra) < 1 << 31 else nums)  # half to send
        self.per_chunk.append(per)

    def result(self) -> Numbered:
        if not self.numbers:
            return Numbered(np.zeros(0, np.int64), np.zeros(0, np.int64), [])
        return Numbered(np.concatenate(self.numbers), np.concatenate(self.per_chunk), self.extra)


def _blocks(lens: np.ndarray):
    """(first, end) of runs of the items of lengths `lens`, about `BLOCK_CHARS` a run."""
    total = np.cumsum(lens)
    a = 0
    while a < len(lens):
        b = max(int(np.searchsorted(total, total[a] - lens[a] + BLOCK_CHARS, "right")), a + 1)
        yield a, b
        a = b


def number_compiled(chunks: Sequence[str], scheme: int, words: Sequence[str], kernels: ModuleType) -> Numbered:
    """`number_pieces` with `kernels` (`piece_kernels`) cutting as the split `scheme` does."""
    numberer = _Numberer(scheme, words, kernels)
    lens = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
    with collector_paused():
        for a, b in _blocks(lens):
            ends = np.cumsum(lens[a:b])
            text = "".join(chunks[a:b])
            numberer.block(text, _code_points(text), ends - lens[a:b], ends)
    return numberer.result()


@dataclass(frozen=True)
class Counted:
    """The stage-2 chunks of a corpus counted and numbered in one go (`count_and_number`): each
    distinct chunk's count, in order of first appearance, and its stage-1 pieces."""

    weights: np.ndarray
    numbered: Numbered


def count_and_number(texts: Sequence[str], specials: Sequence[str], scheme: int, words: Sequence[str],
                     kernels: ModuleType, chunk_kernels: ModuleType) -> Counted:
    """Count the stage-2 chunks of `texts` (special tokens cut out) compiled
    (`chunk_kernels.count_chunks`) and number each distinct one's stage-1 pieces against `words`
    (`_Numberer`): no chunk is ever made a string."""
    text = texts[0] if len(texts) == 1 else "".join(texts)
    seg_starts, seg_ends, offset = [], [], 0
    for t in texts:
        for a, b, special in split_specials(t, tuple(specials)):
            if not special:
                seg_starts.append(offset + a)
                seg_ends.append(offset + b)
        offset += len(t)
    cps = _code_points(text)
    first, length, count = chunk_kernels.count_chunks(cps, np.array(seg_starts, dtype=np.int64),
                                                      np.array(seg_ends, dtype=np.int64), _table_for(cps))
    numberer = _Numberer(scheme, words, kernels)
    with collector_paused():
        for a, b in _blocks(length):
            numberer.block(text, cps, first[a:b], first[a:b] + length[a:b])
    return Counted(count, numberer.result())


def numbered(chunks: Sequence[str], stage_one: Splitter, words: Sequence[str], kernels: ModuleType | None) -> Numbered:
    """The stage-2 `chunks` cut with the stage-1 split and numbered against `words`: compiled where
    `kernels` are loaded and the split is one they know, else on `re` (`number_pieces`)."""
    scheme = COMPILED_SCHEMES.get(stage_one.spec)
    if kernels is not None and scheme is not None:
        return number_compiled(chunks, scheme, words, kernels)
    return number_pieces(chunks, pieces_splitter(stage_one, chunks), words)


def number_aside(chunks: Sequence[str], stage_one: Splitter, words: Sequence[str], processes: int,
                 kernels: ModuleType | None) -> Forked | None:
    """`numbered` started in a forked child, so that it runs while stage 1 merges here (its result:
    ``Forked.result``); None where one process is all there is, or the chunks are too few to repay a
    child (`ASIDE_MIN_CHARS`)."""
    if usable(processes) < 2 or sum(map(len, chunks)) < ASIDE_MIN_CHARS:
        return None
    try:
        return fork_call(lambda: numbered(chunks, stage_one, words, kernels))
    except OSError:
        return None


def may_count_aside(texts: Sequence[object], split: str, processes: int) -> bool:
    """Whether the stage-2 chunks of `texts` can be left to `count_aside`: texts in memory, big
    enough, a split the kernels know, a core free, and room for the child's copy of the corpus as
    code points (`ASIDE_BYTES_PER_CHAR`; otherwise they are counted a slice at a time, and the
    trainer's own memory check says whether the corpus fits). The kernels are loaded later."""
    if not (split in COMPILED_SCHEMES and jit.allowed() and usable(processes) > 1
            and all(isinstance(t, str) for t in texts)):
        return False
    chars = sum(map(len, texts))
    free = available_memory()
    return chars >= ASIDE_MIN_CHARS and (free is None or chars * ASIDE_BYTES_PER_CHAR < free)


def count_aside(texts: Sequence[str], specials: Sequence[str], stage_one: Splitter, words: Sequence[str],
                processes: int, kernels: ModuleType | None) -> Forked | None:
    """`count_and_number` started in a forked child, so that it runs while stage 1 merges here (its
    result: ``Forked.result``, a `Counted`); None where `kernels` (`load_kernels`) or the counting
    kernels are not loaded, or one process is all there is."""
    scheme = COMPILED_SCHEMES.get(stage_one.spec)
    chunk_kernels = jit.kernels(CHUNK_KERNELS) if kernels is not None and scheme is not None else None
    if chunk_kernels is None or usable(processes) < 2:
        return None
    try:
        return fork_call(lambda: count_and_number(texts, specials, scheme, words, kernels, chunk_kernels))
    except OSError:
        return None


def pieces_splitter(stage_one: Splitter, chunks: Sequence[str]) -> Callable[[str], list[str]]:
    """The stage-1 split for the many stage-2 `chunks`. A preset's pattern is tokviz's own, so it
    needs no time limit; for a big corpus it runs on Python's `re` with its classes spelled out
    over the BMP (`bmp_pattern`, the same pieces at 2.5x the speed of `regex`: 6.7 -> 2.7 s on
    gutenberg30), `regex` taking only the chunks with astral characters (`_astral_chunks`).
    Otherwise which of the pinned pattern's two forms a chunk needs is asked once of the chunks'
    distinct characters when none needs the exact one; else `stage_one.chunks`."""
    if stage_one.spec not in SPLIT_PRESETS or stage_one.pattern is None or stage_one.spec == "whitespace":
        return stage_one.chunks
    pinned = PinnedPattern(python_regex_pattern(stage_one.pattern), trusted=True)

    def exact(text: str) -> list[str]:
        return pinned.for_text(text).findall(text)

    bmp = bmp_pattern(stage_one.pattern) if sum(map(len, chunks)) >= BMP_MIN_CHARS else None
    if bmp is not None:
        astral = _astral_chunks(chunks)
        fast = bmp.findall
        return lambda text: exact(text) if text in astral else fast(text)
    if pinned.for_text("".join(set("".join(chunks)))) is pinned.fast:  # (a search of every chunk: 2.6 s on 31 MB)
        return pinned.fast.findall  # every alternative of a preset matches a character or more
    return exact


def _astral_chunks(chunks: Sequence[str], batch: int = 4096) -> set[str]:
    """The chunks holding a character beyond U+FFFF, found with one search a batch of chunks
    joined (a search a chunk took 0.3 s for 152,000 chunks; joining all of them would make a
    4-byte string of the whole corpus for one astral character).

    >>> sorted(_astral_chunks(["ab", "c\U0001F600", "d", "\U0001F600e"], batch=3))
    ['c😀', '😀e']
    """
    found: set[str] = set()
    for a in range(0, len(chunks), batch):
        part = chunks[a:a + batch]
        hits = [m.start() for m in ASTRAL.finditer("".join(part))]
        if hits:
            ends = np.cumsum([len(c) for c in part])
            found.update(part[i] for i in np.searchsorted(ends, hits, "right").tolist())
    return found
