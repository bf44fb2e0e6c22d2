"""Grabbing and checking the pictures of ``tokviz screenshot``: one way to save a shot.

`save_shot` saves a widget and refuses one that still shows work in progress (a visible progress
bar) or one larger than the size the set promises for it (a panel's minimum size won over the
window's size: the picture would not fit a 1280 x 800 screen or projector); `save_panel_shot`
shows a panel alone at `PANEL_SIZE` (its dock floated) before grabbing it, so a panel tabbed behind
another or squeezed into a corner of the default layout still shows its content at a readable size;
`wait_or_fail` waits for an engine's signal and makes a run that does not end in time an error;
`check_shots` checks the whole set (every file there, none smaller than `MIN_SIZE`, no two alike).
Every failure is a `ShotError` with a one-line message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QProgressBar, QWidget

from tokviz.app.waiting import wait_for_signals

WINDOW_SIZE = (1280, 800)  # the window's pictures: a laptop screen, a 1280 x 800 projector
PANEL_SIZE = (1200, 750)  # a panel alone: about what it gets in a workspace that shows it large
MIN_SIZE = (800, 500)  # smaller than this a panel's picture says little
RUN_TIMEOUT_MS = 900_000  # only catches a run that never ends: a slow machine still finishes


class ShotError(RuntimeError):
    """A picture that cannot be taken as it should be (the command exits non-zero)."""


def busy_bars(widget: QWidget) -> list[str]:
    """Names of the progress bars shown inside `widget`: work still running."""
    return [bar.objectName() or "progress bar" for bar in widget.findChildren(QProgressBar) if bar.isVisible()]


def save_shot(widget: QWidget, path: Path, *, fit: tuple[int, int] | None = None) -> Path:
    """Grab `widget` into `path`; a `ShotError` when it shows work in progress, is larger than `fit`
    (the size the set promises for this picture, when it promises one) or cannot be written."""
    busy = busy_bars(widget)
    if busy:
        raise ShotError(f"{path.name}: work still in progress ({', '.join(busy)})")
    if fit is not None and (widget.width() > fit[0] or widget.height() > fit[1]):
        need = widget.minimumSizeHint()
        raise ShotError(f"{path.name} is {widget.width()}x{widget.height()}, larger than the {fit[0]}x{fit[1]} "
                        f"the set promises (its contents ask for at least {need.width()}x{need.height()})")
    if not widget.grab().save(str(path)):
        raise ShotError(f"cannot write {path}")
    return path


def save_panel_shot(window, panel_id: str, path: Path, settle: Callable[[], None], *,
                    size: tuple[int, int] = PANEL_SIZE) -> Path:
    """Save the panel `panel_id` of `window` shown alone at `size` (its dock floated, then put
    back where it was)."""
    dock = window.docks.dock(panel_id)
    window.docks.panel(panel_id)  # built, if it was waiting for its first showing
    was_visible = dock.isVisible()
    dock.setFloating(True)
    dock.show()
    dock.resize(*size)
    settle()
    try:
        return save_shot(dock, path, fit=size)
    finally:
        dock.setFloating(False)
        dock.setVisible(was_visible)
        if was_visible:
            dock.raise_()  # in front of its tab group again, as it was: the next picture shows it
        settle()


def wait_or_fail(signals: dict, what: str, *, timeout_ms: int = RUN_TIMEOUT_MS,
                 expect: str = "done", value_of: str | None = None) -> None:
    """Wait for one of `signals` (``{name: [signal, ...]}``, as `wait_for_signals`); a `ShotError`
    naming `what` when another one fires first or the wait times out."""
    outcome = wait_for_signals(signals, timeout_ms, value_of)
    if outcome != expect:
        raise ShotError(f"{what}: {outcome}")


def check_shots(paths: list[Path], *, min_size: tuple[int, int] = MIN_SIZE) -> None:
    """The set as a whole: every file written and readable, at least `min_size`, no two the same
    picture (the same bytes); a `ShotError` naming the first problem otherwise."""
    seen: dict[str, Path] = {}
    for path in paths:
        if not path.is_file():
            raise ShotError(f"{path.name} was not written")
        image = QImage(str(path))
        if image.isNull():
            raise ShotError(f"{path.name} is not a readable PNG")
        if image.width() < min_size[0] or image.height() < min_size[1]:
            raise ShotError(f"{path.name} is {image.width()}x{image.height()}, "
                            f"smaller than {min_size[0]}x{min_size[1]}")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest in seen:
            raise ShotError(f"{path.name} is the same picture as {seen[digest].name}")
        seen[digest] = path
