"""`TokenizerDefaults`: the optional members of the `Tokenizer` protocol with the values a tokenizer
has when it does not fill them in, so callers read them plainly instead of probing for them.
`TimelineDefaults` does the same for the optional members of the `StepTimeline` protocol.

Every tokenizer class mixes it in last; a class (or an instance) that has the member overrides it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from tokviz.core.errors import EncodeError

if TYPE_CHECKING:
    import random

    from tokviz.core.encoding import Encoding

_NO_SPECIALS: Mapping[str, int] = MappingProxyType({})


class TokenizerDefaults:
    """Defaults of the protocol's optional members (see `tokviz.core.algorithm.protocol.Tokenizer`)."""

    name = "tokenizer"
    kind = "bpe"  # the family a loaded file names ("tiktoken", "hf", ...); trained and merge-list BPE: "bpe"
    source: str | None = None  # the file it was loaded from
    special_tokens: Mapping[str, int] = _NO_SPECIALS  # text -> id of the tokens encode may match in text
    unk_id: int | None = None  # the id unknown text becomes
    control_ids: frozenset[int] = frozenset()  # ids never made from text (SentencePiece's <s>, </s>)
    pattern: str | None = None  # a tiktoken-style split pattern
    split_regexes: tuple[str, ...] | None = None  # a tokenizer.json pre-tokenizer's split regexes
    declared_pre: str | None = None  # the pre-tokenizer name a file declares (GGUF's tokenizer.ggml.pre)
    byte_level = False  # pieces are written in byte characters (``Ġhello``)
    model: object | None = None  # a tokenizer.json's model (its ``kind``: "BPE", "WordPiece", ...)
    added: list | None = None  # a tokenizer.json's added tokens with their flags
    post_processor: object | None = None  # a tokenizer.json's post-processor
    normalizer: object | None = None  # the normalizer a pipeline runs first
    writes_token_text = False  # token_text() gives the vocabulary's own spelling of each id
    spells_text_bytes = False  # encode_ids' tokens are the text's bytes, less what the split leaves out
    scores_pieces = False  # log_prob(id, step=) gives a Unigram piece's log-probability
    drops_merges = False  # encode_dropout samples BPE-dropout segmentations

    def chunks(self, text: str) -> list[str] | None:
        """The pieces the pre-tokenizer cuts `text` into; None: this tokenizer has no pre-tokenizer."""
        return None

    def text_chunks(self, text: str) -> list[str] | None:
        """`chunks` as text (a tokenizer.json's before its byte characters)."""
        return self.chunks(text)

    def normalize(self, text: str) -> str | None:
        """The text its own normalization step makes of `text`; None: it has none of its own."""
        return None

    def prepare_for(self, text: str) -> None:
        """Load now what encoding `text` will need (compiled code a text of its kind repays), so
        that forked children encoding it inherit it; nothing by default."""

    def n_vocab_at(self, step: int | None = None) -> int | None:
        """How many ids the vocabulary at `step` uses, where that is not ``n_vocab`` trimmed by
        merges (WordPiece, Unigram); None otherwise."""
        return None

    def token_text(self, token_id: int) -> str | None:
        """The vocabulary's spelling of an id (``<0xE4>``, ``Ġhello``) where ``writes_token_text``."""
        return None

    def explain(self, word: str, *, step: int | None = None) -> object | None:
        """How the model cuts `word`, step by step; None: it has no steps to show."""
        return None

    def parts_of(self, token_id: int) -> list[int]:
        """The ids `token_id` was merged from; itself when it was not made by a merge."""
        return [token_id]

    def is_special(self, token_id: int) -> bool:
        return token_id in self.special_tokens.values()

    def encode_dropout(self, text: str, *, dropout: float, seed: int | random.Random | None = None,
                       step: int | None = None) -> Encoding:
        """`encode_ordinary` with BPE-dropout; only tokenizers that join pairs (``drops_merges``)."""
        raise EncodeError(f"{self.name} does not join pairs of tokens: dropout applies to BPE models only")

    def warm_up(self) -> None:
        """Build the one-time tables of a first long encode now (nothing to build by default)."""


class TimelineDefaults:
    """The optional members of `StepTimeline`: what a timeline whose steps are all alike, with the
    usual chart, answers (BPE, WordPiece, Unigram, a loaded tokenizer)."""

    step_kinds = False  # steps differ in kind (BoundlessBPE: merge or supermerge; parity-aware: the language served)

    step_kind_title = "Kind"  # the merge table's heading of the `step_kind` column

    def step_note(self, rank: int) -> str:
        """A few words on step `rank` (0-based) when `step_kinds`: its kind, what it served."""
        return ""

    def step_kind(self, rank: int) -> str:
        """One or two words for step `rank` (0-based) when `step_kinds`, for a table cell: its
        record's ``kind`` ("merge", "supermerge")."""
        return str(getattr(self.steps[rank], "kind", "")) if self.step_kinds else ""

    def superword_ids(self, step: int | None = None) -> frozenset[int]:
        """Ids among the first `step` steps that span whole words (SuperBPE's " of the",
        BoundlessBPE's supermerges): the token view marks them. None here."""
        return frozenset()

    def chart_second_series(self) -> tuple[str | None, list[float]] | None:
        """(title, values per step) for the chart's middle plot instead of the vocabulary size
        (SuperBPE: bytes per token), or None for the usual plot."""
        return None

    def chart_marks(self) -> list[tuple[int, str]]:
        """(step, label) lines the chart draws (SuperBPE's transition, a hybrid run's switch)."""
        return []

    def tokenizer_after(self, earlier) -> object:
        """`tokenizer()`, given `earlier`, a tokenizer this timeline made when it had fewer steps
        (a run moving on): a timeline that can build on it does (BPE: its tables are extended
        for the new merges only). Here: `tokenizer()`."""
        return self.tokenizer()
