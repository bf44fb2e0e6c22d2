"""The WordPiece trainer's merge loop compiled with numba (imported only when `tokviz.core.jit` says so).

The same rules as `tokviz.core.wordpiece.trainer`, on the arrays of `tokviz.core.wordpiece.arrays`
(where their layout is described): a pair's position is the global character position its ties
are broken by.

Choosing the winner is one pass over the live pairs' scores (a few thousand: far fewer than the
merges' sites), keeping the best `n` in order. Only the pairs holding a token the last merge
changed have a new score (every count a merge changes is of a pair next to one of its sites, which
holds one of its two tokens), so those are rescored first, found through their tokens' lists of
pairs (a list drops the pairs it finds dead for good). Scores are compared as floats when they
differ by more than rounding can explain, else exactly: ``c1 * a2 * b2`` against ``c2 * a1 * b1``
in 128 bits (counts below 2**31, which the caller checks). Equal scores go to the pair whose first
live occurrence comes first.

A call runs up to `max_steps` merges and reports each step's candidates; it stops early (status
`GROW`, the room that merge may take in ``meta[ROOM]``: two new pairs and occurrences a site) when
the next merge might not fit the arrays, which the caller enlarges before calling again (the pass
is then redone, to the same answer).

What this leaves out: the arrays' set-up and growth (`arrays`), the step records (`compiled`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tokviz.core.text.trie_table import EMPTY, find_slot, rehash

from .arrays import (
    C_COUNT,
    C_LEFT,
    C_LEFT_COUNT,
    C_POS,
    C_RIGHT,
    C_RIGHT_COUNT,
    COUNT,
    DONE,
    END,
    FIRST,
    GROW,
    L_FIRST,
    L_PAIR,
    LAST_LEFT,
    LAST_RIGHT,
    LEFT,
    LIVE_AT,
    LIVE_COLUMNS,
    MIN_COUNT,
    N_LIVE,
    N_PAIRS,
    N_TOKENS,
    NEXT_LEFT,
    NEXT_RIGHT,
    NXT,
    POOL_USED,
    PRV,
    RIGHT,
    ROOM,
    START,
    T_COUNT,
    T_LEFTS,
    T_RIGHTS,
    TABLE_BITS,
    TOK,
    WT,
)

_LOW32 = (1 << 32) - 1
_CLOSE = 1e-12  # float scores closer than this (relatively) are compared exactly


@njit(cache=True, nogil=True)
def _new_pair(k, a, b, pairs, toks):  # pragma: no cover - compiled
    """Start row `k` as the pair (a, b), count 0, at the head of its tokens' lists."""
    pairs[k, LEFT] = a
    pairs[k, RIGHT] = b
    pairs[k, COUNT] = 0
    pairs[k, END] = 0
    pairs[k, LIVE_AT] = 0
    pairs[k, NEXT_LEFT] = toks[a, T_LEFTS]
    toks[a, T_LEFTS] = k + 1
    pairs[k, NEXT_RIGHT] = toks[b, T_RIGHTS]
    toks[b, T_RIGHTS] = k + 1


@njit(cache=True, nogil=True)
def set_up(pos, toks, pairs, pool, table, meta):  # pragma: no cover - compiled
    """Count the base tokens and every pair of neighbours, lay each pair's occurrences out in
    `pool` (an occurrence per position must fit; pairs numbered in order of first occurrence) and
    list the live ones. `pairs` and `table` grow as needed (doubling; the table stays at most half
    full). Returns (pairs, table, live, scores)."""
    n = pos.shape[1]
    bits = meta[TABLE_BITS]
    shift, mask = np.uint64(64 - bits), (1 << bits) - 1
    n_pairs = 0
    for p in range(n):
        t = pos[TOK, p]
        if t < 0:
            continue
        toks[t, T_COUNT] += pos[WT, p]
        q = pos[NXT, p]
        if q < 0:
            continue
        key = (t << 32) | pos[TOK, q]
        s = find_slot(table, key, shift, mask)
        if table[s, 0] == EMPTY:
            if n_pairs == len(pairs):
                wider = np.zeros((2 * len(pairs), pairs.shape[1]), dtype=pairs.dtype)
                wider[:n_pairs] = pairs
                pairs = wider
            table[s, 0] = key
            table[s, 1] = n_pairs
            _new_pair(n_pairs, t, pos[TOK, q], pairs, toks)
            n_pairs += 1
            if 2 * n_pairs > mask:  # half full: twice the rows
                bits += 1
                table = rehash(table, bits)
                shift, mask = np.uint64(64 - bits), (1 << bits) - 1
                s = find_slot(table, key, shift, mask)
        k = table[s, 1]
        pairs[k, COUNT] += pos[WT, p]
        pairs[k, END] += 1  # occurrences, for now
    meta[TABLE_BITS] = bits
    used = 0
    for k in range(n_pairs):
        pairs[k, START] = used
        pairs[k, FIRST] = used
        used += pairs[k, END]
        pairs[k, END] = pairs[k, START]
    for p in range(n):
        q = pos[NXT, p]
        if pos[TOK, p] < 0 or q < 0:
            continue
        k = table[find_slot(table, (pos[TOK, p] << 32) | pos[TOK, q], shift, mask), 1]
        pool[pairs[k, END]] = p
        pairs[k, END] += 1
    meta[N_PAIRS] = n_pairs
    meta[POOL_USED] = used
    live = np.zeros((max(16, n_pairs), LIVE_COLUMNS), dtype=np.int64)
    scores = np.zeros(len(live), dtype=np.float64)
    meta[N_LIVE] = _list_live(0, n_pairs, pos, pairs, pool, toks, live, scores, meta)
    return pairs, table, live, scores


