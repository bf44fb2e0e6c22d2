"""Entry points of the desktop application, called by ``tokviz.app.cli.main``.

``run_gui(file)`` opens the window (and a corpus or model file); ``run_screenshots(out_dir,
theme=...)`` renders the window offscreen to PNG files. Both return an exit status. The window's
modules are imported only here, inside the functions, so ``import tokviz.app.gui`` stays cheap
and the window appears quickly.

``TOKVIZ_REPORT_WELCOME_AFTER=SECONDS`` makes the window print the first-run screen's state (one
JSON line on stdout: showing, on top, paths reachable) that long after it was shown: how a check of a
real window (``.ci/window_check.py``) sees what a newcomer sees, without reading pixels.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from functools import partial
from importlib import import_module
from pathlib import Path

from tokviz import __version__

# the core modules whose imports bring in what the window's first screen uses from the core
# (`tests/app/test_gui_launch_imports.py` checks that few are left to import after Qt)
WINDOW_CORE = (
    "tokviz.core.registry", "tokviz.core.bpe.timeline", "tokviz.core.model_files", "tokviz.core.batch",
    "tokviz.core.display.diagnostics", "tokviz.core.explain.unigram", "tokviz.core.explain.vocab_view",
    "tokviz.core.explain.samples", "tokviz.core.decode_stream", "tokviz.core.lessons.files",
    "tokviz.core.lessons.view_text", "tokviz.core.saved.session", "tokviz.core.chat.messages",
    "tokviz.core.formats.tiktoken", "tokviz.core.formats.hf_cache", "tokviz.core.io.gif",
    "tokviz.core.special_tokens", "tokviz.core.baselines", "tokviz.core.display.alignment",
    "tokviz.core.processes.spawn", "tokviz.core.explain.numbers", "tokviz.core.lessons.method_figures",
    "tokviz.core.lessons.algorithm_figures", "tokviz.core.wordpiece.replay", "tokviz.core.unigram.lattice_layout",
    "tokviz.core.text.unicode_tables",
)


def create_application(argv: list[str] | None = None):
    """The `QApplication` (created once), with organization and application names set."""
    from PySide6.QtWidgets import QApplication

    from tokviz.engine.settings import APPLICATION, ORGANIZATION

    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("tokviz")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("tokviz")  # matches tokviz.desktop (tokviz --install-desktop-entry)
    from importlib import resources

    from PySide6.QtGui import QIcon

    app.setWindowIcon(QIcon(str(resources.files("tokviz.resources").joinpath("icons", "tokviz.svg"))))
    return app


def create_main_window(file: str | os.PathLike | None = None, *, settings=None, lesson: str | None = None):
    """Build and show the main window; open `file` (or start `lesson`) once the event loop runs."""
    from PySide6.QtCore import QTimer

    from .main_window import MainWindow

    start_blank = file is None and lesson is None
    window = MainWindow(settings, load_default_sample=start_blank, defer_panels=True, offer_welcome=start_blank)
    window.show_first()  # maximized the first time, else at its last geometry
    if file is not None:
        QTimer.singleShot(0, lambda: window.script.open_path(file))
    if lesson is not None:  # guided lessons
        QTimer.singleShot(0, lambda: window.script.start_lesson(lesson))
    report_after = _seconds(os.environ.get("TOKVIZ_REPORT_WELCOME_AFTER", ""))
    if report_after is not None:
        QTimer.singleShot(round(report_after * 1000), window, partial(_report_welcome, window))
    return window


def _seconds(text: str) -> float | None:
    """A non-negative number of seconds, or None (unset or not a number: no report)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value < 3600 else None


def _report_welcome(window) -> None:
    import json

    print("welcome " + json.dumps(window.welcome.state()), flush=True)


