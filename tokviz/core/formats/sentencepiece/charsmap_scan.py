"""What a precompiled charsmap's keys are made of, read from its double-array trie in numpy.

`CharsMap` needs four facts about the keys before it can normalize anything: the one-character
keys, the characters that follow another in a key, the most characters a key has, and the
characters a longer key starts with. Walking the trie node by node in Python takes a tenth of a
second on sentencepiece's ``nmt_nfkc`` charsmap (45k units, 25k character nodes), paid by every
process that opens such a model; here the walk goes one byte level at a time over every node of a
level at once (`scan_levels`): a character is one to four byte steps, and a key of k characters is
k character levels.

A UTF-8 sequence counts as a character exactly when Python's strict decoder takes it (no overlong
forms, no surrogates, nothing above U+10FFFF): byte sequences that are not characters can never
match text. A trie deeper than `MAX_LEVELS` characters (none that sentencepiece builds; a loop
makes an endless one) is left to `CharsMap`'s node-by-node walk, which names the problem.

What this leaves out: the replacements (`CharsMap` reads those), lookups in text.
"""

from __future__ import annotations

import numpy as np

MAX_LEVELS = 32  # character levels read here; deeper tries take the node-by-node walk
_LABEL_MASK = (1 << 31) | 0xFF


class TooDeep(Exception):
    """The trie has keys of more than `MAX_LEVELS` characters (or loops)."""


class ByteChildren:
    """Every node's children in the trie: units ``i`` with a label ``0 < label < 256`` are the
    child by that label of whichever node has its children at ``i ^ label``."""

    def __init__(self, units: np.ndarray) -> None:
        u = units.astype(np.int64)
        self.units = u
        lab = u & _LABEL_MASK
        kids = np.flatnonzero((lab > 0) & (lab < 256))
        keys = kids ^ lab[kids]
        order = np.argsort(keys, kind="stable")
        self.keys, self.kids, self.labels = keys[order], kids[order], lab[kids[order]]
        self.offset = (u >> 10) << ((u & (1 << 9)) >> 6)

    def of(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(k, child, label)``: for each child of ``nodes[k]``, k, the child and its label."""
        base = nodes ^ self.offset[nodes]
        lo = np.searchsorted(self.keys, base, side="left")
        hi = np.searchsorted(self.keys, base, side="right")
        n = hi - lo
        k = np.repeat(np.arange(len(nodes)), n)
        at = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n) + lo[k]
        return k, self.kids[at], self.labels[at]


def _valid(first: np.ndarray, cp: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Whether UTF-8 sequences of `length` bytes, continuation bytes all 0x80-0xBF, with lead byte
    `first`, decoding to `cp`, are what Python's strict decoder takes."""
    return (((length == 1) & (first < 0x80))
            | ((length == 2) & (first >= 0xC2) & (first < 0xE0))
            | ((length == 3) & (first >= 0xE0) & (first < 0xF0) & (cp >= 0x800) & ((cp < 0xD800) | (cp > 0xDFFF)))
            | ((length == 4) & (first >= 0xF0) & (first < 0xF5) & (cp >= 0x10000) & (cp <= 0x10FFFF)))


def chars_from(children: ByteChildren, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Every character readable from each of `nodes`: ``(k, code point, node after it)`` for
    ``nodes[k]``, and the byte steps taken."""
    origin = np.arange(len(nodes))
    cur = nodes
    first = cp = need = None
    done_k, done_cp, done_node = [], [], []
    steps = 0
    for depth in range(4):
        k, child, lab = children.of(cur)
        steps += len(k) + len(cur)
        if depth == 0:
            origin, first = origin[k], lab
            need = np.where(lab < 0x80, 1, np.where(lab < 0xE0, 2, np.where(lab < 0xF0, 3, 4)))
            cp = np.where(need == 1, lab, lab & (0x7F >> need))
        else:
            keep = (lab >= 0x80) & (lab < 0xC0)  # a continuation byte, or no character at all
            k, child, lab = k[keep], child[keep], lab[keep]
            origin, first, need = origin[k], first[k], need[k]
            cp = (cp[k] << 6) | (lab & 0x3F)
        full = need == depth + 1
        ok = full & _valid(first, cp, need)
        done_k.append(origin[ok])
        done_cp.append(cp[ok])
        done_node.append(child[ok])
        go = ~full
        origin, first, need, cp, cur = origin[go], first[go], need[go], cp[go], child[go]
        if not len(cur):
            break
    return np.concatenate(done_k), np.concatenate(done_cp), np.concatenate(done_node), steps


def scan_levels(units: np.ndarray, budget: int) -> tuple[list[tuple[str, int]], set[str], int, set[str], int]:
    """``(roots, continuing, max_chars, starters, steps)``: (character, node after it) for every
    character a key can start with; every character that follows another in a key; the most
    characters a key has; the characters a longer key starts with; the byte steps taken. Raises
    `TooDeep` past `MAX_LEVELS` levels and stops (returns steps > `budget`) past the budget."""
    children = ByteChildren(units)
    k, cps, after, steps = chars_from(children, np.zeros(1, dtype=np.int64))
    roots = list(zip(map(chr, cps.tolist()), after.tolist()))
    continuing: set[int] = set()
    starters: set[str] = set()
    level = np.unique(after)
    max_chars = 1
    first = True
    while len(level):
        if steps > budget:
            return roots, set(), max_chars, starters, steps
        k, cps, nxt, taken = chars_from(children, level)
        steps += taken
        if not len(k):
            break
        if first:  # the roots' nodes that lead on: their characters start longer keys
            leads = set(level[k].tolist())
            starters = {ch for ch, node in roots if node in leads}
            first = False
        continuing.update(cps.tolist())
        max_chars += 1
        if max_chars > MAX_LEVELS:
            raise TooDeep
        level = np.unique(nxt)
    return roots, set(map(chr, continuing)), max_chars, starters, steps
