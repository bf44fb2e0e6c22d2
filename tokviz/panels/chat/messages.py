"""`MessageList`: the Chat view's conversation editor, one row per message.

A row has the role (an editable list: system, user, assistant, tool, or any name), buttons to move
it up or down and to remove it, the content (plain text: tabs and double spaces are kept as typed,
CRLF as loaded until the message is edited) and how many tokens the message takes in the prompt
(its characters and tokens in the tooltip), or that the template dropped it. "Add message" appends a row with the role that usually comes next.

Signals: ``edited()`` after any change (a keystroke, a role, a move, an addition or a removal),
``row_focused(index)`` when a row gets the focus. What this
leaves out: rendering (``tokviz.engine.chat``).
"""

from __future__ import annotations

import json

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.chat import CHANGED, DROPPED, FOUND, NOT_TEXT, STRIPPED, MessageSpan
from tokviz.panels.base import error_color, monospace_font, muted_color

ROLES = ("system", "user", "assistant", "tool")
NEXT_ROLE = {"system": "user", "user": "assistant", "assistant": "user", "tool": "assistant"}
STATUS_NOTES = {STRIPPED: "the template strips its edge whitespace", FOUND: "located by searching",
                CHANGED: "the template changes its text", NOT_TEXT: "not text"}


class MessageRow(QFrame):
    """One message: role and move/remove buttons, the content, and its token count under it."""

    def __init__(self, role: str, content: object, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.role_box = QComboBox(objectName="chat_role", editable=True)
        self.role_box.addItems(ROLES)
        self.role_box.setCurrentText(role)
        self.role_box.setToolTip("The message's role (any name: a template may ignore roles it does not know)")
        self.up_button = QToolButton(objectName="chat_up", text="▲", toolTip="Move up")
        self.down_button = QToolButton(objectName="chat_down", text="▼", toolTip="Move down")
        self.remove_button = QToolButton(objectName="chat_remove", text="✕", toolTip="Remove this message")
        self.info = QLabel(objectName="chat_message_info")
        # never widens the row, and keeps its height: typing in one message must not lay out all rows
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.editor = QPlainTextEdit(objectName="chat_content")
        self.raw = content  # kept until edited: the editor turns "\r\n" and "\r" into "\n"
        if isinstance(content, str):
            self.editor.setPlainText(content)
        else:  # content blocks: shown as JSON, passed on as loaded
            self.editor.setPlainText(json.dumps(content, ensure_ascii=False, indent=1))
            self.editor.setReadOnly(True)
            self.editor.setToolTip("Content blocks are shown as JSON and passed to the template as loaded")
        self._shown = self.editor.toPlainText()
        self.editor.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.role_box)
        head.addStretch(1)
        for b in (self.up_button, self.down_button, self.remove_button):
            head.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.editor)
        layout.addWidget(self.info)
        self.editor.document().contentsChanged.connect(self._fit)
        self.editor.installEventFilter(self)  # a new width wraps the lines differently
        self._update_fonts()

    def _update_fonts(self) -> None:
        self.editor.setFont(monospace_font(self.font()))
        self._fit()

    def _fit(self, width: int | None = None) -> None:
        """Grow with the content, wrapped lines included (estimated from the font), up to 8 lines."""
        fm = self.editor.fontMetrics()
        width = self.editor.width() if width is None else width
        avail = max(1, width - 2 * self.editor.frameWidth() - 2 * int(self.editor.document().documentMargin()) - 4)
        lines = sum(max(1, -(-fm.horizontalAdvance(par) // avail))
                    for par in self.editor.toPlainText().split("\n"))
        self.editor.setFixedHeight(max(1, min(8, lines)) * fm.lineSpacing() + 2 * self.editor.frameWidth() + 10)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.editor and event.type() == QEvent.Type.Resize and \
                event.size().width() != event.oldSize().width():
            self._fit(event.size().width())
        return super().eventFilter(watched, event)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._update_fonts()
        super().changeEvent(event)

    @property
    def role(self) -> str:
        return self.role_box.currentText()

    def message(self) -> dict:
        text = self.editor.toPlainText()
        content = self.raw if not isinstance(self.raw, str) or text == self._shown else text
        return {"role": self.role, "content": content}

    def show_span(self, span: MessageSpan | None) -> None:
        """Say how many tokens the message takes (its characters and tokens in the tooltip), or
        that the template dropped it. The label changes only when its own count does, so typing
        in one message does not lay out the others."""
        muted = muted_color(self.palette()).name()
        tip = ""
        if span is None:
            text = ""
        elif span.status == DROPPED:
            bad = error_color(self.palette()).name()
            text = f"<b style='color:{bad}'>not in the prompt</b>"
            tip = "The template leaves this message out (does it know its role?)"
        elif span.span is None:
            text = f"<span style='color:{muted}'>{STATUS_NOTES.get(span.status, span.status)}</span>"
        else:
            n = span.n_tokens
            note = STATUS_NOTES.get(span.status)
            text = f"<b>{n:,} token{'s' if n != 1 else ''}</b>" + (f" <span style='color:{muted}'>({note})</span>"
                                                                  if note else "")
            (a, b), (i, j) = span.span, span.tokens
            tip = f"Characters {a:,}–{b:,} of the prompt, tokens {i:,}–{j - 1:,}" if j > i else f"Characters {a:,}–{b:,}"
        if text != self.info.text():
            self.info.setText(text)
        self.info.setToolTip(tip)


class MessageList(QScrollArea):
    """The conversation: rows of messages and an "Add message" button."""

    edited = Signal()
    row_focused = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # rows wrap to the width
        self.rows: list[MessageRow] = []
        box = QWidget()
        self._layout = QVBoxLayout(box)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self._layout.setSpacing(6)
        self.add_button = QPushButton("Add message", objectName="chat_add")
        self.add_button.setToolTip("Append a message (the role that usually comes next)")
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self._layout.addWidget(self.add_button)
        self._layout.addStretch(1)
        self.setWidget(box)

    # -- the conversation -----------------------------------------------------------------------

    def messages(self) -> list[dict]:
        return [r.message() for r in self.rows]

    def set_messages(self, messages: list[dict]) -> None:
        for r in self.rows:
            self._drop(r)
        self.rows = []
        for m in messages:
            self._insert(len(self.rows), str(m.get("role", "")), m.get("content", ""))
        self._update_buttons()
        self.edited.emit()

    def add_message(self, role: str | None = None, content: str = "") -> MessageRow:
        if role is None:
            role = NEXT_ROLE.get(self.rows[-1].role, "user") if self.rows else "user"
        row = self._insert(len(self.rows), role, content)
        self._update_buttons()
        self.edited.emit()
        row.editor.setFocus()
        self.ensureWidgetVisible(row)
        return row

    def remove_message(self, index: int) -> None:
        self._drop(self.rows.pop(index))
        self._update_buttons()
        self.edited.emit()

    def move_message(self, index: int, delta: int) -> None:
        to = index + delta
        if not (0 <= index < len(self.rows) and 0 <= to < len(self.rows)):
            return
        row = self.rows.pop(index)
        self.rows.insert(to, row)
        self._layout.removeWidget(row)
        self._layout.insertWidget(to, row)
        self._update_buttons()
        self.edited.emit()
        row.editor.setFocus()

    def show_spans(self, spans: list[MessageSpan] | None) -> None:
        for i, row in enumerate(self.rows):
            row.show_span(spans[i] if spans is not None and i < len(spans) else None)

    # -- rows -----------------------------------------------------------------------------------

    def _insert(self, index: int, role: str, content: object) -> MessageRow:
        row = MessageRow(role, content)
        self.rows.insert(index, row)
        self._layout.insertWidget(index, row)
        row.editor.textChanged.connect(self._on_row_text_changed)
        row.role_box.currentTextChanged.connect(self._on_row_role_changed)
        row.up_button.clicked.connect(lambda: self.move_message(self.rows.index(row), -1))
        row.down_button.clicked.connect(lambda: self.move_message(self.rows.index(row), 1))
        row.remove_button.clicked.connect(lambda: self.remove_message(self.rows.index(row)))
        row.editor.installEventFilter(self)
        row.role_box.installEventFilter(self)
        return row

    def _drop(self, row: MessageRow) -> None:
        """Take a row off the screen now (deleting waits for the event loop)."""
        self._layout.removeWidget(row)
        row.hide()
        row.deleteLater()

    def _update_buttons(self) -> None:
        for i, row in enumerate(self.rows):
            row.up_button.setEnabled(i > 0)
            row.down_button.setEnabled(i < len(self.rows) - 1)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FocusIn:
            for i, row in enumerate(self.rows):
                if watched in (row.editor, row.role_box):
                    self.row_focused.emit(i)
        return super().eventFilter(watched, event)

    @Slot()
    def _on_row_text_changed(self) -> None:
        self.edited.emit()

    @Slot(str)
    def _on_row_role_changed(self, _role: str) -> None:
        self.edited.emit()

    @Slot()
    def _on_add_button_clicked(self) -> None:
        self.add_message()
