"""Guided lessons: reading and checking the lesson files (``resources/lessons/*.json``).

A lesson file says which corpus to load, how to train, which panels to show, the text the token
view shows, the pretrained tokenizers it compares, a figure (see `tokviz.core.lessons.figures`) and
a list of steps, and optionally the workspace it is shown in (``"workspace": "inspect"`` for a lesson
about a real tokenizer's token view: the window's layout while it runs). Each step has a caption
(``{name}`` fields are filled in when it is shown) and declarative actions that the lesson runner
(``tokviz.app.classroom.lesson_runner``) performs on the window::

    {"format": "tokviz-lesson", "version": 1, "name": "bpe-steps", "number": 3,
     "title": "BPE step by step", "corpus": {"sample": "low-lower-lowest"},
     "train": {"units": "chars", "split": "whitespace", "merges": 10},
     "panels": ["timeline"], "steps": [{"caption": "Merge {step}: {merge}",
                                        "actions": [{"do": "step", "to": 1}]}]}

``train`` is BPE's settings, or WordPiece's or Unigram's with ``"algorithm": "wordpiece"`` or
``"unigram"``. Files are JSON (the standard library reads it on every supported Python). Every problem is a
`LessonError` naming the file and the field. What this leaves out: running a lesson (app layer)
and the figures' maths (``lesson_figures``).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from tokviz.core.bpe.settings import TrainSettings
from tokviz.core.errors import SettingsError, TokvizError
from tokviz.core.formats.openai_encodings import VOCAB_DIR_ENV, find_encoding_file
from tokviz.core.io.safe_files import JsonWording, parse_json
from tokviz.core.unigram.settings import UnigramSettings
from tokviz.core.wordpiece.settings import WordPieceSettings

FORMAT = "tokviz-lesson"
VERSION = 1
PANELS = ("corpus", "training", "vocabulary", "timeline", "token_view", "embeddings", "positional", "lesson")
# the window's workspaces (View > Workspace) a lesson may be shown in; its own while it runs
WORKSPACES = ("learn", "inspect", "compare", "chat", "present")
TABS = ("compare", "batch", "diagnostics", "stream", "numbers", "samples")  # the token view's tabs, in order
# caption fields every lesson may use (the figure adds its own: `figure_kinds.FIGURE_FIELDS`)
BASE_FIELDS = frozenset({"step", "n_steps", "merge", "count", "vocab", "tokens", "corpus_tokens", "merges",
                         "missing"})

# action name -> {argument: allowed types}; a "choices" entry lists allowed strings
_STR, _INT, _BOOL, _NUMBER = (str,), (int,), (bool,), (int, float)
ACTIONS: dict[str, dict[str, tuple]] = {
    "step": {"to": (int, str)},  # a step number or "last"
    "vocab": {"size": _INT},  # the step at which the vocabulary has this size
    "panel": {"id": _STR},
    "text": {"value": _STR},
    "tab": {"name": _STR, "word": _STR, "dropout": _NUMBER},  # the Samples tab's word and dropout p
    "view": {"mode": _STR, "whitespace": _BOOL, "bos": _BOOL, "eos": _BOOL, "pad": _STR},
    "train": {"settings": (dict,), "corpus": (dict,)},
    "tokenizer": {"name": _STR},
    "positional": {"kind": _STR, "view": _STR, "d": _INT, "positions": _INT},
    "embeddings": {"table": _STR, "epochs": _INT, "dim": _INT},
}
REQUIRED = {"step": ("to",), "vocab": ("size",), "panel": ("id",), "text": ("value",), "tab": ("name",),
            "train": ("settings",), "tokenizer": ("name",), "positional": ("kind",), "embeddings": ("table",)}
CHOICES = {("tab", "name"): TABS, ("view", "mode"): ("text", "ids", "both"), ("view", "pad"): ("left", "right"),
           ("embeddings", "table"): ("random", "trained"), ("panel", "id"): PANELS}
# pretrained tokenizers a lesson may compare: name -> (file name, row title)
PRETRAINED = {
    "gpt2": ("r50k_base.tiktoken", "GPT-2 (r50k_base)"),
    "cl100k_base": ("cl100k_base.tiktoken", "GPT-4 (cl100k_base)"),
    "o200k_base": ("o200k_base.tiktoken", "GPT-4o (o200k_base)"),
}
# a development checkout keeps the shared tokenizer files in ../shared/vocab/tiktoken
_CHECKOUT_VOCAB = Path(__file__).resolve().parents[3].parent / "shared" / "vocab" / "tiktoken"


class LessonError(TokvizError):
    """A lesson file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Corpus:
    """Where a lesson's corpus comes from: ``kind`` is "text", "sample" (a sample key) or "file"
    (a path inside ``tokviz.resources``)."""

    kind: str
    value: str

    def read(self) -> str:
        """The text (not for samples: the app resolves sample keys)."""
        if self.kind == "text":
            return self.value
        if self.kind == "file":
            return (files("tokviz.resources") / self.value).read_text(encoding="utf-8")
        raise LessonError(f"a sample corpus ({self.value!r}) is read by the application")


