"""The glitch panel's "Model weights…": a safetensors file chosen in the file dialog is read off the
GUI thread, Magikarp's indicators fill five new columns, the rows are ranked by both pieces of
evidence, and choosing a row draws its nearest neighbours; bad files and another model clear them."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from tests.core.weights.planted import recall, write_model
from tokviz.core import TrainSettings
from tokviz.engine.tables.glitch_model import ID_ROLE


def _ready(window, qtbot, corpus_text, merges: int = 60):
    window.script.set_corpus_text(corpus_text("tinyshakespeare.txt", 50_000), word_counts=False)
    assert window.script.start_training(TrainSettings(merges=merges, split="gpt2"))
    assert window.script.wait_for_training(60_000) == "finished"
    gp = window.script.panel("glitches")
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        assert gp.run()
    return gp


def _choose(gp, qtbot, monkeypatch, path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    action = next(a for a in gp.weights_button.menu().actions() if a.objectName() == "glitch_weights_file")
    with qtbot.waitSignal(gp.weights_ready, timeout=60_000):
        action.trigger()


def test_chosen_weights_fill_the_columns_and_a_row_draws_its_neighbours(window, qtbot, qtmodeltester, monkeypatch,
                                                                         tmp_path, corpus_text):
    gp = _ready(window, qtbot, corpus_text)
    n_vocab = window.script.timeline.tokenizer().n_vocab
    assert gp.model.columnCount() == 7 and gp.heatmap.isHidden()
    # 10 rows past the vocabulary are the known-unused reference; 20 merged tokens planted under-trained
    p = write_model(tmp_path / "model.safetensors", dtype="BF16", tied=False, vocab=n_vocab + 10, n_planted=20,
                    low=256)
    _choose(gp, qtbot, monkeypatch, p.path)
    assert gp.weights_error == "" and gp.weights is not None and not gp.weights.tied
    assert "rows past the vocabulary" in gp.weights_label.text()
    header = [gp.model.headerData(c, Qt.Orientation.Horizontal) for c in range(gp.model.columnCount())]
    assert header[6:] == ["Indicator", "Cos unused", "‖out‖", "‖in‖", "Combined", "Why"]
    rows = range(gp.model.rowCount())
    combined = [float(gp.model.index(r, 10).data()) for r in rows]
    assert combined == sorted(combined) and all(gp.model.index(r, 9).data() for r in rows)  # ‖in‖: untied
    by_indicator = sorted(rows, key=lambda r: float(gp.model.index(r, 6).data()))
    ids = [int(gp.model.index(r, 0).data(ID_ROLE)) for r in by_indicator]
    assert recall(ids, p.planted, p.reference) >= 0.9
    qtmodeltester.check(gp.model, force_py=True)
    assert gp.heatmap.isVisible() or not gp.isVisible()

    target = int(p.planted[0])
    with qtbot.waitSignal(gp.neighbours_shown, timeout=30_000) as shown:
        assert gp.select_id(target)
    assert shown.args == [target]
    m = gp.heatmap.matrix
    assert m.shape == (17, 17) and np.allclose(np.diag(m), 1.0, atol=1e-3)
    cold = set(np.r_[p.planted, p.reference].tolist())
    assert len(cold & set(gp.neighbours.ids[1:].tolist())) >= 12  # an under-trained token's neighbours are too
    assert gp.heatmap.label_of_row(0).startswith(f"{target} ")

    other = next(r for r in rows if int(gp.model.index(r, 0).data(ID_ROLE)) not in cold)
    other_id = int(gp.model.index(other, 0).data(ID_ROLE))
    with qtbot.waitSignal(gp.neighbours_shown, timeout=30_000):
        assert gp.select_id(other_id)
    assert gp.neighbours.ids[0] == other_id


def test_a_bad_file_is_a_message_and_another_model_drops_the_weights(window, qtbot, monkeypatch, tmp_path, corpus_text):
    gp = _ready(window, qtbot, corpus_text)
    bad = tmp_path / "pytorch_model.bin"
    bad.write_bytes(b"\x80\x04")
    _choose(gp, qtbot, monkeypatch, bad)
    assert gp.weights is None and "Python pickle" in gp.weights_error
    assert gp.weights_label.text().startswith("Could not read the weights:") and gp.model.columnCount() == 7
    small = write_model(tmp_path / "small.safetensors", vocab=50, n_planted=3, low=10).path
    _choose(gp, qtbot, monkeypatch, small)
    assert "50 embedding rows but the tokenizer" in gp.weights_error and gp.weights_button.isEnabled()

    n_vocab = window.script.timeline.tokenizer().n_vocab
    good = write_model(tmp_path / "m.safetensors", vocab=n_vocab + 10).path
    _choose(gp, qtbot, monkeypatch, good)
    assert gp.weights is not None and gp.model.columnCount() == 12
    window.step_model.set_timeline(None)
    assert gp.weights is None and gp.model.columnCount() == 7 and gp.heatmap.isHidden()
