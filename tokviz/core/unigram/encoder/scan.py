"""The scan of a long text's segments (`PieceLattice.best_segments` from `_SCAN_MIN` segments on).

Every segment's best path from score 0 is cached with its margin (`PieceLattice.relative`); the
library's path depends on the score accumulated before the segment only where the margin is
within rounding of that score (`PieceLattice.needs_exact`). For sentencepiece's float32 sums the
scan works on all segments at once:

1. a walk computes the exact float32 score where every segment starts from the cached paths
   (`GatheredChain.before_each`), stopping to replay one by one the segments where a reset may
   fall inside (``|score| + wmax`` reaching the band) and those whose exact path is known to
   differ from the cached one;
2. the segments whose margin does not stand at their score are replayed together
   (`batch_exact`); where a replay's path differs from the cached one, the scores after it
   change: the walk is redone from there and the segments whose score changed are tested again,
   until no replay differs.

A replay is used only where the score it started from is bit for bit the segment's score. With
tokenizers' doubles (replays are rare there) the scan is a loop over the segments instead.

What this leaves out: the per-segment loop for short texts (`lattice`).
"""

from __future__ import annotations

import math
from itertools import chain
from operator import itemgetter

import numpy as np

from tokviz.core.errors import EncodeError

from .batch import MAX_SEGMENT, GatheredChain, batch_exact
from .viterbi import RESET

_BATCH_MIN = 16  # fewer replays than this are made one by one


def scan(lat, parts, sp: bool) -> tuple[list[int], list[tuple[int, ...]]]:
    """`best_segments` of `parts` (see the module docstring) for the `PieceLattice` `lat`; `sp`:
    sentencepiece's float32 sums."""
    hits = lat.hits(parts)
    seg_ids, seg_ends, tot_t, mar_t, wm_t = (list(map(itemgetter(k), hits)) for k in range(5))
    if sp and lat.hashes is not None and lat.hashes.ok:
        Float32Scan(lat, parts, seg_ids, seg_ends, mar_t, wm_t).run()
    else:
        _loop(lat, parts, seg_ids, seg_ends, tot_t, mar_t, wm_t, sp)
    out_ids = list(chain.from_iterable(seg_ids))
    if lat.unk_id is None and -1 in out_ids:
        raise EncodeError("an unknown character, and the model has no unknown token (unk_id is null)")
    return out_ids, seg_ends


