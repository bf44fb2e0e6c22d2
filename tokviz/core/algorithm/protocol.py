"""The protocols every tokenizer, training run and timeline in tokviz follows.

Three subword algorithms (BPE, WordPiece, Unigram) and the loaded real tokenizers (tiktoken files,
``tokenizer.json``, GPT-2's files, minbpe) are one concept seen three ways:

- a `Tokenizer` encodes and decodes with tiktoken's method grid (``encode``, ``encode_ordinary``,
  ``encode_ids``, ``decode``, ``decode_bytes``, ``decode_tokens_bytes``, ``decode_with_offsets``),
  every encode returning an `Encoding` with ids, token bytes and character spans, and taking
  ``step=k`` to use only the first k steps of its timeline;
- a `Training` is a run in stages: ``prepare()`` reads and counts the corpus, ``steps()`` is a
  generator of frozen step records (a caller checks for cancellation between steps), ``run()``
  drains it;
- a `StepTimeline` is the single source of truth a training produces (or a loaded tokenizer
  dresses up as): its ordered steps, the vocabulary derived from them, and what a view needs to
  replay step k. Its capability flags (``has_counts``, ``lists_merges``, ...) and methods
  (``step_of``, ``segment``, ``merge_tree``) replace switching on the algorithm's name.

The one place that maps an algorithm's *name* to its classes is `tokviz.core.registry`.
This module imports nothing of tokviz but the records it names, so every algorithm can import it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import random

    from tokviz.core.encoding import Encoding

    from .reach import Reason
    from .records import Segmentation, TreeNode

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]


@runtime_checkable
class Tokenizer(Protocol):
    """Encode and decode at any step: the grid every tokenizer fills in."""

    # Ids laid out by merge rank (trained BPE, minbpe): ids below ``base_size`` are base units and
    # id ``base_size + k`` is made by merge k (``merge_of``), so step k uses the ids below
    # ``base_size + k``. Views show merge ranks and trim the vocabulary at step k by it.
    ids_by_merge_rank: bool
    # What the command line's encodes may ask (`tokviz.core.algorithm.ids_path`): whether encode,
    # encode_ordinary and encode_ids take ``processes=`` (a big text shared with forked children),
    # and whether encode takes ``share_cache=`` and ``encode_ids_text`` / ``write_json_once`` write a
    # one-off encode's output straight from its chunks (tiktoken-style).
    takes_processes: bool
    one_off_paths: bool
    # Merges by token rank (tiktoken-style): merge k forms the k-th smallest id of ``merge_ranks``
    # and each merge is worked out on demand (``merge_of``), so a timeline lists them lazily.
    ranks_merges: bool
    # Members every tokenizer has, read plainly (`tokviz.core.algorithm.defaults.TokenizerDefaults`
    # gives the values of a tokenizer that does not fill them in).
    name: str
    kind: str  # the family a loaded file names ("tiktoken", "hf", "sentencepiece"); otherwise "bpe"
    source: str | None  # the file it was loaded from
    special_tokens: Mapping[str, int]  # text -> id of the tokens encode may match in text
    unk_id: int | None
    control_ids: frozenset[int]  # ids never made from text (SentencePiece's <s>, </s>)
    pattern: str | None  # a tiktoken-style split pattern
    split_regexes: tuple[str, ...] | None  # a tokenizer.json pre-tokenizer's split regexes
    declared_pre: str | None  # the pre-tokenizer name a file declares (GGUF)
    byte_level: bool  # pieces are written in byte characters (``Ġhello``)
    model: object | None  # a tokenizer.json's model; None for other tokenizers
    added: list | None  # a tokenizer.json's added tokens with their flags
    post_processor: object | None  # a tokenizer.json's post-processor
    normalizer: object | None
    writes_token_text: bool  # token_text() gives the vocabulary's own spelling of each id
    # encode_ids of plain text (no special token, no lone surrogate) gives tokens whose bytes joined
    # are the text's UTF-8 less what the split leaves out: equal lengths mean equal bytes
    spells_text_bytes: bool
    scores_pieces: bool  # log_prob(id, step=) gives a Unigram piece's log-probability
    # BPE-dropout (`tokviz.core.bpe.dropout`): encode_dropout skips each join with a probability
    # (merge-list and byte-rank BPE); other tokenizers refuse it
    drops_merges: bool

    @property
    def n_vocab(self) -> int: ...

    def chunks(self, text: str) -> list[str] | None:
        """The pre-tokenizer's pieces of `text`; None when the tokenizer has no pre-tokenizer."""
        ...

    def text_chunks(self, text: str) -> list[str] | None:
        """`chunks` as text (a tokenizer.json's before its byte characters)."""
        ...

    def normalize(self, text: str) -> str | None:
        """The text its own normalization step makes of `text`; None when it has none."""
        ...

    def prepare_for(self, text: str) -> None:
        """Load now what encoding `text` will need, for forked children to inherit."""
        ...

    def n_vocab_at(self, step: int | None = None) -> int | None:
        """Ids the vocabulary uses at `step` where that is not ``n_vocab`` trimmed by merges
        (WordPiece, Unigram); None otherwise."""
        ...

    def token_text(self, token_id: int) -> str | None: ...

    def explain(self, word: str, *, step: int | None = None) -> object | None:
        """How the model cuts `word`, step by step; None when it has no steps to show."""
        ...

    def parts_of(self, token_id: int) -> list[int]: ...

    def is_special(self, token_id: int) -> bool: ...

    def warm_up(self) -> None: ...

    def token_bytes(self, token_id: int) -> bytes: ...

    def encode(self, text: str, *, step: int | None = None,
               allowed_special: Literal["all"] | Collection[str] = ...,
               disallowed_special: Literal["all"] | Collection[str] = ...) -> Encoding: ...

    def encode_ordinary(self, text: str, *, step: int | None = None) -> Encoding: ...

    def encode_dropout(self, text: str, *, dropout: float, seed: int | random.Random | None = None,
                       step: int | None = None) -> Encoding:
        """`encode_ordinary` with each join skipped with probability `dropout`, the draws seeded by
        `seed`: the same (text, dropout, seed) gives the same ids; 0 gives `encode_ordinary`."""
        ...

    def encode_ids(self, text: str, *, step: int | None = None) -> list[int]: ...

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str: ...

    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]: ...

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]: ...

    def unreachable(self, token_id: int) -> Reason | None:
        """Why encoding the token's own text does not give it back (a glitch token), or None
        (`tokviz.core.algorithm.reach`)."""
        ...

    def lattice_view(self) -> object | None:
        """What explains the words of a loaded Unigram model (its lattice, scores, unknown id:
        `tokviz.core.algorithm.records.LatticeView`); None for any other model (a Unigram
        model trained here is explained by its timeline: `StepTimeline.lattice_explainer`)."""
        ...


