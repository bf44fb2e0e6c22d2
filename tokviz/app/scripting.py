"""`Scripting`: the surface that scripts, tests, `tokviz screenshot|lesson|animate` and lessons drive.

One per window (``window.script``), apart from `MainWindow`: it holds the controllers and shared
models it works through, never the window, and is made last, from complete parts. Every call
either acts at once or starts background work and returns; the ``wait_for_*`` calls run the event
loop until that work is on screen.

Corpus and files
    ``open_path(path)`` (a corpus, saved model or session, read in the background; then
    ``wait_for_file()``: ``"opened"``, ``"failed"``, ``"cancelled"``, ``"idle"`` or ``"timeout"``),
    ``set_corpus_text(text, word_counts=None, title=None)``, ``load_sample(key)`` (keys in
    `tokviz.engine.samples.SAMPLES`), ``save_corpus(path)``, ``save_model(path)``.
Training
    ``start_training(settings=None)`` (False with a message when it cannot start),
    ``wait_for_training(timeout_ms)`` (``"finished"``, ``"cancelled"``, ``"failed"``, ``"idle"`` or
    ``"timeout"``), ``cancel_training()``, ``is_training``, ``training_done`` (signal), ``last_outcome``,
    ``timeline`` and ``step_model`` (the current timeline and step).
Real tokenizers
    ``open_tokenizer(path_or_name, pattern=None)`` + ``wait_for_tokenizer()``,
    ``export_tokenizer(path, fmt="hf", step=None)``.
Panels and look
    ``panel(panel_id)``, ``select_panel(panel_id)``, ``set_theme(theme)``.
Classroom
    ``enter_presenter(panel_ids=None, scale=None)``, ``leave_presenter()``, ``presenter_active``,
    ``set_caption(text)``, ``save_session(path=None)``, ``open_session(path)``,
    ``export_animation(spec)``; lessons: ``start_lesson(name)`` (False with a message when unknown),
    ``lesson_next()``, ``lesson_prev()``, ``stop_lesson()``, ``wait_for_lesson_step(timeout_ms)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tokviz.core.algorithm.protocol import StepTimeline
from tokviz.core.registry import AnySettings
from tokviz.engine.step_model import StepModel
from tokviz.engine.training.engine import TrainingEngine
from tokviz.panels.base import Panel
from tokviz.panels.corpus.panel import CorpusPanel

from .classroom.animation import AnimationExporter, AnimationSpec
from .classroom.lesson_runner import LessonRunner
from .classroom.presenter import Presenter
from .docks import DockManager
from .export_ops import ExportController
from .file_ops import FileController
from .services import WindowServices
from .session_ops import SessionController
from .theme import Appearance
from .tokenizer_ops import TokenizerController
from .training_ops import TrainingController
from .waiting import wait_for_signals


@dataclass(frozen=True)
class ScriptParts:
    """What `Scripting` works through (built by the window before it)."""

    services: WindowServices
    step_model: StepModel
    corpus_panel: CorpusPanel
    files: FileController
    training: TrainingController
    training_engine: TrainingEngine
    tokenizers: TokenizerController
    exporter: ExportController
    docks: DockManager
    appearance: Appearance
    presenter: Presenter
    sessions: SessionController
    animation: AnimationExporter
    lessons: LessonRunner


class Scripting:
    """The scripting surface of one window (see the module docstring)."""

    def __init__(self, parts: ScriptParts) -> None:
        self.parts = parts

    # -- corpus and files -------------------------------------------------------------------

    def open_path(self, path: str | Path) -> bool:
        return self.parts.files.open_path(path)

    def wait_for_file(self, timeout_ms: int = 60_000) -> str:
        """Run the event loop until the file being opened is shown; ``"opened"``, ``"failed"``,
        ``"cancelled"``, ``"idle"`` (nothing loading) or ``"timeout"``."""
        return self.parts.files.wait(timeout_ms)

    def set_corpus_text(self, text: str, *, word_counts: bool | None = None, title: str | None = None) -> bool:
        """Replace the corpus with `text` (asks about unsaved changes first)."""
        return self.parts.files.set_corpus_text(text, word_counts=word_counts, title=title)

    def load_sample(self, key: str) -> bool:
        return self.parts.files.load_sample(key)

    def save_corpus(self, path: str | Path | None = None) -> bool:
        return self.parts.files.save(path)

    def save_model(self, path: str | Path) -> bool:
        return self.parts.files.save_model(path)

    # -- training ---------------------------------------------------------------------------

    @property
    def timeline(self) -> StepTimeline | None:
        return self.parts.step_model.timeline

    @property
    def step_model(self) -> StepModel:
        """The current timeline and step (``set_step(k)`` shows the first k merges)."""
        return self.parts.step_model

    @property
    def is_training(self) -> bool:
        return self.parts.training_engine.is_running

    @property
    def training_done(self):
        """Signal(str): how each run ended, ``"finished"``, ``"cancelled"`` or ``"failed"``."""
        return self.parts.training.done

    def start_training(self, settings: AnySettings | None = None) -> bool:
        """Train on the corpus; False (with a message) if the settings or corpus are unusable.

        Without `settings`, the training panel's options and the corpus's word-frequency mode are
        used. Given `settings` are shown in the panel, and their ``word_counts`` sets the mode."""
        return self.parts.training.start(settings)

    @property
    def last_outcome(self) -> str:
        """How the last run ended: ``"finished"``, ``"cancelled"``, ``"failed"`` or ""."""
        return self.parts.training.last_outcome

    def cancel_training(self) -> bool:
        return self.parts.training_engine.cancel()

    def wait_for_training(self, timeout_ms: int = 120_000) -> str:
        """Run the event loop until the current run ends; returns its outcome."""
        if not self.parts.training_engine.is_running:
            return self.last_outcome or "idle"
        return self.wait_for({"done": [self.parts.training.done]}, timeout_ms, value_of="done")

    def wait_for(self, signals: dict, timeout_ms: int, value_of: str | None = None) -> str:
        """`tokviz.app.waiting.wait_for_signals` (``{name: [signal, ...]}``)."""
        return wait_for_signals(signals, timeout_ms, value_of)

    # -- real tokenizers --------------------------------------------------------------------

    def open_tokenizer(self, path_or_name: str | Path, pattern: str | None = None) -> bool:
        """Load a file, folder or known name in the background; it becomes the current model."""
        return self.parts.tokenizers.open(path_or_name, pattern=pattern)

    def wait_for_tokenizer(self, timeout_ms: int = 60_000) -> str:
        return self.parts.tokenizers.wait(timeout_ms)

    def export_tokenizer(self, path: str | Path, fmt: str = "hf", step: int | None = None) -> bool:
        return self.parts.exporter.export(path, fmt, step=step)

    # -- panels and look --------------------------------------------------------------------

    def panel(self, panel_id: str) -> Panel:
        return self.parts.docks.panel(panel_id)

    def select_panel(self, panel_id: str) -> Panel:
        return self.parts.docks.select(panel_id)

    def set_theme(self, theme: str) -> None:
        self.parts.appearance.set_theme(theme)

    # -- classroom --------------------------------------------------------------------------

    @property
    def presenter_active(self) -> bool:
        return self.parts.presenter.active

    def enter_presenter(self, panel_ids: list[str] | None = None, scale: float | None = None) -> None:
        self.parts.presenter.enter(panel_ids, scale)

    def leave_presenter(self) -> None:
        self.parts.presenter.leave()

    def set_caption(self, text: str) -> None:
        self.parts.presenter.set_caption(text)

    def save_session(self, path: str | Path | None = None) -> bool:
        return self.parts.sessions.save(path)

    def open_session(self, path: str | Path) -> bool:
        return self.parts.sessions.open(path)

    def export_animation(self, spec: AnimationSpec) -> bool:
        return self.parts.animation.start(spec)

    def start_lesson(self, name: str) -> bool:
        """Start a built-in lesson by name or number (``"bpe-steps"``, ``"3"``); False if unknown."""
        return self.parts.lessons.start(name)

    def lesson_next(self) -> None:
        self.parts.lessons.next()

    def lesson_prev(self) -> None:
        self.parts.lessons.prev()

    def stop_lesson(self) -> None:
        self.parts.lessons.stop()

    def wait_for_lesson_step(self, timeout_ms: int = 60_000) -> str:
        """Run the event loop until the lesson step is on screen: ``"shown"``, ``"failed"``,
        ``"idle"`` (no lesson) or ``"timeout"``."""
        lessons = self.parts.lessons
        if lessons.lesson is None:
            return "idle"
        if not lessons.is_busy:
            return "shown"
        return self.wait_for({"shown": [lessons.step_shown], "failed": [lessons.failed]}, timeout_ms)
