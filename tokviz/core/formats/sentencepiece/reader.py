"""Reading a SentencePiece ``.model`` file into a `SentencePieceModel` (bounded, one-line errors)."""

from __future__ import annotations

import os
from pathlib import Path

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, read_file_bytes

from ..descriptions import SentencePieceModel
from .proto import parse_model_proto


def read_sentencepiece(path: str | os.PathLike) -> SentencePieceModel:
    path = Path(path)
    data = read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError)
    try:
        proto = parse_model_proto(data)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None
    return SentencePieceModel(proto, path.parent.name or path.stem, str(path))
