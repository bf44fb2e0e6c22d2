"""`StepModel` and `VocabModel`: shared step state, the virtual vocabulary table."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import QPersistentModelIndex, Qt
from PySide6.QtWidgets import QTableView

from tests.qt_fixtures import append_steps, drain_events
from tokviz.core import MergeStep, TrainSettings, train
from tokviz.engine.step_model import StepModel
from tokviz.engine.tables.vocab_model import (
    COL_BYTES,
    COL_COUNT,
    COL_ID,
    COL_LENGTH,
    COL_RANK,
    COL_TOKEN,
    ID_ROLE,
    KIND_ROLE,
    PARTIAL_ROLE,
    VocabModel,
)

TEXT = "low low low lower lower lowest newest newest widest 👋👋 " * 5


@pytest.fixture
def timeline():
    return train(TrainSettings(merges=20, special_tokens=("<|end|>",)), texts=[TEXT])


@pytest.fixture
def models(timeline):
    sm = StepModel()
    vm = VocabModel()
    vm.attach(sm)
    return sm, vm


def column(vm: VocabModel, col: int) -> list:
    return [vm.index(r, col).data() for r in range(vm.rowCount())]


def test_step_model_follows_new_steps_until_a_step_is_picked(timeline, qtbot):
    sm = StepModel()
    steps = []
    sm.step_changed.connect(steps.append)
    sm.set_timeline(replace(timeline, steps=[], finished=False))
    append_steps(sm, timeline.steps[:5])
    assert (sm.n_steps, sm.step, sm.follows_latest) == (5, 5, True)
    sm.set_step(2)
    append_steps(sm, timeline.steps[5:8])
    assert (sm.n_steps, sm.step, sm.follows_latest) == (8, 2, False)
    sm.set_step(99)
    assert (sm.step, sm.follows_latest) == (8, True)
    sm.set_step(-4)
    assert sm.step == 0
    sm.follow_latest()
    assert sm.step == 8
    assert steps == [0, 5, 2, 8, 0, 8]
    assert sm.is_finished is False
    sm.mark_finished(replace(timeline, steps=timeline.steps[:8], finished=True))
    assert sm.is_finished is True


def test_vocab_model_passes_the_model_tester(models, timeline, qtmodeltester):
    sm, vm = models
    sm.set_timeline(timeline)
    qtmodeltester.check(vm, force_py=True)
    vm.sort(COL_TOKEN, Qt.SortOrder.DescendingOrder)
    vm.set_filter("w")
    qtmodeltester.check(vm, force_py=True)


def test_rows_columns_and_roles(models, timeline):
    sm, vm = models
    sm.set_timeline(timeline)
    n = 256 + 20 + 1
    assert vm.rowCount() == n == timeline.vocab_size
    row = [vm.index(256, c).data() for c in range(6)]
    assert row == ["256", "lo", "6C 6F", "2", "1", "30"]  # 'lo' by merge 1: 5 × (3 low + 2 lower + 1 lowest)
    assert vm.index(32, COL_TOKEN).data() == "␣"
    assert vm.index(256 + 20, COL_TOKEN).data() == "<|end|>"
    assert vm.index(256 + 20, COL_TOKEN).data(KIND_ROLE) == "special"
    assert vm.index(256 + 20, COL_RANK).data() == ""
    assert vm.index(0xF0, COL_TOKEN).data(PARTIAL_ROLE) is True
    assert vm.index(97, COL_TOKEN).data(PARTIAL_ROLE) is False
    assert "merge 0" in vm.index(256, COL_TOKEN).data(Qt.ItemDataRole.ToolTipRole)
    assert vm.headerData(COL_COUNT, Qt.Orientation.Horizontal) == "Pair count"


@pytest.mark.parametrize("col", [COL_ID, COL_TOKEN, COL_BYTES, COL_LENGTH, COL_RANK])
@pytest.mark.parametrize("order", [Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder])
def test_sorting(models, timeline, col, order):
    sm, vm = models
    sm.set_timeline(timeline)
    vm.sort(col, order)
    ids = [vm.index(r, 0).data(ID_ROLE) for r in range(vm.rowCount())]
    vocab = timeline.token_bytes()
    rank = {256 + i: i for i in range(20)}
    keys = {
        COL_ID: lambda i: i,
        COL_TOKEN: lambda i: vm.index(ids.index(i), COL_TOKEN).data(),
        COL_BYTES: lambda i: vocab[i],
        COL_LENGTH: lambda i: len(vocab[i]),
        COL_RANK: lambda i: rank.get(i, -1 if i < 256 else 10**12),
    }[col]
    expected = sorted(range(len(vocab)), key=lambda i: (keys(i), i), reverse=order == Qt.SortOrder.DescendingOrder)
    assert ids == expected
    assert len(set(ids)) == timeline.vocab_size


def test_filter_by_text_and_id(models, timeline):
    sm, vm = models
    sm.set_timeline(timeline)
    counts = []
    vm.counts_changed.connect(lambda shown, total: counts.append((shown, total)))
    vm.set_filter("est")
    assert column(vm, COL_TOKEN) and all("est" in t for t in column(vm, COL_TOKEN))
    vm.set_filter(" low")  # raw text with a space matches too
    assert set(column(vm, COL_TOKEN)) >= {"␣low"}
    vm.set_filter("97")
    assert "97" in column(vm, COL_ID)
    vm.set_filter("")
    assert vm.rowCount() == timeline.vocab_size
    assert counts[-1] == (timeline.vocab_size, timeline.vocab_size)


@pytest.mark.parametrize("batch", [1, 3, 50])
def test_live_rows_keep_the_sort_order(timeline, batch):
    sm, vm = StepModel(), VocabModel()
    vm.attach(sm)
    sm.set_timeline(replace(timeline, steps=[]))
    vm.sort(COL_COUNT, Qt.SortOrder.DescendingOrder)
    vm.set_filter("w")
    rows_seen = []
    vm.rowsInserted.connect(lambda parent, a, b: rows_seen.append((a, b)))
    for i in range(0, 20, batch):
        append_steps(sm, timeline.steps[i : i + batch])
    live = [vm.index(r, 0).data(ID_ROLE) for r in range(vm.rowCount())]
    fresh = VocabModel()
    fresh.set_timeline(timeline)
    fresh.sort(COL_COUNT, Qt.SortOrder.DescendingOrder)
    fresh.set_filter("w")
    assert live == [fresh.index(r, 0).data(ID_ROLE) for r in range(fresh.rowCount())]
    if batch == 1:
        assert rows_seen  # appended row by row at the sorted position


def test_special_token_ids_follow_the_merges(timeline):
    sm, vm = StepModel(), VocabModel()
    vm.attach(sm)
    sm.set_timeline(replace(timeline, steps=[]))
    assert vm.index(256, COL_TOKEN).data() == "<|end|>"
    assert vm.index(256, COL_ID).data() == "256"
    append_steps(sm, timeline.steps[:7])
    assert vm.index(263, COL_TOKEN).data() == "<|end|>"
    assert vm.index(263, COL_ID).data() == "263"
    assert vm.row_of_id(263) == 263


def test_selection_survives_a_sort(models, timeline):
    sm, vm = models
    sm.set_timeline(timeline)
    keep = QPersistentModelIndex(vm.index(260, COL_TOKEN))
    vm.sort(COL_BYTES, Qt.SortOrder.DescendingOrder)
    assert keep.isValid()
    assert keep.data(ID_ROLE) == 260
    assert keep.column() == COL_TOKEN


class RowCountingVocabModel(VocabModel):
    """Records which rows a view asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.rows_read: set[int] = set()

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        self.rows_read.add(index.row())
        return super().data(index, role)


