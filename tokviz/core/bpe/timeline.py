"""A training run and the timeline it produces (the settings: `tokviz.core.bpe.settings`).

A `Timeline` is the single source of truth about a trained tokenizer: the settings, the base
vocabulary and the ordered `MergeStep`s. Everything else (the vocabulary at step k, the tokenizer
at step k, special-token ids) is derived from it. `Training` runs in stages, so callers (CLI
progress bar, GUI worker) can report and cancel between them: `prepare()` reads and counts the
corpus, `steps()` yields merges and appends them to the timeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from tokviz.core.algorithm.merge_steps import MergeSteps
from tokviz.core.algorithm.records import UNK_TOKEN, Segmentation, TreeNode
from tokviz.core.algorithm.staged import StagedTraining
from tokviz.core.errors import CorpusError, SettingsError
from tokviz.core.processes.parallel import available_memory

from .replay import merge_tree, segment_text
from .settings import TrainSettings
from .tokenizer import BpeTokenizer
from .trainer import HF_BYTE_ORDER, BpeTrainer, MergeStep
from .units import BaseVocab


@dataclass
class Timeline(MergeSteps):
    """Settings + base vocabulary + ordered merges. Step k means "the first k merges"."""

    settings: TrainSettings
    base: BaseVocab
    steps: list[MergeStep] = field(default_factory=list)
    corpus_length: int = 0  # weighted corpus length in base tokens, before any merge
    n_chunks: int = 0  # distinct chunks the trainer saw
    finished: bool = False  # True once training ended (budget, min count, or no pairs left)

    # the StepTimeline protocol's capabilities (tokviz.core.algorithm.protocol)
    algorithm = "bpe"
    title = "BPE"
    step_noun = "merge"
    has_counts = True
    has_scores = False
    lists_merges = True
    replays_merges = True
    renumbers_vocab = False
    traces_matches = False

    def lattice_explainer(self, step: int) -> None:  # no Unigram lattice
        return None

    @property
    def base_size(self) -> int:
        return self.base.size

    @property
    def unk_id(self) -> int | None:
        """Id of ``[UNK]`` (character units only), right after the merges."""
        return self.base_size + self.n_merges if self.base.units == "chars" else None

    @property
    def special_ids(self) -> dict[str, int]:
        """User special tokens -> ids, after the merges (and after ``[UNK]``)."""
        first = self.base_size + self.n_merges + (1 if self.base.units == "chars" else 0)
        return {s: first + i for i, s in enumerate(self.settings.special_tokens)}

    @property
    def vocab_size(self) -> int:
        return self.base_size + self.n_merges + (self.base.units == "chars") + len(self.settings.special_tokens)

    def token_bytes(self) -> list[bytes]:
        """Bytes of every id: base, merges, then ``[UNK]`` and special tokens."""
        out = self.base.token_bytes() + [s.token for s in self.steps]
        if self.base.units == "chars":
            out.append(UNK_TOKEN.encode())
        out.extend(s.encode("utf-8") for s in self.settings.special_tokens)
        return out

    def tokenizer(self) -> BpeTokenizer:
        """The tokenizer of this timeline; pass ``step=k`` to its methods to use k merges."""
        return BpeTokenizer.from_timeline(self)

    def tokenizer_after(self, earlier) -> BpeTokenizer:
        """`tokenizer()`, its tables extended from `earlier`'s when that is a plain BPE tokenizer of
        this timeline's first merges (a live view rebuilt it at every refresh: 10-20 ms a time)."""
        if type(self).tokenizer is not Timeline.tokenizer or type(earlier) is not BpeTokenizer:
            return self.tokenizer()  # a timeline with a tokenizer of its own (SuperBPE's)
        return BpeTokenizer.from_timeline(self, prefix=earlier)

    def describe(self) -> list[str]:
        """A few lines summing the run up (the training panel's summary)."""
        merged, base = self.n_merges, self.base_size
        extra = self.vocab_size - base - merged
        parts = f"{base:,} base + {merged:,} merged" + (f" + {extra} special" if extra else "")
        lines = [f"{merged:,} merges · vocabulary {self.vocab_size:,} tokens ({parts})"]
        before, after = self.corpus_length, self.length_at(merged)
        if before and after:
            lines.append(f"Corpus: {before:,} → {after:,} tokens ({before / after:.2f}× shorter)")
        lines.append(f"{self.n_chunks:,} distinct chunks")
        return lines

    def merge_vocab(self) -> list[bytes]:
        """Base units, then one token per merge (``[UNK]`` and specials come after the merges)."""
        return self.base.token_bytes() + [s.token for s in self.steps]

    def step_of(self, token_id: int) -> int | None:
        r = token_id - self.base_size
        return r if 0 <= r < self.n_merges else None

    def new_id_at(self, k: int) -> int | None:
        return self.base_size + k - 1 if 0 < k <= self.n_merges else None

    def segment(self, text: str, k: int, tokenizer: BpeTokenizer | None = None) -> Segmentation:
        return segment_text(tokenizer or self.tokenizer(), text, k)

    def merge_tree(self, token_id: int) -> TreeNode | None:
        return merge_tree(self, token_id) if 0 <= token_id < self.base_size + self.n_merges else None


