"""Sessions: everything on screen, saved as one ``.tokviz`` JSON file.

Format ``{"format": "tokviz-session", "version": 1, "corpus": {...} | null, "train_settings":
{"algorithm": ..., **settings} | null, "model": <model JSON> | null, "model_source": str,
"tokenizers": [path, ...], "compare_tokenizers": [path, ...], "step": int | null, "view": {...}}``.

The corpus is embedded (``{"text": ..., "title": ..., "word_counts": ...}``) or, for a big file
(more than `EMBED_LIMIT` bytes), referenced by ``{"path", "sha256", "size"}`` and checked on open
(`check_corpus_file`). The trained timeline is embedded as its model JSON (any algorithm, see
`tokviz.core.io.model_files.model_to_json`); pretrained tokenizers are stored by path. ``view`` is free
JSON owned by the GUI (dock layout, raised panels, token view text, theme, ...): this module only
checks that it is an object.

What this leaves out: gathering and applying the state (``tokviz.app.session_ops``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from tokviz.core.algorithm.registry import settings_from_json, settings_to_json
from tokviz.core.errors import TokvizError

from .model_files import model_from_json, model_to_json, read_json, write_atomic

FORMAT_NAME = "tokviz-session"
FORMAT_VERSION = 1
SUFFIX = ".tokviz"
EMBED_LIMIT = 5 * 1024 * 1024  # corpus bytes; bigger files are stored by path + sha256


class SessionFormatError(TokvizError):
    """A session file that is not JSON, not a session, corrupt, or of an unknown version."""


class CorpusChangedError(TokvizError):
    """A session's corpus file is missing or differs from the one the session was saved with."""


@dataclass
class CorpusRef:
    """The session's corpus: embedded `text`, or a file `path` with its `sha256` and `size`."""

    title: str = ""
    word_counts: bool = False
    text: str | None = None
    path: str | None = None
    sha256: str | None = None
    size: int | None = None

    def to_json(self) -> dict:
        d: dict = {"title": self.title, "word_counts": self.word_counts}
        if self.text is not None:
            d["text"] = self.text
        else:
            d.update(path=self.path, sha256=self.sha256, size=self.size)
        return d

    @classmethod
    def from_json(cls, d: object) -> "CorpusRef":
        _need(isinstance(d, dict), "corpus must be an object")
        title, wc = d.get("title", ""), d.get("word_counts", False)
        _need(isinstance(title, str) and isinstance(wc, bool), "corpus title/word_counts malformed")
        if "text" in d:
            _need(isinstance(d["text"], str), "corpus text must be a string")
            return cls(title, wc, text=d["text"])
        path, digest, size = d.get("path"), d.get("sha256"), d.get("size")
        _need(isinstance(path, str) and path != "", "corpus has neither text nor path")
        _need(isinstance(digest, str) and len(digest) == 64, "corpus sha256 malformed")
        _need(isinstance(size, int) and not isinstance(size, bool) and size >= 0, "corpus size malformed")
        return cls(title, wc, path=path, sha256=digest, size=size)


