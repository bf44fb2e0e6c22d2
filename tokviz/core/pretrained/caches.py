"""The tokenizers already on this machine: the Hugging Face cache and tiktoken's cache, offline.

``hf:ORG/NAME`` (optionally ``hf:ORG/NAME@REVISION``) names a model in the Hugging Face hub cache:
``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub`` (by default
``~/.cache/huggingface/hub``), laid out as ``models--ORG--NAME/snapshots/REVISION/`` with
``refs/main`` naming the revision of the main branch. `resolve_hf` finds the tokenizer file in the
revision ``refs/main`` points to first, then the other revisions (newest first): ``tokenizer.json``,
else a SentencePiece model (``tokenizer.model``, ``spiece.model``, ``sentencepiece.bpe.model``).
Nothing is ever downloaded; a name not in the cache is an error saying where tokviz looked.

`cached_tokenizers` lists every tokenizer in both caches with its size and kind, for
File > Known Tokenizers. What this leaves out: opening the files (`loader`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tokviz.core.errors import ModelFormatError

from .tiktoken_files import KNOWN_ENCODINGS, cache_path

HF_PREFIX = "hf:"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")
_MODEL_TYPE = re.compile(rb'"model"\s*:\s*\{\s*"type"\s*:\s*"(\w+)"')
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache folder, as huggingface_hub finds it."""
    env = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if env:
        return Path(env).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(home).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def _repo_folder(name: str) -> str:
    return "models--" + name.replace("/", "--")


def _revisions(repo: Path, revision: str | None) -> list[Path]:
    """Snapshot folders to try, in order."""
    snaps = repo / "snapshots"
    if revision:
        ref = repo / "refs" / revision
        commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
        return [snaps / commit]
    out: list[Path] = []
    refs = repo / "refs"
    main = refs / "main"
    if main.is_file():
        out.append(snaps / main.read_text(encoding="utf-8").strip())
    if snaps.is_dir():
        others = sorted((p for p in snaps.iterdir() if p.is_dir() and p not in out),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        out.extend(others)
    return out


def _tokenizer_in(folder: Path) -> Path | None:
    for f in TOKENIZER_FILES:
        p = folder / f
        if p.is_file():  # follows the snapshot's symlink into blobs/: a missing blob is skipped
            return p
    return None


def resolve_hf(name: str) -> Path:
    """The tokenizer file of ``ORG/NAME[@REVISION]`` in the Hugging Face cache (never downloads)."""
    name = name[len(HF_PREFIX):] if name.startswith(HF_PREFIX) else name
    repo_name, _, revision = name.partition("@")
    if not _NAME.fullmatch(repo_name):
        raise ModelFormatError(f"hf:{name}: not a Hugging Face model name (use hf:ORG/NAME)")
    cache = hf_hub_cache()
    repo = cache / _repo_folder(repo_name)
    tried = []
    for snap in _revisions(repo, revision or None) if repo.is_dir() else []:
        found = _tokenizer_in(snap)
        if found is not None:
            return found
        tried.append(snap.name[:12])
    where = f"{repo}" + (f" (revisions {', '.join(tried)} hold no {' / '.join(TOKENIZER_FILES)})" if tried else "")
    raise ModelFormatError(
        f"hf:{name}: not in the Hugging Face cache; looked in {where}; tokviz never downloads "
        f"(fetch it with `huggingface-cli download {repo_name} tokenizer.json`, or set HF_HUB_CACHE / HF_HOME)"
    )


@dataclass(frozen=True)
class CachedTokenizer:
    """A tokenizer file found in a cache: `source` opens it (``hf:ORG/NAME`` or a tiktoken name)."""

    source: str
    path: Path
    size: int  # bytes
    kind: str  # "tokenizer.json BPE", "SentencePiece unigram", "tiktoken", ...
    cache: str  # "huggingface" or "tiktoken"


_KIND_MEMO: dict[tuple[str, int, float], str] = {}


def file_kind(path: Path) -> str:
    """What a tokenizer file is, read cheaply (the model type near the start of a tokenizer.json,
    or the protobuf's trainer spec) and remembered by path, size and modification time."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime)
    hit = _KIND_MEMO.get(key)
    if hit is not None:
        return hit
    kind = "unknown"
    try:
        with open(path, "rb") as f:
            if path.suffix == ".json":
                found, tail = None, b""
                while found is None:  # in 1 MB steps: the model usually comes early in the file
                    chunk = f.read(1 << 20)
                    if not chunk:
                        break
                    found = _MODEL_TYPE.search(tail + chunk)
                    tail = chunk[-256:]
                kind = f"tokenizer.json {found.group(1).decode()}" if found else "tokenizer.json"
            else:
                from .spm.proto import peek_model_type  # here: opening a tokenizer does not load spm

                kind = f"SentencePiece {peek_model_type(f.read())}"
    except (OSError, ValueError, ModelFormatError):
        pass
    _KIND_MEMO[key] = kind
    return kind


def cached_tokenizers() -> list[CachedTokenizer]:
    """Every tokenizer in the Hugging Face cache (one per model, its main revision) and in
    tiktoken's cache, sorted by source."""
    out: list[CachedTokenizer] = []
    cache = hf_hub_cache()
    if cache.is_dir():
        for repo in sorted(cache.glob("models--*")):
            name = repo.name[len("models--"):].replace("--", "/")
            for snap in _revisions(repo, None):
                found = _tokenizer_in(snap)
                if found is not None:
                    out.append(CachedTokenizer(HF_PREFIX + name, found, found.stat().st_size, file_kind(found),
                                               "huggingface"))
                    break
    for enc_name, enc in KNOWN_ENCODINGS.items():
        p = cache_path(enc.url)
        if p is not None and p.is_file():
            out.append(CachedTokenizer(enc_name, p, p.stat().st_size, "tiktoken", "tiktoken"))
    return sorted(out, key=lambda c: (c.cache, c.source))
