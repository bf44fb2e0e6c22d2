"""Every part of the window follows the current model: after opening a real tokenizer the title
names it, the training form says its settings do not apply, the status bar describes it; the
embedding panel's Train says why it cannot act; merge k is step k in the captions."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from tests.conftest import shared_file
from tokviz.core import TrainSettings

GPT2 = ("vocab", "gpt2-data-gym", "vocab.bpe")


def _train(window, merges=12):
    window.script.set_corpus_text("low lower lowest newer newest " * 20, word_counts=False)
    assert window.script.start_training(TrainSettings(merges=merges, split="gpt2"))
    assert window.script.wait_for_training(60_000) == "finished"


def _open_gpt2(window):
    assert window.script.open_tokenizer(str(shared_file(*GPT2)))
    assert window.script.wait_for_tokenizer(60_000) == "opened"


def test_opening_a_tokenizer_updates_title_form_and_status(window, qtbot):
    _train(window)
    assert "Trained 12" in window.training_status.text
    assert not window.windowTitle().startswith("vocab")
    _open_gpt2(window)
    name = window.script.timeline.settings.name
    assert window.windowTitle().startswith(f"{name} (50,257 tokens)")
    tp = window.training_panel
    assert not tp.form_box.isEnabled() and "do not apply" in tp.form_box.toolTip()
    assert tp.loaded_note.isVisibleTo(tp) and "training settings do not apply" in tp.loaded_note.text()
    assert window.training_status.text == f"Opened {name} (50,257 tokens)"
    assert "Trained" not in window.training_status.text
    qtbot.mouseClick(tp.edit_settings_button, Qt.MouseButton.LeftButton)
    assert tp.form_box.isEnabled() and not tp.loaded_note.isVisibleTo(tp)


def test_training_again_makes_the_form_apply_and_the_title_name_the_corpus(window, qtbot):
    _open_gpt2(window)
    assert not window.training_panel.form_box.isEnabled()
    _train(window, merges=8)
    assert window.training_panel.form_box.isEnabled()
    assert "50,257 tokens" not in window.windowTitle()
    assert window.training_status.text.startswith("Trained 8")


def test_embedding_train_is_disabled_with_a_reason_until_there_is_something_to_train_on(window, qtbot):
    panel = window.script.panel("embeddings")
    assert panel.corpus is None  # a new window: no tokenizer trained or opened
    assert not panel.train_button.isEnabled()
    assert "Nothing to train on yet" in panel.train_button.toolTip()


def test_merge_captions_number_merges_as_steps(window, qtbot):
    _train(window)
    window.step_model.set_step(5)
    window.timeline_panel.refresh()
    texts = [w.text() for w in window.timeline_panel.findChildren(QLabel)]
    assert any("Merge 5 (step 5)" in t for t in texts), texts
    assert not any("to step" in t for t in texts)


def test_the_candidates_area_of_a_loaded_tokenizer_is_a_caption_not_an_empty_band(window, qtbot):
    _open_gpt2(window)
    window.show()
    qtbot.waitExposed(window)
    window.timeline_panel.refresh()
    view = window.timeline_panel.candidates_view
    assert not view.table.isVisibleTo(view)
    assert "loaded, not trained here" in view.label.text()
    assert view.maximumHeight() <= view.fontMetrics().lineSpacing() * 4 + 8
    _train(window)
    window.timeline_panel.refresh()
    assert view.table.isVisibleTo(view) and view.maximumHeight() > 10_000
