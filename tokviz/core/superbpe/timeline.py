"""SuperBPE's training run and timeline (the settings: `tokviz.core.superbpe.settings`).

Stage 1 is plain BPE (`tokviz.core.bpe`) on the corpus cut with the chosen split, up to the
transition t. Stage 2 keeps those t merges and goes on with BPE on the corpus cut with the
stage-2 split (`tokviz.core.superbpe.split`), which no longer cuts at spaces, so a merge may join
words into a superword (" of the"). Each stage-2 chunk starts as the first t merges leave it when
applied in rank order over the whole chunk (what the finished tokenizer does,
`tokviz.core.superbpe.tokenizer`); a second `BpeTrainer` then runs on those chunks
(`StageTwoTrainer`: its many-site merges compiled when numba is there), its merges numbered on
from t. Step k of the timeline is still "the first k merges": for k <= t exactly plain BPE's step
k on the same corpus and settings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from tokviz.core.bpe.timeline import Timeline, Training, check_memory
from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.bpe.trainer import HF_BYTE_ORDER, BpeTrainer, MergeStep
from tokviz.core.gc_pause import collector_paused, release_free_memory
from tokviz.core.processes.fork import ChildFailed
from tokviz.core.text.chunks import count_chunks, count_word_table
from tokviz.core.text.split import parse_split

from . import pieces
from .compiled import StageTwoTrainer, load_kernels
from .settings import SuperBpeSettings
from .split import STAGE_TWO
from .stage_two import stage_two_start
from .tokenizer import SuperBpeTokenizer


@dataclass(frozen=True, slots=True)
class StageTwoStep(MergeStep):
    """A merge of stage 2 (its pair may cross a space). The steps say where stage 2 began, so a
    timeline rebuilt from its steps alone (the window's, fed by a training process) knows it."""


@dataclass
class SuperBpeTimeline(Timeline):
    """A BPE timeline whose merges from `transition` on were learned across spaces."""

    @property
    def transition(self) -> int:
        """Merges made by stage 1: the settings' t, or fewer when stage 1 ran out of pairs."""
        steps = self.steps
        lo, hi = 0, len(steps)
        while lo < hi:  # the first stage-2 step (stage 1's steps all come first)
            mid = (lo + hi) // 2
            if isinstance(steps[mid], StageTwoStep):
                hi = mid
            else:
                lo = mid + 1
        return lo if lo < len(steps) else min(self.settings.transition, len(steps))

    algorithm = "superbpe"
    title = "SuperBPE"
    # views encode with `tokenizer()` (stage-2 chunks), not a plain BPE tokenizer rebuilt from the merges
    own_encoder = True

    def tokenizer(self) -> BpeTokenizer:
        return SuperBpeTokenizer.from_timeline(self)

    def superwords(self) -> int:
        """How many merged tokens hold a space inside (not only at the start)."""
        return sum(1 for s in self.steps[self.transition:] if is_superword(s.token))

    def superword_ids(self, step: int | None = None) -> frozenset[int]:
        """Ids of the superwords among the first `step` merges (the token view marks them)."""
        steps = self.steps[self.transition: self._clamp(step)]
        return frozenset(s.id for s in steps if is_superword(s.token))

    def chart_marks(self) -> list[tuple[int, str]]:
        """Steps the timeline chart marks with a labelled line: where superwords may start."""
        return [(self.transition, "superwords from here")] if self.transition < self.n_merges else []

    def chart_second_series(self) -> tuple[str, list[float]]:
        """The chart's middle plot for this timeline: (caption, value at step 0..N). The vocabulary
        grows by one a merge whatever happens; bytes per token show the jump superwords bring."""
        unit = "Bytes" if self.base.units == "bytes" else "Characters"
        total = self.corpus_length
        lengths = [total] + [s.length for s in self.steps]
        return f"{unit} per token", [total / n if n else 0.0 for n in lengths]

    def describe(self) -> list[str]:
        lines = super().describe()
        lines.insert(1, f"Transition at merge {self.transition:,}: {self.superwords():,} superword tokens after it")
        return lines


def is_superword(token: bytes) -> bool:
    """A token with a space after its first byte: it spans a word boundary ("of the", "s, and")."""
    return b" " in token[1:].rstrip(b" ")


class SuperBpeTraining(Training):
    pieces_train_alike = False  # stage two's chunks run across lines: it counts the texts whole
    """Stage 1 (plain BPE, `Training`'s trainer) to the transition, then stage 2 on stage-2 chunks."""

    def __init__(self, settings: SuperBpeSettings, *, texts: Sequence[str] = (),
                 table: Mapping[str, int] | None = None) -> None:
        super().__init__(settings, texts=texts, table=table)
        self._stage_two_counts: dict[str, int] | None = {}
        self._stage_two_texts: list[str] | None = None  # kept for `pieces.count_aside` instead

    def count(self, *, should_stop=None, progress=None, processes: int = 1) -> dict[str, int]:
        s = self.settings
        if self.table is not None:
            self._stage_two_counts = count_word_table(self.table, STAGE_TWO, specials=s.special_tokens)
        elif s.transition > 0 and pieces.may_count_aside(self.texts, s.split, processes):
            # counted compiled by a child while stage 1 merges (`_trainer_steps`): the texts stay
            self._stage_two_counts, self._stage_two_texts = None, list(self.texts)
        else:
            # counted here, while the texts are still at hand; the stage-2 split cuts a large text
            # only where no stage-2 chunk runs across (`STAGE_TWO.safe_boundary`), so it counts in
            # parallel as the stage-1 splits do
            self._stage_two_counts = count_chunks(self.texts, STAGE_TWO, specials=s.special_tokens,
                                                  processes=processes, should_stop=should_stop)
        return super().count(should_stop=should_stop, progress=progress, processes=processes)

    def _setup(self, counts: dict[str, int], should_stop) -> SuperBpeTimeline:
        tl = super()._setup(counts, should_stop)
        self._stage_one_chunks = list(counts)
        return SuperBpeTimeline(self.settings, tl.base, corpus_length=tl.corpus_length, n_chunks=tl.n_chunks)

    def _trainer_steps(self) -> Iterator[MergeStep]:
        s, budget = self.settings, self.budget
        t = s.transition if budget is None else min(s.transition, budget)
        # the stage-2 chunks are counted (when `count` left them) and cut into stage-1 pieces in a
        # forked child while stage 1 merges here (none of it needs a merge): one core would
        # otherwise idle through stage 1
        stage_one = parse_split(s.split)
        later = budget is None or budget > t  # stage 2 comes
        kernels = pieces.load_kernels(stage_one) if later else None  # (before the fork: the child has them)
        aside = None
        if later and self._stage_two_counts is None:  # the chunks are counted there too
            aside = pieces.count_aside(self._stage_two_texts, s.special_tokens, stage_one, self._stage_one_chunks,
                                       self.processes, kernels)
        elif later:
            aside = pieces.number_aside(list(self._stage_two_counts), stage_one, self._stage_one_chunks,
                                        self.processes, kernels)
        try:
            pairs = []
            for step in self._trainer.steps(max_merges=t):
                pairs.append(step.pair)
                yield step
            n1 = len(pairs)
            if budget is not None and n1 >= budget:
                self._stage_two_counts, self._stage_two_texts = {}, None  # no stage 2: let the corpus go
                return
            # The set-up makes millions of objects and no reference cycle: with the collector on, its
            # passes over them took 2.2 of 11 s on gutenberg30.
            with collector_paused():
                first = self._trainer
                segments = dict(zip(self._stage_one_chunks, first.all_segments(), strict=True))
                self._trainer = first = None  # its arrays go before stage 2 builds its own
                texts, self._stage_two_texts = self._stage_two_texts, None
                self._trainer = trainer = stage_two_trainer(self.timeline.base, pairs, s, segments, self.processes,
                                                            counts=self._stage_two_counts, texts=texts, aside=aside,
                                                            kernels=kernels)
                self._stage_two_counts, self._stage_one_chunks, segments = {}, [], {}
        finally:
            if aside is not None:
                aside.kill()  # (done already, or the training stopped during stage 1)
        # the stage-2 trainer numbers its merges from 0; the timeline goes on from n1
        for step in trainer.steps(max_merges=None if budget is None else budget - n1):
            yield StageTwoStep(step.rank + n1, step.pair, step.id, step.token, step.count, step.length,
                               step.candidates)


def _found(aside) -> pieces.Numbered | pieces.Counted | None:
    """What the child `aside` (`pieces.number_aside`, `pieces.count_aside`) found (None: none was
    started, or it failed)."""
    if aside is None:
        return None
    try:
        return aside.result()
    except ChildFailed:
        return None


def stage_two_trainer(base, pairs: list[tuple[int, int]], settings: SuperBpeSettings,
                      segments: Mapping[str, Sequence[int]], processes: int = 1, *,
                      counts: Mapping[str, int] | None = None, texts: Sequence[str] | None = None, aside=None,
                      kernels: ModuleType | None = None) -> BpeTrainer:
    """The trainer of stage 2: the stage-2 chunks as the stage-1 merges leave them (worked out with
    at most `processes` processes). The chunks are `counts`, or the stage-2 chunks of the list
    `texts` (emptied once counted), counted by the child `aside` (`pieces.count_aside`) or here.
    Their stage-1 pieces are numbered by the child `aside` if it was started, else here (compiled
    with `kernels`: `pieces`)."""
    stage_one = parse_split(settings.split)
    found = _found(aside)
    if isinstance(found, pieces.Counted) and pairs:
        chunks, weights, numbered = (), found.weights, found.numbered
        if texts is not None:
            texts.clear()  # (the caller's own list) counted: the corpus goes before the trainer is made
    else:
        if counts is None:  # (the child failed: counted here)
            counts = count_chunks(texts, STAGE_TWO, specials=settings.special_tokens, processes=processes)
        chunks = list(counts)
        weights = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
        numbered = found if isinstance(found, pieces.Numbered) else None
        if numbered is None and kernels is not None and sum(map(len, chunks)) >= pieces.COMPILED_MIN_CHARS:
            numbered = pieces.numbered(chunks, stage_one, list(segments), kernels)
    del found
    flat, lengths = stage_two_start(base, pairs, chunks, stage_one, segments, processes=processes, numbered=numbered,
                                    kernels=kernels)
    del numbered  # (before the trainer's arrays are made: the peak)
    release_free_memory()  # the start's temporaries below glibc's mmap threshold stay in the heap otherwise
    check_memory(len(flat))
    n = base.size + len(pairs)
    vocab = base.token_bytes()
    for a, b in pairs:
        vocab.append(vocab[a] + vocab[b])
    hf_order = None
    if settings.tie_break == "hf":  # merged ids rank after the base, in merge order, as in HF
        hf_order = (HF_BYTE_ORDER if base.units == "bytes" else tuple(range(base.size))) + tuple(range(base.size, n))
    merge_kernels = load_kernels()
    trainer = StageTwoTrainer.from_flat(flat, lengths, weights, vocab, min_count=settings.min_count, hf_order=hf_order,
                                        kernels=merge_kernels)
    return trainer.with_kernels(merge_kernels)
