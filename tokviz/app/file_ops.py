"""`FileController`: opening, saving and recent files for the main window.

Files are read on a background thread (`TaskEngine` + `tokviz.engine.corpus_files.load_file`)
with progress shown in the corpus panel; the editor's text is only replaced once a file has been
read successfully, so a bad file (binary, not UTF-8, unreadable, vanished) leaves it untouched and
gets a message. A file that is text but not UTF-8 can be opened with replacement characters. A
saved model (detected from its header) opens into the shared `StepModel`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication

from tokviz.core import TokvizError
from tokviz.core.algorithm.protocol import StepTimeline
from tokviz.core.model_files import save_model
from tokviz.core.io.safe_files import write_atomic
from tokviz.core.saved.session import is_session_file
from tokviz.engine.corpus_files import LoadedCorpus, LoadedModel, NotUtf8Error, is_model_file, load_file
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.engine.tasks import TaskEngine
from tokviz.panels.corpus.panel import CorpusPanel

from .dialogs import CORPUS_FILTER, MODEL_FILTER, OPEN_FILTER
from .services import WindowServices
from .waiting import wait_for_signals


class FileController(QObject):
    """File commands of one window. Signals report outcomes for scripts and tests."""

    corpus_opened = Signal(str)  # path
    model_opened = Signal(str)  # path
    open_failed = Signal(str)  # message
    saved = Signal(str)  # path of a corpus or model just written

    def __init__(self, services: WindowServices, corpus_panel: CorpusPanel, step_model: StepModel, *,
                 show_model: Callable[[StepTimeline, Path], None], open_session: Callable[[Path], bool],
                 parent: QObject | None = None) -> None:
        """`show_model(timeline, path)` shows an opened model; `open_session(path)` opens a
        ``.tokviz`` session (both belong to other controllers)."""
        super().__init__(parent)
        self.services, self.corpus, self.step_model = services, corpus_panel, step_model
        self.show_model, self.open_session = show_model, open_session
        self.loader = TaskEngine("file-loader", self)
        self.loader.progress_changed.connect(self._on_loader_progress_changed)
        self.loader.finished.connect(self._on_loader_finished)
        self.loader.failed.connect(self._on_loader_failed)
        self.loader.cancelled.connect(self._on_loader_cancelled)
        self._loading: tuple[Path, str] | None = None  # (path, errors mode)

    @property
    def is_loading(self) -> bool:
        return self.loader.is_running

    def wait(self, timeout_ms: int = 60_000) -> str:
        """Run the event loop until the file being opened is shown; ``"opened"``, ``"failed"``,
        ``"cancelled"``, ``"idle"`` (nothing loading) or ``"timeout"``."""
        corpus = self.corpus
        if not self.is_loading and not corpus.is_loading:
            return "idle"
        result = wait_for_signals({"opened": [self.corpus_opened, self.model_opened], "failed": [self.open_failed],
                                   "cancelled": [self.loader.cancelled]}, timeout_ms)
        if result == "opened" and corpus.is_loading:
            result = wait_for_signals({"opened": [corpus.text_loaded]}, timeout_ms)
        return result

    # -- replacing the corpus ---------------------------------------------------------------

    def new_corpus(self) -> bool:
        """File > New Corpus: an empty corpus (asks about unsaved changes first)."""
        if not self.maybe_save():
            return False
        self.corpus.clear_document()
        return True

    def set_corpus_text(self, text: str, *, word_counts: bool | None = None, title: str | None = None) -> bool:
        """Replace the corpus with `text` (asks about unsaved changes first)."""
        if not self.maybe_save():
            return False
        self.corpus.set_text(text, title=title, word_counts=word_counts)
        return True

    def load_sample(self, key: str) -> bool:
        """A built-in sample (keys in `tokviz.engine.samples.SAMPLES`) as the corpus."""
        s = sample(key)
        if not self.set_corpus_text(s.read(), word_counts=s.word_counts, title=f"Sample: {s.title}"):
            return False
        self.services.status(f"Sample: {s.description}", 5000)
        return True

    # -- opening ----------------------------------------------------------------------------

    def open_dialog(self, *, models_only: bool = False) -> None:
        store = self.services.settings
        title = "Open Model" if models_only else "Open Corpus or Model"
        path = self.services.dialogs.open_path(title, store.last_dir(), MODEL_FILTER if models_only else OPEN_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path, *, errors: str = "strict") -> bool:
        """Start reading `path`; False if the user kept unsaved changes instead."""
        path = Path(path)
        if is_session_file(path):  # classroom: a .tokviz session
            return self.open_session(path)
        if not is_model_file(path) and not self.maybe_save():
            return False
        self._loading = (path, errors)
        self.corpus.set_loading(f"Reading {path.name}", None)
        self.services.status(f"Opening {path}…")
        self.loader.start(load_file, path, errors=errors)
        return True

    @Slot(str, float)
    def _on_loader_progress_changed(self, what: str, fraction: float) -> None:
        name = self._loading[0].name if self._loading else ""
        self.corpus.set_loading(f"{what} {name}", fraction)

    @Slot(object)
    def _on_loader_finished(self, result: LoadedCorpus | LoadedModel) -> None:
        self.corpus.finish_loading()
        self._loading = None
        store = self.services.settings
        store.add_recent_file(result.path)
        store.set_last_dir(result.path.parent)
        if isinstance(result, LoadedModel):
            self.show_model(result.timeline, result.path)
            self.services.status(f"Opened model {result.path.name}", 5000)
            self.model_opened.emit(str(result.path))
            return
        self.corpus.show_loaded(result)
        mb = result.n_bytes / (1024 * 1024)
        size = f"{mb:.1f} MB" if mb >= 1 else f"{result.n_bytes:,} bytes"
        self.services.status(f"Opened {result.path.name} ({size})", 5000)
        self.corpus_opened.emit(str(result.path))

    @Slot(str)
    def _on_loader_failed(self, message: str) -> None:
        self.corpus.finish_loading()
        path, errors = self._loading or (None, "strict")
        self._loading = None
        error = self.loader.last_error
        self.services.status("Could not open the file", 5000)
        if path is not None and not path.exists():
            self.services.settings.remove_recent_file(path)
        self.open_failed.emit(message)
        if isinstance(error, NotUtf8Error) and errors == "strict" and path is not None:
            if self.services.dialogs.ask_open_replacing(message):
                self.open_path(path, errors="replace")
            return
        self.services.dialogs.error("Could not open the file", message)

    @Slot()
    def _on_loader_cancelled(self) -> None:
        self.corpus.finish_loading()
        self._loading = None

    # -- saving -----------------------------------------------------------------------------

    def maybe_save(self) -> bool:
        """Ask about unsaved changes. True when it is fine to replace or close the document."""
        if not self.corpus.is_modified:
            return True
        answer = self.services.dialogs.ask_save_changes(self.corpus.title)
        if answer == "save":
            return self.save()
        return answer == "discard"

    def save(self, path: str | Path | None = None) -> bool:
        """Save the corpus to `path`, its own file, or a file the user picks. True if saved."""
        target = Path(path) if path is not None else self.corpus.path
        if target is None:
            return self.save_as()
        try:
            with _wait_cursor():
                write_atomic(target, self.corpus.encoded_text())
        except TokvizError as exc:
            self.services.dialogs.error("Could not save the corpus", str(exc))
            return False
        self.corpus.mark_saved(target)
        self.services.settings.add_recent_file(target)
        self.services.status(f"Saved {target}", 5000)
        self.saved.emit(str(target))
        return True

    def save_as(self) -> bool:
        store = self.services.settings
        name = self.corpus.path.name if self.corpus.path else "corpus.txt"
        path = self.services.dialogs.save_path("Save Corpus As", str(Path(store.last_dir()) / name), CORPUS_FILTER)
        if not path:
            return False
        store.set_last_dir(Path(path).parent)
        return self.save(path)

    def save_model_dialog(self) -> bool:
        timeline = self.step_model.timeline
        if timeline is None:
            self.services.dialogs.info("No model yet", "Train a tokenizer (or open a model) first.")
            return False
        if not timeline.has_counts:  # a loaded tokenizer: nothing new to save
            self.services.dialogs.info("A loaded tokenizer", f"{timeline.settings.name} was opened from "
                                     f"{timeline.settings.source}; it is not a tokviz model to save.")
            return False
        store = self.services.settings
        suggested = str(Path(store.last_dir()) / "model.json")
        path = self.services.dialogs.save_path("Save Model As", suggested, MODEL_FILTER)
        if not path:
            return False
        return self.save_model(path)

    def save_model(self, path: str | Path) -> bool:
        timeline = self.step_model.timeline
        if timeline is None:
            return False
        try:
            with _wait_cursor():
                save_model(timeline, path)  # BPE, WordPiece or Unigram format
        except TokvizError as exc:
            self.services.dialogs.error("Could not save the model", str(exc))
            return False
        self.services.settings.set_last_dir(Path(path).parent)
        self.services.status(f"Saved model {path}", 5000)
        self.saved.emit(str(path))
        return True

    def shutdown(self) -> None:
        self.loader.shutdown()


class _wait_cursor:
    def __enter__(self):
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)

    def __exit__(self, *exc):
        QGuiApplication.restoreOverrideCursor()
        return False
