"""The tokenizers already on this machine: the Hugging Face cache and tiktoken's cache, offline.

``hf:ORG/NAME`` (optionally ``hf:ORG/NAME@REVISION``) names a model in the Hugging Face hub cache:
``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub`` (by default
``~/.cache/huggingface/hub``), laid out as ``models--ORG--NAME/snapshots/REVISION/`` with
``refs/main`` naming the revision of the main branch. `resolve_hf` finds the tokenizer file in the
revision ``refs/main`` points to first, then the other revisions (newest first): ``tokenizer.json``,
else a SentencePiece model (``tokenizer.model``, ``spiece.model``, ``sentencepiece.bpe.model``).
Nothing is ever downloaded; a name not in the cache is an error saying where tokviz looked.

The cache is read as untrusted: a revision is a 40-hex commit or a ref name without separators; a
ref file is read only if it is small (`MAX_REF_BYTES`) and must hold a commit; every file tokviz
opens must resolve inside the cache (a snapshot's symlinks into the cache's ``blobs/`` are fine, a
link to anywhere else is refused). An entry that breaks these rules is skipped with a note.

`cached_tokenizers` lists every tokenizer in both caches with its size and kind, for
File > Known Tokenizers, reading a bounded head of each file at most. What this leaves out:
opening the files (`loader`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tokviz.core.errors import Cancelled, ModelFormatError, TokvizError
from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS, KnownTokenizer, cache_path, known_tokenizers
from tokviz.core.io.safe_files import open_regular, read_head

HF_PREFIX = "hf:"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")
MAX_REF_BYTES = 256  # a ref file holds one 40-hex commit and a newline
KIND_SCAN_BYTES = 16 << 20  # how far into a tokenizer.json its model type is looked for
KIND_MODEL_BYTES = 16 << 20  # a SentencePiece model bigger than this is listed without its type
MAX_SNAPSHOT_ENTRIES = 10_000  # entries of a snapshot folder checked before a chat reads it
_MODEL_TYPE = re.compile(rb'"model"\s*:\s*\{\s*"type"\s*:\s*"(\w+)"')
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
_COMMIT = re.compile(r"[0-9a-fA-F]{40}")
_REF_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # one path part: no '/', '\\', and never '..'


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


def is_revision(text: str) -> bool:
    """A 40-hex commit or a branch/tag name that is one path part (never a path).

    >>> [is_revision(r) for r in ("main", "v1.0", "a" * 40, "../x", "/tmp", "a/b", "..", "a\\\\b")]
    [True, True, True, False, False, False, False, False]
    """
    return bool(_COMMIT.fullmatch(text) or (_REF_NAME.fullmatch(text) and ".." not in text))


def _inside(path: str | os.PathLike, root: str) -> bool:
    """Whether `path`, with every symlink followed, is `root` (a real path) or inside it."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def read_ref(path: Path) -> str:
    """The commit a ref file (``refs/main``) names; `ModelFormatError` for anything but a small
    ordinary file holding 40 hex digits (read at most `MAX_REF_BYTES` + 1 bytes, never whole)."""
    data = read_head(path, MAX_REF_BYTES + 1, ModelFormatError)
    if len(data) > MAX_REF_BYTES:
        raise ModelFormatError(f"{path}: more than {MAX_REF_BYTES} bytes, not a commit hash")
    text = data.decode("ascii", errors="replace").strip()
    if not _COMMIT.fullmatch(text):
        raise ModelFormatError(f"{path}: not a commit hash (40 hex digits)")
    return text


@dataclass
class _Search:
    """One look into the cache: its real path (what every file must stay inside) and the notes
    about entries skipped on the way."""

    root: str
    notes: list[str] = field(default_factory=list)

    def skip(self, note: str) -> None:
        self.notes.append(_shown(note, 400))  # entry names in the cache may hold any character


