"""`WhyTab`: why this tokenization, side by side: every stage of each listed tokenizer's pipeline
on one span of text (`tokviz.core.compare.trace`), one column per tokenizer (a model listed twice
at two steps compares the steps), the first stage where they differ marked.

The span is traced as it is typed: each model is opened once (on the worker thread, the first
time) and kept while it is listed, so a trace is milliseconds, not a file read per model.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QTimer, Slot
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QLineEdit, QTableWidget, QTableWidgetItem, QWidget

from tokviz.core import Cancelled
from tokviz.core.compare import OpenedModels
from tokviz.core.compare.report import short_labels
from tokviz.core.compare.trace import STAGES, first_divergence, trace_pipeline

from ..base import monospace_font
from ..widgets import vbox
from .tab import CompareTab

MAX_SPAN_CHARS = 2000  # a span, not a corpus: each stage is shown whole
DIVERGENCE_COLOR = "#E69F00"
TYPING_PAUSE_MS = 250  # trace once typing pauses, not on every key


def trace_all(specs, text: str, *, should_stop, progress, opened: OpenedModels | None = None):
    """Each model's pipeline trace of `text` (models opened on the worker thread, once when
    `opened` keeps them)."""
    opened = opened if opened is not None else OpenedModels()
    out = []
    for k, spec in enumerate(specs):
        if should_stop():
            raise Cancelled()
        progress(f"Tracing {spec.label}…", k / len(specs))
        out.append(trace_pipeline(opened.timeline(spec), text, step=spec.step, label=spec.label))
    return out


class WhyTab(CompareTab):
    RUN_TEXT = "Trace"
    N_MODELS = 0
    HINT = "Type or paste a span: every tokenizer of the list shows each stage, the first difference marked."

    def __init__(self, specs: list, current_text, parent: QWidget | None = None) -> None:
        super().__init__("compare_why", specs, parent)
        self.current_text = current_text  # () -> str: the token view's text, to start from
        self.span = QLineEdit(objectName="compare_why_span", placeholderText="a span of text, e.g. “ 12345 hello”")
        self.span.returnPressed.connect(self.run)
        self.opened = OpenedModels()  # the listed models, opened by the first trace
        self.typing = QTimer(self, singleShot=True, interval=TYPING_PAUSE_MS)
        self.typing.timeout.connect(self._on_typing_timeout)
        self.span.textEdited.connect(self.typing.start)
        self.table = QTableWidget(len(STAGES), 0, objectName="compare_why_table")
        self.table.setVerticalHeaderLabels(list(STAGES))
        self.table.setWordWrap(True)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        vbox(self, self.controls((self.span, 3)), self.progress, self.status, (self.table, 1), margins=0, spacing=4)
        self.table.setFont(monospace_font(self.font()))

    def update_models(self) -> None:
        super().update_models()
        self.opened.keep(self.specs)  # a removed model's memory goes with it

    @Slot()
    def _on_typing_timeout(self) -> None:
        if self.specs and self.span.text():
            self.run()

    def job(self, picked):
        text = self.span.text() or self.current_text()[:MAX_SPAN_CHARS].split("\n", 1)[0]
        if not text:
            self.status.setText("Type a span of text to trace.")
            return None
        self.span.setText(text)
        self.typing.stop()  # this run traces what was typed so far
        return (partial(trace_all, opened=self.opened), picked, text[:MAX_SPAN_CHARS])

    def show_result(self, traces) -> str:
        labels = short_labels([t.model for t in traces])
        self.table.setColumnCount(len(traces))
        self.table.setHorizontalHeaderLabels([f"{lab}@{t.step}" if t.step is not None else lab
                                              for lab, t in zip(labels, traces)])
        diverged = first_divergence(traces) if len(traces) > 1 else None
        for row, stage in enumerate(STAGES):
            for col, t in enumerate(traces):
                values = t.stages[stage]
                item = QTableWidgetItem((" │ " if stage != "segmentation" else "\n").join(values))
                item.setToolTip(f"{len(values)} {stage}")
                if stage == diverged:
                    item.setBackground(QBrush(QColor(DIVERGENCE_COLOR)))
                    item.setForeground(QBrush(QColor("#000000")))
                    font = QFont(self.table.font())
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, col, item)
        self.table.resizeRowsToContents()
        if len(traces) < 2:
            return "One tokenizer traced: add another (or the same one at another step) to compare."
        if diverged is None:
            return "Every stage agrees: the tokenizers cut this span the same way."
        return f"First difference: {diverged} (marked)."
