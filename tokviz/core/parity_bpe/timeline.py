"""Parity-aware BPE's training run and timeline (the settings: `tokviz.core.parity_bpe.settings`).

The corpus is multi-parallel: the training text is split into documents as ``tokviz compare
--by-document`` splits it (`tokviz.core.compare.documents.split_documents`: the UDHR file gives
340, one per translation), each document standing for one language. The timeline is a BPE
`Timeline` (the merges replay, encode and export as any BPE model's) whose steps are
`ParityStep`s (the document each merge served, what it saved in each), plus the documents'
titles, their first token counts and the reference document (English when present) the premiums
are measured against (`costs`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from tokviz.core.algorithm.staged import StagedTraining
from tokviz.core.bpe.timeline import Timeline, base_ids, check_memory, merge_budget
from tokviz.core.bpe.units import BaseVocab
from tokviz.core.compare.documents import find_reference, split_documents
from tokviz.core.errors import Cancelled, CorpusError, SettingsError
from tokviz.core.text.chunks import Progress, ShouldStop, count_chunks
from tokviz.core.text.corpus import read_text
from tokviz.core.text.split import parse_split

from .costs import CostTable, Parity, gini_curve, parity_at
from .reference import GLOBAL
from .settings import ParitySettings
from .trainer import ParityStep, ParityTrainer


@dataclass
class ParityTimeline(Timeline):
    """A BPE timeline whose merges each served one document (language) of a parallel corpus."""

    settings: ParitySettings
    documents: tuple[str, ...] = ()  # the documents' titles
    initial: tuple[int, ...] = ()  # each document's tokens before any merge
    reference: int = 0  # index of the document premiums are measured against

    algorithm = "parity-aware"
    title = "Parity-aware BPE"
    step_kinds = True  # each step says which document it served (`ParityStep.kind`, `step_note`)
    step_kind_title = "Served"

    def __post_init__(self) -> None:
        self._costs: CostTable | None = None
        self._gini: list[float] = []  # the chart's Gini per step, extended as steps arrive

    def chart_second_series(self) -> tuple[str, list[float]]:
        """The timeline chart's middle plot: the Gini of tokens per document after each step."""
        table = self.costs()
        done = len(self._gini)
        if done > table.n_steps + 1:
            done = 0
            self._gini = []
        ks = range(done, table.n_steps + 1)
        self._gini += [g if g is not None else 0.0 for g in gini_curve(table, ks)] if len(ks) else []
        return "Gini of tokens per document", self._gini[: self.n_merges + 1]

    def chart_marks(self) -> list[tuple[int, str]]:
        """A line where the hybrid's global merges end and parity begins."""
        m = self.settings.hybrid
        return [(m, "parity from here")] if 0 < m < self.n_merges else []

    def costs(self) -> CostTable:
        """Tokens per document at every step (extended to the steps made so far)."""
        if self._costs is None or len(self.initial) != self._costs.at(0).size:
            self._costs = CostTable(self.initial)
        table = self._costs
        if table.n_steps > self.n_merges:  # the step list was replaced by a shorter one
            table = self._costs = CostTable(self.initial)
        table.extend(self.steps[table.n_steps:])
        return table

    def served_at(self, k: int) -> int | None:
        """The document step k (the k-th merge) served: an index, `GLOBAL`, or None at step 0."""
        return self.steps[k - 1].served if 0 < k <= self.n_merges else None

    def served_title(self, k: int) -> str | None:
        """``"served: <title>"``'s title for step k (``"all documents"`` for a global step)."""
        d = self.served_at(k)
        if d is None:
            return None
        return "all documents (a global merge)" if d == GLOBAL else self.documents[d]

    def step_kind(self, rank: int) -> str:
        """The title of the document merge `rank` served ("all documents" for a global merge)."""
        return self.served_title(rank + 1) or ""

    def step_note(self, rank: int) -> str:
        """Which language merge `rank` served and what it did to the costs (the timeline's caption).

        >>> tl = train(ParitySettings(split="whitespace", merges=1), texts=["A\\n  aaab\\n\\nB\\n  cdcdcd\\n"])
        >>> tl.step_note(0)
        'served: B (document 2, the costliest: 7 → 4 tokens) · premium 0.80 · Gini 0.056'
        """
        s = self.steps[rank]
        after = self.parity_at(rank + 1)
        figures = (f"premium {after.premiums[s.served]:.2f} · " if s.served != GLOBAL and
                   after.premiums[s.served] is not None else "")
        figures += f"Gini {after.gini:.3f}" if after.gini is not None else "Gini unknown"
        if s.served == GLOBAL:
            return f"served: all documents (a global merge, as plain BPE makes) · {figures}"
        before = int(self.costs().at(rank)[s.served])
        return (f"served: {self.documents[s.served]} (document {s.served + 1}, the costliest: "
                f"{before:,} → {after.tokens[s.served]:,} tokens) · {figures}")

    def parity_at(self, k: int) -> Parity:
        """Tokens, premiums and Gini of the documents after the first `k` merges."""
        k = self._clamp(k)
        return parity_at(self.costs().at(k), self.reference, step=k, served=self.served_at(k))

    def describe(self) -> list[str]:
        lines = super().describe()
        if self.documents:
            first, last = parity_at(self.costs().at(0), self.reference), self.parity_at(self.n_merges)
            served = {s.served for s in self.steps if s.served != GLOBAL}
            n_global = sum(1 for s in self.steps if s.served == GLOBAL)
            lines.append(f"{len(self.documents):,} documents · {len(served):,} served by a merge"
                         + (f" · {n_global:,} global merges first" if n_global else ""))
            if first.gini is not None and last.gini is not None:
                lines.append(f"Gini of tokens per document: {first.gini:.3f} → {last.gini:.3f}")
        return lines


