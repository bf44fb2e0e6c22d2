"""The timeline chart follows the model in use: its series are redrawn in an event of their own after
a switch or the end of a run, and end up with every step of the timeline shown."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.qt_fixtures import append_steps
from tokviz.core import TrainSettings
from tokviz.core.bpe.timeline import train
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.panels.timeline.panel import TimelinePanel

WAIT = 10_000


@pytest.fixture(scope="module")
def timelines():
    text = sample("english-prose").read()
    short = train(TrainSettings(units="bytes", split="gpt2", merges=20), texts=[text])
    long = train(TrainSettings(units="bytes", split="gpt2", merges=80), texts=[text])
    return short, long


@pytest.fixture
def panel(qtbot):
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    p.resize(1000, 600)
    p.show()
    qtbot.waitExposed(p)
    p.tabs.setCurrentWidget(p.chart.parentWidget())
    return p


def points(chart) -> int:
    x, _y = chart.curves[0].getData()
    return 0 if x is None else len(x)


def test_switching_models_redraws_the_chart_with_every_step(panel, qtbot, timelines):
    short, long = timelines
    chart = panel.chart.chart()
    panel.step_model.set_timeline(short, source="test")
    qtbot.waitUntil(lambda: points(chart) == short.n_steps + 1, timeout=WAIT)
    panel.step_model.set_timeline(long, source="test")
    qtbot.waitUntil(lambda: points(chart) == long.n_steps + 1, timeout=WAIT)
    panel.step_model.set_timeline(short, source="test")
    qtbot.waitUntil(lambda: points(chart) == short.n_steps + 1, timeout=WAIT)
    assert chart.cursor_step == short.n_steps


def test_the_end_of_a_run_draws_its_last_steps(panel, qtbot, timelines):
    _short, long = timelines
    chart = panel.chart.chart()
    run = replace(long, steps=[], finished=False)
    panel.step_model.set_timeline(run, source="test")
    append_steps(panel.step_model, long.steps[:30])
    append_steps(panel.step_model, long.steps[30:])
    run.finished = True
    panel.step_model.mark_finished(run)
    qtbot.waitUntil(lambda: points(chart) == long.n_steps + 1, timeout=WAIT)
    x, _y = chart.curves[0].getData()
    assert x[-1] == long.n_steps
