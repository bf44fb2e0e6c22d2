"""Training in the background: `TrainingWorker` runs `tokviz.core.Training` off the GUI thread,
`TrainingEngine` drives it from the GUI thread and reports progress.

The worker (a QObject on a QThread) consumes the event stream of
`tokviz.engine.training.child.training_events`: for small corpora it runs the stream on its own
thread; for corpora of `PROCESS_MIN_CHARS` or more it starts a child process
(``python -m tokviz.engine.training.child``, a fresh interpreter: no fork of a threaded GUI, no
re-import of the main script) that runs the same stream and pickles the events to its stdout, so
the core's long C-level operations never hold the GUI process's GIL. Cancelling sets the worker's
event (checked at every merge in the thread) and tells the process to stop (it checks at every
merge too). Merges arrive in batches at most every 50 ms; the worker ends with exactly one of
finished / cancelled / failed. The engine turns that into signals a window
can show: the stage, merges done / budget, merges per second and time left.

What this leaves out: where the corpus text comes from (the corpus panel), the vocabulary table
(`tokviz.engine.tables.vocab_model`) and the shared current step (`tokviz.engine.step_model`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from tokviz.core.registry import AnySettings, empty_copy, make_training, step_noun
from tokviz.core.processes.pipes import write_frame
from tokviz.core.processes.spawn import ChildProcess
from tokviz.engine.workers import BackgroundEngine, BackgroundWorker, ChildWorkerMixin, background_mode

from .child import (STAGE_COMPILING, STAGE_COUNTING, STAGE_PARSING, STAGE_PREPARING, STAGE_TRAINING, CorpusInput,
                    Event, training_events)

if TYPE_CHECKING:
    from tokviz.core.registry import AnyTimeline

__all__ = ["CorpusInput", "TrainingEngine", "TrainingProgress", "TrainingWorker", "STAGE_COMPILING", "STAGE_TRAINING"]

STAGE_LABELS = {
    STAGE_PARSING: "Reading the word-frequency table…",
    STAGE_COMPILING: "Compiling fast kernels, once per machine",
    STAGE_COUNTING: "Counting chunks…",
    STAGE_PREPARING: "Preparing the trainer…",
    STAGE_TRAINING: "Training",
}
RATE_WINDOW_SECONDS = 2.0
TICK_MS = 250  # progress refresh while counting (the elapsed time keeps moving)
PROCESS_MIN_CHARS = 1_500_000  # corpora at least this long train in a separate process
PIECE_CHARS = 1 << 20  # the text goes to the training process in pieces of this many characters
CHILD_NICENESS = 10  # the training process yields the CPU to the window (POSIX nice): on a busy machine the
# window stays responsive and training takes what is left; on an idle one it changes nothing


@dataclass(frozen=True)
class TrainingProgress:
    """A snapshot for the status bar. `fraction` None means "no measurable progress yet"."""

    stage: str
    done: int = 0  # merges made so far
    budget: int | None = None  # merges allowed (None: until no pair reaches min count)
    rate: float = 0.0  # merges per second over the last couple of seconds
    seconds_left: float | None = None
    elapsed: float = 0.0  # seconds since the run started
    stage_elapsed: float = 0.0  # seconds since the stage started (how long numba has been compiling)
    fraction: float | None = None
    unit: str = "merges"  # what `done` counts: "merges", or "rounds" for Unigram

    @property
    def label(self) -> str:
        return STAGE_LABELS.get(self.stage, self.stage)


class TrainingWorker(ChildWorkerMixin, BackgroundWorker):
    """Runs one training. Emits batches of `MergeStep`s via `steps_ready` and keeps none of them
    (the engine holds the run's one step list); its result is the number of steps made."""

    stage_changed = Signal(int, str)  # run id, stage
    counting_progress = Signal(int, object, object)  # run id, chars done, chars total
    prepared = Signal(int, object, object)  # run id, Timeline (no steps yet), budget or None
    steps_ready = Signal(int, list)  # run id, [MergeStep, ...]

    def __init__(self, run_id: int, settings: AnySettings, corpus: CorpusInput, *,
                 use_process: bool | None = None) -> None:
        super().__init__(run_id)
        self.settings = settings
        self.corpus = corpus
        self.use_process = corpus.n_chars >= PROCESS_MIN_CHARS if use_process is None else use_process

    def work(self) -> int:
        rid = self.run_id
        n_steps: int | None = None
        events = self._process_events() if self.use_process else self._thread_events()
        for kind, payload in events:
            if kind == "stage":
                self.stage_changed.emit(rid, payload)
            elif kind == "counting":
                self.counting_progress.emit(rid, *payload)
            elif kind == "prepared":
                start, budget = payload
                self.prepared.emit(rid, start, budget)
            elif kind == "steps":
                self.steps_ready.emit(rid, payload)
            elif kind == "finished":
                n_steps = payload
            self.check_cancelled()
        assert n_steps is not None
        return n_steps

    def _thread_events(self) -> Iterator[Event]:
        with background_mode():
            yield from training_events(self.settings, self.corpus, should_stop=self.should_stop,
                                       processes=1)

    def _process_events(self) -> Iterator[Event]:
        with background_mode():  # unpickling thousands of merges must not trigger a full GC
            yield from self._process_events_unpaused()

    def _process_events_unpaused(self) -> Iterator[Event]:
        child = self._child = ChildProcess("tokviz.engine.training.child", niceness=CHILD_NICENESS)

        def write_job(fd: int) -> None:
            pieces = list(self.corpus.iter_pieces(PIECE_CHARS))
            write_frame(fd, (self.settings, self.corpus.word_counts, self.corpus.name, len(pieces)))
            for piece in pieces:
                self.check_cancelled()
                write_frame(fd, piece.encode("utf-8", "surrogatepass"))

        try:
            child.write_job(write_job, self.should_stop)
            for kind, payload, _ in child.events(self.check_cancelled):
                yield kind, payload
        except BrokenPipeError:
            raise child.crash_error(self.check_cancelled) from None
        finally:
            child.close()  # one that has not ended gets the end of input: its "stop"
            self._child = None


class TrainingEngine(BackgroundEngine):
    """Starts, cancels and reports training runs; the newest run wins.

    Signals (only ever for the current run): `started`, `stage_changed(stage)`,
    `progress_changed(TrainingProgress)`, `prepared(Timeline)` (base vocabulary known, no merges
    yet), `steps_ready(list[MergeStep])`, then exactly one of `finished(Timeline)`, `cancelled()`,
    `failed(message)`. A run replaced by a newer one ends silently.

    The run's steps live in one list, `timeline`'s, appended here on the GUI thread before
    `steps_ready` is emitted: `prepared` and `finished` hand out that same object, which readers
    never change (the trainer and the worker keep no copy).
    """

    started = Signal()
    stage_changed = Signal(str)
    progress_changed = Signal(object)  # TrainingProgress
    prepared = Signal(object)  # Timeline with no steps
    steps_ready = Signal(list)
    finished = Signal(object)  # Timeline
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reset_counters()
        self.timeline: AnyTimeline | None = None  # the current run's timeline: its one step list
        self.last_progress: TrainingProgress | None = None
        self._tick = QTimer(self, interval=TICK_MS)
        self._tick.timeout.connect(self._on_tick_timeout)
        self.running_changed.connect(self._on_running_changed)

    def _reset_counters(self) -> None:
        self._t0 = self._stage_t0 = time.monotonic()
        self._stage = STAGE_COUNTING
        self._done = 0
        self._budget: int | None = None
        self._samples: deque[tuple[float, int]] = deque()
        self._unit = getattr(self, "_unit", "merges")

    # -- public -----------------------------------------------------------------------------

    def start(self, settings: AnySettings, corpus: CorpusInput) -> int:
        """Start training (cancelling any current run). Raises `TokvizError` for bad settings."""
        settings = settings.validate()
        make_training(settings)  # any algorithm: an impossible budget fails here, not later
        self._unit = step_noun(settings)
        worker = TrainingWorker(self._new_run_id(), settings, corpus)
        worker.stage_changed.connect(self._on_worker_stage_changed)
        worker.counting_progress.connect(self._on_worker_counting_progress)
        worker.prepared.connect(self._on_worker_prepared)
        worker.steps_ready.connect(self._on_worker_steps_ready)
        self._reset_counters()
        self._stage = STAGE_PARSING if corpus.word_counts else STAGE_COUNTING
        run_id = self._launch(worker)
        self.started.emit()
        self._emit_progress()
        return run_id

    @property
    def merges_done(self) -> int:
        return self._done

    # -- progress ---------------------------------------------------------------------------

    def _emit_progress(self, fraction: float | None = None, *, final: bool = False) -> None:
        now = time.monotonic()
        rate = 0.0
        if len(self._samples) >= 2:
            (t_a, n_a), (t_b, n_b) = self._samples[0], self._samples[-1]
            if t_b > t_a:
                rate = (n_b - n_a) / (t_b - t_a)
        left = None
        if self._stage == STAGE_TRAINING:
            if self._budget is not None:
                fraction = min(1.0, self._done / self._budget) if self._budget else 1.0
                if rate > 0:
                    left = max(0.0, (self._budget - self._done) / rate)
        if final:  # finished (perhaps before the budget: no pair was frequent enough any more)
            fraction, left = 1.0, 0.0
        p = TrainingProgress(self._stage, self._done, self._budget, rate, left, now - self._t0, now - self._stage_t0,
                             fraction, self._unit)
        self.last_progress = p
        self.progress_changed.emit(p)

    @Slot()
    def _on_running_changed(self) -> None:
        if self.is_running:
            self._tick.start()
        else:
            self._tick.stop()

    @Slot()
    def _on_tick_timeout(self) -> None:
        if self.is_running and self._stage != STAGE_TRAINING:
            last = self.last_progress
            self._emit_progress(last.fraction if last is not None and last.stage == self._stage else None)

    # -- worker signals ---------------------------------------------------------------------

    @Slot(int, str)
    def _on_worker_stage_changed(self, run_id: int, stage: str) -> None:
        if not self.is_current(run_id):
            return
        if stage != self._stage:
            self._stage_t0 = time.monotonic()
        self._stage = stage
        if stage == STAGE_TRAINING:
            self._samples.append((time.monotonic(), 0))
        self.stage_changed.emit(stage)
        self._emit_progress()

    @Slot(int, object, object)
    def _on_worker_counting_progress(self, run_id: int, done: int, total: int) -> None:
        if not self.is_current(run_id):
            return
        if total and done >= total and self._stage == STAGE_COUNTING:
            self._stage = STAGE_PREPARING  # counting is done; the trainer is being set up
            self.stage_changed.emit(self._stage)
        self._emit_progress(done / total if total else None)

    @Slot(int, object, object)
    def _on_worker_prepared(self, run_id: int, timeline: AnyTimeline, budget: int | None) -> None:
        if not self.is_current(run_id):
            return
        self._budget = budget
        self._stage = STAGE_PREPARING
        self.timeline = empty_copy(timeline)  # any algorithm
        self.prepared.emit(self.timeline)

    @Slot(int, list)
    def _on_worker_steps_ready(self, run_id: int, steps: list) -> None:
        if not self.is_current(run_id):
            return
        self._done += len(steps)
        self.timeline.steps.extend(steps)
        now = time.monotonic()
        self._samples.append((now, self._done))
        while len(self._samples) > 2 and now - self._samples[0][0] > RATE_WINDOW_SECONDS:
            self._samples.popleft()
        self.steps_ready.emit(steps)
        self._emit_progress()

    def _on_result(self, result: object) -> None:
        timeline = self.timeline
        assert timeline is not None and result == timeline.n_steps, (result, timeline)
        timeline.finished = True
        self._emit_progress(final=True)
        self.finished.emit(timeline)

    def _on_cancel(self) -> None:
        self.cancelled.emit()

    def _on_failure(self, message: str) -> None:
        self.failed.emit(message)
