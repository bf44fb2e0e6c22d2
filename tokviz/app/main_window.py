"""`MainWindow`: assembles models, engines, panels and docks, and wires them together.

It owns no algorithm: training runs in `TrainingEngine`, files are read by `FileController`,
panels display. Panels are docks registered with `DockManager` (``window.docks``).

Scripting surface (used by tests, the screenshot command and future lesson scripts):

``open_path(path)``
    open a corpus or saved model (read in the background; `files.corpus_opened`,
    `files.model_opened` or `files.open_failed` follows; `wait_for_file()` blocks until then)
``set_corpus_text(text, word_counts=None)`` / ``load_sample(key)``
    replace the corpus (keys in `tokviz.engine.samples.SAMPLES`)
``start_training(settings=None)``
    train with `TrainSettings` (default: the training panel's); returns False with a message
    when it cannot start; ``training_engine.finished`` / ``cancelled`` / ``failed`` follow
``wait_for_training(timeout_ms)``
    block (running the event loop) until the run ends; returns ``"finished"``, ``"cancelled"``,
    ``"failed"`` or ``"timeout"``
``cancel_training()``, ``select_panel(panel_id)``, ``panel(panel_id)``, ``timeline``,
``save_corpus(path)``, ``save_model(path)``, ``set_theme(theme)``, ``appearance.set_font_scale()``
    and the shared objects later panels use: ``step_model`` (current timeline and step),
    ``training_engine``, ``docks`` (``docks.add_panel(panel)``), ``commands`` (every QAction)
"""

from __future__ import annotations

from functools import partial

import time
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QEventLoop, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from tokviz.core import Timeline, TokvizError, TrainSettings
from tokviz.engine.samples import sample
from tokviz.engine.settings import LAYOUT_VERSION, AppSettings
from tokviz.engine.step_model import StepModel
from tokviz.engine.token_view_engine import BASELINE_CORPUS_CHARS
from tokviz.engine.training import TrainingEngine, TrainingProgress
from tokviz.engine.vocab_model import VocabModel
from tokviz.panels.base import Panel
from tokviz.panels.corpus_panel import CorpusPanel
from tokviz.panels.embedding_panel import EmbeddingPanel, current_text_source  # heatmaps (issue 8)
from tokviz.panels.positional_panel import PositionalPanel  # heatmaps (issue 8)
from tokviz.panels.timeline_panel import TimelinePanel  # merge timeline (issue 5)
from tokviz.panels.token_view_panel import TokenViewPanel  # token view (issue 6)
from tokviz.panels.training_panel import TrainingPanel
from tokviz.panels.training_status import TrainingStatusPanel, format_duration
from tokviz.panels.vocab_panel import VocabPanel

from .actions import WindowActions, build_menus, build_toolbar
from .dialogs import Dialogs, ShortcutsDialog, show_about
from .docks import DockManager
from .file_ops import FileController
from .theme import Appearance

DEFAULT_SAMPLE = "english-prose"
DEFAULT_SIZE = (1280, 800)


