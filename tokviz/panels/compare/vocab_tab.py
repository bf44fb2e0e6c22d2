"""`VocabTab`: two vocabularies side by side: shared tokens, tokens only in one, Jaccard overlap,
token lengths; a token's merge tree in each tokenizer. Selecting a token emits
`token_selected(id in A)` (the window selects it in the vocabulary browser when A is on screen).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QItemSelection, Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QSplitter, QWidget

from tokviz.core.compare.vocab import compare_vocabularies, merge_tree_lines
from tokviz.core.display.tokens import visible_token
from tokviz.engine.tables.compare_models import VocabTokensModel

from ..base import monospace_font
from ..widgets import STRETCH, hbox, vbox
from .plots import ThemedPlot, model_color
from .tab import CompareTab

SHOW = (("Shared tokens", "shared"), ("Only in A", "only_a"), ("Only in B", "only_b"))


def compare_models(spec_a, spec_b, *, should_stop, progress):
    """Open both models (on the worker thread) and line up their vocabularies."""
    progress(f"Opening {spec_a.label}…", 0.1)
    a = spec_a.open()
    progress(f"Opening {spec_b.label}…", 0.4)
    b = spec_b.open()
    progress("Comparing…", 0.7)
    return compare_vocabularies(a, b, names=(spec_a.label, spec_b.label), step_a=spec_a.step,
                                step_b=spec_b.step), a, b


class VocabTab(CompareTab):
    RUN_TEXT = "Compare"
    N_MODELS = 2
    HINT = "Pick two tokenizers of the list: which tokens they share, which only one has."

    token_selected = Signal(object, int)  # the timeline the token belongs to, its id

    def __init__(self, specs: list, parent: QWidget | None = None) -> None:
        super().__init__("compare_vocab", specs, parent)
        self.show_box = QComboBox(objectName="compare_vocab_show")
        for text, key in SHOW:
            self.show_box.addItem(text, key)
        self.show_box.currentIndexChanged.connect(self._update_table)
        self.model = VocabTokensModel(self)
        self.table = self.sorted_table("compare_vocab_table", self.model)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.trees = QPlainTextEdit(objectName="compare_vocab_trees", readOnly=True)
        self.lengths = ThemedPlot("compare_vocab_lengths")
        self.lengths.setMinimumHeight(120)
        self.lengths.getPlotItem().setLabel("bottom", "token length (bytes)")
        self.lengths.getPlotItem().setLabel("left", "tokens")
        self.legend = self.lengths.add_legend(offset=(-10, 10))
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.trees)
        side.addWidget(self.lengths)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(self.table)
        body.addWidget(side)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        vbox(self, self.controls(), hbox(QLabel("Show:"), self.show_box, STRETCH), self.progress, self.status, (body, 1),
             margins=0, spacing=4)
        self._update_fonts()

    def _update_fonts(self) -> None:
        self.trees.setFont(monospace_font(self.font()))

    def job(self, picked):
        return (compare_models, *picked)

    def show_result(self, result) -> str:
        c, _a, _b = result
        self._update_table()
        self._draw_lengths(c)
        na, nb = len(c.shared) + len(c.only_a), len(c.shared) + len(c.only_b)
        return (f"{c.names[0]}: {na:,} tokens; {c.names[1]}: {nb:,}; shared {len(c.shared):,}; "
                f"only in A {len(c.only_a):,}; only in B {len(c.only_b):,}; Jaccard overlap {c.jaccard:.3f}")

    def _update_table(self, *_args) -> None:
        if self.result is None:
            return
        c = self.result[0]
        self.model.set_tokens(getattr(c, self.show_box.currentData()), c.names)
        self.table.resizeColumnsToContents()

    def _draw_lengths(self, c) -> None:
        p = self.lengths.getPlotItem()
        p.clear()
        self.legend.clear()
        for k, (hist, name) in enumerate(((c.lengths_a, c.names[0]), (c.lengths_b, c.names[1]))):
            xs = [x - 0.2 + 0.4 * k for x in hist]
            bar = pg.BarGraphItem(x=xs, height=list(hist.values()), width=0.4, brush=model_color(k), pen=pg.mkPen(None))
            p.addItem(bar)
            self.legend.addItem(bar, name)

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(self, *_args) -> None:
        row = self.selected_source_row(self.table)
        if row is None:
            return
        token = self.model.tokens[row]
        self.show_trees(token)

    def show_trees(self, token) -> None:
        """The merge tree of `token` in A and in B."""
        c, a, b = self.result
        lines = []
        for name, tl, tid in ((c.names[0], a, token.id_a), (c.names[1], b, token.id_b)):
            lines.append(f"{name}:")
            lines += ["  " + s for s in merge_tree_lines(tl, tid, visible_token)] if tid is not None else ["  (not in it)"]
            lines.append("")
        self.trees.setPlainText("\n".join(lines))
        if token.id_a is not None:
            self.token_selected.emit(a, token.id_a)
