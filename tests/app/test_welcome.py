"""The first-run screen: over the panels (not modal), three paths and Not now; shown on a first run
only, until used or dismissed; Help > Welcome Screen shows it again; each path does what it says."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.conftest import shared_file
from tests.qt_fixtures import drain_events

GPT2_JSON = ("vocab", "hf", "gpt2", "tokenizer.json")


@pytest.fixture
def first_run(make_window):
    return make_window(offer_welcome=True)


def _screen(window):
    return window.welcome.screen


def test_first_run_shows_three_large_paths_over_the_panels(first_run, qtbot):
    screen = _screen(first_run)
    assert screen.isVisible() and not screen.isModal() and screen.parentWidget() is first_run
    assert set(screen.buttons) == {"sample", "tokenizer", "lesson"}
    for b in screen.buttons.values():
        assert b.isVisible() and b.height() >= 3 * b.fontMetrics().height()
    area = first_run.dock_area()
    assert screen.geometry() == area and area.top() > first_run.menuBar().geometry().bottom()
    for pid in ("corpus", "timeline"):  # it lies over the panels
        dock = first_run.docks.dock(pid)
        assert screen.geometry().contains(dock.geometry().center())


def test_train_on_a_sample_trains(first_run, qtbot):
    qtbot.mouseClick(_screen(first_run).buttons["sample"], Qt.MouseButton.LeftButton)
    assert first_run.script.wait_for_training(60_000) == "finished"
    assert first_run.step_model.timeline is not None and first_run.step_model.timeline.n_merges > 0
    assert not _screen(first_run).isVisible() and first_run.settings_store.welcome_done()


def test_open_a_real_tokenizer_opens_it_in_inspect(first_run, qtbot, dialogs):
    path = shared_file(*GPT2_JSON)
    dialogs.open_answer = str(path)
    qtbot.mouseClick(_screen(first_run).buttons["tokenizer"], Qt.MouseButton.LeftButton)
    assert first_run.script.wait_for_tokenizer(60_000) == "opened"
    assert first_run.step_model.timeline.vocab_size == 50_257
    assert first_run.workspaces.current == "inspect"
    assert dialogs.errors == []


def test_start_a_lesson_starts_the_first_lesson(first_run, qtbot):
    qtbot.mouseClick(_screen(first_run).buttons["lesson"], Qt.MouseButton.LeftButton)
    assert first_run.script.wait_for_lesson_step(60_000) == "shown"
    assert first_run.lessons.lesson is not None and first_run.lessons.index == 0
    assert first_run.lesson_panel.isVisible()


def test_dismissed_it_stays_away_and_help_shows_it_again(make_window, qtbot):
    first = make_window(offer_welcome=True)
    qtbot.mouseClick(_screen(first).dismiss_button, Qt.MouseButton.LeftButton)
    assert not _screen(first).isVisible()
    first.close()
    second = make_window(offer_welcome=True)
    drain_events()
    assert not _screen(second).isVisible()
    second.commands.welcome.trigger()  # Help > Welcome Screen
    assert _screen(second).isVisible()
    assert second.commands.welcome in second.menus["help"].actions()


def test_closed_without_a_choice_it_is_offered_again(make_window):
    first = make_window(offer_welcome=True)
    first.close()
    assert _screen(make_window(offer_welcome=True)).isVisible()


def test_tests_and_scripts_get_no_welcome_screen(window):
    assert not _screen(window).isVisible()


def test_first_start_is_maximized_then_the_last_geometry(qtbot, settings_store, dialogs):
    from tokviz.app.main_window import MainWindow

    first = MainWindow(settings_store, dialogs=dialogs)
    qtbot.addWidget(first)
    first.show_first()
    qtbot.waitUntil(first.isMaximized)
    first.showNormal()
    first.resize(1240, 790)
    qtbot.waitUntil(lambda: first.size().toTuple() == (1240, 790))
    first.close()
    first.shutdown()
    second = MainWindow(settings_store, dialogs=dialogs)
    qtbot.addWidget(second)
    second.show_first()
    qtbot.waitExposed(second)
    # the saved geometry, fitted by Qt onto the offscreen screen (800 x 800): not maximized, and not
    # the default 1280 x 800 either
    qtbot.waitUntil(lambda: second.width() < 1240)
    assert not second.isMaximized() and second.settings_store.window_layout()[0] is not None
    second.shutdown()
