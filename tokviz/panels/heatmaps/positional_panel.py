"""`PositionalPanel`: positional encodings as heatmaps and curves (sinusoidal, learned, RoPE, ALiBi).

Controls: kind, view, model dimension d (2–2048), positions (1–8192), base, seed, ALiBi head and
the similarity measure. Views: positions x dimensions, positions x positions similarity (RoPE:
query-key scores), score or bias by distance (RoPE, ALiBi) and chosen dimensions over positions.
Rows can be labelled with the tokens of the current text (`set_text_tokens`), so the heatmap shows
what each of your tokens gets added. Hovering a cell shows the formula with the numbers filled in.

Matrices are computed by `HeatmapEngine` on a worker thread (debounced; newest wins). Which
controls and views a kind offers, and how its cells read, the kind's `PositionalEncoding` says.
What this leaves out: the maths (``tokviz.core.embeddings.positional``) and where the tokens come from.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.embeddings.positional import (
    ENCODINGS,
    MAX_DIM,
    MAX_POSITIONS,
    MIN_DIM,
    TRAINED,
    VIEW_DIMS,
    VIEW_MATRIX,
    VIEW_SIMILARITY,
    PositionalEncoding,
    PositionalParams,
    encoding,
)
from tokviz.core.embeddings.positional_text import parse_dims
from tokviz.engine.heatmaps.heatmap_engine import (
    HeatmapEngine,
    PositionalRequest,
    PositionalView,
    compute_positional_view,
)
from tokviz.panels.base import Panel, show_error_text
from tokviz.panels.widgets import form_grid

from .heatmap_view import HeatmapView
from .plot_style import style_plot, wrapping_label

CURVE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")


class PositionalPanel(Panel):
    """Positional encodings: controls on top, a heatmap or a line plot below."""

    PANEL_ID = "positional"
    TITLE = "Positional encodings"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    view_shown = Signal()  # a computed view is on screen

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = HeatmapEngine("positional_heatmap", self)
        self.engine.computed.connect(self._on_engine_computed)
        self.engine.failed.connect(self._on_engine_failed)
        self._tokens: list[str] = []
        self._trained: np.ndarray | None = None  # (rows, D) position table trained with the embeddings
        self._user_d: int | None = None  # the d box's value while it shows a trained table's D
        self._shown: PositionalView | None = None
        self._build()
        self._update_views()
        self._request()

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        self.kind_box = QComboBox(objectName="kind_box")
        for enc in ENCODINGS:
            if not enc.needs_table:  # (a trained table's kind is offered once `set_trained_table` gave one)
                self.kind_box.addItem(enc.label, enc.key)
        self.view_box = QComboBox(objectName="view_box")
        self.dim_spin = QSpinBox(objectName="dim_spin", minimum=MIN_DIM, maximum=MAX_DIM, value=64)
        self.dim_spin.setToolTip("Model dimension d")
        self.pos_spin = QSpinBox(objectName="positions_spin", minimum=1, maximum=MAX_POSITIONS, value=128)
        self.pos_spin.setToolTip("Number of positions (rows)")
        self.base_spin = QDoubleSpinBox(objectName="base_spin", minimum=2.0, maximum=1e9, decimals=0, value=10000.0)
        self.base_spin.setToolTip("Wavelength base of sinusoidal encodings and RoPE (10000 in the papers)")
        self.seed_spin = QSpinBox(objectName="seed_spin", minimum=0, maximum=2**31 - 1, value=0)
        self.seed_spin.setToolTip("Seed of the random learned table (and of RoPE's random q, k)")
        self.measure_box = QComboBox(objectName="measure_box")
        self.measure_box.addItem("Dot product", "dot")
        self.measure_box.addItem("Cosine", "cosine")
        self.heads_spin = QSpinBox(objectName="heads_spin", minimum=1, maximum=64, value=8)
        self.heads_spin.setToolTip("ALiBi heads (the slopes depend on how many)")
        self.head_spin = QSpinBox(objectName="head_spin", minimum=0, maximum=7, value=0)
        self.head_spin.setToolTip("ALiBi head shown (head 0 has the steepest slope)")
        self.rope_random_box = QCheckBox("Random q, k", objectName="rope_random_box")
        self.rope_random_box.setToolTip("RoPE scores: random query and key (seeded) instead of all ones")
        self.dims_edit = QLineEdit("0, 1, 6, 7, 20", objectName="dims_edit")
        self.dims_edit.setToolTip("Dimensions to plot, e.g. 0, 1, 8-10 (at most 8)")
        self.tokens_box = QCheckBox("Label rows with the current text's tokens", objectName="token_labels_box")
        self.tokens_box.setChecked(True)

        grid = form_grid([("Kind", self.kind_box), ("View", self.view_box), ("d", self.dim_spin),
                          ("Positions", self.pos_spin), ("Base", self.base_spin), ("Seed", self.seed_spin)], per_row=3)
        grid.setHorizontalSpacing(8)
        self.extra = QWidget()
        extra = QHBoxLayout(self.extra)
        extra.setContentsMargins(0, 0, 0, 0)
        self.measure_label = QLabel("Similarity")
        self.heads_label = QLabel("Heads")
        self.head_label = QLabel("Head")
        self.dims_label = QLabel("Dimensions")
        for w in (self.measure_label, self.measure_box, self.heads_label, self.heads_spin, self.head_label,
                  self.head_spin, self.rope_random_box, self.dims_label, self.dims_edit, self.tokens_box):
            extra.addWidget(w)
        extra.addStretch(1)

        self.heatmap = HeatmapView(name="positional_heatmap")
        self.heatmap.set_readout(self._readout)
        self.curves = pg.PlotWidget(objectName="positional_curves")
        self.curves.showGrid(x=True, y=True, alpha=0.25)
        self.curves.addLegend(offset=(-10, 10))
        self.curves.setMenuEnabled(False)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.heatmap)
        self.stack.addWidget(self.curves)
        self.status = QLabel("", objectName="positional_status")
        wrapping_label(self.status, 1)

        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.extra)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.status)
        self.setMinimumSize(200, 140)  # explicit: a dock squeezed by its neighbours never grows the window
        style_plot(self.curves, self.palette())

        self.kind_box.currentIndexChanged.connect(self._on_kind_box_changed)
        for box in (self.view_box, self.measure_box):
            box.currentIndexChanged.connect(self._on_control_changed)
        for spin in (self.dim_spin, self.pos_spin, self.seed_spin, self.heads_spin, self.head_spin):
            spin.valueChanged.connect(self._on_control_changed)
        self.base_spin.valueChanged.connect(self._on_control_changed)
        self.heads_spin.valueChanged.connect(self._on_heads_spin_changed)
        self.rope_random_box.toggled.connect(self._on_control_changed)
        self.dims_edit.textChanged.connect(self._on_control_changed)
        self.tokens_box.toggled.connect(self._on_tokens_box_toggled)

    # -- controls ---------------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """The current encoding's key ("sinusoidal", ...)."""
        return self.kind_box.currentData()

    @property
    def encoding(self) -> PositionalEncoding:
        return encoding(self.kind)

    @property
    def view(self) -> str:
        return self.view_box.currentData() or VIEW_MATRIX

    @property
    def shown_view(self) -> PositionalView | None:
        """The computed view on screen (None until the first arrives: `view_shown`)."""
        return self._shown

    def params(self) -> PositionalParams:
        trained = self.encoding.needs_table and self._trained is not None
        d = self._trained.shape[1] if trained else self.dim_spin.value()
        return PositionalParams(d=d, n_pos=self.pos_spin.value(), base=float(self.base_spin.value()),
                                seed=self.seed_spin.value(), n_heads=self.heads_spin.value(),
                                head=min(self.head_spin.value(), self.heads_spin.value() - 1))

    def current_request(self) -> PositionalRequest:
        p = self.params()
        return PositionalRequest(self.kind, self.view, p, self.measure_box.currentData(),
                                 parse_dims(self.dims_edit.text(), p.d), self.rope_random_box.isChecked(),
                                 self._trained if self.encoding.needs_table else None)

    def set_trained_table(self, table) -> None:
        """The learned position table ``(rows, D)`` trained with the embeddings: offered as the kind
        "Learned (trained)" (shown at once when that kind is current)."""
        self._trained = np.array(table, dtype=np.float32)
        if self.kind_box.findData(TRAINED.key) < 0:
            self.kind_box.addItem(TRAINED.label, TRAINED.key)
        if self.encoding.needs_table:
            self._show_trained_dim()
            self._request()

    def _show_trained_dim(self) -> None:
        """The (disabled) d box shows the trained table's D; the user's d comes back afterwards."""
        trained = self.encoding.needs_table and self._trained is not None
        if trained and self._user_d is None:
            self._user_d = self.dim_spin.value()
        value = self._trained.shape[1] if trained else self._user_d
        if not trained:
            self._user_d = None
        if value is not None and value != self.dim_spin.value():
            self.dim_spin.blockSignals(True)
            self.dim_spin.setValue(value)
            self.dim_spin.blockSignals(False)

    def set_kind(self, kind: str) -> bool:
        """Show `kind`; False (nothing changes) for a kind not offered, e.g. "trained" before a
        position table was trained."""
        i = self.kind_box.findData(kind)
        if i >= 0:
            self.kind_box.setCurrentIndex(i)
        return i >= 0

    def set_view(self, view: str) -> None:
        i = self.view_box.findData(view)
        if i >= 0:
            self.view_box.setCurrentIndex(i)

    def _update_views(self) -> None:
        current = self.view
        self.view_box.blockSignals(True)
        self.view_box.clear()
        enc = self.encoding
        for v in enc.views:
            self.view_box.addItem(enc.view_label(v), v)
        i = self.view_box.findData(current)
        self.view_box.setCurrentIndex(max(0, i))
        self.view_box.blockSignals(False)
        self._update_extra()

    def _update_extra(self) -> None:
        enc, view = self.encoding, self.view
        self.measure_label.setVisible(view == VIEW_SIMILARITY and enc.uses_measure)
        self.measure_box.setVisible(view == VIEW_SIMILARITY and enc.uses_measure)
        for w in (self.heads_label, self.heads_spin, self.head_label, self.head_spin):
            w.setVisible(enc.uses_heads)
        self.rope_random_box.setVisible(view in enc.qk_views)
        self.dims_label.setVisible(view == VIEW_DIMS)
        self.dims_edit.setVisible(view == VIEW_DIMS)
        self.tokens_box.setVisible(view == VIEW_MATRIX and not enc.square_matrix)
        self.base_spin.setEnabled(enc.uses_base)
        self.dim_spin.setEnabled(enc.uses_dim)
        # the seed draws a random table, or the random query and key of the views that score them
        self.seed_spin.setEnabled(enc.uses_seed or (bool(enc.qk_views) and self.rope_random_box.isChecked()))

    @Slot(int)
    def _on_kind_box_changed(self, _i: int) -> None:
        self._show_trained_dim()
        self._update_views()
        self._request()

    @Slot()
    def _on_control_changed(self, *_args) -> None:
        self._update_extra()
        self._request()

    @Slot(int)
    def _on_heads_spin_changed(self, n: int) -> None:
        self.head_spin.setMaximum(n - 1)

    @Slot(bool)
    def _on_tokens_box_toggled(self, _on: bool) -> None:
        if self._shown is not None:
            self._show(self._shown)

    def _request(self) -> None:
        self.engine.request(compute_positional_view, self.current_request())

    def set_text_tokens(self, tokens: list[str]) -> None:
        """Tokens of the current text (visible forms), used as row labels of the matrix view."""
        self._tokens = list(tokens)
        if self._shown is not None and self._shown.request.view == VIEW_MATRIX:
            self._show(self._shown)

    # -- results ----------------------------------------------------------------------------

    @Slot(object)
    def _on_engine_computed(self, view: PositionalView) -> None:
        self._show(view)

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        show_error_text(self.status, f"Cannot compute: {message}", self.palette())

    def _row_labels(self, view: PositionalView) -> list[str] | None:
        if view.rows is None:
            return None
        rows = view.rows
        req = view.request
        if req.view == VIEW_MATRIX and not req.encoding.square_matrix and self.tokens_box.isChecked() and self._tokens:
            toks = self._tokens
            return [f"{p} {toks[p]}" if p < len(toks) else str(p) for p in rows.tolist()]
        return [str(p) for p in rows.tolist()]

    def _show(self, view: PositionalView) -> None:
        self._shown = view
        self.status.setPalette(self.palette())
        req = view.request
        enc = req.encoding
        if view.matrix is not None:
            self.stack.setCurrentWidget(self.heatmap)
            cols = [str(c) for c in view.cols.tolist()] if view.cols is not None else None
            self.heatmap.set_matrix(view.matrix, signed=view.signed, levels=view.levels, cyclic=view.cyclic,
                                    row_labels=self._row_labels(view), col_labels=cols,
                                    x_title=view.x_title, y_title=view.y_title, corner=view.y_title)
            n_rows, n_cols = view.matrix.shape
            text = f"{enc.label}: {n_rows:,} × {n_cols:,}"
            source = enc.source_note()
            if source:
                text += f" ({source})"
            elif view.rows is not None and len(view.rows) < req.params.n_pos:
                text += f" (every {int(view.rows[1] - view.rows[0]) if len(view.rows) > 1 else 1}th position of {req.params.n_pos:,})"
            if view.note:
                text += f" — {view.note}"
            self.status.setText(text)
        else:
            self.stack.setCurrentWidget(self.curves)
            self.curves.clear()
            legend = self.curves.getPlotItem().legend
            if legend is not None:
                legend.clear()
            for i, (name, x, y) in enumerate(view.curves):
                self.curves.plot(x, y, pen=pg.mkPen(CURVE_COLORS[i % len(CURVE_COLORS)], width=2), name=name)
            self.curves.setLabel("bottom", view.x_title)
            self.curves.setLabel("left", view.y_title)
            self._fit_curves(view.curves)
            self.status.setText(f"{enc.label}: {len(view.curves)} curve(s)"
                                if view.curves else "Type dimensions to plot, e.g. 0, 1, 8-10")
        self.view_shown.emit()

    def _fit_curves(self, curves) -> None:
        """Range over every curve, the value axis from 0 (a score that never drops below 6 starts at 0)."""
        ys = [np.asarray(y, dtype=np.float64) for _n, _x, y in curves if len(y)]
        if not ys:
            self.curves.enableAutoRange()
            return
        xs = np.concatenate([np.asarray(x, dtype=np.float64) for _n, x, y in curves if len(y)])
        y = np.concatenate(ys)
        lo, hi = min(0.0, float(np.nanmin(y))), max(0.0, float(np.nanmax(y)))
        self.curves.setXRange(float(xs.min()), float(xs.max()), padding=0.02)
        self.curves.setYRange(lo, hi if hi > lo else lo + 1.0, padding=0.05)

    def _readout(self, row: int, col: int, value: float) -> str:
        view = self._shown
        if view is None:
            return ""
        req, p = view.request, view.request.params
        enc = req.encoding
        pos = int(view.rows[row]) if view.rows is not None else row
        other = int(view.cols[col]) if view.cols is not None else col  # a key position, or the column
        if req.view != VIEW_MATRIX:
            return enc.pair_text(pos, other, value, measure=req.measure)
        formula = enc.formula(pos, other, p, value=value)
        if enc.square_matrix:
            return formula
        label = self.heatmap.label_of_row(row)
        token = label.split(" ", 1)[1] if " " in label else ""
        head = f"position {pos}" + (f" (token {token})" if token else "") + f", dimension {col}: {value:.6g}"
        return f"{head}\n{formula}"

    def prepare_screenshot(self) -> None:
        """For the screenshot command: show the readout of a cell."""
        if self._shown is not None and self._shown.matrix is not None and min(self._shown.matrix.shape) > 6:
            self.heatmap.show_readout(5, 6)

    # -- theme and shutdown -----------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            style_plot(self.curves, self.palette())
        super().changeEvent(event)

    def shutdown(self) -> None:
        self.engine.shutdown()
        self.heatmap.shutdown()
