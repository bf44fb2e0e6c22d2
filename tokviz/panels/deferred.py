"""`DeferredChart`: a chart (`tokviz.panels.step_chart.StepChart`) made the first time it is on screen.

The merge timeline's Chart and Rounds tabs draw with pyqtgraph, whose import alone takes about a
third of a second at start-up, while neither tab is on the first screen. The panel puts this
placeholder in the tab instead: until the turn of the event loop after its first paint it only remembers the last value
given to each of the chart's setters (`set_series`, `set_cursor`, ...) and hands them to the chart
when it is made, in the order they came; anything else asked of it makes the chart at once.
`step_clicked` is relayed from the chart.

Making a chart takes tens of milliseconds of the GUI thread (pyqtgraph builds its plot items in
Python), so a chart that can be built in slices (`build_next()`, see `StepChart`) is built one
slice per turn of the event loop, and shown once it is complete: the window keeps answering meanwhile.

What this leaves out: the charts themselves.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

SETTERS = ("set_series", "set_cursor", "set_mode", "set_log_scale", "set_timeline", "set_marks")


class DeferredChart(QWidget):
    """Stands in for the chart `factory()` makes, until it is painted or used."""

    step_clicked = Signal(int)

    def __init__(self, factory: Callable[[], QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._factory = factory
        self._chart: QWidget | None = None
        self._building: QWidget | None = None  # the chart while it is built slice by slice
        self._calls: dict[str, tuple[tuple, dict]] = {}  # setter -> its last arguments, in the order of the calls
        self._scheduled = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    @property
    def is_built(self) -> bool:
        return self._chart is not None

    def chart(self) -> QWidget:
        """The chart, made now if it was not yet (with every remembered setting applied)."""
        if self._chart is None:
            chart = self._building if self._building is not None else self._factory()
            self._building = None
            if hasattr(chart, "finish_build"):
                chart.finish_build()
            self._install(chart)
        return self._chart

    def _build_next(self) -> None:
        """One slice of the chart's construction; shown once the last slice is done."""
        if self._chart is not None:
            return
        if self._building is None:
            self._building = self._factory()
            if not hasattr(self._building, "build_next"):
                self.chart()
                return
        else:
            self._building.resize(self.size())  # its layout for the size it will have on screen
            if self._building.build_next():
                self._building, chart = None, self._building
                self._install(chart)
                return
        QTimer.singleShot(0, self, self._build_next)

    def _install(self, chart: QWidget) -> None:
        self._chart = chart
        self.layout().addWidget(chart)
        chart.show()  # now, not from the event loop: it gets resize events from here on
        chart.step_clicked.connect(self.step_clicked)
        calls, self._calls = self._calls, {}
        for name, (args, kwargs) in calls.items():
            getattr(chart, name)(*args, **kwargs)

    def paintEvent(self, event) -> None:  # on screen (a tab behind another one is "shown" too)
        if self._chart is None and not self._scheduled:  # made right after this paint, not during it:
            self._scheduled = True  # on the first screen (the Learn workspace shows the Chart tab)
            QTimer.singleShot(0, self, self._build_next)  # the window appears before the chart is built
        super().paintEvent(event)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in SETTERS:  # also when connected to a signal before the chart exists
            def setter(*args, **kwargs) -> None:
                if self._chart is not None:
                    getattr(self._chart, name)(*args, **kwargs)
                else:
                    self._calls.pop(name, None)
                    self._calls[name] = (args, kwargs)
            return setter
        return getattr(self.chart(), name)