class Training(Protocol):
    """One training run in stages; step records are frozen dataclasses."""

    budget: int | None  # steps the settings allow (merges, or rounds), None = until nothing is left
    # the texts are only counted, chunk by chunk: a text cut where its split's chunks end (a corpus
    # read in pieces, `chunks.counts_alike_in_pieces`) trains exactly as the whole
    pieces_train_alike: bool

    def prepare(self, *, should_stop: ShouldStop | None = None, progress: Progress | None = None,
                processes: int = 1) -> StepTimeline: ...

    def steps(self, *, record: bool = True) -> Iterator[object]: ...

    def run(self) -> StepTimeline: ...


@runtime_checkable
class StepTimeline(Protocol):
    """Ordered steps and everything derived from them. Step k means "the first k steps"."""

    algorithm: str  # "bpe", "wordpiece", "unigram" or "pretrained": for files and titles only
    title: str  # "BPE", "WordPiece", "Unigram", or the loaded tokenizer's name
    step_noun: str  # what one step is called: "merge" or "round"
    has_counts: bool  # steps carry the counts and corpus lengths of a training run
    has_scores: bool  # steps carry a score beside the counts (WordPiece's likelihood ratio)
    lists_merges: bool  # every step merges two tokens into a new id (a merge table can list them)
    renumbers_vocab: bool  # a step renumbers the vocabulary (a table listing it starts over)
    replays_merges: bool  # a trained BPE run: views rebuild its tokenizer from the merges so far
    traces_matches: bool  # WordPiece: "trace a word" lists greedy longest matches, not merges
    step_kinds: bool  # steps differ in kind; `step_note(rank)` says how (defaults: `TimelineDefaults`)
    step_kind_title: str  # the merge table's heading of `step_kind(rank)` ("Kind", "Served")
    finished: bool

    def step_note(self, rank: int) -> str: ...

    def step_kind(self, rank: int) -> str: ...

    def superword_ids(self, step: int | None = None) -> frozenset[int]: ...

    def chart_second_series(self) -> tuple[str | None, list[float]] | None: ...

    def chart_marks(self) -> list[tuple[int, str]]: ...

    def tokenizer_after(self, earlier: Tokenizer) -> Tokenizer: ...

    @property
    def n_steps(self) -> int: ...

    @property
    def steps(self) -> Sequence: ...

    @property
    def last_step(self) -> int:
        """The highest valid step k (``n_steps``; Unigram: the last round, ``n_steps - 1``)."""
        ...

    @property
    def vocab_size(self) -> int: ...

    @property
    def special_ids(self) -> dict[str, int]: ...

    def token_bytes(self) -> list[bytes]: ...

    def merge_vocab(self) -> list[bytes]:
        """Bytes by id of every id up to the newest step's token (later steps append to it)."""
        ...

    def tokenizer(self) -> Tokenizer: ...

    def describe(self) -> list[str]:
        """A few lines summing the timeline up (sizes, corpus lengths; a loaded file's origin)."""
        ...

    def length_at(self, step: int) -> int | None: ...

    def step_of(self, token_id: int) -> int | None:
        """Index of the step that made `token_id` (its rank), or None (base unit, special, piece)."""
        ...

    def new_id_at(self, k: int) -> int | None:
        """Id of the token step k made, or None (step 0, or steps that make no single token)."""
        ...

    def segment(self, text: str, k: int, tokenizer: Tokenizer | None = None) -> Segmentation:
        """Tokens of `text` at step k, with the tokens step k just made marked fresh."""
        ...

    def merge_tree(self, token_id: int) -> TreeNode | None:
        """How `token_id` was built, down to base units; None when no tree applies."""
        ...

    def lattice_explainer(self, step: int) -> tuple[object, int] | None:
        """What explains a word of a Unigram model, and at which step: an object with
        ``explain(word, step=, n=)``, ``sample(word, alpha=, step=, rng=)`` and ``caption`` (a trained run's
        tokenizer at that round, a loaded model's `UnigramExplainer`), or None for other models."""
        ...


def step_noun(timeline: StepTimeline | None, n: int | None = None) -> str:
    """``"merge"``/``"merges"`` (or ``"round"``/``"rounds"``); plural unless ``n == 1``."""
    word = getattr(timeline, "step_noun", "merge")
    return word if n == 1 else word + "s"
