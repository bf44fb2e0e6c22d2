"""SuperBPE through the window's `TrainingEngine` (training in a child process): the run ends with the
same timeline as the core's, transition included; a run cancelled in stage 2 reports `cancelled`."""

from __future__ import annotations

from tests.qt_fixtures import drain_events
from tokviz.core.superbpe.timeline import SuperBpeSettings, SuperBpeTimeline, SuperBpeTraining
from tokviz.engine.training.engine import CorpusInput, TrainingEngine

SAMPLE = "the cat sat on the mat. the rat sat on the hat!! " * 40


def test_superbpe_run_matches_the_core(qtbot):
    engine = TrainingEngine()
    settings = SuperBpeSettings(merges=40, transition=20)
    with qtbot.waitSignal(engine.finished, timeout=60_000) as blocker:
        engine.start(settings, CorpusInput(SAMPLE))
    tl = blocker.args[0]
    core = SuperBpeTraining(settings, texts=[SAMPLE]).run()
    assert isinstance(tl, SuperBpeTimeline)
    assert tl.steps == core.steps
    assert tl.transition == core.transition == 17  # stage 1 ran out of pairs before 20: stage 2 began there
    assert tl.chart_marks() == [(17, "superwords from here")]
    assert engine.shutdown()


def test_cancel_in_stage_two(qtbot, long_text):
    engine = TrainingEngine()
    seen = []
    engine.steps_ready.connect(seen.extend)
    with qtbot.waitSignal(engine.steps_ready, timeout=60_000):
        engine.start(SuperBpeSettings(transition=10, min_count=1), CorpusInput(long_text))
    qtbot.waitUntil(lambda: len(seen) > 10, timeout=60_000)  # past the transition
    cancelled = []
    engine.cancelled.connect(lambda: cancelled.append(True))
    assert engine.cancel() is True
    qtbot.waitUntil(lambda: engine.thread_count == 0, timeout=10_000)
    drain_events()
    assert cancelled == [True] and not engine.is_running
    assert engine.shutdown()
