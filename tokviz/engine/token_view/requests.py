"""What the token view asks its engine for and gets back: plain records, made on one thread and
read on another.

A `TokenViewRequest` names the text, the rows (`RowSpec`: the trained tokenizer at a step, the
baselines, loaded tokenizers), a `TrainedSnapshot` to build the trained tokenizer from, and the
display options; a `TokenViewResult` holds one `RowResult` per row (encoding, labels, round trip),
the reference row's `Diagnostics` and the `BatchResult`. How they are computed is
`tokviz.engine.token_view.token_view_engine`'s job; how they are drawn, the panel's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tokviz.core import BaseVocab, Encoding
from tokviz.core.batch import Batch
from tokviz.core.display.diagnostics import DigitRun, ScriptCount, Twin, UnknownWords
from tokviz.core.display.tokens import RoundTrip, TokenLabels, TokenStats


@dataclass(frozen=True)
class TrainedSnapshot:
    """What the worker needs to build the trained tokenizer (copied on the GUI thread)."""

    key: tuple  # (timeline identity, merges): same key, same tokenizer
    base: BaseVocab
    merges: tuple[tuple[int, int], ...]
    split: str
    special_tokens: dict[str, int]
    unk_id: int | None
    merge_counts: tuple[int, ...]  # corpus count of each merge's pair when it was made


@dataclass(frozen=True)
class RowSpec:
    key: str  # "step", "final", "chars", "words", "loaded:<n>"
    title: str
    step: int | None = None  # trained rows: merges used
    tokenizer: object | None = None  # loaded tokenizers (baselines and trained ones come from the caches)
    superwords: frozenset[int] = frozenset()  # ids the timeline declares superwords (`superword_ids`)


@dataclass(frozen=True)
class TokenViewRequest:
    text: str
    rows: tuple[RowSpec, ...]
    show_whitespace: bool = False
    trained: TrainedSnapshot | None = None
    corpus: tuple[int, str] | None = None  # (version, text) for the baselines
    bos: bool = False
    eos: bool = False
    pad_side: str = "right"
    n_colors: int = 8  # colour slots of the palette (neighbours differ)
    specials_as_text: bool = False  # special-token strings in the text are encoded as ordinary text


@dataclass
class RowResult:
    spec: RowSpec
    tokenizer: object
    encoding: Encoding
    stats: TokenStats
    labels: TokenLabels  # the first `shown` tokens
    shown: int  # tokens labelled (all for the reference row; a prefix for the others)
    differs: list[bool] = field(default_factory=list)  # vs the reference row, per shown token
    round_trip: RoundTrip | None = None
    slots: list[int] = field(default_factory=list)  # colour slot per shown token
    groups: list[tuple[int, int]] = field(default_factory=list)  # byte tokens building one character
    captions: list[str] = field(default_factory=list)  # the character under each group
    marked: list[bool] = field(default_factory=list)  # shown tokens that are superwords (a bar under them)


@dataclass
class Diagnostics:
    twins: list[Twin]
    digits: list[DigitRun]
    trailing: list[int]
    scripts: list[ScriptCount]
    unseen: list[tuple[int, int]]
    unknown: UnknownWords | None = None  # what became [UNK] in the text (tokenizers with an unknown token)
    corpus_unknown: UnknownWords | None = None  # the same on the corpus (loaded tokenizers)


@dataclass
class BatchResult:
    batch: Batch
    lines: list[str]
    bos_id: int | None
    eos_id: int | None
    pad_id: int


@dataclass
class TokenViewResult:
    request: TokenViewRequest
    rows: list[RowResult]
    partial: bool = False  # only the reference row's first screen
    diagnostics: Diagnostics | None = None
    batch: BatchResult | None = None
    counts: dict[int, int] = field(default_factory=dict)  # corpus count per id (trained rows)
    seconds: float = 0.0

    @property
    def reference(self) -> RowResult | None:
        return self.rows[0] if self.rows else None
