"""tiktoken's `.tiktoken` files: one ``base64(token bytes) rank`` line per mergeable token.

The file holds neither the split pattern nor the special tokens: for OpenAI's encodings they are
recognised by the file's sha256 (`openai_encodings`); for any other file they come from the caller
or from the ``.tiktoken.json`` sidecar tokviz writes beside an exported file, else `PatternRequired`
is raised (the window then asks for the pattern). Gives a `RankedVocab`.
"""

from __future__ import annotations

import binascii
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes
from tokviz.core.text.split import SPLIT_PRESETS

from .descriptions import RankedVocab
from .openai_encodings import BY_SHA256, KnownEncoding

SIDECAR_FORMAT = "tokviz-tiktoken-info"
SIDECAR_LIMIT = 16 << 20  # a sidecar holds a pattern and special tokens: kilobytes


class PatternRequired(TokvizError):
    """A `.tiktoken` file of an unknown encoding: its split pattern must be given."""


@dataclass(frozen=True)
class TiktokenFile:
    """The contents of a `.tiktoken` file: token bytes and ranks, in file order."""

    tokens: list[bytes]
    ranks: list[int]
    sha256: str

    @property
    def known(self) -> KnownEncoding | None:
        return BY_SHA256.get(self.sha256)


def parse_tiktoken(data: bytes, *, source: str = "<data>") -> TiktokenFile:
    """Parse the bytes of a `.tiktoken` file; `ModelFormatError` names the first bad line."""
    sha = hashlib.sha256(data).hexdigest()
    fields = data.split()
    b64 = binascii.a2b_base64
    try:
        if len(fields) % 2:
            raise ValueError
        tokens = [b64(t, strict_mode=True) for t in fields[0::2]]
        ranks = list(map(int, fields[1::2]))
    except (ValueError, binascii.Error, TypeError):
        raise ModelFormatError(f"{source}: not a .tiktoken file ({_first_bad_line(data)})") from None
    if not tokens:
        raise ModelFormatError(f"{source}: empty .tiktoken file (no tokens)")
    check_ranks(ranks, source)
    return TiktokenFile(tokens, ranks, sha)


RANK_SLACK = 65_536  # ranks may leave gaps (room for special tokens), but not sized beyond the file


def check_ranks(ranks: list[int], source: str) -> None:
    """Ranks are distinct, from 0, and no larger than the file's size allows: tables are sized by
    the largest rank, so a 2 KB file must not ask for gigabytes.

    >>> check_ranks([0, 1, 2], "ok")
    >>> check_ranks([0, 99_999_999], "f.tiktoken")
    Traceback (most recent call last):
    ...
    tokviz.core.errors.ModelFormatError: f.tiktoken: rank 99,999,999 is far beyond the 2 tokens the file holds (its ranks should run 0..1)
    """
    n = len(ranks)
    if ranks == list(range(n)):  # in rank order from 0, as OpenAI's files are: nothing more to check
        return
    low, high = min(ranks), max(ranks)
    if low < 0:
        raise ModelFormatError(f"{source}: rank {low} is negative")
    if high >= n + RANK_SLACK:
        raise ModelFormatError(f"{source}: rank {high:,} is far beyond the {n:,} tokens the file holds "
                               f"(its ranks should run 0..{n - 1:,})")
    if len(set(ranks)) != n:
        raise ModelFormatError(f"{source}: a rank appears twice")


def _first_bad_line(data: bytes) -> str:
    for no, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            binascii.a2b_base64(parts[0], strict_mode=True)
            int(parts[1])
        except (ValueError, binascii.Error):
            return f"line {no} is not 'base64-token rank': {line[:60]!r}"
    return "malformed lines"


def read_tiktoken_file(path: str | os.PathLike) -> TiktokenFile:
    path = Path(path)
    return parse_tiktoken(read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError), source=str(path))


def looks_like_tiktoken(head: bytes) -> bool:
    """True when the first bytes of a file look like ``base64 rank`` lines."""
    lines = head.split(b"\n")[:4]
    if len(lines) > 1:
        lines = lines[:-1] or lines  # the last line may be cut short
    try:
        for line in lines:
            tok, rank = line.split()
            binascii.a2b_base64(tok, strict_mode=True)
            int(rank)
    except (ValueError, binascii.Error):
        return False
    return True




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


def read_tiktoken(
    path: str | os.PathLike,
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> RankedVocab:
    """A `.tiktoken` file as a `RankedVocab`. The split `pattern` (a regex, or a preset name:
    ``gpt2``, ``gpt4``, ``o200k``) comes from the argument, else OpenAI's encoding of the same
    sha256, else the ``.tiktoken.json`` next to the file; `PatternRequired` otherwise."""
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
    if len(f.tokens) != len(f.ranks):
        raise ModelFormatError("tokens and ranks differ in length")
    ranks = dict(zip(f.tokens, f.ranks))
    if len(ranks) != len(f.tokens):
        raise ModelFormatError(f"{name or path.stem}: a token appears twice")
    return RankedVocab(ranks, pattern, dict(special_tokens or {}), name or path.stem, str(path))
