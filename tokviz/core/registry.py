"""The one place that maps an algorithm's name to its classes: settings, training run, timeline.

Everything else works through the protocols (`tokviz.core.algorithm.protocol`): a timeline says
what it can show (``has_counts``, ``lists_merges``, ...), a training run is staged the same way for
every algorithm. Code that starts from a *name* (a model file's ``"algorithm"`` field, the CLI's
``--algorithm``, the training panel's choice) or from settings asks this registry.

    >>> make_training(WordPieceSettings(merges=2), texts=["hug hug pug"]).run().n_steps
    2
    >>> spec_of(UnigramSettings()).title, step_noun(UnigramSettings())
    ('Unigram', 'rounds')

What this leaves out: the algorithms themselves (``tokviz.core.bpe``, ``.wordpiece``, ``.unigram``)
and model files (``tokviz.core.model_files``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import import_module
from typing import TYPE_CHECKING

from tokviz.core.algorithm.protocol import StepTimeline
from tokviz.core.algorithm.protocol import step_noun as _timeline_step_noun
from tokviz.core.boundless import settings as boundless
from tokviz.core.boundless.settings import BoundlessSettings
from tokviz.core.bpe import settings as bpe
from tokviz.core.bpe.settings import TrainSettings
from tokviz.core.errors import SettingsError
from tokviz.core.parity_bpe import settings as parity
from tokviz.core.parity_bpe.settings import ParitySettings
from tokviz.core.superbpe import settings as superbpe
from tokviz.core.superbpe.settings import SuperBpeSettings
from tokviz.core.unigram import settings as unigram
from tokviz.core.unigram.settings import UnigramSettings
from tokviz.core.wordpiece import settings as wordpiece
from tokviz.core.wordpiece.settings import WordPieceSettings

if TYPE_CHECKING:
    from tokviz.core.boundless.timeline import BoundlessTimeline
    from tokviz.core.bpe.timeline import Timeline
    from tokviz.core.parity_bpe.timeline import ParityTimeline
    from tokviz.core.unigram.timeline import UnigramTimeline
    from tokviz.core.wordpiece.timeline import WordPieceTimeline


def _load(where: str):
    """The object ``"module:name"`` names, its module imported on first use."""
    module, _, name = where.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Later:
    """A function named ``"module:name"``, imported when first called."""

    where: str

    def __call__(self, *args, **kwargs):
        return _load(self.where)(*args, **kwargs)


@dataclass(frozen=True)
class AlgorithmSpec:
    """What the registry knows about one trainable algorithm.

    The settings class (the options the command line and the training panel list) and the names
    are here at once; the training run and the timeline are named in `timeline_module`, and the
    model-file functions and the warm-up are `Later`s, all imported when first used, so listing
    every algorithm loads no trainer."""

    name: str  # "bpe": model files, settings files, the CLI
    title: str  # "BPE": menus and captions
    settings_type: type
    step_noun: str  # "merge" or "round"
    format_name: str  # the model file's "format" header
    tip: str  # one sentence for menus' tooltips and the CLI's help
    not_exported: str | None  # why tokenizer.json / .tiktoken export refuses this algorithm (None: it exports)
    timeline_module: str  # holds the training run and the timeline classes
    training_name: str  # (settings, *, texts=..., table=...) -> a staged training run
    timeline_name: str
    to_json: Callable  # timeline -> its model-file dict
    from_json: Callable  # dict -> timeline (`ModelFormatError` saying what is wrong)
    # loads compiled code a first training would wait for (``encoder=False``: only what training runs)
    warm_up: Callable[..., object] | None = None
    # the training's own `pieces_train_alike`, known without importing it: the command line counts
    # a corpus read in pieces before the trainer (and numpy) loads
    pieces_train_alike: bool = False
    # timeline -> its model file's bytes in pieces, those of ``json_pieces(to_json(timeline))`` made
    # faster (None: saving writes `to_json`'s dict)
    to_json_text: Callable | None = None

    @property
    def training_type(self) -> Callable:
        return _load(f"{self.timeline_module}:{self.training_name}")

    @property
    def timeline_type(self) -> type:
        return _load(f"{self.timeline_module}:{self.timeline_name}")

    def timeline_loaded(self) -> bool:
        """Whether the timeline's module is imported (an object of its class may exist)."""
        return self.timeline_module in sys.modules

    @property
    def steps_field(self) -> str:
        """The timeline's list of step records (Unigram: ``"rounds"``)."""
        return self.training_type.steps_field


SPECS: dict[str, AlgorithmSpec] = {
    s.name: s
    for s in (
        AlgorithmSpec("bpe", "BPE", TrainSettings, "merge", bpe.FORMAT_NAME,
                      "Byte-pair encoding: merge the most frequent pair, step after step", None,
                      "tokviz.core.bpe.timeline", "Training", "Timeline",
                      Later("tokviz.core.bpe.model_file:timeline_to_json"),
                      Later("tokviz.core.bpe.model_file:timeline_from_json"), pieces_train_alike=True,
                      to_json_text=Later("tokviz.core.bpe.model_file:timeline_json_text")),
        AlgorithmSpec("wordpiece", "WordPiece", WordPieceSettings, "merge", wordpiece.FORMAT_NAME,
                      "WordPiece (BERT): merge the pair with the best count(ab) / (count(a) · count(b)); "
                      "continuation pieces start with ##",
                      "WordPiece models are not exported: Hugging Face's WordPiece reads a word that starts "
                      "with '##' as a continuation piece, so its ids would differ from tokviz's; export a BPE model",
                      "tokviz.core.wordpiece.timeline", "WordPieceTraining", "WordPieceTimeline",
                      Later("tokviz.core.wordpiece.timeline:to_json"),
                      Later("tokviz.core.wordpiece.timeline:from_json"),
                      Later("tokviz.core.wordpiece.compiled:warm_up")),
        AlgorithmSpec("unigram", "Unigram", UnigramSettings, "round", unigram.FORMAT_NAME,
                      "Unigram (SentencePiece): start from many substrings, run EM and prune the pieces "
                      "that cost least, round after round",
                      "Unigram models are not exported: tokenizer.json and .tiktoken export is for BPE models "
                      "(train with the BPE algorithm)",
                      "tokviz.core.unigram.timeline", "UnigramTraining", "UnigramTimeline",
                      Later("tokviz.core.unigram.model_file:to_json"),
                      Later("tokviz.core.unigram.model_file:from_json"),
                      Later("tokviz.core.unigram.timeline:warm_up"),
                      to_json_text=Later("tokviz.core.unigram.model_file:json_text")),
        AlgorithmSpec("superbpe", "SuperBPE", SuperBpeSettings, "merge", superbpe.FORMAT_NAME,
                      "SuperBPE: BPE within words up to the transition, then across spaces (superwords)",
                      "SuperBPE models are not exported: their chunks come from a second pre-tokenizer "
                      "(SuperBPE's stage-2 split) that .tiktoken files cannot hold and tokviz does not write "
                      "to tokenizer.json; save the model with -o or list its merges with 'tokviz merges --json'",
                      "tokviz.core.superbpe.timeline", "SuperBpeTraining", "SuperBpeTimeline",
                      Later("tokviz.core.superbpe.model_file:to_json"),
                      Later("tokviz.core.superbpe.model_file:from_json"),
                      Later("tokviz.core.superbpe.warm_up:warm_up")),
        AlgorithmSpec("parity-aware", "Parity-aware BPE", ParitySettings, "merge", parity.FORMAT_NAME,
                      "Parity-aware BPE: on a multi-parallel corpus (one document per language), merge the pair "
                      "most frequent in the language that takes the most tokens so far", None,
                      "tokviz.core.parity_bpe.timeline", "ParityTraining", "ParityTimeline",
                      Later("tokviz.core.parity_bpe.model_file:to_json"),
                      Later("tokviz.core.parity_bpe.model_file:from_json")),
        AlgorithmSpec("boundless", "BoundlessBPE", BoundlessSettings, "merge", boundless.FORMAT_NAME,
                      "BoundlessBPE: BPE merges inside pretokens, and supermerges of two whole pretokens "
                      "that are each one token (' of' + ' the')",
                      "BoundlessBPE models are not exported: tokenizer.json and .tiktoken encode each pretoken "
                      "on its own, so no superword would ever be produced; save the model with -o",
                      "tokviz.core.boundless.timeline", "BoundlessTraining", "BoundlessTimeline",
                      Later("tokviz.core.boundless.model_file:to_json"),
                      Later("tokviz.core.boundless.model_file:from_json")),
    )
}
ALGORITHMS = tuple(SPECS)
ALGORITHM_TITLES = {name: s.title for name, s in SPECS.items()}

AnySettings = TrainSettings | WordPieceSettings | UnigramSettings | BoundlessSettings | ParitySettings
if TYPE_CHECKING:
    AnyTimeline = Timeline | WordPieceTimeline | UnigramTimeline | BoundlessTimeline | ParityTimeline


def spec_of(obj: object) -> AlgorithmSpec | None:
    """The spec of settings or a timeline of a trainable algorithm, else None (a loaded one)."""
    # a timeline's class is imported if the object exists: only those modules are looked in
    found = [s for s in SPECS.values()
             if isinstance(obj, s.settings_type) or (s.timeline_loaded() and isinstance(obj, s.timeline_type))]
    # an algorithm built on another's classes (SuperBPE's are BPE's) is its own, not its base's
    exact = [s for s in found if type(obj) is s.settings_type or (s.timeline_loaded() and type(obj) is s.timeline_type)]
    return (exact or found or [None])[0]


def spec_with_format(format_name: object) -> AlgorithmSpec | None:
    """The spec whose model files carry ``"format": format_name``, else None."""
    return next((s for s in SPECS.values() if s.format_name == format_name), None)


def spec_named(name: str) -> AlgorithmSpec:
    """The spec called `name`; `SettingsError` saying which names exist otherwise."""
    spec = SPECS.get(name)
    if spec is None:
        raise SettingsError(f"unknown algorithm {name!r}; choose {', '.join(ALGORITHMS)}")
    return spec


def algorithm_of(obj: object) -> str:
    """``"bpe"``, ``"wordpiece"``, ``"unigram"`` (or a timeline's own, ``"pretrained"``)."""
    spec = spec_of(obj)
    return spec.name if spec is not None else getattr(obj, "algorithm", "bpe")


def make_training(settings: AnySettings, *, texts: Sequence[str] = (), table: Mapping[str, int] | None = None):
    """The staged training run for `settings` (validated; `SettingsError` when they cannot work)."""
    spec = spec_of(settings)
    if spec is None or not isinstance(settings, spec.settings_type):
        raise SettingsError(f"cannot train from {type(settings).__name__}; choose {', '.join(ALGORITHMS)}")
    return spec.training_type(settings, texts=texts, table=table)


def empty_copy(timeline: AnyTimeline) -> AnyTimeline:
    """A copy of `timeline` with no steps yet (what a new run starts from)."""
    spec = spec_of(timeline)
    field = spec.steps_field if spec is not None else "steps"
    return replace(timeline, **{field: [], "finished": False})


def snapshot(timeline: AnyTimeline) -> AnyTimeline:
    """A copy whose step list will not grow (safe to hand to another thread while training)."""
    spec = spec_of(timeline)
    field = spec.steps_field if spec is not None else "steps"
    return replace(timeline, **{field: list(getattr(timeline, field))})


def settings_to_json(settings: AnySettings) -> dict:
    """``{"algorithm": ..., **settings.to_json()}`` (for persisted preferences)."""
    return {"algorithm": algorithm_of(settings), **settings.to_json()}


def settings_from_json(d: Mapping) -> AnySettings:
    """Inverse of `settings_to_json`; a dict without ``algorithm`` is BPE settings."""
    d = dict(d)
    return spec_named(d.pop("algorithm", "bpe")).settings_type.from_json(d)


def step_noun(timeline_or_settings: StepTimeline | AnySettings | None, n: int | None = None) -> str:
    """What one step is called: ``"merge"``/``"merges"``, or ``"round"``/``"rounds"`` for Unigram."""
    spec = spec_of(timeline_or_settings)
    if spec is not None:
        return spec.step_noun if n == 1 else spec.step_noun + "s"
    return _timeline_step_noun(timeline_or_settings, n)
