"""`GradualRelease`: big lists are emptied a slice per turn of the event loop, small ones at once."""

from __future__ import annotations

from tokviz.engine.release import SLICE, GradualRelease


def test_a_big_list_is_freed_over_several_turns(qtbot):
    release = GradualRelease()
    freed = []

    class Row:
        def __del__(self):
            freed.append(1)

    rows = [Row() for _ in range(3 * SLICE + 5)]
    release.drop(rows)
    assert release.pending == 3 * SLICE + 5 and freed == []  # nothing freed on the spot
    release.free_slice()  # one turn: one slice
    assert len(freed) == SLICE and release.pending == 2 * SLICE + 5
    qtbot.waitUntil(lambda: release.pending == 0)
    assert rows == [] and len(freed) == 3 * SLICE + 5


def test_a_small_list_is_freed_at_once(qtbot):
    release = GradualRelease()
    small = list(range(10))
    release.drop(small)
    assert small == [] and release.pending == 0
