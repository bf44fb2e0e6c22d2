"""While a run is followed live, and while the user moves the step, the timeline refreshes a quarter
of its views per frame: the merge table (whose rows wait for its turn), the candidates and
provenance, the corpus, the chart."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import pytest

from tests.panels.test_frame_turns import Frames
from tests.qt_fixtures import append_steps
from tokviz.core import TrainSettings
from tokviz.core.bpe.timeline import train
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.panels import frame_turns as frame_turns_module
from tokviz.panels.frame_turns import frame_turns
from tokviz.panels.timeline.panel import TimelinePanel

LOW = TrainSettings(units="chars", split="whitespace", end_of_word="_", merges=10)


@pytest.fixture(autouse=True)
def frames_only(monkeypatch):
    """A turn waits for a painted frame, never for the claim's lapse: on a loaded machine the
    60 ms lapse (for windows that do not paint) came before the frame, and a part ran without one."""
    monkeypatch.setattr(frame_turns_module, "RELEASE_MS", 10_000)


@pytest.fixture(scope="module")
def low_timeline():
    return train(LOW, texts=[sample("low-lower-lowest").read()])


def _record_turns(p, monkeypatch):
    """(frames painted, turns): each refresh's part (or "chart") with the frames painted before it."""
    frames = Frames(p)
    turns = []
    refresh, update_chart = p.merges.refresh, p.merges.update_chart
    monkeypatch.setattr(p.merges, "refresh", lambda k, phase=None: (turns.append((phase, frames.count)),
                                                                     refresh(k, phase)))
    monkeypatch.setattr(p.merges, "update_chart", lambda: (turns.append(("chart", frames.count)), update_chart()))
    return frames, turns


@pytest.fixture
def live(qtbot, low_timeline, monkeypatch):
    """A panel following a run that has no steps yet; `turns` records each refresh's part with
    the number of frames painted before it."""
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    p.set_corpus(sample("low-lower-lowest").read())
    model.set_timeline(replace(low_timeline, steps=[], finished=False), source="training")
    p.resize(1200, 500)
    p.show()
    qtbot.waitExposed(p)
    _frames, turns = _record_turns(p, monkeypatch)
    # the empty run shown: its chart drawn, the views' round over
    qtbot.waitUntil(lambda: "chart" in {part for part, _ in turns} and not p.pacing.pending
                    and frame_turns(p).waiting == 0, timeout=5_000)
    turns.clear()
    return p, model, turns


def _wait_idle(qtbot, p) -> None:
    qtbot.waitUntil(lambda: not p.pacing.pending and frame_turns(p).waiting == 0, timeout=5_000)


def _shown(qtbot, timeline, corpus: str = ""):
    """A panel on screen showing `timeline`, every refresh done: (panel, its step model)."""
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    if corpus:
        p.set_corpus(corpus)
    model.set_timeline(timeline)
    p.resize(1200, 500)
    p.show()
    qtbot.waitExposed(p)
    _wait_idle(qtbot, p)
    return p, model


def test_each_live_part_gets_a_frame_of_its_own(live, low_timeline, qtbot):
    p, model, turns = live
    append_steps(model, low_timeline.steps[:4])
    assert p.merge_model.rowCount() == 0  # the rows wait for the merge table's turn
    qtbot.waitUntil(lambda: len(turns) >= 4, timeout=5_000)
    parts = [part for part, _ in turns[:4]]
    assert parts == [0, 1, 2, "chart"]  # the chart's turn brings the new data (and the cursor)
    frames = [n for _, n in turns[:4]]
    assert frames[0] < frames[1] < frames[2] < frames[3]  # a painted frame between any two parts
    assert p.merge_model.rowCount() == 4
    assert p.table.selectionModel().currentIndex().row() == 3  # the newest merge selected
    assert p.chart.x_range[1] >= 4


def test_no_turns_once_every_part_shows_the_newest_step(live, low_timeline, qtbot):
    p, model, turns = live
    append_steps(model, low_timeline.steps[:4])
    qtbot.waitUntil(lambda: len(turns) >= 4, timeout=5_000)
    assert not p.pacing.pending and frame_turns(p).waiting == 0  # nothing more is scheduled
    assert len(turns) == 4


