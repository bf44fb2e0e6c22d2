"""`PremiumChart`: tokens per document relative to a reference document, one bar colour per model.

Documents run along the x axis, ordered by the first model's premium (cheapest first), so the
languages a tokenizer makes expensive stand out at the right; a line marks 1.0 (as costly as the
reference). Hovering a bar names the document and every model's premium. What this leaves out:
measuring (core) and the tables (`tokviz.engine.tables.compare_models`).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QWidget

from tokviz.core.compare import Comparison
from tokviz.core.compare.report import short_labels
from tokviz.panels.base import is_dark
from tokviz.panels.widgets import save_image

# Okabe & Ito's colour-blind-safe qualitative palette (no yellow: it vanishes on white)
MODEL_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#999999")


def model_color(i: int) -> str:
    return MODEL_COLORS[i % len(MODEL_COLORS)]


def apply_palette(widget: pg.PlotWidget, legend=None) -> None:
    """Background, axes, title and legend of a plot from the widget's palette (light or dark)."""
    pal = widget.palette()
    widget.setBackground(pal.color(pal.ColorRole.Base))
    fg = pal.color(pal.ColorRole.Text)
    item = widget.getPlotItem()
    for name in ("left", "bottom"):
        ax = item.getAxis(name)
        ax.setPen(fg)
        ax.setTextPen(fg)
    item.titleLabel.setAttr("color", fg.name())
    if legend is not None:
        legend.setLabelTextColor(fg)


class ThemedPlot(pg.PlotWidget):
    """A plot without pyqtgraph's menus and buttons that follows the palette."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.getPlotItem().setMenuEnabled(False)
        self.getPlotItem().hideButtons()
        self.legend = None
        apply_palette(self)

    def add_legend(self, **kw):
        self.legend = self.getPlotItem().addLegend(**kw)
        apply_palette(self, self.legend)
        return self.legend

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange and self.getPlotItem() is not None:
            apply_palette(self, self.legend)


class PremiumChart(pg.PlotWidget):
    """Grouped bars of per-document premiums; `hovered(text)` describes the bar under the mouse."""

    hovered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_chart")
        self.setMinimumHeight(160)
        p = self.getPlotItem()
        p.setMenuEnabled(False)
        p.hideButtons()
        p.setMouseEnabled(x=True, y=False)
        p.setLabel("left", "tokens / reference")
        p.setLabel("bottom", "documents, cheapest first")
        self.legend = p.addLegend(offset=(10, 10))
        self.bars: list[pg.BarGraphItem] = []
        self.order: list[int] = []  # document index at each x position
        self._c: Comparison | None = None
        self._labels: list[str] = []
        self.reference_line = pg.InfiniteLine(pos=1.0, angle=0, movable=False,
                                              pen=pg.mkPen((128, 128, 128), style=Qt.PenStyle.DashLine))
        p.addItem(self.reference_line, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self._apply_colors()

    def set_comparison(self, c: Comparison | None) -> None:
        p = self.getPlotItem()
        for b in self.bars:
            p.removeItem(b)
        self.bars, self.order, self._c = [], [], c
        self.legend.clear()
        ok = [r for r in c.results if r.metrics is not None and r.premiums] if c is not None else []
        if not ok:
            p.setTitle("")
            return
        self._labels = short_labels([r.model for r in ok])
        first = ok[0].premiums
        self.order = sorted(range(len(first)), key=lambda i: (first[i] is None, first[i] or 0.0))
        width = 0.8 / len(ok)
        for k, (r, label) in enumerate(zip(ok, self._labels)):
            xs = [x - 0.4 + width * (k + 0.5) for x in range(len(self.order))]
            heights = [r.premiums[i] or 0.0 for i in self.order]
            color = model_color(c.results.index(r))
            bar = pg.BarGraphItem(x=xs, height=heights, width=width, brush=color, pen=pg.mkPen(None))
            p.addItem(bar)
            self.legend.addItem(bar, label)
            self.bars.append(bar)
        ref = c.documents[c.reference] if c.reference is not None else None
        p.setTitle(f"Tokens per document relative to “{ref.title}”" if ref is not None else "")
        p.setXRange(-1, len(self.order), padding=0)
        top = max((v for r in ok for v in r.premiums if v is not None), default=1.0)
        p.setYRange(0, max(1.2, top * 1.05), padding=0)

    def describe(self, x: float) -> str:
        """The document at x position `x` with every model's premium, or ""."""
        c = self._c
        pos = int(round(x))
        if c is None or not 0 <= pos < len(self.order):
            return ""
        i = self.order[pos]
        d = c.documents[i]
        ok = [r for r in c.results if r.metrics is not None and r.premiums]
        parts = [f"{label} {r.premiums[i]:.2f}" if r.premiums[i] is not None else f"{label} –"
                 for label, r in zip(self._labels, ok)]
        return f"{d.number}. {d.title} ({d.script}): " + ", ".join(parts)

    def _on_scene_mouse_moved(self, pos) -> None:
        vb = self.getPlotItem().vb
        if self.getPlotItem().sceneBoundingRect().contains(pos):
            self.hovered.emit(self.describe(vb.mapSceneToView(pos).x()))

    def export_png(self, path: str) -> bool:
        return save_image(self.grab(), path)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange and hasattr(self, "reference_line"):  # built
            self._apply_colors()

    def _apply_colors(self) -> None:
        apply_palette(self, self.legend)
        pal = self.palette()
        self.reference_line.setPen(pg.mkPen("#bbbbbb" if is_dark(pal) else "#666666", style=Qt.PenStyle.DashLine))
