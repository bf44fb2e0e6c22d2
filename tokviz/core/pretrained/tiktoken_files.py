"""tiktoken's `.tiktoken` files: reading them, recognising OpenAI's encodings, finding them by name.

A `.tiktoken` file has one ``base64(token bytes) rank`` line per mergeable token. The file holds
neither the split pattern nor the special tokens: for OpenAI's encodings they are recognised by
the file's sha256 (the values pinned in tiktoken's ``tiktoken_ext/openai_public.py``); for any
other file the caller must give the pattern (`PatternRequired` otherwise).

By name (``cl100k_base``) the file is looked up in tiktoken's cache folder (``TIKTOKEN_CACHE_DIR``,
else ``DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``; the file name is the sha1 of the
download address) and, when `tiktoken` is installed and the network is there, downloaded through
tiktoken. tiktoken is never needed to encode. What this leaves out: the encoder (`rank_bpe`).
"""

from __future__ import annotations

import binascii
import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tokviz.core.errors import ModelFormatError, TokvizError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, read_file_bytes
from tokviz.core.text.split import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"
_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"


@dataclass(frozen=True)
class KnownEncoding:
    """An OpenAI encoding: where its file lives, its hash, split pattern and special tokens."""

    name: str
    file_name: str  # e.g. "cl100k_base.tiktoken"
    sha256: str
    pattern: str
    special_tokens: Mapping[str, int] = field(default_factory=dict)
    n_vocab: int | None = None  # tiktoken's explicit_n_vocab, when pinned

    @property
    def url(self) -> str:
        return _BLOB + self.file_name


_R50K_SHA = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
_P50K_SHA = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
_CL100K_SHA = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_O200K_SHA = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

