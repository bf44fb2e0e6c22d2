"""The Compare panel in presenter mode: the results, big, without the rows that set a run up.

Hidden: the rows of the model list and its buttons, the text and Run, the reference and the
export buttons (each row whole, its caption too); kept: the summary line and the result tabs, so
the premiums chart gets the height of the screen. Leaving presenter mode shows them again.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLayout, QWidget

from tokviz.panels.base import PresentingChanges

SETUP_WIDGETS = ("compare_models", "compare_add_current", "compare_text", "compare_reference", "compare_export_csv")


def row_widgets(layout: QLayout, widget: QWidget) -> list[QWidget]:
    """The widgets of the row (a nested layout of `layout`) that holds `widget`, or `widget` alone."""
    for i in range(layout.count()):
        row = layout.itemAt(i).layout()
        if row is None:
            continue
        found = [row.itemAt(j).widget() for j in range(row.count())]
        if widget in found:
            return [w for w in found if w is not None]
    return [widget]


def present_compare(panel, changes: PresentingChanges) -> None:
    """`ComparePanel._present`: hide the set-up rows (undone by `changes`)."""
    for name in SETUP_WIDGETS:
        w = panel.findChild(QWidget, name)
        if w is not None:
            changes.hide(*(x for x in row_widgets(panel.layout(), w) if not x.isHidden()))
