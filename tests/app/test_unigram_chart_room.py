"""The Unigram Rounds chart in the Learn workspace at 1280 x 800 (the timeline in rows): both of
its plots tall enough to read, in a window that still fits the screen."""

from __future__ import annotations

from tests.qt_fixtures import drain_events
from tokviz.core.unigram.timeline import UnigramSettings

CORPUS = "the quick brown fox jumps over the lazy dog and the lazier cat " * 40
READABLE_PX = 50  # a plot's data area: ticks and a curve that shows its shape (stacked: 0)


def test_both_rounds_plots_get_room_at_1280x800(window, qtbot):
    window.resize(1280, 800)
    window.workspaces.reset()
    window.script.set_corpus_text(CORPUS, word_counts=False)
    assert window.script.start_training(UnigramSettings(vocab_size=70, seed_min_count=1))
    assert window.script.wait_for_training(60_000) == "finished"
    panel = window.timeline_panel
    window.docks.select("timeline")
    panel.tabs.setCurrentWidget(panel.unigram.chart)
    chart = panel.unigram.chart.chart()
    drain_events()
    qtbot.waitUntil(lambda: chart.height() > 0, timeout=10_000)  # shown
    drain_events()
    assert panel.splitter.orientation() == panel.splitter.orientation().Vertical  # the panel in rows
    heights = [round(p.vb.height()) for p in chart.plots]
    assert min(heights) >= READABLE_PX, heights
    assert window.size().toTuple() == (1280, 800)
