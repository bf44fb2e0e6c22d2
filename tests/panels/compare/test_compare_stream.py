"""The Compare panel while a run by document goes on: rows appear as documents are measured, Cancel
stops it mid-run, and the table at the end is the table of a run shown only at its end."""

from __future__ import annotations

import pytest

from tests.panels.compare.test_compare_panel import TEXT
from tokviz.core import TrainSettings, save_timeline, train
from tokviz.core.compare import ModelSpec, compare
from tokviz.engine.compare_task import open_any_model
from tokviz.engine.tables.compare_models import SORT_ROLE, DocumentsModel

BODY = "   the cat sat on the mat; le chat est assis sur le tapis\n"  # indented: a document's body
N_DOCUMENTS = 80
CORPUS = "".join(f"Title {i}\n" + BODY * 40 + "   \n" for i in range(N_DOCUMENTS))


@pytest.fixture
def models(tmp_path):
    paths = []
    for merges in (10, 60):
        path = tmp_path / f"m{merges}.json"
        save_timeline(train(TrainSettings(merges=merges), texts=[TEXT * 3]), path)
        paths.append(path)
    return paths


@pytest.fixture
def panel(window, models):
    window.script.set_corpus_text(CORPUS)
    panel = window.script.panel("compare")
    for p in models:
        panel.add_path(p)
    panel.by_document.setChecked(True)
    return panel


def cells(model) -> list[list]:
    return [[(model.index(r, c).data(), model.index(r, c).data(SORT_ROLE)) for c in range(model.columnCount())]
            for r in range(model.rowCount())]


def test_rows_appear_before_the_run_ends_and_end_as_a_whole_run(panel, qtbot, qtmodeltester, models):
    dm = panel.documents_model
    seen = []  # after each batch the panel took: (running, rows shown, the second model's first cell)

    def look(batch) -> None:  # connected after the panel's own slot: sees what the batch left on screen
        if batch.rows:
            seen.append((panel.is_running, dm.rowCount(), dm.index(0, 6).data() if dm.rowCount() else None))
            if len(seen) == 1:
                qtmodeltester.check(dm)
                assert panel.tabs.currentWidget() is panel.documents_table

    panel.engine.partial_ready.connect(look)
    with qtbot.waitSignal(panel.comparison_ready, timeout=120_000):
        assert panel.run()
    # the first rows are sent at once (later ones a few times a second): they cannot be the whole run
    running, shown, second = seen[0]
    assert running and 0 < shown < N_DOCUMENTS and second == "–"  # the second model comes later
    assert dm.index(0, 4).data(SORT_ROLE) > 0
    assert panel.outcome == "finished"
    expected = DocumentsModel()
    expected.set_comparison(compare(CORPUS, [ModelSpec(str(p), lambda p=p: open_any_model(str(p))) for p in models],
                                    by_document=True))
    assert dm.rowCount() == N_DOCUMENTS and cells(dm) == cells(expected)
    assert [dm.headerData(c, 1) for c in range(dm.columnCount())] == [
        expected.headerData(c, 1) for c in range(expected.columnCount())]


def test_progress_counts_documents(panel, qtbot):
    with qtbot.waitSignal(panel.engine.progress_changed, timeout=60_000,
                          check_params_cb=lambda what, _f: "documents" in what):
        assert panel.run()
    qtbot.waitUntil(lambda: f"of {N_DOCUMENTS} documents" in panel.status.text(), timeout=60_000)
    with qtbot.waitSignal(panel.comparison_ready, timeout=120_000):
        pass


def test_cancel_mid_run_drops_the_unfinished_rows(panel, qtbot):
    shown = []

    def cancel_at_the_first_rows(batch) -> None:  # at once: later batches of the run are dropped
        if batch.rows and not shown:
            shown.append(panel.documents_model.rowCount())
            assert panel.cancel()

    panel.engine.partial_ready.connect(cancel_at_the_first_rows)
    with qtbot.waitSignal(panel.comparison_ready, timeout=60_000):
        assert panel.run()
    assert shown and shown[0] > 0
    assert panel.outcome == "cancelled" and panel.status.text() == "Cancelled; the last results stay on screen."
    assert panel.documents_model.rowCount() == 0 and panel.comparison is None  # nothing had ended
    assert panel.engine.wait_idle(60_000)
    qtbot.waitUntil(lambda: panel.engine.thread_count == 0)
    assert panel.documents_model.rowCount() == 0  # no rows of the cancelled run arrive later


def test_cancel_after_a_model_ended_keeps_that_model(panel, qtbot, monkeypatch):
    monkeypatch.setenv("TOKVIZ_PROCESSES", "1")  # one model after the other (side by side, both may end at once)
    with qtbot.waitSignal(panel.engine.partial_ready, timeout=60_000, check_params_cb=lambda b: bool(b.results)):
        assert panel.run()
    with qtbot.waitSignal(panel.comparison_ready, timeout=10_000):
        assert panel.cancel()
    assert panel.status.text() == "Cancelled; 1 of 2 models measured; their results stay on screen."
    c = panel.comparison
    assert [r.model for r in c.results] == ["m10.json"] and len(c.documents) == N_DOCUMENTS
    assert panel.documents_model.rowCount() == N_DOCUMENTS and panel.documents_model.columnCount() == 6
    assert panel.metrics_model.columnCount() == 2
