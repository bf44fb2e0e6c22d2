"""Character spans of a byte-level encoding made from its ids alone (tiktoken-style tokenizers).

Each token adds the number of characters that begin in it, and starts inside the previous
character when its first byte continues one: `byte_char_spans` of the whole text without looking
at the text. `SpanTable.columns` gives the starts and ends as two lists of ints (what the JSON
writer wants: no tuple per token); `SpanTable.spans` the ``(start, end)`` pairs of an `Encoding`.
What this leaves out: encoding itself (`rank_bpe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from operator import sub

_CONTINUATION = bytes(range(0x80, 0xC0))


class SpanTable:
    """Per id: the characters beginning in the token and whether its first byte continues one."""

    def __init__(self, vocab: Sequence[bytes | None]) -> None:
        self.begun = [len(t.translate(None, _CONTINUATION)) if t is not None else 0 for t in vocab]
        self.inside = [int(bool(t) and 0x80 <= t[0] < 0xC0) for t in vocab]  # type: ignore[index]

    def columns(self, ids: Sequence[int], offset: int, n_chars: int) -> tuple[list[int], list[int]] | None:
        """(starts, ends) of the tokens of a text of `n_chars` characters at `offset`, or None when
        the tokens do not cover it (a pattern that leaves text out).

        >>> SpanTable([b"h", b"\\xc3", b"\\xa9"]).columns([0, 1, 2], 10, 2)
        ([10, 11, 11], [11, 12, 12])
        """
        ends = list(accumulate(map(self.begun.__getitem__, ids), initial=offset))
        if ends[-1] - offset != n_chars:
            return None
        starts = list(map(sub, ends, map(self.inside.__getitem__, ids)))  # (the sums stop at the last id)
        del ends[0]  # token k spans (sums[k] - inside, sums[k + 1])
        return starts, ends

    def parts_columns(self, ids: list[int], parts: Sequence[tuple[int, int, bool]], ends: Sequence[int]
                      ) -> tuple[list[int], list[int]] | None:
        """`columns` of a text cut into ``(start, end, is special)`` `parts` whose ids end at
        `ends` in `ids` (a special token spans its part)."""
        starts: list[int] = []
        stops: list[int] = []
        k = 0
        for (a, b, is_special), e in zip(parts, ends):
            cols = ([a], [b]) if is_special else self.columns(ids[k:e], a, b - a)
            if cols is None:
                return None
            starts.extend(cols[0])
            stops.extend(cols[1])
            k = e
        return starts, stops

    def spans(self, ids: Sequence[int], offset: int, n_chars: int) -> list[tuple[int, int]] | None:
        """`columns` as ``(start, end)`` pairs."""
        cols = self.columns(ids, offset, n_chars)
        return None if cols is None else list(zip(cols[0], cols[1]))
