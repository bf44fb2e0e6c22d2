"""`TokenTextEdit`: the token view's text box, where pasting a megabyte never freezes the window.

Qt inserts pasted text in one go: a 1 MB paste builds tens of thousands of text blocks on the GUI
thread (half a second on a busy laptop). A large paste is inserted here `CHUNK_CHARS` at a time, one
piece per turn of the event loop, every piece joined to the first one's undo step, so Ctrl+Z still
removes the whole paste. `paste_finished` says when the last piece is in.

`text()` is the plain text, kept between edits (every step change of the timeline asks for it).

What this leaves out: encoding the text (the panel's engine, debounced on `textChanged`).
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QTimer, Signal
from PySide6.QtWidgets import QPlainTextEdit

from tokviz.panels.widgets import PlainTextCache

CHUNK_CHARS = 32_768
LARGE_PASTE = 4 * CHUNK_CHARS


class TokenTextEdit(QPlainTextEdit):
    paste_finished = Signal()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pending: list[str] = []
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._text = PlainTextCache(self)

    def text(self) -> str:
        """The plain text, read from the document once after each change."""
        return self._text.text()

    @property
    def is_pasting(self) -> bool:
        return bool(self._pending)

    def insertFromMimeData(self, source: QMimeData) -> None:
        text = source.text() if source.hasText() else ""
        if len(text) < LARGE_PASTE or self.isReadOnly():
            super().insertFromMimeData(source)
            self.paste_finished.emit()
            return
        self._finish_pending()  # a paste still going in goes in first, in order
        cursor = self.textCursor()
        cursor.beginEditBlock()
        cursor.insertText(text[:CHUNK_CHARS])
        cursor.endEditBlock()
        self.setTextCursor(cursor)
        self._pending = [text[i:i + CHUNK_CHARS] for i in range(CHUNK_CHARS, len(text), CHUNK_CHARS)]
        self._pending.reverse()  # popped from the end
        self._timer.start()

    def _on_timer_timeout(self) -> None:
        if not self._pending:
            return
        cursor = self.textCursor()
        cursor.joinPreviousEditBlock()  # one undo step for the whole paste
        cursor.insertText(self._pending.pop())
        cursor.endEditBlock()
        self.setTextCursor(cursor)
        if self._pending:
            self._timer.start()
        else:
            self.paste_finished.emit()

    def _finish_pending(self) -> None:
        while self._pending:
            self._on_timer_timeout()
