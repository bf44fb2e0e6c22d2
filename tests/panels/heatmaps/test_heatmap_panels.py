"""Heatmap widget and positional-encodings panel: image data, controls, hover readout, export."""

from __future__ import annotations

import csv
import time
from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtGui import QImage

from tests.qt_fixtures import drain_events
from tokviz.core.embeddings.positional import (
    PositionalParams,
    alibi_bias,
    display_positions,
    learned_random,
    rope_angles,
    rope_score_by_distance,
    sinusoidal,
    sinusoidal_similarity,
)
from tokviz.core.embeddings.positional_kinds import LEARNED
from tokviz.core.embeddings.positional_text import parse_dims
from tokviz.engine import tasks
from tokviz.engine.heatmaps.heatmap_engine import (
    HeatmapEngine,
    PositionalRequest,
    compute_positional_view,
    positional_table,
)
from tokviz.panels.heatmaps.heatmap_view import HeatmapView, tick_list
from tokviz.panels.heatmaps.positional_panel import PositionalPanel

TIMEOUT = 5000


@pytest.fixture
def view(qtbot):
    w = HeatmapView()
    qtbot.addWidget(w)
    w.resize(500, 400)
    w.show()
    yield w
    w.shutdown()


@pytest.fixture
def panel(qtbot):
    p = PositionalPanel()
    qtbot.addWidget(p)
    p.resize(900, 650)
    p.show()
    qtbot.waitUntil(lambda: p.shown_view is not None, timeout=TIMEOUT)
    yield p
    p.shutdown()


def change(qtbot, panel, fn):
    """Apply a control change and wait until the panel shows the result."""
    with qtbot.waitSignal(panel.view_shown, timeout=TIMEOUT):
        fn()


def hover(qtbot, heatmap: HeatmapView, row: int, col: int) -> str:
    heatmap.plot.scene().sigMouseMoved.emit(heatmap.scene_pos_of(row, col))
    return heatmap.readout.text()


# -- the heatmap widget ---------------------------------------------------------------------------


def test_view_shows_matrix_with_symmetric_levels_for_signed_data(view):
    m = np.array([[0.0, -2.0, 1.0], [0.5, 0.25, -0.5]], dtype=np.float32)
    view.set_matrix(m, row_labels=["a", "b"], col_labels=["x", "y", "z"])
    assert np.array_equal(view.image.image, m)
    assert view.image.levels.tolist() == [-2.0, 2.0]  # centred on 0
    assert tuple(view.colorbar.levels()) == (-2.0, 2.0)
    assert view.colormap_name.startswith("CET-D")  # a diverging map
    view.set_matrix(np.array([[1.0, 3.0]]))
    assert view.image.levels.tolist() == [1.0, 3.0]
    assert view.map_box.currentText() in ("Viridis", "Magma", "Cividis")


def test_view_colormap_choice_changes_lookup(view):
    view.set_matrix(np.array([[-1.0, 1.0]]))
    labels = [view.map_box.itemText(i) for i in range(view.map_box.count())]
    assert len(labels) >= 3
    first = view.colorbar.colorMap().getLookupTable(nPts=8).tolist()
    view.set_colormap(labels[1])
    assert view.colorbar.colorMap().getLookupTable(nPts=8).tolist() != first


def test_view_hover_readout_and_cell_lookup(view, qtbot):
    view.set_matrix(np.arange(12, dtype=np.float32).reshape(3, 4), row_labels=["r0", "r1", "r2"])
    view.set_readout(lambda r, c, v: f"{r}/{c}={v:g}")
    assert view.cell_at(view.scene_pos_of(2, 3)) == (2, 3)
    with qtbot.waitSignal(view.hovered, timeout=10_000) as blocker:
        text = hover(qtbot, view, 1, 2)
    assert blocker.args == [1, 2]
    assert text == "1/2=6"
    view.set_readout(None)
    assert view.show_readout(2, 0) == "row r2, column 0: 8"


def test_view_export_csv_and_png(view, qtbot, tmp_path):
    m = np.array([[0.5, -1.0], [2.0, 3.25]], dtype=np.float32)
    view.set_matrix(m, row_labels=["a,b", "c"], col_labels=["d0", "d1"], corner="token")
    path = tmp_path / "m.csv"
    with qtbot.waitSignal(view.exported, timeout=TIMEOUT) as blocker:
        assert view.export_csv(path)
    assert blocker.args == [str(path)]
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    assert rows == [["token", "d0", "d1"], ["a,b", "0.5", "-1"], ["c", "2", "3.25"]]
    png = tmp_path / "m.png"
    assert view.export_png(png)
    img = QImage(str(png))
    assert not img.isNull() and img.width() > 100


def test_tick_list_spacing():
    assert tick_list([str(i) for i in range(100)], 10)[:2] == [(0.5, "0"), (10.5, "10")]
    assert len(tick_list(["a"] * 1000, 40)) == 40


