"""`DockManager`: the one place where panels become docks of the main window.

A panel is registered with `add_panel(panel)`: it gets a `QDockWidget` named ``dock_<PANEL_ID>``
(stable names make saved layouts restorable), a show/hide entry in View > Panels, and can be
brought forward with `select(panel_id)`. Later panels (merge timeline, token view, heatmaps) only
need an ``add_panel`` call; bump `tokviz.engine.settings.LAYOUT_VERSION` when the set changes.

A panel the first screen does not need (the heatmaps, a tab behind the corpus) can be registered
with `add_later(panel_id, title, build)`: its dock (and its place in the layout) exists at once,
and `build()` makes the panel the first time anyone asks for it (`panel(panel_id)`, the dock shown)
or when `build_pending()` runs, which the window does after its first paint. The window appears
before those panels' modules are even imported.

The window itself is handed to no controller: what they may do with it as a frame are the
protocols `DockFrame` (place docks: `DockManager`, the workspace layouts) and `LayoutFrame` (also
keep and restore the dock layout and geometry: workspaces, sessions). A `QMainWindow` is both;
its ``window()`` (the top-level widget: the window itself) owns the docks, menus and actions made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QByteArray, QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction, QScreen
from PySide6.QtWidgets import QDockWidget, QMenu, QMenuBar, QScrollArea, QStatusBar, QWidget

from tokviz.panels.base import Panel


class DockFrame(Protocol):
    """Where the panels' docks are placed, split, tabbed and sized."""

    def window(self) -> QWidget: ...

    def addAction(self, action: QAction) -> None: ...

    def addDockWidget(self, area: Qt.DockWidgetArea, dock: QDockWidget,
                      orientation: Qt.Orientation = ...) -> None: ...

    def removeDockWidget(self, dock: QDockWidget) -> None: ...

    def splitDockWidget(self, after: QDockWidget, dock: QDockWidget, orientation: Qt.Orientation) -> None: ...

    def tabifyDockWidget(self, first: QDockWidget, second: QDockWidget) -> None: ...

    def tabifiedDockWidgets(self, dock: QDockWidget) -> list[QDockWidget]: ...

    def dockWidgetArea(self, dock: QDockWidget) -> Qt.DockWidgetArea: ...

    def resizeDocks(self, docks: list[QDockWidget], sizes: list[int], orientation: Qt.Orientation) -> None: ...


class LayoutFrame(DockFrame, Protocol):
    """A frame whose dock layout and geometry are kept and put back (workspaces, sessions)."""

    def saveState(self, version: int = ...) -> QByteArray: ...

    def restoreState(self, state: QByteArray, version: int = ...) -> bool: ...

    def saveGeometry(self) -> QByteArray: ...

    def restoreGeometry(self, geometry: QByteArray) -> bool: ...

    def size(self) -> QSize: ...

    def width(self) -> int: ...

    def height(self) -> int: ...

    def resize(self, width: int, height: int) -> None: ...

    def isMaximized(self) -> bool: ...

    def isFullScreen(self) -> bool: ...

    def screen(self) -> QScreen: ...

    def menuBar(self) -> QMenuBar: ...

    def statusBar(self) -> QStatusBar: ...

    def findChildren(self, kind: type) -> list: ...

    def installEventFilter(self, watcher: QObject) -> None: ...

    def removeEventFilter(self, watcher: QObject) -> None: ...


def dock_name(panel_id: str) -> str:
    return f"dock_{panel_id}"


