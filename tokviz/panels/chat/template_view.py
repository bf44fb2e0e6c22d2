"""`TemplateView`: a chat template's Jinja source, read-only, as an editor shows code.

Long lines wrap (at words, else anywhere: a template is often one long line of tags); a gutter
numbers the template's lines, not the wrapped rows, so its numbers are the ones the linter and
Jinja's errors give (`mark_line`); `JinjaHighlighter` colours statements ``{% %}``, expressions
``{{ }}`` and comments ``{# #}`` (also across lines), and strings and keywords inside them.

What this leaves out: checking the template (``tokviz.core.chat.lint``) and rendering it.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QPainter,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from tokviz.panels.base import error_color, is_dark, muted_color

TEXT, COMMENT, STATEMENT, EXPRESSION = 0, 1, 2, 3  # block states: where a line ends
OPENERS = {"{#": COMMENT, "{%": STATEMENT, "{{": EXPRESSION}
CLOSERS = {COMMENT: "#}", STATEMENT: "%}", EXPRESSION: "}}"}
OPEN_RE = re.compile(r"\{[#%{]")
STRING_RE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
KEYWORD_RE = re.compile(r"\b(?:if|elif|else|endif|for|endfor|in|not|and|or|is|set|endset|macro|endmacro|call|"
                        r"endcall|filter|endfilter|raw|endraw|generation|endgeneration|true|false|none|True|False|"
                        r"None|loop|namespace)\b")


def _format(color: QColor, *, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    f = QTextCharFormat()
    f.setForeground(color)
    if bold:
        f.setFontWeight(QFont.Weight.Bold)
    f.setFontItalic(italic)
    return f


class JinjaHighlighter(QSyntaxHighlighter):
    """Colours a Jinja document; `set_dark(dark)` picks the colours for the theme."""

    def __init__(self, document, *, dark: bool = False, muted: QColor | None = None) -> None:
        super().__init__(document)
        self.formats: dict[int, QTextCharFormat] = {}
        self.set_dark(dark, muted=muted)

    def set_dark(self, dark: bool, *, muted: QColor | None = None) -> None:
        statement, expression, string, keyword = (
            ("#d2a8ff", "#79c0ff", "#a5d6ff", "#ff7b72") if dark else ("#8250df", "#0550ae", "#0a3069", "#cf222e"))
        self.formats = {
            COMMENT: _format(muted or QColor("#8b949e" if dark else "#6e7781"), italic=True),
            STATEMENT: _format(QColor(statement)),
            EXPRESSION: _format(QColor(expression)),
            "string": _format(QColor(string)),
            "keyword": _format(QColor(keyword), bold=True),
        }
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        state = max(self.previousBlockState(), TEXT)
        start = i = 0  # a tag carried over from the line before starts at 0
        while i <= len(text):
            if state == TEXT:
                m = OPEN_RE.search(text, i)
                if m is None:
                    break
                state, start, i = OPENERS[m.group()], m.start(), m.end()
                continue
            close = text.find(CLOSERS[state], i)
            end = len(text) if close < 0 else close + 2
            self._tag(text, start, end, state)
            if close < 0:
                break  # the tag goes on in the next line
            state, i = TEXT, end
        self.setCurrentBlockState(state)

    def _tag(self, text: str, start: int, end: int, state: int) -> None:
        self.setFormat(start, end - start, self.formats[state])
        if state == COMMENT:
            return
        inside = text[start:end]
        for m in KEYWORD_RE.finditer(inside):
            self.setFormat(start + m.start(), len(m.group()), self.formats["keyword"])
        for m in STRING_RE.finditer(inside):
            self.setFormat(start + m.start(), len(m.group()), self.formats["string"])


class LineNumbers(QWidget):
    """The gutter of a `TemplateView`: it paints the number of each template line beside its first row."""

    def __init__(self, view: TemplateView) -> None:
        super().__init__(view)
        self.view = view
        self.painted: list[tuple[int, int]] = []  # (line number, top y) of the last paint

    def sizeHint(self) -> QSize:
        return QSize(self.view.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        view, p = self.view, QPainter(self)
        p.fillRect(event.rect(), self.palette().color(self.backgroundRole()).darker(104))
        p.setPen(muted_color(self.palette()))
        block = view.firstVisibleBlock()
        top = round(view.blockBoundingGeometry(block).translated(view.contentOffset()).top())
        height = view.fontMetrics().height()
        self.painted = []
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(view.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                number = block.blockNumber() + 1
                p.drawText(QRect(0, top, self.width() - 6, height), Qt.AlignmentFlag.AlignRight, str(number))
                self.painted.append((number, top))
            block, top = block.next(), bottom
        p.end()


class TemplateView(QPlainTextEdit):
    """Read-only Jinja source with wrapped lines, line numbers and highlighting."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chat_template")
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setPlaceholderText("The chat template appears here.")
        self.gutter = LineNumbers(self)
        self.highlighter = JinjaHighlighter(self.document(), dark=is_dark(self.palette()))
        self.blockCountChanged.connect(self._update_margins)
        self.updateRequest.connect(self._on_update_request)
        self._update_margins()

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * max(2, digits)

    def _update_margins(self, *_args) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _on_update_request(self, rect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        r = self.contentsRect()
        self.gutter.setGeometry(QRect(r.left(), r.top(), self.gutter_width(), r.height()))

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (event.Type.PaletteChange, event.Type.FontChange) and hasattr(self, "highlighter"):
            self.highlighter.set_dark(is_dark(self.palette()), muted=muted_color(self.palette()))
            self._update_margins()

    def set_template(self, source: str) -> None:
        self.setPlainText(source)
        self.setExtraSelections([])

    def marked_line(self) -> int | None:
        """The template line `mark_line` marked (1-based), or None."""
        marks = self.extraSelections()
        return marks[0].cursor.block().blockNumber() + 1 if marks else None

    def mark_line(self, line: int | None) -> None:
        """Mark template line `line` (1-based, as Jinja and the linter count) and scroll to it; None
        clears the mark."""
        marks = []
        block = self.document().findBlockByNumber(line - 1) if line else None
        if block is not None and block.isValid():
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(QColor(error_color(self.palette())).lighter(170)
                                     if not is_dark(self.palette()) else QColor("#5c1f1f"))
            sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            sel.cursor = QTextCursor(block)
            marks.append(sel)
            self.setTextCursor(QTextCursor(block))
            self.centerCursor()
        self.setExtraSelections(marks)
