"""`StepChart`: pyqtgraph plots stacked over one step axis, a cursor at k; click to jump.

The base of the merge timeline's chart (``tokviz.panels.timeline.chart``) and the Unigram rounds
chart (``tokviz.panels.timeline.unigram``): linked plots without mouse interaction, one curve and
one cursor line each, `step_clicked(k)` on a click, palette colours. Subclasses set the data and
say which plots are on screen. Made with ``sliced=True``, a chart is built a few milliseconds at a
time by `build_next` (`tokviz.panels.deferred` calls it once per turn of the event loop).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from .base import highlight_width, is_dark

_DONE = object()  # what `next` returns once the build generator is exhausted
SIDES = ("left", "bottom", "top", "right")  # a plot's axes; the first two shown


class StepChart(pg.GraphicsLayoutWidget):
    """`n_plots` linked plots; `step_clicked(k)` when the user clicks one of the `shown_plots`.

    `colors` is ``(light, dark)``: one curve colour per plot for each kind of palette.
    """

    step_clicked = Signal(int)

    def __init__(self, name: str, n_plots: int, colors: tuple[tuple[str, ...], tuple[str, ...]], *,
                 axis_width: int, curve_options: dict | None = None, sliced: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setMinimumHeight(60)
        self._colors = colors
        self._n = 0  # the last step
        self._n_plots, self._axis_width, self._curve_options = n_plots, axis_width, curve_options or {}
        self.plots: list[pg.PlotItem] = []
        self.curves: list[pg.PlotDataItem] = []
        self.cursors: list[pg.InfiniteLine] = []
        self._parts = self._build_parts()
        if not sliced:
            self.finish_build()

    def build_next(self) -> bool:
        """Build one slice of the chart (a few milliseconds each, so a window that builds it from
        its event loop never freezes); True once the chart is complete."""
        if self._parts is None:
            return True
        if next(self._parts, _DONE) is _DONE:
            self._parts = None
        return self._parts is None

    def fit_rearranged(self) -> None:
        """After plots moved in the layout (another row or column): lay it out now and give it the
        view's size again. Left to itself, a top-level layout whose items changed takes its
        preferred size: wider than the view, whose right part (the last steps) is then cut off."""
        self.ci.layout.activate()
        self.ci.setGeometry(self.range)

    def finish_build(self) -> None:
        """Build whatever is left of the chart now."""
        while not self.build_next():
            pass

    def _build_parts(self):
        """The chart's construction as a generator: each `yield` ends a slice; subclasses extend it
        with `_finish_parts`."""
        for i in range(self._n_plots):
            axes = {}
            for side in SIDES:  # the costliest parts of a plot, made one per slice
                axes[side] = pg.AxisItem(side)
                yield
            p = pg.PlotItem(enableMenu=False, axisItems=axes)  # no view-box menu made only to be dropped
            for side in SIDES[2:]:  # hidden, as a plot's own top and right axes are
                p.hideAxis(side)
            yield
            self.ci.addItem(p, row=i, col=0)
            p.getAxis("left").setWidth(self._axis_width)
            p.setMenuEnabled(False)
            p.setMouseEnabled(x=False, y=False)
            p.hideButtons()
            if self.plots:
                p.setXLink(self.plots[0])
            yield
            curve = p.plot([], [], **self._curve_options)
            cursor = pg.InfiniteLine(angle=90, movable=False)
            p.addItem(cursor, ignoreBounds=True)
            self.plots.append(p)
            self.curves.append(curve)
            self.cursors.append(cursor)
            yield
        self.scene().sigMouseClicked.connect(self._on_scene_clicked)
        yield from self._finish_parts()

    def _finish_parts(self):
        """What a subclass builds once the plots exist (one slice per `yield`)."""
        yield from ()

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
        # a palette change can reach a chart whose plot items Qt is already tearing down (the
        # widget outlives its scene's items while it is closed): nothing is left to colour then
        if (event.type() == QEvent.Type.PaletteChange and hasattr(self, "cursors")
                and all(isValid(c) and isValid(c.curve) for c in self.curves)):
            self._apply_colors()
        super().changeEvent(event)
