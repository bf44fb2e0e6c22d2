"""`Playback`: the transport of the merge timeline (play/pause, speed, loop, step, home/end).

A QObject that moves the shared `StepModel`. Playing advances by wall-clock time, not by timer
ticks: each tick sets the step to ``start + elapsed * speed``, so playback keeps its speed even
when a repaint takes longer than one frame (it skips steps instead of falling behind).

What this leaves out: buttons and keys (``tokviz.panels.timeline.transport``).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal, Slot

MIN_SPEED = 0.25
MAX_SPEED = 60.0
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
DEFAULT_SPEED = 4.0


class Playback(QObject):
    """Transport over a `StepModel`."""

    playing_changed = Signal(bool)
    speed_changed = Signal(float)
    loop_changed = Signal(bool)

    def __init__(self, step_model, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step_model = step_model
        self._speed = DEFAULT_SPEED
        self._loop = False
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._t0 = 0.0
        self._k0 = 0
        step_model.timeline_changed.connect(self._on_step_model_timeline_changed)

    # -- state ------------------------------------------------------------------------------

    @property
    def is_playing(self) -> bool:
        return self._timer.isActive()

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def loop(self) -> bool:
        return self._loop

    def set_speed(self, steps_per_second: float) -> None:
        s = max(MIN_SPEED, min(MAX_SPEED, float(steps_per_second)))
        if s == self._speed:
            return
        self._speed = s
        if self.is_playing:
            self._restart_clock()
        self.speed_changed.emit(s)

    def set_loop(self, loop: bool) -> None:
        if bool(loop) != self._loop:
            self._loop = bool(loop)
            self.loop_changed.emit(self._loop)

    # -- transport --------------------------------------------------------------------------

    @Slot()
    def play(self) -> None:
        m = self.step_model
        if self.is_playing or m.n_steps == 0:
            return
        if m.step >= m.n_steps:  # at the end: start over
            m.set_step(0)
        self._restart_clock()
        self._timer.start(max(1, min(100, int(1000 / self._speed / 2))))
        self.playing_changed.emit(True)

    @Slot()
    def pause(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.playing_changed.emit(False)

    @Slot()
    def toggle(self) -> None:
        self.pause() if self.is_playing else self.play()

    @Slot()
    def step_forward(self) -> None:
        self.pause()
        self.step_model.set_step(self.step_model.step + 1)

    @Slot()
    def step_back(self) -> None:
        self.pause()
        self.step_model.set_step(self.step_model.step - 1)

    @Slot()
    def go_home(self) -> None:
        self.pause()
        self.step_model.set_step(0)

    @Slot()
    def go_end(self) -> None:
        self.pause()
        self.step_model.follow_latest()

    def jump(self, step: int) -> None:
        """Go to `step` (keeps playing from there if playing)."""
        self.step_model.set_step(step)
        if self.is_playing:
            self._restart_clock()

    # -- ticking ----------------------------------------------------------------------------

    def _restart_clock(self) -> None:
        self._t0 = time.monotonic()
        self._k0 = self.step_model.step

    @Slot()
    def _on_timer_timeout(self) -> None:
        self.advance()

    def advance(self) -> None:
        """Go to the step due now by the playback clock (what each tick of the timer does)."""
        m = self.step_model
        n = m.n_steps
        target = self._k0 + int((time.monotonic() - self._t0) * self._speed)
        if self._loop and target > n and n > 0:  # showed the last step for one beat: wrap
            m.set_step(0)
            self._restart_clock()
            return
        if target >= n and not self._loop:
            m.set_step(n)
            self.pause()
            return
        target = min(target, n)
        if target != m.step:
            m.set_step(target)

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        self.pause()
