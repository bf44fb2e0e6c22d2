"""Parts of the embedding panel: the loss curve, the neighbours pane, the parameter-count text,
and where "the corpus" and "the current text" come from.

What this leaves out: the panel's state and wiring (``tokviz.panels.heatmaps.embedding_panel``).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QEventLoop, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.embeddings import EmbeddingTable, ReferenceModel, embedding_share
from tokviz.core.embeddings.training import MAX_CONTEXT
from tokviz.panels.widgets import STRETCH, form_grid, hbox, vbox

from .plot_style import cache_axes, style_plot

CURRENT_TEXT_CHARS = 400  # the "current text" when no token view gives one: the corpus's start
MAX_LOSS_POINTS = 2000  # points per loss curve; longer runs are shown as block means
LOSS_REFRESH_MS = 200  # the loss curve repaints at most this often while training (painting costs)
MODE_TEXT, MODE_FREQUENT = "text", "frequent"  # which tokens the heatmap shows


class EmbeddingControls(QWidget):
    """The embedding panel's controls: table and training settings, buttons, and the token set."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.dim_spin = QSpinBox(objectName="embed_dim_spin", minimum=2, maximum=1024, value=32)
        self.dim_spin.setToolTip("Embedding width D")
        self.seed_spin = QSpinBox(objectName="embed_seed_spin", minimum=0, maximum=2**31 - 1, value=0)
        self.epochs_spin = QSpinBox(objectName="epochs_spin", minimum=1, maximum=1000, value=20)
        self.lr_spin = QDoubleSpinBox(objectName="lr_spin", minimum=0.0001, maximum=1.0, decimals=4,
                                      singleStep=0.005, value=0.02)
        self.lr_spin.setToolTip("Adam learning rate")
        self.context_spin = QSpinBox(objectName="embed_positions_spin", minimum=0, maximum=MAX_CONTEXT, value=64)
        self.context_spin.setToolTip("Rows of a learned position table trained along (a token at index t of its "
                                     "paragraph gets row t mod this); 0: none. The Positional encodings panel "
                                     "shows it as “Learned (trained)”.")
        self.train_button = QPushButton("Train", objectName="embed_train_button")
        self.train_button.setToolTip("Train a small next-token model on the tokenized corpus")
        self.cancel_button = QPushButton("Cancel", objectName="embed_cancel_button")
        self.random_button = QPushButton("Random", objectName="embed_random_button")
        self.random_button.setToolTip("Back to a random table (normal, scale 0.02)")
        self.load_button = QPushButton("Load .npy…", objectName="embed_load_button")
        self.save_button = QPushButton("Save .npy…", objectName="embed_save_button")
        self.mode_box = QComboBox(objectName="token_mode_box")
        self.mode_box.addItem("Tokens of the current text", MODE_TEXT)
        self.mode_box.addItem("Most frequent tokens", MODE_FREQUENT)
        self.count_spin = QSpinBox(objectName="token_count_spin", minimum=2, maximum=500, value=40)
        self.count_spin.setToolTip("How many tokens the heatmap shows")
        self.reorder_box = QCheckBox("Group similar tokens", objectName="reorder_box")
        self.reorder_box.setChecked(True)

        grid = form_grid([("D", self.dim_spin), ("Seed", self.seed_spin), ("Epochs", self.epochs_spin),
                          ("Rate", self.lr_spin), ("Positions", self.context_spin)])
        buttons = hbox(self.train_button, self.cancel_button, self.random_button, self.load_button, self.save_button,
                       STRETCH)
        vbox(self, grid, buttons, hbox(self.mode_box, self.count_spin, self.reorder_box, STRETCH), margins=0)


class LossHistory:
    """Batch losses and their moving average in growing float64 arrays (amortised appends; no
    list-to-array conversion on every repaint of a run of a million steps).

    >>> h = LossHistory()
    >>> h.extend([3.0, 2.0], [3.0, 2.5])
    >>> len(h), h.losses.tolist(), float(h.smoothed[-1])
    (2, [3.0, 2.0], 2.5)
    """

    def __init__(self) -> None:
        self._data = np.zeros((2, 1024))
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def extend(self, losses, smoothed) -> None:
        new = np.array([losses, smoothed], dtype=np.float64).reshape(2, -1)
        need = self._n + new.shape[1]
        if need > self._data.shape[1]:
            grown = np.zeros((2, max(need, 2 * self._data.shape[1])))
            grown[:, : self._n] = self._data[:, : self._n]
            self._data = grown
        self._data[:, self._n : need] = new
        self._n = need

    @property
    def losses(self) -> np.ndarray:  # (n,) view
        return self._data[0, : self._n]

    @property
    def smoothed(self) -> np.ndarray:  # (n,) view
        return self._data[1, : self._n]


