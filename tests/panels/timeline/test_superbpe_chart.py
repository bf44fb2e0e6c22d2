"""A SuperBPE timeline's chart: a labelled line at the transition ("superwords from here") and bytes
per token in the middle plot, jumping after it; a BPE timeline has neither."""

from __future__ import annotations

import pytest

from tokviz.core import TrainSettings
from tokviz.core.bpe.timeline import train
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTraining
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.panels.timeline.panel import TimelinePanel

WAIT = 10_000


@pytest.fixture(scope="module")
def timelines():
    text = sample("english-prose").read()
    plain = train(TrainSettings(merges=120), texts=[text])
    sb = SuperBpeTraining(SuperBpeSettings(merges=120, transition=80), texts=[text]).run()
    return plain, sb


@pytest.fixture
def panel(qtbot):
    p = TimelinePanel(StepModel())
    qtbot.addWidget(p)
    p.resize(1000, 600)
    p.show()
    qtbot.waitExposed(p)
    p.tabs.setCurrentWidget(p.chart.parentWidget())
    return p


def test_transition_is_marked_and_bytes_per_token_shown(panel, qtbot, timelines):
    plain, sb = timelines
    chart = panel.chart.chart()
    panel.step_model.set_timeline(sb, source="test")
    qtbot.waitUntil(lambda: len(chart.marks) == len(chart.plots), timeout=WAIT)
    assert {line.value() for _p, line in chart.marks} == {80}
    assert all(line.label.toPlainText() == "superwords from here →" for _p, line in chart.marks)
    assert chart.captions[1].text() == "Bytes per token"
    _x, y = chart.curves[1].getData()
    assert y[0] == 1.0 and y[-1] == pytest.approx(sb.corpus_length / sb.steps[-1].length)
    plain_ratio = plain.corpus_length / plain.steps[-1].length
    assert y[80] == pytest.approx(plain.corpus_length / plain.steps[79].length)  # plain BPE up to t
    assert y[-1] > plain_ratio  # superwords pack more bytes into each token
    panel.step_model.set_timeline(plain, source="test")
    qtbot.waitUntil(lambda: not chart.marks, timeout=WAIT)
    assert chart.captions[1].text() == "Vocabulary size"
