"""Embedding similarity panel and engine: tokenizing, random/trained/loaded tables, training with
cancel, heatmap values, neighbours, parameter count; and both heatmap panels in the main window."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.qt_fixtures import drain_events
from tokviz.core import TrainSettings
from tokviz.core.embeddings import REFERENCE_MODELS, EmbedTrainSettings, cosine_similarity, nearest_neighbours
from tokviz.engine.heatmaps.embedding_engine import EmbeddingEngine, NeighboursModel
from tokviz.engine.step_model import StepModel
from tokviz.engine.workspace import Workspace
from tokviz.panels.corpus.panel import CorpusPanel
from tokviz.panels.heatmaps.embedding_panel import EmbeddingPanel

from .embedding_helpers import TEXT, TIMEOUT, shown_panel, small_corpus, small_timeline


@pytest.fixture(scope="module")
def timeline():
    return small_timeline()


@pytest.fixture(scope="module")
def corpus(timeline):
    return small_corpus(timeline)


@pytest.fixture
def panel(qtbot, corpus):
    yield from shown_panel(qtbot, corpus)


def test_tokenize_corpus(timeline, corpus):
    tok = timeline.tokenizer()
    assert corpus.n_vocab == tok.n_vocab == timeline.vocab_size
    assert corpus.text_ids == tuple(tok.encode_ids("the cat sat on the mat"))
    assert corpus.n_tokens == sum(len(s) for s in corpus.sequences)
    assert len(corpus.sequences) == 60  # one per paragraph
    assert corpus.labels[ord("a")] == "a" and corpus.labels[ord(" ")] == "␣"
    assert corpus.frequent_ids(1) == [int(np.argmax(corpus.counts))]


def test_random_table_heatmap_is_cosine_of_text_tokens(panel, corpus):
    assert panel.table.n_vocab == corpus.n_vocab and panel.table.dim == 32
    assert panel.table.source == "random (seed 0)"
    assert sorted(panel.view.ids) == sorted(set(corpus.text_ids))
    m = panel.heatmap.image.image
    assert np.allclose(m, cosine_similarity(panel.table.vectors, panel.view.ids))
    assert np.allclose(m, m.T) and np.allclose(np.diag(m), 1.0)
    assert panel.heatmap.image.levels.tolist() == [-1.0, 1.0]


def test_token_set_modes_and_reorder(panel, qtbot, corpus):
    with qtbot.waitSignal(panel.heatmap_shown, timeout=TIMEOUT):
        panel.mode_box.setCurrentIndex(panel.mode_box.findData("frequent"))
    with qtbot.waitSignal(panel.heatmap_shown, timeout=TIMEOUT):
        panel.count_spin.setValue(12)
    assert sorted(panel.view.ids) == sorted(corpus.frequent_ids(12))
    with qtbot.waitSignal(panel.heatmap_shown, timeout=TIMEOUT):
        panel.reorder_box.setChecked(False)
    assert panel.view.ids == corpus.frequent_ids(12)  # frequency order when not grouped
    assert panel.heatmap.label_of_row(0) == corpus.labels[corpus.frequent_ids(1)[0]]


def test_hover_shows_pair_and_value(panel):
    a, b = panel.view.ids[0], panel.view.ids[1]
    text = panel.heatmap.show_readout(0, 1)
    value = float(panel.heatmap.matrix[0, 1])
    assert text == f"cos(‘{panel.corpus.labels[a]}’ #{a}, ‘{panel.corpus.labels[b]}’ #{b}) = {value:.4f}"


def test_training_lowers_loss_and_updates_heatmap(panel, qtbot):
    before = panel.heatmap.image.image.copy()
    progressed = []
    panel.training_engine.progressed.connect(lambda steps, table: progressed.append(len(steps)))
    with qtbot.waitSignal(panel.training_engine.finished, timeout=TIMEOUT):
        assert panel.start_training(EmbedTrainSettings(dim=16, epochs=30, batch_size=64, learning_rate=0.05))
    # the trained table's similarities come from a worker after `finished`: wait until they are shown
    qtbot.waitUntil(lambda: panel.view is not None and panel.view.matrix.shape[0] > 0 and np.allclose(
        panel.heatmap.image.image, cosine_similarity(panel.table.vectors, panel.view.ids)), timeout=TIMEOUT)
    drain_events()
    assert sum(progressed) == len(panel.losses) > 10
    assert np.mean(panel.losses[-5:]) < np.mean(panel.losses[:5]) * 0.6
    assert panel.smoothed[-1] < panel.info.unigram_loss < panel.info.uniform_loss
    assert panel.table.dim == 16 and panel.table.source.startswith("trained")
    assert panel.dim_spin.value() == 16
    after = panel.heatmap.image.image
    assert after.shape == before.shape and not np.allclose(after, before)
    assert np.allclose(after, cosine_similarity(panel.table.vectors, panel.view.ids))
    assert panel.status.text().startswith(f"Trained {len(panel.losses):,} steps")
    x, y = panel.loss_plot.raw_curve.getData()
    assert len(x) == len(panel.losses) and np.allclose(y, panel.losses)


def test_cancel_stops_training(panel, qtbot):
    assert panel.start_training(EmbedTrainSettings(dim=16, epochs=100_000, batch_size=16))
    assert not panel.train_button.isEnabled() and panel.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: len(panel.losses) > 0, timeout=TIMEOUT)
    reported = []
    panel.training_engine.cancelled.connect(lambda: reported.append(True))
    panel.cancel_button.click()
    assert reported == [True]  # at once, without waiting for the process to exit
    assert not panel.training_engine.is_running
    assert panel.train_button.isEnabled()
    assert "cancelled after" in panel.status.text()
    assert panel.training_engine.wait_idle(10_000)
    n = len(panel.losses)
    drain_events()  # anything the cancelled run had queued is delivered now
    assert len(panel.losses) == n  # nothing arrives after a cancel
    # restart works
    with qtbot.waitSignal(panel.training_engine.finished, timeout=TIMEOUT):
        panel.start_training(EmbedTrainSettings(dim=8, epochs=2))
    assert panel.table.dim == 8


def test_training_failure_is_reported(panel, qtbot, corpus):
    from dataclasses import replace

    panel.corpus = replace(corpus, sequences=[np.array([1])])  # no pair of consecutive tokens
    with qtbot.waitSignal(panel.training_engine.failed, timeout=TIMEOUT):
        assert panel.start_training()
    assert panel.status.text().startswith("Embedding training failed: the training corpus has no pair")
    assert panel.train_button.isEnabled()
    assert not panel.start_training(EmbedTrainSettings(dim=0))  # invalid settings: refused at once
    assert "embedding dimension D must be" in panel.status.text()


def test_nearest_neighbours_list(panel, qtbot, qtmodeltester):
    tid = panel.view.ids[0]
    panel.select_token(tid)
    among = np.flatnonzero(panel.corpus.counts)
    expected = nearest_neighbours(panel.table.vectors, tid, 10, among=among)
    model = panel.neighbours
    assert model.rowCount() == len(expected) == 10
    assert [model.row_data(r)[0] for r in range(10)] == [i for i, _ in expected]
    assert model.index(0, 3).data() == f"{expected[0][1]:.3f}"
    assert model.index(0, 1).data() == panel.corpus.labels[expected[0][0]]
    qtmodeltester.check(model)
    panel.heatmap.cell_clicked.emit(1, 0)  # clicking a row selects that token
    assert panel.token_box.currentData() == panel.view.ids[1]


def test_neighbours_model_alone(qtmodeltester):
    model = NeighboursModel()
    qtmodeltester.check(model)
    model.set_rows([(5, "a", 0.5), (7, "b", -0.25)])
    qtmodeltester.check(model)
    assert model.index(1, 2).data() == "7"
    assert model.index(1, 3).data() == "-0.250"
    assert model.headerData(3, Qt.Orientation.Horizontal) == "Cosine"
    model.set_rows([])
    assert model.rowCount() == 0


def test_parameter_count_and_share(panel):
    v = panel.corpus.n_vocab
    ref = REFERENCE_MODELS["GPT-2 small"]
    share = v * 32 / ref.total_params
    text = panel.params_label.text()
    assert f"V × D = {v:,} × 32 = {v * 32:,} parameters: {share:.4%} of GPT-2 small (124M" in text
    panel.model_box.setCurrentText("Llama 2 7B")
    assert "of Llama 2 7B" in panel.params_label.text()


def test_load_npy(panel, qtbot, tmp_path):
    v = panel.corpus.n_vocab
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((v + 1, 8), dtype=np.float32))
    with qtbot.waitSignal(panel.load_failed, timeout=TIMEOUT) as blocker:
        panel.load_table(str(bad))
    msg = blocker.args[0]
    assert msg.startswith("Cannot load embeddings:")
    assert f"has {v + 1} rows but the tokenizer has {v} ids" in msg
    assert panel.status.text() == msg
    not_npy = tmp_path / "x.npy"
    not_npy.write_text("hello")
    with qtbot.waitSignal(panel.load_failed, timeout=TIMEOUT) as blocker:
        panel.load_table(str(not_npy))
    assert "is not a NumPy .npy file" in blocker.args[0]
    good = tmp_path / "good.npy"
    vectors = np.random.default_rng(1).standard_normal((v, 8)).astype(np.float32)
    np.save(good, vectors)
    with qtbot.waitSignal(panel.table_changed, timeout=TIMEOUT):
        panel.load_table(str(good))
    assert np.array_equal(panel.table.vectors, vectors) and panel.dim_spin.value() == 8
    assert panel.status.text().startswith("Loaded good.npy")


def test_attach_tokenizes_with_the_current_step(qtbot, timeline):
    sm = StepModel()
    corpus_panel = CorpusPanel()
    qtbot.addWidget(corpus_panel)
    corpus_panel.set_text(TEXT, title="t")
    p = EmbeddingPanel()
    qtbot.addWidget(p)
    tokens = []
    p.text_tokens_changed.connect(tokens.append)
    workspace = Workspace(sm)
    corpus_panel.bind_workspace(workspace)
    p.attach(workspace)
    assert not p.retokenize() and "Train a tokenizer" in p.status.text()
    with qtbot.waitSignal(p.corpus_tokenized, timeout=TIMEOUT) as blocker:
        sm.set_timeline(timeline)
    assert blocker.args[0].step == timeline.n_merges
    with qtbot.waitSignal(p.corpus_tokenized, timeout=TIMEOUT) as blocker:
        sm.set_step(3)
    c = blocker.args[0]
    assert c.step == 3 and c.text_ids == tuple(timeline.tokenizer().encode_ids(TEXT[:400], step=3))
    assert tokens[-1][:3] == [c.labels[i] for i in c.text_ids[:3]]
    p.shutdown()
    corpus_panel.shutdown()


def test_engine_alone_newest_run_wins(qtbot, corpus):
    engine = EmbeddingEngine()
    finished = []
    engine.finished.connect(finished.append)
    engine.start(corpus, EmbedTrainSettings(dim=4, epochs=100_000))
    engine.start(corpus, EmbedTrainSettings(dim=6, epochs=1))
    qtbot.waitUntil(lambda: bool(finished), timeout=TIMEOUT)
    assert [t.dim for t in finished] == [6]
    assert engine.shutdown() and engine.thread_count == 0


def test_main_window_docks_heatmap_panels(window, qtbot):
    assert {"embeddings", "positional"} <= set(window.docks.panel_ids())
    assert window.script.start_training(TrainSettings(vocab_size=300))
    assert window.script.wait_for_training(60_000) == "finished"
    emb = window.script.panel("embeddings")
    pos = window.script.panel("positional")
    assert window.script.select_panel("positional") is pos  # on screen, it catches up (behind a tab it waits)
    qtbot.waitUntil(lambda: emb.corpus is not None and emb.corpus.n_vocab == 300, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: " " in pos.heatmap.label_of_row(0), timeout=TIMEOUT)
    first = emb.corpus.labels[emb.corpus.text_ids[0]]
    assert pos.heatmap.label_of_row(0) == f"0 {first}"
    assert window.script.select_panel("positional") is pos
    emb.positional_trained.emit(np.ones((4, 6), dtype=np.float32))  # a trained position table reaches it
    assert pos.kind_box.findData("trained") >= 0
    if "token_view" in window.docks.panel_ids():  # the token view's text is "the current text"
        tv = window.script.panel("token_view")
        tv.set_text("zebra quagga")
        expected = window.script.timeline.tokenizer().encode_ids("zebra quagga")
        qtbot.waitUntil(lambda: emb.corpus.text_ids == tuple(expected), timeout=TIMEOUT)
        qtbot.waitUntil(lambda: pos.heatmap.label_of_row(1) == f"1 {emb.corpus.labels[expected[1]]}", timeout=TIMEOUT)
