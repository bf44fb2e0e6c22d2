"""Presenter mode: full screen, chosen panels, big fonts, high contrast, clicker keys,
captions, and an exact return to the previous layout."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from tests.qt_fixtures import drain_events
from tokviz.app.classroom.presenter import step_caption
from tokviz.app.docks import layout_summary
from tokviz.panels.base import highlight_width


def _shown_docks(window) -> list[str]:
    return [pid for pid in window.docks.panel_ids() if window.docks.dock(pid).isVisible()]


def test_enter_and_leave_restore_everything(window, qtbot):
    window.script.select_panel("token_view")
    drain_events()
    layout, scale = layout_summary(window), window.appearance.font_scale
    window_color = QApplication.palette().color(QPalette.ColorRole.Window).name()
    font_size = QApplication.font().pointSizeF()

    window.script.enter_presenter()
    qtbot.waitUntil(lambda: window.isFullScreen(), timeout=10_000)
    assert window.script.presenter_active and window.commands.presenter.isChecked()
    assert _shown_docks(window) == ["token_view"]  # the panel that was in front
    assert not window.menuBar().isVisible() and not window.toolbar.isVisible()
    assert window.appearance.font_scale == 2.0  # the default presenter scale
    assert QApplication.font().pointSizeF() > 1.9 * font_size
    assert QApplication.palette().color(QPalette.ColorRole.Window).name() in ("#ffffff", "#000000")
    assert highlight_width() == 3.0 and window.token_view_panel.palette_key == "high-contrast"

    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    drain_events()
    assert not window.script.presenter_active and not window.commands.presenter.isChecked()
    assert layout_summary(window) == layout
    assert window.menuBar().isVisible() and window.toolbar.isVisible()
    assert window.appearance.font_scale == scale and QApplication.font().pointSizeF() == font_size
    assert QApplication.palette().color(QPalette.ColorRole.Window).name() == window_color
    assert highlight_width() == 1.0 and window.token_view_panel.palette_key != "high-contrast"
    assert window.findChild(QApplication.instance().__class__, "presenter_caption_bar") is None


def test_two_panels_and_scale(window, qtbot, settings_store):
    window.presenter.screen_size = QSize(4000, 3000)  # room for any scale
    window.script.enter_presenter(["timeline", "token_view"], scale=9)
    assert sorted(_shown_docks(window)) == ["timeline", "token_view"]
    assert window.appearance.font_scale == 3.0  # clamped to 1.5 .. 3
    window.script.leave_presenter()
    settings_store.set_presenter_scale(1.5)
    window.script.enter_presenter()
    assert window.appearance.font_scale == 1.5
    window.script.leave_presenter()


def test_f5_toggles_and_esc_leaves(window, qtbot):
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_F5)
    assert window.script.presenter_active
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert not window.script.presenter_active
    assert window.commands.cancel.shortcuts()[0].toString() == "Esc"  # Esc cancels training again
    qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.keyClick(window, Qt.Key.Key_F5)
    assert not window.script.presenter_active


def test_keys_step_the_timeline_anywhere(trained_window, qtbot):
    window = trained_window
    window.step_model.set_step(3)
    window.script.enter_presenter(["timeline", "token_view"])
    target = window.token_view_panel.view  # focus outside the timeline panel
    target.setFocus()
    qtbot.keyClick(target, Qt.Key.Key_Right)
    assert window.step_model.step == 4
    qtbot.keyClick(target, Qt.Key.Key_PageDown)
    assert window.step_model.step == 5
    qtbot.keyClick(target, Qt.Key.Key_Left)
    assert window.step_model.step == 4
    qtbot.keyClick(target, Qt.Key.Key_Space)
    assert window.timeline_panel.playback.is_playing
    qtbot.keyClick(target, Qt.Key.Key_Space)
    assert not window.timeline_panel.playback.is_playing
    window.token_view_panel.editor.setFocus()  # typing is left alone
    qtbot.keyClick(window.token_view_panel.editor, Qt.Key.Key_Right)
    assert window.step_model.step == 4
    window.script.leave_presenter()
    qtbot.keyClick(target, Qt.Key.Key_Right)  # outside presenter mode the clicker keys are off
    assert window.step_model.step == 4


def test_captions_show_the_step_the_merge_and_lessons(trained_window, qtbot, monkeypatch):
    window = trained_window
    tl = window.script.timeline
    window.step_model.set_step(2)
    window.script.enter_presenter(["timeline"])
    st = tl.steps[1]
    caption = window.presenter.caption
    assert caption.startswith(f"Step 2 of {tl.n_steps}") and "→" in caption and f"({st.count:,}×)" in caption
    window.step_model.set_step(0)
    assert window.presenter.caption.startswith(f"Step 0 of {tl.n_steps}")
    window.script.set_caption("Watch the pair “l” + “o”")
    assert window.presenter.caption == "Watch the pair “l” + “o”"
    window.step_model.set_step(1)
    assert window.presenter.caption == "Watch the pair “l” + “o”"
    window.script.set_caption("")
    assert window.presenter.caption.startswith("Step 1 of")
    # a running lesson: its caption, and the keys step the lesson
    lessons = RunningLesson(["timeline"], "Lesson 3: BPE step by step")
    monkeypatch.setattr(window.presenter, "lessons", lessons)
    try:
        window.script.set_caption("")
        assert window.presenter.caption == "Lesson 3: BPE step by step"
        w = window.timeline_panel.table
        w.setFocus()
        qtbot.keyClick(w, Qt.Key.Key_Right)
        qtbot.keyClick(w, Qt.Key.Key_Left)
        assert lessons.calls == ["next", "prev"] and window.step_model.step == 1
    finally:
        window.script.leave_presenter()


class RunningLesson:
    """Stands for a lesson runner with a lesson on screen (what the presenter reads of it)."""

    lesson = "a lesson"

    def __init__(self, panel_ids, caption="") -> None:
        self.panel_ids, self.caption, self.calls = panel_ids, caption, []

    def next(self) -> None:
        self.calls.append("next")

    def prev(self) -> None:
        self.calls.append("prev")


def test_lesson_panels_are_the_default(window, monkeypatch):
    monkeypatch.setattr(window.presenter, "lessons", RunningLesson(["corpus", "timeline"]))
    try:
        window.script.enter_presenter()
        assert sorted(_shown_docks(window)) == ["corpus", "timeline"]
    finally:
        window.script.leave_presenter()


def test_step_caption_without_a_timeline():
    assert "train one" in step_caption(None, 0)


def test_closing_in_presenter_mode_saves_the_normal_layout(make_window, qtbot, settings_store):
    w = make_window()
    w.script.enter_presenter(["timeline"])
    w.close()
    assert not w.script.presenter_active
    geometry, state = settings_store.window_layout()
    assert state is not None
    w2 = make_window()
    assert w2.docks.dock("training").isVisible() and w2.menuBar().isVisible()


def test_sessions_saved_while_presenting_keep_the_normal_layout(window, qtbot, tmp_path):
    drain_events()
    normal = window.sessions.state_dict()["view"]
    window.script.enter_presenter(["timeline"])
    presenting = window.sessions.state_dict()["view"]
    assert presenting["layout"] == normal["layout"] and presenting["size"] == normal["size"]
    assert window.script.save_session(tmp_path / "p.tokviz")
    assert window.script.open_session(tmp_path / "p.tokviz")  # opening leaves presenter mode first
    assert not window.script.presenter_active and window.menuBar().isVisible()
