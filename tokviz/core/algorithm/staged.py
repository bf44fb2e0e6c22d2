"""What the three trainable algorithms share: settings that round-trip through JSON, and the
staged training run (count the corpus, then a generator of steps).

`StagedTraining` is the `Training` protocol written once. An algorithm fills in two things:

- ``_setup(counts, should_stop)``: given ``{chunk: count}`` (never empty), build the trainer, set
  `budget` and return the empty timeline;
- ``_trainer_steps()``: the trainer's generator of step records (merges, or Unigram rounds).

`processes` (given to `prepare`, 1 by default: `tokviz.core.processes.parallel`) is how many
processes counting, and a trainer that can share its work (Unigram's), may use.

Everything else is here: reading the corpus (`count`), the empty-corpus error, appending each step
to the timeline as it is yielded (the one step list: callers that need a stable copy take
`tokviz.core.registry.snapshot`), ``finished`` at the end, and `run`.

    >>> from tokviz.core.wordpiece.timeline import WordPieceSettings, WordPieceTraining
    >>> t = WordPieceTraining(WordPieceSettings(merges=2), texts=["hug hug pug"])
    >>> tl = t.prepare(); [s.text for s in t.steps()], tl.finished
    (['hu', 'pu'], True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict

from tokviz.core.errors import CorpusError, SettingsError
from tokviz.core.gc_pause import collector_paused, release_free_memory
from tokviz.core.text.chunks import Progress, ShouldStop, count_chunks, count_word_table
from tokviz.core.text.split import SPLIT_CHOICES, parse_split

# the declarations (`tokviz.core.algorithm.options`) of the settings several algorithms share
_NO_BUDGET = "no limit: training stops when no pair occurs --min-count times"
VOCAB_SIZE = dict(flag="--vocab-size", label="&Budget:", exclusive="budget", row="panel", unset=_NO_BUDGET,
                  help="the vocabulary size to reach, special tokens included")
MERGES = dict(flag="--merges", label="&Budget:", exclusive="budget", row="panel", unset=_NO_BUDGET,
              help="the number of merges to make")
SPLIT = dict(flag="--split", label="&Pre-tokenization:", kind="str", metavar=SPLIT_CHOICES, row="panel",
             help="how the corpus is cut into chunks (words) before training")
MIN_PAIR_COUNT = dict(flag="--min-count", label="&Min pair count:", low=1, high=1_000_000_000, row="panel",
                      help="stop when no pair occurs at least this many times")
SPECIAL_TOKENS = dict(flag="--special", label="&Special tokens:", kind="tokens", metavar="TOKEN", row="panel",
                      help="a special token (repeat the option for more); never split, ids after the base")


class JsonSettings:
    """Base of the frozen settings dataclasses: a JSON round trip with validation."""

    special_tokens: tuple[str, ...]

    def validate(self):
        raise NotImplementedError

    def to_json(self) -> dict:
        d = asdict(self)  # type: ignore[call-overload]
        d["special_tokens"] = list(self.special_tokens)
        return d

    @classmethod
    def from_json(cls, d: Mapping):
        """Settings from `to_json`'s dict; unknown keys and impossible values are `SettingsError`."""
        unknown = set(d) - set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
        if unknown:
            raise SettingsError(f"unknown settings: {', '.join(sorted(unknown))}")
        d = dict(d)
        d["special_tokens"] = tuple(d.get("special_tokens", ()))
        return cls(**d).validate()


def check_budget(vocab_size: int | None, merges: int | None, min_count: int) -> None:
    """The checks every merge-based algorithm makes of its budget and minimum count."""
    if vocab_size is not None and merges is not None:
        raise SettingsError("give either a vocabulary size or a number of merges, not both")
    if vocab_size is not None and vocab_size < 1:
        raise SettingsError(f"vocabulary size must be positive, got {vocab_size}")
    if merges is not None and merges < 0:
        raise SettingsError(f"number of merges cannot be negative, got {merges}")
    if min_count < 1:
        raise SettingsError(f"minimum count must be at least 1, got {min_count}")


def check_special_tokens(special_tokens: Sequence[str]) -> tuple[str, ...]:
    """The special tokens every algorithm accepts: texts, none empty, all distinct."""
    specials = tuple(special_tokens)
    if any(not isinstance(s, str) or not s for s in specials):
        raise SettingsError("a special token cannot be empty")
    if len(set(specials)) != len(specials):
        raise SettingsError("special tokens must be distinct")
    return specials


