"""`EditorFeeder`: puts a big text into an editor one slice per event-loop turn, so the window
never freezes while a long document loads (one ``insertText`` of megabytes blocks for seconds).

While it feeds, the editor is read-only and keeps no undo history; ``progressed(fraction)`` says
how far it is, ``finished()`` comes once the last slice is in, and `stop` ends it early (a new
document). What this leaves out: which texts are fed (the corpus panel decides, by size).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit


class EditorFeeder(QObject):
    """Feeds `editor` `slice_chars` characters per event-loop turn."""

    progressed = Signal(float)  # the fraction of the text in the editor
    finished = Signal()  # the whole text is in; the editor is editable again

    def __init__(self, editor: QPlainTextEdit, *, slice_chars: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.slice_chars = slice_chars
        self._text: str | None = None
        self._pos = 0  # the next offset to insert
        self._timer = QTimer(self, interval=0)
        self._timer.timeout.connect(self._on_timer_timeout)

    @property
    def text(self) -> str | None:
        """The whole text being fed, or None when nothing is."""
        return self._text

    def start(self, text: str) -> None:
        """Empty the editor and feed it `text` from the next event-loop turn on."""
        self._text, self._pos = text, 0  # first: the editor's change signals see a feed under way
        self.editor.setUndoRedoEnabled(False)
        self.editor.clear()
        self.editor.setReadOnly(True)
        self._timer.start()

    def stop(self) -> bool:
        """End a feed under way (the editor keeps what is in); False when there was none."""
        if self._text is None:
            return False
        self._timer.stop()
        self._text = None
        self.editor.setReadOnly(False)
        self.editor.setUndoRedoEnabled(True)
        return True

    @Slot()
    def _on_timer_timeout(self) -> None:
        text = self._text
        if text is None:
            return
        cursor = QTextCursor(self.editor.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text[self._pos : self._pos + self.slice_chars])
        self._pos += self.slice_chars
        if self._pos < len(text):
            self.progressed.emit(self._pos / len(text))
            return
        self.stop()
        self.finished.emit()
