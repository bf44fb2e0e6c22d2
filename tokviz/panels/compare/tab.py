"""`CompareTab`: a tab of the Compare panel that runs one job on models of the panel's list.

A tab has model pickers (names from the panel's list, which it keeps in step with), a Run and a
Cancel button, a progress bar and a status line, and a `TaskEngine`. Subclasses say what to run
(`job`) and how to show the result (`show_result`). `ready` is emitted when a run ends (read
`outcome`). What this leaves out: the models themselves (`ComparePanel.specs`).
"""

from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QTableView, QWidget

from tokviz.core import TokvizError
from tokviz.engine.tables.compare_models import SORT_ROLE
from tokviz.engine.tasks import TaskEngine

from ..widgets import ProgressBar, hbox, record_table


class CompareTab(QWidget):
    """Base of the Vocabularies, Health and Growth tabs (see the module docstring)."""

    ready = Signal()
    RUN_TEXT = "Run"
    N_MODELS = 1
    HINT = ""

    def __init__(self, name: str, specs: list, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.specs = specs  # the panel's list, shared
        self.result = None
        self.outcome = ""
        self.pickers = [QComboBox(objectName=f"{name}_model_{i}") for i in range(self.N_MODELS)]
        for box in self.pickers:
            box.setMinimumContentsLength(10)
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.run_button = QPushButton(self.RUN_TEXT, objectName=f"{name}_run")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel", objectName=f"{name}_cancel", enabled=False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = ProgressBar(objectName=f"{name}_progress")
        self.progress.setRange(0, 1000)
        self.progress.setMaximumHeight(8)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.status = QLabel(self.HINT, objectName=f"{name}_status", wordWrap=True)
        self.engine = TaskEngine(name, self)
        self.engine.progress_changed.connect(self._on_engine_progress_changed)
        self.engine.finished.connect(self._on_engine_finished)
        self.engine.cancelled.connect(lambda: self._done("cancelled", "Cancelled."))
        self.engine.failed.connect(lambda message: self._done("failed", f"Could not finish: {message}"))

    def controls(self, *extra) -> object:
        """The row of pickers, `extra` widgets, Run and Cancel (for the subclass's layout)."""
        labels = ("A:", "B:") if self.N_MODELS == 2 else ("Model:",)
        items = []
        for label, box in zip(labels, self.pickers):
            items += [QLabel(label), (box, 1)]
        return hbox(*items, *extra, self.run_button, self.cancel_button)

    def update_models(self) -> None:
        """Refill the pickers from the panel's list, keeping what was picked where it still is."""
        for k, box in enumerate(self.pickers):
            keep = box.currentIndex()
            box.clear()
            for spec in self.specs:
                box.addItem(spec.label)
            box.setCurrentIndex(min(keep if keep >= 0 else k, len(self.specs) - 1))
        self.run_button.setEnabled(len(self.specs) >= 1 and not self.engine.is_running)

    def read_text(self, reader, what: str) -> str | None:
        """`reader()`'s text, or None with the reason in `status` (unreadable, or empty: `what`
        says what the text is for)."""
        try:
            text = reader()
        except TokvizError as exc:
            self.status.setText(f"Cannot read the text: {exc}")
            return None
        if not text or text.isspace():
            self.status.setText(f"The corpus is empty: {what}. Type or open a corpus first.")
            return None
        return text

    def sorted_table(self, name: str, model) -> QTableView:
        """A record table over `model`, sorted by a header click on `SORT_ROLE` (numbers as numbers),
        in the model's own order until then."""
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(model)
        proxy.setSortRole(SORT_ROLE)
        table = record_table(QTableView(objectName=name))
        table.setModel(proxy)
        table.setSortingEnabled(True)
        table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        return table

    def selected_source_row(self, table: QTableView) -> int | None:
        """The model row of the table's selection (through its sort proxy), or None."""
        rows = table.selectionModel().selectedRows()
        return table.model().mapToSource(rows[0]).row() if rows and self.result is not None else None

    def picked(self) -> list:
        """The models picked (a tab without pickers takes every model of the list)."""
        if not self.pickers:
            return list(self.specs)
        return [self.specs[box.currentIndex()] for box in self.pickers if 0 <= box.currentIndex() < len(self.specs)]

    @Slot()
    def run(self) -> bool:
        picked = self.picked()
        if not picked or len(self.specs) < self.N_MODELS or len(picked) < self.N_MODELS:
            need = "two tokenizers" if self.N_MODELS == 2 else "a tokenizer"
            self.status.setText(f"Add tokenizers to the list above first: this needs {need}.")
            return False
        args = self.job(picked)
        if args is None:
            return False
        self.outcome = ""
        self.progress.setValue(0)
        self.progress.show()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText("Working…")
        self.engine.start(*args)
        return True

    def job(self, picked: list):
        """(function, *args) for the engine, or None (with a message in `status`)."""
        raise NotImplementedError

    def show_result(self, result) -> str:
        """Show `result`; return the status line."""
        raise NotImplementedError

    @Slot()
    def cancel(self) -> bool:
        return self.engine.cancel()

    @Slot(str, float)
    def _on_engine_progress_changed(self, what: str, fraction: float) -> None:
        self.progress.setValue(int(1000 * fraction))
        self.status.setText(what)

    @Slot(object)
    def _on_engine_finished(self, result) -> None:
        self.result = result
        self._done("finished", self.show_result(result))

    def _done(self, outcome: str, text: str) -> None:
        self.outcome = outcome
        self.progress.hide()
        self.status.setText(text)
        self.run_button.setEnabled(bool(self.specs))
        self.cancel_button.setEnabled(False)
        self.ready.emit()

    def shutdown(self) -> None:
        self.engine.shutdown()