def test_engine_debounces_and_newest_request_wins(qtbot, monkeypatch):
    engine = HeatmapEngine("t", debounce_ms=20)
    results = []
    engine.computed.connect(results.append)
    for d in (4, 6, 8):
        engine.request(compute_positional_view, PositionalRequest("sinusoidal", "matrix", PositionalParams(d=d, n_pos=3)))
    qtbot.waitUntil(lambda: bool(results), timeout=TIMEOUT)
    assert engine.wait_idle(TIMEOUT)
    drain_events()
    assert [r.matrix.shape for r in results] == [(3, 8)]  # the first (started at once) was cancelled
    later = time.monotonic() + 3600  # quiet for an hour (the clock, not a sleep)
    monkeypatch.setattr(tasks, "time", SimpleNamespace(monotonic=lambda: later))
    engine.request(compute_positional_view, PositionalRequest("sinusoidal", "matrix", PositionalParams(d=2, n_pos=3)))
    assert engine.tasks.is_running  # started at once, not after the debounce delay
    qtbot.waitUntil(lambda: len(results) == 2, timeout=TIMEOUT)
    assert engine.wait_idle(TIMEOUT)
    drain_events()
    assert [r.matrix.shape for r in results[1:]] == [(3, 2)] and not engine.is_busy  # nothing else was queued
    engine.shutdown()


# -- the positional panel -------------------------------------------------------------------------


def test_sinusoidal_image_equals_core(panel, qtbot):
    change(qtbot, panel, lambda: panel.dim_spin.setValue(8))
    change(qtbot, panel, lambda: panel.pos_spin.setValue(5))
    assert np.array_equal(panel.heatmap.image.image, sinusoidal(5, 8))
    change(qtbot, panel, lambda: panel.base_spin.setValue(100))
    assert np.array_equal(panel.heatmap.image.image, sinusoidal(5, 8, 100.0))
    assert panel.status.text().startswith("Sinusoidal: 5 × 8")


def test_other_kinds_match_core(panel, qtbot):
    change(qtbot, panel, lambda: panel.dim_spin.setValue(6))
    change(qtbot, panel, lambda: panel.pos_spin.setValue(7))
    change(qtbot, panel, lambda: panel.set_kind("learned"))
    assert np.array_equal(panel.heatmap.image.image, learned_random(7, 6, seed=0))
    change(qtbot, panel, lambda: panel.seed_spin.setValue(3))
    assert np.array_equal(panel.heatmap.image.image, learned_random(7, 6, seed=3))
    change(qtbot, panel, lambda: panel.pos_spin.setValue(4))  # sliced from the cached table
    assert np.array_equal(panel.heatmap.image.image, learned_random(4, 6, seed=3))
    change(qtbot, panel, lambda: panel.set_kind("rope"))
    assert np.allclose(panel.heatmap.image.image, rope_angles(4, 6, wrap=True))
    assert panel.heatmap.map_box.currentText().startswith("Cyclic")
    change(qtbot, panel, lambda: panel.set_kind("alibi"))
    assert np.array_equal(panel.heatmap.image.image, alibi_bias(4, n_heads=8, head=0))
    assert not panel.dim_spin.isEnabled()


def test_similarity_view_is_symmetric_with_unit_diagonal(panel, qtbot):
    change(qtbot, panel, lambda: panel.set_view("similarity"))
    change(qtbot, panel, lambda: panel.measure_box.setCurrentIndex(panel.measure_box.findData("cosine")))
    m = panel.heatmap.image.image
    assert m.shape == (128, 128)
    assert np.allclose(m, m.T) and np.allclose(np.diag(m), 1.0)
    assert np.allclose(m, sinusoidal_similarity(128, 64, kind="cosine"))
    text = hover(qtbot, panel.heatmap, 2, 5)
    assert text.startswith("positions 2 and 5 (distance 3): cosine")


def test_large_square_views_are_subsampled(panel, qtbot):
    change(qtbot, panel, lambda: panel.pos_spin.setValue(5000))
    change(qtbot, panel, lambda: panel.set_view("similarity"))
    pos = display_positions(5000, 2048)
    assert panel.heatmap.image.image.shape == (len(pos), len(pos))
    assert panel.heatmap.label_of_row(1) == str(pos[1])
    assert "every 3th position of 5,000" in panel.status.text()


def test_hover_readout_shows_formula(panel, qtbot):
    text = hover(qtbot, panel.heatmap, 5, 6)
    assert "PE(5, 2·3) = sin(5 / 10000^(6/64)) = 0.8589" in text
    assert text.startswith("position 5")
    change(qtbot, panel, lambda: panel.set_kind("alibi"))
    assert hover(qtbot, panel.heatmap, 5, 3).startswith("bias(5, 3) = -m·|5 - 3| = -0.5·2 = -1.0000")


