"""BoundlessBPE's training run and timeline (the settings, BPE's and the paper's own: whether
supermerges happen and which pretokens a superword may hold, are `tokviz.core.boundless.settings`).

The timeline is a BPE timeline whose steps carry their kind (``merge`` or ``supermerge``); step k
means "the first k steps", and step r makes id ``base + r`` whatever its kind.

What this leaves out (and the paper has): Picky BPE's deletions (the paper's tau; its runs with
tau > 1 have none, as here), and its tie-break inside a kind (the smallest pair of byte strings;
here BPE's: the pair seen first, or Hugging Face's order for the word side).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from tokviz.core.algorithm.staged import StagedTraining
from tokviz.core.bpe.timeline import Timeline, chunk_trainer, merge_budget
from tokviz.core.text.split import parse_split

from .runs import SLICEABLE_SPLITS, SuperwordRule, count_runs
from .settings import BoundlessSettings
from .supertrainer import SuperTrainer
from .tokenizer import BoundlessTokenizer
from .trainer import SUPERMERGE, BoundlessStep, BoundlessTrainer


@dataclass
class BoundlessTimeline(Timeline):
    """BPE's timeline (base vocabulary, ordered steps, ids and specials after them) with steps of
    both kinds. Step k = "the first k steps"."""

    settings: BoundlessSettings
    steps: list[BoundlessStep] = field(default_factory=list)
    n_runs: int = 0  # distinct runs of pretokens a superword may join

    algorithm = "boundless"
    title = "BoundlessBPE"
    step_kinds = True  # each step says its kind (`BoundlessStep.kind`)
    replays_merges = False  # views encode through `tokenizer()`: a BPE replay knows no supermerges
    n_special = 0  # the vocabulary table lists base units first ([UNK] and specials come last)

    @property
    def n_supermerges(self) -> int:
        return sum(s.kind == SUPERMERGE for s in self.steps)

    def kinds(self, step: int | None = None) -> list[str]:
        """The kind of each of the first `step` steps."""
        return [s.kind for s in self.steps[: self._clamp(step)]]

    def superword_ids(self, step: int | None = None) -> frozenset[int]:
        """Ids made by supermerges among the first `step` steps (the token view marks them)."""
        return frozenset(s.id for s in self.steps[: self._clamp(step)] if s.kind == SUPERMERGE)

    def step_note(self, rank: int) -> str:
        """What kind step `rank` is and what it beat (the timeline's caption says it).

        >>> tl = train_boundless(BoundlessSettings(merges=2), texts=["hi hi"])
        >>> tl.step_note(0)
        'a merge inside a pretoken'
        """
        s = self.steps[rank]
        if s.kind == SUPERMERGE:
            rival = f"; the best merge inside a pretoken had {s.rival:,} (a tie goes to the supermerge)" if s.rival else ""
            return f"a supermerge: two whole pretokens, each one token, become one superword{rival}"
        rival = f"; the best supermerge had {s.rival:,}" if s.rival else ""
        return f"a merge inside a pretoken{rival}"

    def tokenizer(self) -> BoundlessTokenizer:
        return BoundlessTokenizer.from_timeline(self)

    def describe(self) -> list[str]:
        n, supers = self.n_merges, self.n_supermerges
        extra = self.vocab_size - self.base_size - n
        parts = f"{self.base_size:,} base + {n - supers:,} merged + {supers:,} superwords"
        lines = [f"{n:,} steps ({supers:,} supermerges) · vocabulary {self.vocab_size:,} tokens ({parts}"
                 + (f" + {extra} special)" if extra else ")")]
        before, after = self.corpus_length, self.length_at(n)
        if before and after:
            lines.append(f"Corpus: {before:,} → {after:,} tokens ({before / after:.2f}× shorter)")
        lines.append(f"{self.n_chunks:,} distinct chunks, {self.n_runs:,} distinct runs of joinable pretokens")
        return lines


class BoundlessTraining(StagedTraining):
    """One BoundlessBPE run: count the chunks and the runs of pretokens, then iterate `steps()`."""

    def __init__(self, settings: BoundlessSettings, *, texts: Sequence[str] = (),
                 table: Mapping[str, int] | None = None) -> None:
        super().__init__(settings, texts=texts, table=table)
        if settings.units == "bytes":
            merge_budget(settings.bpe_settings(), 256)  # fail before reading the corpus
        self._runs: dict[tuple[str, ...], int] = {}
        self._chunks: dict[str, int] = {}  # chunk counts made while counting the runs

    def prepare(self, *, should_stop=None, progress=None, processes: int = 1):
        s = self.settings
        if s.supermerges == "on" and self.table is None:  # a word table has no neighbours
            # the chunks are counted in the same pass, where that gives the same counts
            self._chunks = {}
            self._runs = count_runs(self.texts, parse_split(s.split), SuperwordRule(s.superwords),
                                    specials=s.special_tokens, spec=s.split, should_stop=should_stop,
                                    chunks=self._chunks if s.split in SLICEABLE_SPLITS else None)
        return super().prepare(should_stop=should_stop, progress=progress, processes=processes)

    def count(self, *, should_stop=None, progress=None, processes: int = 1) -> dict[str, int]:
        counts, self._chunks = self._chunks, {}
        if not counts:
            return super().count(should_stop=should_stop, progress=progress, processes=processes)
        if progress is not None:
            progress(1, 1)
        return counts

    def _setup(self, counts: dict[str, int], should_stop) -> BoundlessTimeline:
        s = self.settings
        base, self.budget, words = chunk_trainer(s.bpe_settings(), counts)
        supers, chunk_of_token = None, {}
        if self._runs:
            number = {c: i for i, c in enumerate(counts)}
            runs = [[number[c] for c in run] for run in self._runs]
            supers = SuperTrainer(runs, list(self._runs.values()), n_chunks=len(counts), min_count=s.min_count)
            vocab, index = base.token_bytes(), base.index() if base.units == "chars" else None
            held = {c for run in runs for c in run}
            chunks = list(counts)
            chunk_of_token = {b"".join(vocab[i] for i in base.symbolize(chunks[c], index=index)): c for c in held}
        self._trainer = BoundlessTrainer(words, supers, base.token_bytes(), chunk_of_token)
        timeline = BoundlessTimeline(s, base, corpus_length=words.length, n_chunks=len(counts),
                                     n_runs=len(self._runs))
        self._runs = {}
        return timeline

    def _trainer_steps(self) -> Iterator[BoundlessStep]:
        return self._trainer.steps(max_steps=self.budget)


def train_boundless(settings: BoundlessSettings, *, texts: Sequence[str] = (),
                    table: Mapping[str, int] | None = None) -> BoundlessTimeline:
    """Train to completion: ``train_boundless(BoundlessSettings(merges=100), texts=[text])``."""
    return BoundlessTraining(settings, texts=texts, table=table).run()
