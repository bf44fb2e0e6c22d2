"""`CodeEditor`: a plain-text editor with a line-number gutter and a current-line highlight.

Undo/redo come from `QPlainTextEdit`. Dropping files on it emits `files_dropped` instead of
inserting their paths as text (the window opens them). Colours follow the palette.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from tokviz.panels.base import is_dark
from tokviz.panels.widgets import PlainTextCache


class _LineNumberArea(QWidget):
    def __init__(self, editor: "CodeEditor") -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self.editor.line_number_width(), 0)

    def paintEvent(self, event) -> None:
        self.editor.paint_line_numbers(event)


class CodeEditor(QPlainTextEdit):
    """Plain-text editor with line numbers."""

    files_dropped = Signal(list)  # [local path, ...]

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("corpus_editor")
        self._gutter = _LineNumberArea(self)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self.cursorPositionChanged.connect(self._highlight_current_line)
        self._update_gutter_width()
        self._highlight_current_line()
        self._text = PlainTextCache(self)

    def text(self) -> str:
        """The plain text, read from the document once after each change."""
        return self._text.text()

    # -- gutter -----------------------------------------------------------------------------

    def line_number_width(self) -> int:
        digits = max(3, len(str(max(1, self.blockCount()))))
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_gutter_width(self, *_args) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_gutter_width()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._gutter.setGeometry(QRect(cr.left(), cr.top(), self.line_number_width(), cr.height()))

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        self._update_gutter_width()
        self._highlight_current_line()

    def paint_line_numbers(self, event) -> None:
        painter = QPainter(self._gutter)
        pal = self.palette()
        painter.fillRect(event.rect(), pal.color(QPalette.ColorRole.AlternateBase))
        painter.setFont(self.font())
        normal = pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        current = pal.color(QPalette.ColorRole.Text)
        cursor_block = self.textCursor().blockNumber()
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        width = self._gutter.width() - 6
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                painter.setPen(current if number == cursor_block else normal)
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number + 1))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()

    def _highlight_current_line(self) -> None:
        if self.isReadOnly():
            self.setExtraSelections([])
            return
        sel = QTextEdit.ExtraSelection()
        base = self.palette().color(QPalette.ColorRole.Base)
        sel.format.setBackground(base.lighter(135) if is_dark(self.palette()) else QColor(base).darker(104))
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.cursor = self.textCursor()
        sel.cursor.clearSelection()
        self.setExtraSelections([sel])
        self._gutter.update()

    # -- dropping files ---------------------------------------------------------------------

    def _local_files(self, mime) -> list[str]:
        if not mime.hasUrls():
            return []
        return [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]

    def canInsertFromMimeData(self, source) -> bool:
        if self._local_files(source):
            return True
        return super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source) -> None:
        files = self._local_files(source)
        if files:
            self.files_dropped.emit(files)
            return
        super().insertFromMimeData(source)
