"""SentencePiece's precompiled character map: the normalization rules of a ``.model`` file.

The ``precompiled_charsmap`` blob is ``<trie size: u32 LE><double-array trie><normalized strings>``.
The trie is darts-clone's double array (suffixes shared, as in a DAWG): each 32-bit unit has a
label (low byte), a leaf flag (bit 8) and an offset to its children (bits 10-31, shifted by 8
when bit 9 is set); a key's value is the byte offset of its replacement in the strings blob,
which ends at a NUL. Looking a text up is darts-clone's ``commonPrefixSearch``: follow the bytes
while ``label == byte``, collecting the keys that end on the way.

Two readers use it: SentencePiece's normalizer takes the *longest* key at each position among
the first 32 found (`CharsMap.longest`); Hugging Face's ``Precompiled`` normalizer takes the
*first* (shortest) key that is a prefix of a grapheme (`CharsMap.first`). `CharsMap.hot` is a
character class of every character that can take part in a match (a key of one character, or any
character after the first of a longer key): text without them is left as it is, so only those
places are looked up.

A blob is checked as sentencepiece checks it before use (`check_blob`, `check_units`), so a
corrupt one is refused with one line instead of being read out of bounds; besides, tokviz refuses
a trie whose keys loop back on themselves or whose walk passes a budget (no sentencepiece build
makes either, and both would make reading it unbounded).

What this leaves out: building a charsmap from rules (sentencepiece's ``normalization_rule_tsv``).
"""

from __future__ import annotations

import struct
from functools import cached_property

import numpy as np
import regex

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.sentencepiece.charsmap_scan import TooDeep, scan_levels

_LABEL_MASK = (1 << 31) | 0xFF
_VALUE_MASK = (1 << 31) - 1
_MEMO_SIZE = 50_000
_MAX_RESULTS = 32  # sentencepiece's kMaxTrieResultsSize: the longest key is taken among this many
_SCAN_BUDGET = 4_000_000  # trie steps `CharsMap._scan` may take (a real NFKC charsmap takes ~0.1M)


def _broken(why: str) -> ModelFormatError:
    return ModelFormatError(f"the precompiled charsmap is broken ({why})")


def check_blob(blob: bytes) -> int:
    """The trie's size in bytes, once the blob passes sentencepiece's
    ``DecodePrecompiledCharsMap``: a header, a trie of whole 1024-byte blocks (darts-clone
    allocates 256 units at a time) inside the blob, and replacements ending with a NUL."""
    if len(blob) <= 4:
        raise _broken("shorter than its header")
    (size,) = struct.unpack_from("<I", blob, 0)
    if size >= len(blob) - 4:
        raise _broken("its trie is larger than the blob")
    if size < 1024 or size % 1024:
        raise _broken(f"its trie of {size} bytes is not whole blocks of 1024")
    if blob[-1] != 0:
        raise _broken("its replacements do not end with a NUL")
    return size


def check_units(units: np.ndarray, n_strings: int) -> None:
    """sentencepiece's validation of the double array (``DoubleArray::validate``), unit by unit:
    the root has label 0 and children; every value is an offset inside the replacements; every
    other unit's children start inside the array (whole blocks: so does every child) and a unit
    marked as having a leaf has a value unit there. Example: a root ``0x80000000`` (a value, not a
    node) or a value unit ``0xFFFFFFFF`` (offset 2**31 - 1) is refused."""
    u = units.astype(np.int64)
    n = len(u)
    offset = (u >> 10) << ((u & (1 << 9)) >> 6)
    if (u[0] & _LABEL_MASK) != 0 or offset[0] == 0:
        raise _broken("its root is not a node")
    is_value = (u >> 31) == 1
    if np.any(is_value & ((u & _VALUE_MASK) >= n_strings)):
        raise _broken("a value points past its replacements")
    base = np.arange(n, dtype=np.int64) ^ offset
    node = ~is_value
    if np.any(node & (base >= n)):
        raise _broken("a node's children are outside the trie")
    leaf = node & (((u >> 8) & 1) == 1)
    if np.any(leaf & ~is_value[np.minimum(base, n - 1)]):
        raise _broken("a node marked as a key has no value")


