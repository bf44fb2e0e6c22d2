"""`ModelCue`: the line above a view that names the tokenizer it shows and at which step.

The token view, the vocabulary and the Chat view sit side by side and can show different
tokenizers (the Chat view keeps a model folder of its own, the window may be at step 12 of a
run): each says which one it shows, and a cue whose tokenizer differs from its neighbours' is drawn
as a warning. `describe_step` is the one wording of "tokenizer + step" these cues use.

What this leaves out: deciding whether two views differ (the view that knows both says so).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from tokviz.engine.step_model import StepModel

from .base import is_dark


def describe_step(step_model: StepModel) -> str:
    """``GPT-2 · step 12 of 50,000`` (rich text), the tokenizer and step `step_model` is at."""
    tl = step_model.timeline
    if tl is None:
        return "no tokenizer yet: train one or open one"
    k, n = step_model.step, step_model.n_steps
    origin = "" if not tl.has_counts else " trained here"
    last = " (the whole vocabulary)" if k == n and not tl.has_counts else ""
    return f"<b>{html.escape(tl.title)}</b>{origin} · step {k:,} of {n:,}{last}"


def warning_colors(palette: QPalette) -> tuple[QColor, QColor]:
    """(background, text) of a cue that differs from its neighbours: amber, readable in both themes."""
    if is_dark(palette):
        return QColor("#4d3a00"), QColor("#ffe08a")
    return QColor("#fff3c4"), QColor("#5c4000")


class ModelCue(QLabel):
    """"PREFIX: tokenizer · step"; `follow(step_model)` keeps it up to date, `set_cue` sets it by
    hand; `differs` draws it as a warning."""

    def __init__(self, prefix: str, parent: QWidget | None = None, *, object_name: str = "",
                 step_model: StepModel | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.prefix = prefix
        self.differs = False
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # long names: cut
        self.setContentsMargins(4, 1, 4, 1)
        self._step_model: StepModel | None = None
        if step_model is not None:
            self.follow(step_model)

    def follow(self, step_model: StepModel) -> None:
        """Name `step_model`'s tokenizer and step, whenever either changes."""
        self._step_model = step_model
        step_model.timeline_changed.connect(self._update_from_model)
        step_model.step_changed.connect(self._update_from_model)
        step_model.finished_changed.connect(self._update_from_model)
        self._update_from_model()

    def _update_from_model(self, *_args) -> None:
        text, tip = self.describe(self._step_model)
        self.set_cue(text, tip=tip)

    def refresh(self) -> None:
        """Name what the view shows again (what it shows changed without the step model)."""
        if self._step_model is not None:
            self._update_from_model()

    def describe(self, step_model: StepModel) -> tuple[str, str]:
        """(rich text, tooltip) of what the view shows: `step_model`'s tokenizer and step; a view
        that can show something else says so by overriding this."""
        source = step_model.source
        return describe_step(step_model), source if source not in ("", "training") else ""

    def set_cue(self, rich_text: str, *, tip: str = "", differs: bool = False) -> None:
        self.setText(f"{html.escape(self.prefix)}: {rich_text}")
        self.setToolTip(tip)
        if differs != self.differs:
            self.differs = differs
            self._apply_style()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self.differs:
            self._apply_style()
        super().changeEvent(event)

    def _apply_style(self) -> None:
        sheet = ""
        if self.differs:  # the theme's colours: the parent's palette, which the sheet does not change
            bg, fg = warning_colors(self.parentWidget().palette() if self.parentWidget() else self.palette())
            sheet = f"background:{bg.name()}; color:{fg.name()}; border-radius:3px;"
        if sheet != self.styleSheet():  # setting a sheet changes the palette: only when it is new
            self.setStyleSheet(sheet)
