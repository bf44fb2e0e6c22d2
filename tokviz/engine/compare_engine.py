"""`CompareEngine`: runs a comparison in a child process (`compare_child`), newest run wins.

The signals of `TaskEngine` (current run only): `progress_changed(what, fraction)` and
`partial_ready(CompareBatch)` (what is measured so far, a few batches a second), then exactly one of
`finished(Comparison)`, `cancelled()`, `failed(message)`. Cancel reaches the child at once.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core.processes.spawn import ChildProcess

from .compare_child import start_job
from .tasks import TaskEngine
from .workers import BackgroundWorker, ChildWorkerMixin

CHILD_NICENESS = 5  # the window's thread stays ahead of the measuring


class CompareWorker(ChildWorkerMixin, BackgroundWorker):
    progress = Signal(int, str, float)  # run id, what, fraction
    partial = Signal(int, object)  # run id, CompareBatch

    def __init__(self, run_id: int, text, specs, by_document: bool, reference) -> None:
        super().__init__(run_id)
        self.job = (text, list(specs), by_document, reference)

    def work(self):
        child = self._child = ChildProcess("tokviz.engine.compare_child", niceness=CHILD_NICENESS)
        result = None
        try:
            start_job(child, *self.job, self.should_stop)
            for kind, payload, _ in child.events(self.check_cancelled):
                if kind == "progress":
                    self.progress.emit(self.run_id, *payload)
                elif kind == "partial":
                    self.partial.emit(self.run_id, payload)
                elif kind == "result":
                    result = payload
                self.check_cancelled()
        except BrokenPipeError:
            raise child.crash_error(self.check_cancelled) from None
        finally:
            child.close()
            self._child = None
        return result


class CompareEngine(TaskEngine):
    """A `TaskEngine` whose one job is a comparison in a child process."""

    partial_ready = Signal(object)  # CompareBatch

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__("compare", parent)

    def start(self, text, specs, *, by_document: bool = False, reference=None) -> int:
        worker = CompareWorker(self._new_run_id(), text, specs, by_document, reference)
        worker.partial.connect(self._on_worker_partial)
        return self.launch(worker)

    @Slot(int, object)
    def _on_worker_partial(self, run_id: int, batch) -> None:
        if self.is_current(run_id):  # a cancelled or replaced run's rows never arrive
            self.partial_ready.emit(batch)
