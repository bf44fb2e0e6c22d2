"""The Compare panel as a user drives it: add models, pick the text, run by document, read the
tables and the chart, change the reference, export; a bad model among good ones; cancel."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import Qt

from tests.conftest import shared_file
from tests.qt_fixtures import drain_events
from tokviz.core import TrainSettings, save_timeline, train
from tokviz.core.compare import ModelSpec, compare
from tokviz.engine.compare_task import open_any_model
from tokviz.engine.tables.compare_models import SORT_ROLE

TEXT = ("English title\n   the cat sat on the mat\n   \nFrançais titre\n   le chat est assis sur le tapis\n"
        "   \nРусский заголовок\n   кошка сидит на коврике\n")


@pytest.fixture
def models(tmp_path):
    """Two tokviz models of different sizes, as files."""
    paths = []
    for merges in (10, 60):
        tl = train(TrainSettings(merges=merges), texts=[TEXT * 3])
        path = tmp_path / f"m{merges}.json"
        save_timeline(tl, path)
        paths.append(path)
    return paths


def run_and_wait(qtbot, panel) -> str:
    with qtbot.waitSignal(panel.comparison_ready, timeout=120_000):
        assert panel.run()
    drain_events()  # the chart is drawn on the next turn of the event loop
    return panel.outcome


def test_metrics_by_document_match_the_core(window, qtbot, models, tmp_path):
    window.script.set_corpus_text(TEXT)
    panel = window.script.select_panel("compare")
    for p in models:
        panel.add_path(p)
    panel.by_document.setChecked(True)
    assert run_and_wait(qtbot, panel) == "finished"
    expected = compare(TEXT, [ModelSpec(str(p), lambda p=p: open_any_model(str(p))) for p in models],
                       by_document=True)
    c = panel.comparison
    assert [r.metrics for r in c.results] == [r.metrics for r in expected.results]
    assert [r.premiums for r in c.results] == [r.premiums for r in expected.results]
    # the documents table: one row per document, the reference marked, tokens of each model
    dm = panel.documents_model
    assert dm.rowCount() == 3 and dm.index(0, 1).data() == "English title (reference)"
    assert dm.index(2, 2).data() == "Cyrillic"
    assert dm.index(1, 4).data(SORT_ROLE) == expected.results[0].documents[1].tokens
    # metrics: one column per model, named by the shortest distinct path ending
    mm = panel.metrics_model
    assert [mm.headerData(i, Qt.Orientation.Horizontal) for i in range(mm.columnCount())] == [
        "metric", "m10.json", "m60.json"]
    assert mm.index(0, 1).data() == f"{expected.results[0].metrics.tokens:,}"
    # the chart: one curve per model, each model's documents cheapest first
    assert len(panel.chart.languages.curves) == 2 and panel.tabs.currentIndex() == 2
    first = expected.results[0].premiums
    assert [first[i] for i in panel.chart.languages.orders[0]] == sorted(first)
    assert "Русский заголовок" in panel.chart.describe(2)
    # the scripts summary
    sm = panel.scripts_model
    assert [(sm.index(r, 0).data(), sm.index(r, 1).data()) for r in range(sm.rowCount())] == [
        ("Latin", "2"), ("Cyrillic", "1")]
    assert "Gini of premiums" in panel.status.text()


def test_changing_the_reference_rescales_without_measuring_again(window, qtbot, models, monkeypatch):
    window.script.set_corpus_text(TEXT)
    panel = window.script.panel("compare")
    panel.add_path(models[0])
    panel.by_document.setChecked(True)
    assert run_and_wait(qtbot, panel) == "finished"
    tokens = [m.tokens for m in panel.comparison.results[0].documents]
    monkeypatch.setattr(panel.engine, "start", lambda *a, **k: pytest.fail("measured again"))
    panel.reference_box.setCurrentIndex(2)
    panel.reference_box.activated.emit(2)
    assert panel.comparison.reference == 2
    assert panel.comparison.results[0].premiums == tuple(t / tokens[2] for t in tokens)
    assert panel.documents_model.index(2, 1).data().endswith("(reference)")


def test_a_model_that_cannot_open_is_reported_and_the_others_shown(window, qtbot, models, tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json", encoding="utf-8")
    window.script.set_corpus_text(TEXT)
    panel = window.script.panel("compare")
    panel.add_path(models[0])
    panel.add_path(bad)
    assert run_and_wait(qtbot, panel) == "finished"
    assert "1 of 2 models measured" in panel.status.text() and "broken.json" in panel.status.text()
    assert panel.metrics_model.columnCount() == 2  # metric + the good model


def test_current_model_at_its_step_and_export(window, qtbot, tmp_path):
    window.script.set_corpus_text(TEXT)
    assert window.script.start_training(TrainSettings(merges=30))
    assert window.script.wait_for_training(60_000) == "finished"
    window.step_model.set_step(12)
    panel = window.script.panel("compare")
    assert panel.add_current_model()
    assert panel.specs[0].step == 12 and panel.models_list.item(0).text().endswith("@12")
    assert run_and_wait(qtbot, panel) == "finished"
    expected = window.script.timeline.tokenizer().encode_ordinary(TEXT, step=12)
    assert panel.comparison.results[0].metrics.tokens == len(expected.ids)
    out = tmp_path / "c.csv"
    panel.export_csv(out)
    rows = list(csv.reader(out.read_text(encoding="utf-8").splitlines()))
    assert rows[0][:3] == ["model", "tokens", "chars"] and int(rows[1][1]) == len(expected.ids)


def test_nothing_to_measure_says_why(window):
    panel = window.script.panel("compare")
    assert not panel.run() and "Add a tokenizer" in panel.status.text()
    panel.add_current_model()  # the default sample has no model yet
    assert "No current model" in panel.status.text()


def test_cancel_keeps_the_window_usable(window, qtbot, models):
    window.script.set_corpus_text(TEXT * 2000)
    panel = window.script.panel("compare")
    for p in models * 3:
        panel.add_path(p)
    with qtbot.waitSignal(panel.comparison_ready, timeout=120_000):
        assert panel.run()
        panel.cancel()
    assert panel.outcome in ("cancelled", "finished")  # a fast machine may finish first
    assert panel.run_button.isEnabled() and not panel.is_running


def test_udhr_by_document_with_a_real_tokenizer(window, qtbot):
    udhr = shared_file("corpora", "udhr2_all.txt")
    panel = window.script.panel("compare")
    panel.add_path(shared_file("vocab", "tiktoken", "r50k_base.tiktoken"))
    panel.set_text_file(udhr)
    panel.by_document.setChecked(True)
    assert run_and_wait(qtbot, panel) == "finished"
    c = panel.comparison
    assert len(c.documents) == 383 and c.documents[c.reference].title == "Universal Declaration of Human Rights"
    assert panel.reference_box.count() == 383 and c.results[0].gini is not None
    drain_events()


def test_the_tables_pass_the_model_tester(window, qtbot, models, qtmodeltester):
    window.script.set_corpus_text(TEXT)
    panel = window.script.panel("compare")
    for p in models:
        panel.add_path(p)
    panel.by_document.setChecked(True)
    assert run_and_wait(qtbot, panel) == "finished"
    for model in (panel.metrics_model, panel.documents_model, panel.scripts_model):
        qtmodeltester.check(model, force_py=True)


def test_a_binary_text_file_is_a_clear_message(window, qtbot, models, tmp_path):
    binary = tmp_path / "data.bin"
    binary.write_bytes(b"\x00\x01\xff\xfe" * 100)
    panel = window.script.panel("compare")
    panel.add_path(models[0])
    panel.set_text_file(binary)
    assert run_and_wait(qtbot, panel) == "failed"
    assert "The comparison failed" in panel.status.text() and "data.bin" in panel.status.text()
    assert panel.run_button.isEnabled()


def test_measuring_runs_in_a_child_process(window, qtbot, models, monkeypatch):
    """The window's process never measures: the function is made to fail here, and the run
    still finishes (in the child); a cancel stops the child."""
    import tokviz.engine.compare_child as child_side

    monkeypatch.setattr(child_side, "run_comparison", lambda *a, **k: pytest.fail("measured in the window"))
    window.script.set_corpus_text(TEXT)
    panel = window.script.panel("compare")
    panel.add_path(models[0])
    assert run_and_wait(qtbot, panel) == "finished"
    assert panel.comparison.results[0].metrics.tokens > 0
