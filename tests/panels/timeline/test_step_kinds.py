"""Timelines whose steps differ in kind (BoundlessBPE: merge or supermerge; parity-aware: the
language served) get a column saying so in the merge table, with the step's note as its tooltip;
timelines whose steps are all alike get no such column."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tokviz.core import TrainSettings, train
from tokviz.core.boundless.timeline import BoundlessSettings, train_boundless
from tokviz.core.parity_bpe import ParitySettings
from tokviz.core.parity_bpe import train as train_parity
from tokviz.engine.step_model import StepModel
from tokviz.engine.tables.merge_model import COLUMNS, MergeModel

CORPUS = " of the people, by the people, for the people" * 20
PARALLEL = ("English\n  all human beings are born free and equal in dignity and rights\n\n"
            "Deutsch\n  alle Menschen sind frei und gleich an Würde und Rechten geboren\n")
H = Qt.Orientation.Horizontal


def _model(timeline) -> MergeModel:
    step_model = StepModel()
    model = MergeModel()
    model.attach(step_model)
    step_model.set_timeline(timeline)
    return model


def test_boundless_rows_say_merge_or_supermerge(qtmodeltester, tmp_path):
    tl = train_boundless(BoundlessSettings(merges=40), texts=[CORPUS])
    assert "supermerge" in tl.kinds() and "merge" in tl.kinds()
    model = _model(tl)
    qtmodeltester.check(model)
    col = model.kind_column
    assert col == len(COLUMNS) and model.columnCount() == len(COLUMNS) + 1
    assert model.headerData(col, H) == "Kind"
    shown = [model.index(r, col).data() for r in range(model.rowCount())]
    assert shown == tl.kinds()
    r = shown.index("supermerge")
    assert model.index(r, col).data(Qt.ItemDataRole.ToolTipRole) == tl.step_note(r)
    assert model.write_csv(tmp_path / "m.csv") == tl.n_merges
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0].endswith(",kind") and lines[r + 1].endswith(",supermerge")


def test_parity_rows_name_the_language_served():
    tl = train_parity(ParitySettings(merges=8, hybrid=2, min_count=1), texts=[PARALLEL])
    model = _model(tl)
    col = model.kind_column
    assert model.headerData(col, H) == "Served"
    assert model.index(0, col).data() == "all documents (a global merge)"
    assert model.index(5, col).data() == tl.documents[tl.steps[5].served]


def test_plain_bpe_has_no_kind_column():
    model = _model(train(TrainSettings(merges=10), texts=[CORPUS]))
    assert model.kind_column is None and model.columnCount() == len(COLUMNS)


def test_the_panel_shows_the_kind_beside_the_rank(qtbot):
    from tokviz.panels.timeline.panel import TimelinePanel

    panel = TimelinePanel(StepModel())
    qtbot.addWidget(panel)
    panel.step_model.set_timeline(train_boundless(BoundlessSettings(merges=40), texts=[CORPUS]), source="test")
    header = panel.table.horizontalHeader()
    assert header.visualIndex(panel.merge_model.kind_column) == 1  # not past the table's right edge
    panel.step_model.set_timeline(train(TrainSettings(merges=10), texts=[CORPUS]), source="test")
    assert panel.merge_model.columnCount() == len(COLUMNS)
    assert [header.logicalIndex(v) for v in range(len(COLUMNS))] == list(range(len(COLUMNS)))
