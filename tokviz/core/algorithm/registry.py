"""One way to train, copy and describe any of the three subword algorithms.

The trainers share one shape: ``Training`` (BPE), ``WordPieceTraining`` and ``UnigramTraining``
take ``(settings, texts=..., table=...)``, and each has ``prepare(should_stop=, progress=,
processes=, mp_context=)``, ``steps()``, ``run()`` and a ``budget`` (merges for BPE and
WordPiece, rounds for Unigram). This module picks the right one from the settings' type, so the
GUI engine, the training process and the CLI never switch on the algorithm themselves.

    >>> make_training(WordPieceSettings(merges=2), texts=["hug hug pug"]).run().n_steps
    2

What this leaves out: the algorithms (``timeline``, ``wordpiece``, ``unigram``) and model files
(``model_io``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from tokviz.core.errors import SettingsError
from tokviz.core.bpe.timeline import Timeline, Training, TrainSettings
from tokviz.core.unigram.timeline import UnigramSettings, UnigramTimeline, UnigramTraining
from tokviz.core.wordpiece.timeline import WordPieceSettings, WordPieceTimeline, WordPieceTraining

ALGORITHMS = ("bpe", "wordpiece", "unigram")
ALGORITHM_TITLES = {"bpe": "BPE", "wordpiece": "WordPiece", "unigram": "Unigram"}
SETTINGS_TYPES = {"bpe": TrainSettings, "wordpiece": WordPieceSettings, "unigram": UnigramSettings}
_TRAININGS = {"bpe": Training, "wordpiece": WordPieceTraining, "unigram": UnigramTraining}

AnySettings = TrainSettings | WordPieceSettings | UnigramSettings
AnyTimeline = Timeline | WordPieceTimeline | UnigramTimeline


def algorithm_of(obj: object) -> str:
    """``"bpe"``, ``"wordpiece"``, ``"unigram"`` (or ``"pretrained"``) for settings or a timeline."""
    for name, cls in SETTINGS_TYPES.items():
        if isinstance(obj, cls):
            return name
    return getattr(obj, "algorithm", "bpe")


def make_training(settings: AnySettings, *, texts: Sequence[str] = (), table: Mapping[str, int] | None = None):
    """The staged training run for `settings` (validated; `SettingsError` when they cannot work)."""
    name = next((n for n, t in SETTINGS_TYPES.items() if isinstance(settings, t)), None)
    cls = _TRAININGS.get(name)
    if cls is None:
        raise SettingsError(f"cannot train from {type(settings).__name__}; choose bpe, wordpiece or unigram")
    return cls(settings, texts=texts, table=table)


def empty_copy(timeline: AnyTimeline) -> AnyTimeline:
    """A copy of `timeline` with no steps yet (what a new run starts from)."""
    if isinstance(timeline, UnigramTimeline):
        return replace(timeline, rounds=[], finished=False)
    return replace(timeline, steps=[], finished=False)


def snapshot(timeline: AnyTimeline) -> AnyTimeline:
    """A copy whose step list will not grow (safe to hand to another thread while training)."""
    if isinstance(timeline, UnigramTimeline):
        return replace(timeline, rounds=list(timeline.rounds))
    return replace(timeline, steps=list(timeline.steps))


def settings_to_json(settings: AnySettings) -> dict:
    """``{"algorithm": ..., **settings.to_json()}`` (for persisted preferences)."""
    return {"algorithm": algorithm_of(settings), **settings.to_json()}


def settings_from_json(d: Mapping) -> AnySettings:
    """Inverse of `settings_to_json`; a dict without ``algorithm`` is BPE settings."""
    d = dict(d)
    name = d.pop("algorithm", "bpe")
    cls = SETTINGS_TYPES.get(name)
    if cls is None:
        raise SettingsError(f"unknown algorithm {name!r}; choose {', '.join(ALGORITHMS)}")
    return cls.from_json(d)


def step_noun(timeline_or_settings: object, n: int | None = None) -> str:
    """What one step is called: ``"merge"``/``"merges"``, or ``"round"``/``"rounds"`` for Unigram."""
    word = "round" if algorithm_of(timeline_or_settings) == "unigram" else "merge"
    return word if n == 1 else word + "s"
