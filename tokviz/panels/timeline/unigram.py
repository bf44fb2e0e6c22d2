"""Unigram on the timeline panel: the rounds, what each round pruned, and segmentations.

A Unigram timeline is a sequence of rounds (step k = the vocabulary after round k), so the merge
table, candidates, chart and merge-tree parts of the panel are replaced by:

- `UnigramRoundsView` (left column): one row per round (vocabulary size, corpus log-likelihood,
  pieces pruned, corpus length in tokens); below it the pieces round k pruned, each with its loss
  (how much log-likelihood removing it costs) and its best segmentation without it.
- `UnigramChart` (a tab, in `chart`): vocabulary size and log-likelihood per round, a cursor at k; click to jump.
- `SegmentationsView` (a tab): for a word, the n best segmentations at round k with their
  probabilities (``unbelievable`` -> ``▁un believ able`` 0.6, ...), and a Sample button drawing
  segmentations with probability ∝ p(segmentation)^alpha (subword regularization).

The corpus view in the middle is the panel's own (segmented with ``tokviz.core.algorithm.piece_replay``).
"""

from __future__ import annotations

import random

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QAbstractItemView, QLabel, QPushButton, QSizePolicy, QSplitter, QStackedWidget, QWidget

from tokviz.core.explain.unigram import loaded_unigram
from tokviz.panels.base import monospace_font
from tokviz.panels.deferred import DeferredChart
from tokviz.panels.widgets import STRETCH, cell_table, hbox, segmentation_controls, set_cells, vbox

ROUND_HEADERS = ["Round", "Vocabulary", "Log-likelihood", "Pruned", "Corpus tokens"]
PRUNED_HEADERS = ["Piece", "Loss", "Uses", "Best segmentation without it"]
NBEST_HEADERS = ["Probability", "log p", "Segmentation"]
MAX_PRUNED_ROWS = 2_000
N_BEST = 5
N_SAMPLES = 8
DEFAULT_WORD = "unbelievable"


class UnigramRoundsView(QWidget):
    """Rounds table over the pruned pieces of the selected round. `round_selected(k)` on a click."""

    round_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rounds = cell_table("unigram_rounds_table", ROUND_HEADERS)
        self.rounds.currentCellChanged.connect(self._on_rounds_current_cell_changed)
        self.pruned_label = QLabel(objectName="unigram_pruned_label", wordWrap=True)
        self.pruned = cell_table("unigram_pruned_table", PRUNED_HEADERS, selectable=False)
        box = QWidget()
        vbox(box, self.pruned_label, (self.pruned, 1), margins=0, spacing=2)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.rounds)
        split.addWidget(box)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        vbox(self, split, margins=0)
        self._syncing = False
        self._n = 0
        self._shown_round: int | None = None
        self.update_fonts()

    def update_fonts(self) -> None:
        mono = monospace_font(self.font())
        self.pruned.setFont(mono)
        self.rounds.setFont(mono)
        h = self.rounds.fontMetrics().height() + 6
        for t in (self.rounds, self.pruned):
            t.verticalHeader().setDefaultSectionSize(h)
        self.rounds.resizeColumnsToContents()  # presenter mode doubles the font: no cut numbers, both ways

    def set_rounds(self, tl) -> None:
        """(Re)fill the rounds table (rounds are few: at most a few dozen)."""
        rounds = tl.rounds if tl is not None else []
        t = self.rounds
        self._syncing = True
        try:
            t.setRowCount(len(rounds))
            for r, rd in enumerate(rounds):
                set_cells(t, r, (str(rd.index), f"{rd.vocab_size:,}", f"{rd.log_likelihood:,.1f}",
                                 f"{rd.n_pruned:,}", f"{rd.viterbi_tokens:,}"), right=(0, 1, 2, 3, 4))
        finally:
            self._syncing = False
        t.resizeColumnsToContents()
        self._n = len(rounds)
        self._shown_round = None

    def reset(self) -> None:
        self._n = 0
        self._shown_round = None
        self.rounds.setRowCount(0)
        self.pruned.setRowCount(0)

    def show_round(self, tl, k: int) -> None:
        """Select round k and list what it pruned."""
        if tl is None or not tl.rounds:
            self.pruned.setRowCount(0)
            self.pruned_label.setText("Train a Unigram model to see its rounds.")
            return
        k = max(0, min(k, tl.n_rounds - 1))
        self._syncing = True
        try:
            self.rounds.selectRow(k)
            self.rounds.scrollToItem(self.rounds.item(k, 0), QAbstractItemView.ScrollHint.EnsureVisible)
        finally:
            self._syncing = False
        if self._shown_round == k:
            return
        self._shown_round = k
        rd = tl.rounds[k]
        if k == 0:
            self.pruned_label.setText(f"Round 0: the seed of {tl.seed_size:,} pieces after its first EM "
                                      f"(nothing pruned yet). Later rounds prune the cheapest pieces.")
        else:
            before = tl.rounds[k - 1].vocab_size
            unused = rd.n_unused_pruned
            self.pruned_label.setText(
                f"Round {k} pruned {rd.n_pruned:,} pieces ({before:,} → {rd.vocab_size:,}; {unused:,} of them "
                f"unused), those whose removal costs the corpus least log-likelihood, cheapest first")
        t = self.pruned
        rows = rd.first_pruned(MAX_PRUNED_ROWS)
        t.setRowCount(len(rows))
        for r, p in enumerate(rows):
            alt = " ".join(p.alternative) if p.alternative else "(unused: no segmentation chose it)"
            set_cells(t, r, (p.piece, f"{p.loss:,.2f}", f"{p.freq:,}", alt), right=(1, 2))

    @Slot(int, int, int, int)
    def _on_rounds_current_cell_changed(self, row: int, _col: int, _prow: int, _pcol: int) -> None:
        if not self._syncing and row >= 0:
            self.round_selected.emit(row)


