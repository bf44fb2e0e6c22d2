"""`DeferredChart`: a chart (`tokviz.panels.step_chart.StepChart`) made the first time it is on screen.

The merge timeline's Chart and Rounds tabs draw with pyqtgraph, whose import alone takes about a
third of a second at start-up, while neither tab is on the first screen. The panel puts this
placeholder in the tab instead: until the turn of the event loop after its first paint it only remembers the last value
given to each of the chart's setters (`set_series`, `set_cursor`, ...) and hands them to the chart
when it is made, in the order they came; anything else asked of it makes the chart at once.
`step_clicked` is relayed from the chart.

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
        self._calls: dict[str, tuple] = {}  # setter -> its last arguments, in the order of the calls
        self._scheduled = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    @property
    def is_built(self) -> bool:
        return self._chart is not None

    def chart(self) -> QWidget:
        """The chart, made now if it was not yet (with every remembered setting applied)."""
        if self._chart is None:
            self._chart = self._factory()
            self.layout().addWidget(self._chart)
            self._chart.show()  # now, not from the event loop: it gets resize events from here on
            self._chart.step_clicked.connect(self.step_clicked)
            calls, self._calls = self._calls, {}
            for name, args in calls.items():
                getattr(self._chart, name)(*args)
        return self._chart

    def paintEvent(self, event) -> None:  # on screen (a tab behind another one is "shown" too)
        if self._chart is None and not self._scheduled:  # made right after this paint, not during it:
            self._scheduled = True  # on the first screen (the Learn workspace shows the Chart tab)
            QTimer.singleShot(0, self, self.chart)  # the window appears before pyqtgraph loads
        super().paintEvent(event)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in SETTERS:  # also when connected to a signal before the chart exists
            def setter(*args) -> None:
                if self._chart is not None:
                    getattr(self._chart, name)(*args)
                else:
                    self._calls.pop(name, None)
                    self._calls[name] = args
            return setter
        return getattr(self.chart(), name)
