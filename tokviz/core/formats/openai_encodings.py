"""OpenAI's encodings: their pinned files, patterns and special tokens, found by name or by sha256.

tiktoken's ``tiktoken_ext/openai_public.py`` pins, for each encoding, the address and sha256 of its
`.tiktoken` file, its split pattern and its special tokens; a `.tiktoken` file holds neither of the
last two, so a file is recognised by its sha256 (`BY_SHA256`). By name (``cl100k_base``) the file is
looked up under its own name in the folders of ``$TOKVIZ_VOCAB_DIR`` (a classroom's shared copies,
for the command line and the window alike), then in tiktoken's cache folder (``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``, else
``<tmp>/data-gym-cache``; the file name is the sha1 of the download address) and, when `tiktoken` is
installed and the network is there, downloaded through tiktoken. tiktoken is never needed to encode.
What this leaves out: reading the files (`tiktoken`), the encoder (`tokviz.core.bpe.ranked.tokenizer`).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tokviz.core.errors import TokvizError
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

# gpt-oss's harmony chat format on o200k_base's ranks: its named tokens and reserved ids up to
# 201087. <|endofprompt|> and <|reserved_200018|> share the id 200018; an id shows as the name
# listed last, so the reserved names come first and 200018 decodes as <|endofprompt|>, as in tiktoken.
O200K_HARMONY_SPECIALS: dict[str, int] = {
    **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
    "<|startoftext|>": 199998, ENDOFTEXT: 199999, "<|reserved_200000|>": 200000, "<|reserved_200001|>": 200001,
    "<|return|>": 200002, "<|constrain|>": 200003, "<|reserved_200004|>": 200004, "<|channel|>": 200005,
    "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010, "<|reserved_200011|>": 200011, "<|call|>": 200012, ENDOFPROMPT: 200018,
}

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
        KnownEncoding("o200k_harmony", "o200k_base.tiktoken", _O200K_SHA, O200K_SPLIT_PATTERN,
                      O200K_HARMONY_SPECIALS, 201088),
    ]
}
# a file's sha256 -> the encoding it is loaded as when opened as a file
BY_SHA256: dict[str, KnownEncoding] = {
    _R50K_SHA: KNOWN_ENCODINGS["r50k_base"],
    _P50K_SHA: KNOWN_ENCODINGS["p50k_base"],
    _CL100K_SHA: KNOWN_ENCODINGS["cl100k_base"],
    _O200K_SHA: KNOWN_ENCODINGS["o200k_base"],
}


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


VOCAB_DIR_ENV = "TOKVIZ_VOCAB_DIR"  # folders (os.pathsep-separated) holding .tiktoken files by their own names


def vocab_dir_file(enc: KnownEncoding) -> Path | None:
    """The file of `enc` in the first folder of ``$TOKVIZ_VOCAB_DIR`` that has one (``cl100k_base.tiktoken``),
    or None. A file of that name with other contents is an error, not a silently wrong tokenizer."""
    for folder in os.environ.get(VOCAB_DIR_ENV, "").split(os.pathsep):
        path = Path(folder) / enc.file_name
        if not folder or not path.is_file():
            continue
        try:
            same = hashlib.sha256(path.read_bytes()).hexdigest() == enc.sha256
        except OSError as exc:
            raise TokvizError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if not same:
            raise TokvizError(f"{path}: not OpenAI's {enc.file_name} (its sha256 differs); replace it, or take it "
                              f"out of ${VOCAB_DIR_ENV}")
        return path
    return None


def find_encoding_file(name: str, *, download: bool = True) -> Path:
    """The path of the `.tiktoken` file of encoding `name`: from ``$TOKVIZ_VOCAB_DIR`` (`vocab_dir_file`),
    tiktoken's cache, else downloaded via tiktoken.

    Raises `TokvizError` saying how to supply the file when none works.
    """
    enc = known_encoding(name)
    shared = vocab_dir_file(enc)
    if shared is not None:
        return shared
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
        f"(File > Open Tokenizer…, or pass its path as MODEL){where}, or put it in a folder named by ${VOCAB_DIR_ENV}"
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
    "o200k_harmony": "gpt-oss: o200k_base with the harmony chat tokens",
}


def known_tokenizers() -> list[KnownTokenizer]:
    """The names `load_tokenizer` accepts, with whether tiktoken's cache already has the file."""
    out = []
    for name, enc in KNOWN_ENCODINGS.items():
        p = cache_path(enc.url)
        out.append(KnownTokenizer(name, _DESCRIPTIONS.get(name, name), bool(p and p.is_file())))
    return out
