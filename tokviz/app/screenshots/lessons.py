"""Guided-lesson pictures for ``tokviz screenshot``: the window at each lesson's chosen step,
``lesson-NN-NAME-THEME.png``, and the Lesson panel alone during the first lesson,
``lesson-THEME.png``."""

from __future__ import annotations

from .capture import ShotError, save_panel_shot, save_shot


def take_lesson_screenshots(window, out_dir, theme: str, settle, *, size: tuple[int, int]) -> list:
    """The screenshot command: the window (at `size`, the Learn workspace laid out afresh) at each
    lesson's `screenshot_step`, saved as ``lesson-NN-NAME-THEME.png``; `settle()` runs pending
    events. Returns the paths written; a lesson that does not show its step is a `ShotError`."""
    written = []
    script = window.script
    timeline = window.timeline_panel
    timeline.trace("")  # no word traced by the earlier pictures, on the chart tab
    timeline.tabs.setCurrentIndex(0)
    for lesson in window.lessons.lessons():
        if not script.start_lesson(lesson.name) or script.wait_for_lesson_step(600_000) != "shown":
            raise ShotError(f"lesson {lesson.name} did not start: {window.lessons.caption}")
        if not written:  # the Unigram views the earlier pictures left (wide) are gone: lay out afresh
            window.workspaces.choose("learn")
            window.resize(*size)
            window.workspaces.reset()
            script.select_panel("lesson")
            settle()
        window.lessons.go(lesson.screenshot_step)
        if script.wait_for_lesson_step(600_000) != "shown":
            raise ShotError(f"lesson {lesson.name}: step {lesson.screenshot_step + 1} was not shown")
        window.resize(*size)  # a lesson's panels may have asked for more room
        window.token_view_panel.prepare_screenshot()  # the lesson's text at its step, drawn
        window.token_view_panel.compare.end_flash()  # its rows are new: no header lit in the picture
        settle()
        if not written:  # the Lesson panel itself, with a lesson in it
            written.append(save_panel_shot(window, "lesson", out_dir / f"lesson-{theme}.png", settle))
        written.append(save_shot(window, out_dir / f"lesson-{lesson.number:02d}-{lesson.name}-{theme}.png", fit=size))
    script.stop_lesson()
    return written
