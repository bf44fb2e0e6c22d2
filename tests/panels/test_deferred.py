"""A deferred chart that can be built in slices is built one slice per turn of the event loop,
and ends up complete, shown, with every remembered setting applied."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from tokviz.panels.deferred import DeferredChart


class _SlicedChart(QWidget):
    """Needs four `build_next` calls; records the setters it receives and whether it was complete."""

    step_clicked = Signal(int)

    def __init__(self, *, held: bool = False) -> None:
        super().__init__()
        self.slices = 0
        self.calls = []
        self.held = held  # slices go on but the build never completes from the event loop

    @property
    def complete(self) -> bool:
        return self.slices >= 4 and not self.held

    def build_next(self) -> bool:
        self.slices += 1
        return self.complete

    def finish_build(self) -> None:
        self.held = False
        while not self.build_next():
            pass

    def set_cursor(self, k):
        self.calls.append(("set_cursor", k, self.complete))


def test_a_sliced_chart_is_built_across_events_then_shown(qtbot):
    made = []
    holder = QWidget()
    qtbot.addWidget(holder)
    chart = DeferredChart(lambda: made.append(_SlicedChart()) or made[-1])
    QVBoxLayout(holder).addWidget(chart)
    chart.set_cursor(4)
    holder.resize(300, 200)
    holder.show()
    qtbot.waitExposed(holder)
    qtbot.waitUntil(lambda: chart.is_built, timeout=10_000)
    real = made[0]
    assert real.slices == 4 and real.isVisible()
    assert real.calls == [("set_cursor", 4, True)]  # applied to the complete chart
    assert len(made) == 1


def test_asking_for_a_chart_mid_build_finishes_it(qtbot):
    made = []
    holder = QWidget()
    qtbot.addWidget(holder)
    chart = DeferredChart(lambda: made.append(_SlicedChart(held=True)) or made[-1])
    QVBoxLayout(holder).addWidget(chart)
    holder.resize(300, 200)
    holder.show()
    qtbot.waitExposed(holder)
    qtbot.waitUntil(lambda: bool(made) and made[0].slices >= 5, timeout=10_000)
    assert not chart.is_built
    real = chart.chart()
    assert real is made[0] and real.complete and chart.is_built


@pytest.mark.parametrize("kind", ["TimelineChart", "UnigramChart"])
def test_a_chart_built_in_slices_equals_one_built_at_once(qtbot, kind):
    from tokviz.panels.timeline import chart as module

    whole = getattr(module, kind)()
    sliced = getattr(module, kind)(sliced=True)
    qtbot.addWidget(whole)
    qtbot.addWidget(sliced)
    n = 1
    while not sliced.build_next():
        n += 1
    assert n > 3  # really sliced
    a, b = whole, sliced
    assert len(a.plots) == len(b.plots) == len(a.curves) == len(b.curves) == len(b.cursors) > 1
    assert [p in a.ci.items for p in a.plots] == [p in b.ci.items for p in b.plots]
    assert [p.vb.menu is None for p in b.plots] == [True] * len(b.plots)
    assert [c.opts["pen"].color().name() for c in a.curves] == [c.opts["pen"].color().name() for c in b.curves]
    assert [p.getAxis("left").width() for p in a.plots] == [p.getAxis("left").width() for p in b.plots]
    for p in b.plots:  # the axes a plain plot shows, and no more
        assert [p.getAxis(side).isVisibleTo(p) for side in ("left", "bottom", "top", "right")] == [
            True, True, False, False]
        assert p.getAxis("left").parentItem() is p and p.getAxis("left").linkedView() is p.vb
    if kind == "TimelineChart":
        assert [c.text() for c in a.captions] == [c.text() for c in b.captions]
        assert a.shown == b.shown
