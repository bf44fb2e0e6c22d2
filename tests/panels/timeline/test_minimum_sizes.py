"""What a trace or a sample shows never raises the timeline's minimum size: a long word's pieces
wrap in the provenance view and sampled segmentations share the room they have, so the window still
fits a 1280 x 800 screen (a hidden tab's minimum counts too)."""

from __future__ import annotations

from tests.qt_fixtures import drain_events
from tokviz.panels.timeline.provenance import ProvenanceView
from tokviz.panels.timeline.unigram import SegmentationsView


def test_a_long_trace_line_wraps_instead_of_widening_the_view(qtbot):
    view = ProvenanceView()
    qtbot.addWidget(view)
    view.show()
    drain_events()
    before = view.minimumSizeHint().width()
    view.trace_label.setText("Greedy longest match with the first 200 merges: " + " ".join(["##o", "##n"] * 40))
    drain_events()
    assert view.minimumSizeHint().width() <= before + 30


def test_sampled_segmentations_do_not_make_the_view_taller(qtbot):
    view = SegmentationsView()
    qtbot.addWidget(view)
    view.show()
    drain_events()
    before = view.minimumSizeHint().height()
    view.samples.setText("\n".join(f"un · believ · able ({i})" for i in range(8)))
    drain_events()
    assert view.minimumSizeHint().height() <= before