KNOWN_ENCODINGS: dict[str, KnownEncoding] = {
    e.name: e
    for e in [
        KnownEncoding("r50k_base", "r50k_base.tiktoken", _R50K_SHA, GPT2_SPLIT_PATTERN, {ENDOFTEXT: 50256}, 50257),
        # gpt2 is r50k_base (tiktoken builds it from GPT-2's encoder.json + vocab.bpe: same ranks)
        KnownEncoding("gpt2", "r50k_base.tiktoken", _R50K_SHA, GPT2_SPLIT_PATTERN, {ENDOFTEXT: 50256}, 50257),
        KnownEncoding("p50k_base", "p50k_base.tiktoken", _P50K_SHA, GPT2_SPLIT_PATTERN, {ENDOFTEXT: 50256}, 50281),
        KnownEncoding(
            "p50k_edit", "p50k_base.tiktoken", _P50K_SHA, GPT2_SPLIT_PATTERN,
            {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
        ),
        KnownEncoding(
            "cl100k_base", "cl100k_base.tiktoken", _CL100K_SHA, GPT4_SPLIT_PATTERN,
            {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
             ENDOFPROMPT: 100276},
        ),
        KnownEncoding(
            "o200k_base", "o200k_base.tiktoken", _O200K_SHA, O200K_SPLIT_PATTERN,
            {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
        ),
    ]
}
# a file's sha256 -> the encoding it is loaded as when opened as a file
BY_SHA256: dict[str, KnownEncoding] = {
    _R50K_SHA: KNOWN_ENCODINGS["r50k_base"],
    _P50K_SHA: KNOWN_ENCODINGS["p50k_base"],
    _CL100K_SHA: KNOWN_ENCODINGS["cl100k_base"],
    _O200K_SHA: KNOWN_ENCODINGS["o200k_base"],
}


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


# -- finding files by name -----------------------------------------------------------------------


def tiktoken_cache_dir() -> Path | None:
    """tiktoken's cache folder, or None when caching is switched off (``TIKTOKEN_CACHE_DIR=""``)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(folder) if folder else None


def cache_path(url: str) -> Path | None:
    """Where tiktoken caches the download of `url` (sha1 of the address), if caching is on."""
    folder = tiktoken_cache_dir()
    return None if folder is None else folder / hashlib.sha1(url.encode()).hexdigest()


def known_encoding(name: str) -> KnownEncoding:
    try:
        return KNOWN_ENCODINGS[name]
    except KeyError:
        raise TokvizError(
            f"unknown tiktoken encoding {name!r}; known: {', '.join(KNOWN_ENCODINGS)}"
        ) from None


def find_encoding_file(name: str, *, download: bool = True) -> Path:
    """The path of the `.tiktoken` file of encoding `name` (cached, else downloaded via tiktoken).

    Raises `TokvizError` saying how to supply the file when neither works.
    """
    enc = known_encoding(name)
    cached = cache_path(enc.url)
    if cached is not None and cached.is_file():
        try:
            if hashlib.sha256(cached.read_bytes()).hexdigest() == enc.sha256:
                return cached
        except OSError:
            pass
    reason = "it is not in tiktoken's cache"
    if download:
        try:
            from tiktoken.load import read_file_cached  # optional extra, download only
        except ImportError:
            reason += " and tiktoken (which downloads it) is not installed"
        else:
            try:
                read_file_cached(enc.url, enc.sha256)
            except Exception as exc:  # network errors come in many types
                reason += f" and downloading it failed ({download_error(exc)})"
            else:
                if cached is not None and cached.is_file():
                    return cached
                reason += " and tiktoken's cache is switched off (TIKTOKEN_CACHE_DIR is empty)"
    where = f" or copy it to {cached}" if cached is not None else ""
    raise TokvizError(
        f"cannot find the {name} encoding: {reason}. Download {enc.url} and open the file "
        f"(File > Open Tokenizer…, or pass its path as MODEL){where}"
    )


_CONNECTION_PREFIX = re.compile(r"^\w+\(host=[^)]*\):\s*")


def download_error(exc: BaseException) -> str:
    """What went wrong with a download, whole but without the layers of wrappers around it:
    requests -> urllib3's retry error -> the reason (``Failed to resolve 'host' (...)``).

    >>> class Retry(Exception):
    ...     reason = OSError("HTTPSConnection(host='h', port=443): Failed to resolve 'h'")
    >>> download_error(ConnectionError(Retry("HTTPSConnectionPool(host='h', port=443): Max retries ...")))
    "ConnectionError: Failed to resolve 'h'"
    """
    inner: object = exc
    for _ in range(5):  # requests wraps urllib3's MaxRetryError, whose .reason is the real error
        nxt = getattr(inner, "reason", None)
        if nxt is None and getattr(inner, "args", None) and isinstance(inner.args[0], BaseException):
            nxt = inner.args[0]
        if not isinstance(nxt, BaseException):
            break
        inner = nxt
    text = _CONNECTION_PREFIX.sub("", " ".join(str(inner).split()))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass(frozen=True)
class KnownTokenizer:
    """A tokenizer that can be opened by name, and whether its file is already on this machine."""

    name: str
    description: str
    cached: bool


_DESCRIPTIONS = {
    "gpt2": "GPT-2 (same ranks as r50k_base)",
    "r50k_base": "GPT-3 davinci era, 50k tokens",
    "p50k_base": "Codex / text-davinci-002/003, 50k tokens",
    "p50k_edit": "p50k_base with fill-in-the-middle tokens",
    "cl100k_base": "GPT-3.5 / GPT-4, 100k tokens",
    "o200k_base": "GPT-4o, 200k tokens",
}


def known_tokenizers() -> list[KnownTokenizer]:
    """The names `load_tokenizer` accepts, with whether tiktoken's cache already has the file."""
    out = []
    for name, enc in KNOWN_ENCODINGS.items():
        p = cache_path(enc.url)
        out.append(KnownTokenizer(name, _DESCRIPTIONS.get(name, name), bool(p and p.is_file())))
    return out
