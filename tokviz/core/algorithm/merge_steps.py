"""`MergeSteps`: the step bookkeeping of timelines made of merges (BPE, WordPiece).

A subclass has ``steps`` (records with ``pair`` and ``length``) and ``corpus_length``. Step k means
"the first k merges"; everything here is derived from that one list.
"""

from __future__ import annotations

from .defaults import TimelineDefaults


class MergeSteps(TimelineDefaults):
    """Counts, clamping and the corpus length at step k, from the ordered merges."""

    steps: list
    corpus_length: int

    @property
    def n_merges(self) -> int:
        return len(self.steps)

    @property
    def n_steps(self) -> int:
        """Steps on the timeline (the model protocol every timeline kind shares)."""
        return len(self.steps)

    @property
    def last_step(self) -> int:
        return len(self.steps)

    def _clamp(self, step: int | None) -> int:
        return self.n_merges if step is None else max(0, min(int(step), self.n_merges))

    def merges(self, step: int | None = None) -> list[tuple[int, int]]:
        """The pairs of the first `step` merges (all by default)."""
        return [s.pair for s in self.steps[: self._clamp(step)]]

    def length_at(self, step: int) -> int:
        """Corpus length in tokens after the first `step` merges."""
        k = self._clamp(step)
        return self.corpus_length if k == 0 else self.steps[k - 1].length
