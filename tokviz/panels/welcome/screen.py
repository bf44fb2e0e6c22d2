"""`WelcomeScreen`: the first-run screen, laid over the window's panels (not a modal dialog).

Three large buttons, one per way to start: train on a sample corpus, open a real tokenizer, start
the first lesson; and "Not now". It only says what was chosen (`chosen(path)` with one of `PATHS`,
or `dismissed()`): the window carries the choice out and decides when the screen shows
(`tokviz.app.workspaces.welcome`). It covers the widget it is laid over (`cover`) and follows its size.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRect, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

# (key, button text, what it does)
PATHS = (
    ("sample", "Train on a sample", "Train a BPE tokenizer on a short English text and watch its merges"),
    ("tokenizer", "Open a real tokenizer", "GPT-2, Llama, BERT…: a .tiktoken, tokenizer.json or SentencePiece file"),
    ("lesson", "Start a lesson", "A guided tour, one step at a time: characters, words and subwords"),
)


class WelcomeScreen(QWidget):
    """`chosen(key)` (a key of `PATHS`) or `dismissed()`; the buttons are ``welcome_<key>``."""

    chosen = Signal(str)
    dismissed = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("welcome_screen")
        self.setAutoFillBackground(False)
        self._covered: QWidget | None = None
        self._area: Callable[[], QRect] | None = None
        card = QWidget(objectName="welcome_card")
        card.setAutoFillBackground(True)
        title = QLabel("<h2>Welcome to tokviz</h2>See how tokenizers cut text into tokens. Where to start?",
                       objectName="welcome_title")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setWordWrap(True)
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        row.setSpacing(16)
        for key, text, tip in PATHS:
            button = QPushButton(text, objectName=f"welcome_{key}")
            button.setToolTip(tip)
            button.setStatusTip(tip)
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
            font = button.font()
            font.setPointSizeF(font.pointSizeF() * 1.4 if font.pointSizeF() > 0 else 14)
            font.setBold(True)
            button.setFont(font)
            button.setMinimumHeight(button.fontMetrics().height() * 4)
            button.clicked.connect(lambda _checked=False, k=key: self.chosen.emit(k))
            self.buttons[key] = button
            column = QVBoxLayout()
            column.addWidget(button, 1)
            note = QLabel(tip, wordWrap=True)
            note.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            column.addWidget(note)
            row.addLayout(column, 1)
        self.dismiss_button = QPushButton("Not now", objectName="welcome_dismiss")
        self.dismiss_button.setToolTip("Hide this screen (Help > Welcome Screen shows it again)")
        self.dismiss_button.clicked.connect(self.dismissed)
        lay = QVBoxLayout(card)
        lay.setContentsMargins(32, 24, 32, 24)
        lay.setSpacing(16)
        lay.addWidget(title)
        lay.addLayout(row, 1)
        lay.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignRight)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(48, 48, 48, 48)
        outer.addStretch(1)
        outer.addWidget(card, 3)
        outer.addStretch(1)
        self.hide()

    def cover(self, watched: QWidget, area: Callable[[], QRect]) -> None:
        """Lie over `area()` (in the parent's coordinates, e.g. the window's dock area), again
        whenever `watched` (the window) is resized."""
        if self._covered is not None:
            self._covered.removeEventFilter(self)
        self._covered, self._area = watched, area
        watched.installEventFilter(self)
        self._fit()

    def _fit(self) -> None:
        if self._area is not None:
            self.setGeometry(self._area())
            self.raise_()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._covered and event.type() in (QEvent.Type.Resize, QEvent.Type.Move):
            self._fit()
        return False

    def showEvent(self, event) -> None:
        self._fit()
        super().showEvent(event)
        self.buttons["sample"].setFocus(Qt.FocusReason.OtherFocusReason)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        veil = QColor(self.palette().color(QPalette.ColorRole.Window))
        veil.setAlpha(215)  # the panels stay faintly visible behind
        p.fillRect(self.rect(), veil)
        p.end()
