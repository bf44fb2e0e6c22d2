"""`LargeTextView`: a read-only, virtual view of a very large text (tens of megabytes).

Only the visible lines are laid out and painted, from a `LargeText`'s line index, so opening and
scrolling a 30 MB corpus is instant. It has line numbers like the editor, keyboard scrolling and
copying of the visible lines. Very long lines are cut at `MAX_DRAWN_CHARS` when drawn.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from tokviz.engine.large_text import LargeText

MAX_DRAWN_CHARS = 4000
TAB = "    "


class LargeTextView(QAbstractScrollArea):
    """Shows a `LargeText` line by line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("large_text_view")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._text = LargeText([])
        self._longest = 0

    def set_text(self, text: LargeText) -> None:
        self._text = text
        # the longest line decides the horizontal range (sampled: cheap and good enough)
        self._longest = text.longest_line_sampled
        self.verticalScrollBar().setValue(0)
        self.horizontalScrollBar().setValue(0)
        self._update_scrollbars()
        self.viewport().update()

    def clear(self) -> None:
        self.set_text(LargeText([]))

    @property
    def large_text(self) -> LargeText:
        return self._text

    @property
    def line_count(self) -> int:
        return self._text.n_lines

    def line(self, i: int) -> str:
        """Line `i` (0-based) without its newline."""
        return self._text.line(i)

    def first_visible_line(self) -> int:
        return self.verticalScrollBar().value()

    def scroll_to_line(self, i: int) -> None:
        self.verticalScrollBar().setValue(max(0, min(i, self.line_count - 1)))

    # -- geometry ---------------------------------------------------------------------------

    def _line_height(self) -> int:
        return max(1, self.fontMetrics().lineSpacing())

    def _gutter_width(self) -> int:
        return 16 + self.fontMetrics().horizontalAdvance("9") * max(3, len(str(self.line_count)))

    def _visible_lines(self) -> int:
        return max(1, self.viewport().height() // self._line_height())

    def _update_scrollbars(self) -> None:
        vbar = self.verticalScrollBar()
        page = self._visible_lines()
        vbar.setRange(0, max(0, self.line_count - page))
        vbar.setPageStep(page)
        vbar.setSingleStep(1)
        char_w = max(1, self.fontMetrics().horizontalAdvance("M"))
        content = min(self._longest, MAX_DRAWN_CHARS) * char_w + 8
        hbar = self.horizontalScrollBar()
        avail = self.viewport().width() - self._gutter_width()
        hbar.setRange(0, max(0, content - avail))
        hbar.setPageStep(max(1, avail))
        hbar.setSingleStep(char_w * 4)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._update_scrollbars()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        self._update_scrollbars()
        self.viewport().update()

    # -- painting ---------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        painter = QPainter(self.viewport())
        pal = self.palette()
        rect = self.viewport().rect()
        painter.fillRect(rect, pal.color(QPalette.ColorRole.Base))
        gutter = self._gutter_width()
        painter.fillRect(0, 0, gutter - 4, rect.height(), pal.color(QPalette.ColorRole.AlternateBase))
        painter.setFont(self.font())
        lh = self._line_height()
        ascent = self.fontMetrics().ascent()
        first = self.verticalScrollBar().value()
        dx = self.horizontalScrollBar().value()
        numbers = pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        text_color = pal.color(QPalette.ColorRole.Text)
        last = min(self.line_count, first + rect.height() // lh + 2)
        for k, i in enumerate(range(first, last)):
            y = k * lh
            painter.setPen(numbers)
            painter.drawText(0, y, gutter - 10, lh, Qt.AlignmentFlag.AlignRight, str(i + 1))
            painter.setPen(text_color)
            painter.setClipRect(gutter, 0, rect.width() - gutter, rect.height())
            painter.drawText(gutter + 4 - dx, y + ascent, self.line(i)[:MAX_DRAWN_CHARS].replace("\t", TAB))
            painter.setClipping(False)
        painter.end()

    # -- keyboard ---------------------------------------------------------------------------

    def keyPressEvent(self, event) -> None:
        vbar = self.verticalScrollBar()
        key = event.key()
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_visible()
        elif key == Qt.Key.Key_Home and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            vbar.setValue(0)
        elif key == Qt.Key.Key_End and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            vbar.setValue(vbar.maximum())
        elif key == Qt.Key.Key_PageDown:
            vbar.setValue(vbar.value() + vbar.pageStep())
        elif key == Qt.Key.Key_PageUp:
            vbar.setValue(vbar.value() - vbar.pageStep())
        elif key == Qt.Key.Key_Down:
            vbar.setValue(vbar.value() + 1)
        elif key == Qt.Key.Key_Up:
            vbar.setValue(vbar.value() - 1)
        else:
            super().keyPressEvent(event)

    def copy_visible(self) -> str:
        """Copy the lines on screen to the clipboard and return them."""
        first = self.first_visible_line()
        last = min(self.line_count, first + self._visible_lines())
        text = "\n".join(self.line(i) for i in range(first, last))
        QGuiApplication.clipboard().setText(text)
        return text

    copy = copy_visible  # Edit > Copy calls `copy()` on the focused widget
