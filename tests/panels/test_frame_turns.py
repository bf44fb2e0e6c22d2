"""`FrameTurns`: big updates of one window wait for the frame a claim has taken to be painted."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from tests.qt_fixtures import drain_events
from tokviz.panels.frame_turns import RELEASE_MS, frame_turns


class Frames(QObject):
    """Counts the paint events (``UpdateRequest``) a window receives."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.count = 0
        window.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            self.count += 1
        return False


def shown(qtbot) -> QWidget:
    w = QWidget()
    qtbot.addWidget(w)
    w.resize(200, 100)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_a_free_window_runs_the_update_in_the_next_turn(qtbot):
    w = shown(qtbot)
    turns, ran = frame_turns(w), []
    assert frame_turns(w) is turns  # one per window
    turns.when_free("a", lambda: ran.append("a"))
    assert ran == []
    qtbot.waitUntil(lambda: ran == ["a"], timeout=1_000)


def test_after_a_claim_the_update_waits_for_the_painted_frame(qtbot):
    w = shown(qtbot)
    frames = Frames(w)
    turns, ran = frame_turns(w), []
    w.update()
    turns.claim()

    def update():  # a big update: it makes the window dirty
        ran.append(frames.count)
        w.update()

    turns.when_free("a", update)
    turns.when_free("b", update)
    qtbot.waitUntil(lambda: len(ran) == 2, timeout=2_000)
    assert ran[0] >= 1  # a frame was painted before the first waiting update ran
    assert ran[1] > ran[0]  # and another between the two: each in a frame of its own


def test_a_later_request_with_the_same_key_replaces_the_waiting_one(qtbot):
    w = shown(qtbot)
    turns, ran = frame_turns(w), []
    turns.claim()
    turns.when_free("chart", lambda: ran.append(1))
    turns.when_free("chart", lambda: ran.append(2))
    assert turns.waiting == 1
    qtbot.waitUntil(lambda: ran != [], timeout=2_000)
    assert ran == [2] and turns.waiting == 0


def test_a_window_that_never_paints_releases_the_claim(qtbot):
    w = QWidget()  # never shown: no frame comes
    qtbot.addWidget(w)
    turns, ran = frame_turns(w), []
    turns.claim()
    turns.when_free("a", lambda: ran.append(1))
    assert turns.claimed
    qtbot.waitUntil(lambda: ran == [1], timeout=RELEASE_MS * 20)


def test_cancel_drops_a_waiting_update(qtbot):
    w = shown(qtbot)
    turns, ran = frame_turns(w), []
    turns.claim()
    turns.when_free("a", lambda: ran.append(1))
    turns.cancel("a")
    assert turns.waiting == 0
    qtbot.waitUntil(lambda: not turns.claimed, timeout=RELEASE_MS * 20)
    drain_events()
    assert ran == []
