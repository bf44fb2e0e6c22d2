"""What every plot of the Compare panel shares: one colour per model, the palette's colours and the
widget's font on pyqtgraph's axes and legend, and `ThemedPlot`, a plot that follows both.

Model colours are Okabe & Ito's colour-blind-safe qualitative palette; `legible_color` moves one
lighter or darker until it stands out from the plot's background (3:1, WCAG's figure for
graphics), so a curve stays visible in the dark theme and orange stays visible on white.
pyqtgraph draws axis ticks in a font of its own: `apply_font` gives axes, labels and legend the
widget's font, so plots grow with the application's zoom and presenter mode.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QWidget

# Okabe & Ito's colour-blind-safe qualitative palette (no yellow: it vanishes on white)
MODEL_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#999999")
MIN_CONTRAST = 3.0  # against the background: WCAG's minimum for graphics


def model_color(i: int) -> str:
    return MODEL_COLORS[i % len(MODEL_COLORS)]


def luminance(c: QColor) -> float:
    """WCAG relative luminance of `c` (0 black .. 1 white)."""
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 .. 21).

    >>> round(contrast(QColor("black"), QColor("white")), 1)
    21.0
    """
    la, lb = sorted((luminance(a), luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def legible_color(color: str | QColor, background: QColor, ratio: float = MIN_CONTRAST) -> QColor:
    """`color`, darkened on a light background or lightened on a dark one until its contrast with
    `background` reaches `ratio` (same hue: the legend still matches the model list's swatches)."""
    c = QColor(color)
    dark_bg = luminance(background) < 0.18
    h, s, lightness, a = c.getHslF()
    while contrast(c, background) < ratio and (lightness < 1.0 if dark_bg else lightness > 0.0):
        lightness = min(1.0, lightness + 0.04) if dark_bg else max(0.0, lightness - 0.04)
        c = QColor.fromHslF(max(h, 0.0), s, lightness, a)
    return c


def model_pen_color(i: int, background: QColor) -> QColor:
    """Model `i`'s colour as drawn on `background`."""
    return legible_color(model_color(i), background)


def apply_palette(widget: pg.PlotWidget, legend=None) -> None:
    """Background, axes, title and legend of a plot from the widget's palette (light or dark)."""
    pal = widget.palette()
    widget.setBackground(pal.color(pal.ColorRole.Base))
    fg = pal.color(pal.ColorRole.Text)
    item = widget.getPlotItem()
    for name in ("left", "bottom", "top"):
        ax = item.getAxis(name)
        ax.setPen(fg)
        ax.setTextPen(fg)
        ax.setLabel(ax.labelText, ax.labelUnits, **{**ax.labelStyle, "color": fg.name()})
    item.titleLabel.setAttr("color", fg.name())
    if legend is not None:
        legend.setLabelTextColor(fg)
        for _sample, label in legend.items:
            label.setText(label.text)
        bg = QColor(pal.color(pal.ColorRole.Base))
        bg.setAlpha(200)  # the labels stay legible over a curve
        legend.setBrush(pg.mkBrush(bg))


def apply_font(widget: pg.PlotWidget, legend=None) -> None:
    """The widget's font on the plot's axis ticks, axis labels, title and legend."""
    font = QFont(widget.font())
    size = f"{font.pointSizeF():g}pt" if font.pointSizeF() > 0 else f"{font.pixelSize()}px"
    item = widget.getPlotItem()
    fm_height = widget.fontMetrics().height()
    for name in ("left", "bottom", "top"):
        ax = item.getAxis(name)
        ax.setTickFont(font)
        ax.setStyle(tickTextOffset=max(3, fm_height // 4))
        ax.setLabel(ax.labelText, ax.labelUnits, **{**ax.labelStyle, "font-size": size})
    item.getAxis("bottom").setHeight(None)  # re-measured for the new font
    item.getAxis("left").setWidth(None)
    item.titleLabel.opts["size"] = size
    if item.titleLabel.text:
        item.setTitle(item.titleLabel.text)
    if legend is not None:
        legend.setLabelTextSize(size)
        for _sample, label in legend.items:
            label.setText(label.text)  # (the new size applies from the next text)


class ThemedPlot(pg.PlotWidget):
    """A plot without pyqtgraph's menus and buttons that follows the palette and the font."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.getPlotItem().setMenuEnabled(False)
        self.getPlotItem().hideButtons()
        self.legend = None
        apply_palette(self)
        apply_font(self)

    def add_legend(self, **kw):
        self.legend = self.getPlotItem().addLegend(**kw)
        apply_palette(self, self.legend)
        apply_font(self, self.legend)
        return self.legend

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if self.getPlotItem() is None:  # (an event during construction)
            return
        if event.type() == event.Type.PaletteChange:
            apply_palette(self, self.legend)
        elif event.type() == event.Type.FontChange:
            apply_font(self, self.legend)