def _revisions(repo: Path, revision: str | None, search: _Search) -> list[Path]:
    """Snapshot folders to try, in order: the asked revision (a ref or a commit), else the one
    ``refs/main`` names, then the others newest first. A bad ref is an error when asked for,
    a note otherwise."""
    snaps = repo / "snapshots"
    if revision:
        ref = repo / "refs" / revision
        return [snaps / (read_ref(ref) if os.path.lexists(ref) else revision)]
    out: list[Path] = []
    main = repo / "refs" / "main"
    if os.path.lexists(main):
        try:
            out.append(snaps / read_ref(main))
        except TokvizError as exc:
            search.skip(str(exc))
    try:
        entries = [e for e in os.scandir(snaps) if Path(e.path) not in out]
    except FileNotFoundError:
        return out
    except OSError as exc:
        search.skip(f"{snaps}: cannot read ({exc.strerror or exc})")
        return out
    dated = []
    for e in entries:
        try:
            if e.is_dir():
                dated.append((e.stat().st_mtime, Path(e.path)))
        except OSError:
            search.skip(f"{e.path}: cannot read")
    out.extend(p for _, p in sorted(dated, key=lambda t: t[0], reverse=True))
    return out


def _tokenizer_in(folder: Path, search: _Search) -> Path | None:
    """The first tokenizer file in a snapshot folder that is an ordinary file inside the cache."""
    for f in TOKENIZER_FILES:
        p = folder / f
        try:
            if not os.path.lexists(p):
                continue
            if not _inside(p, search.root):
                search.skip(f"{p}: points outside the Hugging Face cache")
                continue
            if stat.S_ISREG(os.stat(p).st_mode):  # follows the snapshot's symlink into blobs/
                return p
        except OSError:  # a missing blob (an interrupted download), a loop of links: the next file
            continue
    return None


def _shown(text: str, limit: int = 80) -> str:
    """Text from the command line or a file, cut and escaped to fit in a one-line message."""
    cut = text[:limit] + ("…" if len(text) > limit else "")
    return cut if cut.isprintable() else repr(cut)[1:-1]


def resolve_hf(name: str) -> Path:
    """The tokenizer file of ``ORG/NAME[@REVISION]`` in the Hugging Face cache (never downloads)."""
    name = name[len(HF_PREFIX):] if name.startswith(HF_PREFIX) else name
    repo_name, _, revision = name.partition("@")
    if not _NAME.fullmatch(repo_name):
        raise ModelFormatError(f"hf:{_shown(name)}: not a Hugging Face model name (use hf:ORG/NAME)")
    if revision and not is_revision(revision):
        raise ModelFormatError(f"hf:{repo_name}@{_shown(revision)}: not a revision (a 40-hex commit, or a branch "
                               f"or tag name without '/', '\\' or '..')")
    cache = hf_hub_cache()
    repo = cache / _repo_folder(repo_name)
    search = _Search(os.path.realpath(cache))
    tried = []
    for snap in _revisions(repo, revision or None, search) if repo.is_dir() else []:
        found = _tokenizer_in(snap, search)
        if found is not None:
            return found
        tried.append(_shown(snap.name[:12]))
    where = f"{repo}" + (f" (revisions {', '.join(tried)} hold no {' / '.join(TOKENIZER_FILES)})" if tried else "")
    skipped = f"; skipped: {'; '.join(search.notes)}" if search.notes else ""
    raise ModelFormatError(
        f"hf:{name}: not in the Hugging Face cache; looked in {where}{skipped}; tokviz never downloads "
        f"(fetch it with `huggingface-cli download {repo_name} tokenizer.json`, or set HF_HUB_CACHE / HF_HOME)"
    )


def check_snapshot(folder: Path) -> None:
    """Refuse a snapshot folder of the Hugging Face cache in which any entry (a config, a chat
    template) resolves outside the cache: a chat reads more files from it than the tokenizer."""
    root = os.path.realpath(hf_hub_cache())
    seen = 0
    for here, dirs, files in os.walk(folder):  # links to folders are checked, not followed
        for name in (*dirs, *files):
            seen += 1
            path = os.path.join(here, name)
            if seen > MAX_SNAPSHOT_ENTRIES:
                raise ModelFormatError(f"{folder}: more than {MAX_SNAPSHOT_ENTRIES:,} entries; not a model snapshot")
            if not _inside(path, root):
                raise ModelFormatError(f"{path}: points outside the Hugging Face cache; tokviz does not follow it")


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
    """What a tokenizer file is, read cheaply and never whole (the model type within the first
    `KIND_SCAN_BYTES` of a tokenizer.json, or the trainer spec of a SentencePiece model no bigger
    than `KIND_MODEL_BYTES`), remembered by path, size and modification time."""
    try:
        fd = open_regular(path, ModelFormatError)
    except TokvizError:
        return "unknown"
    try:
        st = os.fstat(fd)
        key = (str(path), st.st_size, st.st_mtime)
        hit = _KIND_MEMO.get(key)
        if hit is None:
            hit = _KIND_MEMO[key] = _read_kind(fd, path.suffix, st.st_size)
        return hit
    finally:
        os.close(fd)


