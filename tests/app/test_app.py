"""Entry points: `run_gui`, `run_screenshots`, and the CLI dispatch to them."""

from __future__ import annotations

import signal

from PySide6.QtCore import QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from tokviz.app import gui
from tokviz.app.cli.main import main as cli_main
from tokviz.app.main_window import MainWindow


def _main_windows() -> list[MainWindow]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]


def test_run_gui_opens_a_file_and_exits_cleanly(tmp_path, qtbot):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello from a file\n", encoding="utf-8")
    seen = {}
    handler = signal.getsignal(signal.SIGINT)

    def check_and_close():
        windows = _main_windows()
        if not windows or windows[0].corpus_panel.text() != "hello from a file\n":
            QTimer.singleShot(20, check_and_close)
            return
        w = windows[0]
        seen["title"] = w.windowTitle()
        w.close()  # the last window: run_gui's event loop ends

    QTimer.singleShot(0, check_and_close)
    assert gui.run_gui(str(corpus)) == 0
    assert seen["title"] == "c.txt[*] — tokviz"
    assert signal.getsignal(signal.SIGINT) is handler
    for w in QApplication.topLevelWidgets():
        if isinstance(w, MainWindow):
            w.deleteLater()


def test_missing_file_is_a_message_not_a_crash(tmp_path, capsys):
    assert gui.run_gui(str(tmp_path / "nope.txt")) == 2
    assert "nope.txt: no such file" in capsys.readouterr().err
    assert cli_main(["gui", str(tmp_path / "nope.txt")]) == 2


def test_screenshots_of_window_and_panels(tmp_path, capsys):
    assert gui.run_screenshots(tmp_path, theme="dark") == 0
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    # every docked panel gets a file (other panels add theirs)
    assert {"corpus-dark.png", "training-dark.png", "vocabulary-dark.png", "window-dark.png",
            "timeline-dark.png"} <= set(names)
    window = QImage(str(tmp_path / "window-dark.png"))
    assert (window.width(), window.height()) == (1280, 800)
    assert window.pixelColor(640, 400).lightness() < 128  # dark theme
    printed = capsys.readouterr().out.split()
    assert printed[0].endswith("window-dark.png")
    QApplication.instance().setPalette(QApplication.style().standardPalette())
