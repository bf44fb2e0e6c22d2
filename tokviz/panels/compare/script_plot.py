"""`ScriptPlot`: each model's premiums per dominant script, as a dot at the median with its spread.

One row per script (named with its number of documents), the dearest at the top by the first
model's median (`tokviz.core.compare.premium_stats.script_premiums`); in each row one mark per model: a
dot at the median, a thick bar from the first to the third quartile and a thin line from the
cheapest to the dearest document. A dashed line marks 1.0; the premium axis is logarithmic when
the language view's is (`language_plot.LOG_SPAN`). Rows keep a line of text each: the plot asks
for that height (`row_height`) and its holder scrolls. Hovering a row says each model's median,
quartiles and extremes (`hovered`).

What this leaves out: the per-language view (`language_plot`), choosing the view (`chart`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt, Signal
from PySide6.QtWidgets import QWidget

from tokviz.core.compare import Comparison, ModelResult
from tokviz.core.compare.premium_stats import ScriptPremiums, script_premiums

from ..base import is_dark
from .language_plot import LOG_SPAN, log_ticks
from .plots import ThemedPlot, model_pen_color

BAND = 0.7  # of a row's height shared by the models' marks


class ScriptPlot(ThemedPlot):
    """Median and spread of each model's premiums per script; `hovered(text)` describes a row."""

    hovered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("compare_chart_scripts", parent)
        p = self.getPlotItem()
        p.setMouseEnabled(x=False, y=False)
        p.setLabel("bottom", "premium: median, quartiles and range of the script's documents")
        p.showAxis("top")  # the scale stays in sight when the rows scroll
        p.showGrid(x=True, alpha=0.12)
        self.add_legend(offset=(12, 8))
        self.rows: list[ScriptPremiums] = []
        self.labels: list[str] = []
        self.log = False
        self.medians: list[pg.ScatterPlotItem] = []  # one per model
        self.quartiles: list[pg.PlotDataItem] = []  # thick bars, one item per model
        self.ranges: list[pg.PlotDataItem] = []  # thin lines
        self._colors: list[int] = []
        self.hovered_row: int | None = None
        self.reference_line = pg.InfiniteLine(pos=0.0, angle=90, movable=False)
        p.addItem(self.reference_line, ignoreBounds=True)
        self.row_band = pg.LinearRegionItem((0, 0), orientation="horizontal", movable=False)
        self.row_band.setZValue(-10)
        self.row_band.hide()
        p.addItem(self.row_band, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self._restyle()

    def set_results(self, c: Comparison | None, results: Sequence[ModelResult], labels: Sequence[str],
                    colors: Sequence[int]) -> None:
        """Draw `results` (models with premiums) named `labels`, coloured as models `colors`."""
        self._colors = list(colors)
        docs = c.documents if c is not None else ()
        self.rows = script_premiums(results, docs)
        values = [v for r in results for v in r.premiums if v is not None and v > 0]
        self.log = bool(values) and max(values) / min(values) > LOG_SPAN
        if list(labels) != self.labels or len(self.medians) != len(results):
            self._rebuild(list(labels))
        m = max(1, len(results))
        for k in range(len(results)):
            offset = (k - (m - 1) / 2) * BAND / m
            spots, bars, lines = [], [], []
            for row, s in enumerate(self.rows):
                sp = s.spreads[k]
                if sp is None or (self.log and sp.low <= 0):
                    continue
                y = row + offset
                spots.append((self._x(sp.median), y))
                bars += [(self._x(sp.q1), y), (self._x(sp.q3), y)]
                lines += [(self._x(sp.low), y), (self._x(sp.high), y)]
            self.medians[k].setData(pos=spots)
            for item, pts in ((self.quartiles[k], bars), (self.ranges[k], lines)):
                arr = np.array(pts, dtype=np.float64).reshape(-1, 2)
                item.setData(arr[:, 0], arr[:, 1], connect="pairs")
        p = self.getPlotItem()
        p.getAxis("left").setTicks([[(row, f"{s.script} ({len(s.documents)})") for row, s in enumerate(self.rows)], []])
        for name in ("bottom", "top"):
            p.getAxis(name).setTicks(log_ticks(min(*values, 1.0), max(*values, 1.0)) if self.log and values else None)
        self.reference_line.setValue(0.0 if self.log else 1.0)
        p.setYRange(-0.6, max(len(self.rows), 1) - 0.4, padding=0)
        if values:
            lo, hi = min(min(values), 1.0), max(max(values), 1.0)
            if self.log:
                p.setXRange(math.log10(lo) - 0.08, math.log10(hi) + 0.08, padding=0)
            else:
                p.setXRange(0, hi * 1.05, padding=0)
        self.setMinimumHeight(self.row_height() * len(self.rows) + 4 * self.fontMetrics().height())

    def _x(self, v: float) -> float:
        return math.log10(v) if self.log else v

    def row_height(self) -> int:
        """Pixels a script's row needs: a line of its name."""
        return self.fontMetrics().lineSpacing() + 4

    def _rebuild(self, labels: list[str]) -> None:
        p = self.getPlotItem()
        for item in (*self.medians, *self.quartiles, *self.ranges):
            p.removeItem(item)
        self.legend.clear()
        self.labels, self.medians, self.quartiles, self.ranges = labels, [], [], []
        for label in labels:
            self.ranges.append(p.plot([], []))
            self.quartiles.append(p.plot([], []))
            dots = pg.ScatterPlotItem(symbol="o", name=label)
            p.addItem(dots)
            self.medians.append(dots)
        self._restyle()

    # -- reading ----------------------------------------------------------------------------

    def describe(self, row: int) -> str:
        """Script row `row`: its documents and each model's median, quartiles and extremes."""
        if not 0 <= row < len(self.rows):
            return ""
        s = self.rows[row]
        parts = []
        for label, sp in zip(self.labels, s.spreads):
            if sp is None:
                parts.append(f"{label} –")
            elif sp.n == 1:
                parts.append(f"{label} {sp.median:.2f}")
            else:
                parts.append(f"{label} median {sp.median:.2f} (quartiles {sp.q1:.2f}–{sp.q3:.2f}, "
                             f"range {sp.low:.2f}–{sp.high:.2f})")
        docs = "1 document" if len(s.documents) == 1 else f"{len(s.documents)} documents"
        return f"{s.script}, {docs}: " + "; ".join(parts)

    def row_position(self, row: int) -> QPoint:
        """The middle of row `row` at premium 1.0, in this widget's coordinates."""
        scene = self.getPlotItem().vb.mapViewToScene(QPointF(0.0 if self.log else 1.0, float(row)))
        return self.mapFromScene(scene)

    def _on_scene_mouse_moved(self, pos) -> None:
        p = self.getPlotItem()
        row = None
        if p.sceneBoundingRect().contains(pos):
            r = round(p.vb.mapSceneToView(pos).y())
            row = r if 0 <= r < len(self.rows) else None
        if row != self.hovered_row:
            self.hovered_row = row
            self.row_band.setVisible(row is not None)
            if row is not None:
                self.row_band.setRegion((row - 0.5, row + 0.5))
            self.hovered.emit(self.describe(row) if row is not None else "")

    # -- style ------------------------------------------------------------------------------

    def mark_color(self, k: int):
        """The colour model `k`'s marks are drawn in."""
        return self.quartiles[k].opts["pen"].color()

    def _restyle(self) -> None:
        h = self.fontMetrics().height()
        bg = self.palette().color(self.palette().ColorRole.Base)
        for k in range(len(self.medians)):
            c = model_pen_color(self._colors[k] if k < len(self._colors) else k, bg)
            self.ranges[k].setPen(pg.mkPen(c, width=max(1.0, h / 14)))
            self.quartiles[k].setPen(pg.mkPen(c, width=max(3.0, h / 4)))
            self.medians[k].setPen(pg.mkPen(bg, width=1.0))
            self.medians[k].setBrush(pg.mkBrush(c))
            self.medians[k].setSize(max(7.0, h * 0.5))
        dark = is_dark(self.palette())
        self.reference_line.setPen(pg.mkPen("#bbbbbb" if dark else "#555555", width=max(1.0, h / 14),
                                            style=Qt.PenStyle.DashLine))
        band = self.palette().color(self.palette().ColorRole.Highlight)
        band.setAlpha(50 if dark else 35)
        self.row_band.setBrush(pg.mkBrush(band))
        for line in self.row_band.lines:
            line.setPen(pg.mkPen(None))

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (event.Type.PaletteChange, event.Type.FontChange) and hasattr(self, "reference_line"):
            self._restyle()
            if event.type() == event.Type.FontChange and self.rows:
                self.setMinimumHeight(self.row_height() * len(self.rows) + 4 * self.fontMetrics().height())
