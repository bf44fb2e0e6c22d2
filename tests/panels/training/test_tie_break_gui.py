"""The training panel's tie-break choice (first occurrence / Hugging Face order) reaches the
training settings, the trained timeline, the saved settings and the tie explanations."""

from __future__ import annotations

from tokviz.core import TrainSettings
from tokviz.core.bpe.replay import decision_at
from tokviz.panels.training.panel import TrainingPanel


def test_panel_choice_round_trips_and_is_validated(qtbot):
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    box = panel.tie_break_box
    assert [box.itemData(i) for i in range(box.count())] == ["first", "hf"]
    assert panel.settings().tie_break == "first"
    box.setCurrentIndex(box.findData("hf"))
    assert panel.settings().tie_break == "hf"
    panel.set_settings(TrainSettings(vocab_size=300))
    assert box.currentData() == "first"
    panel.set_settings(TrainSettings(vocab_size=300, tie_break="hf"))
    assert box.currentData() == "hf" and panel.is_valid
    panel.eow_box.setChecked(True)  # HF has no end-of-word marker in this sense
    assert not panel.is_valid and not panel.train_button.isEnabled()
    assert "tie-break hf has no end-of-word marker" in panel.validation_message.lower()
    panel.eow_box.setChecked(False)
    assert panel.is_valid


def test_window_trains_with_hf_ties_and_remembers_the_choice(window, settings_store):
    panel = window.training_panel
    panel.set_settings(TrainSettings(split="none", merges=3))
    panel.tie_break_box.setCurrentIndex(panel.tie_break_box.findData("hf"))
    window.corpus_panel.editor.setPlainText("aaabdaaabac")
    assert window.script.start_training()
    assert window.script.wait_for_training(30_000) == "finished"
    timeline = window.step_model.timeline
    assert timeline.settings.tie_break == "hf"
    assert timeline.merges() == [(97, 97), (97, 98), (256, 257)]  # first occurrence: (256, 97) second
    assert "Hugging Face" in decision_at(timeline, 2).candidates[0].reason
    assert settings_store.train_settings().tie_break == "hf"
