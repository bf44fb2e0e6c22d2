"""Switching back to a model reuses the tokenizer the timeline panel made for it, unless merges
were added to the model since: then it gets one with every merge, as a first visit does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.qt_fixtures import append_steps
from tokviz.core import TrainSettings
from tokviz.core.bpe.timeline import train
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.panels.timeline.panel import TimelinePanel


@pytest.fixture(scope="module")
def timelines():
    text = sample("english-prose").read()
    short = train(TrainSettings(units="bytes", split="gpt2", merges=20), texts=[text])
    long = train(TrainSettings(units="bytes", split="gpt2", merges=60), texts=[text])
    return short, long


@pytest.fixture
def panel(qtbot):
    p = TimelinePanel(StepModel())
    qtbot.addWidget(p)
    return p


def shown_tokenizer(panel):
    return panel.merges.tokenizer(panel.step_model.step)


def test_switching_back_reuses_the_same_complete_tokenizer(panel, timelines):
    short, long = timelines
    panel.step_model.set_timeline(long, source="test")
    first = shown_tokenizer(panel)
    panel.step_model.set_timeline(short, source="test")
    other = shown_tokenizer(panel)
    panel.step_model.set_timeline(long, source="test")
    again = shown_tokenizer(panel)
    assert other is not first and again is first
    assert again.merges == long.tokenizer().merges  # what a fresh build gives


def test_a_model_that_grew_meanwhile_gets_every_merge(panel, timelines):
    short, long = timelines
    run = replace(long, steps=[], finished=False)
    panel.step_model.set_timeline(run, source="test")
    append_steps(panel.step_model, long.steps[:30])
    assert shown_tokenizer(panel).n_merges == 30
    panel.step_model.set_timeline(short, source="test")
    run.steps.extend(long.steps[30:])  # the run went on while another model was shown
    panel.step_model.set_timeline(run, source="test")
    assert shown_tokenizer(panel).n_merges == long.n_merges
    assert shown_tokenizer(panel).merges == long.tokenizer().merges


def test_switching_back_finds_the_corpus_window_segmented(panel, timelines, monkeypatch, qtbot):
    """The corpus window is encoded once per model: switching back to a recent model reuses its
    segmenter (no encoding on the GUI thread) and shows what a panel seeing it first shows."""
    from tokviz.core.bpe.replay import WindowSegmenter
    from tokviz.panels.timeline import merges

    made = []

    class Counting(WindowSegmenter):
        def __init__(self, tokenizer, text):
            made.append(tokenizer)
            super().__init__(tokenizer, text)

    monkeypatch.setattr(merges, "WindowSegmenter", Counting)
    short, long = timelines
    text = sample("english-prose").read()
    panel.set_corpus(text)
    panel.show()
    qtbot.waitExposed(panel)
    for tl in (long, short, long, short, long):
        panel.step_model.set_timeline(tl, source="test")
        panel.refresh()
    assert len(made) == 2 and made[0] is not made[1]
    fresh = TimelinePanel(StepModel())
    qtbot.addWidget(fresh)
    fresh.set_corpus(text)
    fresh.step_model.set_timeline(long, source="test")
    fresh.show()
    qtbot.waitExposed(fresh)
    fresh.refresh()
    assert panel.corpus_label.text() == fresh.corpus_label.text()
    assert panel.corpus_view.toPlainText() == fresh.corpus_view.toPlainText()
    assert panel.corpus_view.fresh_count == fresh.corpus_view.fresh_count
