"""`WelcomeCard`: one path of the first-run screen, a large button that says what it does.

A plain `QPushButton` draws one line of centred text and grows as large as its layout lets it, which
left three big blank buttons with their explanations outside them. The card holds its title and a
wrapped description inside the button (two labels the clicks pass through, in the button's text
colour so both themes read), and is as tall as that text needs.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

TITLE_SCALE = 1.4  # the title's point size against the application font's
MIN_LINES = 7  # a card is at least this many lines of the application font tall: a target, not a row


class WelcomeCard(QPushButton):
    """A button showing `title` (large, bold) above `description` (wrapped)."""

    def __init__(self, title: str, description: str, parent: QWidget | None = None, *,
                 object_name: str = "") -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.title, self.description = title, description
        self.setAccessibleName(title)
        self.setAccessibleDescription(description)
        self.setToolTip(description)
        self.setStatusTip(description)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.title_label = self._label(title, "welcome_card_title")
        font = self.title_label.font()
        font.setPointSizeF(font.pointSizeF() * TITLE_SCALE if font.pointSizeF() > 0 else 14)
        font.setBold(True)
        self.title_label.setFont(font)
        self.description_label = self._label(description, "welcome_card_description")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 20, 24, 20)
        layout.setSpacing(12)
        layout.addStretch(1)
        layout.addWidget(self.title_label)
        layout.addWidget(self.description_label)
        layout.addStretch(1)

    def _label(self, text: str, name: str) -> QLabel:
        label = QLabel(text, self, objectName=name, wordWrap=True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        label.setForegroundRole(QPalette.ColorRole.ButtonText)  # drawn on the button's colour
        label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # the button takes the click
        return label

    def sizeHint(self) -> QSize:  # QPushButton's own hint knows only its (empty) text
        return self.layout().sizeHint().expandedTo(self.minimumSizeHint())

    def minimumSizeHint(self) -> QSize:
        return self.layout().minimumSize().expandedTo(QSize(0, self.fontMetrics().height() * MIN_LINES))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return max(self.layout().totalHeightForWidth(width), self.minimumSizeHint().height())
