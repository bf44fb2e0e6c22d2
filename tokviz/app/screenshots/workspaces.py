"""Workspace pictures for ``tokviz screenshot``: the whole window in each workspace, at each size.

``workspace-<key>-<W>x<H>-<theme>.png`` for every workspace (`tokviz.app.workspaces.layouts`) and every
size asked for (``--size``, default 1280x800 and 1920x1080), each workspace laid out afresh for that
size; and ``welcome-<theme>.png``, the first-run screen. The window's size and workspace are put back afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .capture import WINDOW_SIZE, save_shot

DEFAULT_SIZES = ((1280, 800), (1920, 1080))


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x800"`` -> (1280, 800); ValueError with what is wrong otherwise."""
    w, sep, h = text.lower().partition("x")
    if not sep or not w.strip().isdigit() or not h.strip().isdigit():
        raise ValueError(f"size {text!r}: write WIDTHxHEIGHT, e.g. 1280x800")
    size = int(w), int(h)
    if not (400 <= size[0] <= 8000 and 300 <= size[1] <= 8000):
        raise ValueError(f"size {text!r}: from 400x300 to 8000x8000")
    return size


def take_workspace_screenshots(window, out_dir: Path, theme: str, settle: Callable[[], None], *,
                               keys: list[str], sizes=DEFAULT_SIZES) -> list[Path]:
    ws = window.workspaces
    before_size, before_key = window.size(), ws.current
    written: list[Path] = []
    try:
        for width, height in sizes:
            window.resize(width, height)
            settle()
            for key in keys:
                ws.choose(key)
                ws.reset()  # this workspace's own layout, for this size
                settle()
                window.token_view_panel.prepare_screenshot()  # the text at this step, drawn
                if key == "compare":  # the comparison's chart (it fills the room), if one ran
                    panel = window.compare_panel
                    chart = getattr(panel, "chart", None)
                    if chart is not None and hasattr(panel, "tabs"):
                        panel.tabs.setCurrentWidget(chart.parentWidget())
                settle()
                written.append(save_shot(window, out_dir / f"workspace-{key}-{width}x{height}-{theme}.png",
                                         fit=(width, height)))
    finally:
        ws.choose(before_key)
        window.resize(before_size)
        settle()
        ws.reset()  # laid out for this size again (a wide layout would have held the window taller)
        window.resize(before_size)
        settle()
    return written


def take_welcome_screenshot(window, out_dir: Path, theme: str, settle: Callable[[], None]) -> list[Path]:
    """``welcome-<theme>.png``: the first-run screen over the window (Help > Welcome Screen)."""
    window.welcome.show()
    settle()
    try:
        return [save_shot(window, out_dir / f"welcome-{theme}.png", fit=WINDOW_SIZE)]
    finally:
        window.welcome.screen.hide()
        settle()
