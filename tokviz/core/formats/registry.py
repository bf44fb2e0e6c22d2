"""The file formats tokviz reads, recognised by content (never by file name), in the order they
are tried: each is a `FileFormat` whose reader gives a description (`descriptions`).

Adding a format: write its reader module in this folder and add one `FileFormat` here; if its
model is of a new kind, add its description and the builder that makes a tokenizer of it
(`tokviz.core.loading.BUILDERS`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.safe_files import read_head

from .data_gym import read_data_gym
from .descriptions import Description
from .json_files import read_json_model
from .minbpe import HEADER as MINBPE_HEADER
from .minbpe import read_minbpe
from .tiktoken import looks_like_tiktoken, read_tiktoken

HEAD_BYTES = 4096  # how much of a file the formats are recognised by


@dataclass(frozen=True)
class FileFormat:
    """One format: `sniff` looks at a file's first bytes; `read(path, head, pattern)` gives its
    description (`pattern`: a split pattern the user gave, for formats that lack one)."""

    name: str
    files: str  # how the format's files are called, in "not a tokenizer file" messages
    sniff: Callable[[bytes], bool]
    read: Callable[[Path, bytes, str | None], Description]


FORMATS: tuple[FileFormat, ...] = (
    FileFormat("gguf", "GGUF .gguf", lambda head: head.startswith(b"GGUF"), lambda path, head, pattern: _read_gguf(path)),
    FileFormat("minbpe", "minbpe .model", lambda head: head.startswith(MINBPE_HEADER.encode()),
               lambda path, head, pattern: read_minbpe(path)),
    FileFormat("data-gym", "vocab.bpe + encoder.json", lambda head: head.startswith(b"#version"),
               lambda path, head, pattern: read_data_gym(path)),
    FileFormat("json", "tokviz model, tokenizer.json, tekken.json", lambda head: head.lstrip().startswith(b"{"),
               lambda path, head, pattern: read_json_model(path, head)),
    FileFormat("tiktoken", ".tiktoken", looks_like_tiktoken,
               lambda path, head, pattern: read_tiktoken(path, pattern=pattern)),
    FileFormat("sentencepiece", "SentencePiece .model", lambda head: head[:1] == b"\x0a" or b"\x12" in head[:8],
               lambda path, head, pattern: _read_sentencepiece(path)),  # a serialized ModelProto: field 1 or 2 first
)


def _read_sentencepiece(path: Path) -> Description:
    from .sentencepiece.reader import read_sentencepiece  # here: numpy loads only for a .model file

    return read_sentencepiece(path)


def _read_gguf(path: Path) -> Description:
    from .gguf import read_gguf  # here: numpy loads only for a .gguf file

    return read_gguf(path)


def format_of(head: bytes) -> FileFormat | None:
    """The first format whose files start like `head`, or None."""
    return next((f for f in FORMATS if f.sniff(head)), None)


def read_model_file(path: str | os.PathLike, *, pattern: str | None = None) -> Description:
    """The description of the model in the file `path`, whatever its format; `ModelFormatError`
    when no format tokviz knows starts like it."""
    path = Path(path)
    head = read_head(path, HEAD_BYTES, ModelFormatError)
    found = format_of(head)
    if found is None:
        known = ", ".join(f.files for f in FORMATS)
        raise ModelFormatError(f"{path}: not a tokenizer file tokviz knows ({known})")
    return found.read(path, head, pattern)
