"""`PresenterKeys`: a presenter's clicker keys, wherever the focus is in its window.

Right/PageDown/Space go forward and Left/PageUp back, through a running lesson (its ``next()`` and
``prev()``) or else the timeline's playback (Space plays or pauses, Home/End jump to the ends);
never while the user types in a text field, and never with a modifier held. What a key does is
decided here; entering and leaving presenter mode (which installs this filter) is `Presenter`'s.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QWidget

from tokviz.engine.playback import Playback
from tokviz.panels.timeline.transport import focus_is_typing

from .lesson_runner import LessonRunner


class PresenterKeys(QObject):
    """Application event filter: clicker keys step the timeline, or a running lesson."""

    def __init__(self, top_level: QWidget, playback: Playback, lessons: Callable[[], LessonRunner | None], *,
                 parent: QObject | None = None) -> None:
        """`lessons()`: the lesson runner whose running lesson the keys step (asked at each key)."""
        super().__init__(parent)
        self.top_level = top_level  # keys typed in another window are left alone
        self.playback = playback
        self.lessons = lessons

    def _action(self, key: Qt.Key) -> Callable[[], object] | None:
        lessons = self.lessons()
        if lessons is not None and lessons.lesson is not None:
            nxt, prev = lessons.next, lessons.prev
            return {Qt.Key.Key_Right: nxt, Qt.Key.Key_PageDown: nxt, Qt.Key.Key_Space: nxt,
                    Qt.Key.Key_Left: prev, Qt.Key.Key_PageUp: prev}.get(key)
        pb = self.playback
        return {Qt.Key.Key_Right: pb.step_forward, Qt.Key.Key_PageDown: pb.step_forward,
                Qt.Key.Key_Left: pb.step_back, Qt.Key.Key_PageUp: pb.step_back, Qt.Key.Key_Space: pb.toggle,
                Qt.Key.Key_Home: pb.go_home, Qt.Key.Key_End: pb.go_end}.get(key)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride) or event.modifiers() not in (
                Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier):
            return False
        if not isinstance(obj, QWidget) or obj.window() is not self.top_level:
            return False
        slot = self._action(Qt.Key(event.key()))
        if slot is None or focus_is_typing():
            return False
        if kind == QEvent.Type.ShortcutOverride:  # ours, not a panel's own shortcut (the timeline's)
            event.accept()
            return True
        slot()
        return True
