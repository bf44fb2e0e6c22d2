"""Entry points: `run_gui`, `run_screenshots`, and the CLI dispatch to them."""

from __future__ import annotations

import signal

import pytest
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


def test_screenshot_sizes_are_checked(tmp_path, capsys):
    assert cli_main(["screenshot", "--out", str(tmp_path), "--size", "1280by800"]) == 2
    err = capsys.readouterr().err
    assert "write WIDTHxHEIGHT" in err and len(err.strip().splitlines()) == 1
    assert cli_main(["screenshot", "--out", str(tmp_path), "--size", "10x10"]) == 2
    assert not list(tmp_path.glob("*.png"))


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_screenshots_of_window_and_panels(tmp_path, capsys):
    assert gui.run_screenshots(tmp_path, theme="dark") == 0
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    # every docked panel gets a file (other panels add theirs)
    assert {"corpus-dark.png", "training-dark.png", "vocabulary-dark.png", "window-dark.png",
            "timeline-dark.png"} <= set(names)
    window = QImage(str(tmp_path / "window-dark.png"))
    assert (window.width(), window.height()) == (1280, 800)
    for key in ("learn", "inspect", "compare", "chat", "present"):  # every workspace at both sizes
        for w, h in ((1280, 800), (1920, 1080)):
            shot = QImage(str(tmp_path / f"workspace-{key}-{w}x{h}-dark.png"))
            assert (shot.width(), shot.height()) == (w, h), key
    assert window.pixelColor(640, 400).lightness() < 128  # dark theme
    printed = capsys.readouterr().out.split()
    assert printed[0].endswith("window-dark.png")
    QApplication.instance().setPalette(QApplication.style().standardPalette())