def run_gui(file: str | None = None, *, lesson: str | None = None) -> int:
    """Open the application window (on guided lesson `lesson`); returns the exit status."""
    if file is not None and not Path(file).exists():
        print(f"tokviz: {file}: no such file", file=sys.stderr)
        return 2
    # Start-up makes hundreds of thousands of objects (modules, classes, widgets) and next to no
    # garbage: the collector's passes over them (~25 ms) wait until the window is up, and then
    # skip them for good (`gc.freeze`: later passes, during the user's work, scan only newer objects)
    gc.disable()
    try:
        return _run_gui(file, lesson)
    finally:
        gc.enable()


def _run_gui(file: str | None, lesson: str | None) -> int:
    # the core the first screen needs (numpy, regex, BPE, the Unigram encoder, lessons, sessions:
    # about 190 modules) before Qt: once loaded, PySide6's import hook reads the source of each
    # module an import statement names, about a tenth of a millisecond each (~30 ms of the launch)
    for name in WINDOW_CORE:
        import_module(name)

    from .platform_check import launch_problem

    problem = launch_problem()  # before Qt aborts the process with a message about the wrong package
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    from PySide6.QtCore import QTimer

    from tokviz.engine.workers import resume_collector

    app = create_application()
    # Ctrl+C in the terminal closes the window (asking about unsaved changes) instead of hanging;
    # pressed while the window is still being built, it closes it as soon as it is up
    windows: list = []
    interrupted: list = []

    def on_sigint(*_args) -> None:
        if windows:
            windows[0].close()
        else:
            interrupted.append(True)

    previous = signal.signal(signal.SIGINT, on_sigint)
    previous_handler = keep_qt_messages_but_the_close_race(windows)
    tick = QTimer(interval=250)
    tick.timeout.connect(lambda: None)  # lets Python run its signal handlers
    try:
        windows.append(create_main_window(file, lesson=lesson))
        QTimer.singleShot(0, resume_collector)  # the window's first events come first
        if interrupted:
            QTimer.singleShot(0, windows[0].close)
        tick.start()
        return app.exec()
    finally:
        tick.stop()
        signal.signal(signal.SIGINT, previous)
        if windows:
            windows[0].shutdown()
        restore_message_handler(previous_handler)


TEARDOWN_FLUSH = "QBackingStore::flush() called for"


def keep_qt_messages_but_the_close_race(windows: list):
    """Keep Qt's messages on stderr, except one race at closing: since Qt 6 closing a window destroys
    its native window, and a repaint or expose event already queued for it then warns that it "does not
    have a handle" (about one close in eight under X11). Nothing is lost; the window is gone. Only that
    message, and only once the main window is hidden, is dropped. Returns the previous handler."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    def handler(mode, context, message: str) -> None:
        closed = bool(windows) and not windows[0].isVisible()
        if closed and message.startswith(TEARDOWN_FLUSH) and mode == QtMsgType.QtWarningMsg:
            return
        print(message, file=sys.stderr, flush=True)

    return qInstallMessageHandler(handler)


def restore_message_handler(previous) -> None:
    from PySide6.QtCore import qInstallMessageHandler

    qInstallMessageHandler(previous)


def run_screenshots(out_dir: Path, *, theme: str, sizes=None) -> int:
    """Render the window and each panel to ``out_dir`` as PNGs (offscreen)."""
    from tokviz.core import TokvizError

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    create_application()
    from PySide6.QtCore import qInstallMessageHandler

    from .screenshots.main import take_screenshots

    def quiet(mode, context, message: str) -> None:  # the offscreen plugin's harmless chatter
        if "does not support propagateSizeHints" not in message and "does not support raise()" not in message:
            print(message, file=sys.stderr)

    previous = qInstallMessageHandler(quiet)

    try:
        paths = take_screenshots(Path(out_dir), theme=theme, sizes=sizes)
    except (OSError, TokvizError, RuntimeError) as exc:
        print(f"tokviz: screenshots failed: {exc}", file=sys.stderr)
        return 2
    finally:
        qInstallMessageHandler(previous)
    for p in paths:
        print(p)
    return 0

