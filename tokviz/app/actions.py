"""The window's actions, menus (File, Edit, View, Train, Help) and toolbar.

`WindowActions(host, targets)` creates every `QAction` with its text, shortcut, icon and status tip
and connects it to what it runs (`ActionTargets`: the window's controllers, and the few commands
that are the window's own, `WindowCommands`); `build_menus` and `build_toolbar` lay them out. The
controllers keep the logic; this module only describes the commands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QStyle, QToolBar, QToolButton, QWidget

from tokviz.engine.samples import SAMPLES
from tokviz.engine.settings import AppSettings

from .classroom.animation import AnimationExporter
from .classroom.animation_dialog import run_export_dialog
from .classroom.lesson_runner import LessonRunner
from .classroom.presenter import Presenter
from .export_ops import ExportController
from .file_ops import FileController
from .session_ops import SessionController
from .theme import Appearance
from .tokenizer_ops import TokenizerController
from .training_ops import TrainingController
from .workspaces.ops import WorkspaceController
from .workspaces.welcome import WelcomeController

Key = QKeySequence.StandardKey


def _on_triggered(action: QAction, slot) -> None:
    """Call `slot()` when `action` fires (without the ``checked`` argument Qt passes)."""
    action.triggered.connect(lambda _checked=False: slot())


def _key_sequences(keys) -> list[QKeySequence]:
    """Shortcuts from standard keys (all their platform bindings) and strings, without repeats."""
    out: list[QKeySequence] = []
    for k in keys:
        for seq in QKeySequence.keyBindings(k) if isinstance(k, Key) else [QKeySequence(k)]:
            if not seq.isEmpty() and seq not in out:
                out.append(seq)
    return out


def _shortcut_names(keys) -> list[str]:
    """What the shortcut list shows: the main binding of a standard key, and explicit keys."""
    names: list[str] = []
    for k in keys:
        seqs = QKeySequence.keyBindings(k)[:1] if isinstance(k, Key) else [QKeySequence(k)]
        for seq in seqs:
            name = seq.toString(QKeySequence.SequenceFormat.NativeText)
            if name and name not in names:
                names.append(name)
    return names


@dataclass(frozen=True)
class WindowCommands:
    """The commands that are about the window itself."""

    edit: Callable[[str], None]  # Edit > Undo/Copy/...: call the method on the focused widget
    reset_layout: Callable[[], None]
    show_shortcuts: Callable[[], object]
    show_about: Callable[[], object]


@dataclass(frozen=True)
class ActionTargets:
    """What the window's actions and menus run."""

    files: FileController
    tokenizers: TokenizerController
    exporter: ExportController
    sessions: SessionController
    animation: AnimationExporter
    training: TrainingController
    appearance: Appearance
    presenter: Presenter
    workspaces: WorkspaceController
    welcome: WelcomeController
    lessons: LessonRunner
    settings: AppSettings
    window: WindowCommands


