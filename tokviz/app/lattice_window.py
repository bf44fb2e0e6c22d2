"""The lattice view's window: opened by the token view's "Show lattice" (right-click a token), it
draws the word's Unigram lattice with the current model (trained here, at the round shown, or
loaded) and follows the model and the step while open. Wiring only: which model explains a word
is `tokviz.core.explain.unigram.lattice_source`."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QWidget

from tokviz.core.explain.unigram import lattice_source
from tokviz.engine.step_model import StepModel
from tokviz.panels.token_view.panel import TokenViewPanel


class LatticeController(QObject):
    """`show_word(word)` opens (or raises) the lattice window on `word`."""

    def __init__(self, token_view: TokenViewPanel, step_model: StepModel, parent: QWidget) -> None:
        super().__init__(parent)
        self._host = parent
        self.step_model = step_model
        self.panel = None  # made on first use
        token_view.lattice.word_requested.connect(self.show_word)
        step_model.timeline_changed.connect(self._on_step_model_changed)
        step_model.step_changed.connect(self._on_step_model_changed)

    @Slot(str)
    def show_word(self, word: str) -> None:
        if self.panel is None:
            from tokviz.panels.lattice.panel import LatticePanel

            self.panel = LatticePanel(self._host)
            self.panel.setWindowFlag(Qt.WindowType.Window)
            self.panel.setWindowTitle("Lattice")
            self.panel.resize(760, 560)
        self._update_source()
        if word:
            self.panel.set_word(word)
        self.panel.show()
        self.panel.activateWindow()

    def _update_source(self) -> None:
        found = lattice_source(self.step_model.timeline, self.step_model.step)
        if found is None:
            self.panel.set_source(None)
            return
        source, step = found
        name = source.caption or f"Round {step:,}"
        self.panel.set_source(source, step, name)

    @Slot()
    def _on_step_model_changed(self, *_args) -> None:
        if self.panel is not None and self.panel.isVisible():
            self._update_source()