@njit(cache=True, nogil=True)
def _list_live(first, last, pos, pairs, pool, toks, live, scores, meta):  # pragma: no cover - compiled
    """Append the pairs ``first..last-1`` whose count reaches the minimum to `live` and `scores`;
    returns the new number of live pairs."""
    n_live = meta[N_LIVE]
    for k in range(first, last):
        if pairs[k, COUNT] >= meta[MIN_COUNT]:
            live[n_live, L_PAIR] = k
            live[n_live, L_FIRST] = _first_pos(k, pos, pairs, pool)
            scores[n_live] = _score(k, pairs, toks)
            n_live += 1
            pairs[k, LIVE_AT] = n_live
    return n_live


@njit(cache=True, nogil=True)
def _first_pos(k, pos, pairs, pool):  # pragma: no cover - compiled
    """The position of pair `k`'s first live occurrence (its pointer moves past dead ones), -1 if none."""
    a, b = pairs[k, LEFT], pairs[k, RIGHT]
    i, end = pairs[k, FIRST], pairs[k, END]
    while i < end:
        p = pool[i]
        if pos[TOK, p] == a:
            q = pos[NXT, p]
            if q >= 0 and pos[TOK, q] == b:
                pairs[k, FIRST] = i
                return p
        i += 1
    pairs[k, FIRST] = i
    return -1


@njit(cache=True, nogil=True)
def _times3(x, y, z):  # pragma: no cover - compiled
    """``x * y * z`` for 0 <= x, y, z < 2**31 as (high part, low 32 bits)."""
    xy = x * y
    low = (xy & _LOW32) * z
    return (xy >> 32) * z + (low >> 32), low & _LOW32


@njit(cache=True, nogil=True)
def ranks_before(k1, f1, p1, k2, f2, p2, pairs, toks):  # pragma: no cover - compiled
    """Whether pair `k1` (float score `f1`, first live occurrence `p1`) ranks before pair `k2`
    (`f2`, `p2`): a higher score, or an equal one and an earlier first occurrence."""
    if f1 > f2 * (1.0 + _CLOSE):
        return True
    if f2 > f1 * (1.0 + _CLOSE):
        return False
    c1, c2 = pairs[k1, COUNT], pairs[k2, COUNT]
    h1, l1 = _times3(c1, toks[pairs[k2, LEFT], T_COUNT], toks[pairs[k2, RIGHT], T_COUNT])
    h2, l2 = _times3(c2, toks[pairs[k1, LEFT], T_COUNT], toks[pairs[k1, RIGHT], T_COUNT])
    if h1 != h2:
        return h1 > h2
    if l1 != l2:
        return l1 > l2
    return p1 < p2


@njit(cache=True, nogil=True)
def _score(k, pairs, toks):  # pragma: no cover - compiled
    return pairs[k, COUNT] / (float(toks[pairs[k, LEFT], T_COUNT]) * float(toks[pairs[k, RIGHT], T_COUNT]))


