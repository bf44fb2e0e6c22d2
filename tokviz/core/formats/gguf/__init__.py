"""GGUF files (llama.cpp's model format): the tokenizer in their metadata, never their tensors.

`metadata` parses the header and key/value pairs (bounded, one-line errors), `vocab` turns the
``tokenizer.ggml.*`` keys into a description tokviz already encodes (`SentencePieceModel` for
llama and t5 vocabularies, `PipelineJson` for gpt2 and bert), `pre_types` holds llama.cpp's
pre-tokenizer types. Vocabulary-only files and whole models read the same.
"""

from __future__ import annotations

import os
from pathlib import Path

from tokviz.core.errors import ModelFormatError

from ..descriptions import PipelineJson, SentencePieceModel
from .metadata import MAGIC, read_metadata
from .pre_types import PRE_TYPES, PreType, pre_type
from .vocab import KEY, gguf_description


def _wanted(key: str) -> bool:
    return key.startswith(KEY) or key == "general.name"


def read_gguf(path: str | os.PathLike) -> SentencePieceModel | PipelineJson:
    """The tokenizer of the GGUF file `path`; `ModelFormatError` for a malformed file or one
    whose tokenizer kind tokviz does not read."""
    path = Path(path)
    _, kv = read_metadata(path, wanted=_wanted)
    named = kv.get("general.name")
    name = named[1] if named and isinstance(named[1], str) and named[1] else path.stem
    try:
        return gguf_description(kv, name=name, source=str(path))
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None


def looks_like_gguf(head: bytes) -> bool:
    return head.startswith(MAGIC)


__all__ = ["PRE_TYPES", "PreType", "looks_like_gguf", "pre_type", "read_gguf"]
