"""`GrowthTab`: each metric at steps 0..k of one timeline (sampled), so a teacher can show where
more vocabulary stops paying off: the curve of the chosen metric on the corpus."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget

from tokviz.core import Cancelled
from tokviz.core.compare import METRIC_KEYS, ModelSpec, iter_compare
from tokviz.core.compare.report import growth_steps
from tokviz.engine.tables.compare_models import METRIC_TIPS

from ..widgets import vbox
from .plots import ThemedPlot, model_color
from .tab import CompareTab

GROWTH_POINTS = 40


def measure_growth(spec, text: str, *, should_stop, progress):
    """The metrics of `spec`'s timeline at up to `GROWTH_POINTS` steps on `text`: [(k, Metrics)]."""
    timeline = spec.open()
    steps = growth_steps(timeline.last_step, GROWTH_POINTS)
    specs = [ModelSpec(f"{spec.label}@{k}", lambda: timeline, k) for k in steps]
    out = []
    for e in iter_compare(text, specs):
        if should_stop():
            raise Cancelled()
        if e.result is not None and e.result.metrics is not None:
            out.append((steps[e.model_index], e.result.metrics))
            progress(f"Step {steps[e.model_index]:,}", (e.model_index + 1) / len(steps))
    return out


class GrowthTab(CompareTab):
    RUN_TEXT = "Measure growth"
    HINT = "Pick a trained model or a tokenizer with merges: each metric at every step, on the corpus."

    def __init__(self, specs: list, corpus_text, parent: QWidget | None = None) -> None:
        super().__init__("compare_growth", specs, parent)
        self.corpus_text = corpus_text  # () -> str
        self.metric_box = QComboBox(objectName="compare_growth_metric")
        for key in METRIC_KEYS:
            if key not in ("chars", "bytes", "words"):
                self.metric_box.addItem(key, key)
                self.metric_box.setItemData(self.metric_box.count() - 1, METRIC_TIPS[key], Qt.ItemDataRole.ToolTipRole)
        self.metric_box.setCurrentIndex(self.metric_box.findData("chars_per_token"))
        self.metric_box.currentIndexChanged.connect(self._draw)
        self.chart = ThemedPlot("compare_growth_chart")
        p = self.chart.getPlotItem()
        p.setLabel("bottom", "step k (the first k merges)")
        self.curve = p.plot([], [], pen=pg.mkPen(model_color(0), width=2), symbol="o", symbolSize=5,
                            symbolBrush=model_color(0))
        vbox(self, self.controls(self.metric_box), self.progress, self.status, (self.chart, 1), margins=0, spacing=4)

    def job(self, picked):
        text = self.read_text(self.corpus_text, "growth is measured on it")
        return None if text is None else (measure_growth, picked[0], text)

    def show_result(self, result) -> str:
        self._draw()
        if not result:
            return "Nothing measured."
        return f"{len(result)} steps measured, from step {result[0][0]:,} to {result[-1][0]:,}."

    def points(self, key: str) -> tuple[list[int], list[float]]:
        xs, ys = [], []
        for k, m in self.result or []:
            v = getattr(m, key)
            if v is not None:
                xs.append(k)
                ys.append(float(v))
        return xs, ys

    def _draw(self, *_args) -> None:
        key = self.metric_box.currentData()
        self.curve.setData(*self.points(key))
        self.chart.getPlotItem().setLabel("left", key)
