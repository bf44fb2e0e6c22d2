"""`load_tokenizer`: one entry point for every tokenizer file format and known name.

A file's format is recognised by content and read by its reader in `tokviz.core.formats` into a
description; `BUILDERS` makes the tokenizer that encodes each kind of description: a tokviz model
file's timeline (BPE, WordPiece, Unigram), or a tokenizer for every other format. Names resolve
first: ``hf:ORG/NAME`` in the Hugging Face cache, the names of tiktoken's encodings (``cl100k_base``;
see `tokviz.core.formats.openai_encodings.find_encoding_file`), and a folder holding one file of a
known format.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from tokviz.core.errors import ModelFormatError, SplitError, TokvizError
from tokviz.core.explain.loaded_timeline import LoadedTimeline
from tokviz.core.formats.descriptions import (
    Description,
    MergeList,
    PipelineJson,
    RankedVocab,
    SentencePieceModel,
    TokvizModel,
)
from tokviz.core.formats.hf_cache import HF_PREFIX, resolve_hf
from tokviz.core.formats.openai_encodings import (  # KnownTokenizer, known_tokenizers: also importable from here
    KNOWN_ENCODINGS,
    KnownTokenizer,
    find_encoding_file,
    known_encoding,
    known_tokenizers,
)
from tokviz.core.formats.registry import read_model_file
from tokviz.core.formats.tiktoken import PatternRequired, read_tiktoken
from tokviz.core.formats.tokviz_json import tokviz_format
from tokviz.core.io.safe_files import read_head
from tokviz.core.text.split import SPLIT_PRESETS, Splitter, parse_split

if TYPE_CHECKING:
    from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
    from tokviz.core.bpe.tokenizer import BpeTokenizer


def load_tiktoken(
    path: str | os.PathLike,
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> RankBpeTokenizer:
    """A `.tiktoken` file (`tokviz.core.formats.tiktoken.read_tiktoken`: the split `pattern` from
    the argument, OpenAI's pinned encodings or the sidecar; `PatternRequired` otherwise)."""
    return ranked_tokenizer(read_tiktoken(path, pattern=pattern, special_tokens=special_tokens, name=name))


def ranked_tokenizer(model: RankedVocab) -> RankBpeTokenizer:
    """tiktoken's rule over a `RankedVocab` (tiktoken files, GPT-2's data-gym files)."""
    from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer  # not for the other formats' commands

    tok = RankBpeTokenizer(model.ranks, pattern=model.pattern, special_tokens=model.special_tokens, name=model.name)
    tok.source = model.source
    return tok


def _splitter(pattern: str) -> Splitter:
    if not pattern:
        return parse_split("none")
    for name, preset in SPLIT_PRESETS.items():
        if preset == pattern:
            return parse_split(name)
    try:
        return parse_split("regex:" + pattern)
    except SplitError as exc:
        raise ModelFormatError(f"the model's split pattern cannot be used: {exc}") from None


def merge_list_tokenizer(model: MergeList) -> BpeTokenizer:
    """Byte-level BPE by merge order (minbpe), encoded by tokviz's trained-BPE tokenizer."""
    from tokviz.core.bpe.tokenizer import BpeTokenizer
    from tokviz.core.bpe.units import BaseVocab

    try:
        splitter = _splitter(model.pattern)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{model.source}: {exc}" if model.source else str(exc)) from None
    tok = BpeTokenizer(BaseVocab("bytes"), model.merges, splitter, special_tokens=model.special_tokens, name=model.name)
    tok.source = model.source
    return tok


def pipeline_tokenizer(model: PipelineJson):
    """A Hugging Face ``tokenizer.json``, every component run by tokviz's code."""
    from tokviz.core.formats.tokenizer_json.tokenizer import (
        HfTokenizer,  # here: a .tiktoken file loads no tokenizer.json code
    )

    try:
        tok = HfTokenizer.from_json(model.data, name=model.name)
    except ModelFormatError as exc:
        raise type(exc)(f"{model.source}: {exc}") from None
    tok.source = model.source
    return tok


def sentencepiece_tokenizer(model: SentencePieceModel):
    from tokviz.core.formats.sentencepiece import (
        SentencePieceTokenizer,  # here: numpy and the lattice load only for a .model file
    )

    return SentencePieceTokenizer.from_description(model)


def tokviz_timeline(model: TokvizModel):
    """A model trained in tokviz: its timeline, rebuilt by the algorithm its header names."""
    from tokviz.core.gc_pause import collector_paused
    from tokviz.core.model_files import MODEL_FORMATS, model_from_json

    if model.data.get("format") not in MODEL_FORMATS:
        raise ModelFormatError(f"{model.source}: JSON, but not a tokviz model, tokenizer.json or encoder.json")
    with collector_paused():  # parsing and checking make as many lists as saving
        try:
            return model_from_json(model.data)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{model.source}: {exc}") from None


BUILDERS: dict[type, Callable[[Description], object]] = {  # a description's kind -> what encodes it
    RankedVocab: ranked_tokenizer,
    MergeList: merge_list_tokenizer,
    PipelineJson: pipeline_tokenizer,
    SentencePieceModel: sentencepiece_tokenizer,
    TokvizModel: tokviz_timeline,
}


def build(model: Description):
    """The tokenizer (or, for a tokviz model, the timeline) of a description. A description made
    from another format's metadata (GGUF) hands on what that file declares: ``tok.declared``
    (`Declared`: special ids, BOS/EOS added) and ``tok.declared_pre``, the pre-tokenizer name."""
    found = BUILDERS[type(model)](model)
    declared = getattr(model, "declared", None)
    if declared is not None:
        found.declared = declared
        found.declared_pre = declared.pre
    return found


def load_by_name(name: str, *, download: bool = True) -> RankBpeTokenizer:
    """A tiktoken encoding by name, from tiktoken's cache or downloaded through tiktoken."""
    enc = known_encoding(name)
    tok = load_tiktoken(find_encoding_file(name, download=download), pattern=enc.pattern,
                        special_tokens=enc.special_tokens, name=enc.name)
    return tok


def _load_dir(path: Path, pattern: str | None):
    for candidate in ("tokenizer.json", "vocab.bpe", "tekken.json"):
        if (path / candidate).is_file():
            return open_model(path / candidate, pattern=pattern)
    found = sorted(path.glob("*.tiktoken")) + sorted(path.glob("*.model"))
    if len(found) == 1:
        return open_model(found[0], pattern=pattern)
    raise ModelFormatError(
        f"{path}: folder holds no tokenizer (looked for tokenizer.json, vocab.bpe + encoder.json, "
        f"tekken.json, one .tiktoken or one minbpe .model file)"
    )


def is_tokviz_model(path: str | os.PathLike) -> bool:
    """True when `path` is a file that starts like a tokviz model (any algorithm)."""
    from tokviz.core.model_files import MODEL_FORMATS

    try:
        head = read_head(path, 4096)
    except TokvizError:  # missing, unreadable, or not an ordinary file (never opened blocking)
        return False
    return tokviz_format(head) in MODEL_FORMATS


def open_model(source: str | os.PathLike, *, pattern: str | None = None, download: bool = True):
    """The one reader behind every way tokviz opens a model: recognises the format by content and
    returns a tokviz model file's timeline (BPE, WordPiece, Unigram), or a tokenizer for every
    other format. `load_tokenizer` and `open_timeline` are its two views."""
    if isinstance(source, str) and source.startswith(HF_PREFIX):  # the Hugging Face cache, offline
        found = open_model(resolve_hf(source), pattern=pattern, download=False)
        found.name = source[len(HF_PREFIX):].partition("@")[0]
        return found
    path = Path(source)
    if not path.exists():
        if isinstance(source, str) and source in KNOWN_ENCODINGS:
            return load_by_name(source, download=download)
        names = ", ".join(KNOWN_ENCODINGS)
        raise ModelFormatError(f"{source}: no such file, and not a known tokenizer name ({names}) "
                               f"or a Hugging Face cache name (hf:ORG/NAME)")
    if path.is_dir():
        return _load_dir(path, pattern)
    return build(read_model_file(path, pattern=pattern))


def is_timeline(found: object) -> bool:
    """True for what `open_model` returns for a tokviz model file (a trained timeline)."""
    if not callable(getattr(found, "tokenizer", None)):  # a tokenizer: no need to load every trainer
        return False
    from tokviz.core.registry import spec_of

    return spec_of(found) is not None


def load_tokenizer(source: str | os.PathLike, *, pattern: str | None = None, download: bool = True):
    """Open any tokenizer tokviz knows: a file, a folder, or a tiktoken encoding name.

    Returns a `BpeTokenizer` (tokviz BPE and minbpe models), `WordPieceTokenizer` or
    `UnigramTokenizer` (tokviz models of those algorithms), `RankBpeTokenizer` (tiktoken, GPT-2
    data-gym files) or `HfTokenizer` (tokenizer.json); all share the method grid.
    """
    found = open_model(source, pattern=pattern, download=download)
    if is_timeline(found):
        found = found.tokenizer()
        found.source = str(source)
    return found




def open_timeline(source: str | os.PathLike, *, pattern: str | None = None, download: bool = True):
    """Any model as a timeline: a tokviz model file as its own timeline (BPE, WordPiece,
    Unigram); every other tokenizer `load_tokenizer` reads (file, folder, known name) as a
    `LoadedTimeline`. Raises `PatternRequired` for a `.tiktoken` file of an unknown encoding."""
    found = open_model(source, pattern=pattern, download=download)  # the one loader
    if is_timeline(found):
        return found
    return LoadedTimeline(found, source=str(found.source or source))


__all__ = [
    "KnownTokenizer",
    "PatternRequired",
    "TokvizError",
    "known_tokenizers",
    "load_by_name",
    "load_tiktoken",
    "load_tokenizer",
    "is_tokviz_model",
    "open_model",
    "open_timeline",
]
