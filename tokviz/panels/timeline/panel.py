"""`TimelinePanel`: replay BPE training step by step, like a video.

Follows the shared `StepModel` (current timeline + step k) and moves it through a `Playback`.
Shows: the transport row; the merge table (row k - 1 selected and kept in view); the candidates of
the merge that led to step k (winner marked, ties explained); a window of the corpus segmented
with the first k merges, the tokens merge k just made lit (word-frequency tables: one line per
word); a chart of corpus length, vocabulary size and winning count with a cursor at k; and token
provenance (merge tree, "Trace a word"). Keys anywhere in the panel: Space play/pause, Left/Right
step, Home/End. When the views refresh (a part per frame while a run is followed live):
`RefreshPacing`.

What it leaves out: the algorithms (``tokviz.core.bpe.replay``), the table model
(``tokviz.engine.tables.merge_model``) and the transport logic (``tokviz.engine.playback``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.errors import TokvizError
from tokviz.core.text.corpus import parse_word_counts
from tokviz.engine.playback import Playback
from tokviz.engine.tables.merge_model import MergeModel
from tokviz.panels.base import Panel, monospace_font
from tokviz.panels.deferred import DeferredChart
from tokviz.panels.frame_turns import frame_turns
from tokviz.panels.widgets import record_table, show_rows, warn_export_failed

from .candidates import CandidatesView
from .corpus_view import CorpusStepView
from .merges import MergeParts
from .pacing import RefreshPacing
from .presenting import present_timeline, size_for_font, splitter_sizes
from .provenance import ProvenanceView
from .transport import TransportBar
from .unigram import UnigramParts

WINDOW_CHARS = 2_500  # corpus characters shown (and encoded) per step
MAX_CORPUS_CHARS = 2_000_000  # how much of a large corpus the position slider can reach
MAX_WORDS = 400  # word-frequency rows shown
WIDE_PX = 1000  # from this width the panel shows three columns, below it three rows


def _timeline_chart():
    from .chart import TimelineChart

    return TimelineChart(sliced=True)


class TimelinePanel(Panel):
    """The merge timeline. `token_selected(id)` when a merge row or tree node is picked."""

    PANEL_ID = "timeline"
    TITLE = "Merge timeline"
    DEFAULT_AREA = Qt.DockWidgetArea.BottomDockWidgetArea

    token_selected = Signal(int)

    def __init__(self, step_model, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.step_model = step_model
        self.playback = Playback(step_model, self)
        self.merge_model = MergeModel(self)
        self.merge_model.attach(step_model)
        self.merge_model.hold_live_rows = True  # rows go in at the merge table's live turn
        self.pacing = RefreshPacing(self)
        self._corpus_source = None  # () -> CorpusInput
        self._text = ""  # corpus text (prefix of a large corpus)
        self._table: dict[str, int] | None = None  # word-frequency table, if any
        self._corpus_shown: tuple[str, bool] | None = None  # (text, word counts) of the last `set_corpus`
        self.vocab: list[bytes] = []  # bytes of every id of the current timeline
        self._syncing = False

        self.transport = TransportBar(self.playback)
        # merge table
        self.table = record_table(QTableView(objectName="timeline_merge_table"))
        self.table.setModel(self.merge_model)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        # candidates of the merge that led to step k
        self.candidates_view = CandidatesView()
        self.candidates = self.candidates_view.table
        self.cand_label = self.candidates_view.label
        # corpus at step k
        self.corpus_label = QLabel(objectName="timeline_corpus_label")
        self.corpus_label.setWordWrap(True)
        self.corpus_view = CorpusStepView()
        self.position_slider = QSlider(Qt.Orientation.Horizontal, objectName="timeline_position")
        self.position_slider.setToolTip("Which part of the corpus to show")
        self.position_slider.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.position_slider.valueChanged.connect(self._on_position_slider_value_changed)
        # chart and provenance
        self.chart = DeferredChart(_timeline_chart)  # pyqtgraph: made when the Chart tab is first shown
        self.chart.step_clicked.connect(self._on_chart_step_clicked)
        self.series_box = QComboBox(objectName="timeline_series")
        self.series_box.setToolTip("Which curves to plot (Auto: as many as fit)")
        for text, mode in (("Auto", "auto"), ("All three", "all"), ("Corpus length", "length"),
                           ("Vocabulary size", "vocabulary"), ("Winning count", "count")):
            self.series_box.addItem(text, mode)
        self.series_box.currentIndexChanged.connect(
            lambda i: self.chart.set_mode(self.series_box.itemData(i)))
        self.log_box = QCheckBox("Log scale", objectName="timeline_log")
        self.log_box.toggled.connect(self.chart.set_log_scale)
        self.export_csv_button = QPushButton("Export merges…", objectName="timeline_export_csv")
        self.export_csv_button.clicked.connect(self._on_export_csv_clicked)
        self.export_png_button = QPushButton("Export chart…", objectName="timeline_export_png")
        self.export_png_button.clicked.connect(self._on_export_png_clicked)
        self.provenance = ProvenanceView()
        self.provenance.rank_activated.connect(self._on_provenance_rank_activated)

        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.table)
        left.addWidget(self.candidates_view)
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 2)

        corpus_box = QWidget()
        cov = QVBoxLayout(corpus_box)
        cov.setContentsMargins(0, 0, 0, 0)
        cov.setSpacing(2)
        cov.addWidget(self.corpus_label)
        cov.addWidget(self.corpus_view, 1)
        cov.addWidget(self.position_slider)
        chart_box = QWidget()
        chv = QVBoxLayout(chart_box)
        chv.setContentsMargins(0, 0, 0, 0)
        chv.setSpacing(2)
        chv.addWidget(self.chart, 1)
        row = QHBoxLayout()
        row.addWidget(self.series_box)
        row.addWidget(self.log_box)
        row.addStretch(1)
        row.addWidget(self.export_csv_button)
        row.addWidget(self.export_png_button)
        chv.addLayout(row)
        self.tabs = QTabWidget(objectName="timeline_tabs")
        self.tabs.addTab(chart_box, "Chart")
        self.tabs.addTab(self.provenance, "Provenance && trace")
        self.merges = MergeParts(self)  # candidates, merge trees, traces, counts
        self.unigram = UnigramParts(self, left)  # rounds, pruned pieces, segmentations
        self.splitter = main = QSplitter(Qt.Orientation.Horizontal, objectName="timeline_splitter")
        main.addWidget(self.unigram.left_stack)
        main.addWidget(corpus_box)
        main.addWidget(self.tabs)
        main.setStretchFactor(0, 3)
        main.setStretchFactor(1, 4)
        main.setStretchFactor(2, 4)
        main.setSizes([380, 450, 450])
        main.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        lay.addWidget(self.transport)
        lay.addWidget(main, 1)

        self.shortcuts = {}
        for key, slot in (("Space", self.playback.toggle), ("Left", self.playback.step_back),
                          ("Right", self.playback.step_forward), ("Home", self.playback.go_home),
                          ("End", self.playback.go_end)):
            sc = QShortcut(QKeySequence(key), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(slot)
            self.shortcuts[key] = sc
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

        step_model.timeline_changed.connect(self._on_step_model_timeline_changed)
        step_model.steps_added.connect(self._on_step_model_steps_added)
        step_model.step_changed.connect(self._on_step_model_step_changed)
        step_model.finished_changed.connect(self._on_step_model_finished_changed)
        self._update_fonts()
        self._on_step_model_timeline_changed()

    # -- public surface ---------------------------------------------------------------------

    def set_corpus_source(self, source) -> None:
        """`source()` returns the corpus (a `CorpusInput`) to show; read when a timeline arrives."""
        self._corpus_source = source
        self._load_corpus()

    def set_corpus(self, text: str, *, word_counts: bool = False) -> None:
        """Show this corpus text (a word-frequency table if `word_counts`)."""
        self._table = None
        if word_counts:
            try:
                self._table = parse_word_counts(text)
            except TokvizError:
                self._table = None
        self._text = text[:MAX_CORPUS_CHARS]
        self._corpus_shown = (self._text, word_counts)
        self.position_slider.blockSignals(True)
        self.position_slider.setRange(0, max(0, len(self._text) - WINDOW_CHARS) if self._table is None else 0)
        self.position_slider.setValue(0)
        self.position_slider.blockSignals(False)
        self.position_slider.setVisible(self._table is None and len(self._text) > WINDOW_CHARS)
        self.corpus_view.set_content("")
        self.pacing.schedule(now=True)

    def show_token(self, token_id: int, *, jump: bool = False) -> None:
        """Provenance: draw the merge tree of `token_id`; only with `jump` go to the step that made
        it. Looking at a token never changes the model in use: the tree offers "Go to step N"."""
        tl = self.step_model.timeline
        if tl is None:
            return
        self.parts.show_piece(token_id, self.vocab, jump=jump)

    @property
    def parts(self):
        """The views that fit the current timeline: merges (`MergeParts`) or rounds (`UnigramParts`)."""
        tl = self.step_model.timeline
        return self.merges if tl is None or tl.lists_merges else self.unigram

    def trace(self, word: str) -> list[str]:
        """Trace `word` now; returns the segmentation lines (Unigram: the n best)."""
        return self.parts.trace(word)

    def export_csv(self, path: str | Path) -> int:
        return self.merge_model.write_csv(path)

    def export_chart_png(self, path: str | Path) -> bool:
        self.pacing.update_chart()
        return self.chart.export_png(str(path))

    def resizeEvent(self, event) -> None:
        """Three columns when wide, three rows when narrow (a tab beside the corpus)."""
        super().resizeEvent(event)
        wide = event.size().width() >= WIDE_PX
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation or self.presenting:
            self.splitter.setOrientation(orientation)
            span = event.size().width() if wide else event.size().height()
            self.splitter.setSizes(splitter_sizes(self, span, wide))

    _present = present_timeline  # presenter mode: the key parts, big

    def prepare_screenshot(self) -> None:
        """Screenshot hook (``tokviz screenshot``): trace a word so the provenance tab has content."""
        self.parts.sync(self.step_model.step)
        self.provenance.set_word("thought")
        self.refresh()

    def screenshot_variants(self) -> list:
        """Extra screenshot: the provenance tab (merge tree + word trace)."""
        return [("provenance", lambda: self.tabs.setCurrentWidget(self.provenance))]

    def shutdown(self) -> None:
        self.transport.set_clicker_keys(False)
        self.playback.pause()
        self.pacing.stop()

    # -- corpus -----------------------------------------------------------------------------

    def _load_corpus(self) -> None:
        if self._corpus_source is None:
            return
        try:
            ci = self._corpus_source()
        except Exception:  # noqa: BLE001 - no corpus to show is not an error here
            return
        if ci.pieces is not None:
            parts, n = [], 0
            for p in ci.pieces:
                parts.append(p)
                n += len(p)
                if n >= MAX_CORPUS_CHARS:
                    break
            text = "".join(parts)
        else:
            text = ci.text
        if (text[:MAX_CORPUS_CHARS], ci.word_counts) != self._corpus_shown:  # a switch of models keeps the place
            self.set_corpus(text, word_counts=ci.word_counts)

    # -- following the step model -----------------------------------------------------------

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        if self.isVisible():  # the merge table repaints whole: the chart and the round wait a frame
            frame_turns(self).claim()
        tl = self.step_model.timeline
        self.merges.reset()
        kind = self.merge_model.kind_column  # steps of different kinds: the kind beside the rank, in sight
        if kind is not None:
            header = self.table.horizontalHeader()
            header.moveSection(header.visualIndex(kind), 1)
        self.vocab = tl.token_bytes() if tl is not None else []
        self.corpus_view.set_vocab(self.vocab)
        self.provenance.set_state(tl, None, self.vocab, self.step_model.step)
        self.unigram.update_view()
        self._load_corpus()
        self.pacing.chart_changed(now=True)  # its own event, once: a switch is not one long freeze
        self.pacing.schedule(now=True)

    @Slot()
    def _on_step_model_steps_added(self, *_args) -> None:
        tl = self.step_model.timeline
        self.unigram.rounds_added()  # a few rounds, refilled
        if tl is not None:
            self.vocab = tl.token_bytes()
            self.corpus_view.set_vocab(self.vocab)
        self.pacing.chart_changed()

    @Slot()
    def _on_step_model_finished_changed(self) -> None:
        self._on_step_model_steps_added()
        self.pacing.schedule(now=True)

    @Slot(int)
    def _on_step_model_step_changed(self, _k: int) -> None:
        self.pacing.step_changed()

    @Slot()
    def refresh(self) -> None:
        """Repaint everything for the current step now (the scheduled update; live, the next part)."""
        self.pacing.refresh()

    @property
    def last_update_ms(self) -> float:
        return self.pacing.last_update_ms

    def update_selection(self, k: int) -> None:
        """Select merge k in the merge table (none at step 0) without moving the step."""
        self._syncing = True
        try:
            sel = self.table.selectionModel()
            if k <= 0 or k > self.merge_model.rowCount():
                sel.clearSelection()
                sel.setCurrentIndex(QModelIndex(), QItemSelectionModel.SelectionFlag.NoUpdate)
                if k <= 0:  # before the first merge: the table starts at its first row
                    self.table.scrollToTop()
            else:
                idx = self.merge_model.index(k - 1, 0)
                sel.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                    | QItemSelectionModel.SelectionFlag.Rows)
                self.table.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)
        finally:
            self._syncing = False

    def show_corpus_at(self, tok, k: int) -> None:
        view = self.corpus_view
        if tok is None or not (self._text or self._table):
            view.set_content("" if tok is None else "")
            view.show([])
            self.corpus_label.setText("Corpus at step k: train to see the corpus segmented merge by merge."
                                      if tok is None else "Corpus at step k: the corpus is empty.")
            return
        pieces = []
        if self._table is not None:
            lines, pos = [], 0
            for i, (word, count) in enumerate(self._table.items()):
                if i >= MAX_WORDS:
                    break
                prefix = f"{count:>8,}  "
                seg = self.step_model.timeline.segment(word, k, tok)
                pieces.append((pos + len(prefix), seg))
                lines.append(prefix + word)
                pos += len(prefix) + len(word) + 1
            view.set_content("\n".join(lines))
            where = f"{min(len(self._table), MAX_WORDS):,} of {len(self._table):,} words (count, segmentation)"
        else:
            start = self.position_slider.value()
            window = self._text[start:start + WINDOW_CHARS]
            view.set_content(window)
            if not self.step_model.timeline.replays_merges:  # re-encode the window at step k
                pieces.append((0, self.step_model.timeline.segment(window, k, tok)))
            else:  # BPE: replay the window merge by merge, incrementally
                pieces.append((0, self.merges.window_segmenter(tok, window).at(k)))
            where = f"characters {start:,}–{start + len(window):,}"
        view.show(pieces)
        n_tokens = sum(len(s.ids) for _, s in pieces)
        self.corpus_label.setText(self.parts.corpus_caption(k, where, n_tokens))

    # -- user input -------------------------------------------------------------------------

    @Slot(QModelIndex, QModelIndex)
    def _on_table_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        self.playback.pause()
        self.step_model.set_step(current.row() + 1)
        tid = self.merge_model.data(current, Qt.ItemDataRole.UserRole + 1)
        self.merges.sync(self.step_model.step)  # the merge table lists merges only
        self.provenance.show_token(tid)
        self.token_selected.emit(tid)

    @Slot(int)
    def _on_chart_step_clicked(self, k: int) -> None:
        self.playback.jump(k)

    @Slot(int)
    def _on_provenance_rank_activated(self, rank: int) -> None:
        self.playback.pause()
        self.step_model.set_step(rank + 1)

    @Slot(int)
    def _on_position_slider_value_changed(self, _v: int) -> None:
        self.pacing.schedule(now=True)

    @Slot()
    def _on_export_csv_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export merge table", "merges.csv", "CSV files (*.csv)")
        if path:
            try:
                self.export_csv(path)
            except TokvizError as exc:
                warn_export_failed(self, "the merges", exc)

    @Slot()
    def _on_export_png_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", "timeline.png", "PNG images (*.png)")
        if path and not self.export_chart_png(path):
            warn_export_failed(self, "the chart", TokvizError(f"{path}: cannot write the image"))

    def _update_fonts(self) -> None:
        self.mono_font = monospace_font(self.font())
        self.table.setFont(self.mono_font)
        fm = self.table.fontMetrics()
        self.table.verticalHeader().setDefaultSectionSize(fm.height() + 6)
        show_rows(self.table, 2 if self.presenting else 5)  # never squeezed to a row by the parts below
        if hasattr(self, "unigram"):
            self.unigram.update_fonts()
        size_for_font(self)  # column widths (and presenter mode's sizes)
        self.corpus_view.setFont(monospace_font(self.font(), scale=1.1))
