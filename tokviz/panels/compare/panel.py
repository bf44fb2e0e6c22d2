"""`ComparePanel`: tokenizer efficiency metrics side by side, per language, per script.

Pick the models (the current one at its step, files, known tokenizers) and the text (the corpus,
or a file), optionally split into documents (an unindented title line starts one, as in
``udhr2_all.txt``), and Run: the comparison runs on a background thread with progress and Cancel
(`tokviz.engine.compare_task`); the documents table fills in as documents are measured, the metrics,
scripts and chart as each model ends. Results: a metrics table (one column per model), a sortable
documents table with each model's tokens and premium over a reference document the user picks,
a chart of those premiums by language or by script (one colour per model), a per-script summary and each model's Gini
coefficient; Export writes the CSV rows ``tokviz compare --csv`` prints, or the chart as PNG. A
model that cannot be opened is reported and the others are shown.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QSortFilterProxyModel, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QTableView,
    QToolButton,
    QWidget,
)

from tokviz.core import TokvizError
from tokviz.core.compare import Comparison, ModelSpec
from tokviz.core.compare.report import csv_header, csv_rows, short_labels, with_reference
from tokviz.core.formats.openai_encodings import known_tokenizers
from tokviz.core.io.safe_files import write_atomic
from tokviz.engine.compare_child import path_spec, timeline_spec
from tokviz.engine.compare_engine import CompareEngine
from tokviz.engine.tables.compare_models import SORT_ROLE, DocumentsModel, MetricsModel, ScriptsModel

from ..base import Panel
from ..widgets import STRETCH, ProgressBar, hbox, record_table, vbox, warn_export_failed
from .chart import PremiumChart, model_color
from .growth_tab import GrowthTab
from .health_tab import HealthTab
from .parity_tab import ParityTab
from .presenting import present_compare
from .result_tabs import ResultTabs
from .vocab_tab import VocabTab
from .why_tab import WhyTab

MAX_TEXT_CHARS = 64_000_000  # the corpus measured at most (udhr2 is 5.7 M)
GENERIC_NAMES = ("tokenizer.json", "tokenizer.model", "vocab.txt")
RESIZE_ROWS = 40
MAX_COLUMN_CHARS = 28  # widest column, in digits: long document titles are elided
IDLE_TEXT = "Add two or more tokenizers, pick the text, and Run. By document: one row per language of a multilingual corpus."


def _swatch(color: str) -> QIcon:
    pix = QPixmap(12, 12)
    pix.fill(QColor(color))
    return QIcon(pix)


class ComparePanel(Panel):
    PANEL_ID = "compare"
    TITLE = "Compare metrics"
    DEFAULT_AREA = Qt.DockWidgetArea.LeftDockWidgetArea
    _present = present_compare  # presenter mode: the results, without the set-up rows

    comparison_ready = Signal()  # a run ended (finished, cancelled or failed): read `outcome`
    token_selected = Signal(object, int)  # a token picked in the Vocabularies or Health tab: (timeline, id)

    def __init__(self, step_model, workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.step_model, self.workspace = step_model, workspace
        self.specs: list[ModelSpec] = []
        self.text_path: Path | None = None  # None: the corpus
        self.comparison: Comparison | None = None
        self.outcome = ""
        self.models_list = QListWidget(objectName="compare_models")
        self.models_list.setMaximumHeight(self.models_list.fontMetrics().height() * 4 + 8)
        add_current = QPushButton("Add current model", objectName="compare_add_current")
        add_current.setToolTip("The model on screen at its current step")
        add_current.clicked.connect(self.add_current_model)
        add_file = QPushButton("Add file…", objectName="compare_add_file")
        add_file.setToolTip("A tokviz model, .tiktoken file, tokenizer.json or tokenizer folder")
        add_file.clicked.connect(self._on_add_file_clicked)
        self.known_button = QToolButton(objectName="compare_add_known", text="Add known")
        self.known_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.known_button.setMenu(QMenu(self.known_button))
        self.known_button.menu().aboutToShow.connect(self._fill_known_menu)
        remove = QPushButton("Remove", objectName="compare_remove")
        remove.clicked.connect(self.remove_selected)
        self.text_box = QComboBox(objectName="compare_text")
        self.text_box.addItem("The corpus", None)
        self.text_box.addItem("A text file…", "file")
        self.text_box.activated.connect(self._on_text_box_activated)
        self.by_document = QCheckBox("By document", objectName="compare_by_document")
        self.by_document.setToolTip("Split the text at unindented title lines and measure each document")
        self.reference_box = QComboBox(objectName="compare_reference")
        self.reference_box.setToolTip("Premiums are each document's tokens over this document's")
        self.reference_box.setMinimumContentsLength(12)
        self.reference_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.reference_box.activated.connect(self._on_reference_box_activated)
        self.run_button = QPushButton("Run", objectName="compare_run")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel", objectName="compare_cancel", enabled=False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = ProgressBar(objectName="compare_progress")
        self.progress.setRange(0, 1000)
        self.progress.setMaximumHeight(8)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.status = QLabel(IDLE_TEXT, objectName="compare_status", wordWrap=True)
        workspace.corpus_changed.connect(self._on_workspace_corpus_changed)
        self.metrics_model, self.documents_model, self.scripts_model = MetricsModel(self), DocumentsModel(self), ScriptsModel(self)
        self.tabs = ResultTabs(objectName="compare_tabs")
        self.metrics_table = self._table("compare_metrics", self.metrics_model, sortable=False)
        self.documents_table = self._table("compare_documents", self.documents_model)
        self.scripts_table = self._table("compare_scripts", self.scripts_model)
        self.chart = PremiumChart()
        self.hover = QLabel("", objectName="compare_hover", wordWrap=True)  # never wider than the panel
        self.hover.setMinimumHeight(2 * self.hover.fontMetrics().lineSpacing())  # no jump as its text changes
        self.chart.hovered.connect(self.hover.setText)
        chart_page = QWidget()
        vbox(chart_page, (self.chart, 1), self.hover, margins=0, spacing=2)
        self.vocab_tab = VocabTab(self.specs)
        self.health_tab = HealthTab(self.specs, self._text)
        self.growth_tab = GrowthTab(self.specs, self._text)
        self.why_tab = WhyTab(self.specs, workspace.current_text)
        self.parity_tab = ParityTab(self.specs, self._text)
        self.job_tabs = (self.vocab_tab, self.health_tab, self.growth_tab, self.why_tab, self.parity_tab)
        for tab in (self.vocab_tab, self.health_tab):
            tab.token_selected.connect(self.token_selected)
        for widget, title in ((self.metrics_table, "Metrics"), (self.documents_table, "Documents"),
                              (chart_page, "Premiums chart"), (self.scripts_table, "Scripts"),
                              (self.vocab_tab, "Vocabularies"), (self.health_tab, "Health"),
                              (self.growth_tab, "Growth"), (self.why_tab, "Why"), (self.parity_tab, "Parity")):
            self.tabs.addTab(widget, title)
        export_csv = QPushButton("Export CSV…", objectName="compare_export_csv")
        export_csv.clicked.connect(self._on_export_csv_clicked)
        export_png = QPushButton("Export chart PNG…", objectName="compare_export_png")
        export_png.clicked.connect(self._on_export_png_clicked)
        self.export_buttons = (export_csv, export_png)
        vbox(self, hbox(QLabel("Models:"), (self.models_list, 1)),
             hbox(add_current, add_file, self.known_button, remove, STRETCH),
             hbox(QLabel("Text:"), self.text_box, self.by_document, STRETCH, self.run_button, self.cancel_button),
             hbox(QLabel("Reference:"), (self.reference_box, 1)),
             self.progress, self.status, (self.tabs, 1), hbox(STRETCH, export_csv, export_png), margins=6, spacing=4)
        self.engine = CompareEngine(self)  # in a child process: the window keeps drawing
        self.engine.progress_changed.connect(self._on_engine_progress_changed)
        self.engine.partial_ready.connect(self._on_engine_partial_ready)
        self._run_specs: list[ModelSpec] = []  # of the run streaming in
        self._so_far: Comparison | None = None  # its documents and the results of the models that ended
        self._auto_tab = False  # the run turned to the Documents tab (the chart follows at its end)
        self.engine.finished.connect(self._on_engine_finished)
        self.engine.cancelled.connect(self._on_engine_cancelled)
        self.engine.failed.connect(self._on_engine_failed)
        self._update_buttons()

    def heightForWidth(self, width: int) -> int:
        """The least height the rows need at `width` (the status line wrapped): the dock's scroll area
        makes the panel at least this tall, and the preferred height (the tallest result tab, its
        charts' 480 px) would make it scroll on any shorter dock, a 720-line projector among them."""
        layout = self.layout()
        if layout is None or not layout.hasHeightForWidth():
            return super().heightForWidth(width)
        margins = self.contentsMargins()
        return layout.minimumHeightForWidth(width - margins.left() - margins.right()) + margins.top() + margins.bottom()

    def _table(self, name: str, model, *, sortable: bool = True) -> QTableView:
        table = record_table(QTableView(objectName=name))
        if sortable:
            proxy = QSortFilterProxyModel(self)
            proxy.setSourceModel(model)
            proxy.setSortRole(SORT_ROLE)
            table.setModel(proxy)
            table.setSortingEnabled(True)
            table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the documents' own order until a click
        else:
            table.setModel(model)
        table.horizontalHeader().setStretchLastSection(False)
        table.horizontalHeader().setResizeContentsPrecision(RESIZE_ROWS)  # widths from a sample, not 340 rows
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        return table

    # -- models and text --------------------------------------------------------------------

    def add_model(self, label: str, open_timeline, step: int | None = None) -> None:
        """Add a model: `open_timeline()` returns its timeline (run where the work runs: it must
        pickle, a ``functools.partial`` of a module function)."""
        self._add_spec(ModelSpec(label, open_timeline, step))

    def add_timeline(self, label: str, timeline, step: int | None = None) -> None:
        """Add a timeline held in memory (a trained model, one at another step)."""
        self._add_spec(timeline_spec(label, timeline, step))

    def _add_spec(self, spec: ModelSpec) -> None:
        self.specs.append(spec)
        item = QListWidgetItem(_swatch(model_color(len(self.specs) - 1)), spec.label)
        self.models_list.addItem(item)
        self.models_list.scrollToItem(item)
        self._update_buttons()
        self.presented_changed.emit()

    def add_path(self, path: str | Path) -> None:
        """A model file, tokenizer file or folder, or a known name such as ``cl100k_base``;
        named by its file name (with its folder when that name is taken)."""
        p = Path(path)
        taken = {s.label for s in self.specs}
        names = (p.name, f"{p.parent.name}/{p.name}", str(p))
        if p.name in GENERIC_NAMES:  # tokenizer.json says nothing: its folder names the model
            names = names[1:]
        label = next((x for x in names if x and x not in taken), str(p))
        self._add_spec(path_spec(label, str(path)))
        self.models_list.item(self.models_list.count() - 1).setToolTip(str(path))

    @Slot()
    def add_current_model(self) -> bool:
        tl = self.step_model.timeline
        if tl is None:
            self.status.setText("No current model: train one or open a tokenizer first.")
            return False
        step = self.step_model.step if self.step_model.step < tl.n_steps else None
        name = getattr(tl.settings, "name", None) or f"current {tl.title} model"
        label = f"{Path(str(name)).name}@{step}" if step is not None else Path(str(name)).name
        self.add_timeline(label, tl, step)
        return True

    @Slot()
    def remove_selected(self) -> None:
        row = self.models_list.currentRow()
        if 0 <= row < len(self.specs):
            del self.specs[row]
            self.models_list.takeItem(row)
            for i in range(self.models_list.count()):  # colours follow the position
                self.models_list.item(i).setIcon(_swatch(model_color(i)))
            self.presented_changed.emit()
        self._update_buttons()

    def presenter_caption(self) -> str:
        """``Comparing 3 tokenizers: gpt2 · cl100k_base · trained@40`` (its list is hidden when presenting)."""
        labels = short_labels([spec.label for spec in self.specs])
        if not labels:
            return ""
        return f"Comparing {len(labels)} tokenizer{'s' if len(labels) > 1 else ''}: " + " · ".join(labels)

    def _fill_known_menu(self) -> None:
        menu = self.known_button.menu()
        menu.clear()
        for k in known_tokenizers():
            action = menu.addAction(k.name if k.cached else f"{k.name} (not in tiktoken's cache)")
            action.setEnabled(k.cached)
            action.setToolTip(k.description)
            action.triggered.connect(partial(self.add_path, k.name))

    def set_text_file(self, path: str | Path | None) -> None:
        """Measure the text of `path` (None: the corpus)."""
        self.text_path = Path(path) if path is not None else None
        if self.text_path is None:
            self.text_box.setCurrentIndex(0)
        else:
            if self.text_box.count() < 3:
                self.text_box.addItem("", "path")
            self.text_box.setItemText(2, self.text_path.name)
            self.text_box.setCurrentIndex(2)
        self.reference_box.clear()

    @Slot(int)
    def _on_text_box_activated(self, index: int) -> None:
        key = self.text_box.itemData(index)
        if key == "file":
            path, _ = QFileDialog.getOpenFileName(self, "Text to compare on", "", "Text (*.txt);;All files (*)")
            self.set_text_file(path or self.text_path)
        elif key is None:
            self.set_text_file(None)

    @Slot()
    def _on_add_file_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add a tokenizer", "",
                                              "Tokenizers (*.json *.tiktoken *.model);;All files (*)")
        if path:
            self.add_path(path)

    @Slot()
    def _on_workspace_corpus_changed(self) -> None:
        if self.text_path is None:
            self.reference_box.clear()  # other documents

    @Slot(int)
    def _on_reference_box_activated(self, index: int) -> None:
        c = self.comparison
        if c is not None and c.documents and 0 <= index < len(c.documents):
            self.show_comparison(with_reference(c, index))  # premiums only: no measuring again

    # -- running ----------------------------------------------------------------------------

    def _text(self) -> str:
        if self.text_path is None:
            return self.workspace.corpus_sample(MAX_TEXT_CHARS)
        from tokviz.core import read_text

        return read_text(self.text_path, allow_empty=True)

    def _source(self) -> str | Path:
        """What Run measures: the corpus's text, or the file (read on the worker thread)."""
        return self.text_path if self.text_path is not None else self.workspace.corpus_sample(MAX_TEXT_CHARS)

    @Slot()
    def run(self) -> bool:
        """Start measuring every model; False (with a message) when there is nothing to measure."""
        if not self.specs:
            self.status.setText("Add a tokenizer first (Add current model, Add file…, Add known).")
            return False
        text = self._source()
        if isinstance(text, str) and (not text or text.isspace()):
            self.status.setText("The text is empty: type or open a corpus, or pick a text file.")
            return False
        by_doc = self.by_document.isChecked()
        # the documents are split on the worker thread; the reference list is filled from the result
        reference = self.reference_box.currentData() if by_doc and self.reference_box.count() else None
        self.outcome = ""
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText("Measuring…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._run_specs, self._so_far, self._auto_tab = list(self.specs), None, False
        self.engine.start(text, self._run_specs, by_document=by_doc, reference=reference)
        return True

    def _fill_references(self, c: Comparison) -> None:
        """The documents of the last run as reference choices (kept while the text is the same)."""
        if self.reference_box.count() == len(c.documents):
            return
        self.reference_box.clear()
        for d in c.documents:
            self.reference_box.addItem(f"{d.number}. {d.title}", d.number)
        self.reference_box.setCurrentIndex(c.reference)

    @Slot()
    def cancel(self) -> bool:
        return self.engine.cancel()

    @property
    def is_running(self) -> bool:
        return self.engine.is_running

    @Slot(str, float)
    def _on_engine_progress_changed(self, what: str, fraction: float) -> None:
        self.progress.setValue(int(1000 * fraction))
        self.status.setText(what + "…")

    @Slot(object)
    def _on_engine_partial_ready(self, batch) -> None:
        """Rows as documents are measured; metrics, scripts and chart as each model ends. Light work
        only: a batch comes a few times a second."""
        so_far = self._so_far or Comparison((), (), None)
        if batch.documents is not None:
            so_far = Comparison((), batch.documents, batch.reference)
            self.documents_model.start_stream(batch.documents, batch.reference, [s.label for s in self._run_specs])
            if self.tabs.currentIndex() == 0:
                self.tabs.setCurrentIndex(1)  # the rows filling in say what the run is doing
                self._auto_tab = True
        for k, first, rows in batch.rows:
            self.documents_model.add_rows(k, first, [m.tokens for m in rows])
        for k, result in batch.results:
            self.documents_model.add_result(k, result)
        self._so_far = so_far = Comparison(so_far.results + tuple(r for _, r in batch.results), so_far.documents,
                                           so_far.reference)
        if batch.results:  # (the scripts summary waits for the end)
            self.metrics_model.set_comparison(so_far)
            QTimer.singleShot(0, self, lambda: self.chart.set_comparison(so_far))

    def _keep_what_ended(self) -> str:
        """After a cancel or a failure: the models that ended stay on screen, else the last results."""
        c = self._so_far
        if c is not None and any(r.metrics is not None for r in c.results):
            self.show_comparison(c)
            return f"{len(c.results)} of {len(self._run_specs)} models measured; their results stay on screen."
        if c is not None:  # rows of the unfinished run: back to the last results
            self.show_comparison(self.comparison)
        return "The last results stay on screen."

    @Slot(object)
    def _on_engine_finished(self, c: Comparison) -> None:
        if c.documents:
            self._fill_references(c)
        self.show_comparison(c)
        failed = [r for r in c.results if r.error is not None]
        parts = [f"{len(c.results) - len(failed)} of {len(c.results)} models measured"]
        if c.documents:
            parts.append(f"{len(c.documents)} documents")
            rated = [r for r in c.results if r.gini is not None]
            ginis = [f"{label} {r.gini:.3f}" for label, r in zip(short_labels([r.model for r in rated]), rated)]
            if ginis:
                parts.append("Gini of premiums: " + ", ".join(ginis))
        text = "; ".join(parts) + "."
        if failed:
            text += " Could not measure: " + "; ".join(f"{r.model}: {r.error}" for r in failed)
        self._done("finished", text)

    @Slot()
    def _on_engine_cancelled(self) -> None:
        kept = self._keep_what_ended()
        self._done("cancelled", f"Cancelled; {kept[:1].lower()}{kept[1:]}")

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self._done("failed", f"The comparison failed: {message} " + self._keep_what_ended())

    def _done(self, outcome: str, text: str) -> None:
        self.outcome = outcome
        self.progress.hide()
        self.status.setText(text)
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self._update_buttons()
        self.comparison_ready.emit()

    def show_comparison(self, c: Comparison | None) -> None:
        self.comparison = c
        self.metrics_model.set_comparison(c)
        self.documents_model.set_comparison(c)
        self.scripts_model.set_comparison(c)
        # the chart and the column widths on the next turns of the event loop: no one long stall
        QTimer.singleShot(0, self, lambda: self.chart.set_comparison(self.comparison))
        QTimer.singleShot(0, self, self._fit_columns)
        if c is not None and c.documents and self.tabs.currentIndex() == int(self._auto_tab):
            self.tabs.setCurrentIndex(2)  # per language: the chart says it at a glance
        self._auto_tab, self._so_far = False, None

    def _fit_columns(self) -> None:
        for table in (self.metrics_table, self.documents_table, self.scripts_table):
            table.resizeColumnsToContents()
            cap = table.fontMetrics().horizontalAdvance("0") * MAX_COLUMN_CHARS
            for col in range(table.model().columnCount()):  # a long title never hides the figures
                table.setColumnWidth(col, min(table.columnWidth(col), cap))

    def _update_buttons(self) -> None:
        for tab in self.job_tabs:
            tab.update_models()
        self.run_button.setEnabled(bool(self.specs) and not self.engine.is_running)
        has = self.comparison is not None and any(r.metrics is not None for r in self.comparison.results)
        self.export_buttons[0].setEnabled(has)
        self.export_buttons[1].setEnabled(has and bool(self.comparison.documents))

    # -- export -----------------------------------------------------------------------------

    def export_csv(self, path: str | Path) -> None:
        """The rows ``tokviz compare --csv`` prints (`TokvizError` when it cannot be written)."""
        import csv
        import io

        c = self.comparison
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(csv_header(by_document=bool(c.documents)))
        for r in c.results:
            if r.metrics is not None:
                writer.writerows(csv_rows(r, c.documents))
        write_atomic(Path(path), buf.getvalue().encode("utf-8"))

    @Slot()
    def _on_export_csv_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export comparison as CSV", "comparison.csv", "CSV (*.csv)")
        if path:
            try:
                self.export_csv(path)
            except TokvizError as exc:
                warn_export_failed(self, "the comparison", exc)

    @Slot()
    def _on_export_png_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export chart as PNG", "premiums.png", "PNG images (*.png)")
        if path and not self.chart.export_png(path):
            warn_export_failed(self, "the chart", OSError(f"cannot write {path}"))

    def shutdown(self) -> None:
        self.engine.shutdown()
        for tab in self.job_tabs:
            tab.shutdown()
