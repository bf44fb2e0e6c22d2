"""`CompareEngine`: runs a comparison in a child process (`compare_child`), newest run wins.

Signals (current run only): `progress_changed(what, fraction)`, then exactly one of
`finished(Comparison)`, `cancelled()`, `failed(message)`. Cancel reaches the child at once.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core.processes.spawn import ChildProcess

from .compare_child import start_job
from .workers import BackgroundEngine, BackgroundWorker, ChildWorkerMixin

CHILD_NICENESS = 5  # the window's thread stays ahead of the measuring


class CompareWorker(ChildWorkerMixin, BackgroundWorker):
    progress = Signal(int, str, float)  # run id, what, fraction

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
                elif kind == "result":
                    result = payload
                self.check_cancelled()
        except BrokenPipeError:
            raise child.crash_error(self.check_cancelled) from None
        finally:
            child.close()
            self._child = None
        return result


class CompareEngine(BackgroundEngine):
    progress_changed = Signal(str, float)
    finished = Signal(object)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare")

    def start(self, text, specs, *, by_document: bool = False, reference=None) -> int:
        worker = CompareWorker(self._new_run_id(), text, specs, by_document, reference)
        worker.progress.connect(self._on_worker_progress)
        return self._launch(worker)

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
