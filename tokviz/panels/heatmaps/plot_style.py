"""Styling shared by the plots of the heatmap, embedding and lesson panels: axes painted from a
cache, the palette's colours on a line plot, and status labels that wrap onto a fixed number of
lines (so the plot above them does not jump as the text changes)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QGraphicsItem, QLabel


def cache_axes(*axes: pg.AxisItem) -> None:
    """Paint axes from a pixmap cache: replaying an axis's picture (tick texts, grid lines) costs
    milliseconds on every repaint of the plot, e.g. each live update of a curve or image."""
    for axis in axes:
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


def wrapping_label(label: QLabel, lines: int = 2) -> QLabel:
    """Word-wrap `label` and keep room for `lines` lines."""
    label.setWordWrap(True)
    label.setMinimumHeight(label.fontMetrics().lineSpacing() * lines + 4)
    return label


def style_plot(widget: pg.PlotWidget, palette: QPalette) -> None:
    """Give a line plot the palette's colours (background, axes)."""
    widget.setBackground(palette.color(QPalette.ColorRole.Base))
    text = palette.color(QPalette.ColorRole.Text)
    item = widget.getPlotItem()
    if item is None:  # (a palette change during construction)
        return
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(text)
        axis.setTextPen(text)