class SegmentationsView(QWidget):
    """The n best segmentations of a word at round k, and sampled ones (subword regularization)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.word_edit, self.n_spin, self.alpha_spin = segmentation_controls("unigram", DEFAULT_WORD, N_BEST)
        self.label = QLabel(objectName="unigram_segment_label", wordWrap=True)
        self.table = cell_table("unigram_nbest_table", NBEST_HEADERS, selectable=False)
        self.sample_button = QPushButton("Sample", objectName="unigram_sample_button")
        self.sample_button.setToolTip(f"Draw {N_SAMPLES} segmentations (subword regularization)")
        self.samples = QLabel(objectName="unigram_samples", wordWrap=True)
        self.samples.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.samples.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # its share of the room, whatever was sampled: eight lines would make the panel (and window) taller
        self.samples.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        vbox(self, hbox(QLabel("Word:"), (self.word_edit, 1), self.n_spin), self.label, (self.table, 2),
             hbox(self.alpha_spin, self.sample_button, STRETCH), (self.samples, 1), margins=0, spacing=3)
        self._tokenizer = None
        self._step = 0
        self.nbest: list = []
        self.sampled: list = []
        self._rng = random.Random(0)
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.update_nbest)
        self.word_edit.textChanged.connect(self._timer.start)
        self.n_spin.valueChanged.connect(self._timer.start)
        self.sample_button.clicked.connect(self.sample)
        self.update_fonts()

    def update_fonts(self) -> None:
        mono = monospace_font(self.font())
        self.table.setFont(mono)
        self.samples.setFont(mono)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)

    def set_state(self, tokenizer, step: int) -> None:
        changed = tokenizer is not self._tokenizer or step != self._step
        self._tokenizer, self._step = tokenizer, step
        if changed:
            self.update_nbest()

    def set_word(self, word: str) -> None:
        self.word_edit.setText(word)
        self._timer.stop()
        self.update_nbest()

    @Slot()
    def update_nbest(self) -> None:
        word = self.word_edit.text().strip()[:64]
        tok = self._tokenizer
        self.nbest = tok.nbest(word, self.n_spin.value(), step=self._step) if word and tok is not None else []
        t = self.table
        t.setRowCount(len(self.nbest))
        for r, s in enumerate(self.nbest):
            set_cells(t, r, (f"{s.prob:.3f}", f"{s.log_prob:.2f}", " ".join(s.pieces)), right=(0, 1))
        t.resizeColumnToContents(0)
        t.resizeColumnToContents(1)
        if tok is None:
            self.label.setText("Train a Unigram model to see segmentations.")
        elif not word:
            self.label.setText("Type a word to see its most probable segmentations.")
        else:
            ex = tok.explain(word, step=self._step, n=1)
            shown = sum(s.prob for s in self.nbest)
            where = tok.caption or f"Round {self._step}"  # a loaded model: its name
            self.label.setText(f"{where}: {ex.n_segmentations:,} segmentations of “{ex.word}”; "
                               f"the top {len(self.nbest)} hold {100 * shown:.1f}% of the probability")
        self.samples.setText("")

    @Slot()
    def sample(self) -> list[str]:
        """Draw `N_SAMPLES` segmentations of the word; returns them as text lines."""
        word = self.word_edit.text().strip()[:64]
        tok = self._tokenizer
        if not word or tok is None:
            self.sampled = []
            self.samples.setText("")
            return []
        alpha = self.alpha_spin.value()
        self.sampled = [tok.sample(word, alpha=alpha, step=self._step, rng=self._rng) for _ in range(N_SAMPLES)]
        lines = [" ".join(s.pieces) for s in self.sampled]
        self.samples.setText(f"Sampled with alpha {alpha:g}:\n" + "\n".join(lines))
        return lines


def _unigram_chart():
    from .chart import UnigramChart

    return UnigramChart(sliced=True)


class UnigramParts(QObject):
    """The Unigram widgets of a `TimelinePanel`, and the switching between them and the merge
    parts (the rounds view replaces the merge table; Rounds and Segmentations tabs replace Chart
    and Provenance)."""

    def __init__(self, panel, merge_column: QWidget) -> None:
        super().__init__(panel)
        self.panel = panel
        self.rounds = UnigramRoundsView()
        self.chart = DeferredChart(_unigram_chart)  # pyqtgraph: made when the Rounds tab is first shown
        self.segmentations = SegmentationsView()
        panel.tabs.addTab(self.chart, "Rounds")
        panel.tabs.addTab(self.segmentations, "Segmentations")
        self.left_stack = QStackedWidget(objectName="timeline_left_stack")
        self.left_stack.addWidget(merge_column)
        self.left_stack.addWidget(self.rounds)
        self.rounds.round_selected.connect(self._on_round_selected)
        self.chart.step_clicked.connect(self._on_round_selected)
        self._tokenizer = None
        self.loaded = None  # a loaded Unigram model's explainer: the Segmentations tab explains it

    @property
    def active(self) -> bool:
        tl = self.panel.step_model.timeline
        return tl is not None and not tl.lists_merges

    def last_round(self, k: int) -> int:
        """Step k clamped to the rounds that exist (step n_rounds means the last one)."""
        return max(0, min(k, self.panel.step_model.timeline.n_rounds - 1))

    def tokenizer(self, k: int | None = None):
        """The timeline's tokenizer, rebuilt when rounds arrive (None before round 0); every round
        is in it, so `k` does not matter."""
        tl = self.panel.step_model.timeline
        if not tl.rounds:
            self._tokenizer = None
        elif self._tokenizer is None or self._tokenizer.n_steps < tl.n_rounds:
            self._tokenizer = tl.tokenizer()
        return self._tokenizer

    def update_view(self) -> None:
        """A new timeline: show the Unigram parts or the merge parts (a loaded Unigram model: the
        merge parts and the Segmentations tab)."""
        tabs, uni = self.panel.tabs, self.active
        self._tokenizer = None
        tl = self.panel.step_model.timeline
        self.loaded = None if uni or tl is None else loaded_unigram(tl)
        self.left_stack.setCurrentIndex(1 if uni else 0)
        for i in range(tabs.count()):
            w = tabs.widget(i)
            shown = uni or self.loaded is not None if w is self.segmentations else (w is self.chart) == uni
            if tabs.isTabVisible(i) != shown:  # (each call lays the tabs out again and repaints them whole)
                tabs.setTabVisible(i, shown)
        if not tabs.isTabVisible(tabs.currentIndex()):
            tabs.setCurrentIndex(tabs.indexOf(self.chart) if uni else 0)
        if self.loaded is not None:
            self.segmentations.set_state(self.loaded, 0)
        self.rounds.reset()
        tl = self.panel.step_model.timeline if uni else None
        if uni:
            self.rounds.set_rounds(tl)
        self.chart.set_timeline(tl)

    def rounds_added(self) -> None:
        if self.active:
            self.rounds.set_rounds(self.panel.step_model.timeline)

    def update_chart(self) -> None:
        self.chart.set_timeline(self.panel.step_model.timeline)
        self.chart.set_cursor(self.last_round(self.panel.step_model.step))

    def refresh(self, k: int, phase: int | None = None) -> None:
        """Repaint for step k: rounds table, pruned pieces, chart cursor, segmentations, corpus; a
        `phase` only its part (0 the rounds, 1 segmentations, 2 the corpus, 3 the chart's cursor)."""
        tl = self.panel.step_model.timeline
        r = self.last_round(k)
        if phase in (None, 0):
            self.rounds.show_round(tl, r)
        if phase in (None, 1):
            self.segmentations.set_state(self.tokenizer(), r)
        if phase in (None, 2):
            self.panel.show_corpus_at(self.tokenizer(), r)
        if phase in (None, 3):
            self.chart.set_cursor(r)

    def corpus_caption(self, k: int, where: str, n_tokens: int) -> str:
        tl = self.panel.step_model.timeline
        return f"Round {k:,}: {where} → {n_tokens:,} tokens (Viterbi, vocabulary {tl.vocab_size_at(k):,})"

    def sync(self, k: int) -> None:
        self.segmentations.set_state(self.tokenizer(), self.last_round(k))

    def show_piece(self, token_id: int, vocab: list[bytes], *, jump: bool = False) -> None:
        """A piece picked in the vocabulary: its segmentations at the current round."""
        tl = self.panel.step_model.timeline
        if not tl.n_special <= token_id < len(vocab):
            return
        piece = vocab[token_id].decode("utf-8", "replace")
        prefix = tl.settings.word_prefix
        self.sync(self.panel.step_model.step)
        self.segmentations.set_word(piece.replace(prefix, "") if prefix else piece)
        self.panel.tabs.setCurrentWidget(self.segmentations)

    def trace(self, word: str) -> list[str]:
        self.sync(self.panel.step_model.step)
        self.segmentations.set_word(word)
        return [" ".join(s.pieces) for s in self.segmentations.nbest]

    def update_fonts(self) -> None:
        self.rounds.update_fonts()
        self.segmentations.update_fonts()

    @Slot(int)
    def _on_round_selected(self, k: int) -> None:
        self.panel.playback.pause()
        self.panel.step_model.set_step(k)
