"""`NumberLens`: the token view's "Numbers" tab. For each tokenizer of the comparison, the numbers
1-1000 as a heatmap of how it cuts them (row: the hundreds, column: the last two digits; colour:
the lengths of the pieces, ``1+2`` for ``8|47``), and the user's own number as digit boxes with the
tokenizer's cuts drawn solid and the place-value cuts (groups of three from the right, as in
1,234,567) dashed over them, so a cut that does not line up with place value shows at a glance.

The cutting runs off the GUI thread (`DebouncedTaskEngine`), only while the tab is shown, and the
grids are kept per tokenizer and step. What it leaves out: the cutting itself
(`tokviz.core.explain.numbers`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPalette, QPen, QRegularExpressionValidator
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QScrollArea, QVBoxLayout, QWidget

from tokviz.core.explain.numbers import (
    GRID_COLUMNS,
    OTHER,
    PATTERNS,
    NumberGrid,
    NumberSplit,
    number_grid,
    split_number,
)
from tokviz.engine.tasks import DebouncedTaskEngine

DEFAULT_NUMBER = "1234567"
MAX_DIGITS = 40
SKIPPED_ROWS = ("chars", "words")  # the corpus baselines cut no number worth a heatmap


def row_sources(panel) -> list[tuple[str, object, int | None]]:
    """The token view's comparison rows a side tab follows: ``(title, tokenizer, step or None)``
    of each row with a tokenizer, the corpus baselines left out."""
    rows = panel.result.rows if panel.result is not None else []
    return [(r.spec.title, r.tokenizer, r.spec.step) for r in rows
            if r.spec.key not in SKIPPED_ROWS and r.tokenizer is not None]
# a colour per pattern: whole numbers in blues (darker: longer), cut ones in warm and green hues
PATTERN_COLORS = ("#c6dbef", "#6baed6", "#2171b5", "#08306b", "#fdd0a2", "#fd8d3c", "#d94801",
                  "#a1d99b", "#31a354", "#9e9ac8", "#e7298a", "#636363")
PIECE_FILLS = ("#ffe08a", "#9fd3ff")  # alternate token fills of the digit boxes
PLACE_VALUE_PEN = "#d62728"


@dataclass(frozen=True)
class LensRow:
    """One tokenizer's grid and its cut of the user's number."""

    title: str
    grid: NumberGrid
    split: NumberSplit
    key: tuple = ()  # (id of the tokenizer, step): which cached grid this is


def compute_rows(sources: list[tuple[str, object, int | None, NumberGrid | None]], number: str,
                 *, should_stop=lambda: False) -> list[LensRow]:
    """Each source ``(title, tokenizer, step, cached grid or None)`` as a `LensRow` (a worker's job)."""
    rows: list[LensRow] = []
    for title, tok, step, grid in sources:
        grid = grid if grid is not None else number_grid(tok, step=step, should_stop=should_stop)
        if any(r.key[0] == id(tok) and r.grid.splits == grid.splits for r in rows):
            continue  # the same tokenizer at its last step and "all merges": one picture
        rows.append(LensRow(title, grid, split_number(tok, number, step=step), (id(tok), step)))
    return rows


class NumberCanvas(QWidget):
    """Paints the rows (`set_rows`); hovering a cell emits `hovered(text)` naming the number and
    every tokenizer's cut of it."""

    hovered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("token_numbers_canvas")
        self.setMouseTracking(True)
        self.rows: list[LensRow] = []
        self._images: list[QImage] = []
        self._heat_rects: list[QRectF] = []

    def set_rows(self, rows: list[LensRow]) -> None:
        self.rows = rows
        self._images = [self._image(r.grid) for r in rows]
        self.updateGeometry()
        self.update()

    @staticmethod
    def _image(grid: NumberGrid) -> QImage:
        codes = grid.pattern_codes()
        image = QImage(GRID_COLUMNS, codes.shape[0], QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        for r in range(codes.shape[0]):
            for c in range(GRID_COLUMNS):
                v = codes[r, c]
                if not math.isnan(v):
                    image.setPixelColor(c, r, QColor(PATTERN_COLORS[int(v)]))
        return image

    # -- geometry ------------------------------------------------------------------------------

    def _metrics(self) -> tuple[int, int, int, float, float]:
        """(line height, label width, digit box width, cell width, cell height)."""
        fm = self.fontMetrics()
        line = fm.height()
        label_w = fm.horizontalAdvance("1000–1099") + 8
        box = fm.horizontalAdvance("0") * 2 + 6
        cell_w = max(2.0, (self.width() - label_w - 12) / GRID_COLUMNS)
        return line, label_w, box, cell_w, max(6.0, min(cell_w * 1.6, line * 0.9))

    def _row_height(self, row: LensRow) -> int:
        line, _, box, _, cell_h = self._metrics()
        return int(line * 1.4 + box + line * 0.6 + cell_h * (row.grid.last // GRID_COLUMNS + 1) + line)

    def sizeHint(self) -> QSize:
        line = self.fontMetrics().height()
        return QSize(640, sum(self._row_height(r) for r in self.rows) + 3 * line + 8)

    def minimumSizeHint(self) -> QSize:
        return QSize(320, self.sizeHint().height())

    # -- painting -------------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        line, label_w, box, cell_w, cell_h = self._metrics()
        y = 4
        self._heat_rects = []
        if not self.rows:
            p.setPen(text)
            p.drawText(self.rect().adjusted(8, 8, -8, -8), Qt.TextFlag.TextWordWrap,
                       "Type a text or load a tokenizer: each tokenizer of the comparison shows how it cuts numbers.")
            return
        bold = QFont(self.font())
        bold.setBold(True)
        for row, image in zip(self.rows, self._images, strict=True):
            s = row.grid.summary()
            p.setFont(bold)
            p.setPen(text)
            p.drawText(QPoint(4, y + line), row.title)
            title_w = p.fontMetrics().horizontalAdvance(row.title) + 16
            p.setFont(self.font())
            p.drawText(QPoint(4 + title_w, y + line),
                       f"{s['one_token']:.0%} of 1–{row.grid.last:,} one token · {s['tokens_per_number']:.2f} "
                       "tokens per number")
            y += int(line * 1.4)
            self._paint_number(p, row.split, 4 + label_w, y, box, text)
            y += box + int(line * 0.6)
            rows = row.grid.last // GRID_COLUMNS + 1
            rect = QRectF(4 + label_w, y, cell_w * GRID_COLUMNS, cell_h * rows)
            p.drawImage(rect, image)
            self._heat_rects.append(rect)
            p.setPen(text)
            for r in range(rows):
                lo = r * GRID_COLUMNS
                p.drawText(QRectF(0, y + r * cell_h, label_w, cell_h),
                           Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                           f"{lo}–{lo + GRID_COLUMNS - 1}" if cell_h >= line * 0.75 or r % 2 == 0 else "")
            y += int(cell_h * rows + line)
        self._paint_legend(p, y, line, text)

    def _paint_number(self, p: QPainter, split: NumberSplit, x0: int, y: int, box: int, text: QColor) -> None:
        verdict = "lines up with place value" if split.aligned else "cuts across place value"
        x = x0
        for k, piece in enumerate(split.pieces):
            for ch in piece:
                r = QRect(x, y, box, box)
                p.fillRect(r, QColor(PIECE_FILLS[k % 2]))
                p.setPen(QColor("#222222"))
                p.drawText(r, Qt.AlignmentFlag.AlignCenter, ch)
                x += box
            p.setPen(QPen(QColor("#222222"), 3))
            p.drawLine(x, y - 2, x, y + box + 2)  # the tokenizer's cut
        p.setPen(QPen(QColor(PLACE_VALUE_PEN), 3, Qt.PenStyle.DashLine))
        for cut in split.place_value_cuts:
            cx = x0 + cut * box
            p.drawLine(cx, y - 5, cx, y + box + 5)
        p.setPen(QColor(PLACE_VALUE_PEN) if not split.aligned else text)
        p.drawText(QPoint(x + 12, y + box - 4), f"{'✓' if split.aligned else '✗'} {split.pattern} · {verdict}")

    def _paint_legend(self, p: QPainter, y: int, line: int, text: QColor) -> None:
        used = sorted({int(v) for row in self.rows for v in row.grid.pattern_codes().ravel() if not math.isnan(v)})
        items = []
        for code in used:
            name = PATTERNS[code] if code < OTHER else "other"
            items.append((QColor(PATTERN_COLORS[code]),
                          f"one token of {name} digit{'s' if name != '1' else ''}" if "+" not in name and code < OTHER
                          else f"cut {name}" if code < OTHER else "other cuts"))
        items.append((None, "place-value cut (groups of three from the right)"))
        x = 4
        for color, label in items:
            width = line + 12 + p.fontMetrics().horizontalAdvance(label)
            if x > 4 and x + width > self.width():  # wrap: the legend stays whole in a narrow dock
                x, y = 4, y + int(line * 1.3)
            if color is None:
                p.setPen(QPen(QColor(PLACE_VALUE_PEN), 3, Qt.PenStyle.DashLine))
                p.drawLine(x + line // 2, y + 2, x + line // 2, y + line - 2)
            else:
                p.fillRect(QRect(x, y + 2, line, line - 4), color)
            p.setPen(text)
            p.drawText(QPoint(x + line + 4, y + line - 4), label)
            x += width

    # -- hover ---------------------------------------------------------------------------------

    def number_at(self, pos: QPoint) -> int | None:
        """The number under `pos` in any heatmap, or None."""
        for rect, row in zip(self._heat_rects, self.rows, strict=False):
            if rect.contains(pos.toPointF()):
                c = int((pos.x() - rect.left()) / rect.width() * GRID_COLUMNS)
                r = int((pos.y() - rect.top()) / rect.height() * (row.grid.last // GRID_COLUMNS + 1))
                n = r * GRID_COLUMNS + c
                return n if 1 <= n <= row.grid.last else None
        return None

    def describe(self, n: int) -> str:
        """``"847 — GPT-2: 8|47 · cl100k: 847"``."""
        cuts = []
        for row in self.rows:
            s = row.grid.split_of(n)
            if s is not None:
                cuts.append(f"{row.title}: {'|'.join(s.pieces)}")
        return f"{n} — " + " · ".join(cuts)

    def mouseMoveEvent(self, event) -> None:
        n = self.number_at(event.position().toPoint())
        self.hovered.emit(self.describe(n) if n is not None else "")
        super().mouseMoveEvent(event)


class NumberLens(QWidget):
    """The "Numbers" tab (`attach`): a number field, the canvas, a hover readout."""

    rows_shown = Signal()  # new rows are on screen (tests)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("token_numbers")
        self._sources: list[tuple[str, object, int | None]] = []
        self._grids: dict[tuple[int, int | None], NumberGrid] = {}  # (id(tokenizer), step) -> grid
        self._tokenizers: list[object] = []  # keeps the cached grids' tokenizers alive (their ids stay theirs)
        self._asked: tuple | None = None
        self.number_edit = QLineEdit(DEFAULT_NUMBER, objectName="token_numbers_number", maxLength=MAX_DIGITS)
        self.number_edit.setValidator(QRegularExpressionValidator(r"[0-9]{1,40}", self.number_edit))
        self.number_edit.setToolTip("A number of your own: each tokenizer's cut of it, over the place-value groups")
        self.readout = QLabel(objectName="token_numbers_readout")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.canvas = NumberCanvas()
        self.canvas.hovered.connect(self._on_canvas_hovered)
        scroll = QScrollArea(widgetResizable=True)
        scroll.setWidget(self.canvas)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Your number:"))
        bar.addWidget(self.number_edit)
        bar.addWidget(self.readout, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(scroll, 1)
        self.engine = DebouncedTaskEngine("number lens", self, debounce_ms=150, stoppable=True)
        self.engine.computed.connect(self._on_engine_computed)
        self.engine.failed.connect(lambda message: self.readout.setText(f"Cannot cut the numbers: {message}"))
        self.number_edit.textChanged.connect(lambda _t: self._request())

    @classmethod
    def attach(cls, panel) -> NumberLens:
        """A "Numbers" tab in `panel`'s tabs, following its comparison rows (`result_shown`)."""
        lens = cls()
        panel.tabs.addTab(lens, "Numbers")

        panel.result_shown.connect(lambda: lens.set_sources(row_sources(panel)))
        return lens

    def set_sources(self, sources: list[tuple[str, object, int | None]]) -> None:
        """The tokenizers to show: ``(title, tokenizer, step or None)``; cut when the tab shows."""
        self._sources = list(sources)
        self._request()

    def number(self) -> str:
        return self.number_edit.text() or DEFAULT_NUMBER

    def _request(self) -> None:
        if not self.isVisible():
            return  # the tab is hidden: nothing to cut until it shows (showEvent asks again)
        key = (tuple((t, id(tok), step) for t, tok, step in self._sources), self.number())
        if key == self._asked:
            return
        self._asked = key
        live = {id(tok) for _, tok, _ in self._sources}
        self._grids = {k: g for k, g in self._grids.items() if k[0] in live}
        self._tokenizers = [tok for _, tok, _ in self._sources]
        jobs = [(title, tok, step, self._grids.get((id(tok), step))) for title, tok, step in self._sources]
        if jobs:
            self.engine.request(compute_rows, jobs, self.number())
        else:
            self._on_engine_computed([])

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._request()

    @Slot(object)
    def _on_engine_computed(self, rows: list[LensRow]) -> None:
        live = {id(tok) for _, tok, _ in self._sources}
        self._grids.update({row.key: row.grid for row in rows if row.key[0] in live})
        self.canvas.set_rows(rows)
        self.rows_shown.emit()

    @Slot(str)
    def _on_canvas_hovered(self, text: str) -> None:
        self.readout.setText(text)
