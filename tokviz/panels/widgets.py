"""Small builders the panels share: record tables, cell tables, box layouts, labelled grids,
selecting a table row, a progress bar that never repaints on the spot, whether a panel is on screen, an
editor's text read once per change.

What this leaves out: fonts and colours (``tokviz.panels.base``) and anything with state.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QEvent, QIODevice, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QSpinBox,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.errors import TokvizError
from tokviz.core.io.safe_files import write_atomic

STRETCH = None  # an item of `hbox` / `vbox`: a stretch


def record_table(table: QTableView) -> QTableView:
    """Set up `table` for records: one whole row selected at a time, no row numbers, a fixed row
    height, no word wrap, the last column stretched, alternating row colours. Returns `table`.
    The column headings are not lit with the selection: a whole row lights every heading, and
    the header then repainted at every step of the timeline."""
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.horizontalHeader().setHighlightSections(False)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().hide()
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.horizontalHeader().setStretchLastSection(True)
    table.setWordWrap(False)
    table.setAlternatingRowColors(True)
    return table


def rows_height(table: QTableView, rows: int) -> int:
    """The height `table` needs to show its header and `rows` whole rows (and a horizontal scroll bar)."""
    header = 0 if table.horizontalHeader().isHidden() else table.horizontalHeader().sizeHint().height()
    bar = table.horizontalScrollBar().sizeHint().height()
    return header + rows * table.verticalHeader().defaultSectionSize() + 2 * table.frameWidth() + bar


def show_rows(table: QTableView, rows: int = 5) -> None:
    """Never let a dock squeeze `table` below `rows` visible rows (call again after a font change)."""
    table.setMinimumHeight(rows_height(table, rows))


def cell_table(name: str, headers: list[str], *, selectable: bool = True) -> QTableWidget:
    """A read-only `QTableWidget` of records (see `record_table`) with these column headers, at
    least 48 px high; one that is not `selectable` takes no selection."""
    table = record_table(QTableWidget(0, len(headers), objectName=name))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setMinimumHeight(48)
    if not selectable:
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    return table


def set_cells(table: QTableWidget, row: int, cells, *, right=()) -> list[QTableWidgetItem]:
    """Show the texts `cells` in `row` of `table`, reusing its items; the columns in `right`
    (numbers) are right-aligned, the others left-aligned. Returns the row's items."""
    items = []
    for col, text in enumerate(cells):
        item = table.item(row, col)
        if item is None:
            item = QTableWidgetItem()
            table.setItem(row, col, item)
        item.setText(text)
        item.setTextAlignment((Qt.AlignmentFlag.AlignRight if col in right else Qt.AlignmentFlag.AlignLeft)
                              | Qt.AlignmentFlag.AlignVCenter)
        items.append(item)
    return items


