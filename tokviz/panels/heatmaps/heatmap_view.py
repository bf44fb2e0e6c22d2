"""`HeatmapView`: a reusable pyqtgraph heatmap with colour bar, colour-map choice, hover readout
and PNG/CSV export. The positional-encodings and embedding-similarity panels both use it.

A matrix is shown with `set_matrix` (rows top to bottom, ``pg.ImageItem(axisOrder="row-major")``,
``invertY(True)``); signed data gets a diverging map centred on 0, unsigned data a sequential one.
The readout under the plot is written by a callable the owner sets (`set_readout`), called with
the row, column and value under the mouse. CSV export runs on a `TaskEngine` (8192 x 1024 is ~2 s
of formatting); PNG export grabs the plot.

What this leaves out: computing matrices (``tokviz.core``) and what rows mean (the panels).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, Signal, Slot
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.embeddings.positional import csv_text
from tokviz.core.io.safe_files import write_text_atomic
from tokviz.engine.tasks import TaskEngine
from tokviz.panels.widgets import save_image

from .plot_style import cache_axes, wrapping_label

# label -> pyqtgraph colour map name
DIVERGING_MAPS = {
    "Blue–white–red": "CET-D1A",
    "Blue–black–red": "CET-D4",
    "Green–white–red": "CET-D3",
    "Blue–white–green": "CET-D13",
}
SEQUENTIAL_MAPS = {"Viridis": "viridis", "Magma": "magma", "Cividis": "cividis"}
CYCLIC_MAPS = {"Cyclic (angles)": "CET-C2"}
ALL_MAPS = {**DIVERGING_MAPS, **SEQUENTIAL_MAPS, **CYCLIC_MAPS}
MAX_TICKS = 40  # labelled rows/columns at most per axis


def _write_csv(path: str, matrix: np.ndarray, row_labels, col_labels, corner: str, *, should_stop, progress) -> str:
    progress("Formatting CSV…", 0.0)
    text = csv_text(matrix, row_labels=row_labels, col_labels=col_labels, corner=corner)
    if should_stop():
        from tokviz.core import Cancelled

        raise Cancelled()
    write_text_atomic(path, text)
    return path


def tick_list(labels: Sequence[str], max_ticks: int = MAX_TICKS) -> list[tuple[float, str]]:
    """At most `max_ticks` evenly spaced ``(centre, label)`` ticks for cells ``0..n-1``.

    >>> tick_list(["a", "b", "c", "d"], 2)
    [(0.5, 'a'), (2.5, 'c')]
    """
    n = len(labels)
    step = max(1, math.ceil(n / max(1, max_ticks)))
    return [(i + 0.5, str(labels[i])) for i in range(0, n, step)]


class HeatmapView(QWidget):
    """A heatmap with colour bar, colour-map box, hover readout and export buttons."""

    hovered = Signal(int, int)  # row, column under the mouse (-1, -1 when outside)
    cell_clicked = Signal(int, int)  # row, column
    image_updated = Signal()  # a new matrix is in the image item
    exported = Signal(str)  # path written
    export_failed = Signal(str)  # message

    def __init__(self, parent: QWidget | None = None, *, name: str = "heatmap") -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self._matrix: np.ndarray | None = None
        self._row_labels: list[str] | None = None
        self._col_labels: list[str] | None = None
        self._corner = ""
        self._signed = True
        self._map_kind = "diverging"  # "diverging", "sequential" or "cyclic"
        self._map_choice: dict[str, str] = {}  # kind -> label the user picked
        self._readout: Callable[[int, int, float], str] | None = None
        self._last_cell = (-1, -1)
        self._ticks: tuple | None = None  # (left, bottom) tick lists shown
        self._readout_cell: tuple[int, int] | None = None  # cell the readout describes
        self._titles: tuple[str, str] | None = None  # (bottom, left) axis titles shown
        self.csv_engine = TaskEngine("heatmap_csv", self)
        self.csv_engine.finished.connect(self._on_csv_engine_finished)
        self.csv_engine.failed.connect(self._on_csv_engine_failed)
        self._build()

    def _build(self) -> None:
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setObjectName(f"{self.objectName()}_graphics")
        self.graphics.setMinimumSize(160, 120)
        self.plot = self.graphics.addPlot()
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.image = pg.ImageItem(axisOrder="row-major", autoDownsample=True)
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(-1, 1), colorMap=pg.colormap.get("CET-D1A"),
                                        interactive=False, colorMapMenu=False, width=16)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        cache_axes(self.plot.getAxis("left"), self.plot.getAxis("bottom"), self.colorbar.axis)
        self.plot.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self.plot.scene().sigMouseClicked.connect(self._on_scene_mouse_clicked)

        self.map_box = QComboBox(objectName="colormap_box")
        self.map_box.setToolTip("Colour map (diverging maps for signed values, centred on 0)")
        self.map_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.map_box.setMinimumContentsLength(9)
        self.png_button = QPushButton("PNG…", objectName="export_png_button")
        self.png_button.setAccessibleName("Export PNG")
        self.png_button.setToolTip("Save the heatmap as a PNG image")
        self.csv_button = QPushButton("CSV…", objectName="export_csv_button")
        self.csv_button.setToolTip("Save the matrix as CSV (row and column labels included)")
        self.png_button.clicked.connect(self._on_png_button_clicked)
        self.csv_button.clicked.connect(self._on_csv_button_clicked)
        self.map_box.currentIndexChanged.connect(self._on_map_box_changed)
        self.readout = QLabel("Hover over the heatmap to read a value", objectName="heatmap_readout")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        wrapping_label(self.readout, 2)
        self.readout.setMinimumWidth(60)
        self.readout.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        tools = QHBoxLayout()  # colour map on the left, export on the right
        tools.setContentsMargins(0, 0, 0, 0)
        tools.addWidget(self.map_box)
        tools.addStretch(1)
        tools.addWidget(self.png_button)
        tools.addWidget(self.csv_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.readout)
        layout.addLayout(tools)
        self._fill_map_box()
        self._update_colors()

    # -- colour maps ------------------------------------------------------------------------

    def _fill_map_box(self) -> None:
        """Offer the maps that suit the data; remember the user's pick per kind of data."""
        maps = {"diverging": DIVERGING_MAPS, "sequential": SEQUENTIAL_MAPS,
                "cyclic": {**CYCLIC_MAPS, **DIVERGING_MAPS}}[self._map_kind]
        self.map_box.blockSignals(True)
        self.map_box.clear()
        self.map_box.addItems(list(maps))
        choice = self._map_choice.get(self._map_kind)
        if choice in maps:
            self.map_box.setCurrentText(choice)
        self.map_box.blockSignals(False)
        self._apply_map()

    @property
    def colormap_name(self) -> str:
        return ALL_MAPS.get(self.map_box.currentText(), "CET-D1A")

    def set_colormap(self, label: str) -> None:
        """Pick a colour map by its label (one of the box's entries)."""
        self.map_box.setCurrentText(label)

    @Slot(int)
    def _on_map_box_changed(self, _index: int) -> None:
        self._map_choice[self._map_kind] = self.map_box.currentText()
        self._apply_map()

    def _apply_map(self) -> None:
        self.colorbar.setColorMap(pg.colormap.get(self.colormap_name))

    # -- data -------------------------------------------------------------------------------

    def set_readout(self, fn: Callable[[int, int, float], str] | None) -> None:
        """`fn(row, col, value)` -> the text shown while the mouse is over that cell."""
        self._readout = fn

    @property
    def matrix(self) -> np.ndarray | None:
        return self._matrix

    def set_matrix(
        self,
        matrix: np.ndarray,
        *,
        signed: bool | None = None,
        levels: tuple[float, float] | None = None,
        cyclic: bool = False,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
        x_title: str = "",
        y_title: str = "",
        corner: str = "",
    ) -> None:
        """Show a 2-D matrix. Signed data (default: any value < 0) is centred on 0."""
        m = np.asarray(matrix)
        if m.ndim != 2:
            raise ValueError(f"a heatmap needs a 2-D matrix, got shape {m.shape}")
        if levels is None or signed is None:  # (an 8192 x 1024 scan: pass levels when known)
            finite = m[np.isfinite(m)] if m.dtype.kind == "f" and np.isnan(m).any() else m
            lo = float(finite.min()) if finite.size else 0.0
            hi = float(finite.max()) if finite.size else 1.0
            if signed is None:
                signed = lo < 0
            if levels is None:
                if signed:
                    r = max(abs(lo), abs(hi)) or 1.0
                    levels = (-r, r)
                else:
                    levels = (lo, hi if hi > lo else lo + 1.0)
        kind = "cyclic" if cyclic else ("diverging" if signed else "sequential")
        if kind != self._map_kind:
            self._map_kind = kind
            self._fill_map_box()
        # Only what changed is touched: a live update of a same-sized matrix with the same
        # labels repaints the image alone (axes keep their cached pictures, zoom is kept).
        same_shape = self._matrix is not None and self._matrix.shape == m.shape
        self._matrix = m
        self._signed = signed
        self._row_labels = list(row_labels) if row_labels is not None else None
        self._col_labels = list(col_labels) if col_labels is not None else None
        self._corner = corner
        self.image.setImage(m, autoLevels=False, levels=levels)
        if tuple(self.colorbar.levels()) != tuple(levels):
            self.colorbar.setLevels(levels)
        if not same_shape:
            n_rows, n_cols = m.shape
            self.image.setRect(0, 0, n_cols, n_rows)
            self.plot.getViewBox().setLimits(xMin=0, xMax=n_cols, yMin=0, yMax=n_rows)
            self.plot.setRange(xRange=(0, n_cols), yRange=(0, n_rows), padding=0)
        self._update_ticks()
        if (x_title, y_title) != self._titles:
            self._titles = (x_title, y_title)
            self.plot.setLabel("bottom", x_title)
            self.plot.setLabel("left", y_title)
        self._last_cell = (-1, -1)
        if self._readout_cell is not None:  # keep the readout true to what is shown (live updates)
            self.show_readout(*self._readout_cell)
        self.image_updated.emit()

    def _update_ticks(self) -> None:
        if self._matrix is None:
            return
        n_rows, n_cols = self._matrix.shape
        rows = self._row_labels if self._row_labels is not None else [str(i) for i in range(n_rows)]
        cols = self._col_labels if self._col_labels is not None else [str(j) for j in range(n_cols)]
        fm = self.fontMetrics()
        h = max(1, self.graphics.height() - 60)
        w = max(1, self.graphics.width() - 120)
        max_rows = max(2, min(MAX_TICKS, h // (fm.lineSpacing() + 2)))
        widest = max((fm.horizontalAdvance(str(c)) for c in cols[:: max(1, len(cols) // 50)]), default=10)
        max_cols = max(2, min(MAX_TICKS, w // (widest + 12)))
        ticks = (tick_list(rows, max_rows), tick_list(cols, max_cols))
        if ticks != self._ticks:  # (new ticks redraw the axis)
            self._ticks = ticks
            self.plot.getAxis("left").setTicks([ticks[0]])
            self.plot.getAxis("bottom").setTicks([ticks[1]])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._update_ticks()

    def label_of_row(self, row: int) -> str:
        return self._row_labels[row] if self._row_labels is not None else str(row)

    def label_of_col(self, col: int) -> str:
        return self._col_labels[col] if self._col_labels is not None else str(col)

    # -- hover and click --------------------------------------------------------------------

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int]:
        """(row, col) under a scene position, or (-1, -1)."""
        if self._matrix is None or not self.plot.sceneBoundingRect().contains(scene_pos):
            return -1, -1
        p = self.plot.getViewBox().mapSceneToView(scene_pos)
        row, col = math.floor(p.y()), math.floor(p.x())
        n_rows, n_cols = self._matrix.shape
        if 0 <= row < n_rows and 0 <= col < n_cols:
            return row, col
        return -1, -1

    def scene_pos_of(self, row: int, col: int) -> QPointF:
        """Scene position of the centre of a cell (for tests and keyboard hover)."""
        return self.plot.getViewBox().mapViewToScene(QPointF(col + 0.5, row + 0.5))

    def show_readout(self, row: int, col: int) -> str:
        """Write the readout for a cell (what hovering it shows); returns the text."""
        if self._matrix is None or not (0 <= row < self._matrix.shape[0] and 0 <= col < self._matrix.shape[1]):
            self._readout_cell = None
            self.readout.setText("Hover over the heatmap to read a value")
            return self.readout.text()
        self._readout_cell = (row, col)
        value = float(self._matrix[row, col])
        if self._readout is not None:
            text = self._readout(row, col, value)
        else:
            text = f"row {self.label_of_row(row)}, column {self.label_of_col(col)}: {value:.6g}"
        self.readout.setText(text)
        return text

    @Slot(object)
    def _on_scene_mouse_moved(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos)
        if cell != self._last_cell:
            self._last_cell = cell
            self.show_readout(*cell)
            self.hovered.emit(*cell)

    @Slot(object)
    def _on_scene_mouse_clicked(self, event) -> None:
        row, col = self.cell_at(event.scenePos())
        if row >= 0:
            self.cell_clicked.emit(row, col)

    # -- export -----------------------------------------------------------------------------

    def export_png(self, path: str | Path) -> bool:
        """Save the plot (image, axes and colour bar) as PNG."""
        ok = save_image(self.graphics.grab(), path)
        if ok:
            self.exported.emit(str(path))
        else:
            self.export_failed.emit(f"cannot write {path}")
        return ok

    def export_csv(self, path: str | Path) -> bool:
        """Write the matrix as CSV in the background; `exported` or `export_failed` follows."""
        if self._matrix is None:
            self.export_failed.emit("nothing to export yet")
            return False
        m = self._matrix
        rows = self._row_labels if self._row_labels is not None else None
        cols = self._col_labels if self._col_labels is not None else None
        self.csv_button.setEnabled(False)
        self.csv_engine.start(_write_csv, str(path), m, rows, cols, self._corner)
        return True

    @Slot(object)
    def _on_csv_engine_finished(self, path: str) -> None:
        self.csv_button.setEnabled(True)
        self.exported.emit(path)

    @Slot(str)
    def _on_csv_engine_failed(self, message: str) -> None:
        self.csv_button.setEnabled(True)
        self.export_failed.emit(message)

    @Slot()
    def _on_png_button_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export heatmap as PNG", f"{self.objectName()}.png",
                                              "PNG images (*.png)")
        if path:
            self.export_png(path)

    @Slot()
    def _on_csv_button_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export matrix as CSV", f"{self.objectName()}.csv",
                                              "CSV files (*.csv)")
        if path:
            self.export_csv(path)

    # -- theme ------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self._update_colors()
        super().changeEvent(event)

    def _update_colors(self) -> None:
        pal = self.palette()
        self.graphics.setBackground(pal.color(QPalette.ColorRole.Base))
        text = pal.color(QPalette.ColorRole.Text)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setPen(text)
            axis.setTextPen(text)
        self.colorbar.axis.setPen(text)
        self.colorbar.axis.setTextPen(text)
        self._ticks = None
        self._update_ticks()

    def shutdown(self) -> None:
        self.csv_engine.shutdown()