@dataclass
class Session:
    """One saved screen. `timeline` is a live timeline object (serialised as model JSON)."""

    corpus: CorpusRef | None = None
    train_settings: object | None = None  # TrainSettings, WordPieceSettings or UnigramSettings
    timeline: object | None = None
    model_source: str = ""
    tokenizers: list[str] = field(default_factory=list)  # pretrained tokenizers opened (paths)
    compare_tokenizers: list[str] = field(default_factory=list)  # token view comparison rows
    step: int | None = None
    view: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "corpus": None if self.corpus is None else self.corpus.to_json(),
            "train_settings": None if self.train_settings is None else settings_to_json(self.train_settings),
            "model": None if self.timeline is None else model_to_json(self.timeline),
            "model_source": self.model_source,
            "tokenizers": list(self.tokenizers),
            "compare_tokenizers": list(self.compare_tokenizers),
            "step": self.step,
            "view": self.view,
        }

    @classmethod
    def from_json(cls, d: object) -> "Session":
        """Check and rebuild a session (`SessionFormatError` says what is wrong)."""
        if not isinstance(d, dict) or d.get("format") != FORMAT_NAME:
            raise SessionFormatError("not a tokviz session (no 'format: tokviz-session' header)")
        version = d.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise SessionFormatError("corrupt session: missing format version")
        if version > FORMAT_VERSION:
            raise SessionFormatError(f"session format version {version} is newer than this tokviz reads "
                                     f"({FORMAT_VERSION}); update tokviz")
        if version < 1:
            raise SessionFormatError(f"unknown session format version {version}")
        corpus = None if d.get("corpus") is None else CorpusRef.from_json(d["corpus"])
        ts = d.get("train_settings")
        settings = None if ts is None else _settings_from_json(ts)
        timeline = None
        if d.get("model") is not None:
            try:
                timeline = model_from_json(d["model"])
            except TokvizError as exc:
                raise SessionFormatError(f"corrupt session: its model: {exc}") from None
        step = d.get("step")
        _need(step is None or (isinstance(step, int) and not isinstance(step, bool) and step >= 0),
              "step must be a whole number >= 0")
        lists = []
        for key in ("tokenizers", "compare_tokenizers"):
            value = d.get(key, [])
            _need(isinstance(value, list) and all(isinstance(p, str) for p in value), f"{key} must be a list of paths")
            lists.append(value)
        source, view = d.get("model_source", ""), d.get("view", {})
        _need(isinstance(source, str), "model_source must be a string")
        _need(isinstance(view, dict), "view must be an object")
        return cls(corpus, settings, timeline, source, lists[0], lists[1], step, view)


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise SessionFormatError(f"corrupt session: {what}")


# -- training settings of any algorithm -------------------------------------------------------


def _settings_from_json(d: object):
    _need(isinstance(d, dict), "train_settings must be an object")
    try:
        return settings_from_json(d)
    except (TokvizError, KeyError, TypeError, ValueError) as exc:
        raise SessionFormatError(f"corrupt session: training settings: {exc}") from None


# -- corpus files -----------------------------------------------------------------------------


def file_digest(path: str | os.PathLike, chunk: int = 1 << 20) -> tuple[str, int]:
    """(sha256 hex, size in bytes) of a file."""
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
            size += len(block)
    return h.hexdigest(), size


def corpus_by_path(path: str | os.PathLike, *, title: str = "", word_counts: bool = False) -> CorpusRef:
    digest, size = file_digest(path)
    return CorpusRef(title, word_counts, path=str(Path(path).resolve()), sha256=digest, size=size)


def check_corpus_file(ref: CorpusRef) -> None:
    """Raise `CorpusChangedError` if `ref`'s file is missing or no longer the saved one."""
    path = Path(ref.path or "")
    try:
        digest, size = file_digest(path)
    except FileNotFoundError:
        raise CorpusChangedError(f"the session's corpus file {path} is missing; "
                                 "the rest of the session was restored") from None
    except OSError as exc:
        raise CorpusChangedError(f"cannot read the session's corpus file {path} ({exc.strerror or exc}); "
                                 "the rest of the session was restored") from None
    if (digest, size) != (ref.sha256, ref.size):
        raise CorpusChangedError(f"the session's corpus file {path} has changed since the session was saved "
                                 f"({size:,} bytes now, {ref.size:,} then); it was not loaded, "
                                 "the rest of the session was restored")


# -- files ------------------------------------------------------------------------------------


def session_to_bytes(session: Session) -> bytes:
    return json.dumps(session.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def save_session(session: Session, path: str | os.PathLike) -> None:
    """Write atomically (temporary file + fsync + rename): the old file survives a failed save."""
    write_atomic(Path(path), session_to_bytes(session))


def load_session(path: str | os.PathLike) -> Session:
    path = Path(path)
    d = read_json(path, SessionFormatError, kind="session")
    try:
        return Session.from_json(d)
    except SessionFormatError as exc:
        raise SessionFormatError(f"{path}: {exc}") from None


def is_session_file(path: str | os.PathLike) -> bool:
    return Path(path).suffix.lower() == SUFFIX
