"""`SamplesTab`: the token view's "Samples" tab. For a word (typed, or the word of the token
clicked in the token view): how each compared tokenizer's sampled segmentations of it are shared
out over N draws, "segmentation · share" with a bar, for a BPE with dropout P (BPE-dropout: each
merge skipped with probability P, then taken up again after the next merge) and for a Unigram
model with its sampling weight alpha (subword regularization: p(segmentation)^alpha).

Drawing runs off the GUI thread (`DebouncedTaskEngine`), only while the tab is shown. What it
leaves out: the sampling itself (`tokviz.core.explain.samples`).
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QLineEdit, QSpinBox, QWidget

from tokviz.core.explain.samples import N_SAMPLES, SampledShares, sample_shares
from tokviz.core.unigram.lattice_layout import word_at
from tokviz.engine.tasks import DebouncedTaskEngine
from tokviz.panels.base import monospace_font
from tokviz.panels.widgets import cell_table, hbox, set_cells, vbox

from .number_lens import row_sources

DEFAULT_WORD = "unbelievable"
HEADERS = ["Tokenizer", "Sampling", "Segmentation", "Share"]
BAR_CELLS = 20  # a share of 100% is this many block characters
MAX_ROWS = 12  # segmentations listed per tokenizer (the rest summed up in one row)


def compute_shares(sources, word: str, n: int, dropout: float, alpha: float, *, should_stop=lambda: False,
                   progress=None) -> list[SampledShares]:
    """Each source ``(title, tokenizer, step)`` that can sample, as `SampledShares` (a worker's job)."""
    out = []
    for title, tok, step in sources:
        found = sample_shares(title, tok, word, n=n, dropout=dropout, alpha=alpha, step=step, should_stop=should_stop)
        if found is not None:
            out.append(found)
    return out


def share_bar(share: float) -> str:
    """``"62.5%  ████████████▌"``: the share as a number and a bar of block characters."""
    eighths = round(share * BAR_CELLS * 8)
    return f"{100 * share:5.1f}%  " + "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


class SamplesTab(QWidget):
    """The "Samples" tab (`attach`): word, N, dropout P and alpha, then one table."""

    shares_shown = Signal()  # new rows are on screen (tests)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("token_samples")
        self._sources: list[tuple[str, object, int | None]] = []
        self._asked: tuple | None = None
        self.shares: list[SampledShares] = []
        self.word_edit = QLineEdit(DEFAULT_WORD, objectName="token_samples_word", maxLength=64)
        self.word_edit.setToolTip("The word to sample (click a token in the view above to take its word); "
                                  "a leading space matters to byte-level BPE")
        self.n_spin = QSpinBox(objectName="token_samples_n", minimum=10, maximum=5000, value=N_SAMPLES, singleStep=100)
        self.n_spin.setPrefix("N ")
        self.n_spin.setToolTip("How many segmentations to draw")
        self.dropout_spin = QDoubleSpinBox(objectName="token_samples_dropout", minimum=0.0, maximum=1.0,
                                           singleStep=0.05, decimals=2, value=0.1)
        self.dropout_spin.setPrefix("dropout ")
        self.dropout_spin.setToolTip("BPE-dropout: each merge is skipped with this probability (and taken up "
                                     "again after the next merge); 0 gives the usual segmentation, 1 no merge")
        self.alpha_spin = QDoubleSpinBox(objectName="token_samples_alpha", minimum=0.01, maximum=10.0,
                                         singleStep=0.1, value=0.1)
        self.alpha_spin.setPrefix("alpha ")
        self.alpha_spin.setToolTip("Unigram sampling weight p(segmentation)^alpha: 1 samples from the model, "
                                   "smaller values flatten towards all segmentations alike")
        self.caption = QLabel(objectName="token_samples_caption", wordWrap=True)
        self.table = cell_table("token_samples_table", HEADERS, selectable=False)
        self.table.setFont(monospace_font(self.font()))
        vbox(self, hbox(QLabel("Word:"), (self.word_edit, 1), self.n_spin, self.dropout_spin, self.alpha_spin),
             self.caption, (self.table, 1), margins=4, spacing=3)
        self.engine = DebouncedTaskEngine("segmentation samples", self, debounce_ms=150, stoppable=True)
        self.engine.computed.connect(self._on_engine_computed)
        self.engine.failed.connect(lambda message: self.caption.setText(f"Cannot sample: {message}"))
        self.word_edit.textChanged.connect(lambda _t: self._request())
        for spin in (self.n_spin, self.dropout_spin, self.alpha_spin):
            spin.valueChanged.connect(lambda _v: self._request())

    @classmethod
    def attach(cls, panel) -> SamplesTab:
        """A "Samples" tab in `panel`'s tabs following its comparison rows; clicking a token in
        the view samples the word holding it."""
        tab = cls()
        panel.tabs.addTab(tab, "Samples")

        def take_word(index: int) -> None:
            result = panel.result
            if result is not None and result.rows and 0 <= index < len(result.rows[0].encoding.spans):
                a, b = result.rows[0].encoding.spans[index]
                word = word_at(result.request.text, a, b)
                if word:
                    tab.set_word(word)

        panel.result_shown.connect(lambda: tab.set_sources(row_sources(panel)))
        panel.view.token_clicked.connect(take_word)
        return tab

    def set_sources(self, sources: list[tuple[str, object, int | None]]) -> None:
        """The tokenizers to sample: ``(title, tokenizer, step or None)``."""
        self._sources = list(sources)
        self._request()

    def set_word(self, word: str) -> None:
        self.word_edit.setText(word)

    def word(self) -> str:
        return self.word_edit.text()

    def _request(self) -> None:
        if not self.isVisible():
            return  # nothing to draw until the tab shows (showEvent asks again)
        word, n, p, alpha = self.word(), self.n_spin.value(), self.dropout_spin.value(), self.alpha_spin.value()
        key = (tuple((t, id(tok), step) for t, tok, step in self._sources), word, n, p, alpha)
        if key == self._asked:
            return
        self._asked = key
        if self._sources and word.strip():
            self.caption.setText(f"Drawing {n:,} segmentations of “{word}”…")
            self.engine.request(compute_shares, list(self._sources), word, n, p, alpha)
        else:
            self._on_engine_computed([])

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._request()

    @Slot(object)
    def _on_engine_computed(self, shares: list[SampledShares]) -> None:
        self.shares = shares
        rows: list[tuple[str, str, str, str]] = []
        for s in shares:
            for r in s.rows[:MAX_ROWS]:
                rows.append((s.title, s.how, " · ".join(r.pieces), share_bar(r.share)))
            rest = s.rows[MAX_ROWS:]
            if rest:
                share = sum(r.share for r in rest)
                rows.append((s.title, s.how, f"({len(rest)} more segmentations)", share_bar(share)))
        t = self.table
        t.setRowCount(len(rows))
        for i, cells in enumerate(rows):
            set_cells(t, i, cells)
        t.resizeColumnsToContents()
        if not self._sources:
            self.caption.setText("Add a tokenizer (or train one) to sample its segmentations.")
        elif not shares:
            self.caption.setText("None of these tokenizers samples segmentations (BPE-dropout needs a BPE, "
                                 "sampling by alpha a Unigram model).")
        else:
            self.caption.setText(f"“{shares[0].word}”: {shares[0].n:,} samples each. BPE-dropout skips each merge "
                                 "with probability P; Unigram draws whole segmentations ∝ p^alpha.")
        self.shares_shown.emit()
