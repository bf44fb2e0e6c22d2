"""A SuperBPE timeline as JSON: BPE's ``tokviz-model`` layout under its own format name, plus the
transition (``{"format": "tokviz-superbpe-model", "version": 1, "transition": t, ...}``)."""

from __future__ import annotations

from tokviz.core.bpe import model_file as bpe_file
from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.checks import is_count

from .settings import FORMAT_NAME, SuperBpeSettings
from .timeline import StageTwoStep, SuperBpeTimeline

STEP_FIELDS = ("rank", "pair", "id", "token", "count", "length", "candidates")

FORMAT_VERSION = 1


def to_json(timeline: SuperBpeTimeline) -> dict:
    """The JSON-ready dict of a SuperBPE timeline."""
    d = bpe_file.timeline_to_json(timeline)
    return {**d, "format": FORMAT_NAME, "version": FORMAT_VERSION, "transition": timeline.transition}


def from_json(d: object) -> SuperBpeTimeline:
    """Rebuild a `SuperBpeTimeline`, checking every field (`ModelFormatError` saying what is wrong)."""
    if not isinstance(d, dict) or d.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"not a SuperBPE model file (no 'format: {FORMAT_NAME}' header)")
    version = d.get("version")
    if not isinstance(version, int) or version < 1:
        raise ModelFormatError("corrupt model file: missing or unknown format version")
    if version > FORMAT_VERSION:
        raise ModelFormatError(f"model file format version {version} is newer than this tokviz reads "
                               f"({FORMAT_VERSION}); update tokviz")
    settings_d = d.get("settings")
    if not isinstance(settings_d, dict):
        raise ModelFormatError("corrupt model file: missing or malformed settings")
    try:
        settings = SuperBpeSettings.from_json(settings_d)
    except TokvizError as exc:
        raise ModelFormatError(f"corrupt model file: {exc}") from None
    plain = {k: v for k, v in settings_d.items() if k != "transition"}
    tl = bpe_file.timeline_from_json({**d, "format": bpe_file.FORMAT_NAME, "version": 1, "settings": plain})
    transition = d.get("transition")
    if not is_count(transition) or transition > min(tl.n_merges, settings.transition):
        raise ModelFormatError("corrupt model file: the transition is not a merge of the file")
    steps = tl.steps[:transition] + [StageTwoStep(*(getattr(s, f) for f in STEP_FIELDS)) for s in tl.steps[transition:]]
    return SuperBpeTimeline(settings, tl.base, steps, tl.corpus_length, tl.n_chunks, tl.finished)