class WindowActions:
    """Every action of the main window, as attributes. The actions belong to `host` (the window:
    their shortcuts work there, even with the menu bar hidden) and run `targets`."""

    def __init__(self, host: QWidget, targets: ActionTargets) -> None:
        self.targets = targets
        style = host.style()

        def act(text, slot=None, keys=(), tip="", icon=None, name="", checkable=False) -> QAction:
            a = QAction(text, host)
            a.setObjectName(f"action_{name}")
            if keys:
                a.setShortcuts(_key_sequences(keys))
                a.setProperty("shortcut_text", ", ".join(_shortcut_names(keys)))
            if tip:
                a.setStatusTip(tip)
                a.setToolTip(tip)
            if icon is not None:
                a.setIcon(style.standardIcon(icon))
            a.setCheckable(checkable)
            if slot is not None:
                _on_triggered(a, slot)
            host.addAction(a)  # shortcuts work even with the menu bar hidden
            return a

        t, w = targets, targets.window
        P = QStyle.StandardPixmap
        # File
        self.new = act("&New Corpus", t.files.new_corpus, [Key.New], "Start an empty corpus", P.SP_FileIcon, "new")
        self.open = act("&Open…", t.files.open_dialog, [Key.Open], "Open a corpus or a saved model",
                        P.SP_DialogOpenButton, "open")
        self.save = act("&Save", t.files.save, [Key.Save], "Save the corpus", P.SP_DialogSaveButton, "save")
        self.save_as = act("Save &As…", t.files.save_as, [Key.SaveAs, "Ctrl+Shift+S"],
                           "Save the corpus under a new name", None, "save_as")
        self.open_model = act("Open &Model…", partial(t.files.open_dialog, models_only=True), ["Ctrl+Shift+O"],
                              "Open a trained model (.json)", None, "open_model")
        self.save_model = act("Save Mo&del As…", t.files.save_model_dialog, ["Ctrl+Alt+S"],
                              "Save the trained model as JSON", None, "save_model")
        # pretrained tokenizers
        self.open_tokenizer = act("Open &Tokenizer…", t.tokenizers.open_dialog, ["Ctrl+Alt+O"],
                                  "Open a real tokenizer: .tiktoken, tokenizer.json, SentencePiece .model, GPT-2 "
                                  "files, minbpe .model", None, "open_tokenizer")
        self.open_tokenizer_by_name = act(
            "Open Tokenizer by &Name…", t.tokenizers.open_name_dialog, [],
            "Open hf:ORG/NAME from the Hugging Face cache (never downloaded), or a tiktoken name",
            None, "open_tokenizer_by_name")
        self.open_tokenizer_folder = act(
            "Open Tokenizer &Folder…", t.tokenizers.open_folder_dialog, [],
            "Open a folder holding a tokenizer (tokenizer.json, encoder.json + vocab.bpe, a .tiktoken file)",
            None, "open_tokenizer_folder")
        self.export_hf = act("&Hugging Face tokenizer.json…", partial(t.exporter.export_dialog, "hf"), [],
                             "Write the current BPE model as a tokenizer.json (loads in Hugging Face tokenizers)",
                             None, "export_hf")
        self.export_tiktoken = act("&tiktoken (.tiktoken + pattern)…", partial(t.exporter.export_dialog, "tiktoken"),
                                   [], "Write the current BPE model as NAME.tiktoken plus NAME.tiktoken.json "
                                   "(split pattern, special tokens) for tiktoken.Encoding", None, "export_tiktoken")
        self.export_at_step = act("At the Current Step Only", None, [], "Export only the merges up to the "
                                  "timeline's current step k (unchecked: all merges)", None, "export_at_step", True)
        # classroom: sessions and animation export
        self.open_session = act("Open Sess&ion…", t.sessions.open_dialog, [], "Open a saved session (.tokviz)",
                                None, "open_session")
        self.save_session = act("Save Sessio&n", t.sessions.save, [], "Save everything on screen as a .tokviz file",
                                None, "save_session")
        self.save_session_as = act("Save Session As…", t.sessions.save_as, [], "Save the session under a new name",
                                   None, "save_session_as")
        self.export_animation = act("Export &Animation…", partial(run_export_dialog, t.animation, host), [],
                                    "Export the timeline replay as an animated GIF or PNG frames", None,
                                    "export_animation")
        self.quit = act("&Quit", host.close, [Key.Quit, "Ctrl+Q"], "Quit tokviz", None, "quit")
        # Edit
        self.undo = act("&Undo", partial(w.edit, "undo"), [Key.Undo], "Undo the last edit", None, "undo")
        self.redo = act("&Redo", partial(w.edit, "redo"), [Key.Redo], "Redo", None, "redo")
        self.cut = act("Cu&t", partial(w.edit, "cut"), [Key.Cut], "Cut", None, "cut")
        self.copy = act("&Copy", partial(w.edit, "copy"), [Key.Copy], "Copy", None, "copy")
        self.paste = act("&Paste", partial(w.edit, "paste"), [Key.Paste], "Paste", None, "paste")
        self.select_all = act("Select &All", partial(w.edit, "selectAll"), [Key.SelectAll],
                              "Select all", None, "select_all")
        self.word_counts = act("&Word-Frequency Table", None, ["Ctrl+Shift+W"],
                               "Treat the corpus as lines of 'word count'", None, "word_counts", True)
        # View
        self.zoom_in = act("Zoom &In", t.appearance.zoom_in, ["Ctrl+=", "Ctrl++"],
                           "Larger text everywhere", None, "zoom_in")
        self.zoom_out = act("Zoom &Out", t.appearance.zoom_out, ["Ctrl+-"], "Smaller text everywhere", None,
                            "zoom_out")
        self.zoom_reset = act("&Actual Size", t.appearance.reset_zoom, ["Ctrl+0"], "Normal text size", None,
                              "zoom_reset")
        self.reset_layout = act("&Reset Workspace Layout", w.reset_layout, [],
                                "Put every panel of this workspace back in its place", None, "reset_layout")
        self.presenter = act("&Presenter Mode", t.presenter.toggle, ["F5"],
                             "Full screen, big fonts, high contrast, captions; Esc leaves", None, "presenter", True)
        self.presenter_leave = act("Leave Presenter Mode", t.presenter.leave, [], "Back to the normal window",
                                   None, "presenter_leave")
        self.presenter_leave.setShortcut("Esc")  # enabled only while presenting; Esc cancels training otherwise
        self.presenter_leave.setEnabled(False)
        self.theme_group = QActionGroup(host)
        self.themes: dict[str, QAction] = {}
        for key, label in (("system", "Follow &System"), ("light", "&Light"), ("dark", "&Dark")):
            a = act(label, partial(t.appearance.set_theme, key), [], f"{label.replace('&', '')} theme", None,
                    f"theme_{key}", True)
            self.theme_group.addAction(a)
            self.themes[key] = a
        # Train
        self.train = act("&Train", t.training.start, ["Ctrl+Return"], "Train on the corpus",
                         P.SP_MediaPlay, "train")
        self.cancel = act("&Cancel Training", t.training.engine.cancel, ["Esc"], "Stop the training run",
                          P.SP_MediaStop, "cancel")
        self.cancel.setIconText("Cancel")
        self.cancel.setEnabled(False)
        # Help
        self.shortcuts = act("&Keyboard Shortcuts", w.show_shortcuts, ["F1"],
                             "List every keyboard shortcut", None, "shortcuts")
        self.about = act("&About tokviz", w.show_about, [], "Versions and licence", None, "about")
        self.welcome = act("&Welcome Screen", t.welcome.show, [], "The first-run screen: train on a sample, "
                           "open a real tokenizer or start a lesson", None, "welcome")

    def all(self) -> list[QAction]:
        return [a for a in vars(self).values() if isinstance(a, QAction)] + list(self.themes.values())


