"""`EmbeddingPanel`: token-embedding similarities for the current tokenizer, random or trained.

The table is vocabulary x D (D adjustable): a random start, a table trained here (a small next-token model on
the tokenized corpus, in a training process, with a live loss curve and heatmap; optionally with a learned
position table, handed to the positional panel through ``positional_trained``) or a ``.npy`` file whose row
count matches the vocabulary. While training, the process sends the heatmap ready to draw (no maths on the GUI
thread). The heatmap shows the cosine similarity between a set of tokens (the current text's, or the N most
frequent), optionally reordered so similar tokens sit together; hovering shows the pair and value; picking a
token (the box, or a click on a row) lists its nearest neighbours (`NeighboursModel`). Also shown: the
parameter count V x D and its share of a chosen reference model. Behind another tab it waits (`attach`).

What this leaves out: the maths (``tokviz.core.embeddings``), threads (``tokviz.engine``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from tokviz.core import TokvizError
from tokviz.core.embeddings import REFERENCE_MODELS, EmbeddingTable, EmbedTrainSettings, nearest_neighbours
from tokviz.engine.heatmaps.embedding_engine import (
    EmbeddingEngine,
    NeighboursModel,
    SimilarityView,
    TokenizedCorpus,
    TrainingInfo,
    compute_similarity,
)
from tokviz.engine.heatmaps.embedding_sources import EmbeddingSources
from tokviz.engine.heatmaps.heatmap_engine import HeatmapEngine
from tokviz.engine.tasks import TaskEngine
from tokviz.engine.workspace import Workspace
from tokviz.panels.base import Panel, show_error_text
from tokviz.panels.widgets import watch_on_screen

from .embedding_widgets import (
    CURRENT_TEXT_CHARS,
    MODE_TEXT,
    EmbeddingControls,
    LossPlot,
    NeighboursPane,
    load_table,
    parameter_text,
    prepare_screenshot,
)
from .heatmap_view import HeatmapView
from .plot_style import wrapping_label

__all__ = ["EmbeddingPanel"]

N_NEIGHBOURS = 10


class EmbeddingPanel(Panel):
    """Embedding table controls, similarity heatmap, loss curve and neighbours."""

    PANEL_ID = "embeddings"
    TITLE = "Embedding similarity"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    corpus_tokenized = Signal(object)  # TokenizedCorpus
    text_tokens_changed = Signal(list)  # visible tokens of the current text
    table_changed = Signal()  # a different table (random, trained, loaded)
    heatmap_shown = Signal()
    load_failed = Signal(str)
    positional_trained = Signal(object)  # (positions, D) learned position table of a finished run

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.corpus: TokenizedCorpus | None = None
        self.table: EmbeddingTable | None = None
        self.view: SimilarityView | None = None
        self._last_step = None  # newest EmbedStep of the current run
        self._workspace: Workspace | None = None
        self.sources = EmbeddingSources(self)
        self.sources.corpus_ready.connect(self.set_corpus)
        self.sources.text_ready.connect(self._on_sources_text_ready)
        self.sources.failed.connect(self._on_sources_failed)
        self.loader_engine = TaskEngine("embedding_loader", self)
        self.loader_engine.finished.connect(self._on_loader_finished)
        self.loader_engine.failed.connect(self._on_loader_failed)
        self.similarity_engine = HeatmapEngine("embedding_similarity", self, debounce_ms=10)
        self.similarity_engine.computed.connect(self._on_similarity_computed)
        self.similarity_engine.failed.connect(self._show_error)
        self.training_engine = EmbeddingEngine(self)
        e = self.training_engine
        e.prepared.connect(self._on_training_prepared)
        e.progressed.connect(self._on_training_progressed)
        e.view_ready.connect(self._on_training_view_ready)
        e.finished.connect(self._on_training_finished)
        e.cancelled.connect(self._on_training_cancelled)
        e.failed.connect(self._on_training_failed)
        e.running_changed.connect(self._update_buttons)
        e.positional_trained.connect(self.positional_trained)
        self._build()
        self._update_buttons()
        self._update_params()

    @property
    def losses(self) -> np.ndarray:
        """Batch losses of the current (or last) run, ``(steps,)``."""
        return self.loss_plot.history.losses

    @property
    def smoothed(self) -> np.ndarray:
        """Their moving average, ``(steps,)``."""
        return self.loss_plot.history.smoothed

    @property
    def info(self) -> TrainingInfo | None:
        return self.loss_plot.info

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        self.controls = c = EmbeddingControls()
        self.dim_spin, self.seed_spin, self.epochs_spin, self.lr_spin = c.dim_spin, c.seed_spin, c.epochs_spin, c.lr_spin
        self.context_spin, self.train_button, self.cancel_button = c.context_spin, c.train_button, c.cancel_button
        self.random_button, self.load_button, self.save_button = c.random_button, c.load_button, c.save_button
        self.mode_box, self.count_spin, self.reorder_box = c.mode_box, c.count_spin, c.reorder_box
        self.model_box = QComboBox(objectName="reference_model_box")
        for name in REFERENCE_MODELS:
            self.model_box.addItem(name)
        self.params_label = QLabel("", objectName="params_label")
        wrapping_label(self.params_label, 3)
        self.status = QLabel("", objectName="embedding_status")
        wrapping_label(self.status, 2)

        self.heatmap = HeatmapView(name="embedding_heatmap")
        self.heatmap.set_readout(self._readout)
        self.heatmap.cell_clicked.connect(self._on_heatmap_cell_clicked)
        self.loss_plot = LossPlot()
        self.loss_plot.redrawn.connect(self._update_training_status)
        self.neighbours = NeighboursModel(self)
        self.near = near = NeighboursPane(self.neighbours)
        self.token_box, self.neighbours_view = near.token_box, near.view
        self.neighbours_view.doubleClicked.connect(self._on_neighbours_view_double_clicked)
        self.side_splitter = QSplitter(Qt.Orientation.Vertical)
        self.side_splitter.addWidget(self.loss_plot)
        self.side_splitter.addWidget(near)
        self.side_splitter.setChildrenCollapsible(False)
        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.addWidget(self.side_splitter, 1)
        ref = QHBoxLayout()
        ref.addWidget(QLabel("Compare with"))
        ref.addWidget(self.model_box, 1)
        sl.addLayout(ref)
        sl.addWidget(self.params_label)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.heatmap)
        self.splitter.addWidget(side)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addWidget(c)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.status)
        self.setMinimumSize(200, 140)  # explicit: a dock squeezed by its neighbours never grows the window

        self.train_button.clicked.connect(self.start_training)
        self.cancel_button.clicked.connect(self.cancel_training)
        self.random_button.clicked.connect(self.reset_random)
        self.load_button.clicked.connect(self._on_load_button_clicked)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.dim_spin.valueChanged.connect(self._on_dim_spin_changed)
        self.seed_spin.valueChanged.connect(self._on_seed_spin_changed)
        self.mode_box.currentIndexChanged.connect(self._on_token_controls_changed)
        self.count_spin.valueChanged.connect(self._on_token_controls_changed)
        self.reorder_box.toggled.connect(self._on_token_controls_changed)
        self.token_box.currentIndexChanged.connect(self._on_token_box_changed)
        self.model_box.currentIndexChanged.connect(self._update_params)

    # -- sources ----------------------------------------------------------------------------

    def attach(self, workspace: Workspace, followers: tuple[QWidget, ...] = ()) -> None:
        """Follow the workspace's tokenizer, corpus and current text while this or a follower is on screen."""
        self._workspace = workspace
        workspace.corpus_changed.connect(self.sources.schedule)
        workspace.current_text_changed.connect(self.sources.text_changed)
        on_screen = watch_on_screen((self, *followers), self.sources.catch_up)  # followers: panels with its tokens
        self.sources.attach(workspace.step_model, workspace.corpus_sample, self.current_text, on_screen)

    def current_text(self) -> str:
        return self._workspace.current_text(CURRENT_TEXT_CHARS) if self._workspace is not None else ""

    @Slot()
    def retokenize(self) -> bool:
        """Tokenize the corpus with the current timeline and step (in the background)."""
        if not self.sources.retokenize():
            self._set_status("Train a tokenizer (or open a model) to see its token embeddings.")
            return False
        return True

    @Slot(object)
    def _on_sources_text_ready(self, corpus: TokenizedCorpus) -> None:
        if self.corpus is not None and corpus.step == self.corpus.step and corpus.n_vocab == self.corpus.n_vocab:
            self.corpus = replace(self.corpus, text_ids=corpus.text_ids)
            self.sources.set_corpus(self.corpus)
            self.text_tokens_changed.emit([corpus.labels[i] for i in corpus.text_ids])
            self._on_token_controls_changed()

    @Slot(str)
    def _on_sources_failed(self, message: str) -> None:
        self._show_error(f"Cannot tokenize the corpus: {message}")

    def set_corpus(self, corpus: TokenizedCorpus) -> None:
        """Use a tokenized corpus (scripts and tests may call this directly)."""
        self.corpus = corpus
        self.sources.set_corpus(corpus)
        if self.training_engine.is_running:
            self.training_engine.cancel()
            self._set_status("The tokenizer changed: embedding training was cancelled.")
        if self.table is None or self.table.n_vocab != corpus.n_vocab:
            self._set_table(self._random_table(), reset_loss=True)
        else:
            self._update_token_box()
            self._request_similarity()
        self._update_buttons()
        self.corpus_tokenized.emit(corpus)
        self.text_tokens_changed.emit([corpus.labels[i] for i in corpus.text_ids])
        if not self.training_engine.is_running:
            self._set_status(f"{corpus.n_tokens:,} tokens of {corpus.chars:,} corpus characters, "
                             f"vocabulary {corpus.n_vocab:,} (step {corpus.step:,}). Table: {self.table.source}.")

    # -- table ------------------------------------------------------------------------------

    def _random_table(self) -> EmbeddingTable:
        return EmbeddingTable.random(self.corpus.n_vocab, self.dim_spin.value(), seed=self.seed_spin.value())

    def _set_table(self, table: EmbeddingTable, *, reset_loss: bool = False) -> None:
        self.table = table
        if reset_loss:
            self.loss_plot.new_run()
        if table.dim != self.dim_spin.value():
            self.dim_spin.blockSignals(True)
            self.dim_spin.setValue(table.dim)
            self.dim_spin.blockSignals(False)
        self._update_token_box()
        self._update_params()
        self._request_similarity()
        self._update_buttons()
        self.table_changed.emit()

    @Slot()
    def reset_random(self) -> None:
        if self.corpus is None:
            return
        self.training_engine.cancel()
        self._set_table(self._random_table(), reset_loss=True)
        self._set_status(f"Random table {self.table.n_vocab:,} × {self.table.dim} (seed {self.seed_spin.value()}).")

    @Slot(int)
    def _on_dim_spin_changed(self, _d: int) -> None:
        self._update_params()
        if self.corpus is not None and not self.training_engine.is_running:
            self._set_table(self._random_table(), reset_loss=True)

    @Slot(int)
    def _on_seed_spin_changed(self, _s: int) -> None:
        if self.corpus is not None and not self.training_engine.is_running and self.table is not None \
                and self.table.source.startswith("random"):
            self._set_table(self._random_table(), reset_loss=True)

    def load_table(self, path: str) -> bool:
        """Load a ``.npy`` table in the background; its rows must match the vocabulary."""
        if self.corpus is None:
            self._show_error("Cannot load embeddings: there is no tokenizer yet (train or open one first).")
            self.load_failed.emit("no tokenizer")
            return False
        self.loader_engine.start(load_table, path, self.corpus.n_vocab)
        return True

    @Slot(object)
    def _on_loader_finished(self, table: EmbeddingTable) -> None:
        if self.corpus is None or table.n_vocab != self.corpus.n_vocab:
            self._on_loader_failed("the vocabulary changed while the file was loading; load it again")
            return
        self.training_engine.cancel()
        self._set_table(table, reset_loss=True)
        self._set_status(f"Loaded {table.source}: {table.n_vocab:,} × {table.dim}.")

    @Slot(str)
    def _on_loader_failed(self, message: str) -> None:
        text = f"Cannot load embeddings: {message}"
        self._show_error(text)
        self.load_failed.emit(text)

    @Slot()
    def _on_load_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load embedding matrix", "", "NumPy arrays (*.npy)")
        if path:
            self.load_table(path)

    @Slot()
    def _on_save_button_clicked(self) -> None:
        if self.table is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save embedding matrix", "embeddings.npy", "NumPy arrays (*.npy)")
        if path:
            try:
                self.table.save(path)
                self._set_status(f"Saved {self.table.n_vocab:,} × {self.table.dim} table to {path}.")
            except (OSError, TokvizError) as exc:
                self._show_error(f"Cannot save: {exc}")

    # -- training ---------------------------------------------------------------------------

    def train_settings(self) -> EmbedTrainSettings:
        return EmbedTrainSettings(dim=self.dim_spin.value(), epochs=self.epochs_spin.value(), batch_size=128,
                                  learning_rate=float(self.lr_spin.value()), seed=self.seed_spin.value(),
                                  context=self.context_spin.value())

    @Slot()
    def start_training(self, settings: EmbedTrainSettings | None = None) -> bool:
        if self.corpus is None:
            self._show_error("Train a tokenizer first: embeddings are trained on its tokens.")
            return False
        try:
            s = (settings or self.train_settings()).validate()
            if s.dim != self.dim_spin.value():
                self.dim_spin.blockSignals(True)
                self.dim_spin.setValue(s.dim)
                self.dim_spin.blockSignals(False)
            self._last_step = None
            self.loss_plot.new_run()
            self.training_engine.start(self.corpus, s, view=(self.token_ids(), self.reorder_box.isChecked()))
        except TokvizError as exc:
            self._show_error(f"Cannot train embeddings: {exc}")
            return False
        self._set_status("Training embeddings…")
        return True

    @Slot()
    def cancel_training(self) -> bool:
        return self.training_engine.cancel()

    @Slot(object)
    def _on_training_prepared(self, info: TrainingInfo) -> None:
        self.loss_plot.set_info(info)

    @Slot(list, object)
    def _on_training_progressed(self, steps: list, table: object) -> None:
        """Live update: record losses (the curve repaints on a timer) and keep the newest table
        for user actions (neighbours, other tokens). No maths here: the training process sends
        the heatmap ready to draw (`_on_training_view_ready`)."""
        self.loss_plot.add([s.loss for s in steps], [s.smoothed_loss for s in steps])
        self._last_step = steps[-1]
        if table is not None:
            self.table = table

    @Slot(object)
    def _on_training_view_ready(self, view: SimilarityView) -> None:
        ids = self.token_ids()
        if view.reordered == self.reorder_box.isChecked() and sorted(view.ids) == sorted(ids) \
                and (view.reordered or view.ids == ids):
            self._show_view(view)

    @Slot(object)
    def _on_training_finished(self, table: EmbeddingTable) -> None:
        self.loss_plot.redraw()
        self._set_table(table)
        loss = f", loss {self.smoothed[-1]:.3f}" if len(self.smoothed) else ""
        self._set_status(f"Trained {len(self.losses):,} steps{loss}. Table: {table.source}.")

    @Slot()
    def _on_training_cancelled(self) -> None:
        self.loss_plot.redraw()
        self._set_status(f"Embedding training cancelled after {len(self.losses):,} steps.")

    @Slot(str)
    def _on_training_failed(self, message: str) -> None:
        self._show_error(f"Embedding training failed: {message}")

    @Slot()
    def _update_training_status(self) -> None:
        last = self._last_step
        if last is not None and self.training_engine.is_running:
            self._set_status(f"Training embeddings: step {last.step:,} of {last.n_steps:,} (epoch {last.epoch + 1}), "
                             f"loss {last.smoothed_loss:.3f}")

    @Slot()
    def _update_buttons(self) -> None:
        running = self.training_engine.is_running
        why_not = ("" if self.corpus is not None and self.corpus.n_tokens else  # a tokenized corpus to train on
                   "Nothing to train on yet: train a tokenizer or open one, with a corpus to tokenize")
        self.train_button.setEnabled(not running and not why_not)
        self.train_button.setToolTip(why_not or "Train a small next-token model on the tokenized corpus")
        self.cancel_button.setEnabled(running)
        self.save_button.setEnabled(self.table is not None and not running)
        for w in (self.dim_spin, self.epochs_spin, self.lr_spin, self.context_spin, self.load_button,
                  self.random_button):
            w.setEnabled(not running)

    # -- heatmap and neighbours -------------------------------------------------------------

    def token_ids(self) -> list[int]:
        """The ids the heatmap shows (before reordering)."""
        if self.corpus is None:
            return []
        n = self.count_spin.value()
        ids = self.corpus.text_token_ids(n) if self.mode_box.currentData() == MODE_TEXT else []
        return ids if len(ids) >= 2 else self.corpus.frequent_ids(n)

    @Slot()
    def _on_token_controls_changed(self, *_args) -> None:
        self._update_token_box()
        self._request_similarity()
        self.training_engine.set_view(self.token_ids(), self.reorder_box.isChecked())

    def _request_similarity(self) -> None:
        ids = self.token_ids()
        if self.table is None or len(ids) < 2:
            return
        self.similarity_engine.request(compute_similarity, self.table.vectors, ids, self.reorder_box.isChecked())

    @Slot(object)
    def _on_similarity_computed(self, view: SimilarityView) -> None:
        self._show_view(view)

    def _show_view(self, view: SimilarityView) -> None:
        self.view = view
        labels = [self.corpus.labels[i] for i in view.ids] if self.corpus else [str(i) for i in view.ids]
        self.heatmap.set_matrix(view.matrix, signed=True, levels=(-1.0, 1.0), row_labels=labels, col_labels=labels,
                                corner="token")
        self.heatmap_shown.emit()

    def _readout(self, row: int, col: int, value: float) -> str:
        if self.view is None or self.corpus is None:
            return ""
        a, b = self.view.ids[row], self.view.ids[col]
        la, lb = self.corpus.labels[a], self.corpus.labels[b]
        return f"cos(‘{la}’ #{a}, ‘{lb}’ #{b}) = {value:.4f}"

    def _update_token_box(self) -> None:
        self.near.set_tokens(self.token_ids(), self.corpus.labels if self.corpus is not None else ())
        self._update_neighbours()

    def select_token(self, token_id: int) -> None:
        """List the nearest neighbours of `token_id` (added to the box if not in the set)."""
        self.near.select(token_id, self.corpus.labels[token_id] if self.corpus is not None else str(token_id))
        self._update_neighbours()

    @Slot(int)
    def _on_token_box_changed(self, _i: int) -> None:
        self._update_neighbours()

    @Slot(int, int)
    def _on_heatmap_cell_clicked(self, row: int, _col: int) -> None:
        if self.view is not None:
            self.select_token(self.view.ids[row])

    @Slot(QModelIndex)
    def _on_neighbours_view_double_clicked(self, index: QModelIndex) -> None:
        self.select_token(self.neighbours.row_data(index.row())[0])

    def _update_neighbours(self) -> None:
        tid = self.token_box.currentData()
        if tid is None or self.table is None or self.corpus is None:
            self.neighbours.set_rows([])
            return
        among = np.flatnonzero(self.corpus.counts)  # ids that occur: the others never trained
        if len(among) < 2:
            among = None
        near = nearest_neighbours(self.table.vectors, int(tid), N_NEIGHBOURS, among=among)
        self.neighbours.set_rows([(i, self.corpus.labels[i], s) for i, s in near])

    # -- parameter count --------------------------------------------------------------------

    @Slot()
    def _update_params(self, *_args) -> None:
        v = self.corpus.n_vocab if self.corpus is not None else 0
        d = self.table.dim if self.table is not None else self.dim_spin.value()
        self.params_label.setText(parameter_text(v, d, REFERENCE_MODELS[self.model_box.currentText()]))

    def prepare_screenshot(self, timeout_ms: int = 60_000) -> None:
        """For the screenshot command: tokenize, train a few epochs, hover a cell."""
        prepare_screenshot(self, timeout_ms)

    # -- status and shutdown ---------------------------------------------------------------
    def _set_status(self, text: str) -> None:
        self.status.setPalette(self.palette())  # (not the error colour)
        self.status.setText(text)

    @Slot(str)
    def _show_error(self, text: str) -> None:
        show_error_text(self.status, text, self.palette())

    def shutdown(self) -> None:
        self.sources.shutdown()
        for engine in (self.training_engine, self.loader_engine, self.similarity_engine):
            engine.shutdown()
        self.heatmap.shutdown()