class DockManager(QObject):
    """Registry of the window's panels and their docks (placed in `frame`, and belonging to its
    window, as the View > Panels menu does)."""

    panel_added = Signal(str)

    def __init__(self, frame: DockFrame) -> None:
        super().__init__(frame.window())
        self.frame = frame
        self.menu = QMenu("&Panels", frame.window())
        self.menu.setObjectName("panels_menu")
        self._panels: dict[str, Panel] = {}
        self._docks: dict[str, QDockWidget] = {}
        self._pending: dict[str, Callable[[], list[Panel]]] = {}  # panel id -> builds it (and its siblings)
        self._scrolled: set[str] = set()  # panels shown in a scroll area
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
        dock = self._new_dock(pid, panel.TITLE, area if area is not None else panel.DEFAULT_AREA, tabify_with,
                              shortcut)
        dock.setWidget(panel)
        self._panels[pid] = panel
        self.panel_added.emit(pid)
        return dock

    def add_later(self, panel_id: str, title: str, build: Callable[[], list[Panel]],
                  area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea, *,
                  tabify_with: str | None = None, shortcut: str | None = None,
                  scroll: bool = False) -> QDockWidget:
        """A dock for a panel made by `build()` when first needed; `build` returns the panels it
        made (it may make several docks' panels at once, e.g. two that talk to each other).
        `scroll`: the panel sits in a scroll area, so a tall panel never makes the window taller
        than the screen (it scrolls when its dock is shorter than it needs)."""
        dock = self._new_dock(panel_id, title, area, tabify_with, shortcut)
        if scroll:
            self._scrolled.add(panel_id)
        dock.setWidget(QWidget(objectName=f"{panel_id}_placeholder"))
        self._pending[panel_id] = build
        dock.visibilityChanged.connect(lambda shown, pid=panel_id: shown and self._build(pid))
        return dock

    def _build(self, panel_id: str) -> None:
        build = self._pending.pop(panel_id, None)
        if build is None:
            return
        for other in [p for p, b in self._pending.items() if b is build]:
            del self._pending[other]
        for panel in build():
            pid = panel.PANEL_ID
            placeholder = self._docks[pid].widget()
            if pid in self._scrolled:
                holder = QScrollArea(objectName=f"{pid}_scroll", widgetResizable=True)
                holder.setFrameShape(QScrollArea.Shape.NoFrame)
                holder.setWidget(panel)
                self._docks[pid].setWidget(holder)
            else:
                self._docks[pid].setWidget(panel)
            if placeholder is not None:
                placeholder.deleteLater()
            self._panels[pid] = panel
            self.panel_added.emit(pid)

    def build_pending(self) -> None:
        """Make every panel registered with `add_later` that nobody has asked for yet."""
        for pid in list(self._pending):
            self._build(pid)

    def _new_dock(self, pid: str, title: str, area: Qt.DockWidgetArea, tabify_with: str | None,
                  shortcut: str | None) -> QDockWidget:
        if pid in self._docks:
            raise ValueError(f"a panel with id {pid!r} is already docked")
        dock = QDockWidget(title, self.frame.window())
        dock.setObjectName(dock_name(pid))
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.frame.addDockWidget(area, dock)
        if tabify_with is not None:
            self.frame.tabifyDockWidget(self._docks[tabify_with], dock)
        action = dock.toggleViewAction()
        action.setText(title)
        action.setStatusTip(f"Show or hide the {title} panel")
        if shortcut:  # the key brings the panel forward; showing and hiding stay in the menu
            go = QAction(f"Go to {title}", self.frame.window(), shortcut=shortcut,
                         objectName=f"goto_{pid}", triggered=lambda *_: self.select(pid))
            go.setStatusTip(f"Show the {title} panel, bring it to the front and focus it")
            self.frame.addAction(go)
            self._goto[pid] = go
            self._goto_menu().addAction(go)
        self.menu.addAction(action)
        self._docks[pid] = dock
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
        self._build(panel_id)
        try:
            return self._panels[panel_id]
        except KeyError:
            raise KeyError(f"no panel {panel_id!r}; panels: {', '.join(self._panels)}") from None

    def dock(self, panel_id: str) -> QDockWidget:
        if panel_id not in self._docks:
            self.panel(panel_id)  # the error names the panels there are
        return self._docks[panel_id]

    def panel_ids(self) -> list[str]:
        """Every docked panel, in docking order (including those not built yet)."""
        return list(self._docks)

    def panels(self) -> list[Panel]:
        self.build_pending()
        return [self._panels[pid] for pid in self._docks]

    def docks(self) -> list[QDockWidget]:
        return list(self._docks.values())

    def select(self, panel_id: str) -> Panel:
        """Show the panel's dock, bring its tab forward and focus it."""
        panel = self.panel(panel_id)
        dock = self._docks[panel_id]
        dock.show()
        dock.raise_()
        panel.setFocus(Qt.FocusReason.OtherFocusReason)
        return panel

    def front_of(self, panel_id: str) -> str | None:
        """The panel in front of `panel_id`'s tab group (itself when it is in front; None when
        none of the group is on screen)."""
        dock = self._docks[panel_id]
        for d in (dock, *self.frame.tabifiedDockWidgets(dock)):
            if d.isVisible() and not d.visibleRegion().isEmpty():
                return next((pid for pid, known in self._docks.items() if known is d), None)
        return None

    def shutdown(self) -> None:
        for panel in self._panels.values():
            panel.shutdown()


def raised_panel_ids(docks) -> list[str]:
    """Panels whose dock (in `docks`, a `DockManager`) is shown and in front of its tab group."""
    return [pid for pid in docks.panel_ids()
            if docks.dock(pid).isVisible() and not docks.dock(pid).visibleRegion().isEmpty()]


def layout_summary(window) -> dict:
    """What the dock layout looks like on screen, per panel: shown, floating, area, its tab group,
    and the geometry of the docks in front (``saveState`` bytes also hold stale sizes of hidden
    tabs, so they are not comparable between windows)."""
    out = {}
    for pid in window.docks.panel_ids():
        d = window.docks.dock(pid)
        front = d.isVisible() and not d.visibleRegion().isEmpty()
        tabs = sorted(t.objectName() for t in window.tabifiedDockWidgets(d))
        out[pid] = (d.isVisible(), d.isFloating(), window.dockWidgetArea(d).value, tabs,
                    d.geometry().getRect() if front else None)
    return out