@dataclass(frozen=True)
class Action:
    do: str
    args: Mapping = field(default_factory=dict)

    def get(self, key: str, default=None):
        return self.args.get(key, default)


@dataclass(frozen=True)
class LessonStep:
    caption: str
    actions: tuple[Action, ...] = ()


@dataclass(frozen=True)
class Lesson:
    name: str
    number: int
    title: str
    summary: str
    steps: tuple[LessonStep, ...]
    corpus: Corpus | None = None
    train: TrainSettings | WordPieceSettings | UnigramSettings | None = None
    panels: tuple[str, ...] = ()
    text: str | None = None  # what the token view shows
    tokenizers: tuple[str, ...] = ()  # PRETRAINED names compared in the token view
    figure: Mapping | None = None  # {"kind": ..., parameters}
    screenshot_step: int = 0
    workspace: str | None = None  # the workspace it is shown in (None: the one in use)
    source: str = ""

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def label(self) -> str:
        """``"3. BPE step by step"``"""
        return f"{self.number}. {self.title}"


# -- parsing ----------------------------------------------------------------------------------


def _choices(do: str, key: str) -> tuple[str, ...] | None:
    """The strings argument `key` of action `do` may take (None: any). The positional encodings'
    kinds and views are read from the embeddings package only when a lesson names one: the window
    imports this module as it starts, and needs nothing of that package then."""
    if do == "positional" and key in ("kind", "view"):
        from tokviz.core.embeddings.positional_encoding import VIEWS
        from tokviz.core.embeddings.positional_kinds import KINDS

        return KINDS if key == "kind" else VIEWS
    return CHOICES.get((do, key))


def _fail(source: str, where: str, problem: str) -> LessonError:
    return LessonError(f"lesson {source}: {where}: {problem}")


