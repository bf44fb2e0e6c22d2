"""`HealthTab`: the vocabulary health of one tokenizer on the corpus (`tokviz.core.compare.health`):
round-trip categories, tokens that almost only live inside longer ones, early tokens never seen,
merges across pre-token boundaries; filter, export CSV or Markdown, a token's merge tree."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFileDialog, QPlainTextEdit, QPushButton, QSplitter, QWidget

from tokviz.core import TokvizError
from tokviz.core.compare.health import CATEGORIES, FLAGS, health_csv, health_markdown, vocabulary_health
from tokviz.core.compare.vocab import merge_tree_lines
from tokviz.core.display.tokens import visible_token
from tokviz.core.io.safe_files import write_atomic
from tokviz.engine.tables.compare_models import HealthModel

from ..base import monospace_font
from ..widgets import STRETCH, hbox, vbox, warn_export_failed
from .tab import CompareTab


def check_health(spec, corpus: str, *, should_stop, progress):
    """Open the model (on the worker thread) and check its vocabulary on `corpus`."""
    progress(f"Opening {spec.label}…", 0.0)
    timeline = spec.open()
    return vocabulary_health(timeline, corpus, should_stop=should_stop, progress=progress), timeline


class HealthTab(CompareTab):
    RUN_TEXT = "Check vocabulary"
    HINT = "Which tokens can this tokenizer really produce, and which does the corpus use? Pick one and Check."

    token_selected = Signal(object, int)  # the timeline the token belongs to, its id

    def __init__(self, specs: list, corpus_text, parent: QWidget | None = None) -> None:
        super().__init__("compare_health", specs, parent)
        self.corpus_text = corpus_text  # () -> str
        self.filter_box = QComboBox(objectName="compare_health_filter")
        self.filter_box.addItem("All findings", "")
        for key, tip in (*CATEGORIES.items(), *FLAGS.items()):
            if key != "ok":
                self.filter_box.addItem(key, key)
                self.filter_box.setItemData(self.filter_box.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.filter_box.currentIndexChanged.connect(self._update_table)
        self.model = HealthModel(self)
        self.table = self.sorted_table("compare_health_table", self.model)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.tree = QPlainTextEdit(objectName="compare_health_tree", readOnly=True)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(self.table)
        body.addWidget(self.tree)
        body.setStretchFactor(0, 3)
        export_csv = QPushButton("Export CSV…", objectName="compare_health_csv")
        export_csv.clicked.connect(lambda: self._export("CSV (*.csv)", "health.csv", health_csv))
        export_md = QPushButton("Export Markdown…", objectName="compare_health_md")
        export_md.clicked.connect(lambda: self._export("Markdown (*.md)", "health.md", health_markdown))
        vbox(self, self.controls(self.filter_box), self.progress, self.status, (body, 1),
             hbox(STRETCH, export_csv, export_md), margins=0, spacing=4)
        self.tree.setFont(monospace_font(self.font()))

    def job(self, picked):
        corpus = self.read_text(self.corpus_text, "the check counts tokens on it")
        return None if corpus is None else (check_health, picked[0], corpus)

    def show_result(self, result) -> str:
        report, _tl = result
        self._update_table()
        totals = ", ".join(f"{k} {v:,}" for k, v in report.totals.items())
        note = " The corpus is small: many tokens are unseen only because of it." if report.corpus_chars < 1_000_000 else ""
        return f"{report.n_tokens:,} tokens on {report.corpus_chars:,} characters: {totals}.{note}"

    def _update_table(self, *_args) -> None:
        if self.result is None:
            return
        key = self.filter_box.currentData()
        rows = [r for r in self.result[0].rows if not key or r.category == key or key in r.flags]
        self.model.set_rows(rows)
        self.table.resizeColumnsToContents()

    @Slot()
    def _on_table_selection_changed(self, *_args) -> None:
        row = self.selected_source_row(self.table)
        if row is None:
            return
        r = self.model.rows[row]
        self.tree.setPlainText("\n".join(merge_tree_lines(self.result[1], r.id, visible_token)))
        self.token_selected.emit(self.result[1], r.id)

    def _export(self, filters: str, name: str, write) -> None:
        if self.result is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export vocabulary health", name, filters)
        if path:
            try:
                self.export(path, write)
            except TokvizError as exc:
                warn_export_failed(self, "the vocabulary health", exc)

    def export(self, path: str | Path, write=health_csv) -> None:
        write_atomic(Path(path), write(self.result[0]).encode("utf-8"))
