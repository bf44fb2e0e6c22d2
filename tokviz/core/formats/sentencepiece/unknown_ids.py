"""sentencepiece's unknown handling on ids alone (``PopulateSentencePieceText``): an unknown
piece becomes its UTF-8 bytes as ``<0xNN>`` pieces with byte fallback, else a run of unknown
pieces becomes one token (the unknown id, or the piece's own id when it is an unknown piece).

What this leaves out: the same with spans (`tokenizer.SentencePieceTokenizer._unknowns`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

_MANY = 2_000  # from this many unknown pieces on, they are found and fused in numpy


def resolve_unknowns(norm: str, ids: list[int], ends: Sequence[int], *, unknown: Collection[int], unk_id: int,
                     byte_ids: Sequence[int] | None) -> list[int]:
    """The ids of `ids` (pieces over `norm` ending at `ends`; -1: an unknown character) after the
    unknown handling, in one pass: a text mostly unknown to the model has as many as tokens."""
    places = unknown_places(ids, (-1, *unknown))
    if byte_ids is None and len(places) >= _MANY:
        return fused_runs(np.asarray(ids, dtype=np.int64), np.asarray(places, dtype=np.int64), unk_id)
    out: list[int] = []
    last = -2
    done = 0
    for k in places:
        out.extend(ids[done:k])
        if byte_ids is not None:
            a = ends[k - 1] if k else 0
            out.extend([byte_ids[b] for b in norm[a : ends[k]].encode("utf-8")])
        elif k - 1 != last:  # the first of a run of unknowns: one token for the run
            out.append(unk_id if ids[k] < 0 else ids[k])
        last = k
        done = k + 1
    out.extend(ids[done:])
    return out


def fused_runs(ids: np.ndarray, at: np.ndarray, unk_id: int) -> list[int]:
    """`resolve_unknowns` without byte fallback, in numpy: each run of unknown pieces (at the
    places `at`, ascending) is its first one's id, the unknown id for an unknown character."""
    keep = np.ones(len(ids), dtype=bool)
    keep[at[1:][np.diff(at) == 1]] = False  # an unknown right after another joins its run
    return np.where(ids < 0, unk_id, ids)[keep].tolist()


def unknown_places(ids: list[int], values: Collection[int]) -> list[int]:
    """The indices of `ids` holding one of `values` (or any negative id), in order: searched
    value by value with ``list.index`` while they are rare, in numpy once they are many."""
    if ids and min(ids) < -1:
        return [k for k, i in enumerate(ids) if i < 0 or i in values]
    at: list[int] = []
    for v in set(values):
        k = -1
        try:
            while True:
                k = ids.index(v, k + 1)
                at.append(k)
                if len(at) >= _MANY:
                    arr = np.asarray(ids, dtype=np.int64)
                    return np.flatnonzero(np.isin(arr, np.fromiter(set(values), dtype=np.int64))).tolist()
        except ValueError:
            pass
    at.sort()
    return at
