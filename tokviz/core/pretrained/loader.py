"""`load_tokenizer`: one entry point for every tokenizer file format and known name.

Recognised by content, not by file name: tokviz model files (BPE, WordPiece, Unigram), minbpe ``.model`` files, Hugging
Face ``tokenizer.json``, SentencePiece ``.model`` files, ``hf:ORG/NAME`` in the Hugging Face cache, GPT-2's ``encoder.json`` / ``vocab.bpe`` (the other file is looked up
next to it), tiktoken ``.tiktoken`` files (OpenAI's recognised by sha256; others need their
pattern, from the `pattern` argument or a ``.tiktoken.json`` file next to them as written by
`export_tiktoken`), a folder holding one of these, and the names of tiktoken's encodings
(``cl100k_base``; see `tiktoken_files.find_encoding_file`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes, read_head
from tokviz.core.text.split import SPLIT_PRESETS

from .caches import HF_PREFIX, resolve_hf
from .common import PatternRequired
from .data_gym import load_data_gym
from .minbpe import HEADER as MINBPE_HEADER
from .minbpe import load_minbpe
from .rank_bpe import RankBpeTokenizer
from .tiktoken_files import (  # KnownTokenizer, known_tokenizers: also importable from here
    KNOWN_ENCODINGS,
    KnownTokenizer,
    find_encoding_file,
    known_encoding,
    known_tokenizers,
    looks_like_tiktoken,
    read_tiktoken_file,
)

SIDECAR_FORMAT = "tokviz-tiktoken-info"
SIDECAR_LIMIT = 16 << 20  # a sidecar holds a pattern and special tokens: kilobytes


def tiktoken_sidecar(path: str | os.PathLike) -> Path:
    """Where the split pattern and special tokens of the ranks file `path` live: always a name
    ending in ``.tiktoken.json``, so it can never be a model or ``tokenizer.json`` beside it.

    >>> tiktoken_sidecar("out/mine.tiktoken").as_posix(), tiktoken_sidecar("out/mine").as_posix()
    ('out/mine.tiktoken.json', 'out/mine.tiktoken.json')
    """
    path = Path(path)
    stem = path.name[: -len(".tiktoken")] if path.name.endswith(".tiktoken") else path.name
    return path.with_name(stem + ".tiktoken.json")


def is_tiktoken_sidecar(path: str | os.PathLike) -> bool:
    """Whether `path` is a sidecar tokviz wrote (an export may replace it; nothing else)."""
    try:
        d = parse_json(read_file_bytes(path, limit=SIDECAR_LIMIT), str(path))
    except TokvizError:
        return False
    return isinstance(d, dict) and d.get("format") == SIDECAR_FORMAT


def load_tiktoken(
    path: str | os.PathLike,
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> RankBpeTokenizer:
    """A `.tiktoken` file. OpenAI's encodings are recognised by sha256; for others the split
    `pattern` (a regex, or a preset name: ``gpt2``, ``gpt4``, ``o200k``) comes from the argument
    or the ``.tiktoken.json`` next to the file, else `PatternRequired` is raised (the GUI then
    asks for it)."""
    path = Path(path)
    if pattern in SPLIT_PRESETS and SPLIT_PRESETS[pattern]:  # a preset name: gpt2, gpt4, o200k
        pattern = SPLIT_PRESETS[pattern]
    f = read_tiktoken_file(path)
    known = f.known
    if pattern is None and known is not None:
        pattern = known.pattern
        special_tokens = known.special_tokens if special_tokens is None else special_tokens
        name = name or known.name
    if pattern is None:
        side = _read_sidecar(path)
        if side is not None:
            pattern = side["pattern"]
            special_tokens = side.get("special_tokens", {}) if special_tokens is None else special_tokens
            name = name or side.get("name")
    if pattern is None:
        raise PatternRequired(
            f"{path}: not one of OpenAI's encodings (unknown sha256 {f.sha256[:12]}...); give its "
            f"split pattern (e.g. the cl100k pattern), or put it in {tiktoken_sidecar(path).name}"
        )
    tok = RankBpeTokenizer.from_token_list(
        f.tokens, f.ranks, pattern=pattern, special_tokens=special_tokens or {}, name=name or path.stem
    )
    tok.source = str(path)
    return tok


def _read_sidecar(path: Path) -> dict | None:
    side = tiktoken_sidecar(path)
    if not side.is_file():
        return None
    d = parse_json(read_file_bytes(side, limit=MAX_MODEL_BYTES, error=ModelFormatError), str(side), ModelFormatError)
    if not isinstance(d, dict) or d.get("format") != SIDECAR_FORMAT or not isinstance(d.get("pattern"), str):
        raise ModelFormatError(f"{side}: not a tokviz tiktoken info file")
    if d.get("version", 1) > 1:
        raise ModelFormatError(f"{side}: format version {d['version']} is newer than this tokviz reads; update tokviz")
    return d


def load_by_name(name: str, *, download: bool = True) -> RankBpeTokenizer:
    """A tiktoken encoding by name, from tiktoken's cache or downloaded through tiktoken."""
    enc = known_encoding(name)
    tok = load_tiktoken(find_encoding_file(name, download=download), pattern=enc.pattern,
                        special_tokens=enc.special_tokens, name=enc.name)
    return tok


