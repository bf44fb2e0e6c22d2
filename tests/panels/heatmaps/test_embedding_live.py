"""Live embedding training keeps the window free: the training process does the maths, the window
only draws, and each live update redraws only what changed (regression tests for the 66-79 ms
stalls embedding training once caused; bounded-work checks, not timings)."""

from __future__ import annotations

import doctest
import os
import signal
import sys

import numpy as np
import pytest

from tests.conftest import qt_modules_loaded
from tests.qt_fixtures import drain_events
from tokviz.core import Cancelled
from tokviz.core.embeddings import EmbeddingTable, EmbedTrainSettings, cosine_similarity
from tokviz.core.embeddings import similarity as embed_similarity
from tokviz.core.embeddings import training as embed_train
from tokviz.engine.heatmaps import embedding_child
from tokviz.engine.heatmaps.embedding_child import embedding_events, table_interval
from tokviz.engine.heatmaps.embedding_engine import EmbeddingEngine
from tokviz.panels.heatmaps import embedding_widgets
from tokviz.panels.heatmaps.embedding_widgets import MAX_LOSS_POINTS, LossHistory, LossPlot, decimate
from tokviz.panels.heatmaps.heatmap_view import HeatmapView

from .embedding_helpers import TIMEOUT, shown_panel, small_corpus

LONG = EmbedTrainSettings(dim=16, epochs=100_000, batch_size=16)


@pytest.fixture(scope="module")
def corpus():
    return small_corpus()


@pytest.fixture
def panel(qtbot, corpus):
    yield from shown_panel(qtbot, corpus)


@pytest.mark.parametrize("module", [embedding_child, embedding_widgets])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# -- the event stream (what the training process runs) --------------------------------------------


def test_events_carry_views_of_the_asked_tokens_and_end_with_the_table(corpus, monkeypatch):
    monkeypatch.setattr(embedding_child, "BATCH_SECONDS", 0.0)  # an event per step
    monkeypatch.setattr(embedding_child, "SNAPSHOT_SECONDS", 0.0)
    monkeypatch.setattr(embedding_child, "TABLE_BYTES_PER_SECOND", float("inf"))  # a table every event
    spec = [((5, 7, 9), False)]
    events = embedding_events(corpus.sequences, corpus.n_vocab, EmbedTrainSettings(dim=8, epochs=1, batch_size=8),
                              view_spec=lambda: spec[0])
    kind, info = next(events)
    assert kind == "prepared" and info.n_steps > 3 and info.unigram_loss < info.uniform_loss
    kind, (steps, view, table) = next(events)
    assert kind == "progress" and [s.step for s in steps] == [1]
    assert view.ids == [5, 7, 9] and not view.reordered
    assert np.allclose(view.matrix, cosine_similarity(table, [5, 7, 9]))  # same moment, same table
    spec[0] = ((1, 2, 3, 4), True)
    kind, (steps, view, _) = next(events)
    assert sorted(view.ids) == [1, 2, 3, 4] and view.reordered
    rest = list(events)
    assert rest[-1][0] == "finished"
    final, n, positions = rest[-1][1]
    assert final.shape == (corpus.n_vocab, 8) and n == info.n_steps and positions is None


def test_events_stop_when_asked_and_big_tables_are_sent_less_often(corpus):
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 3

    events = embedding_events(corpus.sequences, corpus.n_vocab, EmbedTrainSettings(dim=4, epochs=50, batch_size=8),
                              should_stop=stop)
    with pytest.raises(Cancelled):
        list(events)
    assert len(calls) == 4
    assert table_interval(1000, 64) == embedding_child.SNAPSHOT_SECONDS
    assert table_interval(50_000, 1024) > 10  # 200 MB: not four times a second


# -- the panel: training runs elsewhere, the window only draws -----------------------------------