def merge_budget(settings: TrainSettings, base_size: int) -> int | None:
    """How many merges the settings allow, or None (no limit) when neither budget is set."""
    n_special = len(settings.special_tokens) + (1 if settings.units == "chars" else 0)
    if settings.merges is not None:
        return settings.merges
    if settings.vocab_size is None:
        return None
    fixed = base_size + n_special
    if settings.vocab_size < fixed:
        raise SettingsError(
            f"vocabulary size {settings.vocab_size} is too small: the base vocabulary and special "
            f"tokens already take {fixed} ids; choose a size of at least {fixed}"
        )
    return settings.vocab_size - fixed


BYTES_PER_UNIT = 160  # the trainer's peak memory per base unit of the distinct chunks (measured)


def check_memory(units: int, available: int | None = None) -> None:
    """Refuse, before allocating, a corpus whose distinct chunks need more memory than is free:
    a clear error instead of the system killing the process.

    >>> check_memory(1_000, available=10**9)
    >>> check_memory(10**9, available=10**9)
    Traceback (most recent call last):
    ...
    tokviz.core.errors.CorpusError: the corpus's distinct chunks hold 1,000,000,000 base units; training them needs about 160.0 GB of memory and 1.0 GB is free. Use a split that cuts the text into words (gpt4, whitespace) or a smaller corpus
    """
    free = available_memory() if available is None else available
    need = units * BYTES_PER_UNIT
    if free is not None and need > 0.8 * free:
        raise CorpusError(
            f"the corpus's distinct chunks hold {units:,} base units; training them needs about "
            f"{need / 1e9:.1f} GB of memory and {free / 1e9:.1f} GB is free. Use a split that cuts the text "
            f"into words (gpt4, whitespace) or a smaller corpus"
        )


class Training(StagedTraining):
    """One training run in stages: `prepare()` (read + count), then iterate `steps()`."""

    # its dicts, arrays, heap and step records hold no reference cycle: `run()` (the command
    # line) keeps the collector off, whose passes took 6% of the merges' time on 16 MB
    collector_free = True
    pieces_train_alike = True  # the texts are counted and let go

    def __init__(self, settings: TrainSettings, *, texts: Sequence[str] = (),
                 table: Mapping[str, int] | None = None) -> None:
        super().__init__(settings, texts=texts, table=table)
        if settings.units == "bytes":
            merge_budget(settings, 256)  # fail before reading the corpus

    def _setup(self, counts: dict[str, int], should_stop) -> Timeline:
        base, self.budget, self._trainer = chunk_trainer(self.settings, counts)
        return Timeline(self.settings, base, corpus_length=self._trainer.length, n_chunks=len(counts))

    def _trainer_steps(self) -> Iterator[MergeStep]:
        return self._trainer.steps(max_merges=self.budget)


def chunk_trainer(settings: TrainSettings, counts: Mapping[str, int]) -> tuple[BaseVocab, int | None, BpeTrainer]:
    """The base vocabulary, the merge budget and a `BpeTrainer` of `settings` on the chunk `counts`
    (refusing, before allocating, a corpus too large for the free memory)."""
    s = settings
    base = BaseVocab.from_chunks(s.units, counts, s.end_of_word)
    budget = merge_budget(s, base.size)
    flat, lengths = base_ids(base, counts)
    check_memory(len(flat))
    weights = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    # hf ranks bytes like Hugging Face's ByteLevel alphabet; characters already are in its
    # order (sorted by code point)
    hf_order = None if s.tie_break != "hf" else HF_BYTE_ORDER if base.units == "bytes" else range(base.size)
    trainer = BpeTrainer.from_flat(flat, lengths, weights, base.token_bytes(), min_count=s.min_count,
                                   hf_order=hf_order)
    return base, budget, trainer


def base_ids(base: BaseVocab, chunks: Iterable[str]) -> tuple[np.ndarray, list[int]]:
    """The base ids of every chunk laid end to end, and each chunk's length in base units
    (`BaseVocab.symbolize` of each chunk, concatenated).

    >>> flat, lengths = base_ids(BaseVocab("bytes", (), "_"), ["ab", "é"])
    >>> flat.tolist(), lengths
    ([97, 98, 95, 195, 169, 95], [3, 3])
    """
    if base.units == "bytes":
        mark = base.end_of_word.encode("utf-8") if base.end_of_word is not None else b""
        encoded = [c.encode("utf-8") + mark for c in chunks] if mark else [c.encode("utf-8") for c in chunks]
        lengths = list(map(len, encoded))
        return np.frombuffer(b"".join(encoded), dtype=np.uint8).astype(np.int64), lengths
    index = base.index()
    seqs = [base.symbolize(c, index=index) for c in chunks]
    lengths = list(map(len, seqs))
    return np.fromiter(chain.from_iterable(seqs), dtype=np.int64, count=sum(lengths)), lengths


def train(
    settings: TrainSettings,
    *,
    texts: Sequence[str] = (),
    table: Mapping[str, int] | None = None,
) -> Timeline:
    """Train to completion: ``train(TrainSettings(vocab_size=512), texts=[text])``."""
    return Training(settings, texts=texts, table=table).run()

