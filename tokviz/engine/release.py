"""`GradualRelease`: big lists dropped a slice per turn of the event loop.

Freeing 50,000 glitch rows in one go (their floats, tuples and bytes) holds the GUI thread for
tens of milliseconds; a list handed to `drop` is emptied `SLICE` items per turn instead, so the
window keeps painting while the memory goes back. `drop_graph` does the same for a whole result
object (the token view's encodings of a megabyte: a million small objects, ~100 ms to free at once):
it is taken apart a piece per turn, and only the pieces nothing else holds are emptied.
"""

from __future__ import annotations

import dataclasses
import sys
import time

from PySide6.QtCore import QObject, QTimer, Slot

SLICE = 2_000
TURN_SECONDS = 0.004  # taking a graph apart: at most this long per turn


class GradualRelease(QObject):
    """Owns lists on their way out; `drop(items)` takes the caller's last reference."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lists: list[list] = []
        self._objects: list = []  # graphs on their way out (`drop_graph`), taken apart a piece per turn
        self._timer = QTimer(self, interval=0)
        self._timer.timeout.connect(self._on_timer_timeout)

    def drop(self, items: list) -> None:
        """Free `items` (which nothing else should hold) over the next turns of the event loop."""
        if len(items) <= SLICE:
            items.clear()
            return
        self._lists.append(items)
        self._timer.start()

    def drop_graph(self, obj: object) -> None:
        """Free `obj` and what it holds (lists, dicts, dataclasses, objects) over the next turns.
        Unlike `drop`, `obj` may still be held elsewhere (the view showing it): each piece is
        emptied only once this is its last holder, else it is just let go."""
        if obj is not None:
            self._objects.append(obj)
            self._timer.start()

    @property
    def pending(self) -> int:
        """Items still to free."""
        return sum(map(len, self._lists)) + len(self._objects)

    @Slot()
    def _on_timer_timeout(self) -> None:
        self.free_slice()

    def free_slice(self) -> None:
        """Free up to `SLICE` items now: what each turn of the event loop does."""
        if self._lists:
            items = self._lists[-1]
            del items[-SLICE:]
            if not items:
                self._lists.pop()
        elif self._objects:
            self._take_apart()
        if not self._lists and not self._objects:
            self._timer.stop()

    def _take_apart(self) -> None:
        end = time.perf_counter() + TURN_SECONDS
        while self._objects and not self._lists and time.perf_counter() < end:
            obj = self._objects.pop()
            if sys.getrefcount(obj) > 2:  # held elsewhere too (2: `obj` and the argument): let it go
                continue
            if isinstance(obj, list):
                if len(obj) > SLICE:
                    self._lists.append(obj)  # sliced from the next turn on
                else:
                    self._objects.extend(obj)
                    obj.clear()
            elif isinstance(obj, dict):
                items = list(obj.items())  # keys and values outlive `clear`: freed with their pairs
                obj.clear()
                if len(items) > SLICE:
                    self._lists.append(items)
                else:
                    self._objects.extend(v for _, v in items)
            elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
                self._objects.extend(getattr(obj, f.name) for f in dataclasses.fields(obj))
            elif hasattr(obj, "__dict__") and not isinstance(obj, type):
                self._objects.extend(vars(obj).values())
            # strings, numbers, tuples, arrays: freed with `obj`, each at once
