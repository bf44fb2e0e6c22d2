"""`Panel`: the base of every dockable panel, and the font and colour helpers panels share.

A panel has a stable `PANEL_ID` (its object name; its dock is ``dock_<PANEL_ID>``), a `TITLE`
and a preferred dock area. It follows the application-wide font (the app scales it with
Ctrl+= / Ctrl+-): Qt propagates the font to every child, and panels that use a monospace font
rebuild it in `_update_fonts()`, which runs on every font change. Colours come from the palette at
paint time, so a theme switch needs no code in the panel.

What this leaves out: docking (``tokviz.app.docks``) and themes (``tokviz.app.theme``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from .fonts import token_font


class Panel(QWidget):
    """Base class: subclasses set `PANEL_ID`, `TITLE` and `DEFAULT_AREA`."""

    PANEL_ID = "panel"
    TITLE = "Panel"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    presented_changed = Signal()  # what `presenter_caption` says changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(self.PANEL_ID)

    def presenter_caption(self) -> str:
        """What the panel shows when that is not the window's tokenizer at its step (the Compare
        panel's models), for presenter mode's caption bar; "" when it has nothing of its own."""
        return ""

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._update_fonts()
        super().changeEvent(event)

    def _update_fonts(self) -> None:
        """Rebuild fonts that are not inherited (monospace text); called on every font change."""

    def shutdown(self) -> None:
        """Stop background work owned by the panel (the window calls this before closing)."""

    # -- presenter mode ----------------------------------------------------------

    _presenting: PresentingChanges | None = None

    @property
    def presenting(self) -> bool:
        return self._presenting is not None

    def set_presenting(self, on: bool) -> None:
        """Presenter mode on or off (the presenter calls this on the panels it shows). Panels lay
        themselves out for the back row in `_present`; leaving undoes every change exactly."""
        if on == self.presenting:
            return
        if on:
            self._presenting = PresentingChanges()
            self._present(self._presenting)
        else:
            changes, self._presenting = self._presenting, None
            changes.undo()
        self._update_fonts()

    def _present(self, changes: PresentingChanges) -> None:
        """Hide or rearrange parts for presenter mode, through `changes` (default: nothing)."""


_KEEP = object()


class PresentingChanges:
    """What a panel changed for presenter mode, undone in reverse order by `undo()`.

    >>> changes.hide(self.tabs); changes.set(self.table.setColumnHidden, 4, was=False, now=True)
    """

    def __init__(self) -> None:
        self._undo: list[Callable[[], object]] = []

    def hide(self, *widgets: QWidget) -> None:
        for w in widgets:
            self._undo.append(partial(w.setHidden, w.isHidden()))
            w.hide()

    def set(self, setter: Callable, *args, was, now=_KEEP) -> None:
        """``setter(*args, now)`` now (unless `now` is left out), ``setter(*args, was)`` on leaving."""
        self._undo.append(partial(setter, *args, was))
        if now is not _KEEP:
            setter(*args, now)

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


def monospace_font(reference: QFont, *, scale: float = 1.0) -> QFont:
    """The bundled monospace token font (with its fallbacks) at the size of `reference` (times
    `scale`): the same on every machine (`tokviz.panels.fonts`)."""
    return token_font(reference, scale=scale)


HIGHLIGHT_WIDTH_PROPERTY = "tokviz_highlight_width"  # set by presenter mode
SMALL_PRINT_PROPERTY = "tokviz_small_print_px"  # presenter mode: the least pixel size of small print


def small_print_px() -> int:
    """The least pixel size small print (captions under byte groups, ids under tokens) may have: 0
    normally, in presenter mode what reads from the back row (24 px on a 1080-line screen)."""
    app = QApplication.instance()
    value = app.property(SMALL_PRINT_PROPERTY) if app is not None else None
    return int(value) if isinstance(value, (int, float)) and value > 0 else 0


def highlight_width() -> float:
    """Multiplier for cursor and highlight pens: 1 normally, thicker in presenter mode."""
    app = QApplication.instance()
    value = app.property(HIGHLIGHT_WIDTH_PROPERTY) if app is not None else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else 1.0


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def error_color(palette: QPalette) -> QColor:
    return QColor("#ff7b72") if is_dark(palette) else QColor("#b3261e")


def show_error_text(label, text: str, palette: QPalette) -> None:
    """Show `text` in `label` in the error colour of `palette` (the panel's)."""
    pal = label.palette()
    pal.setColor(label.foregroundRole(), error_color(palette))
    label.setPalette(pal)
    label.setText(text)


def ok_color(palette: QPalette) -> QColor:
    return QColor("#7ee787") if is_dark(palette) else QColor("#1a7f37")


def notice_colors(palette: QPalette) -> tuple[QColor, QColor]:
    """(background, text) of an information banner."""
    if is_dark(palette):
        return QColor("#2d3a4f"), QColor("#dbe7ff")
    return QColor("#e7f0fd"), QColor("#1d3557")


def muted_color(palette: QPalette) -> QColor:
    return palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
