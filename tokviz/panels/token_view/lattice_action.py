"""The token view's "Show lattice" (right-click a token): asks for the Unigram lattice of the word
holding the selected token (`word_requested(word)`; the window opens the lattice view). What it
leaves out: the lattice view (`tokviz.panels.lattice`) and deciding which model explains the word."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction

from tokviz.core.unigram.lattice_layout import word_at


class LatticeAction(QObject):
    word_requested = Signal(str)

    def __init__(self, panel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.action = QAction("Show lattice", panel, objectName="token_show_lattice")
        self.action.setStatusTip("Draw the Unigram lattice of the word of the selected token: every piece, "
                                 "the best path, the n best and sampled segmentations")
        self.action.triggered.connect(self._on_action_triggered)
        panel.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        panel.view.addAction(self.action)

    def selected_word(self) -> str:
        """The word of the text holding the selected token ("" when none is selected)."""
        result, index = self.panel.result, self.panel.view.selected
        if result is None or not result.rows or index < 0:
            return ""
        spans = result.rows[0].encoding.spans
        if index >= len(spans):
            return ""
        a, b = spans[index]
        return word_at(result.request.text, a, b)

    @Slot()
    def _on_action_triggered(self) -> None:
        self.word_requested.emit(self.selected_word())