def select_row(table: QTableView, row: int | None) -> bool:
    """Select `row` of `table` and scroll it to the middle; False (nothing done) when it is None."""
    if row is None:
        return False
    table.selectRow(row)
    table.scrollTo(table.model().index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
    return True


def fill_box(layout: QBoxLayout, items, *, margins: int | None = None, spacing: int | None = None) -> QBoxLayout:
    """Add `items` to `layout`: a widget, a layout, `STRETCH`, or ``(widget or layout, stretch)``.

    >>> fill_box(QVBoxLayout(panel), [toolbar, label, (table, 1)], margins=6, spacing=4)
    """
    if margins is not None:
        layout.setContentsMargins(margins, margins, margins, margins)
    if spacing is not None:
        layout.setSpacing(spacing)
    for item in items:
        thing, stretch = item if isinstance(item, tuple) else (item, 0)
        if thing is None:
            layout.addStretch(stretch or 1)
        elif isinstance(thing, QLayout):
            layout.addLayout(thing, stretch)
        else:
            layout.addWidget(thing, stretch)
    return layout


def hbox(*items, margins: int | None = None, spacing: int | None = None) -> QHBoxLayout:
    """A row of `items` (see `fill_box`)."""
    return fill_box(QHBoxLayout(), items, margins=margins, spacing=spacing)


def vbox(owner: QWidget | None, *items, margins: int | None = None, spacing: int | None = None) -> QVBoxLayout:
    """A column of `items` (see `fill_box`), the layout of `owner` when one is given."""
    return fill_box(QVBoxLayout(owner), items, margins=margins, spacing=spacing)


def form_grid(pairs, *, per_row: int | None = None) -> QGridLayout:
    """``(label, widget)`` pairs side by side, `per_row` pairs a row (default: one row), each label
    the buddy of its widget; no margins, and the column after the last pair takes the spare room."""
    grid = QGridLayout()
    grid.setContentsMargins(0, 0, 0, 0)
    per_row = per_row or len(pairs)
    grid.setColumnStretch(2 * per_row, 1)
    for i, (text, widget) in enumerate(pairs):
        label = QLabel(text)
        label.setBuddy(widget)
        row, col = divmod(i, per_row)
        grid.addWidget(label, row, 2 * col)
        grid.addWidget(widget, row, 2 * col + 1)
    return grid


def save_image(image, path: str | Path, fmt: str = "PNG") -> bool:
    """Save a `QImage`/`QPixmap` to `path` atomically (never a half-written file); False when it
    cannot be encoded or written."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, fmt):
        return False
    try:
        write_atomic(Path(path), bytes(buffer.data()))
    except TokvizError:
        return False
    return True


def warn_export_failed(parent: QWidget, what: str, exc: Exception) -> None:
    """Tell the user an export could not be written (the panel keeps its state)."""
    QMessageBox.warning(parent, f"Could not export {what}", str(exc)[:1].upper() + str(exc)[1:])


def segmentation_controls(prefix: str, word: str = "", n_best: int = 5) -> tuple[QLineEdit, QSpinBox, QDoubleSpinBox]:
    """The word box, the n-best count and the sampling alpha of a Unigram segmentation view
    (`prefix` names them: ``<prefix>_word_edit``, ``<prefix>_nbest_spin``, ``<prefix>_alpha_spin``)."""
    word_edit = QLineEdit(word, objectName=f"{prefix}_word_edit")
    word_edit.setPlaceholderText("A word, e.g. unbelievable")
    word_edit.setClearButtonEnabled(True)
    n_spin = QSpinBox(objectName=f"{prefix}_nbest_spin")
    n_spin.setRange(1, 50)
    n_spin.setValue(n_best)
    n_spin.setPrefix("top ")
    alpha_spin = QDoubleSpinBox(objectName=f"{prefix}_alpha_spin")
    alpha_spin.setRange(0.01, 10.0)
    alpha_spin.setSingleStep(0.1)
    alpha_spin.setValue(0.1)  # SentencePiece's usual setting
    alpha_spin.setPrefix("alpha ")
    alpha_spin.setToolTip("Sampling weight p(segmentation)^alpha: 1 samples from the model, "
                          "smaller values flatten towards all segmentations alike")
    return word_edit, n_spin, alpha_spin


class ProgressBar(QProgressBar):
    """A `QProgressBar` whose `setValue` leaves the repaint to the window's next paint.

    QProgressBar repaints synchronously whenever its text or filled width changes: one paint and
    flush per progress report, on the GUI thread, while workers compete for the interpreter
    (18 ms a call on average while training gutenberg30 with a second process busy). Turning
    updates off around the change keeps the value and queues an ordinary `update` instead."""

    def setValue(self, value: int) -> None:  # noqa: N802 (Qt's name)
        if value == self.value():
            return
        self.setUpdatesEnabled(False)
        try:
            super().setValue(value)
        finally:
            self.setUpdatesEnabled(True)


class PlainTextCache(QObject):
    """The plain text of a `QPlainTextEdit`, read from its document once per change: `toPlainText()`
    of a megabyte costs milliseconds, and views ask for it on every step or tokenizer change."""

    def __init__(self, editor) -> None:
        super().__init__(editor)
        self._editor = editor
        self._text: str | None = None
        editor.document().contentsChange.connect(self._forget)

    def text(self) -> str:
        if self._text is None:
            self._text = self._editor.toPlainText()
        return self._text

    def _forget(self, *_args) -> None:
        self._text = None


def wanted(widget: QWidget) -> bool:
    """Whether `widget` should keep its content up to date: on screen, or not in a shown window at
    all (built alone, by a script or a test). False for a panel in a tab behind another panel (Qt
    keeps those "visible", with nothing of them on screen)."""
    return not widget.window().isVisible() or not widget.visibleRegion().isEmpty()


class _PaintHook(QObject):
    def __init__(self, widget: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(widget)
        self._callback = callback

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Paint:
            self._callback()
        return False


def watch_on_screen(widgets, on_back: Callable[[], None]) -> Callable[[], bool]:
    """For content that only `widgets` show: call `on_back()` (something cheap) each time one of
    them is painted, the sign that it is on screen again (its tab brought to the front, its dock
    shown); return the test of whether any of them is `wanted` now."""
    widgets = tuple(widgets)
    for w in widgets:
        w.installEventFilter(_PaintHook(w, on_back))
    return lambda: any(wanted(w) for w in widgets)
