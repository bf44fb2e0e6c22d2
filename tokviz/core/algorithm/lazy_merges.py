"""`LazyMerges`: a loaded tokenizer's merges in rank order as a sequence whose rows are built when
first read, so opening a model (or a timeline of it) works out no pair until a view asks.

What this leaves out: which tokens merge and in what order (the tokenizer gives `ids`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .records import LoadedMerge


class LazyMerges(Sequence):
    """Row k is ``LoadedMerge(k, ids[k], pair_of(id), token_of(id))``, built on first read and kept;
    `ids` (the token merge k forms) is there without building a row.

    >>> m = LazyMerges([5, 7], lambda i: b"x%d" % i, lambda i: (i - 2, i - 1))
    >>> m[-1], m.n_built, [r.id for r in m[:1]], m.n_built
    (LoadedMerge(index=1, id=7, pair=(5, 6), token=b'x7', count=None), 1, [5], 2)
    """

    def __init__(self, ids: Sequence[int], token_of: Callable[[int], bytes],
                 pair_of: Callable[[int], tuple[int, int] | None]) -> None:
        self.ids = ids
        self._token_of, self._pair_of = token_of, pair_of
        self._rows: dict[int, LoadedMerge] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def _row(self, k: int) -> LoadedMerge:
        row = self._rows.get(k)
        if row is None:
            i = self.ids[k]
            row = self._rows[k] = LoadedMerge(k, i, self._pair_of(i), self._token_of(i))
        return row

    def __getitem__(self, k):  # int -> LoadedMerge, slice -> list
        if isinstance(k, slice):
            return [self._row(j) for j in range(*k.indices(len(self.ids)))]
        n = len(self.ids)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(k)
        return self._row(k)

    def id_at(self, k: int) -> int:
        """Id of the token merge `k` forms (cheap: no pair worked out)."""
        return self.ids[k]

    @property
    def n_built(self) -> int:
        """How many rows were built so far (read once at least): what the views have cost."""
        return len(self._rows)
