"""Presenter mode lays the panels out for the back of the room: at 2x on a 1280 x 720
projector the merge timeline keeps the transport, the step, the key merge columns and the corpus;
the token view drops its toolbar; nothing is clipped; two panels (or a lesson and its panel) fit
the screen, and the font scale goes down when they would not; leaving restores every part; the
dark high-contrast palette outlines check boxes and radio buttons."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QRadioButton,
    QStyle,
    QStyleOptionButton,
    QTabBar,
    QWidget,
)

from tests.qt_fixtures import drain_events
from tokviz.app.theme import OutlinedIndicatorStyle
from tokviz.engine.tables.merge_model import COLUMNS

PROJECTOR = QSize(1280, 720)
KEY_COLUMNS = ["Rank", "Left", "Right", "New token", "Count"]


def _present(window, qtbot, panels=None, scale=2.0, screen=PROJECTOR) -> None:
    window.presenter.screen_size = screen
    window.script.enter_presenter(panels, scale=scale)
    window.setWindowState(Qt.WindowState.WindowNoState)
    # asked again until it holds, as a window manager does: the first request may come while the
    # minimum size is still the one before the fonts were fitted to the screen
    qtbot.waitUntil(lambda: window.size() == screen or window.resize(screen), timeout=10_000)
    try:  # layouts settle over a few event-loop turns
        qtbot.waitUntil(lambda: _clipped(window) == [], timeout=10_000)
    except qtbot.TimeoutError:
        pass  # the test's own assert shows what is clipped


def _fits(window, screen=PROJECTOR) -> bool:
    need = window.minimumSizeHint()
    return need.width() <= screen.width() and need.height() <= screen.height()


def _clipped(window) -> list[str]:
    """Buttons, boxes and one-line labels of the shown panels narrower than they need."""
    out = []
    for pid in window.presenter.panel_ids:
        for w in window.docks.dock(pid).findChildren(QWidget):
            if not w.isVisible() or isinstance(w.parentWidget(), QTabBar):  # the tab bar's own arrows
                continue
            sized = isinstance(w, (QComboBox, QAbstractButton, QAbstractSpinBox)) or (
                isinstance(w, QLabel) and not w.wordWrap() and w.text())
            if sized and w.width() < w.sizeHint().width() - 1:
                out.append(f"{pid}: {type(w).__name__} {w.objectName()!r} {w.width()} < {w.sizeHint().width()}")
    return out


def _shown_columns(panel) -> list[str]:
    return [COLUMNS[c] for c in range(len(COLUMNS)) if not panel.table.isColumnHidden(c)]


def _timeline_state(panel) -> tuple:
    t = panel.transport
    parts = (t.speed_box, t.loop_box, t.follow_box, t.clicker_box, t.spin, panel.candidates_view, panel.tabs,
             panel.table, panel.corpus_view)
    return ([p.isHidden() for p in parts], _shown_columns(panel), panel.table.minimumWidth(),
            [panel.table.columnWidth(c) for c in range(len(COLUMNS) - 1)], t.play_button.iconSize(),
            panel.splitter.orientation())


def _token_view_state(tv) -> tuple:
    parts = (tv.mode_box, tv.whitespace_box, tv.palette_box, tv.export_button, tv.status, tv.batch_note, tv.editor,
             tv.view, tv.tabs)
    return [p.isHidden() for p in parts]


def test_timeline_shows_its_key_parts_big_and_restores_them(trained_window, qtbot):
    window = trained_window
    panel = window.timeline_panel
    window.step_model.set_step(3)
    before = _timeline_state(panel)
    _present(window, qtbot, ["timeline"])
    t = panel.transport
    assert window.presenter.scale == 2.0
    for part in (t.speed_box, t.loop_box, t.follow_box, t.clicker_box, panel.candidates_view, panel.tabs):
        assert not part.isVisible()
    for part in (t.play_button, t.slider, t.spin, panel.table, panel.corpus_view):
        assert part.isVisible()
    assert _shown_columns(panel) == KEY_COLUMNS
    assert panel.table.horizontalScrollBar().maximum() == 0  # every key column in full
    assert panel.splitter.orientation() == Qt.Orientation.Horizontal and panel.corpus_view.width() > 500
    assert t.play_button.iconSize().height() >= t.fontMetrics().height() - 1  # buttons read from afar
    assert _clipped(window) == []
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    drain_events()
    assert _timeline_state(panel) == before and not panel.presenting


def test_two_panels_fit_a_projector_without_clipping(trained_window, qtbot):
    window = trained_window
    tv = window.token_view_panel
    before = _token_view_state(tv)
    _present(window, qtbot, ["timeline", "token_view"])
    assert window.presenter.scale == 2.0 and _fits(window)
    assert window.size() == PROJECTOR
    qtbot.waitUntil(lambda: abs(window.docks.dock("timeline").width() - window.docks.dock("token_view").width()) < 20)
    for part in (tv.mode_box, tv.palette_box, tv.export_button, tv.status):
        assert not part.isVisible()
    for part in (tv.editor, tv.view, tv.tabs):
        assert part.isVisible() and part.height() > 40
    panel = window.timeline_panel
    assert _shown_columns(panel) == KEY_COLUMNS and panel.table.horizontalScrollBar().maximum() == 0
    assert panel.corpus_view.isVisible() and panel.corpus_view.height() > 100
    assert _clipped(window) == []
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    assert _token_view_state(tv) == before and tv.mode_box.isVisible() and tv.status.isVisible()


def test_the_scale_goes_down_until_the_panels_fit(trained_window, qtbot):
    window = trained_window
    scale = window.appearance.font_scale
    small = QSize(900, 600)
    _present(window, qtbot, ["timeline", "token_view"], scale=3.0, screen=small)
    assert 1.5 <= window.presenter.scale < 3.0
    assert window.appearance.font_scale == window.presenter.scale and _fits(window, small)
    window.script.leave_presenter()
    assert window.appearance.font_scale == scale
    window.presenter.screen_size = QSize(200, 200)  # never below the smallest presenter scale
    window.script.enter_presenter(["timeline", "token_view"], scale=2.0)
    assert window.presenter.scale == 1.5
    window.script.leave_presenter()


def test_a_lesson_and_its_panel_fit_a_projector(window, qtbot):
    assert window.script.start_lesson("bpe-steps")
    assert window.script.wait_for_lesson_step(60_000) == "shown"
    window.lessons.go(3)
    assert window.script.wait_for_lesson_step(60_000) == "shown"
    _present(window, qtbot)  # the lesson's panels
    assert sorted(window.presenter.panel_ids) == ["lesson", "timeline"]
    assert window.presenter.scale == 2.0 and _fits(window)
    panel = window.timeline_panel
    assert _shown_columns(panel) == KEY_COLUMNS and not panel.tabs.isVisible()
    assert window.lesson_panel.figure_stack.isVisible() and window.lesson_panel.next_button.isVisible()
    assert _clipped(window) == []
    window.script.leave_presenter()
    assert panel.tabs.isVisible() and _shown_columns(panel) == list(COLUMNS) and not panel.presenting
    window.script.stop_lesson()


def test_leaving_after_the_window_was_resized_restores_the_window(window, qtbot):
    from tokviz.app.docks import layout_summary

    drain_events()
    size, layout = window.size(), layout_summary(window)
    training_min = window.training_panel.minimumSizeHint()  # a hidden tab while presenting
    _present(window, qtbot, ["timeline"])
    window.script.leave_presenter()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=10_000)
    drain_events()
    assert window.training_panel.minimumSizeHint() == training_min  # not its size at 2x
    assert window.size() == size and layout_summary(window) == layout


def _border_lightness(widget: QWidget, element: QStyle.SubElement) -> int:
    """Lightest pixel on the outline of `widget`'s indicator (check box or radio button)."""
    opt = QStyleOptionButton()
    opt.initFrom(widget)
    r = widget.style().subElementRect(element, opt, widget)
    img = widget.grab().toImage()
    ratio = img.devicePixelRatio()
    points = [(x, y) for x in range(r.left(), r.right() + 1) for y in (r.top(), r.top() + 1, r.center().y(),
                                                                        r.bottom() - 1, r.bottom())]
    points += [(x, r.center().y()) for x in (r.left() + 1, r.right() - 1)]
    return max(QColor(img.pixel(int(x * ratio), int(y * ratio))).lightness() for x, y in points)


