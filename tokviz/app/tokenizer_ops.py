"""`TokenizerController`: File > Open Tokenizer… and File > Known Tokenizers for the main window.

A tokenizer (tiktoken file, tokenizer.json, SentencePiece .model, GPT-2 encoder.json/vocab.bpe,
minbpe .model, tokviz model, folder, a known name such as ``cl100k_base`` or ``hf:ORG/NAME`` from
the Hugging Face cache) is read on a background thread
(`TaskEngine` + `load_any_timeline`) with a status message and a Cancel button in the status bar.
A `.tiktoken` file of an unknown encoding asks for its split pattern and tries again. Once read,
the tokenizer becomes the current model of the shared `StepModel`. The Known Tokenizers menu is
filled from a listing of the caches made on another background thread (`list_known_tokenizers`):
whatever is in the Hugging Face cache, the window opens at once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QMenu, QPushButton

from tokviz.core.algorithm.protocol import StepTimeline
from tokviz.core.formats.hf_cache import HF_PREFIX, KnownListing, hf_hub_cache
from tokviz.core.formats.tiktoken import PatternRequired
from tokviz.core.text.split import SPLIT_PRESETS
from tokviz.engine.pretrained_tasks import list_known_tokenizers, load_any_timeline
from tokviz.engine.step_model import StepModel
from tokviz.engine.tasks import TaskEngine
from tokviz.engine.training.engine import TrainingEngine
from tokviz.panels.training.panel import TrainingPanel

from .services import WindowServices
from .waiting import wait_for_signals

TOKENIZER_FILTER = ("Tokenizers (*.tiktoken *.json *.bpe *.model);;tiktoken files (*.tiktoken);;"
                    "tokenizer.json / encoder.json (*.json);;SentencePiece models (*.model);;All files (*)")
DEFAULT_PATTERN = "gpt4"  # offered when a .tiktoken file's pattern is unknown


class TokenizerController(QObject):
    """Loads tokenizers for one window. `opened(source)`, `open_failed(message)`, `cancelled()`."""

    opened = Signal(str)
    open_failed = Signal(str)
    cancelled = Signal()

    def __init__(self, step_model: StepModel, training_engine: TrainingEngine, training_panel: TrainingPanel,
                 show_model: Callable[[StepTimeline, Path], None], services: WindowServices,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step_model, self.training_engine, self.training_panel = step_model, training_engine, training_panel
        self.show_model = show_model  # (timeline, path): a tokviz model opened as a tokenizer
        self.services = services
        self.loader = TaskEngine("tokenizer-loader", self)
        self.loader.finished.connect(self._on_loader_finished)
        self.loader.failed.connect(self._on_loader_failed)
        self.loader.cancelled.connect(self._on_loader_cancelled)
        self.cancel_button = QPushButton("Cancel loading", objectName="tokenizer_cancel")
        self.cancel_button.setToolTip("Stop loading the tokenizer")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        services.status_bar.addPermanentWidget(self.cancel_button)
        self._source: str | None = None
        self._pattern: str | None = None
        self.outcome = ""  # "opened", "failed", "cancelled" of the last load
        self.lister = TaskEngine("known-tokenizers", self)  # File > Known Tokenizers, off the GUI thread
        self.lister.finished.connect(self._on_lister_finished)
        self.lister.failed.connect(self._on_lister_failed)
        self._listing: KnownListing | None = None  # the caches as last looked through
        self._listing_error = ""
        self._known_menu: QMenu | None = None

    @property
    def is_loading(self) -> bool:
        return self.loader.is_running

    def wait(self, timeout_ms: int = 60_000) -> str:
        """Run the event loop until the tokenizer being loaded is shown: ``"opened"``,
        ``"failed"``, ``"cancelled"``, ``"idle"`` (nothing loading) or ``"timeout"``."""
        if not self.is_loading:
            return self.outcome or "idle"
        return wait_for_signals({"opened": [self.opened], "failed": [self.open_failed],
                                      "cancelled": [self.cancelled]}, timeout_ms)

    def show(self, timeline, source: str) -> None:
        """Make a loaded tokenizer (or a tokviz model opened as one) the window's current model."""
        if timeline.has_counts:  # a tokviz model opened as a tokenizer: trained, not loaded
            self.show_model(timeline, Path(source))
            return
        if self.training_engine.is_running:
            self.training_engine.cancel()
        self.step_model.set_timeline(timeline, source=source)
        self.training_panel.show_summary(timeline)
        self.services.status(f"Opened tokenizer {timeline.settings.name}: {timeline.vocab_size:,} tokens, "
                                  f"{timeline.n_steps:,} merges", 5000)

    def open_dialog(self) -> None:
        store = self.services.settings
        path = self.services.dialogs.open_path("Open Tokenizer", store.last_dir(), TOKENIZER_FILTER)
        if path:
            self.open(path)

    def open_folder_dialog(self) -> None:
        """A folder holding a tokenizer (tokenizer.json, encoder.json + vocab.bpe, one .tiktoken...)."""
        path = self.services.dialogs.open_folder("Open Tokenizer Folder", self.services.settings.last_dir())
        if path:
            self.open(path)

    def open(self, source: str | Path, pattern: str | None = None) -> bool:
        """Start loading `source` (a path or a known name)."""
        self._source, self._pattern = str(source), pattern
        self.outcome = ""
        name = Path(str(source)).name or str(source)
        self.services.status(f"Loading tokenizer {name}…")
        self.cancel_button.show()
        self.loader.start(load_any_timeline, str(source), pattern=pattern)
        return True

    @Slot()
    def cancel(self) -> bool:
        return self.loader.cancel()

    def open_name_dialog(self) -> None:
        """A tokenizer by name: ``hf:ORG/NAME`` from the Hugging Face cache, or a tiktoken name."""
        name = self.services.dialogs.ask_text(
            "Open Tokenizer by Name",
            f"hf:ORG/NAME (from the Hugging Face cache, {hf_hub_cache()}), or a tiktoken name such as cl100k_base:",
            HF_PREFIX)
        if name and name.strip() not in ("", HF_PREFIX):
            self.open(name.strip())

    def attach_known_menu(self, menu: QMenu) -> None:
        """Keep File > Known Tokenizers ▸ filled: the caches are looked through on a background
        thread now and each time the menu opens (a slow or broken cache never holds the window
        up), and the menu is filled again when the listing changed."""
        self._known_menu = menu
        menu.aboutToShow.connect(self.refresh_known)
        self.fill_known_menu(menu)
        self.refresh_known()

    @Slot()
    def refresh_known(self) -> None:
        """Look through the caches again (newest request wins)."""
        self.lister.start(list_known_tokenizers)

    def wait_known(self, timeout_ms: int = 60_000) -> str:
        """Run the event loop until the caches have been looked through: ``"listed"``,
        ``"failed"``, ``"idle"`` (nothing running) or ``"timeout"``."""
        if not self.lister.is_running:
            return "idle"
        return wait_for_signals({"listed": [self.lister.finished], "failed": [self.lister.failed]}, timeout_ms)

    @Slot(object)
    def _on_lister_finished(self, listing: KnownListing) -> None:
        changed = (listing, "") != (self._listing, self._listing_error)
        self._listing, self._listing_error = listing, ""
        if changed and self._known_menu is not None:
            self.fill_known_menu(self._known_menu)

    @Slot(str)
    def _on_lister_failed(self, message: str) -> None:
        self._listing_error = message
        if self._known_menu is not None:
            self.fill_known_menu(self._known_menu)

    def fill_known_menu(self, menu: QMenu) -> None:
        """Known Tokenizers ▸ from the last listing (no disk access here): tiktoken's names (marked
        when the file is on this machine), then every tokenizer in the Hugging Face cache, with
        size and kind, and what was skipped."""
        menu.clear()
        listing = self._listing
        if listing is None:
            looking = menu.addAction(f"Could not look through the caches: {self._listing_error}"
                                     if self._listing_error else "Looking for tokenizers on this machine…")
            looking.setObjectName("known_tokenizers_looking")
            looking.setEnabled(False)
        else:
            self._add_known_entries(menu, listing)
        menu.addSeparator()
        by_name = menu.addAction("Open by Name (hf:ORG/NAME)…")
        by_name.setObjectName("action_open_tokenizer_by_name")
        by_name.triggered.connect(self.open_name_dialog)

    def _add_known_entries(self, menu: QMenu, listing: KnownListing) -> None:
        sizes = {c.source: c for c in listing.cached}
        for k in listing.names:
            c = sizes.get(k.name)
            label = f"{k.name} — {k.description}" + (f" (tiktoken, {_size(c.size)})" if c else " (download)")
            action = menu.addAction(label)
            action.setObjectName(f"action_known_{k.name}")
            action.setCheckable(False)
            tip = f"on this machine: {c.path}" if c else "not on this machine: downloaded through tiktoken if possible"
            action.setStatusTip(f"{k.name}: {tip}")
            action.setToolTip(action.statusTip())
            action.setProperty("cached", k.cached)
            action.triggered.connect(partial(self._on_known_triggered, k.name))
        menu.addSeparator()
        hub = [c for c in listing.cached if c.cache == "huggingface"]
        cache = _shown_path(hf_hub_cache())
        title = menu.addAction(f"Hugging Face cache ({cache})" if hub else f"Hugging Face cache: no tokenizers in {cache}")
        title.setEnabled(False)
        for c in hub:
            action = menu.addAction(f"{c.source[len(HF_PREFIX):]} — {c.kind}, {_size(c.size)}")
            action.setObjectName(f"action_known_{c.source}")
            action.setStatusTip(f"{c.source}: {_shown_path(c.path)}")
            action.setToolTip(action.statusTip())
            action.setProperty("cached", True)
            action.triggered.connect(partial(self._on_known_triggered, c.source))
        if listing.notes:
            n = len(listing.notes)
            skipped = menu.addAction(f"Skipped {n} unusable cache entr{'y' if n == 1 else 'ies'}…")
            skipped.setObjectName("known_tokenizers_skipped")
            skipped.setStatusTip(_shown_path(listing.notes[0]))
            skipped.triggered.connect(partial(self._on_skipped_triggered, listing.notes))

    def _on_known_triggered(self, name: str, _checked: bool = False) -> None:
        self.open(name)

    def _on_skipped_triggered(self, notes: tuple[str, ...], _checked: bool = False) -> None:
        shown = [_shown_path(n) for n in notes[:20]] + ([f"… and {len(notes) - 20} more"] if len(notes) > 20 else [])
        self.services.dialogs.info("Skipped cache entries", "tokviz did not use these entries of the "
                                   "Hugging Face cache:\n" + "\n".join(shown))

    # -- outcomes ---------------------------------------------------------------------------

    def _end(self, outcome: str) -> None:
        self.outcome = outcome
        self.cancel_button.hide()

    @Slot(object)
    def _on_loader_finished(self, timeline) -> None:
        source = self._source or ""
        self._end("opened")
        self.show(timeline, source)
        path = Path(source)
        if path.exists():
            store = self.services.settings
            store.set_last_dir(path.parent if path.is_file() else path)
        self.opened.emit(source)

    @Slot(str)
    def _on_loader_failed(self, message: str) -> None:
        error = self.loader.last_error
        if isinstance(error, PatternRequired) and self._pattern is None and self._source:
            pattern = self.services.dialogs.ask_text(
                "Split pattern needed",
                f"{Path(self._source).name} is not one of OpenAI's encodings.\nIts split pattern (a regex, "
                f"or a preset: {', '.join(p for p in SPLIT_PRESETS if SPLIT_PRESETS[p])}):",
                DEFAULT_PATTERN)
            if pattern:
                self.open(self._source, pattern=pattern.strip())
                return
            self._end("cancelled")
            self.services.status("Tokenizer not opened: no split pattern given", 5000)
            self.cancelled.emit()
            return
        self._end("failed")
        self.services.status("Could not open the tokenizer", 5000)
        self.open_failed.emit(message)
        self.services.dialogs.error("Could not open the tokenizer", message[:1].upper() + message[1:])

    @Slot()
    def _on_loader_cancelled(self) -> None:
        self._end("cancelled")
        self.services.status("Loading cancelled", 3000)
        self.cancelled.emit()

    def shutdown(self) -> None:
        self.loader.shutdown()
        self.lister.shutdown()


def _shown_path(path) -> str:
    """A path for a menu label: bytes that are not UTF-8 (kept by Python as lone surrogates) shown
    as \ufffd, which Qt can display."""
    return str(path).encode("utf-8", "replace").decode("utf-8")


def _size(n: int) -> str:
    """A file size for a menu: ``"1.7 MB"``, ``"812 KB"``."""
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{max(1, round(n / 1e3))} KB"
