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
``open_tokenizer(path_or_name, pattern=None)`` / ``wait_for_tokenizer(timeout_ms)``
    load a real tokenizer (file, folder or known name such as ``cl100k_base``) in the background
    and make it the current model; the wait returns ``"opened"``, ``"failed"``,
    ``"cancelled"``, ``"idle"`` or ``"timeout"``
``export_tokenizer(path, fmt="hf", step=None)``
    write the current BPE model as tokenizer.json (``"hf"``) or .tiktoken + pattern sidecar
    (``"tiktoken"``), its first `step` merges or all; waits; True when written (``exporter``)
``cancel_training()``, ``select_panel(panel_id)``, ``panel(panel_id)``, ``timeline``,
``save_corpus(path)``, ``save_model(path)``, ``set_theme(theme)``, ``appearance.set_font_scale()``
    and the shared objects later panels use: ``step_model`` (current timeline and step),
    ``training_engine``, ``docks`` (``docks.add_panel(panel)``), ``commands`` (every QAction)

Classroom: ``enter_presenter(panel_ids=None, scale=None)``, ``leave_presenter()``,
``presenter_active`` (panels default to ``lesson_panel_ids`` when a lesson runs; keys then call
``lesson_next()``/``lesson_prev()``), ``set_caption(text)`` (caption bar; "" = automatic "step k of
n, merge a + b -> ab", or ``lesson_caption`` while a lesson runs), ``save_session(path=None)``,
``open_session(path)`` (also via ``open_path``; ``sessions.state_dict()``), ``export_animation(spec)``
(`tokviz.app.classroom.animation.AnimationSpec`; ``animation.finished`` / ``cancelled`` / ``failed`` follow).
Guided lessons (`tokviz.app.classroom.lesson_runner`, Help > Lessons): ``start_lesson(name)``,
``lesson_next()``, ``lesson_prev()``, ``stop_lesson()``, ``wait_for_lesson_step(timeout_ms)``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from tokviz.core import Timeline, TokvizError, TrainSettings
from tokviz.engine.samples import sample
from tokviz.engine.settings import LAYOUT_VERSION, AppSettings
from tokviz.engine.step_model import StepModel
from tokviz.engine.tables.vocab_model import VocabModel
from tokviz.engine.token_view.token_view_engine import BASELINE_CORPUS_CHARS
from tokviz.engine.trained_models import TrainedModels
from tokviz.engine.training.engine import TrainingEngine
from tokviz.engine.workspace import Workspace
from tokviz.panels.base import Panel
from tokviz.panels.corpus.panel import CorpusPanel
from tokviz.panels.glitch_panel import GlitchPanel  # pretrained tokenizers
from tokviz.panels.lesson_panel import LessonPanel  # guided lessons
from tokviz.panels.timeline.panel import TimelinePanel  # merge timeline
from tokviz.panels.token_view.models_menu import install_model_rows  # earlier runs as rows
from tokviz.panels.token_view.panel import TokenViewPanel  # token view
from tokviz.panels.training.panel import TrainingPanel
from tokviz.panels.training.status import TrainingStatusPanel
from tokviz.panels.vocab_panel import VocabPanel

from .actions import WindowActions, build_menus, build_toolbar
from .classroom.animation import AnimationExporter, AnimationSpec  # classroom
from .classroom.lesson_runner import LessonRunner  # guided lessons
from .classroom.presenter import Presenter  # classroom
from .dialogs import Dialogs, ShortcutsDialog, show_about
from .docks import DockManager
from .export_ops import ExportController  # File > Export Tokenizer
from .file_ops import FileController
from .lazy_panels import add_heatmap_docks
from .services import WindowServices
from .session_ops import SessionController  # classroom
from .theme import Appearance
from .tokenizer_ops import TokenizerController  # pretrained tokenizers
from .training_ops import TrainingController
from .waiting import wait_for_signals

DEFAULT_SAMPLE = "english-prose"
DEFAULT_SIZE = (1280, 800)
# corpus column (timeline, heatmaps, token view behind it); training (+ lesson) above the vocabulary
# (+ glitch finder); heights in pixels
DEFAULT_LAYOUT = (
    [("corpus", Qt.DockWidgetArea.LeftDockWidgetArea, ("timeline", "embeddings", "positional", "token_view")),
     ("training", Qt.DockWidgetArea.RightDockWidgetArea, ("lesson",)),
     ("vocabulary", Qt.DockWidgetArea.RightDockWidgetArea, ("glitches",))],
    {"training": 380, "vocabulary": 420},
)


class MainWindow(QMainWindow):
    """The tokviz window. Pass `settings` (e.g. ``AppSettings.in_folder(tmp)``) to isolate it;
    `defer_panels` builds the panels no first screen shows after the first paint (a quick start)."""

    training_done = Signal(str)  # "finished", "cancelled" or "failed"
    embedding_panel = property(lambda self: self.docks.panel("embeddings"))  # built on first use
    positional_panel = property(lambda self: self.docks.panel("positional"))

    def __init__(self, settings: AppSettings | None = None, *, dialogs: Dialogs | None = None,
                 load_default_sample: bool = True, defer_panels: bool = False) -> None:
        super().__init__()
        self.setObjectName("main_window")
        self.settings_store = settings if settings is not None else AppSettings.open()
        self.appearance = Appearance(QApplication.instance(), self.settings_store, self)
        self.dialogs = dialogs if dialogs is not None else Dialogs(self)

        self.step_model = StepModel(self)
        self.trained_models = TrainedModels(self)  # finished runs: token view comparison rows
        # what panels share besides the step: the corpus and the current text
        self.workspace = Workspace(self.step_model, self.trained_models, self)
        self.training_engine = TrainingEngine(self)
        self.step_model.follow(self.training_engine)
        self.vocab_model = VocabModel(self)
        self.vocab_model.attach(self.step_model)

        self.corpus_panel = CorpusPanel()
        self.corpus_panel.bind_workspace(self.workspace)
        self.training_panel = TrainingPanel()
        self.vocab_panel = VocabPanel(self.vocab_model)
        self.vocab_panel.attach(self.step_model)  # vocabulary browser
        self.docks = DockManager(self)
        self.setDockNestingEnabled(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks
                            | QMainWindow.DockOption.AllowNestedDocks)
        for panel, key in ((self.corpus_panel, "Alt+1"), (self.training_panel, "Alt+2"),
                           (self.vocab_panel, "Alt+3")):
            self.docks.add_panel(panel, shortcut=key)
        # merge timeline: follows the step model; vocabulary selection -> provenance
        self.timeline_panel = TimelinePanel(self.step_model)
        self.timeline_panel.set_corpus_source(self.corpus_panel.corpus_input)
        self.docks.add_panel(self.timeline_panel, tabify_with="corpus", shortcut="Alt+4")
        self.vocab_panel.table.selectionModel().selectionChanged.connect(self._on_vocab_selection_changed)
        add_heatmap_docks(self)  # embedding similarities + positional encodings, tabs beside the corpus
        # token view: follows the step model; a clicked token is selected in the vocabulary
        # the token view reads at most BASELINE_CORPUS_CHARS: never join a 30 MB file on the GUI thread
        self.token_view_panel = TokenViewPanel(
            self.step_model, corpus_text=partial(self.workspace.corpus_sample, BASELINE_CORPUS_CHARS))
        self.token_view_panel.bind_workspace(self.workspace)
        self.docks.add_panel(self.token_view_panel, tabify_with="corpus", shortcut="Alt+5")
        self.token_view_panel.token_selected.connect(self.vocab_panel.select_token)
        install_model_rows(self.token_view_panel, self.trained_models)
        self.files = FileController(self)
        self.services = WindowServices(self.dialogs, self.settings_store, self.statusBar())
        self.tokenizers = TokenizerController(self.step_model, self.training_engine, self.training_panel,
                                              self.show_model, self.services, self)  # pretrained tokenizers
        self.exporter = ExportController(self.step_model, self.services, self)
        self.glitch_panel = GlitchPanel(self.step_model, corpus_text=self.workspace.corpus_sample)
        self.docks.add_panel(self.glitch_panel, tabify_with="vocabulary")
        self.glitch_panel.token_selected.connect(self._on_glitch_token_selected)
        self.presenter = Presenter(self)  # classroom
        self.sessions = SessionController(self)
        self.animation = AnimationExporter(self.step_model, self.timeline_panel, self.token_view_panel,
                                           self.select_panel, self.services, self)
        self.lesson_panel = LessonPanel()  # guided lessons: a tab beside the training panel
        self.docks.add_panel(self.lesson_panel)
        self.lesson_panel_ids: list[str] | None = None  # panels of the running lesson (presenter mode)
        self.lesson_caption = ""
        self.lessons = LessonRunner(self, self.lesson_panel)

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
        self.sessions.watch()  # classroom: autosave when something changed
        self._deferred = defer_panels  # built after the first paint (paintEvent), or at the latest in 2 s
        if defer_panels:
            QTimer.singleShot(2000, self.docks.build_pending)
        else:
            self.docks.build_pending()
        if self.sessions.crashed:
            QTimer.singleShot(0, self.sessions.offer_recovery)

    # -- wiring -----------------------------------------------------------------------------

    def _wire(self) -> None:
        a, c = self.commands, self.corpus_panel
        c.document_changed.connect(self._update_title)
        c.files_dropped.connect(self._on_files_dropped)
        c.word_counts_changed.connect(self._on_corpus_word_counts_changed)
        a.word_counts.toggled.connect(c.set_word_counts)
        self.training_panel.train_requested.connect(self.start_training)
        self.training_panel.cancel_requested.connect(self.cancel_training)
        self.training_panel.validity_changed.connect(self._on_training_panel_validity_changed)
        self.training = TrainingController(self.training_engine, self.workspace, self.corpus_panel,
                                           self.training_panel, self.training_status, self.services, self)
        self.training.done.connect(self.training_done)
        self.training_engine.running_changed.connect(self._on_training_engine_running_changed)
        self.appearance.theme_changed.connect(self._update_theme_actions)
        self._update_theme_actions()

    @Slot()
    def _on_training_engine_running_changed(self) -> None:
        self.commands.cancel.setEnabled(self.training_engine.is_running)

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
        self.docks.apply_layout(*DEFAULT_LAYOUT)

    @Slot()
    def _on_vocab_selection_changed(self, *_args) -> None:
        """Merge timeline: a token selected in the vocabulary shows its provenance."""
        ids = self.vocab_panel.selected_ids()
        if ids:
            self.timeline_panel.show_token(ids[0])

    @Slot(int)
    def _on_glitch_token_selected(self, token_id: int) -> None:
        """Glitch finder: show the token's merge tree and select it in the vocabulary."""
        self.timeline_panel.show_token(token_id)
        self.vocab_panel.select_token(token_id)

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
        result = self.wait_for({"opened": [f.corpus_opened, f.model_opened], "failed": [f.open_failed],
                                 "cancelled": [f.loader.cancelled]}, timeout_ms)
        if result == "opened" and self.corpus_panel.is_loading:
            result = self.wait_for({"opened": [self.corpus_panel.text_loaded]}, timeout_ms)
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

    def open_tokenizer(self, path_or_name: str | Path, pattern: str | None = None) -> bool:
        """Pretrained tokenizers: load a file, folder or known name in the background."""
        return self.tokenizers.open(path_or_name, pattern=pattern)

    def wait_for_tokenizer(self, timeout_ms: int = 60_000) -> str:
        return self.tokenizers.wait(timeout_ms)

    def export_tokenizer(self, path: str | Path, fmt: str = "hf", step: int | None = None) -> bool:
        return self.exporter.export(path, fmt, step=step)

    def show_model(self, timeline: Timeline, path: Path) -> None:
        """Show a loaded model: its vocabulary, settings and summary."""
        if self.training_engine.is_running:
            self.training_engine.cancel()
        self.step_model.set_timeline(timeline, source=str(path))
        self.training_panel.set_settings(timeline.settings)
        self.training_panel.show_summary(timeline, status=f"Model {path.name}")
        self.trained_models.add(timeline, name=f"{path.name}")  # a comparison row candidate

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
        return self.training.start(settings)

    @property
    def last_outcome(self) -> str:
        """How the last training run ended: ``"finished"``, ``"cancelled"``, ``"failed"`` or ""."""
        return self.training.last_outcome

    @Slot()
    def cancel_training(self) -> bool:
        return self.training_engine.cancel()

    def wait_for_training(self, timeout_ms: int = 120_000) -> str:
        """Run the event loop until the current run ends; returns its outcome."""
        if not self.training_engine.is_running:
            return self.last_outcome or "idle"
        return self.wait_for({"done": [self.training_done]}, timeout_ms, value_of="done")

    def wait_for(self, signals: dict, timeout_ms: int, value_of: str | None = None) -> str:
        """`tokviz.app.waiting.wait_for_signals` (``{name: [signal, ...]}``)."""
        return wait_for_signals(signals, timeout_ms, value_of)

    @Slot()
    def _on_corpus_word_counts_changed(self) -> None:
        self.commands.word_counts.setChecked(self.corpus_panel.word_counts)

    @Slot()
    def _on_training_panel_validity_changed(self) -> None:
        self.commands.train.setEnabled(self.training_panel.is_valid)

    # -- classroom: presenter mode, sessions, animation export ------------------

    presenter_active = property(lambda self: self.presenter.active)

    def enter_presenter(self, panel_ids: list[str] | None = None, scale: float | None = None) -> None:
        self.presenter.enter(panel_ids, scale)

    def leave_presenter(self) -> None:
        self.presenter.leave()

    def set_caption(self, text: str) -> None:
        self.presenter.set_caption(text)

    def save_session(self, path: str | Path | None = None) -> bool:
        return self.sessions.save(path)

    def open_session(self, path: str | Path) -> bool:
        return self.sessions.open(path)

    def export_animation(self, spec: AnimationSpec) -> bool:
        return self.animation.start(spec)

    # -- guided lessons ---------------------------------------------------------

    def start_lesson(self, name: str) -> bool:
        """Start a built-in lesson by name or number (``"bpe-steps"``, ``"3"``); False if unknown."""
        return self.lessons.start(name)

    @Slot()
    def lesson_next(self) -> None:
        self.lessons.next()

    @Slot()
    def lesson_prev(self) -> None:
        self.lessons.prev()

    @Slot()
    def stop_lesson(self) -> None:
        self.lessons.stop()

    def wait_for_lesson_step(self, timeout_ms: int = 60_000) -> str:
        """Run the event loop until the lesson step is on screen: ``"shown"``, ``"failed"``,
        ``"idle"`` (no lesson) or ``"timeout"``."""
        if self.lessons.lesson is None:
            return "idle"
        if not self.lessons.is_busy:
            return "shown"
        return self.wait_for({"shown": [self.lessons.step_shown], "failed": [self.lessons.failed]}, timeout_ms)

    # -- appearance -------------------------------------------------------------------------

    def set_theme(self, theme: str) -> None:
        self.appearance.set_theme(theme)

    @Slot()
    def _update_theme_actions(self, *_args) -> None:
        self.commands.themes[self.appearance.theme].setChecked(True)

    @Slot()
    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self.commands.all() + self.docks.goto_actions() + self.docks.menu.actions(), self)
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

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self._deferred:  # the window is on screen: now the rest
            self._deferred = False
            QTimer.singleShot(0, self.docks.build_pending)

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
        self.tokenizers.shutdown()
        self.exporter.shutdown()
        self.animation.shutdown()
        self.sessions.shutdown()
        self.docks.shutdown()

    def closeEvent(self, event) -> None:
        if not self.files.maybe_save():
            event.ignore()
            return
        self.presenter.leave()  # save the normal layout, not the presenter's
        self.shutdown()
        self.sessions.mark_clean_exit()
        try:
            self.settings_store.save_train_settings(self.training_panel.settings())
        except TokvizError:
            pass
        self.settings_store.save_window_layout(self.saveGeometry(), self.saveState(LAYOUT_VERSION))
        self.settings_store.sync()
        event.accept()
