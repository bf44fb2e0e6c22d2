"""Saving and loading a trained timeline (any algorithm) as one JSON file.

Each algorithm writes and checks its own format (``tokviz-model`` for BPE in
`tokviz.core.bpe.model_file`, ``tokviz-wordpiece``, ``tokviz-unigram``); the registry says which is
whose. This module reads and writes the files: bounded, ordinary files only, atomic writes (a
failed save never leaves a partial file), and a `ModelFormatError` saying what is wrong.

It sits beside the registry, below the readers of other formats (`tokviz.core.loading`
opens a tokviz model like any tokenizer file) and below sessions (`tokviz.core.saved`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

# FORMAT_*, STEP_COLUMNS and timeline_to_json: public names of the BPE format, from here too
from tokviz.core.bpe.model_file import (
    FORMAT_NAME,  # noqa: F401
    FORMAT_VERSION,  # noqa: F401
    STEP_COLUMNS,  # noqa: F401
    timeline_from_json,
    timeline_json_text,
    timeline_to_json,  # noqa: F401
)
from tokviz.core.bpe.timeline import Timeline
from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.formats.tokviz_json import read_json
from tokviz.core.gc_pause import collector_paused
from tokviz.core.io.json_stream import json_pieces
from tokviz.core.io.safe_files import write_atomic
from tokviz.core.registry import SPECS, spec_named, spec_of, spec_with_format


def save_timeline(timeline: Timeline, path: str | os.PathLike) -> None:
    """Write `timeline` to `path` atomically; raise `TokvizError` if it cannot be written."""
    _write(path, lambda: timeline_json_text(timeline))


def _write(path: str | os.PathLike, pieces: Callable[[], Iterable[bytes]]) -> None:
    with collector_paused():  # a model is hundreds of thousands of small lists, none in a cycle
        write_atomic(Path(path), pieces())


def _load(path: str | os.PathLike, from_json):
    path = Path(path)
    with collector_paused():  # parsing and checking make as many lists as saving
        d = read_json(path)
        try:
            return from_json(d)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{path}: {exc}") from None


def model_to_json(timeline) -> dict:
    """The JSON dict of a timeline of any trainable algorithm (its own format, see the registry)."""
    return _spec_to_save(timeline).to_json(timeline)


def model_json_pieces(timeline) -> Iterator[bytes]:
    """The model file of a timeline of any trainable algorithm, in pieces: `model_to_json`'s dict
    as compact JSON, or the same bytes from the algorithm's own writer (the registry's
    ``to_json_text``)."""
    spec = _spec_to_save(timeline)
    return spec.to_json_text(timeline) if spec.to_json_text is not None else json_pieces(spec.to_json(timeline))


def _spec_to_save(timeline):
    spec = spec_of(timeline)
    if spec is None:
        raise TokvizError(f"cannot save a {getattr(timeline, 'algorithm', '?')!r} timeline as a tokviz model")
    return spec


def model_from_json(d: object):
    """Rebuild a timeline from `model_to_json`'s dict, by its ``format`` header (BPE's when the
    header names no other format, so the BPE loader says what is wrong)."""
    spec = spec_with_format(d.get("format") if isinstance(d, dict) else None) or spec_named("bpe")
    return spec.from_json(d)


def load_timeline(path: str | os.PathLike) -> Timeline:
    """Read a model file written by `save_timeline`."""
    return _load(path, timeline_from_json)


# -- any algorithm: BPE (tokviz-model), WordPiece (tokviz-wordpiece), Unigram (tokviz-unigram) --

MODEL_FORMATS = tuple(spec.format_name for spec in SPECS.values())


def save_model(timeline, path: str | os.PathLike) -> None:
    """Write a BPE, WordPiece or Unigram timeline to `path` atomically (its own format name)."""
    _write(path, lambda: model_json_pieces(timeline))


def load_model(path: str | os.PathLike):
    """Read a model file of any tokviz format: a `Timeline`, `WordPieceTimeline` or `UnigramTimeline`."""
    return _load(path, model_from_json)
