"""`TimelineChart` and `UnigramChart`: pyqtgraph plots over all steps with a cursor at k; click to jump.

Three stacked plots sharing the step axis: corpus length in tokens, vocabulary size, and the
winning pair's count. Log scale (length and count) is a toggle. Data are set when merges arrive
(throttled by the panel); moving the cursor only moves three `InfiniteLine`s. A Unigram timeline
shows vocabulary size and corpus log-likelihood per round instead (`UnigramChart`). The panel
imports this module only when a chart tab is first shown (`tokviz.panels.deferred`).

While steps arrive (``live``) the ranges grow with headroom in nice steps, as live charts usually
do: an axis whose range did not change keeps its cached picture, so a batch of merges redraws the
curves, not the axes (half of a batch's repaint when the ranges followed the data exactly). The
finished chart fits the data.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QGraphicsSimpleTextItem, QWidget

from tokviz.core.unigram.replay import unigram_series
from tokviz.panels.step_chart import StepChart
from tokviz.panels.widgets import save_image

SERIES = ("length", "vocabulary", "count")
AUTO_ALL_PX = 220  # "auto" shows all three plots from this height, two from AUTO_TWO_PX
AUTO_TWO_PX = 130
BESIDE_BELOW_PX = 220  # a Unigram chart shorter than this shows its two plots side by side
TITLES = ("Corpus length (tokens)", "Vocabulary size", "Winning pair count")
UNIGRAM_TITLES = ("Vocabulary size", "Corpus log-likelihood")
MARK_COLOR = "#8250df"


def nice_step(x: float) -> float:
    """The largest 1, 2 or 5 x 10^k not above `x` (x > 0): ``0.7`` -> ``0.5``, ``308`` -> ``200``."""
    unit = 10.0 ** math.floor(math.log10(x))
    return next(m * unit for m in (5, 2, 1) if m * unit <= x * (1 + 1e-12))


def live_limit(n: int) -> int:
    """The right end of the step axis while steps arrive: the next multiple strictly above `n` of a
    nice step of a quarter to a tenth of `n`, so the range jumps a few dozen times in a training run
    instead of moving on every batch. ``0`` -> 1, ``9`` -> 10, ``1234`` -> 1400, ``2000`` -> 2500."""
    step = max(1, int(nice_step(max(n, 1) / 4)))
    return (n // step + 1) * step


def stepped_bounds(lo: float, hi: float) -> tuple[float, float]:
    """``[lo, hi]`` widened outwards to multiples of a nice step of an eighth to a twentieth of the
    span: the bounds stay put while the data move inside them. ``(256, 1234)`` -> ``(200, 1300)``."""
    span = hi - lo or max(1.0, abs(hi))
    step = nice_step(span / 8)
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


class Caption(QGraphicsSimpleTextItem):
    """A plot's title on a backing of the chart's background colour: the step cursor passes behind it."""

    backing = QColor(255, 255, 255, 220)

    def boundingRect(self):
        return super().boundingRect().adjusted(-3, -1, 3, 1)

    def paint(self, painter, option, widget=None) -> None:
        painter.fillRect(self.boundingRect(), self.backing)
        super().paint(painter, option, widget)


class TimelineChart(StepChart):
    """`step_clicked(k)` when the user clicks a plot."""

    def __init__(self, parent: QWidget | None = None, *, sliced: bool = False) -> None:
        colors = (("#0550ae", "#1a7f37", "#bc4c00"), ("#58a6ff", "#7ee787", "#ffa657"))  # light, dark
        super().__init__("timeline_chart", len(SERIES), colors, axis_width=52, sliced=True, parent=parent)
        self.ci.layout.setSpacing(2)
        self.captions: list[Caption] = []
        self.marks: list[tuple[pg.PlotItem, pg.InfiniteLine]] = []  # lines at steps the timeline points out
        self._log = False
        self._live = False  # steps still arriving: ranges grow in steps (`live_limit`, `stepped_bounds`)
        self._x_limit: int | None = None  # the right end of the step axis last set
        self._mode = "auto"
        self._shown: list[int] = []
        if not sliced:
            self.finish_build()

    def _finish_parts(self):
        for p, curve, title in zip(self.plots, self.curves, TITLES):
            label = Caption(title)  # a fixed caption inside the plot, top left:
            label.setParentItem(p.vb)  # no rotated axis label squeezed into a short plot
            label.setZValue(10)
            self.captions.append(label)
            index = len(self.captions) - 1
            p.vb.sigResized.connect(lambda vb, i=index: self._fit_y(i))
            p.vb.sigResized.connect(lambda vb: self._place_captions())
            # no grid: it costs more than everything else when the cursor moves
            p.setClipToView(True)
            p.setDownsampling(auto=True, mode="peak")
            curve.curve.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # cursor moves
            for ax in ("left", "bottom"):  # do not redraw the curve or the axes
                p.getAxis(ax).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            yield
        self._shown = [0, 1, 2]
        self._apply_colors()
        self._shown = []
        yield
        self._relayout()

    def set_series(self, length: list[int], vocab: list[float], count: list[int], middle: str | None = None, *,
                   live: bool = False) -> None:
        """Per-step series (index = step 0..N); the count at step 0 is left out (no merge).
        `middle`: the middle plot's caption when it shows another series than the vocabulary size.
        `live`: more steps are coming (the ranges grow in steps, with headroom)."""
        caption = middle or TITLES[1]
        if self.captions[1].text() != caption:
            self.captions[1].setText(caption)
        n = len(length) - 1
        self._n = n
        self._live = live
        x = np.arange(n + 1, dtype=np.float64)
        self.curves[0].setData(x, np.asarray(length, dtype=np.float64))
        self.curves[1].setData(x, np.asarray(vocab, dtype=np.float64))
        if n > 0:
            self.curves[2].setData(x[1:], np.maximum(np.asarray(count[1:], dtype=np.float64), 1.0))
        else:
            self.curves[2].setData([], [])
        limit = live_limit(n) if live else max(1, n)
        if limit != self._x_limit:  # the bottom axes redraw only when it moves
            self._x_limit = limit
            self._apply_x_range()
        self._fit_all()

    def _apply_x_range(self) -> None:
        """The step axis on every plot, those on screen last: linked plots line up by their widths in
        pixels, and a hidden plot keeps a stale width that would cut the end off the range shown."""
        if self._x_limit is None:
            return
        shown = self.shown_plots()
        for p in [p for p in self.plots if p not in shown] + shown:
            p.setXRange(0, self._x_limit, padding=0.02)

    @property
    def x_range(self) -> tuple[float, float]:
        """The steps on screen (first, last), padding included."""
        lo, hi = (self.shown_plots() or self.plots)[0].vb.viewRange()[0]
        return lo, hi

    def set_cursor(self, k: int) -> None:
        super().set_cursor(k)
        self._place_captions()

    def set_marks(self, marks: list[tuple[int, str]]) -> None:
        """A labelled dashed vertical line at each ``(step, label)`` on every plot (SuperBPE:
        "superwords from here" at the transition)."""
        for p, line in self.marks:
            p.removeItem(line)
        self.marks = []
        pen = pg.mkPen(MARK_COLOR, width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine)
        for k, label in marks:
            for p in self.plots:
                line = pg.InfiniteLine(pos=k, angle=90, movable=False, pen=pen, label=f"{label} →",
                                       labelOpts={"position": 0.5, "color": MARK_COLOR,
                                                  "anchors": [(1, 0.5), (1, 0.5)]})  # left of the line
                p.addItem(line, ignoreBounds=True)
                self.marks.append((p, line))

    def _place_captions(self) -> None:
        """Captions in the top corner away from the cursor (top right while it is in the left half)."""
        right = self.cursor_step <= self._n / 2
        for p, label in zip(self.plots, self.captions):
            x = p.vb.width() - label.boundingRect().width() - 8 if right else 8.0
            label.setPos(max(6.0, x), 2)

    def _fit_all(self) -> None:
        for i in range(len(self.plots)):
            self._fit_y(i)

    def _fit_y(self, i: int) -> None:
        """Y range of plot i with a band on top for its caption, so no curve runs under the caption."""
        _x, y = self.curves[i].getData()  # display coordinates (log10 in log scale)
        vb = self.plots[i].vb
        if y is None or len(y) == 0 or vb.height() <= 0:
            return
        finite = y[np.isfinite(y)]
        if len(finite) == 0:
            return
        lo, hi = float(finite.min()), float(finite.max())
        if self._live:
            lo, hi = stepped_bounds(lo, hi)
        span = hi - lo or max(1.0, abs(hi))
        band = min(0.6, (self.captions[i].boundingRect().height() + 6) / vb.height())  # share of the height
        wanted = (lo - 0.03 * span, hi + span * (band + 0.03) / (1 - band))
        if tuple(vb.viewRange()[1]) != wanted:  # the left axis redraws only when the range moves
            vb.setYRange(*wanted, padding=0)

    # -- which plots: "auto" (as many as fit), "all", or one of SERIES -----------------------

    def set_mode(self, mode: str) -> None:
        self._mode = mode
        self._relayout()

    @property
    def shown(self) -> list[int]:
        """Indices of the plots on screen (0 length, 1 vocabulary, 2 winning count)."""
        return list(self._shown)

    def _wanted(self) -> list[int]:
        if self._mode == "all":
            return [0, 1, 2]
        if self._mode in SERIES:
            return [SERIES.index(self._mode)]
        h = self.height()
        return [0, 1, 2] if h >= AUTO_ALL_PX else [0, 2] if h >= AUTO_TWO_PX else [0]

    def _relayout(self) -> None:
        wanted = self._wanted()
        if wanted == self._shown and all(self.plots[i] in self.ci.items for i in wanted):
            return
        for p in self.plots:
            if p in self.ci.items:
                self.ci.removeItem(p)
        for row, i in enumerate(wanted):
            p = self.plots[i]
            self.ci.addItem(p, row=row, col=0)
            last = row == len(wanted) - 1
            p.getAxis("bottom").setStyle(showValues=last)
            p.setLabel("bottom", "Step k" if last else None)
            if not last:
                p.getAxis("bottom").showLabel(False)
        self._shown = wanted
        self.fit_rearranged()
        self._apply_x_range()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if getattr(self, "_mode", None) == "auto" and len(getattr(self, "cursors", ())) == len(SERIES):
            self._relayout()

    def shown_plots(self) -> list[pg.PlotItem]:
        return [self.plots[i] for i in self._shown]

    def set_log_scale(self, on: bool) -> None:
        self._log = bool(on)
        self.plots[0].setLogMode(False, self._log)
        self.plots[2].setLogMode(False, self._log)
        self._fit_all()

    @property
    def log_scale(self) -> bool:
        return self._log

    def _apply_colors(self):
        colors, fg = super()._apply_colors()
        backing = QColor(self.backgroundBrush().color())
        backing.setAlpha(220)
        for label, c in zip(getattr(self, "captions", ()), colors):
            label.setBrush(pg.mkColor(c))
            label.backing = backing
            label.update()
        return colors, fg

    def export_png(self, path: str) -> bool:
        return save_image(self.grab(), path)


class UnigramChart(StepChart):
    """Vocabulary size and corpus log-likelihood per round; `step_clicked(k)` (k a round)."""

    def __init__(self, parent: QWidget | None = None, *, sliced: bool = False) -> None:
        colors = (("#1a7f37", "#8250df"), ("#7ee787", "#d2a8ff"))  # light, dark
        super().__init__("unigram_chart", 2, colors, axis_width=64, curve_options={"symbol": "o", "symbolSize": 5},
                         sliced=sliced, parent=parent)

    def _finish_parts(self):
        for p, title in zip(self.plots, UNIGRAM_TITLES):
            p.setTitle(title, size="9pt")
        self.plots[-1].setLabel("bottom", "Round k")
        yield
        self._apply_colors()
        self._beside = False
        self._arrange()

    def _arrange(self) -> None:
        """The plots one above the other, or side by side in a short, wide chart (stacked, each
        would keep only its title and axis: no room for the curve)."""
        beside = self.height() < BESIDE_BELOW_PX and self.width() >= 2 * self.height()
        if beside == self._beside:
            return
        for p in self.plots:
            self.ci.removeItem(p)
        for i, (p, title) in enumerate(zip(self.plots, UNIGRAM_TITLES)):
            self.ci.addItem(p, row=0 if beside else i, col=i if beside else 0)
            p.setTitle(f"{title} by round k" if beside else title, size="9pt")  # no axis label: room for the curve
            last = not beside and i == len(self.plots) - 1
            p.setLabel("bottom", "Round k" if last else None)
            p.getAxis("bottom").showLabel(last)
        self._beside = beside
        self.fit_rearranged()
        self._apply_colors()  # the titles' colour

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if hasattr(self, "_beside"):  # built
            self._arrange()

    def set_timeline(self, tl) -> None:
        vocab, ll, _ = unigram_series(tl) if tl is not None else ([], [], [])
        x = np.arange(len(vocab), dtype=np.float64)
        self._n = max(0, len(vocab) - 1)
        self.curves[0].setData(x, np.asarray(vocab, dtype=np.float64))
        self.curves[1].setData(x, np.asarray(ll, dtype=np.float64))
        for p in self.plots:
            p.setXRange(0, max(1, self._n), padding=0.04)

    def _apply_colors(self):
        colors, fg = super()._apply_colors()
        for p, curve, c in zip(self.plots, self.curves, colors):
            curve.setSymbolBrush(pg.mkBrush(c))
            curve.setSymbolPen(pg.mkPen(c))
            p.titleLabel.setText(p.titleLabel.text, color=fg)
        return colors, fg
