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

from tokviz.core import Timeline


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
        self._engine = None  # the training engine followed (`follow`)

    # -- reading ----------------------------------------------------------------------------

    @property
    def timeline(self) -> Timeline | None:
        """The timeline as far as it has arrived. Owned by the GUI thread; do not mutate."""
        return self._timeline

    @property
    def n_steps(self) -> int:
        """The highest step: step k is the model after k merges (Unigram: after pruning round k,
        round 0 being the seed), so every label and table says the same k."""
        return 0 if self._timeline is None else self._timeline.last_step

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

    def steps_appended(self, count: int) -> None:
        """The timeline's owner (the training engine) appended `count` steps to its list."""
        if self._timeline is None or count <= 0:
            return
        self.steps_added.emit(self._timeline.n_steps - count, count)
        if self._follow:
            self._step = self.n_steps  # the last step (Unigram: the last round, one less than its records)
            self.step_changed.emit(self._step)

    def mark_finished(self, timeline: Timeline) -> None:
        """Training ended (``finished`` is set on the timeline shown since `prepared`)."""
        if timeline is not self._timeline:
            self.set_timeline(timeline, source=self._source)
            return
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
        """Mirror a `TrainingEngine`: new run -> its timeline (the engine's own object, which
        grows as batches arrive), batches -> `steps_added`, end -> done."""
        self._engine = engine
        engine.prepared.connect(self._on_engine_prepared)
        engine.steps_ready.connect(self._on_engine_steps_ready)
        engine.finished.connect(self._on_engine_finished)

    @Slot(object)
    def _on_engine_prepared(self, timeline: Timeline) -> None:
        self.set_timeline(timeline, source="training")

    @Slot(list)
    def _on_engine_steps_ready(self, steps: list) -> None:
        if self._engine is not None and self._engine.timeline is self._timeline:
            self.steps_appended(len(steps))

    @Slot(object)
    def _on_engine_finished(self, timeline: Timeline) -> None:
        self.mark_finished(timeline)
