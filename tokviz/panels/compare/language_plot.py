"""`LanguagePlot`: each model's premiums over the documents (languages), sorted cheapest first.

One curve of dots per model, each sorted on its own, as the tokenizer-fairness papers plot
premiums (Petrov et al. 2023): the curves compare the models' whole distributions at a glance, how
many languages cost about the same as the reference and how steeply the dear ones rise. A dashed
line marks 1.0. When premiums span more than `LOG_SPAN` the y axis is logarithmic, with ticks at
1-2-5 steps (`log_ticks`). Hovering a dot rings that language's dot on every curve, names it in
the plot and says every model's premium and rank (`hovered`). Redrawing updates the curves in
place: a comparison arriving document by document costs a sort per model per call.

What this leaves out: the per-script view (`script_plot`), choosing the view (`chart`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt, Signal
from PySide6.QtWidgets import QWidget

from tokviz.core.compare import Comparison, ModelResult
from tokviz.core.compare.premium_stats import premium_order

from ..base import is_dark
from .plots import ThemedPlot, model_pen_color

LOG_SPAN = 8.0  # dearest / cheapest premium beyond which the axis is logarithmic
HOVER_REACH = 1.5  # how far from a dot (in line heights) the mouse still picks it


def log_ticks(lo: float, hi: float) -> list[list[tuple[float, str]]]:
    """Ticks between premiums `lo` and `hi` as ``(log10 value, label)``: the powers of ten, then
    the 2s and 5s (a second level: pyqtgraph leaves out its labels where they would crowd).

    >>> [[t[1] for t in level] for level in log_ticks(0.3, 12)]
    [['1', '10'], ['0.5', '2', '5']]
    """
    major, minor = [], []
    for exp in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0**exp
            if lo <= v <= hi:
                (major if m == 1 else minor).append((math.log10(v), f"{v:g}"))
    return [major, minor]


def premium_text(p: float | None) -> str:
    """A premium for the hover text: two decimals, or a dash when undefined."""
    return "–" if p is None else f"{p:.2f}"


class LanguagePlot(ThemedPlot):
    """Sorted premiums per model; `hovered(text)` describes the dot under the mouse."""

    hovered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("compare_chart_languages", parent)
        p = self.getPlotItem()
        p.setMouseEnabled(x=False, y=False)
        p.setLabel("left", "premium: tokens / reference's")
        p.setLabel("bottom", "languages, each model's cheapest first")
        p.showGrid(y=True, alpha=0.12)
        self.add_legend(offset=(12, 8))
        self.curves: list[pg.PlotDataItem] = []
        self.orders: list[list[int]] = []  # per model: the document index at each rank (from 0)
        self.labels: list[str] = []
        self.log = False  # y is log10 of the premium
        self._comparison: Comparison | None = None
        self._results: list[ModelResult] = []
        self._colors: list[int] = []  # each curve's model index (its colour)
        self.hovered_document: int | None = None
        self.reference_line = pg.InfiniteLine(pos=0.0, angle=0, movable=False)
        p.addItem(self.reference_line, ignoreBounds=True)
        self.rings = pg.ScatterPlotItem(symbol="o", brush=None)
        p.addItem(self.rings, ignoreBounds=True)
        self.rings.setZValue(20)
        self.name_label = pg.TextItem("", anchor=(0, 1))
        self.name_label.setZValue(30)
        p.addItem(self.name_label, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self._restyle()

    # -- data -------------------------------------------------------------------------------

    def set_results(self, c: Comparison | None, results: Sequence[ModelResult], labels: Sequence[str],
                    colors: Sequence[int]) -> None:
        """Draw `results` (models with premiums) named `labels`, coloured as models `colors`."""
        self._comparison, self._results, self._colors = c, list(results), list(colors)
        values = [v for r in results for v in r.premiums if v is not None and v > 0]
        self.log = bool(values) and max(values) / min(values) > LOG_SPAN
        self.orders = [[i for i in premium_order(r.premiums) if not self.log or r.premiums[i] > 0] for r in results]
        if list(labels) != self.labels or len(self.curves) != len(results):
            self._rebuild(list(labels))
        for curve, r, order in zip(self.curves, results, self.orders):
            curve.setData(np.arange(1, len(order) + 1, dtype=np.float64),
                          self._y(np.array([r.premiums[i] for i in order], dtype=np.float64)))
        left = self.getPlotItem().getAxis("left")
        left.setTicks(log_ticks(min(*values, 1.0), max(*values, 1.0)) if self.log and values else None)
        self.reference_line.setValue(0.0 if self.log else 1.0)
        self._set_ranges(values)
        self._show_hover(self.hovered_document if self._has(self.hovered_document) else None)

    def _y(self, v):
        return np.log10(v) if self.log else v

    def _rebuild(self, labels: list[str]) -> None:
        p = self.getPlotItem()
        for curve in self.curves:
            p.removeItem(curve)
        self.legend.clear()
        self.curves, self.labels = [], labels
        for label in labels:
            curve = p.plot([], [], name=label, symbol="o")
            self.curves.append(curve)
        self._restyle()

    def _set_ranges(self, values: list[float]) -> None:
        p = self.getPlotItem()
        n = max((len(o) for o in self.orders), default=0)
        p.setXRange(0, max(n, 1) + 1, padding=0)
        if not values:
            p.setYRange(0, 2, padding=0)
            return
        lo, hi = min(min(values), 1.0), max(max(values), 1.0)
        if self.log:
            p.setYRange(math.log10(lo) - 0.05, math.log10(hi) + 0.05, padding=0)
        else:
            p.setYRange(0, hi * 1.05, padding=0)

    def _has(self, doc: int | None) -> bool:
        return doc is not None and any(doc in o for o in self.orders)

    # -- reading ----------------------------------------------------------------------------

    def rank_of(self, model: int, doc: int) -> int | None:
        """Where document `doc` sits on curve `model` (1 = cheapest), or None when it has no dot."""
        order = self.orders[model]
        return order.index(doc) + 1 if doc in order else None

    def describe(self, doc: int) -> str:
        """Document `doc`'s title, script and every model's premium with its rank."""
        c = self._comparison
        if c is None or not 0 <= doc < len(c.documents):
            return ""
        d = c.documents[doc]
        parts = []
        for k, (label, r) in enumerate(zip(self.labels, self._results)):
            p = r.premiums[doc] if doc < len(r.premiums) else None
            rank = self.rank_of(k, doc)
            parts.append(f"{label} {premium_text(p)}" + (f" (#{rank} of {len(self.orders[k])})" if rank else ""))
        return f"{d.number}. {d.title} ({d.script}): " + ", ".join(parts)

    def point_position(self, model: int, doc: int) -> QPoint:
        """Where document `doc`'s dot on curve `model` is, in this widget's coordinates."""
        rank = self.rank_of(model, doc)
        y = float(self._y(self._results[model].premiums[doc]))
        scene = self.getPlotItem().vb.mapViewToScene(QPointF(rank, y))
        return self.mapFromScene(scene)

    def document_at(self, scene_pos) -> int | None:
        """The document whose dot is nearest `scene_pos`, if one is within reach."""
        vb = self.getPlotItem().vb
        if not self.getPlotItem().sceneBoundingRect().contains(scene_pos):
            return None
        o, one = vb.mapViewToScene(QPointF(0.0, 0.0)), vb.mapViewToScene(QPointF(1.0, 1.0))
        sx, sy = one.x() - o.x(), one.y() - o.y()  # scene pixels per view unit (no rotation)
        best, best_d2 = None, (HOVER_REACH * self.fontMetrics().height()) ** 2
        for curve, order in zip(self.curves, self.orders):
            xs, ys = curve.getData()
            if xs is None or not len(xs):
                continue
            d2 = (o.x() + sx * xs - scene_pos.x()) ** 2 + (o.y() + sy * ys - scene_pos.y()) ** 2
            j = int(d2.argmin())
            if d2[j] < best_d2:
                best, best_d2 = order[j], float(d2[j])
        return best

    def _on_scene_mouse_moved(self, pos) -> None:
        doc = self.document_at(pos)
        if doc != self.hovered_document:
            self._show_hover(doc)
            self.hovered.emit(self.describe(doc) if doc is not None else "")

    def _show_hover(self, doc: int | None) -> None:
        """Ring document `doc`'s dot on every curve and name it above the rings."""
        self.hovered_document = doc
        if doc is None or self._comparison is None:
            self.rings.setData([])
            self.name_label.setText("")
            return
        spots = []
        for k, r in enumerate(self._results):
            rank = self.rank_of(k, doc)
            if rank is not None:
                spots.append({"pos": (rank, float(self._y(r.premiums[doc]))), "pen": self._pen(k, 2.5)})
        self.rings.setData(spots)
        d = self._comparison.documents[doc]
        self.name_label.setText(f"{d.title} ({d.script})")
        if spots:
            x, y = max((s["pos"] for s in spots), key=lambda xy: xy[1])  # above every ring
            n = max(len(o) for o in self.orders)
            self.name_label.setAnchor((1, 1) if x > n / 2 else (0, 1))  # stays inside the plot
            self.name_label.setPos(x, y)

    # -- style ------------------------------------------------------------------------------

    def _pen(self, k: int, width: float) -> pg.QtGui.QPen:
        bg = self.palette().color(self.palette().ColorRole.Base)
        return pg.mkPen(model_pen_color(self._colors[k] if k < len(self._colors) else k, bg), width=width)

    def curve_color(self, k: int):
        """The colour curve `k` is drawn in."""
        return self.curves[k].opts["pen"].color()

    def _restyle(self) -> None:
        """Pens, dot sizes and label fonts for the palette and font: bigger with the font, so they
        read on a projector."""
        h = self.fontMetrics().height()
        line, dot = max(1.5, h / 10), max(5.0, h * 0.35)
        bg = self.palette().color(self.palette().ColorRole.Base)
        for k, curve in enumerate(self.curves):
            pen = self._pen(k, line)
            curve.setPen(pen)
            curve.setSymbolPen(pg.mkPen(bg, width=0.5))
            curve.setSymbolBrush(pen.color())
            curve.setSymbolSize(dot)
        self.rings.setSize(dot * 2.4)
        fg = self.palette().color(self.palette().ColorRole.Text)
        self.reference_line.setPen(pg.mkPen("#bbbbbb" if is_dark(self.palette()) else "#555555", width=max(1.0, h / 14),
                                            style=Qt.PenStyle.DashLine))
        self.name_label.setColor(fg)
        self.name_label.setFont(self.font())
        self.name_label.fill = pg.mkBrush(bg.red(), bg.green(), bg.blue(), 170)
        if self.hovered_document is not None:
            self._show_hover(self.hovered_document)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (event.Type.PaletteChange, event.Type.FontChange) and hasattr(self, "name_label"):
            self._restyle()