def _read_kind(fd: int, suffix: str, size: int) -> str:
    try:
        if suffix == ".json":
            found, tail, seen = None, b"", 0
            while found is None and seen < KIND_SCAN_BYTES:  # in 1 MB steps: the model usually comes early
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                seen += len(chunk)
                found = _MODEL_TYPE.search(tail + chunk)
                tail = chunk[-256:]
            return f"tokenizer.json {found.group(1).decode()}" if found else "tokenizer.json"
        if size > KIND_MODEL_BYTES:  # the trainer spec follows every piece: too far to read for a label
            return "SentencePiece"
        from tokviz.core.formats.sentencepiece.proto import (
            peek_model_type,  # here: opening a tokenizer does not load spm
        )

        chunks, total = [], 0
        while total < size:
            chunk = os.read(fd, min(1 << 20, size - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return f"SentencePiece {peek_model_type(b''.join(chunks))}"
    except (OSError, ValueError, ModelFormatError):
        return "unknown"


def cached_tokenizers(*, notes: list[str] | None = None, should_stop: Callable[[], bool] = lambda: False
                      ) -> list[CachedTokenizer]:
    """Every tokenizer in the Hugging Face cache (one per model, its main revision) and in
    tiktoken's cache, sorted by source. Entries that cannot be used are skipped, each with a line
    in `notes`; `should_stop` is asked between models (`Cancelled`)."""
    out: list[CachedTokenizer] = []
    cache = hf_hub_cache()
    search = _Search(os.path.realpath(cache))
    try:
        repos = sorted(p for p in cache.glob("models--*") if p.is_dir()) if cache.is_dir() else []
    except OSError as exc:
        search.skip(f"{cache}: cannot read ({exc.strerror or exc})")
        repos = []
    for repo in repos:
        if should_stop():
            raise Cancelled()
        name = repo.name[len("models--"):].replace("--", "/")
        if not _NAME.fullmatch(name):
            search.skip(f"{repo.name!r}: not a model folder name")
            continue
        try:
            for snap in _revisions(repo, None, search):
                found = _tokenizer_in(snap, search)
                if found is not None:
                    out.append(CachedTokenizer(HF_PREFIX + name, found, os.stat(found).st_size, file_kind(found),
                                               "huggingface"))
                    break
        except OSError as exc:
            search.skip(f"{repo}: cannot read ({exc.strerror or exc})")
    for enc_name, enc in KNOWN_ENCODINGS.items():
        p = cache_path(enc.url)
        try:
            if p is not None and p.is_file():
                out.append(CachedTokenizer(enc_name, p, p.stat().st_size, "tiktoken", "tiktoken"))
        except OSError:
            continue
    if notes is not None:
        notes.extend(search.notes)
    return sorted(out, key=lambda c: (c.cache, c.source))


@dataclass(frozen=True)
class KnownListing:
    """What File > Known Tokenizers shows: tiktoken's names, the cached files, and a note for
    each cache entry that was skipped."""

    names: tuple[KnownTokenizer, ...]
    cached: tuple[CachedTokenizer, ...]
    notes: tuple[str, ...]


def known_listing(*, should_stop: Callable[[], bool] = lambda: False) -> KnownListing:
    """Look through both caches (for a background thread: it reads the disk)."""
    notes: list[str] = []
    cached = cached_tokenizers(notes=notes, should_stop=should_stop)
    return KnownListing(tuple(known_tokenizers()), tuple(cached), tuple(notes))
