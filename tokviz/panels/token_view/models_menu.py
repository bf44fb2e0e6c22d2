"""The token view's "Add row ▸" menu: compare with models trained earlier in this session.

`ModelRowsButton` lists the entries of a `tokviz.engine.trained_models.TrainedModels` (every
finished BPE, WordPiece or Unigram run); picking one adds its tokenizer as a comparison row, so the
three algorithms can be compared side by side on the same text.
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from tokviz.core.algorithm.protocol import step_noun


class ModelRowsButton(QToolButton):
    """`model_chosen(TrainedModel)` when the user picks a model from the menu."""

    model_chosen = Signal(object)

    def __init__(self, models, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("token_add_model_row")
        self.setText("Add row")
        self.setToolTip("Compare with a model trained earlier in this session (BPE, WordPiece or Unigram)")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.models = models
        self.menu_ = QMenu(self)
        self.setMenu(self.menu_)
        self.menu_.aboutToShow.connect(self.update_menu)
        models.changed.connect(self._on_models_changed)
        self._on_models_changed()

    @Slot()
    def _on_models_changed(self) -> None:
        self.setEnabled(bool(self.models.models))
        self.update_menu()

    @Slot()
    def update_menu(self) -> None:
        self.menu_.clear()
        for m in reversed(self.models.models):
            action = QAction(m.name, self.menu_)
            action.triggered.connect(lambda _checked=False, m=m: self.model_chosen.emit(m))
            self.menu_.addAction(action)


def install_model_rows(panel, models) -> ModelRowsButton:
    """Put an "Add row" menu of `models` (`TrainedModels`) before the token view's "Add…" button;
    a chosen model becomes a comparison row (``panel.models_button``)."""
    button = panel.models_button = ModelRowsButton(models, panel)
    button.model_chosen.connect(lambda m: panel.add_tokenizer(m.tokenizer()))
    bar = panel.layout().itemAt(0).layout()
    bar.insertWidget(bar.indexOf(panel.add_button), button)
    return button


class PieceRows:
    """The token view's main rows for a timeline whose views encode through its own tokenizer
    (WordPiece, Unigram, SuperBPE, BoundlessBPE): the tokenizer and the ids the timeline declares
    superwords are made on the GUI thread, once per number of steps, and travel with the rows."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._tokenizer = None
        self._superwords: frozenset[int] = frozenset()

    def tokenizer(self, tl):
        key = (id(tl), tl.n_steps)
        if key != self._key:
            self._key, self._tokenizer = key, (tl.tokenizer() if tl.n_steps or tl.lists_merges else None)
            # the final step's set serves every step: an id made later never appears earlier
            self._superwords = tl.superword_ids()
        return self._tokenizer

    def rows(self, tl, k: int) -> list:
        from tokviz.engine.token_view.requests import RowSpec

        tok = self.tokenizer(tl)
        if tok is None:
            return []
        last = tl.last_step
        k = max(0, min(k, last))
        final = f"{tl.vocab_size:,} tokens" if tl.renumbers_vocab else f"{tl.n_steps:,} {step_noun(tl)}"
        sw = self._superwords
        return [RowSpec("step", f"{tl.title} · {'round' if tl.renumbers_vocab else 'step'} {k:,}/{last:,}", step=k,
                        tokenizer=tok, superwords=sw),
                RowSpec("final", f"{tl.title} · final ({final})", step=None, tokenizer=tok, superwords=sw)]
