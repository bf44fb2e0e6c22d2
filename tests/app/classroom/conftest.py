"""Fixtures for the classroom tests: a main window with a small BPE run trained in it."""

from __future__ import annotations

import pytest

from tokviz.core import TrainSettings

TEXT = "low lower lowest newer newest wider widest " * 30


@pytest.fixture
def trained_window(window):
    """The main window after training 15 GPT-2-split merges on a short repeated text."""
    window.script.set_corpus_text(TEXT, word_counts=False)
    assert window.script.start_training(TrainSettings(merges=15, split="gpt2"))
    assert window.script.wait_for_training(60_000) == "finished"
    return window
