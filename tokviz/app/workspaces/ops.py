"""`WorkspaceController`: View > Workspace (Learn, Inspect a Tokenizer, Compare, Chat, Present).

Choosing a workspace keeps the dock arrangement of the one on screen (in the settings, per
workspace) and puts back the chosen one's: as the user left it, or else its layout from
`tokviz.app.workspaces.layouts` (the task's main view in front and big, every other panel a tab). "Reset
Workspace Layout" forgets the saved arrangement of the workspace on screen and lays it out afresh.

It works on the main window as a frame (`tokviz.app.docks.LayoutFrame`: `saveState`/`restoreState`,
dock splits) and gets the docks (`DockManager`) and the settings explicitly.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QApplication, QDockWidget, QMenu, QTabBar, QToolBar

from tokviz.engine.settings import LAYOUT_VERSION, AppSettings

from ..docks import DockManager, LayoutFrame
from .layouts import (
    DEFAULT_WORKSPACE,
    WORKSPACES,
    WorkspaceLayout,
    check_covers,
    front_ids,
    panel_ids,
    pixel_sizes,
    workspace,
)


def dock_area_size(frame: LayoutFrame) -> tuple[int, int]:
    """Width and height the docks share: the window less its menu bar, toolbars and status bar."""
    h = frame.height()
    if frame.menuBar().isVisible():
        h -= frame.menuBar().sizeHint().height()
    for bar in frame.findChildren(QToolBar):
        if bar.isVisible() and not bar.isFloating() and bar.parent() is frame:
            h -= bar.sizeHint().height()
    if frame.statusBar().isVisible():
        h -= frame.statusBar().sizeHint().height()
    return max(1, frame.width()), max(1, h)


def arrange(frame: LayoutFrame, docks: DockManager, layout: WorkspaceLayout) -> None:
    """Lay the docks of `docks` (a `DockManager`) out as `layout` says, sized to the window."""
    check_covers(layout, docks.panel_ids())
    dock = docks.dock
    columns = layout.columns_for(frame.width())
    for d in docks.docks():
        d.setFloating(False)
        frame.removeDockWidget(d)  # out of every old split and tab group (this hides it)
    # the first column in the left dock area, the others in the right one (an area stacks its docks
    # top to bottom, and resizeDocks sizes those stacks; nested splits inside one area it does not)
    for i, column in enumerate(columns):
        area = Qt.DockWidgetArea.LeftDockWidgetArea if i == 0 else Qt.DockWidgetArea.RightDockWidgetArea
        top = dock(column.slots[0].front)
        if i > 1:
            frame.splitDockWidget(dock(columns[i - 1].slots[0].front), top, Qt.Orientation.Horizontal)
        else:
            frame.addDockWidget(area, top, Qt.Orientation.Vertical)
        above = top
        for slot in column.slots[1:]:
            frame.splitDockWidget(above, dock(slot.front), Qt.Orientation.Vertical)
            above = dock(slot.front)
    for column in columns:
        for slot in column.slots:
            for tab in slot.tabs:
                frame.tabifyDockWidget(dock(slot.front), dock(tab))
    fronts = front_ids(columns)
    for pid in fronts:  # the fronts first: a tab behind (a panel made on first sight) is not shown
        dock(pid).show()
        dock(pid).raise_()
    for pid in panel_ids(columns):
        dock(pid).show()
    for pid in fronts:
        dock(pid).raise_()
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)  # the new splits have their sizes
    fit_sizes(frame, docks, layout)
    hide_stale_tab_bars(frame)


def hide_stale_tab_bars(frame: LayoutFrame) -> None:
    """Hide the tab bars of tab groups that no longer exist (Qt leaves those of a rearranged layout
    on screen, under the new ones): a tab bar in use lists only docks that are tabbed together now."""
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    groups = {}
    for dock in frame.findChildren(QDockWidget):
        if dock.parent() is frame and not dock.isFloating() and not dock.isHidden():
            groups[dock.windowTitle()] = {d.windowTitle() for d in frame.tabifiedDockWidgets(dock)} | {
                dock.windowTitle()}
    for bar in frame.findChildren(QTabBar):
        if bar.parent() is not frame or bar.isHidden():
            continue
        titles = {bar.tabText(i) for i in range(bar.count())}
        if not titles or any(groups.get(t) != titles for t in titles):
            bar.hide()
        else:
            whole_titles(bar)


def whole_titles(bar: QTabBar) -> None:
    """Dock tabs show whole titles, scrolled when the group is narrow ("C..." names no panel)."""
    bar.setElideMode(Qt.TextElideMode.ElideNone)
    bar.setUsesScrollButtons(True)


def fit_sizes(frame: LayoutFrame, docks: DockManager, layout: WorkspaceLayout) -> None:
    """Give the columns and the slots of `layout` their share of the window."""
    width, height = dock_area_size(frame)
    columns = layout.columns_for(frame.width())
    tops = [docks.dock(c.slots[0].front) for c in columns]
    frame.resizeDocks(tops, pixel_sizes([c.width for c in columns], width), Qt.Orientation.Horizontal)
    for column in columns:
        if len(column.slots) > 1:
            frame.resizeDocks([docks.dock(s.front) for s in column.slots],
                              pixel_sizes([s.height for s in column.slots], height), Qt.Orientation.Vertical)


class WorkspaceController(QObject):
    """The window's workspaces: `current` (a key), `choose(key)`, `reset()`, `save()`;
    `changed(key)` after a workspace was put on screen."""

    changed = Signal(str)

    def __init__(self, frame: LayoutFrame, docks: DockManager, settings: AppSettings,
                 parent: QObject | None = None, *, before_change: Callable[[], None] | None = None,
                 held: Callable[[], bool] = lambda: False) -> None:
        """`before_change()` runs before a workspace is changed or reset (leave presenter mode);
        while `held()` (presenter mode owns the docks), a resize never lays the workspace out again."""
        super().__init__(parent)
        self.frame, self.docks, self.settings = frame, docks, settings
        self._before = before_change or (lambda: None)
        self._held = held
        saved = settings.workspace(DEFAULT_WORKSPACE)
        self.current = saved if saved in {w.key for w in WORKSPACES} else DEFAULT_WORKSPACE
        self.group = QActionGroup(self)
        self.actions: dict[str, QAction] = {}
        for w in WORKSPACES:
            a = QAction(w.title, frame.window(), objectName=f"action_workspace_{w.key}", checkable=True)
            a.setShortcut(w.shortcut)
            a.setStatusTip(w.summary)
            a.setToolTip(w.summary)
            a.triggered.connect(lambda _checked=False, key=w.key: self.choose(key))
            frame.addAction(a)  # the key works with the menu bar hidden
            self.group.addAction(a)
            self.actions[w.key] = a
        self.actions[self.current].setChecked(True)
        self._arranged_for = None  # the columns last laid out by `arrange` (None: a restored state)
        self._lent_from: str | None = None  # the user's workspace while a lesson shows its own (`lend`)
        frame.installEventFilter(self)  # a window resized across WIDE_WINDOW_PX: the other variant

    def shutdown(self) -> None:
        """Stop watching the window (its teardown must not call back into Python)."""
        self.frame.removeEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if obj is self.frame and event.type() == QEvent.Type.ChildPolished \
                and isinstance(event.child(), QTabBar):  # a tab group Qt has just made
            whole_titles(event.child())
        if obj is self.frame and event.type() == QEvent.Type.Resize and self._arranged_for is not None \
                and not self.frame.isFullScreen() and not self._held():
            if self.layout.columns_for(self.frame.width()) is not self._arranged_for:
                QTimer.singleShot(0, self, self._follow_width)
        return False

    def _follow_width(self) -> None:
        """The layout variant for the window's width now (a wide layout holds a narrow window too tall)."""
        if self._arranged_for is not None and not self.frame.isFullScreen() and not self._held() \
                and self.layout.columns_for(self.frame.width()) is not self._arranged_for:
            self.arrange()

    @property
    def layout(self) -> WorkspaceLayout:
        return workspace(self.current)

    def menu(self, parent, reset: QAction) -> QMenu:
        """View > Workspace: one entry per workspace (with its key), then `reset` (Reset Workspace Layout)."""
        menu = QMenu("&Workspace", parent)
        menu.setObjectName("workspace_menu")
        menu.addActions(list(self.actions.values()))
        menu.addSeparator()
        menu.addAction(reset)
        return menu

    def lend(self, key: str | None) -> None:
        """Show workspace `key` while a lesson runs, laid out afresh (the same for every class), or
        give back the user's (None) as they left it. Not while presenter mode holds the docks (it
        shows the lesson's own panels). The user's arrangements are neither changed nor replaced by
        the lesson's; a workspace the user chooses meanwhile is theirs, and stays; the settings keep
        the user's workspace, so a window closed during the lesson opens in it."""
        if self._held():
            return
        users = self._lent_from or self.current
        want = users if key is None else key
        if self._lent_from is None:
            if want == users:
                return
            self.save()  # the user's arrangement, as they leave it
        elif want == self.current:
            return  # the next lesson shows the same one
        self._show(want, fresh=want != users)
        self._lent_from = None if want == users else users
        if self._lent_from is not None:
            self.settings.set_workspace(users)
        self.changed.emit(want)

    def choose(self, key: str) -> None:
        """Keep the arrangement on screen for the current workspace, then show workspace `key`."""
        workspace(key)  # KeyError names the workspaces there are
        self._lent_from = None  # the user's choice
        self._before()
        if key != self.current:
            self.save()
            self._show(key, fresh=False)
        self.actions[key].setChecked(True)
        self.changed.emit(key)

    def _show(self, key: str, *, fresh: bool) -> None:
        """Put workspace `key` on screen: its saved arrangement, or (`fresh`, or none saved) its layout."""
        self.current = key
        self.settings.set_workspace(key)
        self.actions[key].setChecked(True)
        state = None if fresh else self.settings.workspace_state(key)
        if state is None or not self.frame.restoreState(state, LAYOUT_VERSION):
            self.arrange()
        else:
            self._arranged_for = None  # the user's own arrangement: kept whatever the width
            hide_stale_tab_bars(self.frame)

    def reset(self) -> None:
        """The current workspace's own layout, as in a fresh install (a lesson's: only on screen,
        the user's own arrangement of it stays saved)."""
        self._before()
        if self._lent_from is None:
            self.settings.save_workspace_state(self.current, None)
        self.arrange()

    def arrange(self) -> None:
        """Lay out the current workspace (a window without a saved arrangement)."""
        arrange(self.frame, self.docks, self.layout)
        self._arranged_for = self.layout.columns_for(self.frame.width())

    def restore(self, state) -> bool:
        """Put back a saved dock state (the last session's): the user's own arrangement, kept
        whatever width the window gets."""
        if not self.frame.restoreState(state, LAYOUT_VERSION):
            return False
        self._arranged_for = None
        hide_stale_tab_bars(self.frame)
        return True

    def fit_sizes(self) -> None:
        """The current workspace's column and row shares for the window's size now (laid out
        afresh when the window's new width calls for its other variant)."""
        if self.layout.columns_for(self.frame.width()) is not self._arranged_for:
            self.arrange()
        else:
            fit_sizes(self.frame, self.docks, self.layout)

    def save(self) -> None:
        """Keep the arrangement on screen as the current workspace's (not a lesson's: `lend`)."""
        if self._lent_from is None:
            self.settings.save_workspace_state(self.current, self.frame.saveState(LAYOUT_VERSION))
