"""One merge of SuperBPE's stage-2 trainer compiled with numba (imported only when `tokviz.core.jit` says so).

`merge_sites` does what `BpeTrainer._merge_vector` does in numpy, site by site in one pass: it
relinks the flat arrays in place and returns, grouped by neighbouring token, the weights the old
neighbour pairs lose and the positions and weights of the new pairs. The stage-2 corpus is barely
deduplicated (a chunk runs across many words), so most of its merges have hundreds of sites, and
numpy's fixed cost a call (a pass over an array of every token id, sorts) outweighs the work.
`tokviz.core.superbpe.compiled` turns the groups into the trainer's dicts and heap entries.

What this leaves out: the dicts and the heap (Python objects), choosing the merge.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _group(tok, pos, w, n, acc, slot):
    """Entries ``(tok[i], pos[i], w[i])`` for i < n grouped by token, tokens in order of first
    appearance, positions in input order within a token: (tokens, group starts (one more than the
    tokens), summed weights, positions). `acc` and `slot`: zeroed / -1 scratch of one entry per
    token id, left as they were found."""
    toks = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        t = tok[i]
        if slot[t] < 0:
            slot[t] = k
            toks[k] = t
            k += 1
        acc[slot[t]] += 1
    starts = np.zeros(k + 1, np.int64)
    for j in range(k):
        starts[j + 1] = starts[j] + acc[j]
        acc[j] = 0
    sums = np.zeros(k, np.int64)
    out = np.empty(n, np.int64)
    for i in range(n):
        j = slot[tok[i]]
        out[starts[j] + acc[j]] = pos[i]
        acc[j] += 1
        sums[j] += w[i]
    for j in range(k):
        acc[j] = 0
        slot[toks[j]] = -1
    return toks[:k], starts, sums, out


@njit(cache=True, nogil=True)
def merge_sites(ids, nxt, prv, wts, positions, a, b, new, acc, slot):
    """Merge the live sites of the pair (`a`, `b`) among `positions` (ascending) into `new`, left
    to right (``a a a`` merges once as ``(a, a)``). Returns the merged weight and four groupings
    (`_group`): the left neighbours x of the sites (pair (x, a) loses weight), the right neighbours
    y (pair (b, y) loses weight), the new pairs (x, new) at x's position and (new, y) at the site.

    A left neighbour that is the site just merged (two sites touching) is no old pair of its own:
    its pair (b, a) lost its weight as the right neighbour of that site; the new pair is then
    (new, new). A right neighbour that is merged later (the next site touches) gives no (new, y)."""
    n = len(positions)
    lt, lw = np.empty(n, np.int64), np.empty(n, np.int64)  # old left neighbours
    rt, rw = np.empty(n, np.int64), np.empty(n, np.int64)  # old right neighbours
    nlp, nlw = np.empty(n, np.int64), np.empty(n, np.int64)  # new (x, new): position
    nrp, nrr, nrw = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)  # new (new, y)
    nl = nr = nnl = nnr = 0
    merged = 0
    for i in range(n):
        p = positions[i]
        if ids[p] != a:
            continue
        q = nxt[p]
        if q < 0 or ids[q] != b:
            continue
        w = wts[p]
        merged += w
        o = prv[p]
        if o >= 0:
            if ids[o] != new:
                lt[nl] = ids[o]
                lw[nl] = w
                nl += 1
            nlp[nnl] = o
            nlw[nnl] = w
            nnl += 1
        r = nxt[q]
        if r >= 0:
            rt[nr] = ids[r]
            rw[nr] = w
            nr += 1
            nrp[nnr] = p
            nrr[nnr] = r
            nrw[nnr] = w
            nnr += 1
            prv[r] = p
        ids[p] = new
        ids[q] = -1
        nxt[p] = r
    nlt = np.empty(nnl, np.int64)
    for i in range(nnl):
        nlt[i] = ids[nlp[i]]
    keep = 0
    for i in range(nnr):
        if ids[nrr[i]] != new:
            nrp[keep] = nrp[i]
            nrr[keep] = ids[nrr[i]]
            nrw[keep] = nrw[i]
            keep += 1
    return (merged, _group(lt, lt, lw, nl, acc, slot), _group(rt, rt, rw, nr, acc, slot),
            _group(nlt, nlp, nlw, nnl, acc, slot), _group(nrr, nrp, nrw, keep, acc, slot))


@njit(cache=True, nogil=True)
def first_pair_groups(ids, nxt, wts, n_ids):
    """Every pair of neighbours before any merge (position p and ``nxt[p]``), grouped by pair in
    key order (left id, then right id), positions ascending within a pair: (keys, group starts,
    group ends, summed weights, positions), what `BpeTrainer`'s sort of the pair keys gives (ids
    below `n_ids`). A radix sort of the pairs numbered ``left * n_ids + right``, a byte a pass (each
    pass reads in order and writes 256 runs: far fewer cache misses than a counting sort by id)."""
    n = len(ids)
    m = 0
    for p in range(n):
        if nxt[p] >= 0:
            m += 1
    key = np.empty(m, np.int64)
    pos = np.empty(m, np.int64)
    j = 0
    for p in range(n):
        q = nxt[p]
        if q >= 0:
            key[j] = ids[p] * n_ids + ids[q]
            pos[j] = p
            j += 1
    top = max(n_ids * n_ids - 1, 1)
    key2 = np.empty(m, np.int64)
    pos2 = np.empty(m, np.int64)
    room = np.empty(257, np.int64)
    shift = 0
    while (top >> shift) > 0:
        room[:] = 0
        for i in range(m):
            room[((key[i] >> shift) & 255) + 1] += 1
        for d in range(256):
            room[d + 1] += room[d]
        for i in range(m):
            d = (key[i] >> shift) & 255
            key2[room[d]] = key[i]
            pos2[room[d]] = pos[i]
            room[d] += 1
        key, key2 = key2, key
        pos, pos2 = pos2, pos
        shift += 8
    keys = np.empty(m, np.int64)
    starts = np.empty(m, np.int64)
    sums = np.zeros(m, np.int64)
    g = -1
    last = -1
    for i in range(m):
        k = key[i]
        if k != last:
            g += 1
            keys[g] = ((k // n_ids) << 32) | (k % n_ids)
            starts[g] = i
            last = k
        sums[g] += wts[pos[i]]
    g += 1
    ends = np.empty(g, np.int64)
    for j in range(g - 1):
        ends[j] = starts[j + 1]
    if g > 0:
        ends[g - 1] = m
    return keys[:g], starts[:g], ends, sums[:g], pos


@njit(cache=True, nogil=True)
def live_counts(ids, nxt, wts, keys, starts, ends, buffer):
    """`tokviz.core.bpe.deferred_pairs.live_counts` in one pass: for each pair ``keys[i]`` (left id
    ``<< 32 | right id``) with positions ``buffer[starts[i]:ends[i]]``, its weighted count of live
    sites and the index in its range of its first live site (the range's length when none is)."""
    n = len(keys)
    counts = np.zeros(n, np.int64)
    first = np.empty(n, np.int64)
    for i in range(n):
        a, b = keys[i] >> 32, keys[i] & 0xFFFFFFFF
        f = -1
        c = 0
        for j in range(starts[i], ends[i]):
            p = buffer[j]
            if ids[p] == a:
                q = nxt[p]
                if q >= 0 and ids[q] == b:
                    c += wts[p]
                    if f < 0:
                        f = j - starts[i]
        counts[i] = c
        first[i] = f if f >= 0 else ends[i] - starts[i]
    return counts, first


@njit(cache=True, nogil=True)
def _stored_losses(groups, fixed, shift, stored):
    """The old pairs of a grouping (`merge_sites`' left or right neighbours: the pair of token t
    is ``fixed | t << shift``) that are in `stored` (sorted), and the weight each loses."""
    toks, _, sums, _ = groups
    keys = np.empty(len(toks), np.int64)
    lost = np.empty(len(toks), np.int64)
    k = 0
    for i in range(len(toks)):
        key = fixed | (toks[i] << shift)
        at = np.searchsorted(stored, key)
        if at < len(stored) and stored[at] == key:
            keys[k] = key
            lost[k] = sums[i]
            k += 1
    return keys[:k], lost[:k]


@njit(cache=True, nogil=True)
def merge_step(ids, nxt, prv, wts, positions, a, b, new, acc, slot, stored, min_count):
    """`merge_sites`, and what the trainer does with its groupings, in one call: (the merged weight,
    the stored old pairs that lose weight and how much (``stored``: sorted keys), and the new pairs
    of at least `min_count` (``(x, new)``, then ``(new, y)``) as one batch, highest count first
    (stable): their keys, counts, ranges of the positions and the positions)."""
    merged, left, right, new_left, new_right = merge_sites(ids, nxt, prv, wts, positions, a, b, new, acc, slot)
    lk, ll = _stored_losses(left, a, 32, stored)
    rk, rl = _stored_losses(right, b << 32, 0, stored)
    lost_keys = np.concatenate((lk, rk))
    lost = np.concatenate((ll, rl))
    n = 0
    m = 0
    for g in (new_left, new_right):
        for i in range(len(g[0])):
            if g[2][i] >= min_count:
                n += 1
                m += g[1][i + 1] - g[1][i]
    keys = np.empty(n, np.int64)
    counts = np.empty(n, np.int64)
    starts = np.empty(n, np.int64)
    ends = np.empty(n, np.int64)
    pos = np.empty(m, np.int64)
    j = 0
    o = 0
    for side in range(2):
        toks, gs, sums, gp = new_left if side == 0 else new_right
        for i in range(len(toks)):
            if sums[i] >= min_count:
                keys[j] = (toks[i] << 32) | new if side == 0 else (new << 32) | toks[i]
                counts[j] = sums[i]
                starts[j] = o
                for q in range(gs[i], gs[i + 1]):
                    pos[o] = gp[q]
                    o += 1
                ends[j] = o
                j += 1
    order = np.argsort(-counts, kind="mergesort")
    return merged, lost_keys, lost, keys[order], counts[order], starts[order], ends[order], pos