def test_100k_rows_are_virtual(qtbot):
    """A table of 100k tokens reads only the rows on screen as it scrolls (timings:
    tests/bench/bench_tables.py)."""
    n = 100_000
    steps = [MergeStep(r, (97, 98), 256 + r, b"ab" + r.to_bytes(3, "big"), n - r, 10**6 - r) for r in range(n)]
    tl = train(TrainSettings(merges=0), texts=["ab"])
    tl = replace(tl, steps=steps)
    vm = RowCountingVocabModel()
    vm.set_timeline(tl)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(vm)
    view.verticalHeader().setDefaultSectionSize(20)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    drain_events()  # the view lays its items out on a zero-delay timer; until then it paints nothing
    for frac in (0.25, 0.5, 0.75, 1.0):
        view.verticalScrollBar().setValue(int(view.verticalScrollBar().maximum() * frac))
        view.viewport().repaint()
    assert vm.rowCount() == n + 256
    assert view.indexAt(view.viewport().rect().bottomLeft()).row() > n
    assert max(vm.rows_read) == n + 255  # it reached the end
    assert len(vm.rows_read) < 1_000  # five screens of ~20 rows, not 100k


def test_switching_back_to_a_model_shows_its_rows_again(timeline):
    """The entries of the last two finished models are kept for switching back; a model that has
    grown since is read again."""
    other = train(TrainSettings(merges=5), texts=["abc abd abe " * 4])
    sm, vm = StepModel(), VocabModel()
    vm.attach(sm)
    cols = (COL_ID, COL_TOKEN, COL_RANK, COL_COUNT)
    sm.set_timeline(timeline)
    first = [column(vm, c) for c in cols]
    sm.set_timeline(other)
    assert vm.rowCount() == 256 + 5
    sm.set_timeline(timeline)
    assert [column(vm, c) for c in cols] == first
    grown = replace(timeline, steps=list(timeline.steps[:10]))
    sm.set_timeline(grown)
    sm.set_timeline(other)
    grown.steps.extend(timeline.steps[10:12])
    sm.set_timeline(grown)
    fresh = VocabModel()
    fresh.set_timeline(grown)
    assert vm.rowCount() == fresh.rowCount() == 256 + 12 + 1
    assert [column(vm, c) for c in cols] == [column(fresh, c) for c in cols]
