"""Guided-lesson pictures for ``tokviz screenshot``: the window at each lesson's chosen step,
``lesson-NN-NAME-THEME.png``."""

from __future__ import annotations


def take_lesson_screenshots(window, out_dir, theme: str, settle) -> list:
    """The screenshot command: the window at each lesson's `screenshot_step`, saved as
    ``lesson-NN-NAME-THEME.png``; `settle()` runs pending events. Returns the paths written."""
    written = []
    script = window.script
    window.docks.dock("vocabulary").raise_()  # not a panel left in front by earlier shots
    for lesson in window.lessons.lessons():
        if not script.start_lesson(lesson.name) or script.wait_for_lesson_step(120_000) != "shown":
            raise RuntimeError(f"lesson {lesson.name} did not start: {window.lessons.caption}")
        window.lessons.go(lesson.screenshot_step)
        if script.wait_for_lesson_step(120_000) != "shown":
            raise RuntimeError(f"lesson {lesson.name}: step {lesson.screenshot_step + 1} was not shown")
        settle()
        path = out_dir / f"lesson-{lesson.number:02d}-{lesson.name}-{theme}.png"
        if not window.grab().save(str(path)):
            raise OSError(f"cannot write {path}")
        written.append(path)
    script.stop_lesson()
    return written
