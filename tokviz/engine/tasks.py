"""`TaskEngine`: run one function at a time on a background thread (newest request wins).

For jobs that are a single function call with a progress callback: loading a corpus or model
file, computing corpus statistics. The function is called as
``fn(*args, should_stop=..., progress=..., **kwargs)`` on the worker thread; it must check
``should_stop()`` between slices (raising `tokviz.core.Cancelled`) and may call
``progress(what, fraction)``. Progress reaches the GUI at most every 50 ms.

`DebouncedTaskEngine` puts a debounce in front of a `TaskEngine` for work asked for on every
keystroke or control change (heatmaps, the Chat view).

What this leaves out: training, which streams results (`tokviz.engine.training.engine`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from .workers import BATCH_SECONDS, BackgroundEngine, BackgroundWorker, background_mode


class ProgressWorker(BackgroundWorker):
    """A worker whose job reports ``progress(what, fraction)``; `progress` is emitted at most every
    `BATCH_SECONDS` (pass `self._on_progress` to the job)."""

    progress = Signal(int, str, float)  # run id, what, fraction

    def __init__(self, run_id: int) -> None:
        super().__init__(run_id)
        self._last = 0.0

    def _on_progress(self, what: str, fraction: float) -> None:
        now = time.monotonic()
        if now - self._last >= BATCH_SECONDS:
            self._last = now
            self.progress.emit(self.run_id, what, float(fraction))


class TaskWorker(ProgressWorker):
    """Calls one function on its thread."""

    def __init__(self, run_id: int, fn: Callable, args: tuple, kwargs: dict) -> None:
        super().__init__(run_id)
        self.fn, self.args, self.kwargs = fn, args, kwargs

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


def _call(fn: Callable, args: tuple, kwargs: dict, *, should_stop, progress, stoppable: bool = False) -> object:
    return fn(*args, should_stop=should_stop, **kwargs) if stoppable else fn(*args, **kwargs)


class DebouncedTaskEngine(QObject):
    """Debounced background computation: ``request(fn, *args)`` -> ``computed(result)``.

    A request runs at once when nothing was asked for within `debounce_ms` (a click answers without
    waiting), else after the delay, replacing any pending one (typing and wheel bursts compute once);
    a newer request cancels the one still running, so a stale result never replaces a newer one.
    With `stoppable`, ``fn`` is also given ``should_stop`` to end a superseded run early."""

    computed = Signal(object)
    failed = Signal(str)
    running_changed = Signal()

    def __init__(self, name: str = "task", parent: QObject | None = None, *, debounce_ms: int = 20,
                 stoppable: bool = False) -> None:
        super().__init__(parent)
        self._stoppable = stoppable
        self.setObjectName(name)
        self.tasks = TaskEngine(name, self)
        self.tasks.finished.connect(self.computed)
        self.tasks.failed.connect(self.failed)
        self.tasks.running_changed.connect(self.running_changed)
        self._pending: tuple | None = None
        self._last_request = -1e9  # time.monotonic() of the last request
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._on_timer_timeout)

    @property
    def is_busy(self) -> bool:
        return self._pending is not None or self.tasks.is_running

    def request(self, fn: Callable, *args, **kwargs) -> None:
        """Compute ``fn(*args, **kwargs)``: at once when the engine is idle and nothing was asked
        for within the debounce delay (a single click answers without waiting), else after the
        delay, replacing any pending request (typing and wheel bursts compute once)."""
        now = time.monotonic()
        quiet = now - self._last_request >= self._timer.interval() / 1000
        self._last_request = now
        if quiet and not self.tasks.is_running and not self._timer.isActive():
            self._pending = None
            self.tasks.start(_call, fn, args, kwargs, stoppable=self._stoppable)
            return
        if self.tasks.is_running:
            self.tasks.cancel()  # its result would be stale: a newer request is waiting
        self._pending = (fn, args, kwargs)
        self._timer.start()

    def request_now(self, fn: Callable, *args, **kwargs) -> None:
        """Compute at once (no debounce)."""
        self._timer.stop()
        self._pending = None
        self.tasks.start(_call, fn, args, kwargs, stoppable=self._stoppable)

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self._pending is not None:
            fn, args, kwargs = self._pending
            self._pending = None
            self.tasks.start(_call, fn, args, kwargs, stoppable=self._stoppable)

    def wait_idle(self, timeout_ms: int = 10_000) -> bool:
        return self.tasks.wait_idle(timeout_ms)

    def shutdown(self) -> None:
        self._timer.stop()
        self._pending = None
        self.tasks.shutdown()
