"""What the readers give: neutral descriptions of the model a file holds, not tokenizers.

A description is plain data (tokens, ranks, merges, a split pattern, special tokens) in the shape an
encoder family takes. Several formats give the same description (tiktoken and GPT-2's data-gym files
both hold a `RankedVocab`), so a new format that holds a known kind of model is one reader and
no new tokenizer code; the loader (`tokviz.core.loading`) turns each description into the
tokenizer that encodes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RankedVocab:
    """Byte-level BPE by token rank (tiktoken's rule): ``{token bytes: rank}``, a split pattern and
    special tokens. Ids are ranks."""

    ranks: Mapping[bytes, int]
    pattern: str
    special_tokens: Mapping[str, int] = field(default_factory=dict)
    name: str = "tiktoken"
    source: str | None = None  # the file it was read from


@dataclass(frozen=True)
class MergeList:
    """Byte-level BPE by merge order (minbpe's rule): merge k joins the pair ``merges[k]`` of ids
    into id ``256 + k``; `pattern` splits the text first (empty: no split)."""

    merges: tuple[tuple[int, int], ...]
    pattern: str
    special_tokens: Mapping[str, int] = field(default_factory=dict)
    name: str = "minbpe"
    source: str | None = None


@dataclass(frozen=True)
class Declared:
    """What a file declares beside its model (a GGUF file's metadata): the pre-tokenizer name it
    gives (``tokenizer.ggml.pre``), the special ids by role (``bos``, ``eos``, ``unk``, ``pad``,
    ``sep``, ...) and whether an encoded text gets BOS, EOS or SEP added."""

    pre: str | None = None
    special_ids: Mapping[str, int] = field(default_factory=dict)
    add_bos: bool = False
    add_eos: bool = False
    add_sep: bool = False
    origin: str = ""  # what declared it, for messages ("GGUF gpt2")


@dataclass(frozen=True)
class PipelineJson:
    """A Hugging Face ``tokenizer.json``: normalizer, pre-tokenizer, model, post-processor and
    decoder as the file's own JSON objects (the components are read where they are built)."""

    data: Mapping[str, Any]
    name: str
    source: str | None = None
    declared: Declared | None = None  # made from another format's metadata (GGUF)


@dataclass(frozen=True)
class SentencePieceModel:
    """A SentencePiece ``ModelProto`` (pieces, scores, types, trainer and normalizer specs)."""

    proto: Any  # `tokviz.core.formats.sentencepiece.ModelProto`
    name: str
    source: str | None = None
    declared: Declared | None = None  # made from another format's metadata (GGUF)


@dataclass(frozen=True)
class TokvizModel:
    """A model trained and saved by tokviz (any algorithm): the file's JSON, whose ``format``
    header names the algorithm that reads it back into a timeline (see the registry)."""

    data: Mapping[str, Any]
    source: str | None = None


Description = RankedVocab | MergeList | PipelineJson | SentencePieceModel | TokvizModel
