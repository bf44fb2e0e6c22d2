"""`ExportController`: File > Export Tokenizer ▸ for the main window.

Writes the current BPE model as a Hugging Face ``tokenizer.json`` or as ``NAME.tiktoken`` plus
``NAME.tiktoken.json`` (split pattern and special tokens; the file dialog asks about the first, this
asks before replacing the second), with all merges or only the first k
(the timeline's current step, when "At the Current Step Only" is checked). The core does the
work (`tokviz.core.saved.tokenizer_export`, atomic writes); this runs it on a background thread
(`TaskEngine`: a 100k-merge model takes ~0.4 s) on a snapshot of the timeline, keeps the menu
actions disabled with the reason in their tips when the model cannot be exported (WordPiece,
Unigram, loaded tokenizers, end-of-word markers, character units for tiktoken), and shows errors
with ``dialogs.error``. What this leaves out: the formats themselves, the CLI
(``tokviz export``, `tokviz.app.cli.export`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from tokviz.core import TokvizError

if TYPE_CHECKING:
    from tokviz.core.saved.tokenizer_export import ExportedFiles
from tokviz.engine.step_model import StepModel
from tokviz.engine.tasks import TaskEngine

from .services import WindowServices
from .waiting import wait_for_signals


@dataclass(frozen=True)
class ExportFormat:
    label: str  # for titles and messages
    filters: str  # file dialog filters
    file_name: str  # suggested name


FORMATS = {  # the keys are tokviz.core.saved.tokenizer_export.EXPORT_FORMATS
    "hf": ExportFormat("Hugging Face tokenizer.json", "Hugging Face tokenizers (*.json);;All files (*)",
                       "tokenizer.json"),
    "tiktoken": ExportFormat("tiktoken file", "tiktoken files (*.tiktoken);;All files (*)", "tokviz.tiktoken"),
}


def _write(timeline, path: Path, fmt: str, step: int | None, *, should_stop, progress) -> ExportedFiles:
    from tokviz.core.saved.tokenizer_export import export_timeline

    return export_timeline(timeline, path, fmt, step=step)  # one call: nothing to cancel between


def _load_export_formats() -> None:
    import tokviz.core.saved.tokenizer_export  # noqa: F401 - imported for its first use, later


class ExportController(QObject):
    """Exports of one window. `exported(path)` or `export_failed(message)` ends each export."""

    exported = Signal(str)
    export_failed = Signal(str)

    def __init__(self, step_model: StepModel, services: WindowServices, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step_model, self.services = step_model, services
        self.writer = TaskEngine("tokenizer-exporter", self)
        self.writer.finished.connect(self._on_writer_finished)
        self.writer.failed.connect(self._on_writer_failed)
        self.writer.cancelled.connect(self._on_writer_cancelled)
        self._actions: dict[str, QAction] = {}  # fmt -> menu action
        self._tips: dict[str, str] = {}  # fmt -> the action's tip when it is enabled
        self._at_step: QAction | None = None
        self._path: Path | None = None
        self.outcome = ""  # "exported", "failed", "cancelled" of the last export
        step_model.timeline_changed.connect(self.update_actions)
        step_model.finished_changed.connect(self.update_actions)

    @staticmethod
    def preload() -> None:
        """Import the export formats now, in an event of their own: they are read when the first
        model arrives, in the same event as every other panel's reaction to it, which then stays
        short. The window calls it once it is on screen (nothing of it is in the first paint)."""
        _load_export_formats()

    def install(self, menu: QMenu, actions) -> None:
        """Fill File > Export Tokenizer ▸ with the window's export actions."""
        self._actions = {"hf": actions.export_hf, "tiktoken": actions.export_tiktoken}
        self._tips = {fmt: a.statusTip() for fmt, a in self._actions.items()}
        self._at_step = actions.export_at_step
        menu.addActions(list(self._actions.values()))
        menu.addSeparator()
        menu.addAction(self._at_step)
        menu.setToolTipsVisible(True)  # a disabled action's tooltip says why
        menu.aboutToShow.connect(self.update_actions)
        self.update_actions()

    @property
    def is_running(self) -> bool:
        return self.writer.is_running

    def problem(self, fmt: str) -> str | None:
        """Why the current model cannot be exported as `fmt`, or None."""
        timeline = self.step_model.timeline
        if timeline is None:
            return "No model yet: train a BPE tokenizer (or open a tokviz BPE model) first"
        from tokviz.core.saved.tokenizer_export import export_problem  # the formats load with the first model

        why = export_problem(timeline, fmt)
        return why[:1].upper() + why[1:] if why else None

    @Slot()
    def update_actions(self, *_args) -> None:
        for fmt, action in self._actions.items():
            why = self.problem(fmt)
            action.setEnabled(why is None)
            action.setStatusTip(why or self._tips[fmt])
            action.setToolTip(why or self._tips[fmt])
        if self._at_step is not None:
            sm = self.step_model
            self._at_step.setText(f"At the Current Step Only (first {sm.step:,} of {sm.n_steps:,} merges)")
            self._at_step.setEnabled(any(a.isEnabled() for a in self._actions.values()))

    def chosen_step(self) -> int | None:
        """The step the menu exports: the current one when "At the Current Step Only" is checked."""
        if self._at_step is not None and self._at_step.isChecked():
            return self.step_model.step
        return None

    def export_dialog(self, fmt: str) -> bool:
        """Ask for a file name, then start writing (returns whether it started)."""
        why = self.problem(fmt)
        if why is not None:
            self.services.dialogs.error("Cannot export this tokenizer", why)
            return False
        f, store = FORMATS[fmt], self.services.settings
        path = self.services.dialogs.save_path(f"Export {f.label}", str(Path(store.last_dir()) / f.file_name),
                                             f.filters)
        if not path:
            return False
        from tokviz.core.saved.tokenizer_export import check_export_targets

        try:  # the dialog asked about `path`; the sidecar it did not show
            files = check_export_targets(path, fmt)
        except TokvizError as exc:
            self.services.dialogs.error("Cannot export there", str(exc))
            return False
        others = [f for f in files[1:] if f.exists()]
        if others and not self.services.dialogs.ask_overwrite(others):
            return False
        return self.export(path, fmt, step=self.chosen_step(), wait=False)

    def export(self, path: str | Path, fmt: str = "hf", *, step: int | None = None, wait: bool = True,
               timeout_ms: int = 120_000) -> bool:
        """Write the current model to `path` in the background. With `wait`, run the event loop
        until it is written and return whether it was; otherwise return whether it started."""
        if fmt not in FORMATS:
            raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
        why = self.problem(fmt)
        if why is not None:
            self.outcome = "failed"
            self.services.dialogs.error("Cannot export this tokenizer", why)
            return False
        if self.is_running:
            self.services.status("Still writing the previous export…", 3000)
            return False
        timeline = self.step_model.timeline
        snapshot = dataclasses.replace(timeline, steps=timeline.steps[:])  # training may still add steps
        self._path, self.outcome = Path(path), ""
        self.services.status(f"Exporting {FORMATS[fmt].label} to {self._path}…")
        self.writer.start(_write, snapshot, self._path, fmt, step)
        return self.wait(timeout_ms) == "exported" if wait else True

    def wait(self, timeout_ms: int = 120_000) -> str:
        """Run the event loop until the export ends: ``"exported"``, ``"failed"``, ``"cancelled"``,
        ``"idle"`` (nothing exported yet) or ``"timeout"``."""
        if not self.is_running:
            return self.outcome or "idle"
        return wait_for_signals({"exported": [self.exported], "failed": [self.export_failed],
                                      "cancelled": [self.writer.cancelled]}, timeout_ms)

    @Slot(object)
    def _on_writer_finished(self, done: ExportedFiles) -> None:
        self.outcome = "exported"
        self.services.settings.set_last_dir(done.files[0].parent)
        names = " and ".join(p.name for p in done.files)
        self.services.status(
            f"Exported {names}: {done.n_tokens:,} tokens, {done.n_merges:,} merges", 8000)
        self.exported.emit(str(done.files[0]))

    @Slot(str)
    def _on_writer_failed(self, message: str) -> None:
        self.outcome = "failed"
        self.services.status("Could not export the tokenizer", 5000)
        self.export_failed.emit(message)
        self.services.dialogs.error("Could not export the tokenizer", message[:1].upper() + message[1:])

    @Slot()
    def _on_writer_cancelled(self) -> None:
        self.outcome = "cancelled"

    def shutdown(self) -> None:
        self.writer.shutdown()
