"""`LessonPanel`: the guided lesson on screen: title, step i/n, a large caption, Prev/Next, and a
small figure (bars, a table or a curve) with the lesson's numbers. The caption is never cut: the
panel asks for the room of its first lines and scrolls the rest. In presenter mode a table
spans the panel's width and grows while it still fits the room it has (its font at least the
presenter's size).

The panel only displays; `tokviz.app.classroom.lesson_runner.LessonRunner` decides what each step shows and
calls `show_lesson`, `show_step`, `show_figure` and `set_busy`. Buttons emit `next_requested`,
`prev_requested` and `stop_requested`.

What this leaves out: the lesson files and figures' maths (``tokviz.core.lessons.files``,
``tokviz.core.lessons.figures``).
"""

from __future__ import annotations

import html
from math import log10

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTextBrowser,
    QWidget,
)

from tokviz.core.display.tokens import undrawn_marked
from tokviz.core.lessons.figures import Figure

from .base import Panel, muted_color
from .widgets import STRETCH, hbox, vbox

CAPTION_SCALE = 1.45  # captions are read from the back of a room
TITLE_SCALE = 1.2
NO_LESSON = "Pick a lesson from Help ▸ Lessons: each one loads its corpus and panels and explains one idea per step."
BAR_COLOR = "#4c78a8"
MARK_COLOR = "#e45756"
MAX_UPRIGHT_BARS = 5  # more bars than this are drawn horizontally (their labels stay readable)
LOG_TICKS = (50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
TABLE_SCALE = 1.2
TABLE_GROWTH = (1.5, 1.25)  # presenting: the table's font times these, the largest that fits its room
FIGURE_MIN_HEIGHT = 56  # a few table rows or a small chart: on a short screen the caption comes first
CAPTION_FIT_LINES = 3  # the panel asks for room for this many caption lines; a longer caption scrolls
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum"
MIN_HEIGHT = 160  # with a short caption; a longer one makes the panel taller (`_fit_caption`)
PRESENTING_SHARE = 0.36  # of the screen's width for the panel in presenter mode (tables stay legible)


class LessonPanel(Panel):
    """The current lesson's caption, step counter, buttons and figure."""

    PANEL_ID = "lesson"
    TITLE = "Lesson"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    next_requested = Signal()
    prev_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.figure: Figure | None = None
        self._big_table = False  # presenter mode: the table spans the panel and grows to fill it
        self.title = QLabel("Lessons", objectName="lesson_title", wordWrap=True)
        self.counter = QLabel("", objectName="lesson_counter")
        self.counter.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.caption = QLabel(NO_LESSON, objectName="lesson_caption", wordWrap=True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.caption.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.caption.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.caption.setMinimumWidth(120)
        # the caption scrolls only when even the room it may take from its neighbours is too short
        self.caption_scroll = QScrollArea(objectName="lesson_caption_scroll", widgetResizable=True)
        self.caption_scroll.setWidget(self.caption)
        self.caption_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.caption_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.caption_scroll.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.caption_scroll.viewport().setAutoFillBackground(False)
        self.caption.setAutoFillBackground(False)
        self.prev_button = QPushButton("◀ Back", objectName="lesson_prev")
        self.next_button = QPushButton("Next ▶", objectName="lesson_next")
        self.stop_button = QPushButton("End lesson", objectName="lesson_stop")
        self.prev_button.setToolTip("Previous step")
        self.next_button.setToolTip("Next step")
        self.prev_button.clicked.connect(self.prev_requested)
        self.next_button.clicked.connect(self.next_requested)
        self.stop_button.clicked.connect(self.stop_requested)

        self.table = QTextBrowser(objectName="lesson_table")
        self.table.setOpenLinks(False)
        self._plot = None  # pyqtgraph: made for the first chart a lesson shows (`plot`)
        self.figure_title = QLabel("", objectName="lesson_figure_title", wordWrap=True)
        self.figure_stack = QStackedWidget(objectName="lesson_figure")
        self.figure_stack.addWidget(self.table)
        self.figure_stack.setMinimumHeight(FIGURE_MIN_HEIGHT)

        self._spacer = QWidget()  # takes the room when there is no figure (the caption stays on top)
        vbox(self, hbox((self.title, 1), self.counter), self.caption_scroll,
             hbox(self.prev_button, self.next_button, STRETCH, self.stop_button), self.figure_title,
             (self.figure_stack, 1), (self._spacer, 1), margins=8)
        self.setMinimumSize(220, MIN_HEIGHT)
        self._update_fonts()
        self.show_lesson(None)

    @property
    def plot(self):
        """The chart of bar and curve figures (a pyqtgraph `PlotWidget`, made on first use)."""
        if self._plot is None:
            import pyqtgraph as pg

            from .heatmaps.plot_style import style_plot

            self._plot = pg.PlotWidget(objectName="lesson_plot")
            self._plot.setMenuEnabled(False)
            self._plot.setMouseEnabled(x=False, y=False)
            self._plot.hideButtons()
            self._plot.showGrid(x=False, y=True, alpha=0.25)
            style_plot(self._plot, self.palette())
            self.figure_stack.addWidget(self._plot)
        return self._plot

    # -- what the runner calls --------------------------------------------------------------

    def show_lesson(self, title: str | None, n_steps: int = 0) -> None:
        """A new lesson (None: no lesson; the panel explains how to start one)."""
        self.title.setText(title or "Lessons")
        self._n = n_steps
        if title is None:
            self.counter.setText("")
            self.caption.setText(NO_LESSON)
            self._fit_caption()
            self.show_figure(None)
        for b in (self.prev_button, self.next_button, self.stop_button):
            b.setVisible(title is not None)

    def show_step(self, index: int, n_steps: int, caption: str) -> None:
        self.counter.setText(f"Part {index + 1} of {n_steps}")  # "step" is the timeline's k only
        self.caption.setText(undrawn_marked(caption))  # no empty boxes where no font has the glyph
        self._fit_caption()
        self.prev_button.setEnabled(index > 0)
        self.next_button.setEnabled(index + 1 < n_steps)
        self.next_button.setText("Next ▶" if index + 1 < n_steps else "Done")

    def set_presenting(self, on: bool) -> None:
        """Presenter mode shows the caption in its own bar: here only the figure and the buttons,
        wide enough for a table row at the presenter's font size."""
        self.caption_scroll.setVisible(not on)
        self.caption.setVisible(not on)
        self.title.setVisible(not on)
        self.stop_button.setVisible(not on and self._n > 0)
        self._big_table = on
        screen = self.screen().availableGeometry().width() if self.screen() is not None else 1280
        self.setMinimumWidth(int(screen * PRESENTING_SHARE) if on else 220)
        self.show_figure(self.figure)  # the table's width follows the mode
        self._update_fonts()

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While a step is being prepared (training, loading) the buttons wait; `show_step` ends it."""
        if busy:
            self.counter.setText(message or "Working…")
            self.prev_button.setEnabled(False)
            self.next_button.setEnabled(False)

    def show_figure(self, figure: Figure | None) -> None:
        self.figure = figure
        visible = figure is not None and (bool(figure.rows) or bool(figure.values) or bool(figure.y))
        self.figure_stack.setVisible(visible)
        self._spacer.setVisible(not visible)
        self.figure_title.setVisible(figure is not None)
        if figure is None:
            return
        self.figure_title.setText(undrawn_marked(figure.title + (f" — {figure.note}" if figure.note else "")))
        if figure.kind == "table":
            self.table.setHtml(self._table_html(figure))
            self.figure_stack.setCurrentWidget(self.table)
            if self._big_table:
                self._fit_table()
        elif visible:
            self.figure_stack.setCurrentWidget(self.plot)
            self._draw_plot(figure)

    # -- drawing ------------------------------------------------------------------------------

    def _table_html(self, f: Figure) -> str:
        muted = muted_color(self.palette()).name()
        head = "".join(f"<th align='left' style='color:{muted};padding:2px 10px 2px 0'>{html.escape(h)}</th>"
                       for h in f.labels)
        cell = "<td style='padding:2px 10px 2px 0' nowrap>{}</td>"
        rows = "".join("<tr>" + "".join(cell.format(html.escape(undrawn_marked(c))) for c in r) + "</tr>"
                       for r in f.rows)
        width = " width='100%'" if self._big_table else ""  # presenting: columns spread over the panel
        return f"<table cellspacing='0'{width}><tr>{head}</tr>{rows}</table>"

    def _draw_plot(self, f: Figure) -> None:
        import pyqtgraph as pg

        p = self.plot
        p.clear()
        text = self.palette().color(QPalette.ColorRole.Text)
        font = QFont(self.font())
        axis_b, axis_l = p.getAxis("bottom"), p.getAxis("left")
        for axis in (axis_b, axis_l):
            axis.setTickFont(font)
        p.setLabel("left", f.y_label)
        p.setLabel("bottom", f.x_label)
        p.setLogMode(x=False, y=False)
        axis_b.setTicks(None)
        axis_l.setTicks(None)

        def add_label(words: str, x: float, y: float, anchor: tuple[float, float]) -> None:
            label = pg.TextItem(undrawn_marked(words), color=text, anchor=anchor)
            label.setFont(font)
            label.setPos(x, y)
            p.addItem(label)

        if f.kind == "bars" and len(f.values) > MAX_UPRIGHT_BARS:  # many labels: horizontal bars
            ys = list(range(len(f.values)))
            p.setLabel("left", "")
            p.setLabel("bottom", f.y_label)
            p.addItem(pg.BarGraphItem(x0=0, y=ys, height=0.7, width=list(f.values), brush=BAR_COLOR))
            axis_l.setTicks([[(y, label) for y, label in zip(ys, f.labels)]])
            top = max(f.values)
            for y, v in zip(ys, f.values):
                add_label(_number(v), v, y, (0.0, 0.5))
            p.setYRange(-0.6, len(ys) - 0.4, padding=0)
            p.setXRange(0, top * 1.15, padding=0)
        elif f.kind == "bars":
            xs = list(range(len(f.values)))
            p.addItem(pg.BarGraphItem(x=xs, height=list(f.values), width=0.6, brush=BAR_COLOR))
            axis_b.setTicks([[(x, label) for x, label in zip(xs, f.labels)]])
            top = max(f.values) if f.values else 1
            for x, v in zip(xs, f.values):
                add_label(_number(v), x, v, (0.5, 1.0))
            p.setXRange(-0.6, len(xs) - 0.4, padding=0)
            p.setYRange(0, top * 1.2, padding=0)
        else:
            scale = log10 if f.log_x else float  # where a value sits on the x axis
            if f.log_x:
                p.setLogMode(x=True, y=False)
                axis_b.setTicks([[(log10(t), f"{t:,}") for t in LOG_TICKS if min(f.x) <= t <= max(f.x) * 1.05]])
            p.plot(list(f.x), list(f.y), pen=pg.mkPen(BAR_COLOR, width=3), symbol="o", symbolSize=5,
                   symbolBrush=BAR_COLOR, symbolPen=None)
            if f.marker is not None and 0 <= f.marker < len(f.x):
                x, y = f.x[f.marker], f.y[f.marker]
                p.plot([x], [y], pen=None, symbol="o", symbolSize=14, symbolBrush=MARK_COLOR, symbolPen=None)
                right = scale(x) > (scale(min(f.x)) + scale(max(f.x))) / 2
                what = f"{y:,.0f} tokens" if f.log_x else f"{y:,.2f} {f.y_label}"
                add_label(f"{x:,.0f} → {what}", scale(x), y, (1.0 if right else 0.0, 1.2))
            p.enableAutoRange()

    # -- fonts and theme --------------------------------------------------------------------

    def _update_fonts(self) -> None:
        base = self.font()
        self.caption.setFont(_scaled(base, CAPTION_SCALE))
        self.title.setFont(_scaled(base, TITLE_SCALE, bold=True))
        self._fit_caption()
        self._fit_table()

    def _fit_caption(self) -> None:
        """The caption as tall as its wrapped lines at the panel's width: the panel's minimum asks
        the neighbouring docks for up to `CAPTION_FIT_LINES` lines of room rather than cutting the
        last line off; a longer caption scrolls (its scroll bar in sight)."""
        layout = self.layout()
        if layout is None:
            return
        m = layout.contentsMargins()
        width = self.width() - m.left() - m.right()
        self.caption.setMinimumHeight(0)  # a label's height for a width is at least its minimum
        self.caption.setMaximumHeight(QWIDGETSIZE_MAX)
        need = self.caption.heightForWidth(width) if self.caption_scroll.isVisibleTo(self) and width > 0 else 0
        most = CAPTION_FIT_LINES * self.caption.fontMetrics().lineSpacing()
        if need > most:  # it scrolls: the scroll bar takes some of the width
            need = self.caption.heightForWidth(width - self.caption_scroll.verticalScrollBar().sizeHint().width())
        self.caption.setFixedHeight(max(need, 1))  # its lines, whatever the scroll area's height
        self.caption_scroll.setMinimumHeight(min(need, most))
        self.caption_scroll.setMaximumHeight(max(need, 1))
        layout.invalidate()
        self.setMinimumHeight(max(MIN_HEIGHT, layout.totalMinimumSize().height()))

    def _fit_table(self) -> None:
        """The table's font: `TABLE_SCALE` times the panel's; presenting, the largest of
        `TABLE_GROWTH` times that at which the whole table fits its room (a short table fills it)."""
        base = self.font()
        room = self.table.viewport().size()
        if self._big_table and self.table.isVisible() and not room.isEmpty():
            doc = self.table.document()
            for growth in TABLE_GROWTH:
                self.table.setFont(_scaled(base, TABLE_SCALE * growth))
                doc.setTextWidth(room.width())
                if doc.idealWidth() <= room.width() and doc.size().height() <= room.height():
                    return
        self.table.setFont(_scaled(base, TABLE_SCALE))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit_caption()
        if self._big_table:
            self._fit_table()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "_plot", None) is not None:
            from .heatmaps.plot_style import style_plot

            style_plot(self._plot, self.palette())
            if self.figure is not None:
                self.show_figure(self.figure)


def _scaled(base: QFont, scale: float, *, bold: bool = False) -> QFont:
    """`base` times `scale` (in points, or pixels for a pixel-sized font), bold or not."""
    f = QFont(base)
    if base.pointSizeF() > 0:
        f.setPointSizeF(base.pointSizeF() * scale)
    else:
        f.setPixelSize(round(base.pixelSize() * scale))
    f.setBold(bold)
    return f


def _number(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:.2f}"

