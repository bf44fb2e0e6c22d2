"""`VocabPanel`: the vocabulary browser; fills live while training runs.

The table is a `QTableView` on `tokviz.engine.tables.vocab_model.VocabModel` (virtual, sorted and
filtered inside the model) with fixed row heights, so 100k rows scroll instantly. Tokens and bytes
are drawn in the monospace font; special tokens are coloured, partial UTF-8 is in italics.
Edit > Copy (Ctrl+C) copies the selected rows as tab-separated text.

Browsing: search by substring or regex (a bad regex is explained inline), sort by id,
length or bytes, and filters (partial UTF-8, whitespace-only, digits, non-Latin scripts, special
tokens). These run on a `VocabIndex` of the current tokenizer, built and queried on a background
thread (`TaskEngine`), so a 200k-token vocabulary stays fluid while typing. A plain substring
search of a trained model filters inside the model as before (also by id).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.explain.vocab_view import FILTERS
from tokviz.engine.pretrained_tasks import VocabQuery, index_vocab, run_query, vocab_source
from tokviz.engine.tables.vocab_model import (
    COL_BYTES,
    COL_COUNT,
    COL_FLAGS,
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
from tokviz.engine.tasks import TaskEngine

from .base import Panel, is_dark, monospace_font
from .model_cue import ModelCue
from .widgets import select_row, show_rows

FILTER_LABELS = {"partial_utf8": "Partial UTF-8", "whitespace": "Whitespace only", "digits": "Digits",
                 "non_latin": "Non-Latin script", "special": "Special tokens"}
SORT_LABELS = (("Sort by id", "id"), ("Sort by length", "length"), ("Sort by bytes", "bytes"))

FILTER_DELAY_MS = 150
MIN_ROWS = 5  # the table never shows fewer tokens than this


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
        # vocabulary browser: regex, sort, filters, inline message
        self.regex_box = QCheckBox("Regex", objectName="vocab_regex")
        self.regex_box.setToolTip("Search with a regular expression (Python `regex` syntax)")
        self.sort_box = QComboBox(objectName="vocab_sort")
        for text, key in SORT_LABELS:
            self.sort_box.addItem(text, key)
        self.sort_box.setToolTip("Order of the rows (a click on a column header also sorts a trained model)")
        self.filters_button = QToolButton(objectName="vocab_filters", text="Filters")
        self.filters_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.filters_button.setToolTip("Show only tokens of these kinds (all ticked kinds at once)")
        menu = QMenu(self.filters_button)
        self.filter_actions = {}
        for key in FILTERS:
            a = menu.addAction(FILTER_LABELS[key])
            a.setCheckable(True)
            a.setObjectName(f"vocab_filter_{key}")
            a.toggled.connect(self._on_filter_toggled)
            self.filter_actions[key] = a
        self.filters_button.setMenu(menu)
        self.message_label = QLabel(objectName="vocab_message")
        self.message_label.setWordWrap(True)
        self.message_label.hide()
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.regex_box)
        top.addWidget(self.sort_box)
        top.addWidget(self.filters_button)
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
        self.model_cue = ModelCue("Vocabulary of", object_name="vocab_cue")  # follows `attach`'s step model
        layout.addWidget(self.model_cue)
        layout.addLayout(top)
        layout.addWidget(self.message_label)
        layout.addWidget(self.table, 1)

        self._filter_timer = QTimer(self, singleShot=True, interval=FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter_edit.textChanged.connect(self._filter_timer.start)
        self.regex_box.toggled.connect(self._filter_timer.start)
        self.sort_box.currentIndexChanged.connect(self._filter_timer.start)
        self.index_engine = TaskEngine("vocab-index", self)
        self.index_engine.finished.connect(self._on_index_engine_finished)
        self.index_engine.failed.connect(self._on_engine_failed)
        self.query_engine = TaskEngine("vocab-query", self)
        self.query_engine.finished.connect(self._on_query_engine_finished)
        self.query_engine.failed.connect(self._on_engine_failed)
        self._indexed = None  # IndexedVocab of the current timeline, once built
        self._pending: VocabQuery | None = None  # query waiting for the index
        self._step_model = None
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
        show_rows(self.table, MIN_ROWS)  # a short dock still shows a handful of tokens
        digit = fm.horizontalAdvance("0")
        widths = {COL_ID: 8, COL_TOKEN: 16, COL_BYTES: 18, COL_LENGTH: 8, COL_RANK: 11, COL_COUNT: 11, COL_FLAGS: 22}
        for col, chars in widths.items():
            title = fm.horizontalAdvance(COLUMNS[col]) + 28
            self.table.setColumnWidth(col, max(title, digit * chars))
        self.table.viewport().update()

    def attach(self, step_model) -> None:
        """Follow the shared `StepModel`: a new timeline drops the search index."""
        self._step_model = step_model
        self.model_cue.follow(step_model)
        step_model.timeline_changed.connect(self._on_step_model_timeline_changed)
        step_model.finished_changed.connect(self._on_step_model_timeline_changed)

    def query(self) -> VocabQuery:
        """What the search row asks for now."""
        filters = tuple(k for k, a in self.filter_actions.items() if a.isChecked())
        return VocabQuery(self.filter_edit.text().strip(), self.regex_box.isChecked(), filters,
                          self.sort_box.currentData())

    def _timeline(self):
        return self._step_model.timeline if self._step_model is not None else None

    def _uses_index(self, q: VocabQuery) -> bool:
        tl = self._timeline()
        loaded = tl is not None and not tl.has_counts
        return bool(q.regex and q.search or q.filters or q.sort != "id" or loaded and q.search)

    @Slot()
    def _apply_filter(self) -> None:
        q = self.query()
        self._show_message("")
        self.filters_button.setText(f"Filters ({len(q.filters)})" if q.filters else "Filters")
        if not self._uses_index(q):
            self._pending = None
            self.index_engine.cancel()
            self.query_engine.cancel()
            self.model.set_rows(None)
            self.table.setSortingEnabled(True)
            self.model.set_filter(q.search)
            return
        self.model.set_filter("")
        self.table.setSortingEnabled(False)
        tl = self._timeline()
        if tl is None:
            self.model.set_rows(None)
            return
        key = (id(tl), tl.n_steps, tl.vocab_size)
        if self._indexed is not None and self._indexed.key == key:
            self._pending = None
            self.query_engine.start(run_query, self._indexed, q)
            return
        self._pending = q
        if not self.index_engine.is_running:
            self.count_label.setText("indexing…")
            self.index_engine.start(index_vocab, key, vocab_source(tl))

    def set_filter(self, text: str) -> None:
        """Filter now (no typing delay)."""
        self.filter_edit.setText(text)
        self._filter_timer.stop()
        self._apply_filter()

    def set_query(self, search: str = "", *, regex: bool = False, filters=(), sort: str = "id") -> None:
        """Scripts and tests: set the whole search row and run it now (see `wait_query`)."""
        for w in (self.filter_edit, self.regex_box, self.sort_box):
            w.blockSignals(True)
        self.filter_edit.setText(search)
        self.regex_box.setChecked(regex)
        self.sort_box.setCurrentIndex(max(0, self.sort_box.findData(sort)))
        for k, a in self.filter_actions.items():
            a.blockSignals(True)
            a.setChecked(k in filters)
            a.blockSignals(False)
        for w in (self.filter_edit, self.regex_box, self.sort_box):
            w.blockSignals(False)
        self._filter_timer.stop()
        self._apply_filter()

    @property
    def is_busy(self) -> bool:
        return self.index_engine.is_running or self.query_engine.is_running or self._filter_timer.isActive()

    def select_token(self, token_id: int) -> bool:
        """Select `token_id` (clearing the search when it hides it); False if it is not there."""
        row = self.model.row_of_id(token_id)
        if row is None and (self.model.is_query or self.model.filter_text):
            self.set_query("")
            row = self.model.row_of_id(token_id)
        return select_row(self.table, row)

    def _show_message(self, text: str) -> None:
        self.message_label.setText(text)
        self.message_label.setVisible(bool(text))

    @Slot()
    def _on_filter_toggled(self, *_args) -> None:
        self._filter_timer.start()

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        self._indexed = None
        self.index_engine.cancel()
        self.query_engine.cancel()
        q = self.query()
        if self._uses_index(q):
            self._filter_timer.start()

    @Slot(object)
    def _on_index_engine_finished(self, indexed) -> None:
        self._indexed = indexed
        q, self._pending = self._pending, None
        if q is not None:
            self.query_engine.start(run_query, indexed, q)

    @Slot(object)
    def _on_query_engine_finished(self, result) -> None:
        q, ids = result
        if q != self.query():
            return  # typed on meanwhile: a newer query follows
        self.model.set_rows(ids)

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self._show_message(message[:1].upper() + message[1:])  # e.g. a bad regex: the rows stay
        self._on_model_counts_changed(self.model.rowCount(), self.model.n_tokens)

    def shutdown(self) -> None:
        self._filter_timer.stop()
        self.index_engine.shutdown()
        self.query_engine.shutdown()

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
