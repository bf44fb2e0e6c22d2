"""`GradualRelease`: big lists dropped a slice per turn of the event loop.

Freeing 50,000 glitch rows in one go (their floats, tuples and bytes) holds the GUI thread for
tens of milliseconds; a list handed to `drop` is emptied `SLICE` items per turn instead, so the
window keeps painting while the memory goes back.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Slot

SLICE = 2_000


class GradualRelease(QObject):
    """Owns lists on their way out; `drop(items)` takes the caller's last reference."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lists: list[list] = []
        self._timer = QTimer(self, interval=0)
        self._timer.timeout.connect(self._on_timer_timeout)

    def drop(self, items: list) -> None:
        """Free `items` (which nothing else should hold) over the next turns of the event loop."""
        if len(items) <= SLICE:
            items.clear()
            return
        self._lists.append(items)
        self._timer.start()

    @property
    def pending(self) -> int:
        """Items still to free."""
        return sum(map(len, self._lists))

    @Slot()
    def _on_timer_timeout(self) -> None:
        self.free_slice()

    def free_slice(self) -> None:
        """Free up to `SLICE` items now: what each turn of the event loop does."""
        if not self._lists:
            return
        items = self._lists[-1]
        del items[-SLICE:]
        if not items:
            self._lists.pop()
        if not self._lists:
            self._timer.stop()
