"""Workspaces (View > Workspace): the layout table, switching with the keys shown in the menu,
each workspace's arrangement kept in the settings, Reset Workspace Layout, and at 1280x800 every
workspace fits with tables showing at least five rows and no clipped label."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMenu, QTableView

from tests.qt_fixtures import drain_events
from tokviz.app.workspaces.layouts import WORKSPACES, check_covers, pixel_sizes, workspace
from tokviz.core import TrainSettings

KEYS = [w.key for w in WORKSPACES]


def test_pixel_sizes_split_the_total_by_ratio():
    assert pixel_sizes([0.5, 0.5], 701) == [350, 351]
    assert pixel_sizes([1, 3], 800) == [200, 600]
    assert pixel_sizes([], 10) == []


def test_check_covers_names_what_is_wrong():
    learn = workspace("learn")
    with pytest.raises(ValueError, match=r"missing \['extra'\]"):
        check_covers(learn, [*_ids(learn), "extra"])
    with pytest.raises(ValueError, match=r"unknown \['corpus'\]"):
        check_covers(learn, [p for p in _ids(learn) if p != "corpus"])
    with pytest.raises(KeyError, match="workspaces: learn, inspect"):
        workspace("nope")


def test_a_clipped_label_is_found(qtbot):
    from PySide6.QtWidgets import QDockWidget
    dock = QDockWidget()
    qtbot.addWidget(dock)
    label = QLabel("a label far too long for the little room it has", dock)
    label.setObjectName("squeezed")
    label.setMinimumWidth(1)  # (a label's own minimum is its text: only an explicit one squeezes it)
    dock.setWidget(label)
    dock.resize(60, 40)
    dock.show()
    qtbot.waitExposed(dock)
    assert _clipped_labels(dock) and _clipped_labels(dock)[0].startswith("squeezed")


def _ids(layout):
    return [p for c in layout.columns for s in c.slots for p in s.panel_ids]


def test_every_workspace_places_every_panel_once(window):
    for layout in WORKSPACES:
        check_covers(layout, window.docks.panel_ids())  # raises if not
    assert {"learn", "inspect", "compare", "present", "chat"} <= set(KEYS)


def _front(window, pid) -> bool:
    d = window.docks.dock(pid)
    return d.isVisible() and not d.visibleRegion().isEmpty()


def test_menu_lists_workspaces_with_their_keys(window):
    view = window.menus["view"]
    menu = next(a.menu() for a in view.actions() if a.menu() is not None and a.menu().objectName() == "workspace_menu")
    assert isinstance(menu, QMenu)
    shown = {a.text(): a.shortcut().toString() for a in menu.actions() if not a.isSeparator()}
    assert shown["&Learn"] == "Ctrl+1" and shown["&Inspect a Tokenizer"] == "Ctrl+2"
    assert shown["&Compare"] == "Ctrl+3" and shown["&Present"] == "Ctrl+5" and shown["C&hat"] == "Ctrl+4"
    assert "&Reset Workspace Layout" in shown


@pytest.mark.parametrize("key", KEYS)
def test_choosing_a_workspace_puts_its_main_views_in_front(window, key):
    window.workspaces.actions[key].trigger()
    drain_events()
    layout = workspace(key)
    fronts = [s.front for c in layout.columns_for(window.width()) for s in c.slots]
    assert all(_front(window, p) for p in fronts), [p for p in fronts if not _front(window, p)]
    assert window.workspaces.current == key and window.settings_store.workspace("learn") == key
    assert window.workspaces.actions[key].isChecked()


def test_each_workspace_keeps_its_own_arrangement(make_window, settings_store):
    first = make_window()
    first.workspaces.choose("inspect")
    drain_events()
    first.docks.dock("vocabulary").hide()  # the user's change in Inspect
    first.workspaces.choose("compare")
    drain_events()
    assert first.docks.dock("vocabulary").isVisible() or not first.docks.dock("vocabulary").isHidden()
    first.workspaces.choose("inspect")
    drain_events()
    assert first.docks.dock("vocabulary").isHidden()  # Inspect as the user left it
    first.close()
    second = make_window()  # the next session starts in Inspect, as it was
    assert second.workspaces.current == "inspect"
    assert second.docks.dock("vocabulary").isHidden()
    second.commands.reset_layout.trigger()  # Reset Workspace Layout: Inspect's own layout again
    drain_events()
    assert _front(second, "vocabulary") and _front(second, "glitches") and _front(second, "token_view")
    assert settings_store.workspace_state("inspect") is None


def test_workspace_keys_work_with_the_menu_bar_hidden(window, qtbot):
    window.menuBar().hide()
    window.activateWindow()
    window.setFocus()
    qtbot.waitUntil(window.isActiveWindow)
    from PySide6.QtCore import Qt
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    drain_events()
    assert window.workspaces.current == "compare" and _front(window, "compare")


def _clipped_labels(dock) -> list[str]:
    """Single-line labels narrower than their text (a word-wrapped label wraps instead)."""
    out = []
    for label in dock.findChildren(QLabel):
        if label.isVisible() and not label.wordWrap() and label.text() and label.pixmap().isNull():
            if label.sizeHint().width() > label.width() + 1 and not label.visibleRegion().isEmpty():
                out.append(f"{label.objectName() or label.text()[:30]}: {label.sizeHint().width()} > {label.width()}")
    return out


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_workspaces_fit_show_five_rows_and_clip_no_label(window, size):
    window.resize(*size)
    assert window.script.start_training(TrainSettings(vocab_size=400))
    assert window.script.wait_for_training(60_000) == "finished"
    problems = []
    for key in KEYS:
        window.workspaces.choose(key)
        window.workspaces.reset()  # laid out for this size
        drain_events()
        assert window.size().toTuple() == size, f"{key}: the panels' minimum sizes do not fit"
        for pid in window.docks.panel_ids():
            dock = window.docks.dock(pid)
            if not _front(window, pid):
                continue
            for table in dock.findChildren(QTableView):
                if table.isVisible() and not table.visibleRegion().isEmpty():
                    rows = table.viewport().height() // table.verticalHeader().defaultSectionSize()
                    if rows < 5:
                        problems.append(f"{key}/{pid}/{table.objectName()}: {rows} rows")
            problems += [f"{key}/{pid}/{c}" for c in _clipped_labels(dock)]
        problems += [f"{key}/{t}" for t in _elided_tabs(window)]
    assert not problems, problems


def _elided_tabs(window) -> list[str]:
    """Dock tab titles drawn shorter than their text ("Compare ..." for "Compare metrics")."""
    from PySide6.QtWidgets import QTabBar

    out = []
    for bar in window.findChildren(QTabBar):
        if bar.parent() is window and bar.isVisible():
            for i in range(bar.count()):
                text = bar.tabText(i)
                if bar.elideMode() != Qt.TextElideMode.ElideNone and \
                        bar.tabRect(i).width() < bar.fontMetrics().horizontalAdvance(text) + 8:
                    out.append(f"tab {text!r}: {bar.tabRect(i).width()} px")
    return out


def test_no_tab_bar_of_an_old_layout_stays_on_screen(window):
    from PySide6.QtWidgets import QTabBar

    for key in ("present", "learn", "inspect", "learn"):
        window.workspaces.choose(key)
        window.workspaces.reset()
        drain_events()
        groups = set()
        for pid in window.docks.panel_ids():
            dock = window.docks.dock(pid)
            group = {dock.windowTitle()} | {d.windowTitle() for d in window.tabifiedDockWidgets(dock)}
            if len(group) > 1:
                groups.add(frozenset(group))
        bars = [frozenset(b.tabText(i) for i in range(b.count())) for b in window.findChildren(QTabBar)
                if b.parent() is window and b.isVisible()]
        assert sorted(map(sorted, bars)) == sorted(map(sorted, groups)), key


def test_choosing_a_workspace_leaves_presenter_mode(window):
    window.script.enter_presenter(["timeline"])
    assert window.script.presenter_active
    window.workspaces.actions["inspect"].trigger()
    drain_events()
    assert not window.script.presenter_active and _front(window, "glitches") and window.menuBar().isVisible()


def test_a_window_made_narrow_gets_the_narrow_layout(window, qtbot):
    window.resize(1920, 1080)
    window.workspaces.reset()  # Learn's wide layout: timeline over token view
    drain_events()
    assert window.dockWidgetArea(window.docks.dock("token_view")) == window.dockWidgetArea(
        window.docks.dock("timeline"))
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.size().toTuple() == (1280, 800))
    drain_events()
    assert window.dockWidgetArea(window.docks.dock("token_view")) == window.dockWidgetArea(
        window.docks.dock("corpus"))  # the narrow one: the timeline has its column to itself


def test_the_last_sessions_arrangement_is_kept_whatever_the_width(make_window):
    first = make_window()
    first.resize(1920, 1080)
    first.workspaces.reset()
    drain_events()
    first.docks.dock("glitches").hide()  # the user's own change
    first.close()
    second = make_window()  # the saved geometry, fitted onto the small offscreen screen
    drain_events()
    assert second.width() < 1600 and second.docks.dock("glitches").isHidden()
    second.resize(1920, 1080)  # wide again: still the user's arrangement, not the wide default
    drain_events()
    assert second.docks.dock("glitches").isHidden()
