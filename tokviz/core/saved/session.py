"""Sessions: everything on screen, saved as one ``.tokviz`` JSON file.

Format ``{"format": "tokviz-session", "version": 1, "corpus": {...} | null, "train_settings":
{"algorithm": ..., **settings} | null, "model": <model JSON> | null, "model_source": str,
"tokenizers": [path, ...], "compare_tokenizers": [path, ...], "step": int | null, "view": {...}}``.

The corpus is embedded (``{"text": ..., "title": ..., "word_counts": ...}``) or, for a big file
(more than `EMBED_LIMIT` bytes), referenced by ``{"path", "sha256", "size"}`` and checked on open
(`check_corpus_file`). The trained timeline is embedded as its model JSON (any algorithm, see
`tokviz.core.model_files.model_to_json`); pretrained tokenizers are stored by path. ``view`` is
JSON owned by the GUI (dock layout, raised panels, token view text, theme, ...); sessions are shared,
so `clean_view` keeps only keys of the right type and range before anything is applied.

What this leaves out: gathering and applying the state (``tokviz.app.session_ops``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from tokviz.core.errors import TokvizError
from tokviz.core.formats.tokviz_json import read_json
from tokviz.core.io.safe_files import check_regular, open_regular, write_atomic
from tokviz.core.model_files import model_from_json, model_to_json
from tokviz.core.registry import settings_from_json, settings_to_json

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
    """(sha256 hex, size in bytes) of an ordinary file (a FIFO or ``/dev/zero`` is refused before
    reading: hashing it would never end); at most the size it had when opened is read."""
    fd = open_regular(path, SessionFormatError)
    h, size = hashlib.sha256(), 0
    try:
        left = os.fstat(fd).st_size
        while left > 0 and (block := os.read(fd, min(chunk, left))):
            h.update(block)
            size += len(block)
            left -= len(block)
    finally:
        os.close(fd)
    return h.hexdigest(), size


def corpus_by_path(path: str | os.PathLike, *, title: str = "", word_counts: bool = False) -> CorpusRef:
    digest, size = file_digest(path)
    return CorpusRef(title, word_counts, path=str(Path(path).resolve()), sha256=digest, size=size)


def check_corpus_file(ref: CorpusRef) -> None:
    """Raise `CorpusChangedError` if `ref`'s file is missing or no longer the saved one."""
    path = Path(ref.path or "")
    if not path.exists():
        raise CorpusChangedError(f"the session's corpus file {path} is missing; "
                                 "the rest of the session was restored")
    try:
        size = check_regular(path, CorpusChangedError)
        digest = file_digest(path)[0] if size == ref.size else ""  # another size: no need to hash it
    except TokvizError as exc:
        raise CorpusChangedError(f"cannot use the session's corpus file: {exc}; "
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


# -- the view: shared files are checked before a window applies them ---------------------------------

MAX_WINDOW_SIDE = 16_384  # pixels; a bigger saved size is not a window any screen shows
MIN_WINDOW_SIDE = 100
MAX_STATE_CHARS = 1 << 20  # base64 of Qt's geometry/dock state: a few KB in practice
MAX_VIEW_TEXT = 10 << 20  # the token view's text in a session
FONT_SCALE_RANGE = (0.5, 4.0)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def clean_view(view: object) -> tuple[dict, list[str]]:
    """The keys of a session's ``view`` that have the right type and a sane range, and a note for
    each one dropped. Sizes are clamped to `MIN_WINDOW_SIDE`..`MAX_WINDOW_SIDE` (the window
    clamps again to the screen it is on).

    >>> clean_view({"size": [100000, 100000], "raised": 5, "theme": "dark"})
    ({'size': [16384, 16384], 'theme': 'dark'}, ['raised panels must be a list of names'])
    """
    if not isinstance(view, dict):
        return {}, ["the view is not an object"]
    out: dict = {}
    problems: list[str] = []

    def keep(key: str, ok: bool, why: str, value: object = None) -> None:
        if key not in view:
            return
        if ok:
            out[key] = view[key] if value is None else value
        else:
            problems.append(why)

    size = view.get("size")
    good_size = isinstance(size, list) and len(size) == 2 and all(_is_int(x) and x > 0 for x in size)
    keep("size", good_size, "the window size must be two positive whole numbers",
         [min(max(x, MIN_WINDOW_SIDE), MAX_WINDOW_SIDE) for x in size] if good_size else None)
    for key in ("geometry", "layout"):
        v = view.get(key)
        keep(key, v is None or (isinstance(v, str) and len(v) <= MAX_STATE_CHARS), f"{key} is not a saved Qt state")
    keep("layout_version", _is_int(view.get("layout_version")), "layout_version must be a whole number")
    keep("theme", isinstance(view.get("theme"), str), "theme must be a name")
    scale = view.get("font_scale")
    keep("font_scale", isinstance(scale, (int, float)) and not isinstance(scale, bool)
         and FONT_SCALE_RANGE[0] <= scale <= FONT_SCALE_RANGE[1],
         f"font_scale must be a number from {FONT_SCALE_RANGE[0]} to {FONT_SCALE_RANGE[1]}")
    raised = view.get("raised")
    keep("raised", isinstance(raised, list) and all(isinstance(p, str) for p in raised),
         "raised panels must be a list of names")
    ids = view.get("vocab_selection")
    keep("vocab_selection", isinstance(ids, list) and all(_is_int(i) and i >= 0 for i in ids),
         "vocab_selection must be a list of token ids")
    pattern = view.get("pretrained_pattern")
    keep("pretrained_pattern", pattern is None or isinstance(pattern, str), "pretrained_pattern must be text")
    panels = view.get("panels")
    if "panels" in view:
        if isinstance(panels, dict):
            out["panels"] = {}
            for pid, state in panels.items():
                if isinstance(state, dict) and _small_state(state):
                    out["panels"][pid] = state
                else:
                    problems.append(f"the saved state of panel {pid!r} is malformed")
        else:
            problems.append("panels must be an object")
    return out, problems


def _small_state(state: dict) -> bool:
    """A panel's state holds short values (its text at most `MAX_VIEW_TEXT` characters)."""
    text = state.get("text")
    return text is None or (isinstance(text, str) and len(text) <= MAX_VIEW_TEXT)
