"""`GlitchPanel`: the glitch-token finder: every token of the current model ranked by how
likely a model never learned it (unreachable or undecodable, rarer in the corpus than its merge
rank predicts, unused), with the score's parts and a "why" per row; rows stream in while it runs,
and a note says when the corpus is too small to call a token unused.

Runs on the current model's tokenizer (a loaded one, or a trained one at its last step) and the
corpus panel's text (its first `MAX_CORPUS_CHARS`), on a background thread with progress and
Cancel. Clicking a finding emits `token_selected(id)`: the window shows its merge tree and
selects it in the vocabulary. When another corpus is opened (`corpus_changed`), findings ranked on
the old one are marked stale (the summary says so and the button ranks again) and a search still
running starts again on the new corpus.
"Model weights…" reads the model's safetensors (a file, a sharded model's index or its folder) off
the GUI thread: Magikarp's indicators join the table as columns and the rows are ranked by both
pieces of evidence; a small heatmap shows the chosen token's nearest neighbours in the output
matrix (their cosines to one another: under-trained tokens sit in a tight cluster).
What it leaves out: the scoring (``tokviz.core.glitch``, ``tokviz.core.weights``).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QMenu, QPushButton, QSplitter, QTableView, QWidget

from tokviz.core.display.tokens import visible_token
from tokviz.core.glitch import MAX_CORPUS_CHARS
from tokviz.core.weights import neighbour_map
from tokviz.engine.glitch_finder import GlitchEngine, WeightsEngine
from tokviz.engine.tables.glitch_model import ID_ROLE, GlitchModel
from tokviz.engine.tasks import DebouncedTaskEngine

from .base import Panel, monospace_font
from .widgets import STRETCH, ProgressBar, hbox, record_table, select_row, vbox

RUN_TEXT = "Find glitch tokens"
FLUSH_MS = 250  # streamed rows reach the table at most this often: each re-ranking repaints it
IDLE_TEXT = ("Open a tokenizer (File > Open Tokenizer…) or train one, then rank its tokens by how likely a model "
             "never learned them.")


class GlitchPanel(Panel):
    PANEL_ID = "glitches"
    TITLE = "Glitch tokens"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    token_selected = Signal(int)
    report_ready = Signal()  # a run ended (finished, cancelled or failed): read `outcome`
    rows_added = Signal(int)  # rows streamed in so far
    weights_ready = Signal()  # reading weights ended: `weights` is set, or `weights_error` says why not
    neighbours_shown = Signal(int)  # the heatmap shows this token's neighbours

    def __init__(self, step_model, *, corpus_text=None, corpus_changed=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.step_model = step_model
        self._corpus_text = corpus_text  # (n_chars) -> str
        if corpus_changed is not None:  # a signal: another corpus is in
            corpus_changed.connect(self._on_corpus_changed)
        self.report = None
        self.outcome = ""
        self.stale = False  # the findings are about a corpus no longer open
        self.run_button = QPushButton(RUN_TEXT, objectName="glitch_run")
        self.run_button.setToolTip(
            "Score every token of the current model against the corpus: the most likely glitch tokens first.\n"
            "Measured on GPT-2 against the 25 under-trained tokens cohere-ai/magikarp verified with the model: "
            "recall@20 / @100 = 0.64 / 0.80 with no corpus, 0.28-0.32 / 0.64-0.76 on 0.2-2 M characters of "
            "English, 0.12 / 0.36 on all of gutenberg30 (tests/bench/bench_glitch_recall.py).")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel", objectName="glitch_cancel", enabled=False)
        self.cancel_button.clicked.connect(self.cancel)
        self.kind_box = QComboBox(objectName="glitch_kind")
        for text, key in (("All tokens, ranked", "all"), ("Unreachable or undecodable", "unreachable"),
                          ("Unused in corpus", "unused")):
            self.kind_box.addItem(text, key)
        self.kind_box.currentIndexChanged.connect(lambda _i: self.model.set_kind(self.kind_box.currentData()))
        self.progress = ProgressBar(objectName="glitch_progress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(8)
        self.progress.hide()
        self.label = QLabel(IDLE_TEXT, objectName="glitch_label")
        self.label.setWordWrap(True)
        self.coverage_label = QLabel(objectName="glitch_coverage")  # is the corpus big enough?
        self.coverage_label.setWordWrap(True)
        self.coverage_label.hide()
        self.coverage = None
        self.model = GlitchModel(self)
        self.table = record_table(QTableView(objectName="glitch_table"))
        self.table.setModel(self.model)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        self.table.horizontalHeader().setStretchLastSection(True)
        self._build_weights()
        vbox(self, hbox(self.run_button, self.cancel_button, self.weights_button, STRETCH, self.kind_box),
             self.progress, self.label, self.coverage_label, self.weights_label, (self.splitter, 1), margins=6, spacing=4)
        self._incoming: list = []  # streamed rows not yet in the table
        self._flush_timer = QTimer(self, singleShot=True, interval=FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush)
        self.engine = GlitchEngine(self)
        self.engine.coverage_ready.connect(self._on_engine_coverage_ready)
        self.engine.rows_ready.connect(self._on_engine_rows_ready)
        self.engine.progress_changed.connect(self._on_engine_progress_changed)
        self.engine.finished.connect(self._on_engine_finished)
        self.engine.cancelled.connect(self._on_engine_cancelled)
        self.engine.failed.connect(self._on_engine_failed)
        step_model.timeline_changed.connect(self._on_step_model_timeline_changed)
        self._update_fonts()
        if step_model.timeline is not None:  # made after a model was opened (the window builds it late)
            self._on_step_model_timeline_changed()

    def _build_weights(self) -> None:
        self.weights = None  # WeightEvidence of the loaded weights
        self.weights_error = ""
        self.weights_button = QPushButton("Model weights…", objectName="glitch_weights")
        self.weights_button.setToolTip(
            "Read the model's weights (.safetensors, a sharded model's index, or its folder): Magikarp's "
            "under-training indicators from the embedding matrices join the table, rows are ranked by both, and "
            "a heatmap shows the chosen token's nearest neighbours. Only the two embedding matrices are read.")
        menu = QMenu(self.weights_button)
        menu.addAction("Safetensors file or index…", self._on_weights_file_chosen).setObjectName("glitch_weights_file")
        menu.addAction("Model folder…", self._on_weights_folder_chosen).setObjectName("glitch_weights_folder")
        self.weights_button.setMenu(menu)
        self.weights_label = QLabel(objectName="glitch_weights_label")
        self.weights_label.setWordWrap(True)
        self.weights_label.hide()
        self._heatmap = None  # made when weights first need it: pyqtgraph stays out of the first paint
        self.splitter = QSplitter(Qt.Orientation.Vertical, objectName="glitch_splitter")
        self.splitter.addWidget(self.table)
        self.neighbours = None  # NeighbourMap shown
        self.weights_engine = WeightsEngine(self)
        self.weights_engine.progress_changed.connect(self._on_weights_engine_progress_changed)
        self.weights_engine.finished.connect(self._on_weights_engine_finished)
        self.weights_engine.failed.connect(self._on_weights_engine_failed)
        self.neighbour_engine = DebouncedTaskEngine("glitch-neighbours", self, debounce_ms=80, stoppable=True)
        self.neighbour_engine.computed.connect(self._on_neighbour_engine_computed)
        self.neighbour_engine.failed.connect(self._on_neighbour_engine_failed)

    def _update_fonts(self) -> None:
        self.table.setFont(monospace_font(self.font()))
        fm = self.table.fontMetrics()
        self.table.verticalHeader().setDefaultSectionSize(fm.height() + 6)
        digit = fm.horizontalAdvance("0")
        for col, width in enumerate((7, 8, 24, 6, 7, 9)):
            self.table.setColumnWidth(col, digit * width)

    # -- running ----------------------------------------------------------------------------

    @Slot()
    def run(self) -> bool:
        """Start the finder on the current model and corpus; False when there is no model."""
        tl = self.step_model.timeline
        if tl is None or not tl.finished:
            self.label.setText("Nothing to check yet: open a tokenizer or let training finish.")
            return False
        corpus = self._corpus_text(MAX_CORPUS_CHARS) if self._corpus_text is not None else ""
        self.outcome = ""
        self.stale = False
        self.run_button.setText(RUN_TEXT)
        self._name = getattr(tl.settings, "name", "the trained model")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.progress.show()
        self.label.setText("Encoding the corpus…")
        self._incoming = []
        self._flush_timer.stop()
        self.model.clear()
        self.coverage = None
        self.coverage_label.hide()
        self.engine.find(tl.tokenizer(), corpus)
        return True

    @Slot()
    def cancel(self) -> bool:
        return self.engine.cancel()

    @property
    def is_running(self) -> bool:
        return self.engine.is_running

    def select_id(self, token_id: int) -> bool:
        """Select the finding of `token_id` (showing every kind); False if it is not a finding."""
        if self.model.row_of_id(token_id) is None:
            self.kind_box.setCurrentIndex(0)
        return select_row(self.table, self.model.row_of_id(token_id))

    def _done(self, outcome: str, text: str) -> None:
        self.outcome = outcome
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.hide()
        self.label.setText(text)
        self.report_ready.emit()

    @Slot(str, float)
    def _on_engine_progress_changed(self, what: str, fraction: float) -> None:
        self.label.setText(what)
        self.progress.setValue(int(fraction * 1000))

    @Slot(object)
    def _on_engine_coverage_ready(self, coverage) -> None:
        self.coverage = coverage
        self.coverage_label.setText(coverage.note())
        self.coverage_label.setStyleSheet("font-weight: bold;" if coverage.too_small or not coverage.corpus_tokens
                                          else "")
        self.coverage_label.show()

    @Slot(object)
    def _on_engine_rows_ready(self, rows) -> None:
        first = self.model.rowCount() == 0 and not self._incoming
        self._incoming.extend(rows)
        if first:
            self._flush()  # the first rows at once
        elif not self._flush_timer.isActive():
            self._flush_timer.start()

    @Slot()
    def _flush(self) -> None:
        self._flush_timer.stop()
        rows, self._incoming = self._incoming, []
        if rows:
            self.model.add_rows(rows)
            self.rows_added.emit(self.model.rowCount())

    @Slot(object)
    def _on_engine_finished(self, report) -> None:
        self._flush()
        self._drop_report()
        self.report = report
        corpus = f"{report.corpus_chars:,} corpus characters" if report.corpus_chars else "no corpus text"
        self._done("finished", f"{self._name}: {report.n_tokens:,} tokens ranked on {corpus}; "
                               f"{report.n_unreachable:,} unreachable or undecodable, {report.n_unused:,} unused. "
                               "The most likely glitch tokens come first: click one for its merge tree.")

    def _drop_report(self) -> None:
        """Let go of the last report, its rows freed over the next turns of the event loop."""
        old, self.report = self.report, None
        if old is not None:
            self.model.release.drop(old.rows)

    @Slot()
    def _on_engine_cancelled(self) -> None:
        self._done("cancelled", "Cancelled.")

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self._done("failed", f"Could not check this model: {message}")

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        """Another model is current: the findings (and a search still running) were about the old one."""
        if not self.engine.cancel():  # a running search reports `cancelled` at once
            self.outcome = ""
        self._drop_report()
        self._drop_weights()  # they were checked against the old model's vocabulary
        self._incoming = []
        self._flush_timer.stop()
        self.model.clear()
        self.coverage = None
        self.coverage_label.hide()
        tl = self.step_model.timeline
        name = (getattr(tl.settings, "name", "") or "the trained model") if tl is not None else ""
        self.label.setText(f"Current model: {name}. “Find glitch tokens” ranks its tokens."
                           if name else IDLE_TEXT)

    @Slot()
    def _on_corpus_changed(self) -> None:
        """Findings (or a search) about the old corpus: mark them stale, or search again."""
        if self.is_running:
            self.run()  # the newest request wins: the old search is cancelled
        elif self.report is not None:
            self.stale = True
            self.label.setText(f"Stale: these were ranked on {self.report.corpus_chars:,} characters of another "
                               "corpus. “Rank again on the new corpus” to update them.")
            self.run_button.setText("Rank again on the new corpus")

    @Slot(QModelIndex, QModelIndex)
    def _on_table_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            token_id = int(current.data(ID_ROLE))
            self.token_selected.emit(token_id)
            if self.weights is not None:
                self.neighbour_engine.request(neighbour_map, self.weights.source, token_id)

    # -- model weights ----------------------------------------------------------------------

    @Slot()
    def _on_weights_file_chosen(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Model weights", "",
                                              "Safetensors (*.safetensors *.index.json);;All files (*)")
        if path:
            self.load_weights(path)

    @Slot()
    def _on_weights_folder_chosen(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Model folder (safetensors)")
        if path:
            self.load_weights(path)

    def load_weights(self, path: str) -> bool:
        """Read the weights at `path` for the current model off the GUI thread (`weights_ready`
        when done); False when there is no model to read them for."""
        tl = self.step_model.timeline
        if tl is None or not tl.finished:
            self.weights_label.setText("Open a tokenizer first: the weights are read against its vocabulary.")
            self.weights_label.show()
            return False
        self.weights_error = ""
        self.weights_label.setText(f"Reading the weights in {path}…")
        self.weights_label.show()
        self.weights_button.setEnabled(False)
        self.progress.show()
        self.weights_engine.load(path, tl.tokenizer())
        return True

    @Slot(str, float)
    def _on_weights_engine_progress_changed(self, what: str, fraction: float) -> None:
        self.weights_label.setText(what)
        if not self.is_running:  # (a ranking's progress has the bar)
            self.progress.setValue(int(fraction * 1000))

    @property
    def heatmap(self):
        """The chosen token's nearest neighbours (a `HeatmapView` under the table), made on first use."""
        if self._heatmap is None:
            from .heatmaps.heatmap_view import HeatmapView

            self._heatmap = HeatmapView(self, name="glitch_neighbours")
            self._heatmap.set_readout(self._neighbour_readout)
            self._heatmap.hide()
            self.splitter.addWidget(self._heatmap)
            self.splitter.setStretchFactor(0, 3)
            self.splitter.setStretchFactor(1, 2)
        return self._heatmap

    @Slot(object)
    def _on_weights_engine_finished(self, evidence) -> None:
        self.weights = evidence
        self.model.set_weights(evidence)
        self.weights_button.setEnabled(True)
        if not self.is_running:
            self.progress.hide()
        self.weights_label.setText(f"Weights: {evidence.note()} Rows are ranked by both pieces of evidence "
                                   "(Combined); choose a token for its nearest neighbours.")
        self.heatmap.show()
        self.weights_ready.emit()

    @Slot(str)
    def _on_weights_engine_failed(self, message: str) -> None:
        self.weights_error = message
        self.weights_button.setEnabled(True)
        if not self.is_running:
            self.progress.hide()
        self.weights_label.setText(f"Could not read the weights: {message}")
        self.weights_ready.emit()

    def _drop_weights(self) -> None:
        self.weights_engine.cancel()
        self.weights, self.neighbours = None, None
        self.model.set_weights(None)
        self.weights_button.setEnabled(True)
        self.weights_label.hide()
        if self._heatmap is not None:
            self._heatmap.hide()

    @Slot(object)
    def _on_neighbour_engine_computed(self, near) -> None:
        if self.weights is None:
            return
        self.neighbours = near
        vocab = self.step_model.timeline.tokenizer().vocab() if self.step_model.timeline is not None else []
        labels = [f"{i} {visible_token(vocab[i])}" if i < len(vocab) and vocab[i] else str(i)
                  for i in near.ids.tolist()]
        self.heatmap.set_matrix(near.matrix, signed=True, levels=(-1.0, 1.0), row_labels=labels, col_labels=labels,
                                corner="cosine")
        self.heatmap.setToolTip(f"{labels[0]} and its {len(labels) - 1} nearest neighbours in the output matrix, "
                                "closest first: the cosine of each pair")
        self.neighbours_shown.emit(near.token_id)

    @Slot(str)
    def _on_neighbour_engine_failed(self, message: str) -> None:
        self.weights_label.setText(f"Could not find the neighbours: {message}")

    def _neighbour_readout(self, row: int, col: int, value: float) -> str:
        return f"{self.heatmap.label_of_row(row)} · {self.heatmap.label_of_col(col)}: cosine {value:.3f}"

    def shutdown(self) -> None:
        self.engine.shutdown()
        self.weights_engine.shutdown()
        self.neighbour_engine.shutdown()
        if self._heatmap is not None:
            self._heatmap.shutdown()
