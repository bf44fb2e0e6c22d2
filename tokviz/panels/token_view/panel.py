"""`TokenViewPanel`: paste any text and see exactly how it is cut, compared across tokenizers.

Follows the `StepModel`: the first row is the trained tokenizer at step k, so scrubbing the
timeline re-tokenizes the text live. Below the editor: the coloured tokens (`TokenFlowView`,
modes text / ids / both, visible whitespace, byte tokens bracketed with their character, special
tokens as badges, hover for id, bytes, merge and corpus count, click to select the token in the
vocabulary and timeline), then tabs: comparison rows (trained at step k, trained at its last step,
character-level, word-level, loaded tokenizers; differences outlined), the batch (padded ids and
attention mask), diagnostics (round trip, leading-space twins, digit runs, trailing whitespace,
tokens per character by script, tokens unseen in training), the stream (ids decoded one by one),
numbers, a word's sampled segmentations. A status line gives the counts. Export: HTML, PNG, JSON, ids.
Encoding runs in `TokenViewEngine` (debounced, off the GUI thread, newest request wins).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QDeadlineTimer, QEvent, QEventLoop, Qt, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.display.palette import DEFAULT_PALETTE, PALETTE_LABELS, token_palette
from tokviz.engine.step_model import StepModel
from tokviz.engine.token_view.requests import RowSpec, TokenViewRequest, TokenViewResult, TrainedSnapshot
from tokviz.engine.token_view.token_view_engine import (
    FIRST_SCREEN_CHARS,
    QUICK_DELAY_MS,
    TYPING_DELAY_MS,
    TokenViewEngine,
)
from tokviz.engine.token_view.tokenizer_loader import TokenizerLoadEngine
from tokviz.panels.base import Panel, is_dark, monospace_font
from tokviz.panels.frame_turns import frame_turns

from .compare_view import BatchBox, TokenCompareView
from .diagnostics import diagnostics_html, token_tooltip_html
from .editor import TokenTextEdit
from .export import TokenViewExports
from .flow_view import MODES, TokenFlowView
from .lattice_action import LatticeAction
from .models_menu import PieceRows
from .number_lens import NumberLens
from .row_cue import RowCue
from .samples_tab import SamplesTab
from .stream_stepper import StreamStepper

SAMPLE_TEXT = ("Tokenizers cut text into pieces: café, naïve, Größe, 東京タワー, 안녕하세요!\n"
               "Emoji: 👋🏽 👩‍💻 ✨ — numbers 2024, 3.14159 and 1,000,000.\n"
               "    def hello(): return \" hello\"  \n<|endoftext|>")


class TokenViewPanel(TokenViewExports, Panel):
    """Coloured tokenization of any text at the current step, compared across tokenizers."""

    PANEL_ID = "token_view"
    TITLE = "Token View"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    token_selected = Signal(int)  # a token id was clicked (provenance: vocabulary, timeline)
    result_shown = Signal()  # a full result is on screen (tests, benchmarks)

    def __init__(self, step_model: StepModel, parent: QWidget | None = None, *,
                 corpus_text: Callable[[], str] | None = None) -> None:
        super().__init__(parent)
        self.step_model = step_model
        self._corpus_text = corpus_text
        self._corpus: tuple[int, str] | None = None
        self._corpus_version = 0
        self._loaded: list = []  # pretrained tokenizers added with "Add tokenizer…"
        self._loaded_paths: dict[int, str] = {}  # index in _loaded -> file it was read from
        self._piece_rows = PieceRows()  # WordPiece / Unigram main rows
        self._palette_key = DEFAULT_PALETTE
        self.result: TokenViewResult | None = None
        self.engine = TokenViewEngine(self)
        self._snap: tuple = (None, None)  # (TrainedSnapshot, the timeline it copies)
        self.loader = TokenizerLoadEngine(self)
        self._loading_name = ""
        self.loader.loaded.connect(self._on_loader_loaded)
        self.loader.failed.connect(self._on_loader_failed)
        self.model_cue = RowCue(self, step_model)  # what the tokens show: the step model's or the first row's
        self._build()
        self.engine.partial_ready.connect(self._on_engine_partial_ready)
        self.engine.finished.connect(self._on_engine_finished)
        self.engine.failed.connect(self._on_engine_failed)
        step_model.step_changed.connect(self._on_step_model_step_changed)
        step_model.timeline_changed.connect(self._on_corpus_or_timeline_changed)
        self.editor.setPlainText(SAMPLE_TEXT)

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        self.toolbar = bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        self.mode_box = QComboBox(objectName="token_mode")
        for m in MODES:
            self.mode_box.addItem({"text": "Text", "ids": "Ids", "both": "Text + ids"}[m], m)
        self.mode_box.setToolTip("Show token text, ids, or both")
        self.whitespace_box = QCheckBox("Whitespace", objectName="token_whitespace")
        self.whitespace_box.setToolTip("Show spaces, tabs and newlines as ␣ ⇥ ↵ (invisible characters are always shown)")
        self.specials_box = QCheckBox("Specials as text", objectName="token_specials_as_text")
        self.specials_box.setToolTip("Encode special-token strings typed in the text (<|endoftext|>, <s>) as ordinary "
                                     "text, as an application should encode what a user types")
        self.palette_box = QComboBox(objectName="token_palette")
        for key, label in PALETTE_LABELS.items():
            self.palette_box.addItem(label.split(" (")[0], key)
        self.palette_box.setToolTip("Token colours: Okabe–Ito and Tol light are colour-blind safe; "
                                    "high contrast is for projectors")
        for box in (self.mode_box, self.palette_box):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(9)
        self.export_button = QToolButton(objectName="token_export", text="Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        self.export_html_action = QAction("Export HTML…", self, triggered=self._on_export_html_triggered)
        self.export_png_action = QAction("Export PNG…", self, triggered=self._on_export_png_triggered)
        self.export_json_action = QAction("Export JSON…", self, triggered=self._on_export_json_triggered)
        self.copy_ids_action = QAction("Copy ids", self, triggered=self.copy_ids)
        for a in (self.export_html_action, self.export_png_action, self.export_json_action, self.copy_ids_action):
            menu.addAction(a)
        self.export_button.setMenu(menu)
        self.add_button = QToolButton(objectName="token_add_tokenizer", text="Add…")
        self.add_button.setToolTip("Compare with a pretrained tokenizer (tiktoken, tokenizer.json, GPT-2, minbpe)")
        self.add_button.clicked.connect(self._on_add_button_clicked)
        for w in (self.mode_box, self.whitespace_box, self.palette_box):
            bar.addWidget(w)
        bar.addStretch(1)
        bar.addWidget(self.add_button)
        bar.addWidget(self.export_button)

        self.editor = TokenTextEdit(objectName="token_text")  # a big paste goes in piece by piece
        self.editor.setPlaceholderText("Type or paste any text to see how it is tokenized…")
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.view = TokenFlowView()
        self.view.setObjectName("token_flow")
        self.view.set_tooltip_provider(self.tooltip_for)
        self.view.token_clicked.connect(self._on_view_token_clicked)
        self.lattice = LatticeAction(self)  # right-click: "Show lattice" (word_requested)
        self.compare = TokenCompareView()
        self.compare.setObjectName("token_compare")
        self.compare.set_tooltip_provider(self._compare_tooltip)
        self.compare.token_clicked.connect(self._on_compare_token_clicked)

        self.batch_box = batch_box = BatchBox()
        self.bos_box, self.eos_box, self.pad_box = batch_box.bos_box, batch_box.eos_box, batch_box.pad_box
        self.batch_view, self.batch_note = batch_box.batch_view, batch_box.batch_note

        self.diagnostics = QTextBrowser(objectName="token_diagnostics")
        self.diagnostics.setOpenLinks(False)

        self.tabs = QTabWidget(objectName="token_tabs")
        self.tabs.addTab(self.compare, "Compare")
        self.tabs.addTab(batch_box, "Batch")
        self.tabs.addTab(self.diagnostics, "Diagnostics")
        self.stream = StreamStepper.attach(self)  # the ids decoded one at a time, as a server streams them
        self.numbers = NumberLens.attach(self)  # 1-1000 and the user's number as each tokenizer cuts them
        self.samples = SamplesTab.attach(self)  # a word's sampled segmentations (BPE-dropout, Unigram alpha)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        for w in (self.editor, self.view, self.tabs):
            self.splitter.addWidget(w)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 3)
        self.splitter.setSizes([90, 260, 260])
        for w, h in ((self.editor, 36), (self.view, 40), (self.tabs, 60)):  # docks stay small
            w.setMinimumHeight(h)
        self.status = QLabel(objectName="token_status", wordWrap=True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(bar)
        layout.addWidget(self.model_cue)
        layout.addWidget(self.splitter, 1)
        foot = QHBoxLayout()  # beside the counts: the toolbar stays as narrow as the dock may be
        foot.addWidget(self.specials_box, 0, Qt.AlignmentFlag.AlignTop)
        foot.addWidget(self.status, 1)
        layout.addLayout(foot)

        self.editor.textChanged.connect(self._on_editor_text_changed)
        self.editor.paste_finished.connect(self.refresh)  # a paste is no typing: no debounce wait
        self.mode_box.currentIndexChanged.connect(self._on_mode_box_changed)
        self.whitespace_box.toggled.connect(lambda _on: self.refresh())
        self.specials_box.toggled.connect(lambda _on: self.refresh())
        self.palette_box.currentIndexChanged.connect(self._on_palette_box_changed)
        for box in (self.bos_box, self.eos_box):
            box.toggled.connect(lambda _on: self.refresh())
        self.pad_box.currentIndexChanged.connect(lambda _i: self.refresh())
        self._update_fonts()
        self._apply_palette()

    def _present(self, changes) -> None:
        """Presenter mode: the text, the tokens and the tabs (comparison rows give the
        counts; lessons show the batch), the tabs the largest; no toolbar (the presenter sets the
        high-contrast colours, lessons the mode), no status line and no batch footnote."""
        bar = self.toolbar
        tools = (bar.itemAt(i).widget() for i in range(bar.count()))
        changes.hide(self.status, self.specials_box, self.batch_note, *(w for w in tools if w is not None))
        total = sum(self.splitter.sizes()) or 900
        changes.set(self.splitter.setSizes, was=self.splitter.sizes(), now=[total * k // 9 for k in (2, 3, 4)])

    def _update_fonts(self) -> None:
        if hasattr(self, "editor"):
            self.editor.setFont(monospace_font(self.font()))
        for view in self.findChildren(TokenFlowView):  # presenter mode's small print (captions)
            view.refresh_fonts()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "view"):
            self._apply_palette()
        super().changeEvent(event)

    # -- scripting surface ----------------------------------------------------------------------

    def bind_workspace(self, workspace) -> None:
        """Be the workspace's current text: read when needed, announced as it is edited."""
        workspace.set_current_text_reader(self.text)
        self.editor.textChanged.connect(workspace.notify_current_text_changed)
        workspace.corpus_changed.connect(self._on_corpus_or_timeline_changed)

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        self.refresh()  # not typing: no debounce wait

    def text(self) -> str:
        return self.editor.text()

    def set_mode(self, mode: str) -> None:
        self.mode_box.setCurrentIndex(MODES.index(mode))

    def set_show_whitespace(self, on: bool) -> None:
        self.whitespace_box.setChecked(on)

    def set_specials_as_text(self, on: bool) -> None:
        self.specials_box.setChecked(on)

    def set_palette_key(self, key: str) -> None:
        self.palette_box.setCurrentIndex(list(PALETTE_LABELS).index(key))

    @property
    def palette_key(self) -> str:
        return self._palette_key

    def add_tokenizer(self, tokenizer) -> None:
        """Compare with `tokenizer` (anything with ``encode(text) -> Encoding``, ``decode``,
        ``n_vocab``, ``token_bytes`` and ``name``)."""
        self._loaded.append(tokenizer)
        self.refresh()

    def clear_tokenizers(self) -> None:
        """Remove every comparison row added with `add_tokenizer` (a guided lesson starts afresh)."""
        self._loaded.clear()
        getattr(self, "_loaded_paths", {}).clear()
        self.refresh()

    def add_tokenizer_file(self, path: str | Path) -> bool:
        """Load a pretrained tokenizer file in the background and add it as a comparison row
        (`loader.loaded` or `loader.failed` follows). False when loading is not available."""
        load = _load_tokenizer()
        if load is None:
            return False
        self._loading_name = Path(path).name
        self._loading_path = str(path)  # sessions store comparison rows by path
        self.status.setText(f"Loading {self._loading_name}…")
        self.loader.load(str(path), load)
        return True

    @Slot(object)
    def _on_loader_loaded(self, tokenizer) -> None:
        self._loaded_paths[len(self._loaded)] = getattr(self, "_loading_path", "")
        self.add_tokenizer(tokenizer)

    @Slot(str)
    def _on_loader_failed(self, message: str) -> None:
        self.status.setText(f"Cannot load {self._loading_name}: {message}")

    def compare_paths(self) -> list[str]:
        """Files of the comparison rows added with "Add…" (sessions store them by path)."""
        return [self._loaded_paths[i] for i in range(len(self._loaded)) if self._loaded_paths.get(i)]

    def screenshot_variants(self) -> list:
        """Extra looks for the screenshot command: (suffix, apply) pairs."""
        def high_contrast() -> None:
            if self.parentWidget() is not None:
                self.parentWidget().raise_()  # our dock, in front of its tab group
            self.set_palette_key("high-contrast")
            self.set_mode("both")
        return [("high-contrast", high_contrast)]

    def prepare_screenshot(self) -> None:
        """The screenshot command: wait until the text at the current step is shown."""
        self.refresh()
        self.wait_idle()

    def shutdown(self) -> None:
        self.loader.shutdown()
        self.engine.shutdown()

    # -- requests -------------------------------------------------------------------------------

    def _snapshot(self) -> TrainedSnapshot | None:
        tl = self.step_model.timeline
        if tl is None or not tl.replays_merges:  # other models' rows carry their tokenizer
            return None
        key = (id(tl), tl.n_merges)
        snap, of = self._snap
        if snap is None or of is not tl or snap.key != key:  # copying every merge on each step would stall
            snap = TrainedSnapshot(key, tl.base, tuple(s.pair for s in tl.steps), tl.settings.split,
                                   dict(tl.special_ids), tl.unk_id, tuple(s.count for s in tl.steps))
            self._snap = (snap, tl)
        return snap

    def _rows(self) -> tuple[RowSpec, ...]:
        rows = []
        tl = self.step_model.timeline
        if tl is not None and not tl.has_counts:  # a loaded tokenizer at step k
            k, n, tok = self.step_model.step, tl.n_steps, tl.tokenizer()
            rows.append(RowSpec("step", f"{tl.title} · step {k:,}/{n:,}", step=k, tokenizer=tok))
            rows.append(RowSpec("final", f"{tl.title} · all {n:,} merges", step=None, tokenizer=tok))
        elif tl is not None and (not tl.replays_merges or getattr(tl, "own_encoder", False)):  # rows carry it
            rows.extend(self._piece_rows.rows(tl, self.step_model.step))
        elif tl is not None:  # BPE: the worker rebuilds the tokenizer from a snapshot of the merges
            k, n = self.step_model.step, tl.n_merges
            rows.append(RowSpec("step", f"Trained · step {k:,}/{n:,}", step=k))
            rows.append(RowSpec("final", f"Trained · final ({n:,} merges)", step=None))
        if self._corpus is not None:
            rows.append(RowSpec("chars", "Character-level"))
            rows.append(RowSpec("words", "Word-level"))
        for i, tok in enumerate(self._loaded):
            rows.append(RowSpec(f"loaded:{i}", tok.name, tokenizer=tok))
        return tuple(rows)

    def _ensure_corpus(self) -> None:
        if self._corpus is None and self._corpus_text is not None:
            text = self._corpus_text()
            if text and not text.isspace():  # strip() would copy megabytes on the GUI thread
                self._corpus_version += 1
                self._corpus = (self._corpus_version, text)

    def refresh(self, *, delay_ms: int = QUICK_DELAY_MS) -> None:
        """Re-encode the text (after `delay_ms`)."""
        self._ensure_corpus()
        req = TokenViewRequest(self.text(), self._rows(), show_whitespace=self.whitespace_box.isChecked(),
                               trained=self._snapshot(), corpus=self._corpus, bos=self.bos_box.isChecked(),
                               eos=self.eos_box.isChecked(), pad_side=self.pad_box.currentData(),
                               n_colors=token_palette(self._palette_key).size,
                               specials_as_text=self.specials_box.isChecked())
        self.engine.request(req, delay_ms=delay_ms)

    @Slot()
    def _on_editor_text_changed(self) -> None:
        if not self.editor.is_pasting:  # a big paste is encoded once, when its last piece is in
            self.refresh(delay_ms=TYPING_DELAY_MS)

    @Slot(int)
    def _on_step_model_step_changed(self, _step: int) -> None:
        training = self.step_model.timeline is not None and not self.step_model.is_finished
        long = len(self.text()) > 1.5 * FIRST_SCREEN_CHARS  # scrubbing: encode where the slider rests
        self.refresh(delay_ms=TYPING_DELAY_MS if training or long else QUICK_DELAY_MS)

    @Slot()
    def _on_corpus_or_timeline_changed(self) -> None:
        self._corpus = None  # read again: a new document, or the corpus changed with the timeline
        self.refresh()

    def wait_idle(self, qtbot=None, timeout_ms: int = 10_000) -> bool:
        """Tests and scripts: run the event loop until no request is pending."""
        deadline = QDeadlineTimer(timeout_ms)
        while self.engine.is_pending and not deadline.hasExpired():
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        return not self.engine.is_pending

    # -- showing results ------------------------------------------------------------------------

    def _apply_palette(self) -> None:
        pal = token_palette(self._palette_key, dark=is_dark(self.palette()))
        self._token_palette = pal
        self.view.set_token_palette(pal)
        self.compare.set_token_palette(pal)
        self.batch_view.set_token_palette(pal)
        if self.result is not None and self.result.request.n_colors != pal.size:
            self.refresh()  # colour slots are computed with the encoding
        self.view.viewport().update()

    @Slot(int)
    def _on_palette_box_changed(self, _index: int) -> None:
        self._palette_key = self.palette_box.currentData()
        self._apply_palette()

    @Slot(int)
    def _on_mode_box_changed(self, _index: int) -> None:
        mode = self.mode_box.currentData()
        self.view.set_mode(mode)
        self.compare.set_mode(mode)

    @Slot(object)
    def _on_engine_partial_ready(self, result: TokenViewResult) -> None:
        self._show_reference(result)
        ref = result.reference
        doing = "encoding" if ref.stats.chars < len(result.request.text) else "comparing"
        self.status.setText(f"{ref.spec.title} · {ref.stats.summary()} · {doing}…")

    @Slot(object)
    def _on_engine_finished(self, result: TokenViewResult) -> None:
        self._show(result)
        self.result_shown.emit()

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self.status.setText(f"Cannot tokenize: {message}")

    def _show_reference(self, result: TokenViewResult) -> None:
        frame_turns(self).claim()  # the text and its rows repaint: other big updates wait a frame
        shown, self.result = self.result, result
        ref = result.reference
        if ref is None:
            self.view.clear()
            return
        if shown is not None and shown.reference is ref:  # a partial result showed this very row
            return
        enc, labels = ref.encoding, ref.labels
        self.view.set_tokens(labels.labels, enc.ids, labels.kinds, labels.breaks, ref.slots, groups=ref.groups,
                             captions=ref.captions, marked=ref.marked)

    def _show(self, result: TokenViewResult) -> None:
        self._show_reference(result)
        ref = result.reference
        if ref is None:
            self.status.setText("Train a tokenizer (or load a model) to see how this text is tokenized.")
            self.compare.set_rows([], text_length=0)
            self.diagnostics.setHtml("")
            return
        if len(result.rows) > 1 and len(self.compare.titles) <= 1:  # a comparison begins: give it the room
            sizes = self.splitter.sizes()
            view = max(80, sum(sizes) // 5)
            self.splitter.setSizes([min(sizes[0], 90), view, max(0, sum(sizes) - min(sizes[0], 90) - view)])
            self.tabs.setCurrentWidget(self.compare)
        self.compare.set_rows(result.rows, text_length=len(result.request.text))
        if result.batch is not None:
            self.batch_box.show_batch(result.batch)
        self.diagnostics.setHtml(diagnostics_html(result, self.palette()))
        rt = ref.round_trip
        trip = "" if rt is None else (" · round trip ✓" if rt.ok else f" · {rt.summary()}")
        self.status.setText(f"{ref.spec.title} · {ref.stats.summary()}{trip}")

    # -- hover and click ------------------------------------------------------------------------

    def tooltip_for(self, index: int, row: int = 0) -> str:
        """Tooltip HTML for token `index` of comparison row `row` (0 = the main view)."""
        return token_tooltip_html(self.result, row, index)

    def _compare_tooltip(self, row: int, index: int) -> str:
        return self.tooltip_for(index, row)

    @Slot(int)
    def _on_view_token_clicked(self, index: int) -> None:
        if self.result is not None and self.result.rows:
            r = self.result.rows[0]
            if r.spec.key in ("step", "final") and index < len(r.encoding.ids):
                self.token_selected.emit(r.encoding.ids[index])

    @Slot(int, int)
    def _on_compare_token_clicked(self, row: int, index: int) -> None:
        if self.result is not None and row < len(self.result.rows):
            r = self.result.rows[row]
            if r.spec.key in ("step", "final"):
                self.token_selected.emit(r.encoding.ids[index])

    @Slot()
    def _on_add_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Add tokenizer", "", "Tokenizers (*.tiktoken *.json *.model *.bpe);;All files (*)")
        if path:
            self.add_tokenizer_file(path)


def _load_tokenizer():
    """`tokviz.core.loading.load_tokenizer`, or None when that package is absent."""
    try:
        from tokviz.core.loading import load_tokenizer
    except ImportError:
        return None
    return load_tokenizer