def test_training_runs_in_a_child_process_and_the_window_only_draws(panel, qtbot, monkeypatch):
    def forbidden(*_a, **_k):
        raise AssertionError("computed in the window's process")

    monkeypatch.setattr(embed_train.EmbedTrainer, "steps", forbidden)  # the child imports its own copy
    computed = []
    for name in ("reorder_for_similarity", "cosine_similarity"):
        original = getattr(embed_similarity, name)
        monkeypatch.setattr(embed_similarity, name,
                            lambda *a, _f=original, _n=name, **k: computed.append(_n) or _f(*a, **k))
    requests = []
    original_request = panel.similarity_engine.request
    monkeypatch.setattr(panel.similarity_engine, "request", lambda *a, **k: requests.append(1) or original_request(*a, **k))
    shown = []
    panel.heatmap_shown.connect(lambda: shown.append(panel.view))
    assert panel.start_training(LONG)
    qtbot.waitUntil(lambda: len(shown) >= 3, timeout=TIMEOUT)
    pid = panel.training_engine.process_id
    assert pid is not None and pid != os.getpid()
    if hasattr(os, "getpriority"):
        assert os.getpriority(os.PRIO_PROCESS, pid) > os.getpriority(os.PRIO_PROCESS, 0)  # the window wins the CPU
    assert len(panel.losses) > 0
    assert requests == [] and computed == []  # live updates: no similarity, no reordering here
    views = [v for v in shown if v is not None]
    assert len({id(v) for v in views}) >= 3  # new matrices, each drawn as it came
    assert all(sorted(v.ids) == sorted(panel.token_ids()) and v.reordered for v in views)
    assert np.allclose(panel.heatmap.matrix, panel.view.matrix)
    assert np.allclose(np.diag(panel.view.matrix), 1.0, atol=1e-5)
    assert panel.cancel_training()
    assert panel.training_engine.wait_idle(10_000)


def test_changing_the_tokens_while_training_changes_the_live_view(panel, qtbot):
    assert panel.start_training(LONG)
    qtbot.waitUntil(lambda: len(panel.losses) > 0, timeout=TIMEOUT)
    panel.mode_box.setCurrentIndex(panel.mode_box.findData("frequent"))
    panel.count_spin.setValue(7)
    want = sorted(panel.corpus.frequent_ids(7))
    seen = []
    panel.training_engine.view_ready.connect(lambda v: seen.append(sorted(v.ids)))
    qtbot.waitUntil(lambda: want in seen, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: panel.view is not None and sorted(panel.view.ids) == want, timeout=TIMEOUT)
    panel.cancel_training()


def test_a_crashed_training_process_is_reported(panel, qtbot):
    if not hasattr(signal, "SIGKILL"):
        pytest.skip("needs POSIX signals")
    assert panel.start_training(LONG)
    qtbot.waitUntil(lambda: len(panel.losses) > 0, timeout=TIMEOUT)
    with qtbot.waitSignal(panel.training_engine.failed, timeout=TIMEOUT) as blocker:
        os.kill(panel.training_engine.process_id, signal.SIGKILL)
    assert "the training process stopped unexpectedly (exit code -9)" in blocker.args[0]
    assert panel.status.text().startswith("Embedding training failed")
    assert panel.train_button.isEnabled()


def test_cancel_right_after_start_ends_the_process(panel, qtbot):
    assert panel.start_training(LONG)
    assert panel.cancel_training()  # before the process has even read its job
    assert panel.training_engine.wait_idle(10_000)
    qtbot.waitUntil(lambda: panel.training_engine.thread_count == 0, timeout=10_000)
    assert panel.losses.size == 0
    with qtbot.waitSignal(panel.training_engine.finished, timeout=TIMEOUT):  # and a new run works
        panel.start_training(EmbedTrainSettings(dim=4, epochs=1))


def test_trained_position_table_is_handed_on(panel, qtbot):
    got = []
    panel.positional_trained.connect(got.append)
    panel.context_spin.setValue(8)
    with qtbot.waitSignal(panel.training_engine.finished, timeout=TIMEOUT):
        assert panel.start_training(EmbedTrainSettings(dim=16, epochs=3, batch_size=16, context=8))
    (table,) = got
    assert table.shape == (8, 16) and table.dtype == np.float32
    assert panel.train_settings().context == 8  # the control sets what the button trains
    panel.context_spin.setValue(0)
    with qtbot.waitSignal(panel.training_engine.finished, timeout=TIMEOUT):
        assert panel.start_training(EmbedTrainSettings(dim=16, epochs=1))
    assert len(got) == 1  # no positions trained: nothing handed on


