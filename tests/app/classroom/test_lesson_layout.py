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
    assert "positional" in raised_panel_ids(window.docks)  # in front of the timeline's tab group
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
    window.workspaces.choose("learn")  # the user's choice: the lesson's caption in Learn's room
    window.lessons.go(4)  # six lines at this width
    assert window.script.wait_for_lesson_step(WAIT) == "shown"
    drain_events()
    caption, scroll = window.lesson_panel.caption, window.lesson_panel.caption_scroll
    assert caption.height() >= caption.heightForWidth(caption.width())  # every line, to scroll to
    assert scroll.verticalScrollBar().isVisible() and scroll.verticalScrollBar().maximum() > 0
    assert scroll.height() >= 3 * caption.fontMetrics().lineSpacing()  # three lines in sight
    assert window.size().toTuple() == (1280, 800)


def _shown_height(window, pid: str) -> int:
    dock = window.docks.dock(pid)
    return dock.visibleRegion().boundingRect().height() if dock.isVisible() else 0


def test_a_lesson_shows_its_own_workspace_and_gives_the_users_back(window, settings_store):
    """A lesson about a real tokenizer's token view runs in Inspect: the token view has a column's
    whole height (the number lens's heatmap shows) and the lesson the other column's top; the next
    lesson without a workspace, or the lesson's end, gives the user's workspace back. The settings
    keep the user's all along."""
    window.resize(1280, 800)
    window.workspaces.choose("learn")
    drain_events()
    _start(window, "numbers")
    assert window.workspaces.current == "inspect" and settings_store.workspace("learn") == "learn"
    raised = raised_panel_ids(window.docks)
    assert "token_view" in raised and "lesson" in raised, raised
    window.lessons.go(4)  # the Numbers tab
    assert window.script.wait_for_lesson_step(WAIT) == "shown"
    drain_events()
    assert _shown_height(window, "token_view") > 600
    canvas = window.token_view_panel.numbers.canvas
    assert canvas.isVisible() and canvas.visibleRegion().boundingRect().height() >= 100  # (Learn: 15 px)
    _start(window, "wordpiece")
    assert window.workspaces.current == "learn"
    _start(window, "glitch-tokens")
    assert window.workspaces.current == "inspect"
    window.script.stop_lesson()
    drain_events()
    assert window.workspaces.current == "learn" and settings_store.workspace("learn") == "learn"


def test_a_workspace_chosen_during_a_lesson_is_kept(window):
    window.workspaces.choose("learn")
    _start(window, "numbers")
    window.workspaces.choose("compare")
    window.script.stop_lesson()
    drain_events()
    assert window.workspaces.current == "compare"


def test_presenter_mode_keeps_its_own_panels_when_a_lesson_starts(window, qtbot):
    window.workspaces.choose("learn")
    window.script.enter_presenter()
    qtbot.waitUntil(lambda: window.isFullScreen(), timeout=10_000)
    _start(window, "numbers")
    assert window.script.presenter_active and window.workspaces.current == "learn"
    window.script.stop_lesson()
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    assert window.workspaces.current == "learn"


def test_a_heatmap_a_lesson_raises_gets_the_timelines_column(window):
    """In Learn the heatmaps wait behind the merge timeline: raised by a lesson, the positional
    encodings get a column's whole height at 1280 x 800, not a third of one."""
    window.resize(1280, 800)
    window.workspaces.choose("learn")
    window.workspaces.reset()
    drain_events()
    _start(window, "positional")
    assert _shown_height(window, "positional") > 600


def test_a_lessons_workspace_is_laid_out_afresh_and_the_users_arrangement_kept(window, settings_store):
    """However the user arranged Inspect, a lesson shows its own layout there (the lesson's figure
    gets the same room in every classroom), and leaves the user's arrangement as it was."""
    window.resize(1280, 800)
    window.workspaces.choose("inspect")
    window.docks.dock("vocabulary").hide()  # the user's own arrangement of Inspect
    drain_events()
    window.workspaces.choose("learn")
    users = settings_store.workspace_state("inspect")
    _start(window, "numbers")
    assert window.docks.dock("vocabulary").isVisible()
    window.workspaces.reset()  # Reset Workspace Layout during the lesson: its layout, not the user's saved one
    window.script.stop_lesson()
    drain_events()
    assert settings_store.workspace_state("inspect") == users
    window.workspaces.choose("inspect")
    drain_events()
    assert not window.docks.dock("vocabulary").isVisible()
