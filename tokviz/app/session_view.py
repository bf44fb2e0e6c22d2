"""The view part of a session: the window's dock layout, geometry and size, the panels in front,
each panel's ``view_state()``, the vocabulary selection, the theme and the font scale, as the JSON
dict a `tokviz.core.saved.session.Session` keeps, and put back on screen. The corpus, settings and
model of a session are `tokviz.app.session_ops.SessionController`'s.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSize
from PySide6.QtWidgets import QApplication

from tokviz.engine.settings import LAYOUT_VERSION, THEMES
from tokviz.panels.view_state import restore_view_state, view_state
from tokviz.panels.vocab_panel import VocabPanel

from .docks import DockManager, LayoutFrame, raised_panel_ids
from .theme import Appearance

MIN_SANE_SIDE = 4096  # a saved window side up to this is always applied (twice the screen beyond)


def _b64(data: QByteArray) -> str:
    return bytes(data.toBase64()).decode("ascii")


def _unb64(text: object) -> QByteArray | None:
    return QByteArray.fromBase64(text.encode("ascii")) if isinstance(text, str) and text else None


def gather_view(frame: LayoutFrame, docks: DockManager, look: Appearance, vocab: VocabPanel,
                normal_layout: tuple[QByteArray, QByteArray, QSize] | None) -> dict:
    """The view on screen; `normal_layout` (geometry, dock state, size) replaces the frame's own
    while presenting: the layout presenter mode returns to."""
    panels = {}
    for pid in docks.panel_ids():
        state = view_state(docks.panel(pid))
        if state is not None:
            panels[pid] = state
    geometry, layout, size = normal_layout or (frame.saveGeometry(), frame.saveState(LAYOUT_VERSION), frame.size())
    return {
        "layout_version": LAYOUT_VERSION,
        "layout": _b64(layout),
        "geometry": _b64(geometry),
        "size": [size.width(), size.height()],
        "raised": raised_panel_ids(docks),
        "theme": look.theme,
        "font_scale": look.font_scale,
        "vocab_selection": vocab.selected_ids(),
        "panels": panels,
    }


def apply_view(frame: LayoutFrame, docks: DockManager, look: Appearance, vocab: VocabPanel, v: dict,
               problems: list[str]) -> None:
    """Put the view `v` (checked by ``clean_view``) back on screen; what cannot be restored is
    added to `problems`."""
    w = frame
    if v.get("theme") in THEMES:
        look.set_theme(v["theme"])
    if isinstance(v.get("font_scale"), (int, float)):
        look.set_font_scale(float(v["font_scale"]))
    geometry = _unb64(v.get("geometry"))
    if geometry is not None:
        w.restoreGeometry(geometry)
    size = v.get("size")
    if size is not None and not (w.isMaximized() or w.isFullScreen()):
        # restoreGeometry fits the window onto the screen; keep the saved size, but within reach
        # of this screen (a window of 100000 x 100000 crashes while painting)
        screen = (w.screen() or QApplication.primaryScreen()).availableGeometry()
        w.resize(min(size[0], max(2 * screen.width(), MIN_SANE_SIDE)),
                 min(size[1], max(2 * screen.height(), MIN_SANE_SIDE)))
    layout = _unb64(v.get("layout"))
    if layout is not None and v.get("layout_version") == LAYOUT_VERSION:
        w.restoreState(layout, LAYOUT_VERSION)
    for pid in v.get("raised", []):
        if pid in docks.panel_ids() and docks.dock(pid).isVisible():
            docks.dock(pid).raise_()
    for pid, state in (v.get("panels") or {}).items():
        if pid in docks.panel_ids():
            try:
                restore_view_state(docks.panel(pid), state)
            except (TypeError, ValueError, AttributeError, OverflowError) as exc:  # a shared file's odd value
                problems.append(f"the {pid} panel's view could not be restored ({exc})")
    ids = v.get("vocab_selection") or []
    if ids and isinstance(ids[0], int):
        vocab.select_token(ids[0])
    QApplication.processEvents()  # let raised tabs and restored geometry settle