def test_engine_starts_from_a_given_table(qtbot, corpus):
    start = EmbeddingTable.random(corpus.n_vocab, 6, seed=9)
    engine = EmbeddingEngine()
    with qtbot.waitSignal(engine.finished, timeout=TIMEOUT) as blocker:
        engine.start(corpus, EmbedTrainSettings(dim=6, epochs=1, learning_rate=1e-6), start)
    table = blocker.args[0]
    assert table.dim == 6 and np.allclose(table.vectors, start.vectors, atol=1e-3)
    assert not np.array_equal(table.vectors, start.vectors)
    assert engine.shutdown()


# -- bounded drawing work per live update -------------------------------------------------------


def test_heatmap_update_with_same_labels_redraws_only_the_image(qtbot):
    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.show()
    qtbot.waitExposed(view)

    def settle():  # let the layout and the paint happen
        drain_events()
        view.graphics.viewport().repaint()
    labels = [f"t{i}" for i in range(30)]
    rng = np.random.default_rng(0)
    view.set_matrix(rng.random((30, 30)), signed=True, levels=(-1, 1), row_labels=labels, col_labels=labels)
    view.plot.getViewBox().setRange(xRange=(0, 10), yRange=(0, 10), padding=0)  # the user zooms in
    zoom = view.plot.getViewBox().viewRange()
    settle()
    drawn = []  # axes whose tick texts were laid out again
    for name in ("left", "bottom"):
        axis = view.plot.getAxis(name)
        axis.generateDrawSpecs = lambda p, _a=axis, _f=axis.generateDrawSpecs: drawn.append(_a) or _f(p)
    settle()
    assert drawn == []  # nothing changed: both axes come from their caches
    view.show_readout(2, 3)  # the mouse rests on a cell
    new = rng.random((30, 30))
    view.set_matrix(new, signed=True, levels=(-1, 1), row_labels=labels, col_labels=labels)
    settle()
    assert np.array_equal(view.image.image, new)
    assert view.readout.text() == f"row t2, column t3: {new[2, 3]:.6g}"  # the readout follows live updates
    assert drawn == []  # same labels: ticks not regenerated
    assert view.plot.getViewBox().viewRange() == zoom  # zoom kept
    view.set_matrix(new, signed=True, levels=(-1, 1), row_labels=labels[::-1], col_labels=labels[::-1])
    settle()
    assert {a.orientation for a in drawn} == {"left", "bottom"}  # other labels: new ticks on both axes
    assert view.label_of_row(0) == "t29"
    view.set_matrix(rng.random((12, 12)), signed=True, levels=(-1, 1))
    assert view.readout.text() == f"row 2, column 3: {view.matrix[2, 3]:.6g}"
    assert view.plot.getViewBox().viewRange() == [[0.0, 12.0], [0.0, 12.0]]  # a new shape resets the zoom
    view.set_matrix(rng.random((2, 2)), signed=True, levels=(-1, 1))
    assert view.readout.text().startswith("Hover over the heatmap")  # the cell is gone
    view.shutdown()


def test_loss_curve_work_is_bounded(qtbot):
    plot = LossPlot()
    qtbot.addWidget(plot)
    history = LossHistory()
    range_changes = []
    original = plot.setXRange
    plot.setXRange = lambda *a, **k: range_changes.append(a) or original(*a, **k)
    rng = np.random.default_rng(0)
    for _ in range(100):  # 100 live updates of 200 steps
        losses = 6 + rng.random(200)
        history.extend(losses, losses)
        plot.show_losses(history.losses, history.smoothed, None)
    assert len(history) == 20_000
    x, y = plot.raw_curve.getData()
    assert len(x) <= MAX_LOSS_POINTS + 1 and x[-1] == pytest.approx(20_000, abs=10)
    assert len(range_changes) <= 8  # 1, 2, 5 x 10^k steps: the axes are redrawn a few times, not 100
    big = np.linspace(7, 3, 1_000_000)
    x, y = decimate(big)
    assert len(x) <= MAX_LOSS_POINTS + 1 and y[0] == pytest.approx(7, abs=0.01) and y[-1] == pytest.approx(3, abs=0.01)
    x, y = decimate(big[:50])
    assert np.array_equal(x, np.arange(1, 51)) and y is not None and len(y) == 50


@pytest.mark.skipif(sys.platform == "win32", reason="spawns a process; POSIX paths")
def test_child_module_imports_no_qt(tmp_path):
    assert qt_modules_loaded("tokviz.engine.heatmaps.embedding_child", cwd=tmp_path) == []
