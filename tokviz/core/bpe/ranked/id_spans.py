"""Character spans of a byte-level encoding made from its ids alone (tiktoken-style tokenizers).

Each token adds the number of characters that begin in it, and starts inside the previous
character when its first byte continues one: `byte_char_spans` of the whole text without looking
at the text. `SpanTable.columns` gives the starts and ends as two lists of ints (what the JSON
writer wants: no tuple per token); `SpanTable.spans` the ``(start, end)`` pairs of an `Encoding`.
Long id lists (`ARRAY_MIN` ids or more) are summed with numpy (`array_columns`), short ones with
lists (no numpy import for a short text). What this leaves out: encoding itself (`rank_bpe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from operator import sub

_CONTINUATION = bytes(range(0x80, 0xC0))
ARRAY_MIN = 1 << 14  # ids from which numpy sums the spans


class SpanTable:
    """Per id: the characters beginning in the token and whether its first byte continues one."""

    def __init__(self, vocab: Sequence[bytes | None]) -> None:
        self._vocab = vocab
        self._lists: tuple[list[int], list[int]] | None = None  # (begun, inside), made on first use
        self._arrays = None  # the same as numpy arrays, made on first use

    def _tables(self) -> tuple[list[int], list[int]]:
        if self._lists is None and self._arrays is not None:  # from numpy's: 20x faster than the loop
            self._lists = self._arrays[0].tolist(), self._arrays[1].tolist()
        if self._lists is None:  # a short text needs no numpy import
            vocab = self._vocab
            begun = [len(t.translate(None, _CONTINUATION)) if t is not None else 0 for t in vocab]
            inside = [int(bool(t) and 0x80 <= t[0] < 0xC0) for t in vocab]  # type: ignore[index]
            self._lists = begun, inside
        return self._lists

    def warm_up(self) -> None:
        """Build the tables spans need (numpy's for long encodings, lists for short ones, such as
        a window's chunks) before they are needed."""
        self._numpy_tables()
        self._tables()

    def _numpy_tables(self):
        """(begun, inside) as int64 arrays, from the bytes of all tokens at once."""
        if self._arrays is None:
            import numpy as np

            toks = [t or b"" for t in self._vocab]
            lens = np.fromiter(map(len, toks), np.int64, len(toks))
            data = np.frombuffer(b"".join(toks), np.uint8)
            starts = np.cumsum(lens) - lens
            begins = np.concatenate(([0], np.cumsum((data & 0xC0) != 0x80)))  # characters begun before byte k
            begun = begins[starts + lens] - begins[starts]
            first = data[np.minimum(starts, max(len(data) - 1, 0))] if len(data) else np.zeros(len(toks), np.uint8)
            inside = ((lens > 0) & ((first & 0xC0) == 0x80)).astype(np.int64)
            self._arrays = begun, inside
        return self._arrays

    def array_columns(self, ids: Sequence[int], offset: int, n_chars: int):
        """`columns` as two int64 numpy arrays (numpy sums them), or None."""
        import numpy as np

        begun, inside = self._numpy_tables()
        arr = ids if isinstance(ids, np.ndarray) else np.fromiter(ids, np.int64, len(ids))  # twice np.array's speed
        ends = np.cumsum(begun[arr])
        if (int(ends[-1]) if len(ends) else 0) != n_chars:
            return None
        ends += offset
        return ends - begun[arr] - inside[arr], ends

    def columns(self, ids: Sequence[int], offset: int, n_chars: int) -> tuple[list[int], list[int]] | None:
        """(starts, ends) of the tokens of a text of `n_chars` characters at `offset`, or None when
        the tokens do not cover it (a pattern that leaves text out).

        >>> SpanTable([b"h", b"\\xc3", b"\\xa9"]).columns([0, 1, 2], 10, 2)
        ([10, 11, 11], [11, 12, 12])
        """
        if len(ids) >= ARRAY_MIN:
            cols = self.array_columns(ids, offset, n_chars)
            return None if cols is None else (cols[0].tolist(), cols[1].tolist())
        begun, inside = self._tables()
        ends = list(accumulate(map(begun.__getitem__, ids), initial=offset))
        if ends[-1] - offset != n_chars:
            return None
        starts = list(map(sub, ends, map(inside.__getitem__, ids)))  # (the sums stop at the last id)
        del ends[0]  # token k spans (sums[k] - inside, sums[k + 1])
        return starts, ends

    def parts_columns(self, ids: list[int], parts: Sequence[tuple[int, int, bool]], ends: Sequence[int]):
        """`columns` of a text cut into ``(start, end, is special)`` `parts` whose ids end at
        `ends` in `ids` (a special token spans its part); numpy arrays when there are
        `ARRAY_MIN` ids or more, else lists."""
        if len(ids) < ARRAY_MIN:
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
        import numpy as np

        arr = np.fromiter(ids, np.int64, len(ids))
        firsts, lasts = [], []
        k = 0
        for (a, b, is_special), e in zip(parts, ends):
            if is_special:
                cols = np.array([a]), np.array([b])
            else:
                cols = self.array_columns(arr[k:e], a, b - a)
            if cols is None:
                return None
            firsts.append(cols[0])
            lasts.append(cols[1])
            k = e
        if not firsts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(firsts), np.concatenate(lasts)

    def spans(self, ids: Sequence[int], offset: int, n_chars: int) -> list[tuple[int, int]] | None:
        """`columns` as ``(start, end)`` pairs."""
        cols = self.columns(ids, offset, n_chars)
        return None if cols is None else list(zip(cols[0], cols[1]))
