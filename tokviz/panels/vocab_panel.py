"""`VocabPanel`: the vocabulary table with a filter box; fills live while training runs.

The table is a `QTableView` on `tokviz.engine.vocab_model.VocabModel` (virtual, sorted and
filtered inside the model) with fixed row heights, so 100k rows scroll instantly. Tokens and bytes
are drawn in the monospace font; special tokens are coloured, partial UTF-8 is in italics.
Edit > Copy (Ctrl+C) copies the selected rows as tab-separated text.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tokviz.engine.vocab_model import (
    COL_BYTES,
    COL_COUNT,
    COL_ID,
    COL_LENGTH,
    COL_RANK,
    COL_TOKEN,
    COLUMNS,
    ID_ROLE,
    KIND_ROLE,
    KIND_SPECIAL,
    KIND_UNK,
    PARTIAL_ROLE,
    VocabModel,
)

from .base import Panel, is_dark, monospace_font

FILTER_DELAY_MS = 150


class _TokenDelegate(QStyledItemDelegate):
    """Monospace token and byte columns; colours for special tokens; italics for partial bytes."""

    def __init__(self, panel: "VocabPanel") -> None:
        super().__init__(panel)
        self.panel = panel

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().initStyleOption(option, index)
        if index.column() in (COL_TOKEN, COL_BYTES):
            font = self.panel.mono_font
            if index.column() == COL_TOKEN and index.data(PARTIAL_ROLE):
                font = self.panel.mono_italic_font
            option.font = font
        kind = index.data(KIND_ROLE)
        if kind in (KIND_SPECIAL, KIND_UNK):
            dark = is_dark(option.palette)
            option.palette.setColor(QPalette.ColorRole.Text, Qt.GlobalColor.magenta if dark else Qt.GlobalColor.darkMagenta)


class VocabPanel(Panel):
    """Vocabulary table. `token_activated(id)` fires on double-click or Enter."""

    PANEL_ID = "vocabulary"
    TITLE = "Vocabulary"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    token_activated = Signal(int)

    def __init__(self, model: VocabModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.filter_edit = QLineEdit(objectName="vocab_filter")
        self.filter_edit.setPlaceholderText("Filter tokens (text or id)…")
        self.filter_edit.setClearButtonEnabled(True)
        self.count_label = QLabel(objectName="vocab_count")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.count_label)

        self.table = QTableView(objectName="vocab_table")
        self.table.setModel(model)
        self.table.setItemDelegate(_TokenDelegate(self))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL_ID, Qt.SortOrder.AscendingOrder)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setHighlightSections(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)

        self._filter_timer = QTimer(self, singleShot=True, interval=FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter_edit.textChanged.connect(self._filter_timer.start)
        model.counts_changed.connect(self._on_model_counts_changed)
        model.rowsAboutToBeInserted.connect(self._on_model_rows_about_to_be_inserted)
        model.rowsInserted.connect(self._on_model_rows_inserted)
        self._follow_bottom = False
        self.setFocusProxy(self.table)
        self.table.activated.connect(self._on_table_activated)
        self._on_model_counts_changed(model.rowCount(), model.n_tokens)
        self._update_fonts()

    def _update_fonts(self) -> None:
        self.mono_font = monospace_font(self.font())
        self.mono_italic_font = monospace_font(self.font())
        self.mono_italic_font.setItalic(True)
        fm = self.fontMetrics()
        self.table.verticalHeader().setDefaultSectionSize(fm.height() + 6)
        digit = fm.horizontalAdvance("0")
        widths = {COL_ID: 8, COL_TOKEN: 16, COL_BYTES: 18, COL_LENGTH: 8, COL_RANK: 11, COL_COUNT: 11}
        for col, chars in widths.items():
            title = fm.horizontalAdvance(COLUMNS[col]) + 28
            self.table.setColumnWidth(col, max(title, digit * chars))
        self.table.viewport().update()

    @Slot()
    def _apply_filter(self) -> None:
        self.model.set_filter(self.filter_edit.text().strip())

    def set_filter(self, text: str) -> None:
        """Filter now (no typing delay)."""
        self.filter_edit.setText(text)
        self._filter_timer.stop()
        self._apply_filter()

    @Slot(int, int)
    def _on_model_counts_changed(self, shown: int, total: int) -> None:
        self.count_label.setText(f"{total:,} tokens" if shown == total else f"{shown:,} of {total:,} tokens")

    @Slot()
    def _on_model_rows_about_to_be_inserted(self, *_args) -> None:
        bar = self.table.verticalScrollBar()
        self._follow_bottom = bar.maximum() > 0 and bar.value() == bar.maximum()

    @Slot()
    def _on_model_rows_inserted(self, *_args) -> None:
        if self._follow_bottom:  # scrolled to the end: keep showing the newest tokens, like a log
            self.table.scrollToBottom()

    @Slot(QModelIndex)
    def _on_table_activated(self, index: QModelIndex) -> None:
        self.token_activated.emit(int(index.data(ID_ROLE)))

    def selected_ids(self) -> list[int]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.model.token_id(r) for r in rows]

    def copy_selection(self) -> str:
        """Copy the selected rows as tab-separated text and return it."""
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        lines = ["\t".join(COLUMNS)]
        for r in rows:
            lines.append("\t".join(str(self.model.index(r, c).data()) for c in range(len(COLUMNS))))
        text = "\n".join(lines)
        QGuiApplication.clipboard().setText(text)
        return text

    copy = copy_selection  # Edit > Copy calls `copy()` on the focused panel
