"""Every question and message the window puts to the user, behind one object.

`Dialogs` is the only place that opens file choosers and message boxes, so tests and scripts swap
in an object with the same methods (see ``tests/gui/conftest.py``) and never block on a modal
dialog. Error and information boxes are window-modal but non-blocking (``open()``). Also here:
the About box and the keyboard-shortcut list (F1).
"""

from __future__ import annotations

import platform
import sys

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHeaderView,
    QInputDialog,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

import tokviz
from tokviz.core import jit

CORPUS_FILTER = "Text files (*.txt *.text *.md *.csv *.tsv);;All files (*)"
MODEL_FILTER = "tokviz models (*.json);;All files (*)"
OPEN_FILTER = "Corpora, models and sessions (*.txt *.text *.md *.csv *.tsv *.json *.tokviz);;All files (*)"


class Dialogs:
    """Interactive dialogs parented to `parent`. Replace in tests with a scripted fake."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent
        self._boxes: list[QMessageBox] = []  # keep non-blocking boxes alive

    def open_path(self, title: str, folder: str, filters: str = OPEN_FILTER) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self.parent, title, folder, filters)
        return path or None

    def open_folder(self, title: str, folder: str) -> str | None:
        path = QFileDialog.getExistingDirectory(self.parent, title, folder)
        return path or None

    def save_path(self, title: str, suggested: str, filters: str = CORPUS_FILTER) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self.parent, title, suggested, filters)
        return path or None

    def ask_save_changes(self, name: str) -> str:
        """``"save"``, ``"discard"`` or ``"cancel"``."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Unsaved changes",
            f"The corpus “{name}” has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self.parent,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answer = box.exec()
        return {
            QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard",
        }.get(QMessageBox.StandardButton(answer), "cancel")

    def ask_open_replacing(self, message: str) -> bool:
        """The file is not valid UTF-8: open it anyway with bad bytes replaced?"""
        box = QMessageBox(QMessageBox.Icon.Warning, "Not UTF-8 text", message,
                          QMessageBox.StandardButton.Cancel, self.parent)
        replace = box.addButton("Open with Replacements", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is replace

    def ask_text(self, title: str, label: str, default: str = "") -> str | None:
        """One line of text (e.g. a split pattern); None when cancelled."""
        text, ok = QInputDialog.getText(self.parent, title, label, text=default)
        return text if ok and text else None

    def ask_yes_no(self, title: str, message: str) -> bool:
        """A yes/no question (e.g. restore the autosaved session after a crash); Yes is default."""
        answer = QMessageBox.question(self.parent, title, message,
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.Yes)
        return answer == QMessageBox.StandardButton.Yes

    def ask_overwrite(self, paths: list) -> bool:
        """Replace files the file dialog did not ask about (a tiktoken sidecar, a name with the
        suffix added, PNG frames already in a folder)? No is the default."""
        names = "\n".join(str(p) for p in paths[:5]) + (f"\n… and {len(paths) - 5} more" if len(paths) > 5 else "")
        answer = QMessageBox.question(
            self.parent, "Replace existing files?",
            f"{'This file exists' if len(paths) == 1 else 'These files exist'} and would be replaced:\n\n{names}",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _show(self, icon: QMessageBox.Icon, title: str, message: str) -> QMessageBox:
        box = QMessageBox(icon, title, message, QMessageBox.StandardButton.Ok, self.parent)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._boxes.append(box)
        box.finished.connect(lambda _r, b=box: self._boxes.remove(b) if b in self._boxes else None)
        box.open()
        return box

    def error(self, title: str, message: str) -> None:
        self._show(QMessageBox.Icon.Critical, title, message)

    def info(self, title: str, message: str) -> None:
        self._show(QMessageBox.Icon.Information, title, message)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version  # 25 ms: only for the About box

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def about_text() -> str:
    """HTML of the About box: what tokviz is and the versions it runs with."""
    return (
        f"<h3>tokviz {tokviz.__version__}</h3>"
        "<p>See how tokenizers work: train BPE on a corpus and watch it learn, replay merges, "
        "and inspect every token.</p>"
        "<table>"
        f"<tr><td>Python</td><td>{platform.python_version()} ({sys.platform})</td></tr>"
        f"<tr><td>Qt</td><td>{qVersion()}</td></tr>"
        f"<tr><td>PySide6</td><td>{pyside_version}</td></tr>"
        f"<tr><td>pyqtgraph</td><td>{_version('pyqtgraph')}</td></tr>"
        f"<tr><td>NumPy</td><td>{_version('numpy')}</td></tr>"
        f"<tr><td>regex</td><td>{_version('regex')}</td></tr>"
        f"<tr><td>numba</td><td>{jit.status()}</td></tr>"
        "</table><p>MIT licence.</p>"
    )


def show_about(parent: QWidget) -> QMessageBox:
    box = QMessageBox(parent)
    box.setWindowTitle("About tokviz")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(about_text())
    box.setObjectName("about_box")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


class ShortcutsDialog(QDialog):
    """A table of every action that has a keyboard shortcut."""

    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcuts_dialog")
        self.setWindowTitle("Keyboard Shortcuts")
        rows = []
        for action in actions:
            keys = action.property("shortcut_text") or ", ".join(
                k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()
            )
            if keys:
                rows.append((action.text().replace("&", "").rstrip("…."), keys))
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setHorizontalHeaderLabels(["Action", "Shortcut"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (name, keys) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(name))
            self.table.setItem(r, 1, QTableWidgetItem(keys))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(460, 520)

    @property
    def rows(self) -> list[tuple[str, str]]:
        return [(self.table.item(r, 0).text(), self.table.item(r, 1).text()) for r in range(self.table.rowCount())]