_DRAINED = object()  # a run's trainer once `run()` has made every step


class StagedTraining:
    """One training run in stages: `prepare()` (read + count + set up), then iterate `steps()`."""

    steps_field = "steps"  # the timeline's list the steps are appended to
    pieces_train_alike = False  # (the protocol's `Training`) the texts serve only to count chunks
    _last_count = False  # set by `prepare` while it counts: no one counts the texts again

    def __init__(self, settings, *, texts: Sequence[str] = (), table: Mapping[str, int] | None = None) -> None:
        self.settings = settings.validate()
        self.texts = list(texts)
        self.table = table
        self.timeline = None
        self.budget: int | None = None  # steps the settings allow; None: until nothing is left
        self.processes = 1  # as given to `prepare`
        self._trainer = None

    @property
    def trainer(self):
        """The algorithm's trainer `prepare()` set up, for a look at its state; None before that
        and once `run()` has made every step (its working state is let go then)."""
        return None if self._trainer is _DRAINED else self._trainer

    def count(self, *, should_stop: ShouldStop | None = None, progress: Progress | None = None,
              processes: int = 1) -> dict[str, int]:
        """``{chunk: count}`` of the corpus (or word table) in order of first appearance."""
        s = self.settings
        splitter = parse_split(s.split)
        if self.table is not None:
            counts = count_word_table(self.table, splitter, specials=s.special_tokens)
        else:
            counts = count_chunks(self._texts_to_count(), splitter, specials=s.special_tokens, processes=processes,
                                  should_stop=should_stop, progress=progress)
        if not counts:
            raise CorpusError("the corpus has no text to train on (it is empty after splitting)")
        return counts

    def _texts_to_count(self) -> list[str]:
        """The texts; handed over for good when `prepare` counts them and they serve only to be
        counted: a corpus read in pieces is then freed piece by piece while it is counted (a forked
        counting child shares fewer pages), where otherwise every piece would stay until the last
        was counted. A `count()` of the caller's own leaves them for the `prepare` after it."""
        texts = self.texts
        if self._last_count and self.pieces_train_alike:
            self.texts = []
        return texts

    def prepare(self, *, should_stop: ShouldStop | None = None, progress: Progress | None = None,
                processes: int = 1):
        """Count the corpus and set up the trainer, both with at most `processes` processes;
        returns the (empty) timeline."""
        self.processes = processes
        self._last_count = True
        try:
            counts = self.count(should_stop=should_stop, progress=progress, processes=processes)
        finally:
            self._last_count = False
        # The counts are all training needs: let the texts go (a 30 MB corpus with one character
        # beyond U+FFFF is a 120 MB string), and a table (counted chunks), unless the caller keeps them.
        self.texts, self.table = [], None
        self.timeline = self._setup(counts, should_stop)
        return self.timeline

    def _setup(self, counts: dict[str, int], should_stop: ShouldStop | None):
        raise NotImplementedError

    def _trainer_steps(self) -> Iterator:
        raise NotImplementedError

    def steps(self, *, record: bool = True) -> Iterator:
        """Yield each step as it is made, appending it to `self.timeline`; with ``record=False``
        the timeline stays empty (the caller keeps the one list, e.g. the window's)."""
        if self._trainer is _DRAINED:
            return  # `run()` made every step already
        if self._trainer is None:
            self.prepare()
        if not record:
            yield from self._trainer_steps()
            return
        steps = getattr(self.timeline, self.steps_field)
        for step in self._trainer_steps():
            steps.append(step)
            yield step
        self.timeline.finished = True

    # the trainer makes no reference cycles (its steps run with the collector paused, `paused_gc`)
    collector_free = False

    def run(self, each: Callable[[], None] | None = None):
        """Drain `steps()` and return the finished timeline; a `collector_free` trainer with the
        cyclic garbage collector paused throughout (nothing runs between its steps here but `each`,
        called after every step, e.g. a progress bar; each step's own pause would end in a
        collection of the step's new objects)."""
        if self.collector_free:
            with collector_paused():
                for _ in self.steps():
                    if each is not None:
                        each()
                # drained: the trainer's working state (heaps, tables) goes before the collector
                # is back, or its first pass would walk every object the run made
                self._trainer = _DRAINED
            release_free_memory()  # that state's freed pages: else what the caller does next (a save) adds to them
        else:
            for _ in self.steps():
                if each is not None:
                    each()
        return self.timeline