@njit(cache=True, nogil=True)
def _rescore(t, side, refirst, pos, pairs, pool, toks, live, scores, meta):  # pragma: no cover - compiled
    """Rescore the live pairs in token `t`'s list of pairs on `side` (`T_LEFTS`: t on the left,
    `T_RIGHTS`: on the right), with their first occurrences too if `refirst`; a pair whose count
    fell below the minimum leaves `live` (the last one takes its place) and the list."""
    link = NEXT_LEFT if side == T_LEFTS else NEXT_RIGHT
    min_count = meta[MIN_COUNT]
    prev = -1
    k = toks[t, side] - 1
    while k >= 0:
        nxt = pairs[k, link] - 1
        if pairs[k, COUNT] < min_count:  # for good: counts only fall once made
            i = pairs[k, LIVE_AT] - 1
            if i >= 0:
                last = meta[N_LIVE] - 1
                moved = live[last, L_PAIR]
                live[i, L_PAIR], live[i, L_FIRST], scores[i] = moved, live[last, L_FIRST], scores[last]
                pairs[moved, LIVE_AT] = i + 1
                pairs[k, LIVE_AT] = 0
                meta[N_LIVE] = last
            if prev < 0:
                toks[t, side] = nxt + 1
            else:
                pairs[prev, link] = nxt + 1
        else:
            i = pairs[k, LIVE_AT] - 1
            if i >= 0:
                scores[i] = _score(k, pairs, toks)
                if refirst:
                    live[i, L_FIRST] = _first_pos(k, pos, pairs, pool)
            prev = k
        k = nxt


@njit(cache=True, nogil=True)
def _best(pos, pairs, pool, toks, live, scores, meta, top, top_scores, top_first):  # pragma: no cover - compiled
    """The best ``len(top)`` live pairs into `top`, best first (their float scores and first
    occurrences in `top_scores` and `top_first`); returns how many there are. First rescores the
    live pairs holding a token the last merge changed, dropping those whose count fell below the
    minimum: their counts changed, and the first occurrences of (x, a) and (b, y), next to its
    sites."""
    a, b = meta[LAST_LEFT], meta[LAST_RIGHT]
    if a >= 0:
        _rescore(a, T_RIGHTS, True, pos, pairs, pool, toks, live, scores, meta)
        _rescore(b, T_LEFTS, True, pos, pairs, pool, toks, live, scores, meta)
        _rescore(a, T_LEFTS, False, pos, pairs, pool, toks, live, scores, meta)
        if b != a:
            _rescore(b, T_RIGHTS, False, pos, pairs, pool, toks, live, scores, meta)
        meta[LAST_LEFT] = meta[LAST_RIGHT] = -1  # rescored: a call that stops here need not do it again
    n = len(top)
    m = 0
    low = -1.0  # a score below this cannot enter the list (-1: it is not full yet)
    for i in range(meta[N_LIVE]):
        f = scores[i]
        if f < low:
            continue
        k, p = live[i, L_PAIR], live[i, L_FIRST]
        if m == n and not ranks_before(k, f, p, top[m - 1], top_scores[m - 1], top_first[m - 1], pairs, toks):
            continue
        j = m if m < n else n - 1
        while j > 0 and ranks_before(k, f, p, top[j - 1], top_scores[j - 1], top_first[j - 1], pairs, toks):
            top[j] = top[j - 1]
            top_scores[j] = top_scores[j - 1]
            top_first[j] = top_first[j - 1]
            j -= 1
        top[j] = k
        top_scores[j] = f
        top_first[j] = p
        if m < n:
            m += 1
        if m == n:
            low = top_scores[n - 1] * (1.0 - _CLOSE)
    return m


@njit(cache=True, nogil=True)
def _add(key, w, new_pair, where, pairs, toks, table, meta, made_k, made_p, n_made):  # pragma: no cover - compiled
    """Add `w` to the count of pair `key`; a pair made by this merge (`new_pair`) also gets
    occurrence `where` (noted in `made_k`/`made_p`), and a number if it has none. Returns `n_made`."""
    bits = meta[TABLE_BITS]
    s = find_slot(table, key, np.uint64(64 - bits), (1 << bits) - 1)
    if table[s, 0] == EMPTY:
        k = meta[N_PAIRS]
        meta[N_PAIRS] = k + 1
        table[s, 0] = key
        table[s, 1] = k
        _new_pair(k, key >> 32, key & _LOW32, pairs, toks)
    k = table[s, 1]
    pairs[k, COUNT] += w
    if new_pair:
        made_k[n_made] = k
        made_p[n_made] = where
        n_made += 1
    return n_made


