"""`WelcomeScreen`: the first-run screen, laid over the window's panels (not a modal dialog).

Three large cards (`WelcomeCard`), one per way to start: train on a sample corpus, open a real tokenizer, start
the first lesson; and "Not now". It only says what was chosen (`chosen(path)` with one of `PATHS`,
or `dismissed()`): the window carries the choice out and decides when the screen shows
(`tokviz.app.workspaces.welcome`). It covers the widget it is laid over (`cover`), follows its size,
and stays above the panels while shown (a layout that raises its docks or adds tab bars must not bury it).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRect, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from .card import WelcomeCard

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
        sheet = QWidget(objectName="welcome_card")  # the opaque sheet the paths sit on
        sheet.setAutoFillBackground(True)
        title = QLabel("<h2>Welcome to tokviz</h2>See how tokenizers cut text into tokens. Where to start?",
                       objectName="welcome_title")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setWordWrap(True)
        self.buttons: dict[str, WelcomeCard] = {}
        row = QHBoxLayout()
        row.setSpacing(16)
        for key, text, tip in PATHS:
            path = WelcomeCard(text, tip, object_name=f"welcome_{key}")
            path.clicked.connect(lambda _checked=False, k=key: self.chosen.emit(k))
            self.buttons[key] = path
            row.addWidget(path, 1)
        self.dismiss_button = QPushButton("Not now", objectName="welcome_dismiss")
        self.dismiss_button.setToolTip("Hide this screen (Help > Welcome Screen shows it again)")
        self.dismiss_button.clicked.connect(self.dismissed)
        lay = QVBoxLayout(sheet)
        lay.setContentsMargins(32, 24, 32, 24)
        lay.setSpacing(16)
        lay.addWidget(title)
        lay.addLayout(row)
        lay.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignRight)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(48, 48, 48, 48)
        outer.addStretch(1)
        outer.addWidget(sheet)
        outer.addStretch(1)
        self.hide()

    def cover(self, watched: QWidget, area: Callable[[], QRect]) -> None:
        """Lie over `area()` (in `watched`'s coordinates, e.g. the window's dock area), again
        whenever `watched` (the window, this screen's parent) is resized, and above every other
        child of it while shown."""
        if self._covered is not None:
            self._covered.removeEventFilter(self)
        self._covered, self._area = watched, area
        watched.installEventFilter(self)
        self._fit()

    def is_on_top(self) -> bool:
        """Shown, and no other visible child of the window that overlaps it is stacked above it."""
        return self.isVisible() and not any(w.geometry().intersects(self.geometry()) for w in self._above())

    def paths_reachable(self) -> bool:
        """A click at the centre of each path's card reaches that card (nothing lies over it)."""
        parent = self.parentWidget()
        if parent is None or not self.isVisible():
            return False
        for card in self.buttons.values():
            hit = parent.childAt(card.mapTo(parent, card.rect().center()))
            while hit is not None and hit is not card:
                hit = hit.parentWidget()
            if hit is None:
                return False
        return True

    def _above(self) -> list[QWidget]:
        """The visible children of the parent stacked above this screen (not windows of their own)."""
        parent = self.parentWidget()
        if parent is None:
            return []
        siblings = [w for w in parent.children() if isinstance(w, QWidget) and not w.isWindow()]
        return [w for w in siblings[siblings.index(self) + 1:] if w.isVisible()]

    def _fit(self) -> None:
        if self._area is not None:
            self.setGeometry(self._area())
            self._keep_on_top()

    def _keep_on_top(self) -> None:
        # whatever the geometry: a dock raised now may get its place only when the layout runs next
        if self.isVisible() and self._above():  # not in a window being closed: nothing to draw there
            self.raise_()

    def _watch_siblings(self, watch: bool) -> None:
        """While shown, hear every sibling being raised (a workspace being laid out raises its docks,
        tab groups are new widgets on top): the panels must never cover this screen."""
        parent = self.parentWidget()
        if parent is None:
            return
        for w in parent.children():
            if isinstance(w, QWidget) and w is not self:
                if watch:
                    w.installEventFilter(self)
                else:
                    w.removeEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if obj is self._covered:
            if kind in (QEvent.Type.Resize, QEvent.Type.Move):
                self._fit()
            elif kind == QEvent.Type.ChildAdded and self.isVisible() and event.child().isWidgetType():
                event.child().installEventFilter(self)  # a new dock, tab bar or separator
                self._keep_on_top()
            elif kind == QEvent.Type.LayoutRequest:
                self._keep_on_top()
        elif kind in (QEvent.Type.ZOrderChange, QEvent.Type.Show) and self.isVisible():
            self._keep_on_top()
        return False

    def showEvent(self, event) -> None:
        self._watch_siblings(True)
        self._fit()
        super().showEvent(event)
        self.buttons["sample"].setFocus(Qt.FocusReason.OtherFocusReason)

    def hideEvent(self, event) -> None:
        self._watch_siblings(False)
        super().hideEvent(event)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        veil = QColor(self.palette().color(QPalette.ColorRole.Window))
        veil.setAlpha(215)  # the panels stay faintly visible behind
        p.fillRect(self.rect(), veil)
        p.end()
