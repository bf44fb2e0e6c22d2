"""WordPiece's encoder: greedy longest-match-first (BERT), shared by trained and loaded tokenizers.

From a word's first character, take the longest piece of the `first` table that is a prefix of
the word; from every later position, the longest piece of the `rest` table (the continuation
pieces, ``##`` already taken off) that starts there. BERT's rule: when some position has no
piece, or the word has more than `max_chars` characters, the whole word is one unknown token.

Example with ``first = {un, unbe}``, ``rest = {lie, v, able}``: ``unbelievable`` -> ``unbe``
``lie`` ``v`` ``able`` (at the start ``unbe`` is looked up first, ``un`` would be next).

The lookups at a position start from the longest piece beginning with that position's character
(none when no piece begins with it), not from the longest piece of the vocabulary: the same
pieces are found with far fewer lookups. Used by `WordPieceTokenizer` (a table per step) and
Hugging Face's WordPiece model. What this leaves out: the vocabulary's forms and ids, spans
relative to the text, explanations' wording (the callers).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def _reach(pieces: Iterable[str]) -> dict[str, int]:
    """First character -> length of the longest piece starting with it."""
    reach: dict[str, int] = {}
    for p in pieces:
        if p and len(p) > reach.get(p[0], 0):
            reach[p[0]] = len(p)
    return reach


class GreedyMatcher:
    """Greedy longest-match-first over two tables of piece text -> id: `first` at a word's start,
    `rest` (continuation pieces without their prefix) after it."""

    __slots__ = ("_first_reach", "_rest_reach", "first", "longest", "rest")  # longest: of any piece

    def __init__(self, first: Mapping[str, int], rest: Mapping[str, int]) -> None:
        self.first, self.rest = first, rest
        self._first_reach, self._rest_reach = _reach(first), _reach(rest)
        self.longest = max(max(self._first_reach.values(), default=0), max(self._rest_reach.values(), default=0))

    def match(self, word: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and character spans of the pieces matched from the word's start, stopping where no
        piece matches: the word is covered when the last span ends at ``len(word)``. Every
        candidate longer than a match (up to `longest`) was looked up and is no piece."""
        n = len(word)
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        rest, rest_reach = self.rest, self._rest_reach
        start, index, reach = 0, self.first, self._first_reach
        while start < n:
            end = min(n, start + reach.get(word[start], 0))
            while end > start:
                tid = index.get(word[start:end])
                if tid is not None:
                    break
                end -= 1
            else:
                break
            ids.append(tid)
            spans.append((start, end))
            start, index, reach = end, rest, rest_reach
        return ids, spans

    def segment(self, word: str, *, max_chars: int) -> tuple[list[int], list[tuple[int, int]]] | None:
        """`match` under BERT's rule: ids and character spans of the pieces of `word`, or None
        when the whole word is one unknown token (longer than `max_chars`, or not covered)."""
        n = len(word)
        if n > max_chars:
            return None
        whole = self.first.get(word) if n else None
        if whole is not None:  # most words: the longest match at the start is the whole word
            return [whole], [(0, n)]
        ids, spans = self.match(word)
        return (ids, spans) if (spans[-1][1] if spans else 0) == n else None
