"""`TaskEngine`: run one function at a time on a background thread (newest request wins).

For jobs that are a single function call with a progress callback: loading a corpus or model
file, computing corpus statistics. The function is called as
``fn(*args, should_stop=..., progress=..., **kwargs)`` on the worker thread; it must check
``should_stop()`` between slices (raising `tokviz.core.Cancelled`) and may call
``progress(what, fraction)``. Progress reaches the GUI at most every 50 ms.

What this leaves out: training, which streams results (`tokviz.engine.training.engine`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from .workers import BATCH_SECONDS, BackgroundEngine, BackgroundWorker, background_mode


class TaskWorker(BackgroundWorker):
    """Calls one function on its thread."""

    progress = Signal(int, str, float)  # run id, what, fraction

    def __init__(self, run_id: int, fn: Callable, args: tuple, kwargs: dict) -> None:
        super().__init__(run_id)
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self._last = 0.0

    def _on_progress(self, what: str, fraction: float) -> None:
        now = time.monotonic()
        if now - self._last >= BATCH_SECONDS:
            self._last = now
            self.progress.emit(self.run_id, what, float(fraction))

    def work(self) -> object:
        with background_mode():
            return self.fn(*self.args, should_stop=self.should_stop, progress=self._on_progress, **self.kwargs)


class TaskEngine(BackgroundEngine):
    """Signals (current task only): `started`, `progress_changed(what, fraction)`, then exactly
    one of `finished(result)`, `cancelled()`, `failed(message)` (`last_error` holds the
    exception)."""

    started = Signal()
    progress_changed = Signal(str, float)
    finished = Signal(object)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, name: str = "task", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)

    def start(self, fn: Callable, *args, **kwargs) -> int:
        return self.launch(TaskWorker(self._new_run_id(), fn, args, kwargs))

    def launch(self, worker: BackgroundWorker) -> int:
        """Run `worker` (any worker with a ``progress(run_id, what, fraction)`` signal)."""
        worker.progress.connect(self._on_worker_progress)
        run_id = self._launch(worker)
        self.started.emit()
        return run_id

    @Slot(int, str, float)
    def _on_worker_progress(self, run_id: int, what: str, fraction: float) -> None:
        if self.is_current(run_id):
            self.progress_changed.emit(what, fraction)

    def _on_result(self, result: object) -> None:
        self.finished.emit(result)

    def _on_cancel(self) -> None:
        self.cancelled.emit()

    def _on_failure(self, message: str) -> None:
        self.failed.emit(message)