def test_rope_distance_and_dimension_curves(panel, qtbot):
    change(qtbot, panel, lambda: panel.set_kind("rope"))
    change(qtbot, panel, lambda: panel.set_view("distance"))
    assert panel.stack.currentWidget() is panel.curves
    (item,) = panel.curves.getPlotItem().listDataItems()
    x, y = item.getData()
    dist, score = rope_score_by_distance(np.ones(64), np.ones(64), 127)
    assert np.array_equal(x, dist) and np.allclose(y, score)
    assert y.min() > 5  # all-ones q, k: every score is positive...
    (y_lo, y_hi) = panel.curves.getPlotItem().vb.viewRange()[1]
    assert y_lo <= 0 < y.max() <= y_hi  # ...and the score axis still starts at 0, not at the smallest score
    change(qtbot, panel, lambda: panel.set_kind("alibi"))
    (item,) = panel.curves.getPlotItem().listDataItems()
    assert item.getData()[1].max() == 0 and panel.curves.getPlotItem().vb.viewRange()[1][1] >= 0
    change(qtbot, panel, lambda: panel.set_kind("sinusoidal"))
    change(qtbot, panel, lambda: panel.set_view("dims"))
    change(qtbot, panel, lambda: panel.dims_edit.setText("0, 3"))
    items = panel.curves.getPlotItem().listDataItems()
    assert [i.name() for i in items] == ["dimension 0", "dimension 3"]
    assert np.allclose(items[1].getData()[1], sinusoidal(128, 64)[:, 3])


def test_rows_labelled_with_tokens(panel, qtbot):
    panel.set_text_tokens(["The", "␣cat"])
    assert panel.heatmap.label_of_row(1) == "1 ␣cat"
    assert panel.heatmap.label_of_row(2) == "2"
    assert "(token ␣cat)" in hover(qtbot, panel.heatmap, 1, 0)
    panel.tokens_box.setChecked(False)
    assert panel.heatmap.label_of_row(1) == "1"


def test_parse_dims():
    assert parse_dims("1, 2-4, 9, x", 8) == (1, 2, 3, 4)
    assert parse_dims("", 8) == ()


def test_learned_cache_slices(qtbot):
    p = PositionalParams(d=4, n_pos=10, seed=11)
    big = positional_table(LEARNED, p)
    small = positional_table(LEARNED, PositionalParams(d=4, n_pos=3, seed=11))
    assert np.shares_memory(big, small) and np.array_equal(small, learned_random(3, 4, seed=11))


def test_trained_position_table_is_offered_and_shown(panel, qtbot):
    assert panel.kind_box.findData("trained") < 0  # nothing trained yet
    assert not panel.set_kind("trained") and panel.kind == "sinusoidal"
    table = np.random.default_rng(3).standard_normal((40, 12)).astype(np.float32)
    panel.set_trained_table(table)
    assert panel.kind_box.findData("trained") >= 0
    change(qtbot, panel, lambda: panel.set_kind("trained"))
    assert np.array_equal(panel.heatmap.matrix, table)  # 128 positions asked, the table has 40
    assert not panel.dim_spin.isEnabled() and panel.dim_spin.value() == 12  # shows the table's D
    assert "trained with the embeddings; the table has 40 positions" in panel.status.text()
    text = hover(qtbot, panel.heatmap, 3, 5)
    assert f"P[3, 5] = {table[3, 5]:.4f}" in text and "t mod 40" in text
    change(qtbot, panel, lambda: panel.pos_spin.setValue(10))
    assert panel.heatmap.matrix.shape == (10, 12)
    change(qtbot, panel, lambda: panel.set_view("similarity"))
    m = panel.heatmap.matrix
    assert m.shape == (10, 10) and np.allclose(m, table[:10] @ table[:10].T, atol=1e-4)
    change(qtbot, panel, lambda: panel.set_view("dims"))
    change(qtbot, panel, lambda: panel.dims_edit.setText("2"))
    (item,) = panel.curves.getPlotItem().listDataItems()
    assert np.allclose(item.getData()[1], table[:10, 2])
    newer = table * 2
    with qtbot.waitSignal(panel.view_shown, timeout=TIMEOUT):  # a newer table replaces the view at once
        panel.set_trained_table(newer)
    assert np.allclose(panel.curves.getPlotItem().listDataItems()[0].getData()[1], newer[:10, 2])
    change(qtbot, panel, lambda: panel.set_kind("sinusoidal"))
    assert panel.dim_spin.isEnabled() and panel.dim_spin.value() == 64  # the user's d is back


def test_trained_kind_without_a_table_says_what_to_do():
    req = PositionalRequest("trained", "matrix", PositionalParams(d=8, n_pos=4))
    with pytest.raises(Exception, match="train embeddings with Positions > 0 first"):
        compute_positional_view(req)
