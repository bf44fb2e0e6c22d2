"""What a lesson shows at 1280 x 800: its own panels (not one an earlier lesson raised) and the
whole of its caption."""

from __future__ import annotations

from tests.qt_fixtures import drain_events
from tokviz.app.docks import raised_panel_ids

WAIT = 60_000


def _start(window, name: str) -> None:
    assert window.script.start_lesson(name)
    assert window.script.wait_for_lesson_step(WAIT) == "shown", window.lessons.caption
    drain_events()


def test_a_panel_an_earlier_lesson_raised_gives_its_place_back(window):
    window.resize(1280, 800)
    window.workspaces.reset()
    drain_events()
    _start(window, "positional")
    assert "positional" in raised_panel_ids(window.docks)  # in front of the corpus's tab group
    _start(window, "wordpiece")
    raised = raised_panel_ids(window.docks)
    assert "positional" not in raised and "corpus" in raised, raised
    assert "timeline" in raised and "lesson" in raised


def test_the_whole_caption_shows_at_1280x800(window):
    window.resize(1280, 800)
    window.workspaces.reset()
    _start(window, "chars-words-subwords")
    lesson = window.lessons.lesson
    for index in (lesson.screenshot_step, 0):
        window.lessons.go(index)
        assert window.script.wait_for_lesson_step(WAIT) == "shown"
        drain_events()
        caption = window.lesson_panel.caption
        assert caption.isVisible() and not caption.visibleRegion().isEmpty()
        assert caption.height() >= caption.heightForWidth(caption.width()), (index, caption.text())
        assert window.size().toTuple() == (1280, 800)  # room taken from its neighbours, not the screen


def test_a_caption_too_long_for_the_room_scrolls_visibly(window):
    window.resize(1280, 800)
    window.workspaces.reset()
    _start(window, "numbers")
    window.lessons.go(4)  # six lines at this width
    assert window.script.wait_for_lesson_step(WAIT) == "shown"
    drain_events()
    caption, scroll = window.lesson_panel.caption, window.lesson_panel.caption_scroll
    assert caption.height() >= caption.heightForWidth(caption.width())  # every line, to scroll to
    assert scroll.verticalScrollBar().isVisible() and scroll.verticalScrollBar().maximum() > 0
    assert scroll.height() >= 3 * caption.fontMetrics().lineSpacing()  # three lines in sight
    assert window.size().toTuple() == (1280, 800)
