"""`MainWindow`: assembles models, engines, panels and docks, and wires them together.

It owns no algorithm: training runs in `TrainingEngine`, files are read by `FileController`,
panels display. Panels are docks registered with `DockManager` (``window.docks``). The window is
built in stages, each from parts that are complete when handed over: models and engines, panels
and docks, the controllers of files, training and tokenizers, the classroom (lessons, presenter
mode, sessions, animation export), then the commands (workspaces, actions, menus, toolbar), and
last the scripting surface. Each controller gets the typed objects it works with (`WindowServices`,
models, panels, other controllers, and for those that arrange the window a frame protocol:
`tokviz.app.docks.DockFrame`, `LayoutFrame`, the presenter's `PresenterFrame`), never the window.

Scripts, tests, the screenshot command and lessons drive the window through ``window.script``
(`tokviz.app.scripting.Scripting`), not through the window's own methods, which are the menu
commands and Qt's.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QEvent, Qt, QTimer, Slot
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from tokviz.core import TokvizError
from tokviz.engine.settings import LAYOUT_VERSION, AppSettings
from tokviz.engine.step_model import StepModel
from tokviz.engine.tables.vocab_model import VocabModel
from tokviz.engine.token_view.token_view_engine import BASELINE_CORPUS_CHARS
from tokviz.engine.trained_models import TrainedModels
from tokviz.engine.training.engine import TrainingEngine
from tokviz.engine.workspace import Workspace
from tokviz.panels.corpus.panel import CorpusPanel
from tokviz.panels.lesson_panel import LessonPanel  # guided lessons
from tokviz.panels.timeline.panel import TimelinePanel  # merge timeline
from tokviz.panels.token_view.models_menu import install_model_rows  # earlier runs as rows
from tokviz.panels.token_view.panel import TokenViewPanel  # token view
from tokviz.panels.training.panel import TrainingPanel
from tokviz.panels.training.status import TrainingStatusPanel
from tokviz.panels.vocab_panel import VocabPanel
from tokviz.panels.welcome.screen import WelcomeScreen

from .actions import ActionTargets, WindowActions, WindowCommands, build_menus, build_toolbar
from .classroom.animation import AnimationExporter  # classroom
from .classroom.lesson_runner import LessonParts, LessonRunner, LessonViews  # guided lessons
from .classroom.presenter import Presenter, PresenterParts  # classroom
from .dialogs import Dialogs, ShortcutsDialog, show_about
from .docks import DockManager
from .export_ops import ExportController  # File > Export Tokenizer
from .file_ops import FileController
from .lattice_window import LatticeController
from .lazy_panels import add_chat_dock, add_compare_dock, add_glitch_dock, add_heatmap_docks
from .scripting import Scripting, ScriptParts
from .services import WindowServices
from .session_ops import SessionController, SessionParts, SessionViews  # classroom
from .theme import Appearance
from .tokenizer_ops import TokenizerController  # pretrained tokenizers
from .training_ops import TrainingController
from .workspaces.ops import WorkspaceController  # View > Workspace
from .workspaces.welcome import WelcomeController, WelcomePaths  # the first-run screen

DEFAULT_SAMPLE = "english-prose"
DEFAULT_SIZE = (1280, 800)  # a window that was never closed before: this, or maximized (`show_first`)


class MainWindow(QMainWindow):
    """The tokviz window. Pass `settings` (e.g. ``AppSettings.in_folder(tmp)``) to isolate it;
    `defer_panels` builds the panels no first screen shows after the first paint (a quick start);
    `offer_welcome` shows the first-run screen unless it was used or dismissed before."""

    embedding_panel = property(lambda self: self.docks.panel("embeddings"))  # built on first use
    positional_panel = property(lambda self: self.docks.panel("positional"))
    compare_panel = property(lambda self: self.docks.panel("compare"))
    chat_panel = property(lambda self: self.docks.panel("chat"))
    glitch_panel = property(lambda self: self.docks.panel("glitches"))  # pretrained tokenizers

    def __init__(self, settings: AppSettings | None = None, *, dialogs: Dialogs | None = None,
                 load_default_sample: bool = True, defer_panels: bool = False, offer_welcome: bool = False) -> None:
        super().__init__()
        self.setObjectName("main_window")
        self.settings_store = settings if settings is not None else AppSettings.open()
        self.appearance = Appearance(QApplication.instance(), self.settings_store, self)
        self.dialogs = dialogs if dialogs is not None else Dialogs(self)
        self._build_models()
        self._build_panels()
        self._build_controllers()
        self._build_classroom()
        self._build_commands()
        self.script = Scripting(ScriptParts(  # what scripts, tests and lessons drive: last, from complete parts
            self.services, self.step_model, self.corpus_panel, self.files, self.training, self.training_engine,
            self.tokenizers, self.exporter, self.docks, self.appearance, self.presenter, self.sessions,
            self.animation, self.lessons))
        self.welcome.screen.cover(self, self.dock_area)
        self.statusBar().addPermanentWidget(self.training_status)
        self.setAcceptDrops(True)
        self._wire()
        self._restore_settings()
        if load_default_sample:
            self.script.load_sample(DEFAULT_SAMPLE)
        self._update_title()
        self.statusBar().showMessage("Ready", 3000)
        self.sessions.watch()  # classroom: autosave when something changed
        self._deferred = defer_panels  # built after the first paint (paintEvent), or at the latest in 2 s
        if defer_panels:
            QTimer.singleShot(2000, self._on_screen)
        else:
            self.docks.build_pending()
            QTimer.singleShot(0, self.exporter.preload)
        if self.sessions.crashed:
            QTimer.singleShot(0, self.sessions.offer_recovery)
        elif offer_welcome:
            self.welcome.offer()

    # -- the stages of building ---------------------------------------------------------------

    def _build_models(self) -> None:
        """What panels and controllers share: the step, finished runs, the corpus and text, training."""
        self.step_model = StepModel(self)
        self.trained_models = TrainedModels(self)  # finished runs: token view comparison rows
        # what panels share besides the step: the corpus and the current text
        self.workspace = Workspace(self.step_model, self.trained_models, self)
        self.training_engine = TrainingEngine(self)
        self.step_model.follow(self.training_engine)
        self.vocab_model = VocabModel(self)
        self.vocab_model.attach(self.step_model)

    def _build_panels(self) -> None:
        """The panels and their docks, in docking order (saved layouts and View > Panels know it)."""
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
        add_heatmap_docks(self.docks, self.workspace)  # embedding similarities + positional encodings
        # token view: follows the step model; a clicked token is selected in the vocabulary
        # the token view reads at most BASELINE_CORPUS_CHARS: never join a 30 MB file on the GUI thread
        self.token_view_panel = TokenViewPanel(
            self.step_model, corpus_text=partial(self.workspace.corpus_sample, BASELINE_CORPUS_CHARS))
        self.token_view_panel.bind_workspace(self.workspace)
        self.docks.add_panel(self.token_view_panel, tabify_with="corpus", shortcut="Alt+5")
        self.token_view_panel.token_selected.connect(self.vocab_panel.select_token)
        install_model_rows(self.token_view_panel, self.trained_models)
        self.lattice = LatticeController(self.token_view_panel, self.step_model, self)  # "Show lattice"
        add_chat_dock(self.docks, self.step_model)  # chat templates
        self.training_status = TrainingStatusPanel()

    def _build_controllers(self) -> None:
        """Training, files, real tokenizers and exports; then the panels that show their results."""
        self.services = WindowServices(self.dialogs, self.settings_store, self.statusBar())
        self.training = TrainingController(self.training_engine, self.workspace, self.corpus_panel,
                                           self.training_panel, self.training_status, self.services, self)
        # a .tokviz file opened as a file is a session: the session controller, made later, opens it
        self.files = FileController(self.services, self.corpus_panel, self.step_model, parent=self,
                                    show_model=self.training.show_model, open_session=self._open_session)
        self.tokenizers = TokenizerController(self.step_model, self.training_engine, self.training_panel,
                                              self.training.show_model, self.services, self)  # pretrained tokenizers
        self.exporter = ExportController(self.step_model, self.services, self)
        add_compare_dock(self.docks, self.step_model, self.workspace, self._on_compare_token_selected)
        add_glitch_dock(self.docks, self.step_model, self.workspace, self._on_glitch_token_selected)

    def _build_classroom(self) -> None:
        """Guided lessons, presenter mode (which follows the lessons), sessions, animation export."""
        self.lesson_panel = LessonPanel()  # guided lessons: a tab beside the training panel
        self.docks.add_panel(self.lesson_panel)
        self.lessons = LessonRunner(
            LessonParts(self.files, self.training, self.step_model, self.docks,
                        lambda key: self.workspaces.lend(key)),  # the workspaces come later (commands)
            self.lesson_panel,
            LessonViews(self.corpus_panel, self.token_view_panel, partial(self.docks.panel, "embeddings"),
                        partial(self.docks.panel, "positional")),  # heatmap panels: built on first use
            self.dialogs, self)
        self.presenter = Presenter(self, PresenterParts(
            self.docks, self.appearance, self.settings_store, self.step_model, self.token_view_panel,
            self.timeline_panel.playback, self.lessons), self)
        self.presenter.active_changed.connect(self.lesson_panel.set_presenting)
        self.sessions = SessionController(
            self, SessionParts(self.step_model, self.files, self.training, self.tokenizers, self.presenter,
                               self.docks, self.appearance),
            SessionViews(self.corpus_panel, self.training_panel, self.vocab_panel, self.token_view_panel),
            self.services, self)
        self.animation = AnimationExporter(self.step_model, self.timeline_panel, self.token_view_panel,
                                           self.docks.select, self.services, self)

    def _build_commands(self) -> None:
        """Workspaces, the first-run screen, the actions, toolbar and menus."""
        self.workspaces = WorkspaceController(self, self.docks, self.settings_store, self,
                                              before_change=self.presenter.leave_for_layout,
                                              held=lambda: self.presenter.active)
        self.welcome = WelcomeController(WelcomeScreen(self), self.settings_store, WelcomePaths(
            self._welcome_train_sample, self._welcome_open_tokenizer, self._welcome_start_lesson), self)
        self.commands = WindowActions(self, ActionTargets(  # (not `actions`: that is QWidget.actions())
            self.files, self.tokenizers, self.exporter, self.sessions, self.animation, self.training,
            self.appearance, self.presenter, self.workspaces, self.welcome, self.lessons, self.settings_store,
            WindowCommands(self.edit_focused, self.reset_layout, self.show_shortcuts, self.show_about)))
        # presenter mode takes Esc from Cancel and checks its own action: bound once the actions exist
        self.presenter.bind_actions(cancel=self.commands.cancel, toggle=self.commands.presenter,
                                    leave=self.commands.presenter_leave)
        self.toolbar = build_toolbar(self, self.commands)
        self.addToolBar(self.toolbar)
        self.menus = build_menus(self.menuBar(), self.commands, self.docks.menu, self.toolbar)
        self.toolbar.findChild(QWidget, "samples_button").setMenu(self.menus["samples"])

    # -- wiring -----------------------------------------------------------------------------

    def _wire(self) -> None:
        a, c = self.commands, self.corpus_panel
        c.document_changed.connect(self._update_title)
        self.step_model.timeline_changed.connect(self._update_title)
        c.files_dropped.connect(self._on_files_dropped)
        c.word_counts_changed.connect(self._on_corpus_word_counts_changed)
        a.word_counts.toggled.connect(c.set_word_counts)
        self.training_panel.train_requested.connect(self._on_training_panel_train_requested)
        self.training_panel.cancel_requested.connect(self.training_engine.cancel)
        self.training_panel.validity_changed.connect(self._on_training_panel_validity_changed)
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
        self.workspaces.arrange()
        geometry, state = self.settings_store.window_layout()
        if geometry is not None:
            self.restoreGeometry(geometry)
            # again once shown: panels laid out for another width on the way (the merge timeline's
            # three columns) may have held the window to a larger minimum for a moment
            QTimer.singleShot(0, self, partial(self._restore_geometry_again, geometry))
        if state is not None:
            self.workspaces.restore(state)

    def _restore_geometry_again(self, geometry) -> None:
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        self.layout().activate()  # the window's minimum size of now
        self.restoreGeometry(geometry)

    def show_first(self) -> None:
        """Show the window: at its last geometry, or maximized the first time (then the workspace's
        panels get their shares of the whole screen)."""
        if self.settings_store.window_layout()[0] is not None:
            self.show()
            return
        self.showMaximized()
        QTimer.singleShot(0, self, self.workspaces.fit_sizes)  # for the screen's size (a wide layout?)

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

    @Slot(object, int)
    def _on_compare_token_selected(self, timeline, token_id: int) -> None:
        """Compare panel: a token of the model on screen is shown in the vocabulary and timeline."""
        if timeline is self.step_model.timeline:
            self._on_glitch_token_selected(token_id)

    @Slot()
    def reset_layout(self) -> None:
        self.toolbar.show()
        self.workspaces.reset()

    # -- the first-run screen's paths ------------------------------------------------------

    def dock_area(self):
        """The part of the window the panels share (below the bars, above the status bar)."""
        top = max(self.menuBar().geometry().bottom(),
                  self.toolbar.geometry().bottom() if self.toolbar.isVisible() else 0) + 1
        bottom = self.statusBar().geometry().top() if self.statusBar().isVisible() else self.height()
        return self.rect().adjusted(0, top, 0, bottom - self.height())

    def _welcome_train_sample(self) -> bool:
        return self.files.load_sample(DEFAULT_SAMPLE) and self.training.start()

    def _welcome_open_tokenizer(self) -> None:
        self.workspaces.choose("inspect")
        self.tokenizers.open_dialog()

    def _welcome_start_lesson(self) -> bool:
        from tokviz.core.lessons.files import builtin_lessons

        return self.lessons.start(builtin_lessons()[0].name)

    # -- menu commands ----------------------------------------------------------------------

    def _open_session(self, path) -> bool:
        return self.sessions.open(path)

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

    @Slot()
    def _on_training_panel_train_requested(self) -> None:
        self.training.start()

    @Slot()
    def _on_corpus_word_counts_changed(self) -> None:
        self.commands.word_counts.setChecked(self.corpus_panel.word_counts)

    @Slot()
    def _on_training_panel_validity_changed(self) -> None:
        self.commands.train.setEnabled(self.training_panel.is_valid)

    # -- appearance -------------------------------------------------------------------------

    @Slot()
    def _update_theme_actions(self, *_args) -> None:
        self.commands.themes[self.appearance.theme].setChecked(True)

    @Slot()
    def show_shortcuts(self) -> ShortcutsDialog:
        actions = self.commands.all() + list(self.workspaces.actions.values()) + self.docks.goto_actions()
        dialog = ShortcutsDialog(actions + self.docks.menu.actions(), self)
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
        tl = self.step_model.timeline
        if tl is not None and not tl.has_counts:  # a loaded tokenizer is what the window shows
            self.setWindowTitle(f"{tl.settings.name} ({tl.vocab_size:,} tokens) · corpus {c.title}[*]{suffix} — tokviz")
        else:
            self.setWindowTitle(f"{c.title}[*]{suffix} — tokviz")
        self.setWindowModified(c.is_modified)

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self._deferred:  # the window is on screen: now the rest
            self._deferred = False
            QTimer.singleShot(0, self._on_screen)

    def _on_screen(self) -> None:
        """What the first paint does without: the panels no first screen shows, the export formats."""
        self.docks.build_pending()
        QTimer.singleShot(0, self.exporter.preload)

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
        self.files.open_path(files[0])

    def shutdown(self) -> None:
        """Stop every background thread and wait for it (idempotent)."""
        self.training_engine.shutdown()
        self.files.shutdown()
        self.tokenizers.shutdown()
        self.exporter.shutdown()
        self.animation.shutdown()
        self.sessions.shutdown()
        self.docks.shutdown()
        self.workspaces.shutdown()

    def dispose(self) -> None:
        """Stop the threads and delete the window now (scripted runs: animate, screenshot). Left to the
        interpreter's exit, its pyqtgraph items would lay themselves out while Python is finalizing
        and crash the process after its work is done."""
        self.shutdown()
        self.hide()
        self.deleteLater()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)

    def closeEvent(self, event) -> None:
        if not self.files.maybe_save():
            event.ignore()
            return
        self.presenter.leave()  # save the normal layout, not the presenter's
        self.workspaces.lend(None)  # nor a lesson's workspace: the user's
        self.shutdown()
        self.sessions.mark_clean_exit()
        try:
            self.settings_store.save_train_settings(self.training_panel.settings())
        except TokvizError:
            pass
        self.settings_store.save_window_layout(self.saveGeometry(), self.saveState(LAYOUT_VERSION))
        self.workspaces.save()
        self.settings_store.sync()
        event.accept()
