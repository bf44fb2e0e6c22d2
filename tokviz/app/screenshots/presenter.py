"""Presenter-mode pictures for ``tokviz screenshot``: what the back row sees.

``presenter-timeline-<theme>.png`` (the merge timeline stepping, caption at the bottom) and
``presenter-token_view-<theme>.png`` (timeline and token view side by side).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt

from .capture import save_shot

SHOW_STEP = 40  # an early merge: common pairs, easy to read
PROJECTOR = (1280, 720)  # the offscreen "screen" is 800 x 800; show what a 720p projector shows


def take_presenter_screenshots(window, out_dir: Path, theme: str, settle: Callable[[], None]) -> list[Path]:
    written: list[Path] = []
    model = window.step_model
    if model.timeline is None:
        return written
    before, fit = model.step, window.presenter.screen_size
    window.presenter.screen_size = QSize(*PROJECTOR)
    for name, panels in (("timeline", ["timeline"]), ("token_view", ["timeline", "token_view"])):
        model.set_step(min(SHOW_STEP, model.n_steps))
        window.script.enter_presenter(panels)
        try:
            window.setWindowState(Qt.WindowState.WindowNoState)
            window.resize(*PROJECTOR)
            settle()
            window.timeline_panel.refresh()
            window.token_view_panel.prepare_screenshot()
            settle()
            written.append(save_shot(window, out_dir / f"presenter-{name}-{theme}.png", fit=PROJECTOR))
        finally:
            window.script.leave_presenter()
            settle()
    model.set_step(before)
    window.presenter.screen_size = fit
    return written