def test_the_run_ending_or_a_step_picked_shows_every_row_at_once(live, low_timeline, qtbot):
    p, model, turns = live
    append_steps(model, low_timeline.steps[:4])
    model.set_step(2)  # the user takes the step: the table must hold the row picked, and the rest
    assert p.merge_model.rowCount() == 4
    model.follow_latest()
    append_steps(model, low_timeline.steps[4:])
    assert p.merge_model.rowCount() == 4  # following again: held for the table's turn
    model.timeline.finished = True
    n = len(turns)
    model.mark_finished(model.timeline)
    assert p.merge_model.rowCount() == 10
    qtbot.waitUntil(lambda: any(part in (None, 0) for part, _ in turns[n:]) and not p.pacing.pending, timeout=5_000)
    assert p.table.selectionModel().currentIndex().row() == 9  # the last step shown


def test_a_step_the_user_moves_to_is_shown_a_part_per_frame(qtbot, low_timeline, monkeypatch):
    """Dragging the slider: each step change refreshes the views in four parts with a painted
    frame between them (together they overran a frame on a busy machine), the last part showing
    the step the user ended on."""
    p, model = _shown(qtbot, low_timeline, corpus=sample("low-lower-lowest").read())
    frames = Frames(p)
    turns = []
    refresh = p.merges.refresh
    monkeypatch.setattr(p.merges, "refresh", lambda k, phase=None: (turns.append((phase, k, frames.count)),
                                                                     refresh(k, phase)))
    model.set_step(3)
    qtbot.waitUntil(lambda: len(turns) >= 4, timeout=5_000)
    model.set_step(7)  # a second move after the round: a round of its own
    qtbot.waitUntil(lambda: len(turns) >= 8 and not p.pacing.pending, timeout=5_000)
    assert [(part, k) for part, k, _ in turns] == [(part, k) for k in (3, 7) for part in range(4)]
    painted = [n for _, _, n in turns]
    assert all(a < b for a, b in pairwise(painted))  # a painted frame between any two parts
    assert p.table.selectionModel().currentIndex().row() == 6  # merge 7 selected


def test_a_hidden_panel_refreshes_every_part_at_once(qtbot, low_timeline, monkeypatch):
    model = StepModel()
    p = TimelinePanel(model)
    qtbot.addWidget(p)
    model.set_timeline(low_timeline)
    turns = []
    refresh = p.merges.refresh
    monkeypatch.setattr(p.merges, "refresh", lambda k, phase=None: (turns.append(phase), refresh(k, phase)))
    model.set_step(5)
    qtbot.waitUntil(lambda: not p.pacing.pending, timeout=5_000)
    assert turns == [None]


def test_playback_refreshes_every_view_at_every_step(qtbot, low_timeline, monkeypatch):
    """Playing, each step shows whole (a round would show each view a different step)."""
    p, model = _shown(qtbot, low_timeline)
    turns = []
    refresh = p.merges.refresh
    monkeypatch.setattr(p.merges, "refresh", lambda k, phase=None: (turns.append(phase), refresh(k, phase)))
    model.set_step(0)
    p.playback.set_speed(30)
    p.playback.play()
    qtbot.waitUntil(lambda: model.step >= 4, timeout=5_000)
    p.playback.pause()
    assert turns and set(turns) == {None}


def test_a_switch_of_models_repaints_the_table_then_the_chart_and_each_part(qtbot, low_timeline, monkeypatch):
    """The merge table resets at once; the chart's new data and each part of the round wait for
    a painted frame of their own (in one frame they overran it on a busy machine)."""
    p, model = _shown(qtbot, low_timeline)
    frames, turns = _record_turns(p, monkeypatch)
    other = train(replace(LOW, merges=6), texts=["low lower lowest newest " * 5])
    at_switch = frames.count
    model.set_timeline(other)
    assert p.merge_model.rowCount() == 6  # the table at once
    _wait_idle(qtbot, p)
    parts = [part for part, _ in turns]
    assert sorted(parts, key=str) == [0, 1, 2, 3, "chart"] and [q for q in parts if q != "chart"] == [0, 1, 2, 3]
    painted = [at_switch] + [n for _, n in turns]
    assert all(a < b for a, b in pairwise(painted))  # a painted frame before each


def test_a_switch_between_two_merge_models_leaves_the_tabs_alone(qtbot, low_timeline, monkeypatch):
    """The tabs do not change between two BPE models: setting them again laid them out again and
    repainted the whole right side of the panel with every switch."""
    p, model = _shown(qtbot, low_timeline)
    calls = []
    for name in ("setTabVisible", "setTabEnabled", "setTabToolTip", "setCurrentIndex", "setCurrentWidget"):
        monkeypatch.setattr(p.tabs, name, lambda *a, name=name: calls.append(name))
    for tl in (train(replace(LOW, merges=6), texts=["low lower lowest newest " * 5]), low_timeline):
        model.set_timeline(tl)
        _wait_idle(qtbot, p)
    assert calls == []
