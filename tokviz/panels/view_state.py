"""The per-panel view state a session saves and restores, as plain JSON dicts.

`view_state(panel)` and `restore_view_state(panel, d)` use a panel's own ``view_state()`` /
``restore_view_state(d)`` methods when it has them, else the functions here, keyed by
``PANEL_ID`` (the token view: text, mode, whitespace, palette, batch options, tab; the timeline:
tab, corpus position, chart series and scale). Restoring ignores keys that are missing or malformed.

What this leaves out: the window-level state (dock layout, theme, step): ``tokviz.app.session_ops``.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QTabWidget

from .base import Panel


def _set_tab(tabs: QTabWidget, d: dict, key: str = "tab") -> None:
    if isinstance(d.get(key), int) and 0 <= d[key] < tabs.count():
        tabs.setCurrentIndex(d[key])


def _set_data(box: QComboBox, value: object) -> None:
    i = box.findData(value)
    if i >= 0:
        box.setCurrentIndex(i)


def _set_checks(d: dict, boxes: dict[str, QCheckBox]) -> None:
    for key, box in boxes.items():
        if isinstance(d.get(key), bool):
            box.setChecked(d[key])


def _token_view_state(p) -> dict:
    return {"text": p.text(), "mode": p.view.mode, "whitespace": p.whitespace_box.isChecked(),
            "palette": p.palette_key, "tab": p.tabs.currentIndex(), "bos": p.bos_box.isChecked(),
            "eos": p.eos_box.isChecked(), "pad": p.pad_box.currentData()}


def _restore_token_view(p, d: dict) -> None:
    if isinstance(d.get("text"), str) and d["text"] != p.text():
        p.set_text(d["text"])
    _set_data(p.mode_box, d.get("mode"))
    _set_data(p.palette_box, d.get("palette"))
    _set_data(p.pad_box, d.get("pad"))
    _set_checks(d, {"whitespace": p.whitespace_box, "bos": p.bos_box, "eos": p.eos_box})
    _set_tab(p.tabs, d)


def _timeline_state(p) -> dict:
    return {"tab": p.tabs.currentIndex(), "position": p.position_slider.value(),
            "series": p.series_box.currentData(), "log": p.log_box.isChecked()}


def _restore_timeline(p, d: dict) -> None:
    _set_tab(p.tabs, d)
    _set_data(p.series_box, d.get("series"))
    _set_checks(d, {"log": p.log_box})
    if isinstance(d.get("position"), int):
        p.position_slider.setValue(d["position"])


STATES = {"token_view": (_token_view_state, _restore_token_view), "timeline": (_timeline_state, _restore_timeline)}


def view_state(panel: Panel) -> dict | None:
    """The panel's view state, or None if it has nothing to save."""
    own = getattr(panel, "view_state", None)
    if callable(own):
        return own()
    pair = STATES.get(panel.PANEL_ID)
    return pair[0](panel) if pair else None


def restore_view_state(panel: Panel, d: dict) -> None:
    own = getattr(panel, "restore_view_state", None)
    if callable(own):
        own(d)
    elif panel.PANEL_ID in STATES:
        STATES[panel.PANEL_ID][1](panel, d)
