"""`Literals`: finding many fixed strings in a text at once, leftmost-longest, without a regex.

Special and added tokens are literal strings, and a file may hold a million of them. A regex
alternation of them costs time per alternative at every position (measured: a 1 MB text against
1,000 tokens, 0.7 s; 10,000 tokens, 5-15 s; compiling 10,000 named groups, 46 s). Here the
strings are kept sorted, which is a trie laid out flat: the longest string that starts at a
position is found with binary searches (`bisect`, in C) on a window of the text, and only the
positions holding a first character of some string are tried (one compiled character class
finds them). Matches are leftmost-longest and never overlap, as Hugging Face tokenizers'
Aho-Corasick (``MatchKind::LeftmostLongest``) and tiktoken's longest-first alternation report them.

Cost: building is one sort, O(N log N) comparisons; a search is O(log N) per tried position plus
the lengths of the strings compared, so at most O(text x longest string) where an alternation
is O(text x number of strings).

What this leaves out: what a match means (added-token flags: `tokviz.core.formats.tokenizer_json.added`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator

_WINDOW = 64  # characters looked at first; doubled while a longer string could still match


class Literals:
    """``Literals(strings).finditer(text)``: ``(start, end, index)`` of the leftmost-longest
    non-overlapping occurrences, `index` the position in `strings` of the string found (the
    first of equal ones). Empty strings never match.

    >>> list(Literals(["<s>", "<s>x", "a"]).finditer("x<s>x<s>"))
    [(1, 5, 1), (5, 8, 0)]
    """

    def __init__(self, strings: Iterable[str]) -> None:
        first_index: dict[str, int] = {}
        for k, s in enumerate(strings):
            if s and s not in first_index:
                first_index[s] = k
        self._sorted = sorted(first_index)
        self._index = first_index
        self._longest = max(map(len, self._sorted), default=0)
        firsts = {s[0] for s in self._sorted}
        self._first = re.compile("[" + "".join(map(re.escape, sorted(firsts))) + "]") if firsts else None

    def __len__(self) -> int:
        return len(self._sorted)

    def finditer(self, text: str, pos: int = 0) -> Iterator[tuple[int, int, int]]:
        first = self._first
        if first is None:
            return
        index = self._index
        while True:
            m = first.search(text, pos)
            if m is None:
                return
            p = m.start()
            s = self.longest_at(text, p)
            if s is None:
                pos = p + 1
            else:
                pos = p + len(s)
                yield p, pos, index[s]

    def search(self, text: str) -> tuple[int, int, int] | None:
        """The first match in `text`, or None."""
        return next(self.finditer(text), None)

    def longest_at(self, text: str, p: int) -> str | None:
        """The longest string that occurs in `text` at `p`, or None.

        Every string between (in sorted order) a string `u` that is a prefix of the window and
        the window itself starts with `u`: so the last string <= the window is either a prefix
        of it (the longest) or shares a shorter common prefix with it, which is searched next.
        """
        toks = self._sorted
        n = len(text) - p
        w = min(_WINDOW, n, self._longest)
        while True:
            s = text[p : p + w]
            k = bisect_right(toks, s)
            # a longer string starting with the whole window: look further
            if w < min(n, self._longest) and k < len(toks) and toks[k].startswith(s):
                w = min(2 * w, n, self._longest)
                continue
            break
        k -= 1
        while k >= 0:
            t = toks[k]
            if s.startswith(t):
                return t
            c = _common_prefix(t, s)
            if c == 0:
                return None
            s = s[:c]
            k = bisect_right(toks, s, 0, k) - 1
        return None


def _common_prefix(a: str, b: str) -> int:
    """The length of the common prefix of `a` and `b` (a halving search with ``startswith``)."""
    lo, hi = 0, min(len(a), len(b))  # a[:lo] == b[:lo]; the prefix is no longer than hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo
