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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from tokviz.core.algorithm.protocol import StepTimeline
from tokviz.core.algorithm.protocol import step_noun as _timeline_step_noun
from tokviz.core.boundless import model_file as boundless_file
from tokviz.core.boundless.timeline import BoundlessSettings, BoundlessTimeline, BoundlessTraining
from tokviz.core.bpe import model_file as bpe_file
from tokviz.core.bpe.timeline import Timeline, Training, TrainSettings
from tokviz.core.errors import SettingsError
from tokviz.core.parity_bpe import model_file as parity_file
from tokviz.core.parity_bpe.timeline import ParitySettings, ParityTimeline, ParityTraining
from tokviz.core.superbpe import model_file as superbpe_file
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTimeline, SuperBpeTraining
from tokviz.core.unigram import model_file as unigram_file
from tokviz.core.unigram import timeline as unigram
from tokviz.core.unigram.timeline import UnigramSettings, UnigramTimeline, UnigramTraining
from tokviz.core.wordpiece import timeline as wordpiece
from tokviz.core.wordpiece.timeline import WordPieceSettings, WordPieceTimeline, WordPieceTraining


@dataclass(frozen=True)
class AlgorithmSpec:
    """What the registry knows about one trainable algorithm."""

    name: str  # "bpe": model files, settings files, the CLI
    title: str  # "BPE": menus and captions
    settings_type: type
    training_type: Callable  # (settings, *, texts=..., table=...) -> a staged training run
    timeline_type: type
    step_noun: str  # "merge" or "round"
    format_name: str  # the model file's "format" header
    to_json: Callable  # timeline -> its model-file dict
    from_json: Callable  # dict -> timeline (`ModelFormatError` saying what is wrong)
    tip: str  # one sentence for menus' tooltips and the CLI's help
    not_exported: str | None  # why tokenizer.json / .tiktoken export refuses this algorithm (None: it exports)
    # loads compiled code a first training would wait for (``encoder=False``: only what training runs)
    warm_up: Callable[..., object] | None = None

    @property
    def steps_field(self) -> str:
        """The timeline's list of step records (Unigram: ``"rounds"``)."""
        return self.training_type.steps_field


SPECS: dict[str, AlgorithmSpec] = {
    s.name: s
    for s in (
        AlgorithmSpec("bpe", "BPE", TrainSettings, Training, Timeline, "merge",
                      bpe_file.FORMAT_NAME, bpe_file.timeline_to_json, bpe_file.timeline_from_json,
                      "Byte-pair encoding: merge the most frequent pair, step after step", None),
        AlgorithmSpec("wordpiece", "WordPiece", WordPieceSettings, WordPieceTraining, WordPieceTimeline, "merge",
                      wordpiece.FORMAT_NAME, wordpiece.to_json, wordpiece.from_json,
                      "WordPiece (BERT): merge the pair with the best count(ab) / (count(a) · count(b)); "
                      "continuation pieces start with ##",
                      "WordPiece models are not exported: Hugging Face's WordPiece reads a word that starts "
                      "with '##' as a continuation piece, so its ids would differ from tokviz's; export a BPE model"),
        AlgorithmSpec("unigram", "Unigram", UnigramSettings, UnigramTraining, UnigramTimeline, "round",
                      unigram_file.FORMAT_NAME, unigram_file.to_json, unigram_file.from_json,
                      "Unigram (SentencePiece): start from many substrings, run EM and prune the pieces "
                      "that cost least, round after round",
                      "Unigram models are not exported: tokenizer.json and .tiktoken export is for BPE models "
                      "(train with the BPE algorithm)", unigram.warm_up),
        AlgorithmSpec("superbpe", "SuperBPE", SuperBpeSettings, SuperBpeTraining, SuperBpeTimeline, "merge",
                      superbpe_file.FORMAT_NAME, superbpe_file.to_json, superbpe_file.from_json,
                      "SuperBPE: BPE within words up to the transition, then across spaces (superwords)",
                      "SuperBPE models are not exported: their chunks come from a second pre-tokenizer "
                      "(SuperBPE's stage-2 split) that .tiktoken files cannot hold and tokviz does not write "
                      "to tokenizer.json; save the model with -o or list its merges with 'tokviz merges --json'"),
        AlgorithmSpec("parity-aware", "Parity-aware BPE", ParitySettings, ParityTraining, ParityTimeline, "merge",
                      parity_file.FORMAT_NAME, parity_file.to_json, parity_file.from_json,
                      "Parity-aware BPE: on a multi-parallel corpus (one document per language), merge the pair "
                      "most frequent in the language that takes the most tokens so far", None),
        AlgorithmSpec("boundless", "BoundlessBPE", BoundlessSettings, BoundlessTraining, BoundlessTimeline, "merge",
                      boundless_file.FORMAT_NAME, boundless_file.to_json, boundless_file.from_json,
                      "BoundlessBPE: BPE merges inside pretokens, and supermerges of two whole pretokens "
                      "that are each one token (' of' + ' the')",
                      "BoundlessBPE models are not exported: tokenizer.json and .tiktoken encode each pretoken "
                      "on its own, so no superword would ever be produced; save the model with -o"),
    )
}
ALGORITHMS = tuple(SPECS)
ALGORITHM_TITLES = {name: s.title for name, s in SPECS.items()}

AnySettings = TrainSettings | WordPieceSettings | UnigramSettings | BoundlessSettings | ParitySettings
AnyTimeline = Timeline | WordPieceTimeline | UnigramTimeline | BoundlessTimeline | ParityTimeline


def spec_of(obj: object) -> AlgorithmSpec | None:
    """The spec of settings or a timeline of a trainable algorithm, else None (a loaded one)."""
    found = [s for s in SPECS.values() if isinstance(obj, (s.settings_type, s.timeline_type))]
    # an algorithm built on another's classes (SuperBPE's are BPE's) is its own, not its base's
    exact = [s for s in found if type(obj) in (s.settings_type, s.timeline_type)]
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