def _same_float(a: float, b: float) -> bool:
    """`a` and `b` are the same number, sign of zero included."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


class Float32Scan:
    """Step 1 and 2 of the module docstring for sentencepiece's arithmetic; `run` writes the
    replayed segments' paths into `seg_ids` and `seg_ends`."""

    def __init__(self, lat, parts, seg_ids: list, seg_ends: list, mar_t: list, wm_t: list) -> None:
        self.lat, self.parts, self.seg_ids, self.seg_ends = lat, parts, seg_ids, seg_ends
        self.n = len(parts)
        self.mar = np.asarray(mar_t, dtype=np.float64)
        self.wm = np.asarray(wm_t, dtype=np.float64)
        self.chain = GatheredChain(lat.scores32_table(), seg_ids)
        # a walk stops where |score| reaches the limit: where a reset may fall inside (the loop's
        # band), and (-1) at segments whose exact path differs from the cached one
        self.limit = RESET * 0.999 - self.wm
        self.x_at = np.empty(self.n + 1, dtype=np.float32)
        self.replayed: dict[int, tuple] = {}  # j: (score at its start, (ids, ends, score at the end))

    def run(self) -> None:
        self._walk(0, 0.0)
        check = np.ones(self.n, dtype=bool)
        while True:
            diffs = self.replay(self._needing(check))
            if not diffs:
                break
            before = self.x_at.copy()
            first = min(diffs)
            self._walk(first + 1, self.replayed[first][1][2])
            now, was = self.x_at[:self.n], before[:self.n]
            check = (now != was) | (np.signbit(now) != np.signbit(was))
        x_list = self.x_at.tolist()
        for j, (x, (ids, ends, _)) in self.replayed.items():
            if _same_float(x, x_list[j]):
                self.seg_ids[j], self.seg_ends[j] = ids, ends

    def _walk(self, j: int, x: float) -> None:
        """Scores from segment `j` (starting at `x`) to the end, replaying the stops one by one."""
        lat, parts, n = self.lat, self.parts, self.n
        while True:
            vals, k = self.chain.before_each(x, j, self.limit)
            self.x_at[j:k + 1] = vals
            if k >= n:
                return
            v = float(vals[-1])
            got = self.replayed.get(k)
            if got is None or not _same_float(got[0], v):
                got = self.replayed[k] = (v, lat.exact(parts[k], v))
                if got[1][0] != self.seg_ids[k]:
                    self.limit[k] = -1.0
            j, x = k + 1, got[1][2]

    def _needing(self, check: np.ndarray) -> list[int]:
        """Segments among `check` whose cached path may not stand at their score and that have
        no replay from that score."""
        raw = np.abs(self.x_at[:self.n].astype(np.float64))
        m = np.where(raw > RESET, 0.0, raw) + self.wm  # a score beyond the threshold starts from 0
        mm = m * 1.01
        lat = self.lat
        need = check & (self.mar <= mm * lat.unit_roundoff) & (self.mar <= np.ldexp(1.0, np.frexp(mm)[1] + lat.half_ulp_exp))
        x_list = self.x_at.tolist()
        out = []
        for j in np.flatnonzero(need).tolist():
            got = self.replayed.get(j)
            if got is None or not _same_float(got[0], x_list[j]):
                out.append(j)
        return out

    def replay(self, picks: list[int]) -> list[int]:
        """Replay the segments `picks` from their scores (together when there are many); the
        ones whose path differs from the cached one become stops of the walk, and are returned."""
        lat, parts, x_at = self.lat, self.parts, self.x_at
        results: list = [None] * len(picks)
        batch = [k for k, j in enumerate(picks) if len(parts[j]) <= MAX_SEGMENT]
        if len(batch) >= _BATCH_MIN:
            before = x_at[[picks[k] for k in batch]]
            starts = np.where((before < -RESET) | (before > RESET), np.float32(0.0), before)
            got = batch_exact(lat.hashes, [parts[picks[k]] for k in batch], lat.unk_score, starts, True)
            for k, r in zip(batch, got):
                results[k] = r
        diffs = []
        for k, j in enumerate(picks):
            x = float(x_at[j])
            r = results[k] if results[k] is not None else lat.exact(parts[j], x)
            self.replayed[j] = (x, r)
            if r[0] != self.seg_ids[j]:
                self.limit[j] = -1.0
                diffs.append(j)
        return diffs


def _loop(lat, parts, seg_ids, seg_ends, tot_t, mar_t, wm_t, sp: bool) -> None:
    """The scan one segment at a time (the loop of `best_segments`, a segment whose margin stands
    at any score inside the band found for all at once with numpy): writes replayed paths into
    `seg_ids` and `seg_ends`."""
    unit = lat.unit_roundoff * 1.01
    band = RESET * 0.999 if sp else math.inf
    wm = np.asarray(wm_t)
    # margin > unit * m for every m = |x| + wmax below band + wmax; |x| < lim keeps m below band
    always = (np.asarray(mar_t) > unit * (band + wm)).tolist()
    lim = band - float(wm.max()) - 1.0
    exact_x = approx_x = 0.0
    p0 = 0  # segments p0.. are taken as cached since the last exact score (exact_x)
    chained = GatheredChain(lat.scores32_table(), seg_ids) if sp else None
    for j, total in enumerate(tot_t):
        if always[j] and -lim < approx_x < lim:
            approx_x += total
            continue
        near_reset = False
        if -band <= approx_x <= band:
            m = abs(approx_x) + wm_t[j]
            if mar_t[j] > unit * m and m < band:
                approx_x += total
                continue
        elif abs(approx_x) > RESET * 1.001:
            approx_x = 0.0  # the reset where this segment starts
        else:
            near_reset = True  # which side of the threshold: decided exactly
        margin, m = mar_t[j], abs(approx_x) + wm_t[j]
        if near_reset or (margin <= unit * m and lat.needs_exact(margin, m)) or m >= band:
            if p0 < j:
                exact_x = chained.run(exact_x, p0, j) if chained else lat.chain_scores(exact_x, seg_ids[p0:j])
            seg_ids[j], seg_ends[j], exact_x = lat.exact(parts[j], exact_x)
            approx_x = exact_x
            p0 = j + 1
        else:
            approx_x += total
