"""`StepChart`: pyqtgraph plots stacked over one step axis, a cursor at k; click to jump.

The base of the merge timeline's chart (``tokviz.panels.timeline.chart``) and the Unigram rounds
chart (``tokviz.panels.timeline.unigram``): linked plots without mouse interaction, one curve and
one cursor line each, `step_clicked(k)` on a click, palette colours. Subclasses set the data and
say which plots are on screen.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget

from .base import highlight_width, is_dark


class StepChart(pg.GraphicsLayoutWidget):
    """`n_plots` linked plots; `step_clicked(k)` when the user clicks one of the `shown_plots`.

    `colors` is ``(light, dark)``: one curve colour per plot for each kind of palette.
    """

    step_clicked = Signal(int)

    def __init__(self, name: str, n_plots: int, colors: tuple[tuple[str, ...], tuple[str, ...]], *,
                 axis_width: int, curve_options: dict | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setMinimumHeight(60)
        self._colors = colors
        self._n = 0  # the last step
        self.plots: list[pg.PlotItem] = []
        self.curves: list[pg.PlotDataItem] = []
        self.cursors: list[pg.InfiniteLine] = []
        for i in range(n_plots):
            p = self.addPlot(row=i, col=0)
            p.getAxis("left").setWidth(axis_width)
            p.setMenuEnabled(False)
            p.setMouseEnabled(x=False, y=False)
            p.hideButtons()
            if self.plots:
                p.setXLink(self.plots[0])
            curve = p.plot([], [], **(curve_options or {}))
            cursor = pg.InfiniteLine(angle=90, movable=False)
            p.addItem(cursor, ignoreBounds=True)
            self.plots.append(p)
            self.curves.append(curve)
            self.cursors.append(cursor)
        self.scene().sigMouseClicked.connect(self._on_scene_clicked)

    def shown_plots(self) -> list[pg.PlotItem]:
        """The plots on screen (all of them unless a subclass hides some)."""
        return list(self.plots)

    def set_cursor(self, k: int) -> None:
        for c in self.cursors:
            c.setValue(k)

    @property
    def cursor_step(self) -> int:
        return int(round(self.cursors[0].value()))

    def step_at_scene_pos(self, scene_pos) -> int | None:
        for p in self.shown_plots():
            if p.sceneBoundingRect().contains(scene_pos):
                x = p.vb.mapSceneToView(scene_pos).x()
                return max(0, min(self._n, int(round(x))))
        return None

    def _on_scene_clicked(self, event) -> None:
        k = self.step_at_scene_pos(event.scenePos())
        if k is not None:
            self.step_clicked.emit(k)

    def _apply_colors(self) -> tuple[tuple[str, ...], QColor]:
        """Background, axes, curves and cursors from the palette; returns (curve colours, text colour)."""
        pal = self.palette()
        dark = is_dark(pal)
        self.setBackground(pal.color(QPalette.ColorRole.Base))
        fg = pal.color(QPalette.ColorRole.Text)
        colors = self._colors[1] if dark else self._colors[0]
        cursor = "#ff7b72" if dark else "#cf222e"
        for p, curve, c, line in zip(self.plots, self.curves, colors, self.cursors):
            curve.setPen(pg.mkPen(c, width=2))
            line.setPen(pg.mkPen(cursor, width=2 * highlight_width()))
            for ax in ("left", "bottom"):
                a = p.getAxis(ax)
                a.setPen(pg.mkPen(fg))
                a.setTextPen(pg.mkPen(fg))
        return colors, fg

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "cursors"):
            self._apply_colors()
        super().changeEvent(event)
