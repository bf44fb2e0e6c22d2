"""Aligning two tokenizations of one text by their cut points, to say which tokens really differ.

Two tokenizers cut the same text; a token of one differs from the other only where the cut points
differ. A cut point is a character position where one token ends and the next begins. Which side of
a space a tokenizer attaches it to (GPT-2's `` world``, BERT's ``world``, SentencePiece's
``▁world``) is not a different cut: every position is first moved past the whitespace that follows
it (`canonical_positions`), so `` world`` (5, 11) and ``world`` (6, 11) both span (6, 11).

A token (a, b) of a row differs from the reference when, after that move, a or b is not a reference
cut, or a reference cut falls strictly inside it (the reference splits what the row keeps whole).
Tokens of whitespace alone, and tokens past the end of what the reference covers, never differ.

What this leaves out: drawing (the token view outlines the tokens this marks).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from tokviz.core.text.spaces import space_mask


def canonical_positions(text: str) -> np.ndarray:
    """``out[p]`` (p = 0..len(text)): the first position >= p whose character is not whitespace
    (``len(text)`` when only whitespace follows).

    >>> canonical_positions("a  b").tolist()
    [0, 3, 3, 3, 4]
    """
    n = len(text)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    space = space_mask(codes)
    pos = np.where(space, n, np.arange(n, dtype=np.int64))
    out = np.empty(n + 1, np.int64)
    out[n] = n
    if n:
        out[:n] = np.minimum.accumulate(pos[::-1])[::-1]
    return out


def differing_cuts(text: str, spans: Sequence[tuple[int, int]], reference: Sequence[tuple[int, int]]) -> list[bool]:
    """Per token of `spans`: True when its cut points differ from the reference's (module doc).

    >>> differing_cuts("a world", [(0, 1), (1, 7)], [(0, 1), (2, 4), (4, 7)])  # " world" vs "wo|rld"
    [False, True]
    >>> differing_cuts("a world", [(0, 1), (1, 7)], [(0, 1), (1, 2), (2, 7)])  # the space alone: same cuts
    [False, False]
    """
    if not spans:
        return []
    end = max(b for _, b in spans)
    ref = reference[: bisect.bisect_left(reference, (end + 1,))]  # sorted by start: skip the rest
    if not ref:
        return [False] * len(spans)
    limit = min(len(text), max(end, max(b for _, b in ref)))
    canon = canonical_positions(text[:limit])
    ref_arr = np.clip(np.asarray(ref, np.int64).reshape(-1, 2), 0, limit)
    cuts = np.sort(canon[ref_arr.ravel()])
    cuts = cuts[np.concatenate(([True], cuts[1:] != cuts[:-1]))]  # distinct (`np.unique` imports numpy.ma)
    covered = int(ref_arr[:, 1].max())
    row = np.clip(np.asarray(spans, np.int64).reshape(-1, 2), 0, limit)
    a, b = canon[row[:, 0]], canon[row[:, 1]]
    ia = np.searchsorted(cuts, a, "left")
    ib = np.searchsorted(cuts, b, "left")
    a_cut = (ia < len(cuts)) & (cuts[np.minimum(ia, len(cuts) - 1)] == a)
    b_cut = (ib < len(cuts)) & (cuts[np.minimum(ib, len(cuts) - 1)] == b)
    inside = ib - ia - a_cut.astype(np.int64) > 0  # reference cuts strictly between a and b
    judged = (a < b) & (row[:, 1] <= covered)
    return (judged & (~a_cut | ~b_cut | inside)).tolist()
