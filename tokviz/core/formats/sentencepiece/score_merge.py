"""SentencePiece BPE's merge loop for the usual model: no unused or user-defined pieces, every
mergeable piece's score finite, no step on the merge timeline.

Then `SpBpe._merge`'s agenda (the highest score first, ties to the leftmost pair, -0.0 below
+0.0) always holds exactly the current adjacent pairs that form a piece, so a word can be merged
with a list of its pair scores instead: the best is ``max`` of the list and ``index`` finds the
leftmost, both in C, and a merge rescores only the two pairs beside it. For a word of n
characters that is O(n²) steps in C against the heap's O(n log n) in Python: faster up to
`SHORT` characters, where longer words keep the heap. The pieces come out as ids.

Only the ``▁`` runs hold a mark inside in most models (``▁▁``, ``▁▁▁``...): a sentence is then cut
before each run of marks (`run_led_segments`), which is `cut_segments` without its regex passes.

What this leaves out: unused pieces split back, frozen user-defined symbols, the step limit, the
merge trace (`bpe.SpBpe._merge`, which the others take).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import pairwise

MARK = "\u2581"
SHORT = 96  # longer words are merged by the heap
NEG_ZERO = -5e-324  # -0.0's rank: below +0.0, above every other negative float32 score
_NO_PIECE = float("-inf")  # the score of a pair that forms no piece (mergeable scores are finite)
_RUN_LED = re.compile(f"{MARK}+[^{MARK}]*|[^{MARK}]+")


def merge_keys(pieces: Mapping[str, int], scores: Sequence[float], mergeable: Collection[int]) -> dict[str, float] | None:
    """Each mergeable piece's score as `merge_word` ranks it, or None when a score is not finite
    (NaN and infinities keep the heap's order)."""
    keys = {p: float(scores[i]) for p, i in pieces.items() if i in mergeable}
    if not math.isfinite(sum(keys.values())):  # a NaN or an infinity among them (float32s add up finitely)
        return None
    for p in [p for p, sc in keys.items() if sc == 0.0 and math.copysign(1.0, sc) < 0]:
        keys[p] = NEG_ZERO
    return keys


def merge_word(s: str, keys: Mapping[str, float], ids: Mapping[str, int], unk: int) -> tuple[int, ...]:
    """The ids of the pieces of `s` (a word no piece spans out of): `keys` the ranks (`merge_keys`),
    `ids` each mergeable piece's id; a character that is none is `unk` (so a piece's length is its
    id's: `bpe.SpBpe._lengths`)."""
    get = keys.get
    parts = list(s)
    score = [get(a + b, _NO_PIECE) for a, b in pairwise(s)]
    while score:
        best = max(score)
        if best == _NO_PIECE:
            break
        k = score.index(best)
        parts[k] += parts.pop(k + 1)
        del score[k]
        if k < len(score):
            score[k] = get(parts[k] + parts[k + 1], _NO_PIECE)
        if k:
            score[k - 1] = get(parts[k - 1] + parts[k], _NO_PIECE)
    id_of = ids.get
    return tuple([id_of(p, unk) for p in parts])


def marks_in_runs_only(inner: Iterable[str]) -> bool:
    """Whether the pieces holding a mark inside are all runs of marks, ``▁▁`` among them: then a
    cut falls before each run of marks and nowhere else (`run_led_segments`)."""
    inner = list(inner)
    return MARK * 2 in inner and all(p == MARK * len(p) for p in inner)


def run_led_segments(s: str) -> list[str]:
    """The parts of `s` split before each run of ``▁`` (what `cut_segments` gives, as strings,
    when `marks_in_runs_only`)."""
    return _RUN_LED.findall(s)
