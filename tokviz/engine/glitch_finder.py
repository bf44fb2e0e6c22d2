"""`GlitchEngine`: the glitch finder on a background thread, its rows streaming to the GUI.

The worker drains `tokviz.core.glitch.find_glitches` (the coverage, then rows a chunk at a
time) and emits what it has at most every `BATCH_SECONDS`: `coverage_ready(coverage)` once,
then `rows_ready(rows)` per batch, and ends with ``finished(report)`` (every row, ranked),
``cancelled()`` or ``failed(message)``. Only the current run's signals arrive.

What this leaves out: the scoring (core) and the table (`tables.glitch_model`).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core.glitch.report import Coverage, find_glitches, report_of

from .tasks import ProgressWorker, TaskEngine
from .workers import BATCH_SECONDS, background_mode


class GlitchWorker(ProgressWorker):
    coverage_ready = Signal(int, object)  # run id, Coverage
    rows_ready = Signal(int, object)  # run id, list[GlitchRow]

    def __init__(self, run_id: int, tokenizer, corpus: str) -> None:
        super().__init__(run_id)
        self.tokenizer, self.corpus = tokenizer, corpus

    def work(self) -> object:
        rows, batch, coverage = [], [], None
        last = time.monotonic()
        with background_mode():
            for item in find_glitches(self.tokenizer, self.corpus, should_stop=self.should_stop,
                                      progress=self._on_progress):
                if isinstance(item, Coverage):
                    coverage = item
                    self.coverage_ready.emit(self.run_id, item)
                    continue
                rows.extend(item)
                batch.extend(item)
                if time.monotonic() - last >= BATCH_SECONDS:
                    self.rows_ready.emit(self.run_id, batch)
                    batch, last = [], time.monotonic()
            if batch:
                self.rows_ready.emit(self.run_id, batch)
        self.check_cancelled()
        assert coverage is not None
        return report_of(rows, coverage)


class GlitchEngine(TaskEngine):
    """A `TaskEngine` whose runs stream glitch rows: `coverage_ready`, `rows_ready`."""

    coverage_ready = Signal(object)
    rows_ready = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__("glitch-finder", parent)

    def find(self, tokenizer, corpus: str) -> int:
        worker = GlitchWorker(self._new_run_id(), tokenizer, corpus)
        worker.coverage_ready.connect(self._on_worker_coverage_ready)
        worker.rows_ready.connect(self._on_worker_rows_ready)
        return self.launch(worker)

    @Slot(int, object)
    def _on_worker_coverage_ready(self, run_id: int, coverage) -> None:
        if self.is_current(run_id):
            self.coverage_ready.emit(coverage)

    @Slot(int, object)
    def _on_worker_rows_ready(self, run_id: int, rows) -> None:
        if self.is_current(run_id):
            self.rows_ready.emit(rows)
