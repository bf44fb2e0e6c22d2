"""Running work on a background `QThread`: the worker/engine pair every long task uses.

A `BackgroundWorker` (a QObject moved to its own QThread) does one job in `work()` and ends with
exactly one of ``finished(run_id, result)``, ``cancelled(run_id)`` or ``failed(run_id, message)``.
Cancellation is a `threading.Event` that `work()` checks at every step it yields.

A `BackgroundEngine` lives on the GUI thread, owns its workers and their threads, and follows the
"newest request wins" rule (Orange's ConcurrentMixin): starting a run cancels the previous one,
and signals of a run that is no longer current are dropped, so stale results never arrive. Cancel
takes effect at once for the GUI (the engine reports ``cancelled`` immediately); the old thread
winds down at its next check and is reaped when it ends. `shutdown()` cancels and waits for every
thread (call it from ``closeEvent``).

What this leaves out: what the work is (subclasses) and any widgets.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import traceback
from contextlib import contextmanager
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal, Slot

from tokviz.core import Cancelled, TokvizError
from tokviz.core.processes.spawn import ChildProcess

log = logging.getLogger(__name__)

BATCH_SECONDS = 0.05  # workers emit partial output at most this often


class BackgroundWorker(QObject):
    """One job on a background thread. Subclasses implement `work()` and may add signals.

    Every signal carries the run id first, so the engine can drop signals of superseded runs.
    """

    finished = Signal(int, object)  # run id, result
    cancelled = Signal(int)
    failed = Signal(int, str)  # run id, user-readable message
    done = Signal(int)  # emitted last, after the terminal signal: the thread may quit

    def __init__(self, run_id: int) -> None:
        super().__init__()
        self.run_id = run_id
        self.error: BaseException | None = None  # the exception behind `failed`, for the engine
        self._stop = threading.Event()

    def cancel(self) -> None:
        """Ask the job to stop at its next check (thread-safe)."""
        self._stop.set()

    def should_stop(self) -> bool:
        return self._stop.is_set()

    def check_cancelled(self) -> None:
        """Raise `Cancelled` if a stop was requested."""
        if self._stop.is_set():
            raise Cancelled()

    def work(self) -> object:  # pragma: no cover - abstract
        raise NotImplementedError

    @Slot()
    def run(self) -> None:
        """Run `work()` and turn its outcome into exactly one terminal signal."""
        try:
            result = self.work()
            if self._stop.is_set():
                raise Cancelled()
        except Cancelled:
            self.cancelled.emit(self.run_id)
        except TokvizError as exc:
            self.error = exc
            self.failed.emit(self.run_id, str(exc))
        except MemoryError as exc:
            self.error = exc
            self.failed.emit(self.run_id, "out of memory: try a smaller corpus")
        except Exception as exc:  # noqa: BLE001 - a worker must never let an exception escape
            self.error = exc
            log.error("background job failed:\n%s", traceback.format_exc())
            self.failed.emit(self.run_id, f"unexpected error ({type(exc).__name__}): {exc}")
        else:
            self.finished.emit(self.run_id, result)
        finally:
            self.done.emit(self.run_id)


@dataclass
class _Run:
    worker: BackgroundWorker
    thread: QThread


class BackgroundEngine(QObject):
    """Owns background runs of one kind; the newest run wins.

    Subclasses create a worker in their public ``start``-style method, call `_launch(worker)`,
    and handle ``_on_result`` / ``_on_cancel`` / ``_on_failure`` (called only for the current run).
    """

    running_changed = Signal()  # read `is_running`

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._next_id = 0
        self._current: int | None = None  # id of the run whose output is still wanted
        self._runs: dict[int, _Run] = {}  # every run whose thread has not been reaped
        self._closed = False
        self.last_error: BaseException | None = None  # exception of the last `failed` run
        app = QCoreApplication.instance()
        if app is not None:  # never leave a thread running when the event loop ends
            app.aboutToQuit.connect(self.shutdown)

    # -- state ------------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        """True while the current run has not ended (it may still be reading or counting)."""
        return self._current is not None

    @property
    def thread_count(self) -> int:
        """Threads not yet reaped (a cancelled run keeps its thread until its next check)."""
        return len(self._runs)

    def is_current(self, run_id: int) -> bool:
        return run_id == self._current

    # -- lifecycle --------------------------------------------------------------------------

    def _new_run_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _launch(self, worker: BackgroundWorker) -> int:
        """Retire the current run and start `worker` on a fresh thread; return its run id."""
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} was shut down")
        was_running = self._retire_current()
        thread = QThread()
        thread.setObjectName(f"{type(self).__name__}-{worker.run_id}")
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.done.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        worker.done.connect(self._on_worker_done)
        worker.finished.connect(self._on_worker_finished)
        worker.cancelled.connect(self._on_worker_cancelled)
        worker.failed.connect(self._on_worker_failed)
        self._runs[worker.run_id] = _Run(worker, thread)
        self._current = worker.run_id
        thread.start()
        if not was_running:
            self.running_changed.emit()
        return worker.run_id

    def _retire_current(self) -> bool:
        """Cancel the current run without reporting it; True if there was one."""
        if self._current is None:
            return False
        run = self._runs.get(self._current)
        if run is not None:
            run.worker.cancel()
        self._current = None
        return True

    def cancel(self) -> bool:
        """Cancel the current run. Reports ``cancelled`` at once; False if nothing was running."""
        if not self._retire_current():
            return False
        self._on_cancel()
        self.running_changed.emit()
        return True

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel everything and wait for every thread to end. True if all ended in time."""
        self._closed = True
        if self._current is not None:
            self.cancel()
        ok = True
        for run_id, run in list(self._runs.items()):
            run.worker.cancel()
            if not run.thread.wait(timeout_ms):
                log.warning("background thread %s did not stop within %d ms", run_id, timeout_ms)
                ok = False
                continue
            self._runs.pop(run_id, None)
        return ok

    def wait_idle(self, timeout_ms: int = 10_000) -> bool:
        """Block until every thread of this engine has ended (tests, benchmarks)."""
        ok = True
        for run_id, run in list(self._runs.items()):
            ok = run.thread.wait(timeout_ms) and ok
        return ok

    # -- worker signals (queued onto the GUI thread) ----------------------------------------

    @Slot(int)
    def _on_worker_done(self, run_id: int) -> None:
        run = self._runs.pop(run_id, None)
        if run is not None:
            run.thread.wait()  # the thread only has to leave run(); this returns at once

    @Slot(int, object)
    def _on_worker_finished(self, run_id: int, result: object) -> None:
        if self.is_current(run_id):
            self._current = None
            self._on_result(result)
            self.running_changed.emit()

    @Slot(int)
    def _on_worker_cancelled(self, run_id: int) -> None:
        if self.is_current(run_id):  # cancelled from inside (not through cancel())
            self._current = None
            self._on_cancel()
            self.running_changed.emit()

    @Slot(int, str)
    def _on_worker_failed(self, run_id: int, message: str) -> None:
        if self.is_current(run_id):
            run = self._runs.get(run_id)
            self.last_error = run.worker.error if run is not None else None
            self._current = None
            self._on_failure(message)
            self.running_changed.emit()

    # -- for subclasses ---------------------------------------------------------------------

    def _on_result(self, result: object) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _on_cancel(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _on_failure(self, message: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


# -- keeping the GUI thread fluid while a worker churns through memory ---------------------------

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = True
_switch_interval = sys.getswitchinterval()
# seconds; Python's default is 0.005. The GUI thread needs the GIL for every Python call of a
# repaint (a table's data(), a paint override): it gets it back within 0.2 ms, so a repaint of 200
# calls no longer waits 200 ms behind a busy worker (the glitch finder's longest stall 546 -> 143 ms)
BACKGROUND_SWITCH_INTERVAL = 0.0002


@contextmanager
def background_mode():
    """Run a CPU-heavy job on a worker thread without making the GUI thread wait.

    Pauses the cyclic garbage collector (a full collection over millions of fresh objects holds
    the GIL for ~80 ms; reference counting still frees memory) and shortens the interpreter's
    thread switch interval, so the GUI thread gets the GIL back within about a millisecond instead
    of five after each call into Qt. Nested and concurrent uses are counted; the last one to end
    restores both, after `gc.freeze()`: the objects made meanwhile (50 000 merges are ~350 000
    objects) are long-lived results, and scanning them in the first collection afterwards would
    freeze the window for a fifth of a second. Frozen objects are still freed by reference
    counting when they are dropped, but a reference cycle among them never is: what a job makes
    and the window keeps (a loaded tokenizer, its tables) must hold no cycle (a recursive closure,
    a bound method of an object stored in its own parts), or every switch keeps the old one.
    """
    global _gc_depth, _gc_was_enabled, _switch_interval
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            _switch_interval = sys.getswitchinterval()
            gc.disable()
            sys.setswitchinterval(min(_switch_interval, BACKGROUND_SWITCH_INTERVAL))
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0:
                sys.setswitchinterval(_switch_interval)
                if _gc_was_enabled:
                    gc.freeze()
                    gc.enable()


def resume_collector() -> None:
    """Turn the cyclic collector on after the window's start-up kept it off (`tokviz.app.gui`), the
    start-up's objects frozen first (`gc.freeze`: never scanned again); while a background job
    runs, when its `background_mode` ends instead, so the job keeps its pause."""
    global _gc_was_enabled
    with _gc_lock:
        if _gc_depth:
            _gc_was_enabled = True
        else:
            gc.freeze()
            gc.enable()


class ChildWorkerMixin:
    """For a `BackgroundWorker` whose job runs in ``self._child`` (a `tokviz.core.processes.spawn.ChildProcess`
    while it runs): `cancel` tells the child to stop too. Thread-safe, never waits: while the job is still
    being written, `ChildProcess.write_job` sends the stop afterwards."""

    _child: ChildProcess | None = None

    def cancel(self) -> None:
        super().cancel()
        self.send_to_child("stop")

    def send_to_child(self, obj: object) -> None:
        """Send `obj` to the running child, if any (see `ChildProcess.send`)."""
        child = self._child
        if child is not None:
            child.send(obj)
