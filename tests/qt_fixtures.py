"""Qt test fixtures (a pytest plugin the root conftest loads): settings isolated in tmp_path,
scripted dialogs, a ready main window. Tests under ``tests/core`` never start Qt."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from tokviz.engine.settings import SETTINGS_FILE_ENV, AppSettings

# The offscreen platform plugin warns whenever a top-level window's size limits change; that is
# the test platform talking, not the application.
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints()"


CORE_TESTS = Path(__file__).parent / "core"


def _is_core_test(path: Path) -> bool:
    return CORE_TESTS in Path(path).parents


def pytest_collection_modifyitems(config, items):
    for item in items:
        if not _is_core_test(item.path):
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def isolated_settings(request, tmp_path_factory, monkeypatch):
    """Point every QSettings (and TOKVIZ_SETTINGS_FILE) into a temporary folder (Qt tests only)."""
    if _is_core_test(request.node.path):
        yield None
        return
    qapp = request.getfixturevalue("qapp")
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(folder))
    monkeypatch.setenv(SETTINGS_FILE_ENV, str(folder / "tokviz.ini"))
    qapp.setOrganizationName("tokviz-tests")
    qapp.setApplicationName("tokviz-tests")
    yield folder


class FakeDialogs:
    """Stands in for `tokviz.app.dialogs.Dialogs`: scripted answers, recorded messages."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, str]] = []
        self.infos: list[tuple[str, str]] = []
        self.asked_save: list[str] = []
        self.asked_replace: list[str] = []
        self.save_answer = "discard"  # answer to "save changes?"
        self.replace_answer = False  # answer to "open with replacement characters?"
        self.open_answer: str | None = None  # path returned by the open dialog
        self.folder_answer: str | None = None  # folder returned by the folder dialog
        self.save_path_answer: str | None = None  # path returned by the save dialog
        self.yes_no_answer = False  # answer to ask_yes_no (restore the autosave?)
        self.asked_yes_no: list[tuple[str, str]] = []
        self.overwrite_answer = False  # answer to ask_overwrite (replace files the dialog did not confirm?)
        self.asked_overwrite: list[list[str]] = []
        self.text_answer: str | None = None  # answer to ask_text (None: cancelled)
        self.asked_text: list[tuple[str, str]] = []

    def open_path(self, title, folder, filters=""):
        return self.open_answer

    def open_folder(self, title, folder):
        return self.folder_answer

    def save_path(self, title, suggested, filters=""):
        return self.save_path_answer

    def ask_save_changes(self, name):
        self.asked_save.append(name)
        return self.save_answer

    def ask_open_replacing(self, message):
        self.asked_replace.append(message)
        return self.replace_answer

    def ask_text(self, title, label, default=""):
        self.asked_text.append((title, label))
        return self.text_answer

    def ask_yes_no(self, title, message):
        self.asked_yes_no.append((title, message))
        return self.yes_no_answer

    def ask_overwrite(self, paths):
        self.asked_overwrite.append([str(p) for p in paths])
        return self.overwrite_answer

    def error(self, title, message):
        self.errors.append((title, message))

    def info(self, title, message):
        self.infos.append((title, message))


def make_long_text(n_words: int = 60_000) -> str:
    """A corpus whose training takes seconds: many distinct made-up words (deterministic)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words, x = [], 12345
    for _ in range(n_words):
        x = (x * 1103515245 + 12345) % 2**31
        word = []
        for _ in range(4 + x % 9):
            x = (x * 1103515245 + 12345) % 2**31
            word.append(letters[(x >> 16) % 26])
        words.append("".join(word))
    return " ".join(words)


@pytest.fixture(scope="session")
def long_text() -> str:
    """~540 KB of made-up words: training it with min_count=1 runs for many seconds."""
    return make_long_text()


@pytest.fixture
def dialogs() -> FakeDialogs:
    return FakeDialogs()


@pytest.fixture
def settings_store(tmp_path) -> AppSettings:
    return AppSettings.in_folder(tmp_path / "settings")


@pytest.fixture
def make_window(qtbot, settings_store, dialogs):
    """Factory for main windows sharing one settings file and the fake dialogs."""
    from tokviz.app.main_window import MainWindow

    windows = []

    def make(**kwargs):
        kwargs.setdefault("dialogs", dialogs)
        w = MainWindow(kwargs.pop("settings", settings_store), **kwargs)
        qtbot.addWidget(w)
        w.show()
        qtbot.waitExposed(w)
        windows.append(w)
        return w

    yield make
    for w in windows:
        w.shutdown()


@pytest.fixture
def window(make_window):
    return make_window()


def drain_events() -> None:
    """Deliver every event already posted (signals queued from worker threads, layout requests,
    zero-delay timers), a few rounds since handling one can post another. It never waits on the
    clock: tests wait for what they expect with `qtbot.waitSignal` / `qtbot.waitUntil`."""
    from PySide6.QtCore import QCoreApplication

    for _ in range(3):
        QCoreApplication.sendPostedEvents()
        QCoreApplication.processEvents()


def append_steps(step_model, steps) -> None:
    """What a training engine does with a batch: extend the shown timeline's one list, then tell."""
    step_model.timeline.steps.extend(steps)
    step_model.steps_appended(len(steps))
