"""A chart whose plots move in its layout (side by side or stacked, more or fewer rows) keeps them
inside its view: the last steps are never cut off at the right edge."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from tokviz.panels.timeline.chart import AUTO_ALL_PX, BESIDE_BELOW_PX, TimelineChart, UnigramChart


def inside(chart) -> None:
    """Every shown plot lies within the view (its layout at most the view's size)."""
    box = chart.ci.geometry()
    assert box.width() <= chart.width() + 0.5, f"layout {box.width():.1f} px wide in a {chart.width()} px view"
    for plot in chart.plots:
        if plot.scene() is not None and plot.isVisible():
            assert plot.geometry().right() <= chart.width() + 0.5


def show(qtbot, chart, width: int, height: int) -> None:
    qtbot.addWidget(chart)
    chart.resize(width, height)
    chart.show()
    qtbot.waitExposed(chart)


@pytest.mark.parametrize("sizes", [[(620, 128), (427, 658)], [(427, 658), (620, 128), (300, 600)]])
def test_unigram_rounds_chart_fits_after_its_plots_move(qtbot, sizes):
    chart = UnigramChart()
    show(qtbot, chart, *sizes[0])
    chart.curves[0].setData(np.arange(8.0), np.linspace(3500, 500, 8))
    chart.curves[1].setData(np.arange(8.0), np.linspace(-17_700, -19_250, 8))
    for w, h in sizes[1:]:
        assert (h < BESIDE_BELOW_PX) != (chart.height() < BESIDE_BELOW_PX)  # the plots move
        chart.resize(w, h)
        QApplication.processEvents()  # any layout request the move posted, delivered
        inside(chart)


def test_timeline_chart_fits_when_auto_mode_adds_rows(qtbot):
    chart = TimelineChart()
    show(qtbot, chart, 620, 120)
    chart.set_mode("auto")
    assert chart.shown == [0]
    chart.resize(380, AUTO_ALL_PX + 40)
    QApplication.processEvents()
    assert chart.shown == [0, 1, 2]
    inside(chart)
