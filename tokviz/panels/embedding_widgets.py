"""Parts of the embedding panel: the loss curve, the neighbours pane, the parameter-count text,
and where "the corpus" and "the current text" come from.

What this leaves out: the panel's state and wiring (``tokviz.panels.embedding_panel``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from tokviz.core.embeddings import EmbeddingTable, ReferenceModel, embedding_share

from .heatmap_view import style_plot

CURRENT_TEXT_CHARS = 400  # the "current text" when no token view gives one: the corpus's start


def corpus_sample(corpus_panel, max_chars: int) -> str:
    """The first `max_chars` characters of the corpus (large files: only the first pieces)."""
    large = getattr(corpus_panel, "_large", None)
    if large is not None:
        out, n = [], 0
        for piece in large.pieces:
            out.append(piece)
            n += len(piece)
            if n >= max_chars:
                break
        return "".join(out)[:max_chars]
    return corpus_panel.text()[:max_chars]


def current_text_source(docks, corpus_panel, max_chars: int = CURRENT_TEXT_CHARS):
    """A callable giving "the current text": the token view's text when a token view panel is
    docked (id ``token_view`` or ``tokens``, with a ``text()`` or ``current_text()`` method),
    else the start of the corpus."""

    def text() -> str:
        ids = docks.panel_ids()
        for pid in ("token_view", "tokens"):
            if pid in ids:
                panel = docks.panel(pid)
                for name in ("current_text", "text"):
                    fn = getattr(panel, name, None)
                    if callable(fn):
                        value = fn()
                        if isinstance(value, str) and value.strip():
                            return value[: max_chars * 10]
        return corpus_sample(corpus_panel, max_chars)

    return text


def parameter_text(n_vocab: int, dim: int, ref: ReferenceModel) -> str:
    """"V × D = ... parameters: x% of <model>" (or the reference alone when there is no table)."""
    if not n_vocab:
        return (f"{ref.name}: {ref.n_vocab:,} × {ref.dim:,} = {ref.embedding_params:,} embedding parameters "
                f"({ref.embedding_share:.1%} of {ref.total_params / 1e6:,.0f}M)")
    share = embedding_share(n_vocab, dim, ref.total_params)
    return (f"V × D = {n_vocab:,} × {dim:,} = {n_vocab * dim:,} parameters: {share:.4%} of {ref.name} "
            f"({ref.total_params / 1e6:,.0f}M; its own {ref.n_vocab:,} × {ref.dim:,} table is "
            f"{ref.embedding_share:.1%})")


def load_table(path: str, n_vocab: int, *, should_stop, progress) -> EmbeddingTable:
    """`TaskEngine` job: read a ``.npy`` table whose rows must match the vocabulary."""
    progress("Loading embeddings…", 0.0)
    return EmbeddingTable.load(path, n_vocab=n_vocab)


def wait_for(signal, timeout_ms: int) -> None:
    """Run a local event loop until `signal` fires or `timeout_ms` pass (screenshots, scripts)."""
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    signal.disconnect(loop.quit)


class LossPlot(pg.PlotWidget):
    """Batch loss (light), its moving average (red) and the uniform / unigram reference lines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loss_plot")
        self.setMenuEnabled(False)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.setLabel("bottom", "step")
        self.setLabel("left", "loss (nats)")
        self.setDownsampling(auto=True, mode="peak")
        self.setClipToView(True)
        self.setMinimumHeight(60)
        self.raw_curve = self.plot([], [], pen=pg.mkPen("#9ecae1", width=1), skipFiniteCheck=True)
        self.smooth_curve = self.plot([], [], pen=pg.mkPen("#d62728", width=2), skipFiniteCheck=True)
        self.setToolTip("Loss of each batch (light) and its moving average (red); dashed: guessing "
                        "uniformly, and guessing by token frequency (unigram)")
        dash = Qt.PenStyle.DashLine
        self.uniform_line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen("#888888", style=dash),
                                            label="uniform", labelOpts={"position": 0.55, "color": "#888888"})
        self.unigram_line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen("#2ca02c", style=dash),
                                            label="unigram", labelOpts={"position": 0.35, "color": "#2ca02c"})
        style_plot(self, self.palette())

    def show_losses(self, losses: list[float], smoothed: list[float], info) -> None:
        x = np.arange(1, len(losses) + 1)
        self.raw_curve.setData(x, np.asarray(losses))
        self.smooth_curve.setData(x, np.asarray(smoothed))
        for line, value in ((self.uniform_line, info and info.uniform_loss),
                            (self.unigram_line, info and info.unigram_loss)):
            if value:
                line.setValue(value)
                if line.scene() is None:
                    self.addItem(line)
            elif line.scene() is not None:
                self.removeItem(line)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            style_plot(self, self.palette())
        super().changeEvent(event)


class NeighboursPane(QWidget):
    """"Neighbours of [token]" and the table of its nearest neighbours."""

    def __init__(self, model, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.token_box = QComboBox(objectName="token_box")
        self.token_box.setToolTip("Token whose nearest neighbours are listed (or click a heatmap row)")
        self.token_box.setMinimumContentsLength(6)
        self.view = QTableView(objectName="neighbours_view")
        self.view.setModel(model)
        self.view.verticalHeader().hide()
        self.view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().lineSpacing() + 4)
        self.view.setMinimumHeight(50)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Neighbours of"))
        pick.addWidget(self.token_box, 1)
        layout.addLayout(pick)
        layout.addWidget(self.view, 1)

    def set_tokens(self, ids: list[int], labels) -> None:
        """Offer `ids` in the box, keeping the current token when it is still there."""
        current = self.token_box.currentData()
        self.token_box.blockSignals(True)
        self.token_box.clear()
        for i in ids:
            self.token_box.addItem(f"{labels[i]}  #{i}", i)
        j = self.token_box.findData(current) if current is not None else -1
        self.token_box.setCurrentIndex(j if j >= 0 else (0 if ids else -1))
        self.token_box.blockSignals(False)

    def select(self, token_id: int, label: str) -> None:
        """Make `token_id` current (added to the box if it is not offered)."""
        j = self.token_box.findData(token_id)
        if j < 0:
            self.token_box.addItem(f"{label}  #{token_id}", token_id)
            j = self.token_box.count() - 1
        self.token_box.blockSignals(True)
        self.token_box.setCurrentIndex(j)
        self.token_box.blockSignals(False)


def prepare_screenshot(panel, timeout_ms: int) -> None:
    """The embedding panel for the screenshot command: tokenize, train a few epochs, hover a cell."""
    from dataclasses import replace

    if not panel.retokenize():
        return
    wait_for(panel.corpus_tokenized, timeout_ms)
    if panel.start_training(replace(panel.train_settings(), epochs=min(panel.epochs_spin.value(), 12))):
        wait_for(panel.training_engine.running_changed, timeout_ms)
        if panel.similarity_engine.is_busy:
            wait_for(panel.heatmap_shown, timeout_ms)
    if panel.view is not None and len(panel.view.ids) > 3:
        panel.heatmap.show_readout(2, 3)
