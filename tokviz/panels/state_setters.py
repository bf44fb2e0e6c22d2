"""Small setters the panels' view-state functions share: restoring ignores missing or malformed keys."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QTabWidget


def set_tab(tabs: QTabWidget, d: dict, key: str = "tab") -> None:
    if isinstance(d.get(key), int) and 0 <= d[key] < tabs.count():
        tabs.setCurrentIndex(d[key])


def set_data(box: QComboBox, value: object) -> None:
    i = box.findData(value)
    if i >= 0:
        box.setCurrentIndex(i)


def set_checks(d: dict, boxes: dict[str, QCheckBox]) -> None:
    for key, box in boxes.items():
        if isinstance(d.get(key), bool):
            box.setChecked(d[key])