@njit(cache=True, nogil=True)
def _merge(k, new, pos, toks, pairs, pool, table, live, scores, meta):  # pragma: no cover - compiled
    """Merge every live occurrence of pair `k` into token `new`, left to right; returns the
    weighted number of sites."""
    a, b = pairs[k, LEFT], pairs[k, RIGHT]
    first_new = meta[N_PAIRS]
    room = 2 * (pairs[k, END] - pairs[k, FIRST])
    made_k = np.empty(room, dtype=np.int64)
    made_p = np.empty(room, dtype=np.int64)
    n_made = 0
    total = 0
    for i in range(pairs[k, FIRST], pairs[k, END]):
        p = pool[i]
        if pos[TOK, p] != a:
            continue
        q = pos[NXT, p]
        if q < 0 or pos[TOK, q] != b:
            continue
        w = pos[WT, p]
        total += w
        left = pos[PRV, p]
        if left >= 0:
            x = pos[TOK, left]
            n_made = _add((x << 32) | a, -w, False, left, pairs, toks, table, meta, made_k, made_p, n_made)
            n_made = _add((x << 32) | new, w, True, left, pairs, toks, table, meta, made_k, made_p, n_made)
        right = pos[NXT, q]
        if right >= 0:
            y = pos[TOK, right]
            n_made = _add((b << 32) | y, -w, False, p, pairs, toks, table, meta, made_k, made_p, n_made)
            n_made = _add((new << 32) | y, w, True, p, pairs, toks, table, meta, made_k, made_p, n_made)
            pos[PRV, right] = p
        pos[TOK, p] = new
        pos[TOK, q] = -1
        pos[NXT, p] = right
    pairs[k, COUNT] = 0
    toks[a, T_COUNT] -= total
    toks[b, T_COUNT] -= total
    toks[new, T_COUNT] = total
    meta[LAST_LEFT], meta[LAST_RIGHT] = a, b
    # the new pairs' occurrences, pair by pair, each in the ascending order they were made in
    n_pairs = meta[N_PAIRS]
    used = meta[POOL_USED]
    for j in range(first_new, n_pairs):
        pairs[j, END] = 0
    for i in range(n_made):
        pairs[made_k[i], END] += 1
    for j in range(first_new, n_pairs):
        pairs[j, START] = used
        pairs[j, FIRST] = used
        used += pairs[j, END]
        pairs[j, END] = pairs[j, START]
    for i in range(n_made):
        j = made_k[i]
        pool[pairs[j, END]] = made_p[i]
        pairs[j, END] += 1
    meta[POOL_USED] = used
    meta[N_LIVE] = _list_live(first_new, n_pairs, pos, pairs, pool, toks, live, scores, meta)
    return total


@njit(cache=True, nogil=True)
def run_steps(pos, toks, pairs, pool, table, live, scores, meta, out, found, totals,  # pragma: no cover - compiled
              max_steps):
    """Up to `max_steps` merges. Step s reports its candidates, best first, in ``out[s, :found[s]]``
    (left, right, count, left count, right count, first position) and the weighted sites merged
    in ``totals[s]``. Returns (steps done, status): `DONE` when no pair is left or the steps are
    done, `GROW` when the next merge needs bigger arrays."""
    n = out.shape[1]
    top = np.empty(n, dtype=np.int64)
    top_scores = np.empty(n, dtype=np.float64)
    top_first = np.empty(n, dtype=np.int64)
    for s in range(max_steps):
        m = _best(pos, pairs, pool, toks, live, scores, meta, top, top_scores, top_first)
        if m == 0:
            return s, DONE
        k = top[0]
        room = 2 * (pairs[k, END] - pairs[k, FIRST])
        if (meta[N_PAIRS] + room > len(pairs) or meta[POOL_USED] + room > len(pool)
                or meta[N_LIVE] + room > len(live) or meta[N_TOKENS] >= len(toks)
                or 2 * (meta[N_PAIRS] + room) > len(table)):
            meta[ROOM] = room
            return s, GROW
        for j in range(m):
            c = top[j]
            out[s, j, C_LEFT] = pairs[c, LEFT]
            out[s, j, C_RIGHT] = pairs[c, RIGHT]
            out[s, j, C_COUNT] = pairs[c, COUNT]
            out[s, j, C_LEFT_COUNT] = toks[pairs[c, LEFT], T_COUNT]
            out[s, j, C_RIGHT_COUNT] = toks[pairs[c, RIGHT], T_COUNT]
            out[s, j, C_POS] = top_first[j]
        found[s] = m
        new = meta[N_TOKENS]
        meta[N_TOKENS] = new + 1
        totals[s] = _merge(k, new, pos, toks, pairs, pool, table, live, scores, meta)
    return max_steps, DONE
