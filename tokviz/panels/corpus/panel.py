"""`CorpusPanel`: the corpus editor, its word-frequency mode and its live statistics.

Texts up to `EDIT_LIMIT_BYTES` are edited in a `CodeEditor` (texts over 64K characters are fed in
slices, one per event-loop turn, so the window never freezes). Larger files are shown in a clearly
labelled read-only `LargeTextView`; training still uses the whole text. Statistics are computed
on a background thread after a short pause in typing.

What this leaves out: reading files and dialogs (the window does that and hands over a
`LoadedCorpus` or a string), training.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QCheckBox, QLabel, QStackedWidget, QWidget

from tokviz.core import looks_like_word_counts
from tokviz.engine.corpus_files import (
    EDIT_LIMIT_BYTES,
    SNIFF_CHARS,
    CorpusStats,
    LoadedCorpus,
    corpus_stats,
    head_lines,
)
from tokviz.engine.large_text import LargeText
from tokviz.engine.tasks import TaskEngine
from tokviz.engine.training.child import CorpusInput
from tokviz.panels.base import Panel, error_color, monospace_font, notice_colors
from tokviz.panels.widgets import ProgressBar, hbox, vbox

from .code_editor import CodeEditor
from .feeder import EditorFeeder
from .large_text_view import LargeTextView

FEED_CHARS = 64 * 1024  # characters inserted per event-loop turn when loading a big text
SYNC_STATS_CHARS = 20_000  # below this, statistics are computed at once on the GUI thread
STATS_DELAY_MS = 250
UNTITLED = "Untitled"


def format_stats(s: CorpusStats, *, word_counts: bool) -> str:
    """One line of statistics, e.g. ``"12 characters · 12 bytes · 1 line · ..."``."""

    def n(value: int, word: str, plural: str | None = None) -> str:
        return f"{value:,} {word if value == 1 else (plural or word + 's')}"

    parts = [n(s.chars, "character"), n(s.bytes, "byte"), n(s.lines, "line")]
    if word_counts and s.table_entries is not None:
        parts += [n(s.table_entries, "table entry", "table entries"), f"total count {s.table_total:,}"]
    else:
        parts += [n(s.words, "word"), n(s.unique_words, "unique word")]
    parts.append(n(s.distinct_chars, "distinct character"))
    return " · ".join(parts)


class CorpusPanel(Panel):
    """The corpus document: editable text or a read-only view of a large file."""

    PANEL_ID = "corpus"
    TITLE = "Corpus"
    DEFAULT_AREA = Qt.DockWidgetArea.LeftDockWidgetArea

    document_changed = Signal()  # name, path, read-only state or modified flag changed
    stats_changed = Signal(object)  # CorpusStats
    word_counts_changed = Signal()  # read `word_counts`
    text_loaded = Signal()  # a new document is fully in the editor
    files_dropped = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._path: Path | None = None
        self._title = UNTITLED
        self._large: LargeText | None = None
        self._word_counts = False
        self._stats: CorpusStats | None = None
        self._build()
        self._stats_engine = TaskEngine("corpus-stats", self)
        self._stats_engine.finished.connect(self._on_stats_engine_finished)
        self._stats_timer = QTimer(self, singleShot=True, interval=STATS_DELAY_MS)
        self._stats_timer.timeout.connect(self._update_stats)
        self.feeder = EditorFeeder(self.editor, slice_chars=FEED_CHARS, parent=self)
        self.feeder.progressed.connect(self._on_feeder_progressed)
        self.feeder.finished.connect(self._on_feeder_finished)
        self._feed_stats: CorpusStats | None = None  # statistics of the text being fed, if known
        self.editor.document().contentsChanged.connect(self._on_editor_contents_changed)
        self.editor.document().modificationChanged.connect(self._on_editor_modification_changed)
        self.editor.files_dropped.connect(self.files_dropped)
        self.document_changed.connect(self._update_name)
        self._update_fonts()
        self._update_stats()

    def _build(self) -> None:
        self._name_label = QLabel(UNTITLED, objectName="corpus_name")
        self._name_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.word_counts_box = QCheckBox("Word-frequency table", objectName="word_counts_box")
        self.word_counts_box.setToolTip(
            "Treat each line as 'word count' (for example 'lower 2'): training counts each word "
            "that many times. Detected automatically when a file or sample is opened."
        )
        self.word_counts_box.toggled.connect(self.set_word_counts)
        header = hbox((self._name_label, 1), self.word_counts_box, margins=0)

        self.banner = QLabel(objectName="corpus_banner", wordWrap=True)
        self.banner.setContentsMargins(8, 5, 8, 5)
        self.banner.setAutoFillBackground(True)
        self.banner.hide()
        self.progress = ProgressBar(objectName="corpus_progress", textVisible=True)
        self.progress.setRange(0, 1000)
        self.progress.setMaximumHeight(self.fontMetrics().height() + 6)
        self.progress.hide()

        self.editor = CodeEditor()
        self.large_view = LargeTextView()
        self._stack = QStackedWidget()
        self._stack.addWidget(self.editor)
        self._stack.addWidget(self.large_view)

        self.stats_label = QLabel(objectName="corpus_stats", wordWrap=True)
        self.stats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        vbox(self, header, self.banner, self.progress, (self._stack, 1), self.stats_label, margins=6, spacing=4)
        self.setFocusProxy(self.editor)

    def _update_fonts(self) -> None:
        bold = self.font()
        bold.setBold(True)
        self._name_label.setFont(bold)
        mono = monospace_font(self.font())
        self.editor.setFont(mono)
        self.editor.setTabStopDistance(4 * self.editor.fontMetrics().horizontalAdvance(" "))
        self.large_view.setFont(mono)
        self.progress.setMaximumHeight(self.fontMetrics().height() + 6)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self._update_banner_colors()
            self._show_stats()

    # -- document state ---------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def title(self) -> str:
        """Name shown in the window title: the file name, ``Sample: ...`` or ``Untitled``."""
        return self._title

    @property
    def is_read_only(self) -> bool:
        return self._large is not None

    @property
    def is_loading(self) -> bool:
        return self.feeder.text is not None

    @property
    def is_modified(self) -> bool:
        return not self.is_read_only and self.editor.document().isModified()

    @property
    def word_counts(self) -> bool:
        return self._word_counts

    @property
    def stats(self) -> CorpusStats | None:
        return self._stats

    def text(self) -> str:
        """The whole corpus text. For a large file this joins its pieces (slow: scripts only;
        training uses `corpus_input()`)."""
        if self._large is not None:
            return self._large.text()
        if self.feeder.text is not None:
            return self.feeder.text
        return self.editor.text()

    def bind_workspace(self, workspace) -> None:
        """Be the workspace's corpus: it reads `text_prefix` and hears when a document is loaded."""
        workspace.set_corpus_reader(self.text_prefix)
        self.text_loaded.connect(workspace.notify_corpus_changed)

    def text_prefix(self, n_chars: int) -> str:
        """The first `n_chars` characters of the corpus, cheap even for a large file."""
        if self._large is not None:
            return self._large.prefix(n_chars)
        if self.feeder.text is not None:
            return self.feeder.text[:n_chars]
        return self.editor.text()[:n_chars]

    def corpus_input(self, *, word_counts: bool | None = None) -> CorpusInput:
        """The corpus as training input (a large file stays in pieces)."""
        wc = self._word_counts if word_counts is None else word_counts
        if self._large is not None:
            return CorpusInput(word_counts=wc, name=self._title, pieces=tuple(self._large.pieces))
        return CorpusInput(self.text(), wc, self._title)

    def encoded_text(self) -> bytes:
        """The text as UTF-8 bytes, for saving."""
        if self._large is not None:
            return b"".join(self._large.encoded_pieces())
        return self.text().encode("utf-8")

    def is_blank(self) -> bool:
        """True when there is nothing but whitespace to train on."""
        if self._large is not None:
            return self._stats is not None and self._stats.words == 0
        text = self.text()
        return not text or text.isspace()

    @Slot()
    def _update_name(self) -> None:
        marks = []
        if self.is_modified:
            marks.append("modified")
        if self.is_read_only:
            marks.append("read-only")
        self._name_label.setText(self._title + (f"  ({', '.join(marks)})" if marks else ""))
        self._name_label.setToolTip(str(self._path) if self._path else "Not saved to a file")

    # -- replacing the document -------------------------------------------------------------

    def set_text(
        self,
        text: str,
        *,
        path: str | Path | None = None,
        title: str | None = None,
        word_counts: bool | None = None,
        stats: CorpusStats | None = None,
    ) -> None:
        """Replace the document with `text` (unmodified). `word_counts` None: detect a table.
        Big texts are fed in slices; listen for `text_loaded`."""
        self._stop_feeding()
        self._large = None
        self.large_view.clear()
        self._path = Path(path) if path is not None else None
        self._title = title or (self._path.name if self._path else UNTITLED)
        self._stack.setCurrentWidget(self.editor)
        if word_counts is None:  # detect a ``word count`` table from its first lines
            word_counts = looks_like_word_counts(head_lines(text, SNIFF_CHARS))
        self._set_word_counts_silently(bool(word_counts))
        self._show_banner(None)
        if len(text) <= FEED_CHARS:
            self.editor.setPlainText(text)
            self._finish_document(stats)
        else:
            self._start_feeding(text, stats)

    def show_loaded(self, loaded: LoadedCorpus) -> None:
        """Show a file read by `tokviz.engine.corpus_files.load_file`."""
        notes = []
        if loaded.replaced:
            notes.append("Bad UTF-8 bytes were replaced with � (U+FFFD).")
        if not loaded.read_only and loaded.crlf:
            notes.append("Windows line endings (CR LF) are shown and saved as LF.")
        note = " ".join(notes)
        if not loaded.read_only:
            self.set_text(loaded.text, path=loaded.path, word_counts=loaded.word_counts, stats=loaded.stats)
            if note:
                self._show_banner(note)
            return
        self._stop_feeding()
        self._large = loaded.large  # first: the editor's change signals are then ignored
        self.editor.clear()
        self.editor.document().setModified(False)
        self._stats_timer.stop()
        self._path = loaded.path
        self._title = loaded.path.name
        self.large_view.set_text(loaded.large)
        self._stack.setCurrentWidget(self.large_view)
        self._set_word_counts_silently(loaded.word_counts)
        limit = EDIT_LIMIT_BYTES / (1024 * 1024)
        self._show_banner(
            f"Read-only view: this file is {loaded.n_bytes / (1024 * 1024):.1f} MB, over the "
            f"{limit:g} MB editing limit. Training uses the whole file."
            + (f" {note}" if note else "")
        )
        self._set_stats(loaded.stats)
        self.document_changed.emit()
        self.text_loaded.emit()

    def clear_document(self) -> None:
        """A new, empty, untitled document."""
        self.set_text("")

    def mark_saved(self, path: str | Path) -> None:
        """The text was written to `path`: it becomes the document's file, unmodified."""
        self._path = Path(path)
        self._title = self._path.name
        if not self.is_read_only:
            self.editor.document().setModified(False)
        self.document_changed.emit()

    def _finish_document(self, stats: CorpusStats | None) -> None:
        self.editor.document().setModified(False)
        self.editor.moveCursor(QTextCursor.MoveOperation.Start)
        self.editor.document().clearUndoRedoStacks()
        self._stats_timer.stop()
        if stats is not None and stats.chars == len(self.editor.document().toRawText()):
            self._set_stats(stats)
        else:
            self._update_stats()
        self.document_changed.emit()
        self.text_loaded.emit()

    # -- feeding a big text into the editor -------------------------------------------------

    def _start_feeding(self, text: str, stats: CorpusStats | None) -> None:
        self._feed_stats = stats
        self.feeder.start(text)
        self.set_loading("Loading text into the editor", 0.0)

    @Slot(float)
    def _on_feeder_progressed(self, fraction: float) -> None:
        self.set_loading("Loading text into the editor", fraction)

    @Slot()
    def _on_feeder_finished(self) -> None:
        self.finish_loading()
        self._finish_document(self._feed_stats)

    def _stop_feeding(self) -> None:
        if self.feeder.stop():
            self.finish_loading()

    # -- loading indicator (the window reports file reading through this too) ---------------

    def set_loading(self, what: str, fraction: float | None) -> None:
        self.progress.show()
        if fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(round(1000 * max(0.0, min(1.0, fraction))))
        self.progress.setFormat(f"{what}… %p%" if fraction is not None else f"{what}…")

    def finish_loading(self) -> None:
        self.progress.hide()

    # -- banner -----------------------------------------------------------------------------

    def _show_banner(self, text: str | None) -> None:
        self.banner.setText(text or "")
        self.banner.setVisible(bool(text))
        self._update_banner_colors()

    def _update_banner_colors(self) -> None:
        bg, fg = notice_colors(self.palette())
        pal = self.banner.palette()
        pal.setColor(self.banner.backgroundRole(), bg)
        pal.setColor(self.banner.foregroundRole(), fg)
        self.banner.setPalette(pal)

    # -- word-frequency mode ----------------------------------------------------------------

    @Slot(bool)
    def set_word_counts(self, on: bool) -> None:
        """Treat the text as a ``word count`` table (or as running text)."""
        if self._set_word_counts_silently(bool(on)):
            self._update_stats()

    def _set_word_counts_silently(self, on: bool) -> bool:
        """Set the mode without recomputing statistics; True if it changed."""
        changed = on != self._word_counts
        self._word_counts = on
        self.word_counts_box.blockSignals(True)
        self.word_counts_box.setChecked(on)
        self.word_counts_box.blockSignals(False)
        if changed:
            self.word_counts_changed.emit()
        return changed

    # -- statistics -------------------------------------------------------------------------

    @Slot()
    def _on_editor_contents_changed(self) -> None:
        if self.feeder.text is None and not self.is_read_only:
            self._stats_timer.start()

    @Slot(bool)
    def _on_editor_modification_changed(self, _modified: bool) -> None:
        self.document_changed.emit()

    @Slot()
    def _update_stats(self) -> None:
        """Recompute statistics now (small texts) or on the stats thread (large ones)."""
        text = self.text()
        if len(text) <= SYNC_STATS_CHARS:
            self._stats_engine.cancel()
            self._set_stats(corpus_stats(text, word_counts=self._word_counts, name=self._title))
        else:
            self._stats_engine.start(corpus_stats, text, word_counts=self._word_counts, name=self._title)

    @Slot(object)
    def _on_stats_engine_finished(self, stats: CorpusStats) -> None:
        self._set_stats(stats)

    def _set_stats(self, stats: CorpusStats) -> None:
        self._stats = stats
        self._show_stats()
        self.stats_changed.emit(stats)

    def _show_stats(self) -> None:
        s = self._stats
        if s is None:
            return
        text = format_stats(s, word_counts=self._word_counts)
        if self._word_counts and s.table_error:
            color = error_color(self.palette()).name()
            text = f'{text}<br><span style="color:{color}">Not a word-frequency table: {_escape(s.table_error)}</span>'
            self.stats_label.setTextFormat(Qt.TextFormat.RichText)
        else:
            self.stats_label.setTextFormat(Qt.TextFormat.PlainText)
        self.stats_label.setText(text)

    def shutdown(self) -> None:
        self._stop_feeding()
        self._stats_timer.stop()
        self._stats_engine.shutdown()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