def _load_dir(path: Path, pattern: str | None):
    for candidate in ("tokenizer.json", "vocab.bpe"):
        if (path / candidate).is_file():
            return open_model(path / candidate, pattern=pattern)
    found = sorted(path.glob("*.tiktoken")) + sorted(path.glob("*.model"))
    if len(found) == 1:
        return open_model(found[0], pattern=pattern)
    raise ModelFormatError(
        f"{path}: folder holds no tokenizer (looked for tokenizer.json, vocab.bpe + encoder.json, "
        f"one .tiktoken or one minbpe .model file)"
    )


_FORMAT = re.compile(rb'"format"\s*:\s*"(tokviz-[a-z]+)"')


def _tokviz_format(head: bytes) -> bool:
    from tokviz.core.model_files import MODEL_FORMATS

    m = _FORMAT.search(head)
    return m is not None and m.group(1).decode() in MODEL_FORMATS


def is_tokviz_model(path: str | os.PathLike) -> bool:
    """True when `path` is a file that starts like a tokviz model (any algorithm)."""
    try:
        head = read_head(path, 4096)
    except TokvizError:  # missing, unreadable, or not an ordinary file (never opened blocking)
        return False
    return _tokviz_format(head)


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
    head = read_head(path, 4096, ModelFormatError)
    stripped = head.lstrip()
    if head.startswith(MINBPE_HEADER.encode()):
        return load_minbpe(path)
    if head.startswith(b"#version"):
        return load_data_gym(path)
    if stripped.startswith(b"{") and _tokviz_format(head):  # BPE, WordPiece, Unigram: the timeline
        from tokviz.core.model_files import load_model

        return load_model(path)
    if stripped.startswith(b"{"):
        return _load_json(path, pattern)
    if looks_like_tiktoken(head):
        return load_tiktoken(path, pattern=pattern)
    if head[:1] == b"\x0a" or b"\x12" in head[:8]:
        from .spm import SentencePieceTokenizer  # here: numpy and the lattice load only for a .model file

        return SentencePieceTokenizer.from_file(path)
    raise ModelFormatError(
        f"{path}: not a tokenizer file tokviz knows (tokviz model, minbpe .model, tokenizer.json, "
        f"encoder.json + vocab.bpe, .tiktoken)"
    )


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


def _load_json(path: Path, pattern: str | None):
    d = parse_json(read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError), str(path), ModelFormatError)
    from tokviz.core.model_files import MODEL_FORMATS, model_from_json

    if isinstance(d, dict) and d.get("format") in MODEL_FORMATS:  # its header past the first 4 KB
        try:
            return model_from_json(d)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{path}: {exc}") from None
    if isinstance(d, dict) and isinstance(d.get("model"), dict):
        try:
            from .hf.tokenizer import HfTokenizer  # here: a .tiktoken file loads no tokenizer.json code

            tok = HfTokenizer.from_json(d, name=path.parent.name or path.stem)
        except ModelFormatError as exc:
            raise type(exc)(f"{path}: {exc}") from None
        tok.source = str(path)
        return tok
    if isinstance(d, dict) and d and all(isinstance(v, int) for v in list(d.values())[:100]):
        bpe = path.parent / "vocab.bpe"
        if not bpe.is_file():
            raise ModelFormatError(f"{path}: an encoder.json needs its vocab.bpe next to it ({bpe} is missing)")
        return load_data_gym(bpe, path)
    raise ModelFormatError(f"{path}: JSON, but not a tokviz model, tokenizer.json or encoder.json")


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
]
