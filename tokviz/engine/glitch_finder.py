"""`GlitchEngine`: the glitch finder off the GUI thread, its rows streaming to the GUI.

The scan (`tokviz.core.glitch.find_glitches`: the coverage, then rows a chunk at a time) runs in a
forked child process where the system allows one (`can_fork`: the child inherits the loaded
tokenizer and the corpus as they are), else on the worker thread. In a child it never competes
with the window for the interpreter's lock: a table repainting while a worker thread scored
tokens waited for that lock at every cell (over 100 ms a repaint). The worker emits what it has at
most every `BATCH_SECONDS`: `coverage_ready(coverage)` once, then `rows_ready(rows)` per batch,
and ends with ``finished(report)`` (every row, ranked), ``cancelled()`` or ``failed(message)``.
Only the current run's signals arrive.

`WeightsEngine` reads a model's weights the same way (`tokviz.core.weights.weight_evidence`, in a
forked child where possible: one pass over each embedding matrix) and ends with
``finished(WeightEvidence)``; its own runs, so reading weights and ranking tokens do not cancel
each other.

What this leaves out: the scoring (core) and the table (`tables.glitch_model`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core.errors import TokvizError
from tokviz.core.glitch.report import Coverage, find_glitches, report_of
from tokviz.core.processes.fork import ChildFailed, ForkedStream, can_fork, fork_stream
from tokviz.core.weights import open_weights, weight_evidence

from .tasks import ProgressWorker, TaskEngine
from .workers import BATCH_SECONDS, background_mode


def in_child(produce: Callable[[Callable[[str, float], None]], Iterator[object]]) -> ForkedStream | None:
    """``produce(progress)``'s items in a forked child, tagged ``("progress", (what, fraction))`` or
    ``("item", item)``; None where forking is not possible now."""
    if not can_fork():
        return None

    def run(send: Callable[[object], None]) -> None:
        for item in produce(lambda what, f: send(("progress", (what, f)))):
            send(("item", item))

    try:
        return fork_stream(run)
    except OSError:
        return None


def scan_in_child(tokenizer, corpus: str) -> ForkedStream | None:
    """The scan in a forked child (`in_child`): the coverage, then rows a chunk at a time."""
    return in_child(lambda progress: find_glitches(tokenizer, corpus, should_stop=lambda: False,  # (killed if cancelled)
                                                   progress=progress))


def child_items(worker: ProgressWorker, child: ForkedStream, what: str,
                progress: Callable[[str, float], None]) -> Iterator[object]:
    """The items of `child` (`in_child`) for `worker`, its progress reported to `progress`; the
    child is ended when the caller stops early; `TokvizError` if it failed."""
    stream = iter(child)
    try:
        for kind, value in stream:
            worker.check_cancelled()
            if kind == "progress":
                progress(*value)
            else:
                yield value
    except ChildFailed as exc:
        worker.check_cancelled()  # killed because the run was cancelled
        message = str(exc)
        for name in ("WeightsError: ", "ModelFormatError: ", "TokvizError: "):  # the user's problem: its words alone
            message = message.removeprefix(name)
        raise TokvizError(f"{what}: {message}") from None
    finally:
        child.kill()  # (a run left early: the child is ended and reaped)
        stream.close()


class GlitchWorker(ProgressWorker):
    coverage_ready = Signal(int, object)  # run id, Coverage
    rows_ready = Signal(int, object)  # run id, list[GlitchRow]

    def __init__(self, run_id: int, tokenizer, corpus: str, child: ForkedStream | None = None) -> None:
        super().__init__(run_id)
        self.tokenizer, self.corpus, self.child = tokenizer, corpus, child

    def cancel(self) -> None:
        super().cancel()
        if self.child is not None:
            self.child.stop()  # its pipe ends: the worker stops waiting for it

    def work(self) -> object:
        rows, batch, coverage = [], [], None
        last = time.monotonic()
        with background_mode():
            for item in self._items():
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

    def _items(self) -> Iterator[object]:
        if self.child is None:
            yield from find_glitches(self.tokenizer, self.corpus, should_stop=self.should_stop,
                                     progress=self._on_progress)
            return
        yield from child_items(self, self.child, "the glitch scan failed", self._on_progress)


class GlitchEngine(TaskEngine):
    """A `TaskEngine` whose runs stream glitch rows: `coverage_ready`, `rows_ready`."""

    coverage_ready = Signal(object)
    rows_ready = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__("glitch-finder", parent)

    def find(self, tokenizer, corpus: str) -> int:
        worker = GlitchWorker(self._new_run_id(), tokenizer, corpus, scan_in_child(tokenizer, corpus))
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


def read_weights(path: str, tokenizer, *, should_stop: Callable[[], bool] = lambda: False,
                 progress: Callable[[str, float], None] = lambda what, f: None):
    """Magikarp's indicators of the model's weights at `path`, checked against `tokenizer`."""
    progress("Reading the weights' headers…", 0.0)
    return weight_evidence(open_weights(path), tokenizer=tokenizer, should_stop=should_stop, progress=progress)


class WeightsWorker(ProgressWorker):
    """Reads a model's weights (`read_weights`) in a forked child, or on its thread."""

    def __init__(self, run_id: int, path: str, tokenizer, child: ForkedStream | None = None) -> None:
        super().__init__(run_id)
        self.path, self.tokenizer, self.child = path, tokenizer, child

    def cancel(self) -> None:
        super().cancel()
        if self.child is not None:
            self.child.stop()

    def work(self) -> object:
        with background_mode():
            if self.child is None:
                return read_weights(self.path, self.tokenizer, should_stop=self.should_stop, progress=self._on_progress)
            result = None
            for item in child_items(self, self.child, "could not read the weights", self._on_progress):
                result = item
        self.check_cancelled()
        if result is None:
            raise TokvizError("could not read the weights: the reading process sent nothing back")
        return result


class WeightsEngine(TaskEngine):
    """A `TaskEngine` whose runs read a model's weights: ``finished(WeightEvidence)``."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__("glitch-weights", parent)

    def load(self, path: str, tokenizer) -> int:
        child = in_child(lambda progress: iter([read_weights(path, tokenizer, progress=progress)]))
        return self.launch(WeightsWorker(self._new_run_id(), path, tokenizer, child))