def test_dark_high_contrast_outlines_check_boxes_and_radio_buttons(window, qtbot):
    window.script.set_theme("dark")
    box, radio = QCheckBox("Loop"), QRadioButton("Text")
    for w in (box, radio):
        qtbot.addWidget(w)
        w.show()
    window.script.enter_presenter(["timeline"])
    try:
        assert QApplication.palette().color(QApplication.palette().ColorRole.Window).name() == "#000000"
        assert isinstance(QApplication.style(), OutlinedIndicatorStyle) and QApplication.style().outlined
        assert _border_lightness(box, QStyle.SubElement.SE_CheckBoxIndicator) > 200
        assert _border_lightness(radio, QStyle.SubElement.SE_RadioButtonIndicator) > 200
    finally:
        window.script.leave_presenter()
    assert not isinstance(QApplication.style(), OutlinedIndicatorStyle)  # plain Fusion: no Python in its paint
    assert _border_lightness(box, QStyle.SubElement.SE_CheckBoxIndicator) < 100  # Fusion's own look again


def test_resizing_across_the_wide_width_while_presenting_keeps_the_presented_panels(window, qtbot):
    """A window manager that refuses full screen (or a projector resized by hand) may resize the
    presenting window across the wide-layout width: the workspace must not lay itself out again
    and bring every dock back over the presented panels."""
    from tokviz.app.workspaces.layouts import WIDE_WINDOW_PX

    _present(window, qtbot, ["timeline"])
    shown = sorted(p for p in window.docks.panel_ids() if window.docks.dock(p).isVisible())
    for width in (WIDE_WINDOW_PX + 200, PROJECTOR.width()):
        window.resize(width, PROJECTOR.height())
        qtbot.waitUntil(lambda width=width: window.width() == width, timeout=10_000)
        drain_events()
        assert sorted(p for p in window.docks.panel_ids() if window.docks.dock(p).isVisible()) == shown
    window.script.leave_presenter()
