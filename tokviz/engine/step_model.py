"""`StepModel`: the shared state every panel reads: the current timeline and the current step.

One object per window. A timeline comes from a training run (it grows as merges arrive) or from a
saved model. "Step k" means "the first k merges" (the core's rule). Panels that show one step
(merge timeline, token view, heatmaps) listen to `step_changed`; tables that list the whole
vocabulary listen to `timeline_changed` and `steps_added`.

While a run is going the step follows the newest merge, until a panel picks a step with
`set_step`; `follow_latest()` goes back to following.

What this leaves out: training itself (`tokviz.engine.training.engine`) and any drawing.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core import MergeStep, Timeline
from tokviz.core.algorithm.registry import empty_copy


class StepModel(QObject):
    """The current timeline (may be None or still growing) and the current step."""

    timeline_changed = Signal()  # a different timeline (or None): start over
    steps_added = Signal(int, int)  # first rank, how many
    step_changed = Signal(int)
    finished_changed = Signal()  # read `is_finished`

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timeline: Timeline | None = None
        self._step = 0
        self._follow = True
        self._source = ""  # "training", "file: PATH" — for titles

    # -- reading ----------------------------------------------------------------------------

    @property
    def timeline(self) -> Timeline | None:
        """The timeline as far as it has arrived. Owned by the GUI thread; do not mutate."""
        return self._timeline

    @property
    def n_steps(self) -> int:
        return 0 if self._timeline is None else self._timeline.n_steps

    @property
    def step(self) -> int:
        return self._step

    @property
    def follows_latest(self) -> bool:
        return self._follow

    @property
    def is_finished(self) -> bool:
        return self._timeline is not None and self._timeline.finished

    @property
    def source(self) -> str:
        return self._source

    # -- writing ----------------------------------------------------------------------------

    def set_timeline(self, timeline: Timeline | None, *, source: str = "") -> None:
        """Show a whole timeline (a loaded model, or a new run's empty start)."""
        self._timeline = timeline
        self._source = source
        self._follow = True
        self._step = self.n_steps
        self.timeline_changed.emit()
        self.step_changed.emit(self._step)
        self.finished_changed.emit()

    def add_steps(self, steps: list[MergeStep]) -> None:
        """Append merges that just arrived from training."""
        if self._timeline is None or not steps:
            return
        first = self._timeline.n_steps
        self._timeline.steps.extend(steps)
        self.steps_added.emit(first, len(steps))
        if self._follow:
            self._step = self._timeline.n_steps
            self.step_changed.emit(self._step)

    def mark_finished(self, timeline: Timeline) -> None:
        """Training ended: take the worker's final timeline (same merges, ``finished`` set)."""
        if self._timeline is None or timeline.n_steps != self._timeline.n_steps:
            self.set_timeline(timeline, source=self._source)
            return
        self._timeline = timeline
        self.finished_changed.emit()

    def set_step(self, step: int) -> None:
        """Show step `step` (clamped to 0..n_steps); follows new merges only if it is the last."""
        step = max(0, min(int(step), self.n_steps))
        self._follow = step == self.n_steps
        if step != self._step:
            self._step = step
            self.step_changed.emit(step)

    def follow_latest(self) -> None:
        self.set_step(self.n_steps)

    # -- wiring to a training engine --------------------------------------------------------

    def follow(self, engine) -> None:
        """Mirror a `TrainingEngine`: new run -> empty timeline, batches -> steps, end -> done."""
        engine.prepared.connect(self._on_engine_prepared)
        engine.steps_ready.connect(self._on_engine_steps_ready)
        engine.finished.connect(self._on_engine_finished)

    @Slot(object)
    def _on_engine_prepared(self, timeline: Timeline) -> None:
        self.set_timeline(empty_copy(timeline), source="training")  # any algorithm

    @Slot(list)
    def _on_engine_steps_ready(self, steps: list) -> None:
        self.add_steps(steps)

    @Slot(object)
    def _on_engine_finished(self, timeline: Timeline) -> None:
        self.mark_finished(timeline)