def build_menus(bar: QMenuBar, actions: WindowActions, panels_menu: QMenu, toolbar: QToolBar) -> dict[str, QMenu]:
    """File, Edit, View, Train and Help menus in `bar`; returns them by name."""
    a, t = actions, actions.targets
    file = bar.addMenu("&File")
    file.addActions([a.new, a.open])
    recent = file.addMenu("Open &Recent")
    recent.setObjectName("recent_menu")
    recent.aboutToShow.connect(partial(fill_recent_menu, t.settings, t.files.open_path, recent))
    samples = file.addMenu("Open &Sample")
    samples.setObjectName("samples_menu")
    fill_samples_menu(t.files.load_sample, samples)
    file.addSeparator()
    file.addActions([a.save, a.save_as])
    file.addSeparator()
    file.addActions([a.open_model, a.save_model])
    file.addSeparator()
    file.addActions([a.open_session, a.save_session, a.save_session_as, a.export_animation])
    file.addSeparator()
    file.addAction(a.open_tokenizer)  # pretrained tokenizers
    file.addAction(a.open_tokenizer_by_name)
    file.addAction(a.open_tokenizer_folder)
    known = file.addMenu("&Known Tokenizers")
    known.setObjectName("known_tokenizers_menu")
    t.tokenizers.attach_known_menu(known)
    export = file.addMenu("&Export Tokenizer")  # tokenizer.json and .tiktoken
    export.setObjectName("export_tokenizer_menu")
    t.exporter.install(export, a)
    file.addSeparator()
    file.addAction(a.quit)

    edit = bar.addMenu("&Edit")
    edit.addActions([a.undo, a.redo])
    edit.addSeparator()
    edit.addActions([a.cut, a.copy, a.paste, a.select_all])
    edit.addSeparator()
    edit.addAction(a.word_counts)

    view = bar.addMenu("&View")
    view.addMenu(t.workspaces.menu(view, a.reset_layout))
    view.addMenu(panels_menu)
    theme = view.addMenu("&Theme")
    theme.addActions(list(a.themes.values()))
    view.addSeparator()
    view.addActions([a.zoom_in, a.zoom_out, a.zoom_reset])
    view.addSeparator()
    view.addAction(toolbar.toggleViewAction())
    view.addSeparator()
    view.addAction(a.presenter)  # classroom

    train = bar.addMenu("&Train")
    train.addActions([a.train, a.cancel])

    help_ = bar.addMenu("&Help")
    lessons = help_.addMenu("&Lessons")  # guided lessons
    lessons.setObjectName("lessons_menu")
    fill_lessons_menu(t.lessons.start, lessons)
    help_.addSeparator()
    help_.addActions([a.welcome, a.shortcuts, a.about])
    return {"file": file, "edit": edit, "view": view, "train": train, "help": help_,
            "recent": recent, "samples": samples, "known": known, "lessons": lessons,
            "export": export}


