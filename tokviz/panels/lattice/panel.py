"""`LatticePanel`: the Viterbi lattice of one word under a Unigram model, drawn.

For a word (typed, or picked in the token view with "Show lattice"): the lattice
(`LatticeCanvas`: nodes = positions, edges = pieces with their scores, the best path filled), a
caption with the best path's log-probability, its probability among all segmentations and how
many segmentations there are, the n best segmentations with their probabilities (select one to
outline its path) and segmentations sampled with probability ∝ p^alpha (subword regularization;
the last one is outlined). Works for a model trained here (`UnigramTokenizer`, at a round) and a
loaded one (`UnigramExplainer`): both give ``explain`` and ``sample``
(`tokviz.core.explain.unigram.lattice_source` picks the one of a timeline).
"""

from __future__ import annotations

import random

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import QLabel, QPushButton, QScrollArea, QWidget

from tokviz.core.unigram.lattice_layout import LatticeLayout, layout_lattice
from tokviz.panels.base import Panel, monospace_font
from tokviz.panels.widgets import STRETCH, cell_table, hbox, segmentation_controls, set_cells, vbox

from .canvas import LatticeCanvas

NBEST_HEADERS = ["Probability", "log p", "Segmentation"]
N_BEST = 5
N_SAMPLES = 8
MAX_WORD = 64


class LatticePanel(Panel):
    PANEL_ID = "lattice"
    TITLE = "Lattice"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.word_edit, self.n_spin, self.alpha_spin = segmentation_controls("lattice", n_best=N_BEST)
        self.caption = QLabel(objectName="lattice_caption", wordWrap=True)
        self.canvas = LatticeCanvas()
        self.canvas.setObjectName("lattice_canvas")
        scroll = QScrollArea(objectName="lattice_scroll")
        scroll.setWidget(self.canvas)
        scroll.setWidgetResizable(False)
        scroll.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.table = cell_table("lattice_nbest_table", NBEST_HEADERS)
        self.table.currentCellChanged.connect(self._on_table_current_cell_changed)
        self.sample_button = QPushButton("Sample", objectName="lattice_sample_button")
        self.sample_button.clicked.connect(self.sample)
        self.samples = QLabel(objectName="lattice_samples", wordWrap=True)
        self.samples.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        vbox(self, hbox(QLabel("Word:"), (self.word_edit, 1), self.n_spin), self.caption, (scroll, 3),
             (self.table, 2), hbox(self.alpha_spin, self.sample_button, STRETCH), self.samples, margins=4, spacing=3)
        self._source = None
        self._step = 0
        self.layout_: LatticeLayout | None = None
        self.nbest: list = []
        self.sampled: list = []
        self._rng = random.Random(0)
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.update_lattice)
        self.word_edit.textChanged.connect(self._timer.start)
        self.n_spin.valueChanged.connect(self._timer.start)
        self._update_fonts()
        self.update_lattice()

    def _update_fonts(self) -> None:
        mono = monospace_font(self.font())
        self.table.setFont(mono)
        self.samples.setFont(mono)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)

    # -- what is shown ---------------------------------------------------------------------------

    def set_source(self, source, step: int = 0, caption: str = "") -> None:
        """Explain words with `source` (``explain``/``sample``) at `step`; `caption` names it."""
        self._source, self._step, self._name = source, step, caption
        self.update_lattice()

    def set_word(self, word: str) -> None:
        self.word_edit.setText(word)
        self._timer.stop()
        self.update_lattice()

    def word(self) -> str:
        return self.word_edit.text().strip()[:MAX_WORD]

    @Slot()
    def update_lattice(self) -> None:
        word, src = self.word(), self._source
        self.nbest, self.sampled, self.layout_ = [], [], None
        self.samples.setText("")
        if src is None:
            self.caption.setText("Open or train a Unigram model to see the lattice of a word.")
        elif not word:
            self.caption.setText("Type a word to see its lattice.")
        else:
            try:
                ex = src.explain(word, step=self._step, n=self.n_spin.value())
            except Exception as exc:  # noqa: BLE001 - a word the model cannot read: say so, keep the panel
                self.caption.setText(f"Cannot segment “{word}”: {exc}")
            else:
                self.layout_ = lay = layout_lattice(ex)
                self.nbest = list(ex.nbest)
                hidden = f" ({lay.hidden:,} more pieces not drawn)" if lay.hidden else ""
                where = f"{self._name}: " if self._name else ""
                self.caption.setText(
                    f"{where}“{lay.word}”: {lay.n_segmentations:,} segmentations, {len(lay.edges):,} pieces "
                    f"match{hidden}. Best path: {' '.join(lay.best_pieces)}, log p = {lay.best_log_prob:.3f} "
                    f"(p = {lay.best_prob:.3f} of the word's segmentations)")
        self.canvas.set_layout(self.layout_)
        t = self.table
        t.setRowCount(len(self.nbest))
        for r, s in enumerate(self.nbest):
            set_cells(t, r, (f"{s.prob:.3f}", f"{s.log_prob:.2f}", " ".join(s.pieces)), right=(0, 1))
        t.resizeColumnToContents(0)
        t.resizeColumnToContents(1)

    @Slot()
    def sample(self) -> list[str]:
        """Draw `N_SAMPLES` segmentations with probability ∝ p^alpha; the last one is outlined."""
        word, src = self.word(), self._source
        if not word or src is None or self.layout_ is None:
            return []
        alpha = self.alpha_spin.value()
        self.sampled = [src.sample(word, alpha=alpha, step=self._step, rng=self._rng) for _ in range(N_SAMPLES)]
        lines = [" ".join(s.pieces) for s in self.sampled]
        self.samples.setText(f"Sampled with alpha {alpha:g} (the last one outlined):\n" + "\n".join(lines))
        self.canvas.set_highlight(self.layout_.path_edges(self.sampled[-1]))
        return lines

    @Slot(int, int, int, int)
    def _on_table_current_cell_changed(self, row: int, _col: int, _prow: int, _pcol: int) -> None:
        if self.layout_ is not None and 0 <= row < len(self.nbest):
            self.canvas.set_highlight(self.layout_.path_edges(self.nbest[row]))
