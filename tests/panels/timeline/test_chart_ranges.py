"""The timeline chart's ranges while merges arrive: they always contain the data and grow in steps
(so the axes are not redrawn on every batch); the finished chart fits its data."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.qt_fixtures import append_steps
from tokviz.core import TrainSettings
from tokviz.core.bpe.timeline import train
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.panels.timeline.chart import TimelineChart, live_limit, stepped_bounds
from tokviz.panels.timeline.panel import TimelinePanel

WAIT = 10_000


@pytest.mark.parametrize(("n", "limit"), [(0, 1), (1, 2), (9, 10), (10, 12), (1234, 1400), (1999, 2000), (2000, 2500)])
def test_live_limit_is_the_next_nice_step_above_n(n, limit):
    assert live_limit(n) == limit


@pytest.mark.parametrize(("lo", "hi", "bounds"), [(256, 1234, (200, 1300)), (0, 7, (0, 7)), (5, 5, (5, 5)),
                                                  (-3.3, 2.1, (-3.5, 2.5))])
def test_stepped_bounds_widen_to_nice_steps(lo, hi, bounds):
    assert stepped_bounds(lo, hi) == pytest.approx(bounds)


def fake_series(n_max: int):
    k = np.arange(n_max + 1)
    length = (30_000 - 9 * k - 2000 * np.log1p(k)).astype(int)
    vocab = 256 + k
    count = (50_000 / (1 + k)).astype(int)
    return length, vocab, count


def test_live_ranges_contain_the_data_and_grow_in_steps(qtbot):
    chart = TimelineChart()
    qtbot.addWidget(chart)
    chart.set_mode("all")
    chart.resize(700, 500)
    chart.show()
    qtbot.waitExposed(chart)
    length, vocab, count = fake_series(600)
    x_ranges, y_ranges = set(), [set() for _ in chart.plots]
    batches = range(2, 601, 3)
    for n in batches:
        chart.set_series(list(length[:n + 1]), list(vocab[:n + 1]), list(count[:n + 1]), live=True)
        lo, hi = chart.x_range
        assert lo <= 0 and hi >= n + 0.5  # the latest step is inside, not on the edge
        x_ranges.add((lo, hi))
        for i, plot in enumerate(chart.plots):
            _x, y = chart.curves[i].getData()
            y_lo, y_hi = plot.vb.viewRange()[1]
            assert y_lo <= y.min() and y.max() <= y_hi, f"plot {i} at step {n}"
            y_ranges[i].add((y_lo, y_hi))
    assert len(x_ranges) <= len(batches) // 5, "the step axis moved on most batches"
    for i, ranges in enumerate(y_ranges):
        assert len(ranges) <= len(batches) // 3, f"plot {i}: the value axis moved on most batches"
    chart.set_series(list(length), list(vocab), list(count), live=False)  # finished: fitted
    lo, hi = chart.x_range
    assert lo < 0 and 600 < hi <= 600 * 1.03


@pytest.fixture(scope="module")
def long_timeline():
    return train(TrainSettings(units="bytes", split="gpt2", merges=80), texts=[sample("english-prose").read()])


def test_the_panel_chart_has_headroom_while_training_and_fits_when_finished(qtbot, long_timeline):
    model = StepModel()
    panel = TimelinePanel(model)
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    qtbot.waitExposed(panel)
    panel.tabs.setCurrentWidget(panel.chart.parentWidget())
    chart = panel.chart.chart()
    run = replace(long_timeline, steps=[], finished=False)
    model.set_timeline(run, source="test")
    append_steps(model, long_timeline.steps[:53])

    def drawn(n: int) -> bool:
        x, _y = chart.curves[0].getData()
        return x is not None and len(x) == n + 1

    qtbot.waitUntil(lambda: drawn(53), timeout=WAIT)
    assert chart.x_range[1] >= live_limit(53) == 60
    append_steps(model, long_timeline.steps[53:])
    run.finished = True
    model.mark_finished(run)
    n = long_timeline.n_steps
    qtbot.waitUntil(lambda: drawn(n) and chart.x_range[1] <= n * 1.03, timeout=WAIT)
    assert chart.x_range[1] >= n
    for mode in ("length", "all", "count", "auto"):  # plots hidden and shown: the last step stays on screen
        chart.set_mode(mode)

        def fitted() -> bool:
            return all(lo < 0 and n < hi <= n * 1.03 for lo, hi in (chart.plots[i].vb.viewRange()[0]
                                                                    for i in chart.shown))

        qtbot.waitUntil(fitted, timeout=WAIT)
