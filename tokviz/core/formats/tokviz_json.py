"""tokviz's own JSON files (models of every algorithm, sessions): read bounded, with one-line errors
that name the kind of file, and recognised by the ``"format": "tokviz-..."`` header near their start.

Which header belongs to which algorithm is the registry's business (`tokviz.core.model_files`); a
reader here only says that a file is tokviz's and gives its JSON (`TokvizModel`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.gc_pause import collector_paused
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, JsonWording, parse_json, read_file_bytes

from .descriptions import TokvizModel

_HEADER = re.compile(rb'"format"\s*:\s*"(tokviz-[a-z]+)"')


def tokviz_format(head: bytes) -> str | None:
    """The ``tokviz-...`` format a file's first bytes name, or None."""
    m = _HEADER.search(head)
    return None if m is None else m.group(1).decode()


def read_file(path: Path, error: type[TokvizError] = ModelFormatError) -> bytes:
    """The bytes in `path`; `error` ("no such file", "cannot read (...)") otherwise."""
    return read_file_bytes(path, limit=MAX_MODEL_BYTES, error=error)


_FILE_WORDING = JsonWording(
    not_utf8="{name}: not a tokviz {what} file (not UTF-8 JSON)",
    invalid="{name}: not a valid {what} file (JSON error at line {line}, column {column}; truncated?)",
    too_deep="{name}: not a valid {what} file (JSON nested too deeply)",
    too_long="{name}: not a valid {what} file (a number of more than {limit:,} digits)",
)


def read_json(path: Path, error: type[TokvizError] = ModelFormatError, *, kind: str = "model") -> object:
    """The JSON value in a tokviz `kind` file ("model", "session"); `error` saying what is wrong
    otherwise."""
    return parse_json(read_file(path, error), str(path), error, what=kind, wording=_FILE_WORDING)


def read_tokviz_model(path: str | os.PathLike) -> TokvizModel:
    """A model file tokviz saved, as its JSON (checked when the registry rebuilds the timeline)."""
    with collector_paused():  # a model is hundreds of thousands of small lists, none in a cycle
        return TokvizModel(read_json(Path(path)), str(path))
