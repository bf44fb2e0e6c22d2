"""JSON tokenizer files, told apart by what they hold: a tokviz model (its ``format`` header, which
may sit past the first bytes), a Hugging Face ``tokenizer.json`` (a ``model`` object), Mistral's
``tekken.json`` (a ``config`` with a ``pattern`` and a ``vocab`` list: `tekken`) or GPT-2's
``encoder.json`` (token -> id; its ``vocab.bpe`` is read from beside it)."""

from __future__ import annotations

import os
from pathlib import Path

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes

from .data_gym import read_data_gym
from .descriptions import PipelineJson, RankedVocab, TokvizModel
from .tekken import is_tekken, read_tekken
from .tokviz_json import read_tokviz_model, tokviz_format


def read_json_model(path: str | os.PathLike, head: bytes = b"") -> TokvizModel | PipelineJson | RankedVocab:
    """The description in the JSON file `path` (`head`: its first bytes, when already read)."""
    path = Path(path)
    if tokviz_format(head):  # read with the wording of tokviz's own files
        return read_tokviz_model(path)
    d = parse_json(read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError), str(path), ModelFormatError)
    if isinstance(d, dict) and isinstance(d.get("format"), str) and d["format"].startswith("tokviz-"):
        return TokvizModel(d, str(path))  # its header past the first bytes
    if isinstance(d, dict) and isinstance(d.get("model"), dict):
        return PipelineJson(d, path.parent.name or path.stem, str(path))
    if is_tekken(d):
        return read_tekken(d, source=str(path), name=path.stem)
    if isinstance(d, dict) and d and all(isinstance(v, int) for v in list(d.values())[:100]):
        bpe = path.parent / "vocab.bpe"
        if not bpe.is_file():
            raise ModelFormatError(f"{path}: an encoder.json needs its vocab.bpe next to it ({bpe} is missing)")
        return read_data_gym(bpe, path)
    raise ModelFormatError(f"{path}: JSON, but not a tokviz model, tokenizer.json, tekken.json or encoder.json")