class MainWindow(QMainWindow):
    """The tokviz window. Pass `settings` (e.g. ``AppSettings.in_folder(tmp)``) to isolate it."""

    training_done = Signal(str)  # "finished", "cancelled" or "failed"

    def __init__(self, settings: AppSettings | None = None, *, dialogs: Dialogs | None = None,
                 load_default_sample: bool = True) -> None:
        super().__init__()
        self.setObjectName("main_window")
        self.settings_store = settings if settings is not None else AppSettings.open()
        self.appearance = Appearance(QApplication.instance(), self.settings_store, self)
        self.dialogs = dialogs if dialogs is not None else Dialogs(self)
        self.last_outcome = ""  # of the last training run: finished, cancelled or failed

        self.step_model = StepModel(self)
        self.training_engine = TrainingEngine(self)
        self.step_model.follow(self.training_engine)
        self.vocab_model = VocabModel(self)
        self.vocab_model.attach(self.step_model)

        self.corpus_panel = CorpusPanel()
        self.training_panel = TrainingPanel()
        self.vocab_panel = VocabPanel(self.vocab_model)
        self.docks = DockManager(self)
        self.setDockNestingEnabled(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks
                            | QMainWindow.DockOption.AllowNestedDocks)
        for panel, key in ((self.corpus_panel, "Alt+1"), (self.training_panel, "Alt+2"),
                           (self.vocab_panel, "Alt+3")):
            self.docks.add_panel(panel, shortcut=key)
        # merge timeline (issue 5): follows the step model; vocabulary selection -> provenance
        self.timeline_panel = TimelinePanel(self.step_model)
        self.timeline_panel.set_corpus_source(self.corpus_panel.corpus_input)
        self.docks.add_panel(self.timeline_panel, tabify_with="corpus", shortcut="Alt+4")
        self.vocab_panel.table.selectionModel().selectionChanged.connect(self._on_vocab_selection_changed)
        # heatmaps (issue 8): embedding similarities + positional encodings, tabs beside the corpus
        self.embedding_panel = EmbeddingPanel()
        self.positional_panel = PositionalPanel()
        self.embedding_panel.attach(self.step_model, self.corpus_panel,
                                    current_text=current_text_source(self.docks, self.corpus_panel), docks=self.docks)
        self.embedding_panel.text_tokens_changed.connect(self.positional_panel.set_text_tokens)
        self.docks.add_panel(self.embedding_panel, tabify_with="corpus")
        self.docks.add_panel(self.positional_panel, tabify_with="corpus")
        # token view (issue 6): follows the step model; a clicked token is selected in the vocabulary
        # the token view reads at most BASELINE_CORPUS_CHARS: never join a 30 MB file on the GUI thread
        self.token_view_panel = TokenViewPanel(
            self.step_model, corpus_text=partial(self.corpus_panel.text_prefix, BASELINE_CORPUS_CHARS))
        self.docks.add_panel(self.token_view_panel, tabify_with="corpus", shortcut="Alt+5")
        self.token_view_panel.token_selected.connect(self._on_token_view_token_selected)
        self.files = FileController(self)

        self.commands = WindowActions(self)  # (not `actions`: that is QWidget.actions())
        self.toolbar = build_toolbar(self, self.commands)
        self.menus = build_menus(self, self.commands, self.docks.menu)
        self.toolbar.findChild(QWidget, "samples_button").setMenu(self.menus["samples"])
        self.training_status = TrainingStatusPanel()
        self.statusBar().addPermanentWidget(self.training_status)
        self.setAcceptDrops(True)
        self._wire()
        self._restore_settings()
        if load_default_sample:
            self.load_sample(DEFAULT_SAMPLE)
        self._update_title()
        self.statusBar().showMessage("Ready", 3000)

    # -- wiring -----------------------------------------------------------------------------

    def _wire(self) -> None:
        a, e, c = self.commands, self.training_engine, self.corpus_panel
        c.document_changed.connect(self._update_title)
        c.files_dropped.connect(self._on_files_dropped)
        c.word_counts_changed.connect(self._on_corpus_word_counts_changed)
        a.word_counts.toggled.connect(c.set_word_counts)
        self.training_panel.train_requested.connect(self.start_training)
        self.training_panel.cancel_requested.connect(self.cancel_training)
        self.training_panel.validity_changed.connect(self._on_training_panel_validity_changed)
        e.started.connect(self._on_engine_started)
        e.progress_changed.connect(self._on_engine_progress_changed)
        e.finished.connect(self._on_engine_finished)
        e.cancelled.connect(self._on_engine_cancelled)
        e.failed.connect(self._on_engine_failed)
        e.running_changed.connect(self._on_engine_running_changed)
        self.appearance.theme_changed.connect(self._update_theme_actions)
        self._update_theme_actions()

    def _restore_settings(self) -> None:
        saved = self.settings_store.train_settings()
        if saved is not None:
            self.training_panel.set_settings(saved)
        self.resize(*DEFAULT_SIZE)
        self._apply_default_layout()
        geometry, state = self.settings_store.window_layout()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state, LAYOUT_VERSION)

    def _apply_default_layout(self) -> None:
        corpus, training, vocab = (self.docks.dock(p) for p in ("corpus", "training", "vocabulary"))
        for dock in (corpus, training, vocab):
            dock.setFloating(False)
            dock.show()
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, corpus)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, training)
        self.splitDockWidget(training, vocab, Qt.Orientation.Vertical)
        width = self.width()
        self.resizeDocks([corpus, training], [int(width * 0.5), int(width * 0.5)], Qt.Orientation.Horizontal)
        self.resizeDocks([training, vocab], [380, 420], Qt.Orientation.Vertical)
        timeline = self.docks.dock("timeline")  # merge timeline (issue 5): a tab beside the corpus
        timeline.setFloating(False)
        timeline.show()
        self.tabifyDockWidget(corpus, timeline)
        for pid in ("embeddings", "positional"):  # heatmaps (issue 8): tabs behind the corpus
            dock = self.docks.dock(pid)
            dock.setFloating(False)
            dock.show()
            self.tabifyDockWidget(corpus, dock)
        corpus.raise_()
        token_view = self.docks.dock("token_view")  # token view (issue 6): a tab beside the corpus
        token_view.setFloating(False)
        token_view.show()
        self.tabifyDockWidget(corpus, token_view)
        corpus.raise_()

    @Slot()
    def _on_vocab_selection_changed(self, *_args) -> None:
        """Merge timeline (issue 5): a token selected in the vocabulary shows its provenance."""
        ids = self.vocab_panel.selected_ids()
        if ids:
            self.timeline_panel.show_token(ids[0])

    @Slot(int)
    def _on_token_view_token_selected(self, token_id: int) -> None:
        """Token view (issue 6): select the clicked token in the vocabulary (and so the timeline)."""
        row = self.vocab_model.row_of_id(token_id)
        if row is not None:
            self.vocab_panel.table.selectRow(row)
            self.vocab_panel.table.scrollTo(self.vocab_model.index(row, 0))

    @Slot()
    def reset_layout(self) -> None:
        self.toolbar.show()
        self._apply_default_layout()

    # -- scripting surface: corpus ----------------------------------------------------------

    def panel(self, panel_id: str) -> Panel:
        return self.docks.panel(panel_id)

    def select_panel(self, panel_id: str) -> Panel:
        return self.docks.select(panel_id)

    @property
    def timeline(self) -> Timeline | None:
        return self.step_model.timeline

    def open_path(self, path: str | Path) -> bool:
        return self.files.open_path(path)

    def wait_for_file(self, timeout_ms: int = 60_000) -> str:
        """Run the event loop until the file being opened is shown; ``"opened"``, ``"failed"``,
        ``"idle"`` (nothing loading) or ``"timeout"``."""
        if not self.files.is_loading and not self.corpus_panel.is_loading:
            return "idle"
        f = self.files
        result = self._wait_for({"opened": [f.corpus_opened, f.model_opened], "failed": [f.open_failed],
                                 "cancelled": [f.loader.cancelled]}, timeout_ms)
        if result == "opened" and self.corpus_panel.is_loading:
            result = self._wait_for({"opened": [self.corpus_panel.text_loaded]}, timeout_ms)
        return result

    def set_corpus_text(self, text: str, *, word_counts: bool | None = None, title: str | None = None) -> bool:
        """Replace the corpus with `text` (asks about unsaved changes first)."""
        if not self.files.maybe_save():
            return False
        self.corpus_panel.set_text(text, title=title, word_counts=word_counts)
        return True

    def load_sample(self, key: str) -> bool:
        s = sample(key)
        if not self.set_corpus_text(s.read(), word_counts=s.word_counts, title=f"Sample: {s.title}"):
            return False
        self.statusBar().showMessage(f"Sample: {s.description}", 5000)
        return True

    @Slot()
    def new_corpus(self) -> None:
        if self.files.maybe_save():
            self.corpus_panel.clear_document()

    @Slot()
    def open_file_dialog(self) -> None:
        self.files.open_dialog()

    @Slot()
    def open_model_dialog(self) -> None:
        self.files.open_dialog(models_only=True)

    @Slot()
    def save_corpus(self, path: str | Path | None = None) -> bool:
        return self.files.save(path)

    @Slot()
    def save_corpus_as(self) -> bool:
        return self.files.save_as()

    @Slot()
    def save_model_dialog(self) -> bool:
        return self.files.save_model_dialog()

    def save_model(self, path: str | Path) -> bool:
        return self.files.save_model(path)

    def show_model(self, timeline: Timeline, path: Path) -> None:
        """Show a loaded model: its vocabulary, settings and summary."""
        if self.training_engine.is_running:
            self.training_engine.cancel()
        self.step_model.set_timeline(timeline, source=str(path))
        self.training_panel.set_settings(timeline.settings)
        self.training_panel.show_summary(timeline, status=f"Model {path.name}")

    def edit_focused(self, method: str) -> None:
        """Edit > Undo/Copy/...: call `method` on the focused widget (or a parent that has it),
        else on the corpus editor."""
        w = QApplication.focusWidget()
        while w is not None and not hasattr(w, method):
            w = w.parentWidget()
        if w is None or w.window() is not self:
            w = self.corpus_panel.large_view if self.corpus_panel.is_read_only else self.corpus_panel.editor
        if hasattr(w, method):
            getattr(w, method)()

    # -- scripting surface: training --------------------------------------------------------

    @Slot()
    def start_training(self, settings: TrainSettings | None = None) -> bool:
        """Train on the corpus; False (with a message) if the settings or corpus are unusable.

        Without `settings`, the training panel's options and the corpus's word-frequency mode are
        used. Given `settings` are shown in the panel, and their ``word_counts`` sets the mode."""
        corpus = self.corpus_panel
        try:
            if settings is None:
                settings = self.training_panel.settings(word_counts=corpus.word_counts)
            else:
                settings = settings.validate()
                self.training_panel.set_settings(settings)
                corpus.set_word_counts(settings.word_counts)
            if corpus.is_blank():
                raise TokvizError("the corpus is empty: type some text, open a file or pick a sample")
            self.training_engine.start(settings, corpus.corpus_input(word_counts=settings.word_counts))
        except TokvizError as exc:
            message = str(exc)
            self.last_outcome = "failed"
            self.training_status.show_outcome(f"Cannot train: {message}")
            self.dialogs.error("Cannot train", message[:1].upper() + message[1:])
            return False
        self.settings_store.save_train_settings(replace(settings, word_counts=False))
        return True

    @Slot()
    def cancel_training(self) -> bool:
        return self.training_engine.cancel()

    def wait_for_training(self, timeout_ms: int = 120_000) -> str:
        """Run the event loop until the current run ends; returns its outcome."""
        if not self.training_engine.is_running:
            return self.last_outcome or "idle"
        return self._wait_for({"done": [self.training_done]}, timeout_ms, value_of="done")

    def _wait_for(self, signals: dict, timeout_ms: int, value_of: str | None = None) -> str:
        """Run a local event loop until one of `signals` fires (name of its group, or the first
        argument for the group `value_of`), or ``"timeout"``. Stray quits do not end the wait."""
        loop = QEventLoop()
        timer = QTimer(singleShot=True)
        timer.timeout.connect(loop.quit)
        result: list[str] = []

        def done(name: str, *args) -> None:
            result.append(args[0] if value_of == name and args else name)
            loop.quit()

        connections = []
        for name, sigs in signals.items():
            for sig in sigs:
                slot = (lambda *args, n=name: done(n, *args))
                sig.connect(slot)
                connections.append((sig, slot))
        deadline = time.monotonic() + timeout_ms / 1000
        try:
            while not result and time.monotonic() < deadline:
                timer.start(max(1, int((deadline - time.monotonic()) * 1000)))
                loop.exec()
        finally:
            timer.stop()
            for sig, slot in connections:
                sig.disconnect(slot)
        return result[0] if result else "timeout"

    @Slot()
    def _on_engine_started(self) -> None:
        self.last_outcome = ""
        self.training_panel.show_summary(None, status="Training…")

    @Slot()
    def _on_engine_running_changed(self) -> None:
        running = self.training_engine.is_running
        self.commands.cancel.setEnabled(running)
        self.training_panel.set_running(running)

    @Slot()
    def _on_corpus_word_counts_changed(self) -> None:
        self.commands.word_counts.setChecked(self.corpus_panel.word_counts)

    @Slot()
    def _on_training_panel_validity_changed(self) -> None:
        self.commands.train.setEnabled(self.training_panel.is_valid)

    @Slot(object)
    def _on_engine_progress_changed(self, progress: TrainingProgress) -> None:
        self.training_status.show_progress(progress)

    @Slot(object)
    def _on_engine_finished(self, timeline: Timeline) -> None:
        p = self.training_engine.last_progress
        elapsed = format_duration(p.elapsed) if p else format_duration(0)
        n = timeline.n_merges
        budget = p.budget if p else None
        if budget is not None and n >= budget:
            status = f"Trained {n:,} merges in {elapsed}"
        else:
            status = (f"Trained {n:,} merges in {elapsed}; stopped early: no pair occurs "
                      f"{timeline.settings.min_count}+ times")
        self.training_status.show_outcome(status)
        self.training_panel.show_summary(timeline, status=status)
        self._end_run("finished")

    @Slot()
    def _on_engine_cancelled(self) -> None:
        n = self.step_model.n_steps if self.step_model.source == "training" else 0
        status = f"Training cancelled after {n:,} merges"
        self.training_status.show_outcome(status)
        self.training_panel.show_summary(self.step_model.timeline if n else None, status=status)
        self._end_run("cancelled")

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self.training_status.show_outcome(f"Training failed: {message}")
        self.training_panel.show_summary(None, status=f"Training failed: {message}")
        self.dialogs.error("Training failed", message[:1].upper() + message[1:])
        self._end_run("failed")

    def _end_run(self, outcome: str) -> None:
        self.last_outcome = outcome
        self.training_done.emit(outcome)

    # -- appearance -------------------------------------------------------------------------

    def set_theme(self, theme: str) -> None:
        self.appearance.set_theme(theme)

    @Slot()
    def _update_theme_actions(self, *_args) -> None:
        self.commands.themes[self.appearance.theme].setChecked(True)

    @Slot()
    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self.commands.all() + self.docks.menu.actions(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    @Slot()
    def show_about(self):
        return show_about(self)

    # -- window -----------------------------------------------------------------------------

    @Slot()
    def _update_title(self) -> None:
        c = self.corpus_panel
        suffix = " (read-only)" if c.is_read_only else ""
        self.setWindowTitle(f"{c.title}[*]{suffix} — tokviz")
        self.setWindowModified(c.is_modified)

    def dragEnterEvent(self, event) -> None:
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self._on_files_dropped(files)

    @Slot(list)
    def _on_files_dropped(self, files: list) -> None:
        self.open_path(files[0])

    def shutdown(self) -> None:
        """Stop every background thread and wait for it (idempotent)."""
        self.training_engine.shutdown()
        self.files.shutdown()
        self.docks.shutdown()

    def closeEvent(self, event) -> None:
        if not self.files.maybe_save():
            event.ignore()
            return
        self.shutdown()
        try:
            self.settings_store.save_train_settings(self.training_panel.settings())
        except TokvizError:
            pass
        self.settings_store.save_window_layout(self.saveGeometry(), self.saveState(LAYOUT_VERSION))
        self.settings_store.sync()
        event.accept()