class ParityTraining(StagedTraining):
    """One parity-aware run in stages: `prepare()` (split into documents + count), then `steps()`."""

    collector_free = True

    def __init__(self, settings: ParitySettings, *, texts: Sequence[str] = (),
                 table: Mapping[str, int] | None = None) -> None:
        super().__init__(settings, texts=texts, table=table)
        if table is not None:
            raise SettingsError("parity-aware BPE trains on the documents of a parallel text, not on counts; "
                                "give the text (or --parallel FILE)")
        if settings.units == "bytes":
            merge_budget(settings, 256)  # fail before reading the corpus
        if settings.parallel is not None:
            self.texts = [read_text(settings.parallel)]
        self.documents: list[tuple[str, dict[str, int]]] = []  # (title, {chunk: count}) per document

    def count(self, *, should_stop: ShouldStop | None = None, progress: Progress | None = None,
              processes: int = 1) -> dict[str, int]:
        """Each document's ``{chunk: count}`` (kept in `documents`); returns all of them together."""
        splitter, specials = parse_split(self.settings.split), self.settings.special_tokens
        documents, together = [], {}
        total, done = sum(map(len, self.texts)), 0
        for text in self.texts:
            for doc in split_documents(text):
                if should_stop is not None and should_stop():
                    raise Cancelled()
                counts = count_chunks([text[doc.start:doc.end]], splitter, specials=specials)
                if progress is not None:
                    progress(done + doc.end, total)
                if counts:
                    documents.append((doc, counts))
                    for c, n in counts.items():
                        together[c] = together.get(c, 0) + n
            done += len(text)
        if not together:
            raise CorpusError("the corpus has no text to train on (it is empty after splitting)")
        self.documents = [(d.title, c) for d, c in documents]
        self._reference = find_reference([d for d, _ in documents])
        return together

    def _setup(self, counts: dict[str, int], should_stop) -> ParityTimeline:
        s = self.settings
        base = BaseVocab.from_chunks(s.units, counts)
        self.budget = merge_budget(s, base.size)
        check_memory(sum(len(c) * 2 for c in counts) + sum(len(c) for _, d in self.documents for c in d))
        seqs, weights = [], []
        for _, doc in self.documents:
            seqs.append(base_ids(base, doc))  # (flat ids, lengths)
            weights.append(list(doc.values()))
        everything = (base_ids(base, counts), list(counts.values())) if s.hybrid else None
        self._trainer = ParityTrainer(seqs, weights, base.token_bytes(), min_count=s.min_count, hybrid=s.hybrid,
                                      everything=everything)
        titles = tuple(t for t, _ in self.documents)
        self.documents = []  # the trainer holds what it needs
        return ParityTimeline(s, base, corpus_length=self._trainer.length, n_chunks=len(counts),
                              documents=titles, initial=self._trainer.initial, reference=self._reference)

    def _trainer_steps(self) -> Iterator[ParityStep]:
        return self._trainer.steps(max_merges=self.budget)


def train(settings: ParitySettings, *, texts: Sequence[str] = ()) -> ParityTimeline:
    """Train to completion: ``train(ParitySettings(merges=300), texts=[parallel_text])``."""
    return ParityTraining(settings, texts=texts).run()
