"""The Compare panel's Parity tab: two tokenizers (or one at two steps), the corpus's lines then
generated texts, run off the GUI thread with progress, Cancel, and the minimal text shown."""

from __future__ import annotations

import pytest

from tokviz.core import TrainSettings, save_timeline, train
from tokviz.core.parity import Side, find_difference, report_lines

CORPUS = "the lowest newest widest lower newer wider the low new wide\n" * 10


@pytest.fixture
def model(window, tmp_path):
    tl = train(TrainSettings(merges=20, min_count=1), texts=[CORPUS])
    path = tmp_path / "m.json"
    save_timeline(tl, path)
    window.script.set_corpus_text("xyz\nthe lowest newest\n")
    panel = window.script.panel("compare")
    panel.add_timeline("m@2", tl, 2)
    panel.add_path(path)
    tab = panel.parity_tab
    tab.pickers[1].setCurrentIndex(1)
    return panel, tab, tl


def test_finds_and_shows_the_minimal_difference(window, qtbot, model):
    panel, tab, tl = model
    assert panel.tabs.tabText(panel.tabs.indexOf(tab)) == "Parity"
    with qtbot.waitSignal(tab.ready, timeout=120_000):
        assert tab.run()
    assert tab.outcome == "finished"
    expected = find_difference(Side("m@2", tl, 2), Side("m.json", tl), lines=["xyz", "the lowest newest"], fuzz=1000)
    d = tab.result.difference
    assert (d.text, d.stage, d.ids_a, d.ids_b) == (expected.difference.text, "model", expected.difference.ids_a,
                                                   expected.difference.ids_b)
    assert tab.report.toPlainText() == "\n".join(report_lines(expected))
    assert tab.status.text() == f"First difference after 2 texts: model ({len(d.text)} characters)."
    assert tab.run_button.isEnabled() and not tab.cancel_button.isEnabled()


def test_no_difference_on_the_same_model(window, qtbot, model):
    _panel, tab, _tl = model
    tab.pickers[0].setCurrentIndex(1)
    tab.fuzz.setValue(50)
    with qtbot.waitSignal(tab.ready, timeout=120_000):
        assert tab.run()
    assert tab.result.difference is None and tab.status.text() == "No difference in 52 texts."
    assert "agree on all 52 texts" in tab.report.toPlainText()


def test_progress_then_cancel(window, qtbot, model):
    _panel, tab, _tl = model
    tab.pickers[0].setCurrentIndex(1)  # the same model twice: they never differ, the search goes on
    tab.fuzz.setValue(tab.fuzz.maximum())
    with qtbot.waitSignal(tab.engine.progress_changed, timeout=120_000):
        assert tab.run()
    assert not tab.progress.isHidden() and tab.cancel_button.isEnabled() and not tab.run_button.isEnabled()
    qtbot.waitUntil(lambda: tab.status.text().startswith("Checked "), timeout=120_000)
    assert 0 <= tab.progress.value() < 1000
    with qtbot.waitSignal(tab.ready, timeout=120_000):
        assert tab.cancel()
    assert tab.outcome == "cancelled" and tab.status.text() == "Cancelled."
    assert tab.run_button.isEnabled() and tab.progress.isHidden()


def test_nothing_to_check_says_why(window, model):
    _panel, tab, _tl = model
    tab.use_corpus.setChecked(False)
    tab.fuzz.setValue(0)
    assert not tab.run() and "Nothing to check" in tab.status.text()
