"""A parity-aware timeline in the timeline panel: the caption of merge k says which language it served,
that language's tokens before and after, its premium and the Gini of all documents."""

from __future__ import annotations

import pytest

from tokviz.core.parity_bpe import ParitySettings, train
from tokviz.engine.step_model import StepModel
from tokviz.panels.timeline.panel import TimelinePanel

PARALLEL = ("English\n  all human beings are born free and equal in dignity and rights\n\n"
            "Deutsch\n  alle Menschen sind frei und gleich an Würde und Rechten geboren\n\n"
            "Français\n  tous les êtres humains naissent libres et égaux en dignité et en droits\n")


@pytest.fixture
def panel(qtbot):
    p = TimelinePanel(StepModel())
    qtbot.addWidget(p)
    p.resize(1000, 600)
    p.show()
    qtbot.waitExposed(p)
    return p


def test_caption_names_the_served_language(panel, qtbot):
    tl = train(ParitySettings(merges=12, hybrid=2, min_count=1), texts=[PARALLEL])
    served = tl.steps[5].served
    panel.step_model.set_timeline(tl, source="test")
    panel.step_model.set_step(6)
    label = panel.candidates_view.label
    qtbot.waitUntil(lambda: "served:" in label.text(), timeout=10_000)
    assert f"served: {tl.documents[served]} (document {served + 1}, the costliest" in label.text()
    assert f"Gini {tl.parity_at(6).gini:.3f}" in label.text()
    panel.step_model.set_step(1)
    qtbot.waitUntil(lambda: "a global merge" in label.text(), timeout=10_000)


def test_chart_shows_the_gini_and_where_parity_begins(panel, qtbot):
    tl = train(ParitySettings(merges=12, hybrid=2, min_count=1), texts=[PARALLEL])
    panel.tabs.setCurrentWidget(panel.chart.parentWidget())
    chart = panel.chart.chart()
    panel.step_model.set_timeline(tl, source="test")
    qtbot.waitUntil(lambda: chart.captions[1].text() == "Gini of tokens per document", timeout=10_000)
    _x, y = chart.curves[1].getData()
    assert y[0] == pytest.approx(tl.parity_at(0).gini) and y[12] == pytest.approx(tl.parity_at(12).gini)
    assert {line.value() for _p, line in chart.marks} == {2}