def fill_lessons_menu(start_lesson: Callable[[str], bool], menu: QMenu) -> None:
    """Help > Lessons: one entry per built-in lesson, in course order (`start_lesson(name)`)."""
    from tokviz.core.lessons.files import lesson_headings

    for lesson in lesson_headings():
        action = menu.addAction(f"&{lesson.label}" if lesson.number < 10 else lesson.label)
        action.setObjectName(f"action_lesson_{lesson.name}")
        action.setStatusTip(lesson.summary)
        action.setToolTip(lesson.summary)
        _on_triggered(action, partial(start_lesson, lesson.name))


def fill_samples_menu(load_sample: Callable[[str], bool], menu: QMenu) -> None:
    for s in SAMPLES:
        action = menu.addAction(s.title)
        action.setObjectName(f"action_sample_{s.key}")
        action.setStatusTip(s.description)
        action.setToolTip(s.description)
        _on_triggered(action, partial(load_sample, s.key))


def fill_recent_menu(settings: AppSettings, open_path: Callable[[str], bool], menu: QMenu) -> None:
    menu.clear()
    paths = settings.recent_files()
    for i, path in enumerate(paths):
        label = f"&{i + 1} {Path(path).name}" if i < 9 else Path(path).name
        action = menu.addAction(label)
        action.setStatusTip(path)
        action.setToolTip(path)
        _on_triggered(action, partial(open_path, path))
    if not paths:
        menu.addAction("No recent files").setEnabled(False)
    menu.addSeparator()
    clear = menu.addAction("&Clear Recent Files")
    clear.setEnabled(bool(paths))
    _on_triggered(clear, settings.clear_recent_files)


def build_toolbar(parent: QWidget, actions: WindowActions) -> QToolBar:
    """Open, Save, Samples (its menu is set once the menus exist), Train, Cancel: the toolbar for
    `parent` to add."""
    bar = QToolBar("Toolbar", parent)
    bar.setObjectName("main_toolbar")
    bar.setMovable(False)
    bar.setToolButtonStyle(bar.toolButtonStyle().ToolButtonTextBesideIcon)
    bar.addActions([actions.open, actions.save])
    samples = QToolButton(bar)
    samples.setObjectName("samples_button")
    samples.setText("Samples")
    samples.setIcon(parent.style().standardIcon(QStyle.StandardPixmap.SP_FileDialogContentsView))
    samples.setToolButtonStyle(bar.toolButtonStyle())
    samples.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    samples.setToolTip("Open a built-in sample corpus")
    bar.addWidget(samples)
    bar.addSeparator()
    bar.addActions([actions.train, actions.cancel])
    return bar
