"""`DockManager`: the one place where panels become docks of the main window.

A panel is registered with `add_panel(panel)`: it gets a `QDockWidget` named ``dock_<PANEL_ID>``
(stable names make saved layouts restorable), a show/hide entry in View > Panels, and can be
brought forward with `select(panel_id)`. Later panels (merge timeline, token view, heatmaps) only
need an ``add_panel`` call; bump `tokviz.engine.settings.LAYOUT_VERSION` when the set changes.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu

from tokviz.panels.base import Panel


def dock_name(panel_id: str) -> str:
    return f"dock_{panel_id}"


class DockManager(QObject):
    """Registry of the window's panels and their docks."""

    panel_added = Signal(str)

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.menu = QMenu("&Panels", window)
        self.menu.setObjectName("panels_menu")
        self._panels: dict[str, Panel] = {}
        self._docks: dict[str, QDockWidget] = {}
        self._goto: dict[str, QAction] = {}  # panel id -> "Go to" action (Alt+N): never hides

    def add_panel(
        self,
        panel: Panel,
        area: Qt.DockWidgetArea | None = None,
        *,
        tabify_with: str | None = None,
        shortcut: str | None = None,
    ) -> QDockWidget:
        """Dock `panel` (in its default area, or tabbed with another panel)."""
        pid = panel.PANEL_ID
        if pid in self._panels:
            raise ValueError(f"a panel with id {pid!r} is already docked")
        dock = QDockWidget(panel.TITLE, self.window)
        dock.setObjectName(dock_name(pid))
        dock.setWidget(panel)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.window.addDockWidget(area if area is not None else panel.DEFAULT_AREA, dock)
        if tabify_with is not None:
            self.window.tabifyDockWidget(self._docks[tabify_with], dock)
        action = dock.toggleViewAction()
        action.setText(panel.TITLE)
        action.setStatusTip(f"Show or hide the {panel.TITLE} panel")
        if shortcut:  # the key brings the panel forward; showing and hiding stay in the menu
            go = QAction(f"Go to {panel.TITLE}", self.window, shortcut=shortcut,
                         objectName=f"goto_{pid}", triggered=lambda *_: self.select(pid))
            go.setStatusTip(f"Show the {panel.TITLE} panel, bring it to the front and focus it")
            self.window.addAction(go)
            self._goto[pid] = go
            self._goto_menu().addAction(go)
        self.menu.addAction(action)
        self._panels[pid] = panel
        self._docks[pid] = dock
        self.panel_added.emit(pid)
        return dock

    def _goto_menu(self) -> QMenu:
        menu = self.menu.findChild(QMenu, "goto_menu")
        if menu is None:
            menu = self.menu.addMenu("&Go to")
            menu.setObjectName("goto_menu")
            self.menu.addSeparator()
        return menu

    def goto_action(self, panel_id: str) -> QAction:
        """The action that brings a panel forward (its Alt+N key)."""
        return self._goto[panel_id]

    def goto_actions(self) -> list[QAction]:
        return list(self._goto.values())

    def panel(self, panel_id: str) -> Panel:
        try:
            return self._panels[panel_id]
        except KeyError:
            raise KeyError(f"no panel {panel_id!r}; panels: {', '.join(self._panels)}") from None

    def dock(self, panel_id: str) -> QDockWidget:
        self.panel(panel_id)
        return self._docks[panel_id]

    def panel_ids(self) -> list[str]:
        return list(self._panels)

    def panels(self) -> list[Panel]:
        return list(self._panels.values())

    def docks(self) -> list[QDockWidget]:
        return list(self._docks.values())

    def select(self, panel_id: str) -> Panel:
        """Show the panel's dock, bring its tab forward and focus it."""
        dock = self.dock(panel_id)
        dock.show()
        dock.raise_()
        panel = self._panels[panel_id]
        panel.setFocus(Qt.FocusReason.OtherFocusReason)
        return panel

    def apply_layout(self, columns: list[tuple[str, Qt.DockWidgetArea, tuple[str, ...]]],
                     sizes: dict[str, int]) -> None:
        """Put every listed dock back: one column per (front panel, area, tabs behind it); columns
        in the same area are stacked top to bottom; `sizes` are heights (or widths) in pixels."""
        w = self.window
        previous: dict[Qt.DockWidgetArea, object] = {}
        for front_id, area, tabs in columns:
            front = self.dock(front_id)
            for dock in (front, *(self.dock(t) for t in tabs)):
                dock.setFloating(False)
                dock.show()
            if area in previous:
                w.splitDockWidget(previous[area], front, Qt.Orientation.Vertical)
            else:
                w.addDockWidget(area, front)
            previous[area] = front
        fronts = [self.dock(f) for f, _, _ in columns]
        by_area: dict[Qt.DockWidgetArea, list] = {}
        for (f, area, _), dock in zip(columns, fronts):
            by_area.setdefault(area, []).append(dock)
        tops = [docks[0] for docks in by_area.values()]
        if len(tops) > 1:
            w.resizeDocks(tops, [w.width() // len(tops)] * len(tops), Qt.Orientation.Horizontal)
        for docks in by_area.values():
            if len(docks) > 1:
                w.resizeDocks(docks, [sizes.get(d.widget().PANEL_ID, 400) for d in docks], Qt.Orientation.Vertical)
        for front, (_, _, tabs) in zip(fronts, columns):
            for t in tabs:
                w.tabifyDockWidget(front, self.dock(t))
            front.raise_()

    def shutdown(self) -> None:
        for panel in self._panels.values():
            panel.shutdown()
