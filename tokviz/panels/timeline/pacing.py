"""`RefreshPacing`: when the merge timeline's views are refreshed.

Step changes are coalesced: one refresh per event-loop turn, at most every `LIVE_INTERVAL_MS`
while a training run fills the timeline. A scheduled refresh of a panel on screen is a round of
four parts, each in a frame of its own (`tokviz.panels.frame_turns`): the merge table (whose new
rows wait for it), then the candidates and provenance, then the corpus, then the chart (with new
data when there is some). Qt paints everything made dirty since the last frame in one event, and
the parts together overran a frame on a busy machine, both while a run streams in and while the
user drags the slider. A step that changes during a round is shown by the parts still to come,
and a new round follows at once (live: after `LIVE_INTERVAL_MS`). A panel not on screen,
playback (every view at every step it plays) and an explicit `refresh` refresh every part at
once. While not live, the chart's new data waits for a frame of its own too, at most every
`CHART_INTERVAL_MS` while a run goes on unfollowed.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Slot

from tokviz.panels.frame_turns import frame_turns

LIVE_INTERVAL_MS = 120  # refresh interval while a training run fills the timeline
CHART_INTERVAL_MS = 400  # chart data refresh while training, when the run is not followed live
LIVE_PHASES = 4  # the parts of a round: merge table, candidates and provenance, corpus, chart
CHART_PHASE = 3


class RefreshPacing(QObject):
    """Schedules the panel's refreshes; the panel tells it what changed."""

    def __init__(self, panel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.last_update_ms = 0.0
        self._tick = 0  # the next part of the live round
        self._parts_left = 0  # parts of the live round still to come
        self._round_due = False  # the step or the views changed since the live round began
        self._chart_due = False  # new data for the chart's next live turn
        self._live_round = False  # the round follows a training run (else the user's step)
        self._update_timer = QTimer(self, singleShot=True)
        self._update_timer.timeout.connect(self._on_update_timer_timeout)
        self._chart_timer = QTimer(self, singleShot=True, interval=CHART_INTERVAL_MS)
        self._chart_timer.timeout.connect(self._on_chart_timer_timeout)
        self._chart_key = ("chart", id(self))  # the chart's turn in `frame_turns`
        self._chart_waiting = False

    @property
    def is_live(self) -> bool:
        """A run is filling the timeline and the view follows its newest step."""
        sm = self.panel.step_model
        return not sm.is_finished and sm.follows_latest and sm.n_steps > 0

    @property
    def pending(self) -> bool:
        """A refresh (or a part of a live round, or the chart's data) is still to come."""
        return (self._update_timer.isActive() or self._parts_left > 0 or self._round_due
                or self._chart_timer.isActive() or self._chart_waiting)

    def schedule(self, *, now: bool = False) -> None:
        self._round_due = True
        timer = self._update_timer
        if now or not self.is_live:
            if not (timer.isActive() and timer.interval() == 0):
                timer.start(0)
        elif not timer.isActive():
            timer.start(LIVE_INTERVAL_MS)

    def step_changed(self) -> None:
        self.schedule()

    def chart_changed(self, *, now: bool = False) -> None:
        """The chart's data changed: draw it now (in an event of its own), or when it is due."""
        if now or self.panel.step_model.is_finished:
            self._chart_timer.start(0)
        elif self.is_live:
            self._chart_due = True
        elif not self._chart_timer.isActive():
            self._chart_timer.start(CHART_INTERVAL_MS)

    @Slot()
    def _on_chart_timer_timeout(self) -> None:
        """New data for the chart: drawn in a frame of its own on screen (a switch of models makes
        the merge table, then the chart, then the round's parts repaint, one frame each)."""
        if not self.panel.isVisible():
            self.update_chart()
            return
        self._chart_waiting = True
        frame_turns(self.panel).when_free(self._chart_key, self._chart_turn)

    def _chart_turn(self) -> None:
        self._chart_waiting = False
        self.update_chart()

    @Slot()
    def update_chart(self) -> None:
        self.panel.parts.update_chart()

    @Slot()
    def _on_update_timer_timeout(self) -> None:
        if self.is_live or not self.panel.isVisible() or self.panel.playback.is_playing:
            self.refresh()  # playing: every view at every step (a round would show each a step in four)
        else:  # the user moved the step: the parts take turns too
            self._begin_round(live=False)

    @Slot()
    def refresh(self) -> None:
        """Refresh every view for the current step now, or, live, begin a round of parts."""
        self._update_timer.stop()
        if self.is_live:
            self._begin_round(live=True)
            return
        frame_turns(self.panel).cancel(self)
        t0 = time.perf_counter()
        self._tick = self._parts_left = 0
        self._round_due = False
        if self._chart_waiting or self._chart_timer.isActive():  # "everything now": the chart's data too
            self._chart_timer.stop()
            frame_turns(self.panel).cancel(self._chart_key)
            self._chart_waiting = False
            self.update_chart()
        self.panel.parts.refresh(self.panel.step_model.step)
        self.last_update_ms = (time.perf_counter() - t0) * 1000

    def _begin_round(self, *, live: bool) -> None:
        if self._parts_left == 0 and self._round_due:  # else the running round looks again
            self._round_due, self._tick, self._parts_left, self._live_round = False, 0, LIVE_PHASES, live
            frame_turns(self.panel).when_free(self, self._turn)

    def _turn(self) -> None:
        if self._live_round and not self.is_live:  # the run ended or the user took the step meanwhile
            self.refresh()
            return
        t0 = time.perf_counter()
        phase = self._tick % LIVE_PHASES
        self._tick += 1
        if phase == CHART_PHASE and self._chart_due:
            self._chart_due = False
            self.panel.parts.update_chart()  # new data and the cursor
        else:
            self.panel.parts.refresh(self.panel.step_model.step, phase)
        self._parts_left -= 1
        if self._parts_left > 0:
            frame_turns(self.panel).when_free(self, self._turn)  # the next part, next frame
        elif self._round_due:
            self._update_timer.start(LIVE_INTERVAL_MS if self._live_round else 0)  # the next round
        self.last_update_ms = (time.perf_counter() - t0) * 1000

    def stop(self) -> None:
        self._update_timer.stop()
        self._chart_timer.stop()
        frame_turns(self.panel).cancel(self)
        frame_turns(self.panel).cancel(self._chart_key)
        self._chart_waiting = False
