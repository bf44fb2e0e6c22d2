"""`FrameTurns`: big repaints of a window take turns, one per painted frame.

Qt paints everything made dirty since the window's last frame in one event (the window's
``UpdateRequest``). While a run trains, several views refresh on their own clocks (the merge table,
the candidates, the chart, the token view with its comparison rows); when their updates fall
between the same two frames, one paint event carries them all and overruns a frame on a busy
machine, though each alone fits. So a view that is about to make much of the window dirty and
cannot wait says so (`claim`), and a view that can wait a frame asks for a turn (`when_free`): its
update runs in an event-loop turn after the window has painted, with no claim since.

A window that does not paint (hidden, minimised) releases a claim `RELEASE_MS` after the first
claim since its last frame, so nothing waits for a frame that never comes, however often claimed.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QWidget

RELEASE_MS = 60  # a claim lapses after this when no frame is painted


class FrameTurns(QObject):
    """The turns of one top-level window (see `frame_turns`)."""

    # a queued call, not a zero timer: a window repainting on every loop pass (a busy bar) posts
    # its paint events ahead of a zero timer restarted at each of them, and the timer never fired
    _wake = Signal()

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("frame_turns")
        self._claimed = False
        self._waiting: dict[object, Callable[[], None]] = {}  # key -> the latest update asked for
        self._woken = False  # a `_run` is queued
        self._wake.connect(self._run, Qt.ConnectionType.QueuedConnection)
        self._release = QTimer(self, singleShot=True, interval=RELEASE_MS)
        self._release.timeout.connect(self._on_frame)
        window.installEventFilter(self)

    @property
    def claimed(self) -> bool:
        """A big update has made the window dirty since its last frame."""
        return self._claimed

    def claim(self) -> None:
        """This frame is taken: a big update has just made (or is making) the window dirty."""
        self._claimed = True
        if not self._release.isActive():  # claims made without a frame lapse all at once
            self._release.start()

    def when_free(self, key: object, update: Callable[[], None]) -> None:
        """Run `update` in its own frame: at once if no claim is pending, else after the next
        paint. A later request with the same `key` replaces an earlier one still waiting."""
        self._waiting.pop(key, None)
        self._waiting[key] = update
        if not self._claimed:
            self._queue_run()

    def cancel(self, key: object) -> None:
        self._waiting.pop(key, None)

    @property
    def waiting(self) -> int:
        """How many updates wait for their turn."""
        return len(self._waiting)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            self._on_frame()  # what waits runs in a later event, after this paint
        return False

    @Slot()
    def _on_frame(self) -> None:
        self._claimed = False
        self._release.stop()
        if self._waiting:
            self._queue_run()

    def _queue_run(self) -> None:
        if not self._woken:
            self._woken = True
            self._wake.emit()

    @Slot()
    def _run(self) -> None:
        self._woken = False
        if self._claimed or not self._waiting:
            return
        key = next(iter(self._waiting))
        update = self._waiting.pop(key)
        self.claim()
        update()


def frame_turns(widget: QWidget) -> FrameTurns:
    """The `FrameTurns` of `widget`'s window, made on first use."""
    window = widget.window()
    turns = window.findChild(FrameTurns, "frame_turns", Qt.FindChildOption.FindDirectChildrenOnly)
    if turns is None:
        turns = FrameTurns(window)
    return turns