def _offset(u: int) -> int:
    return (u >> 10) << ((u & (1 << 9)) >> 6)


def _char_len(lead: int) -> int:
    return 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


class CharsMap:
    """A parsed precompiled charsmap. ``CharsMap(blob)``; an empty blob is not a charsmap."""

    def __init__(self, blob: bytes) -> None:
        size = check_blob(blob)
        units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4)
        self.strings = bytes(blob[4 + size :])
        check_units(units, len(self.strings))
        self._array = units
        self.units: list[int] = units.tolist()
        self._replacement: dict[int, str] = {}
        self._longest: dict[str, tuple[int, str] | None] = {}
        self._first: dict[str, str | None] = {}
        self.single, self.continuing, self.max_chars, self.starters = self._scan()

    @cached_property
    def hot(self) -> regex.Pattern | None:
        """A character class of every character that can take part in a match (None: no key)."""
        chars = sorted(set(self.single) | self.continuing)
        return regex.compile("[" + "".join(regex.escape(c) for c in chars) + "]") if chars else None

    # -- reading the trie --------------------------------------------------------------------------

    def _value(self, v: int) -> str:
        """The replacement at byte offset `v` of the strings blob (up to the NUL)."""
        hit = self._replacement.get(v)
        if hit is None:
            if v >= len(self.strings):
                raise ModelFormatError(f"the precompiled charsmap points past its strings ({v})")
            end = self.strings.find(b"\0", v)
            raw = self.strings[v : end if end >= 0 else len(self.strings)]
            try:
                hit = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ModelFormatError("the precompiled charsmap holds a replacement that is not UTF-8") from None
            self._replacement[v] = hit
        return hit

    def _matches(self, data: bytes) -> list[tuple[int, int]]:
        """commonPrefixSearch: ``(length in bytes, value)`` of every key that is a prefix of `data`."""
        units = self.units
        n_units = len(units)
        pos = _offset(units[0])
        out = []
        for i, c in enumerate(data):
            if c == 0:
                break
            pos ^= c
            if pos >= n_units:
                break
            u = units[pos]
            if (u & _LABEL_MASK) != c:
                break
            pos ^= _offset(u)
            if (u >> 8) & 1:
                if pos >= n_units:
                    raise ModelFormatError("the precompiled charsmap is broken (a value outside the trie)")
                out.append((i + 1, units[pos] & _VALUE_MASK))
        return out

    def _scan(self) -> tuple[dict[str, str], set[str], int, set[str]]:
        """Every one-character key with its replacement, every character that follows another in
        a key, the most characters a key has, and every character a longer key starts with: read
        level by level in numpy (`scan_levels`), or, for a trie too deep for that, by `walk`."""
        try:
            roots, continuing, longest, starters, steps = scan_levels(self._array, _SCAN_BUDGET)
        except TooDeep:
            return self.walk()
        if steps > _SCAN_BUDGET:
            raise _broken("its trie is too tangled to read")
        units = self.units
        single = {}
        for ch, node in roots:
            if (units[node] >> 8) & 1:
                single[ch] = self._value(units[node ^ _offset(units[node])] & _VALUE_MASK)
        return single, continuing, longest, starters

    def walk(self) -> tuple[dict[str, str], set[str], int, set[str]]:
        """`_scan` node by node in Python, each node once; it names what is wrong with a trie that
        loops back on itself."""
        units = self.units
        by_base: dict[int, list[tuple[int, int]]] = {}
        for i, u in enumerate(units):
            lab = u & _LABEL_MASK
            if 0 < lab < 256:
                by_base.setdefault(i ^ lab, []).append((lab, i))

        steps = [0]  # trie steps taken, against `_SCAN_BUDGET`
        by_children: dict[int, list[tuple[str, int]]] = {}  # `chars_from` depends on the children's base

        def chars_from(node: int) -> list[tuple[str, int]]:
            """(character, node after it) for every character readable from `node`."""
            children = node ^ _offset(units[node])
            hit = by_children.get(children)
            if hit is not None:
                return hit
            out = []
            stack = [(node, b"")]
            while stack:
                pos, pending = stack.pop()
                kids = by_base.get(pos ^ _offset(units[pos]), ())
                steps[0] += len(kids) + 1
                if steps[0] > _SCAN_BUDGET:
                    raise _broken("its trie is too tangled to read")
                for lab, child in kids:
                    data = pending + bytes((lab,))
                    if len(data) == _char_len(data[0]):
                        try:
                            out.append((data.decode("utf-8"), child))
                        except UnicodeDecodeError:
                            pass  # a key that is not UTF-8 can never match text
                    elif len(data) < _char_len(data[0]) and (len(data) == 1 or 0x80 <= lab < 0xC0):
                        stack.append((child, data))
            by_children[children] = out
            return out

        def has_leaf(node: int) -> bool:
            return bool((units[node] >> 8) & 1)

        def leaf_value(node: int) -> int:
            return units[node ^ _offset(units[node])] & _VALUE_MASK

        single: dict[str, str] = {}
        continuing: set[str] = set()
        roots = chars_from(0)
        for ch, node in roots:
            if has_leaf(node):
                single[ch] = self._value(leaf_value(node))
        # every character readable after the first one, and the longest key: depth first, each
        # node once, its depth once its children are done (a child still open is a loop)
        depth: dict[int, int] = {}  # node -> most characters readable from it (done nodes)
        has_next: set[int] = set()
        for _, root in roots:
            if root in depth:
                continue
            path = [(root, iter(chars_from(root)))]
            open_nodes = {root}
            while path:
                node, rest = path[-1]
                for ch, n in rest:
                    steps[0] += 1
                    if steps[0] > _SCAN_BUDGET:
                        raise _broken("its trie is too tangled to read")
                    continuing.add(ch)
                    has_next.add(node)
                    if n in open_nodes:
                        raise _broken("its trie loops back on itself")
                    if n not in depth:
                        open_nodes.add(n)
                        path.append((n, iter(chars_from(n))))
                        break
                else:
                    path.pop()
                    open_nodes.discard(node)
                    depth[node] = 1 + max((depth[n] for _, n in chars_from(node)), default=0)
        longest = max((depth[node] for _, node in roots), default=1)
        starters = {ch for ch, node in roots if node in has_next}
        return single, continuing, longest, starters

    # -- lookups -----------------------------------------------------------------------------------

    def longest(self, text: str, pos: int) -> tuple[int, str] | None:
        """SentencePiece's rule: the longest key starting at `pos` of `text` among the first
        `_MAX_RESULTS` (shortest first), as (characters it covers, replacement), or None. Keys that
        end inside a character are ignored."""
        window = text[pos : pos + self.max_chars]
        memo = self._longest
        if window in memo:
            return memo[window]
        data = window.encode("utf-8", "surrogatepass")
        bounds = {0}
        n = 0
        for c in window:
            n += len(c.encode("utf-8", "surrogatepass"))
            bounds.add(n)
        best = None
        for length, value in self._matches(data)[:_MAX_RESULTS]:
            if length in bounds:
                best = (length, value)
        out = None
        if best is not None:
            chars = len(data[: best[0]].decode("utf-8", "surrogatepass"))
            out = (chars, self._value(best[1]))
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[window] = out
        return out

    def first(self, s: str) -> str | None:
        """Hugging Face's ``transform``: the replacement of the first (shortest) key that is a
        prefix of `s`, or None."""
        memo = self._first
        if s in memo:
            return memo[s]
        found = self._matches(s.encode("utf-8", "surrogatepass"))
        out = self._value(found[0][1]) if found else None
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[s] = out
        return out