def decimate(y: np.ndarray, max_points: int = MAX_LOSS_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` for a curve of steps ``1..n``: as is when short, else means of equal blocks of
    steps at the blocks' centres (at most `max_points`, the work bounded by one pass over `y`).

    >>> x, m = decimate(np.arange(10.0), 4)
    >>> x.tolist(), m.tolist()
    ([2.0, 5.0, 8.0, 10.0], [1.0, 4.0, 7.0, 9.0])
    """
    n = len(y)
    if n <= max_points:
        return np.arange(1, n + 1, dtype=np.float64), y
    k = -(-n // max_points)
    m = n // k * k
    x = np.arange(m // k, dtype=np.float64) * k + (k + 1) / 2
    means = y[:m].reshape(-1, k).mean(axis=1)
    if m < n:  # the last, shorter block
        x, means = np.append(x, (m + 1 + n) / 2), np.append(means, y[m:].mean())
    return x, means


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


def _wait_for(signal, timeout_ms: int) -> None:
    """Run a local event loop until `signal` fires or `timeout_ms` pass (screenshots, scripts)."""
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    signal.disconnect(loop.quit)


def nice_ceiling(x: float) -> float:
    """The smallest of 1, 2, 5 x 10^k that is >= `x` (at least 1).

    >>> [nice_ceiling(v) for v in (0, 3, 10, 11, 4500)]
    [1, 5, 10, 20, 5000]
    """
    if x <= 1:
        return 1
    k = 10 ** math.floor(math.log10(x))
    return next(m * k for m in (1, 2, 5, 10) if m * k >= x)


def loss_ranges(n: int, losses: np.ndarray, info) -> tuple[float, float, float]:
    """``(x_max, y_low, y_high)`` of the loss plot: steps rounded up to 1, 2, 5 x 10^k (at most
    the run's step count), losses to half nats, so the axes change a few times per run, not at
    every update (a changed axis is redrawn; an unchanged one is a cached pixmap).

    >>> loss_ranges(130, np.array([6.9, 5.2]), None)
    (200, 5.0, 7.0)
    """
    x_max = nice_ceiling(n)
    if info is not None and info.n_steps >= n:
        x_max = min(x_max, max(1, info.n_steps))
    finite = losses[np.isfinite(losses)] if len(losses) else losses
    lo = float(finite.min()) if len(finite) else 0.0
    hi = float(finite.max()) if len(finite) else 1.0
    if info is not None:
        lo, hi = min(lo, info.unigram_loss), max(hi, info.uniform_loss)
    return x_max, math.floor(lo * 2) / 2, math.ceil(hi * 2) / 2 if hi > lo else math.floor(lo * 2) / 2 + 0.5


class LossPlot(pg.PlotWidget):
    """Batch loss (light), its moving average (red) and the uniform / unigram reference lines.

    It keeps the run's losses (`history`) and the run's reference losses (`info`); `add` records a
    batch and repaints at most every `LOSS_REFRESH_MS` (`redrawn` follows each repaint)."""

    redrawn = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loss_plot")
        self.history = LossHistory()
        self.info = None  # TrainingInfo of the run: uniform and unigram losses
        self._timer = QTimer(self, singleShot=True, interval=LOSS_REFRESH_MS)  # coalesces repaints
        self._timer.timeout.connect(self.redraw)
        self.setMenuEnabled(False)
        # no grid: grid lines belong to the axes, and redrawing them on every range change
        # costs ~10 ms; the dashed reference lines give the scale instead
        self.setLabel("bottom", "step")
        self.setLabel("left", "loss (nats)")
        self.setDownsampling(auto=True, mode="peak")
        self.setClipToView(True)
        self.setMinimumHeight(60)
        self.disableAutoRange()  # ranges change in steps (`loss_ranges`), not at every update
        self._ranges: tuple | None = None
        cache_axes(self.getPlotItem().getAxis("left"), self.getPlotItem().getAxis("bottom"))
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

    def new_run(self) -> None:
        self.history, self.info = LossHistory(), None
        self.redraw()

    def set_info(self, info) -> None:
        self.info = info
        self.redraw()

    def add(self, losses: list[float], smoothed: list[float]) -> None:
        self.history.extend(losses, smoothed)
        if not self._timer.isActive():
            self._timer.start()

    def redraw(self) -> None:
        self._timer.stop()
        self.show_losses(self.history.losses, self.history.smoothed, self.info)
        self.redrawn.emit()

    def show_losses(self, losses: list[float], smoothed: list[float], info) -> None:
        y = np.asarray(losses, dtype=np.float64)
        self.raw_curve.setData(*decimate(y))
        self.smooth_curve.setData(*decimate(np.asarray(smoothed, dtype=np.float64)))
        ranges = loss_ranges(len(y), y, info)
        if ranges != self._ranges:
            self._ranges = ranges
            self.setXRange(0, ranges[0], padding=0.02)
            self.setYRange(ranges[1], ranges[2], padding=0.02)
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
    _wait_for(panel.corpus_tokenized, timeout_ms)
    if panel.start_training(replace(panel.train_settings(), epochs=min(panel.epochs_spin.value(), 12))):
        _wait_for(panel.training_engine.running_changed, timeout_ms)
        if panel.similarity_engine.is_busy:
            _wait_for(panel.heatmap_shown, timeout_ms)
    if panel.view is not None and len(panel.view.ids) > 3:
        panel.heatmap.show_readout(2, 3)
