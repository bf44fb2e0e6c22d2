"""The JSON text of an encoding written from its columns (`Encoding.to_json`'s layout).

`write_json_columns` formats `JSON_CHUNK` tokens at a time (one ``%`` per chunk, no string of the
whole, no dict, no tuple per token). A long encoding (`PARALLEL_MIN_TOKENS` tokens or more) given
two ``processes`` (the command line's choice: `tokviz.core.processes.parallel`) has the second half
of each array formatted in a forked child that inherits the columns where forking is safe, while
this process formats the first half: on two cores the writing of 1.4 million tokens' ids, hex
bytes and spans takes about half the time.
The starts and ends may be numpy arrays (`tokviz.core.bpe.ranked.id_spans`): numpy then pairs
them and finds the empty spans.
What this leaves out: the `Encoding` itself (`tokviz.core.encoding`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import compress, count
from operator import eq

JSON_CHUNK = 1 << 16  # tokens per write
PARALLEL_MIN_TOKENS = 1 << 18  # below this a fork costs more than it saves


HEADS = ('{"ids": [', '], "tokens_hex": [', '], "spans": [')


def write_json_columns(write: Callable[[str], object], ids: Sequence[int], keys: Sequence, hex_of: Mapping[object, str],
                       starts: Sequence[int], ends: Sequence[int], *, processes: int = 1) -> None:
    """Write the JSON text of tokens given as columns (token k: ``ids[k]``, hex
    ``hex_of[keys[k]]``, span ``(starts[k], ends[k])``), in up to two `processes`; see the module doc."""
    sections = _two_halves(ids, keys, hex_of, starts, ends, processes) if len(ids) >= PARALLEL_MIN_TOKENS else None
    if sections is None:
        sections = [list(_section(k, ids, keys, hex_of, starts, ends)) for k in range(3)]
    write_sections(write, sections, empty_spans(starts, ends))


def write_sections(write: Callable[[str], object], sections: Sequence[Sequence[str]], empty: Sequence[int]) -> None:
    """Write the JSON object from the texts of its three arrays (each given in parts, see
    `section_texts`, `joined`) and the indices of the empty spans."""
    for head, parts in zip(HEADS, sections):
        write(head)
        for part in parts:
            write(part)
    write('], "inserted": [')
    _write_numbers(write, empty, "%d")
    write("]}")


def empty_spans(starts: Sequence[int], ends: Sequence[int]) -> list[int]:
    """The indices of the empty spans (the tokens the text does not hold: inserted)."""
    if hasattr(starts, "tolist"):  # numpy arrays
        import numpy as np

        return np.flatnonzero(np.asarray(starts) == np.asarray(ends)).tolist()
    return list(compress(count(), map(eq, starts, ends)))


def section_texts(ids: Sequence[int], keys: Sequence, hex_of: Mapping[object, str], starts: Sequence[int],
                  ends: Sequence[int]) -> list[str]:
    """The texts of the three arrays (ids, tokens_hex, spans) between their brackets."""
    return ["".join(_section(k, ids, keys, hex_of, starts, ends)) for k in range(3)]


def joined(first: Sequence[str], second: Sequence[str]) -> list[list[str]]:
    """The three arrays' texts of two runs of tokens, one after the other, in parts."""
    return [[a, ", " if a and b else "", b] for a, b in zip(first, second)]


def _pairs(starts: Sequence[int], ends: Sequence[int]) -> list[int]:
    """``[starts[0], ends[0], starts[1], ends[1], ...]`` (numpy interleaves arrays)."""
    if hasattr(starts, "tolist"):
        import numpy as np

        return np.stack((np.asarray(starts), np.asarray(ends)), axis=1).ravel().tolist()
    both = [0] * (2 * len(starts))
    both[0::2], both[1::2] = starts, ends
    return both


def _two_halves(ids, keys, hex_of, starts, ends, processes: int) -> list[list[str]] | None:
    """The three arrays' texts, the second half of each formatted in a forked child; None for
    one process or where forking is not possible (the caller formats everything here)."""
    from .processes.fork import here_and_forked
    from .processes.parallel import usable

    if usable(processes) < 2:
        return None
    h = len(ids) // 2
    cols = (ids, keys, starts, ends)
    first = [c[:h] for c in cols]
    second = [c[h:] for c in cols]

    def text(half) -> list[str]:
        i, kk, s, e = half
        return section_texts(i, kk, hex_of, s, e)

    mine, theirs = here_and_forked(lambda: text(first), lambda: text(second))
    return joined(mine, theirs)


def _section(k: int, ids, keys, hex_of, starts, ends):
    """The texts of array `k` (0 ids, 1 tokens_hex, 2 spans), a chunk at a time."""
    parts: list[str] = []
    if k == 0:
        _write_numbers(parts.append, ids, "%d")
    elif k == 1:
        for j in range(0, len(keys), JSON_CHUNK):
            parts.append(('", "' if j else '"') + '", "'.join(map(hex_of.__getitem__, keys[j : j + JSON_CHUNK])))
        if keys:
            parts.append('"')
    else:
        template = ""
        for j in range(0, len(starts), JSON_CHUNK):  # paired a chunk at a time: its ints stay in the cache
            both = _pairs(starts[j : j + JSON_CHUNK], ends[j : j + JSON_CHUNK])
            if len(both) != 2 * template.count("%"):
                template = ", ".join(["[%d, %d]"] * (len(both) // 2))
            parts.append((", " if j else "") + template % tuple(both))
    return parts


def _write_numbers(write: Callable[[str], object], items: Sequence[int], item: str) -> None:
    """``", ".join(item % x for x in items)`` written `JSON_CHUNK` items at a time."""
    templates: dict[int, str] = {}  # chunk length -> format string of that many items
    for k in range(0, len(items), JSON_CHUNK):
        part = items[k : k + JSON_CHUNK]
        n = len(part)
        if n not in templates:
            templates[n] = ", ".join([item] * n)
        write((", " if k else "") + templates[n] % tuple(part))