def _get(d: Mapping, key: str, types: tuple, source: str, where: str, *, required: bool = True, default=None):
    if key not in d:
        if required:
            raise _fail(source, where or "top level", f"missing field {key!r}")
        return default
    value = d[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        names = " or ".join(t.__name__ for t in types)
        raise _fail(source, f"{where}.{key}" if where else key, f"expected {names}, got {type(value).__name__}")
    return value


def _corpus(d: Mapping, source: str, where: str) -> Corpus:
    kinds = [k for k in ("text", "sample", "file") if k in d]
    if len(kinds) != 1 or set(d) - {"text", "sample", "file"}:
        raise _fail(source, where, "give exactly one of 'text', 'sample' or 'file'")
    value = _get(d, kinds[0], _STR, source, where)
    if not value.strip():
        raise _fail(source, f"{where}.{kinds[0]}", "is empty")
    return Corpus(kinds[0], value)


def _settings(d: Mapping, source: str, where: str):
    """BPE settings, or WordPiece/Unigram ones with ``"algorithm": "wordpiece"|"unigram"``."""
    from tokviz.core.registry import settings_from_json

    try:
        return settings_from_json(d)
    except (SettingsError, TokvizError, TypeError) as exc:
        raise _fail(source, where, str(exc)) from None


def _action(d, source: str, where: str) -> Action:
    if not isinstance(d, Mapping):
        raise _fail(source, where, "an action is an object like {\"do\": \"step\", \"to\": 1}")
    do = _get(d, "do", _STR, source, where)
    if do not in ACTIONS:
        raise _fail(source, f"{where}.do", f"unknown action {do!r}; choose one of {', '.join(ACTIONS)}")
    spec = ACTIONS[do]
    unknown = set(d) - set(spec) - {"do"}
    if unknown:
        raise _fail(source, where, f"unknown argument(s) {', '.join(sorted(unknown))} for {do!r}; "
                                   f"allowed: {', '.join(spec) or 'none'}")
    args = {}
    for key, types in spec.items():
        value = _get(d, key, types, source, where, required=key in REQUIRED.get(do, ()))
        if value is None:
            continue
        allowed = _choices(do, key)
        if allowed is not None and value not in allowed:
            raise _fail(source, f"{where}.{key}", f"{value!r} is not one of {', '.join(allowed)}")
        args[key] = value
    if do == "step" and isinstance(args["to"], str) and args["to"] != "last":
        raise _fail(source, f"{where}.to", "a step number, or \"last\"")
    if do == "train":
        args["settings"] = _settings(args["settings"], source, f"{where}.settings")
        if "corpus" in args:
            args["corpus"] = _corpus(args["corpus"], source, f"{where}.corpus")
    if do == "tab" and not 0 <= args.get("dropout", 0) <= 1:
        raise _fail(source, f"{where}.dropout", "a probability from 0 to 1")
    if do == "tokenizer" and args["name"] not in PRETRAINED:
        raise _fail(source, f"{where}.name", f"unknown tokenizer {args['name']!r}; choose one of {', '.join(PRETRAINED)}")
    return Action(do, args)


def caption_fields(caption: str) -> set[str]:
    """The ``{name}`` fields of a caption (``{{`` is a literal brace)."""
    return {name for _, name, _, _ in string.Formatter().parse(caption) if name}


def parse_lesson(data, source: str = "<lesson>") -> Lesson:
    """Check a decoded lesson file and build the `Lesson`; `LessonError` names what is wrong."""
    from .figure_kinds import FIGURE_FIELDS

    if not isinstance(data, Mapping):
        raise _fail(source, "top level", "a lesson file is a JSON object")
    if data.get("format") != FORMAT:
        raise _fail(source, "format", f"expected {FORMAT!r}")
    version = _get(data, "version", _INT, source, "")
    if version > VERSION:
        raise _fail(source, "version", f"version {version} is newer than this tokviz reads ({VERSION}); update tokviz")
    known = {"format", "version", "name", "number", "title", "summary", "corpus", "train", "panels", "text",
             "tokenizers", "figure", "screenshot_step", "steps", "workspace"}
    unknown = set(data) - known
    if unknown:
        raise _fail(source, "top level", f"unknown field(s) {', '.join(sorted(unknown))}")
    name = _get(data, "name", _STR, source, "")
    if not name or not all(c.isalnum() or c == "-" for c in name):
        raise _fail(source, "name", f"{name!r}: use lower-case letters, digits and '-'")
    corpus = data.get("corpus")
    corpus = None if corpus is None else _corpus(_get(data, "corpus", (dict,), source, ""), source, "corpus")
    train = data.get("train")
    train = None if train is None else _settings(_get(data, "train", (dict,), source, ""), source, "train")
    if train is not None and corpus is None:
        raise _fail(source, "train", "training needs a 'corpus'")
    panels = tuple(_get(data, "panels", (list,), source, "", required=False, default=[]))
    for i, p in enumerate(panels):
        if p not in PANELS:
            raise _fail(source, f"panels[{i}]", f"unknown panel {p!r}; choose from {', '.join(PANELS)}")
    workspace = _get(data, "workspace", _STR, source, "", required=False)
    if workspace is not None and workspace not in WORKSPACES:
        raise _fail(source, "workspace", f"unknown workspace {workspace!r}; choose from {', '.join(WORKSPACES)}")
    tokenizers = tuple(_get(data, "tokenizers", (list,), source, "", required=False, default=[]))
    for i, t in enumerate(tokenizers):
        if t not in PRETRAINED:
            raise _fail(source, f"tokenizers[{i}]", f"unknown tokenizer {t!r}; choose from {', '.join(PRETRAINED)}")
    figure = _get(data, "figure", (dict,), source, "", required=False)
    fields = set(BASE_FIELDS)
    if figure is not None:
        kind = _get(figure, "kind", _STR, source, "figure")
        if kind not in FIGURE_FIELDS:
            raise _fail(source, "figure.kind", f"unknown figure {kind!r}; choose one of {', '.join(FIGURE_FIELDS)}")
        fields |= FIGURE_FIELDS[kind]
        if kind == "table":
            _check_table(figure, source)
    raw_steps = _get(data, "steps", (list,), source, "")
    if not raw_steps:
        raise _fail(source, "steps", "a lesson needs at least one step")
    steps = []
    for i, s in enumerate(raw_steps):
        where = f"steps[{i}]"
        if not isinstance(s, Mapping):
            raise _fail(source, where, "a step is an object with 'caption' and 'actions'")
        if set(s) - {"caption", "actions"}:
            raise _fail(source, where, f"unknown field(s) {', '.join(sorted(set(s) - {'caption', 'actions'}))}")
        caption = _get(s, "caption", _STR, source, where)
        try:
            used = caption_fields(caption)
        except ValueError as exc:
            raise _fail(source, f"{where}.caption", f"bad {{field}}: {exc}") from None
        if used - fields:
            raise _fail(source, f"{where}.caption", f"unknown field(s) {', '.join(sorted(used - fields))}; "
                                                    f"known: {', '.join(sorted(fields))}")
        actions = _get(s, "actions", (list,), source, where, required=False, default=[])
        steps.append(LessonStep(caption, tuple(_action(a, source, f"{where}.actions[{j}]")
                                               for j, a in enumerate(actions))))
    shot = _get(data, "screenshot_step", _INT, source, "", required=False, default=0)
    if not 0 <= shot < len(steps):
        raise _fail(source, "screenshot_step", f"{shot} is not a step index (0..{len(steps) - 1})")
    return Lesson(
        name=name, number=_get(data, "number", _INT, source, ""), title=_get(data, "title", _STR, source, ""),
        summary=_get(data, "summary", _STR, source, "", required=False, default=""), steps=tuple(steps),
        corpus=corpus, train=train, panels=panels, text=_get(data, "text", _STR, source, "", required=False),
        tokenizers=tokenizers, figure=figure, screenshot_step=shot, workspace=workspace, source=source)


def _check_table(figure: Mapping, source: str) -> None:
    """A static table: a header of strings and rows of as many strings."""
    header = _get(figure, "header", (list,), source, "figure")
    rows = _get(figure, "rows", (list,), source, "figure")
    for i, row in enumerate([header, *rows]):
        where = "figure.header" if i == 0 else f"figure.rows[{i - 1}]"
        if not isinstance(row, list) or len(row) != len(header) or not all(isinstance(c, str) for c in row):
            raise _fail(source, where, f"a list of {len(header)} strings")


_LESSON_WORDING = JsonWording(invalid="{name}: not valid JSON (line {line}, column {column}: {msg})")


def load_lesson_text(text: str, source: str = "<lesson>") -> Lesson:
    data = parse_json(text, f"lesson {source}", LessonError, wording=_LESSON_WORDING)
    return parse_lesson(data, source)


def lesson_files() -> list:
    """The built-in lesson files (``tokviz.resources/lessons/*.json``), in name order."""
    folder = files("tokviz.resources") / "lessons"
    return sorted((f for f in folder.iterdir() if f.name.endswith(".json")), key=lambda f: f.name)


@dataclass(frozen=True)
class LessonHeading:
    """What a menu shows of a lesson, read without checking the rest of its file."""

    name: str
    number: int
    title: str
    summary: str

    @property
    def label(self) -> str:
        return f"{self.number}. {self.title}"


def lesson_headings() -> list[LessonHeading]:
    """The built-in lessons' headings, by number: what the Lessons menu needs as the window starts
    (a few ms, where `builtin_lessons` checks every step and action of every lesson). Starting a
    lesson reads it whole."""
    found = []
    for f in lesson_files():
        data = parse_json(f.read_text(encoding="utf-8"), f"lesson {f.name}", LessonError, wording=_LESSON_WORDING)
        if not isinstance(data, Mapping):
            raise _fail(f.name, "top level", "a lesson file is a JSON object")
        found.append(LessonHeading(_get(data, "name", _STR, f.name, ""), _get(data, "number", _INT, f.name, ""),
                                   _get(data, "title", _STR, f.name, ""),
                                   _get(data, "summary", _STR, f.name, "", required=False, default="")))
    return sorted(found, key=lambda h: h.number)


def builtin_lessons() -> list[Lesson]:
    """Every built-in lesson, by number; `LessonError` if a file is broken or numbers repeat."""
    lessons = [load_lesson_text(f.read_text(encoding="utf-8"), f.name) for f in lesson_files()]
    lessons.sort(key=lambda lesson: lesson.number)
    seen: dict = {}
    for lesson in lessons:
        for key in (lesson.name, lesson.number):
            if key in seen:
                raise LessonError(f"lesson {lesson.source}: {key!r} is also used by {seen[key]}")
            seen[key] = lesson.source
    return lessons


def find_lesson(key: str, lessons: list[Lesson] | None = None) -> Lesson:
    """A lesson by name (``bpe-steps``) or number (``3``); `LessonError` lists the names."""
    lessons = builtin_lessons() if lessons is None else lessons
    for lesson in lessons:
        if key == lesson.name or key == str(lesson.number):
            return lesson
    raise LessonError(f"unknown lesson {key!r}; choose one of {', '.join(x.name for x in lessons)}")


def pretrained_file(name: str) -> Path | None:
    """Where the file of pretrained tokenizer `name` is on this machine (never downloads):
    a folder in ``$TOKVIZ_VOCAB_DIR``, tiktoken's cache, or a development checkout's
    ``../shared/vocab/tiktoken``; None when it is nowhere."""
    filename = PRETRAINED[name][0]
    try:  # the same look-up as the command line's (`find_encoding_file`), without downloading
        return find_encoding_file(filename.removesuffix(".tiktoken"), download=False)
    except TokvizError:
        pass
    candidate = _CHECKOUT_VOCAB / filename
    return candidate if candidate.is_file() else None


def missing_note(name: str) -> str:
    """What to do when a pretrained tokenizer's file is missing (shown in the caption)."""
    filename = PRETRAINED[name][0]
    return (f"This step needs {filename} ({PRETRAINED[name][1]}): put OpenAI's file in tiktoken's cache "
            f"(open it once with tiktoken) or in a folder named by ${VOCAB_DIR_ENV}.")


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "…"


def format_caption(caption: str, values: Mapping) -> str:
    """The caption with its fields filled in (a field without a value shows ``…``)."""
    return string.Formatter().vformat(caption, (), _Blank(values))
