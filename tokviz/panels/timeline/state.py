"""The merge timeline's part of a saved session: tab, corpus position, chart series and scale."""

from __future__ import annotations

from tokviz.panels.state_setters import set_checks, set_data, set_tab


def timeline_state(p) -> dict:
    return {"tab": p.tabs.currentIndex(), "position": p.position_slider.value(),
            "series": p.series_box.currentData(), "log": p.log_box.isChecked()}


def restore_timeline(p, d: dict) -> None:
    set_tab(p.tabs, d)
    set_data(p.series_box, d.get("series"))
    set_checks(d, {"log": p.log_box})
    if isinstance(d.get("position"), int):
        p.position_slider.setValue(d["position"])
