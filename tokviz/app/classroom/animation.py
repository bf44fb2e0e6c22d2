"""File > Export Animation…: the timeline replay of a range of steps as a GIF or PNG sequence.

`AnimationExporter` renders one frame per event-loop turn (widgets can only be painted on the GUI
thread, so the window stays responsive): it moves the shared `StepModel` to the frame's step, lets
the chosen panel catch up (the token view encodes in the background: the frame waits for its
``result_shown`` signal, never polls), grabs it and scales it into a ``width x height`` frame
(`frames`). The frames are then encoded on a worker thread
(`TaskEngine` + `tokviz.core.io.gif`): an animated GIF, or ``frame_0001.png`` ... in a folder.
Signals: `progress_changed(what, fraction)`, then one of `finished(path)`, `cancelled()`,
`failed(message)`. The step shown before the export is restored afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QWidget

from tokviz.core import TokvizError
from tokviz.engine.step_model import StepModel
from tokviz.engine.tasks import TaskEngine
from tokviz.panels.base import Panel
from tokviz.panels.timeline.panel import TimelinePanel
from tokviz.panels.token_view.panel import TokenViewPanel

from ..services import WindowServices
from .frames import caption_strip, encode_frames, fit_image, image_to_array, render_crisp, used_size
from .presenter import step_caption

TARGETS = {"timeline": "Merge timeline (whole panel)", "corpus": "Corpus at step k",
           "token_view": "Token view (tokens)"}
FORMATS = ("gif", "png")
MAX_FRAMES = 600
FRAME_TIMEOUT_MS = 10_000  # for the token view to encode and show one frame


@dataclass(frozen=True)
class AnimationSpec:
    """What to export: steps ``first..last`` every `every`, `target` panel, size and speed."""

    path: Path  # the .gif file, or the folder of the PNG sequence
    first: int = 0
    last: int = 10
    every: int = 1
    target: str = "timeline"
    width: int = 800
    height: int = 500
    ms_per_frame: int = 500
    format: str = "gif"  # noqa: A003 - "gif" or "png"
    loop: bool = True
    caption: bool = True  # "Step k of n · merge a + b → ab" under each frame

    def steps(self) -> list[int]:
        out = list(range(self.first, self.last + 1, max(1, self.every)))
        if out and out[-1] != self.last and self.last >= self.first:
            out.append(self.last)  # always end on the last step asked for
        return out

    def check(self, n_steps: int) -> "AnimationSpec":
        """Raise `TokvizError` (saying what to change) for an impossible export."""
        if self.target not in TARGETS:
            raise TokvizError(f"unknown panel {self.target!r}; choose {', '.join(TARGETS)}")
        if self.format not in FORMATS:
            raise TokvizError(f"unknown format {self.format!r}; choose gif or png")
        if not 0 <= self.first <= self.last <= n_steps:
            raise TokvizError(f"steps {self.first}..{self.last} are outside 0..{n_steps}")
        if not (16 <= self.width <= 4096 and 16 <= self.height <= 4096):
            raise TokvizError("the frame size must be between 16 and 4096 pixels")
        if not 10 <= self.ms_per_frame <= 60_000:
            raise TokvizError("each frame must last between 10 ms and 60 s")
        if len(self.steps()) > MAX_FRAMES:
            raise TokvizError(f"{len(self.steps()):,} frames is too many (at most {MAX_FRAMES}); "
                              "raise 'every' or shorten the range")
        return self


class AnimationExporter(QObject):
    """Renders frames on the GUI thread (one per timer tick), encodes them on a worker."""

    progress_changed = Signal(str, float)
    finished = Signal(str)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, step_model: StepModel, timeline_panel: TimelinePanel, token_view_panel: TokenViewPanel,
                 select_panel: Callable[[str], Panel], services: WindowServices,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step_model, self.timeline_panel, self.token_view_panel = step_model, timeline_panel, token_view_panel
        self.select_panel = select_panel  # (panel id): bring a panel to the front
        self.services = services
        self.encoder = TaskEngine("animation-encoder", self)
        self.encoder.progress_changed.connect(self._on_encoder_progress_changed)
        self.encoder.finished.connect(self._on_encoder_finished)
        self.encoder.failed.connect(self._on_encoder_failed)
        self.encoder.cancelled.connect(self._on_encoder_cancelled)
        self.timer = QTimer(self, singleShot=True)  # a frame is captured on the next event-loop turn
        self.timer.timeout.connect(self._capture)
        self.frame_timeout = QTimer(self, singleShot=True, interval=FRAME_TIMEOUT_MS)
        self.frame_timeout.timeout.connect(self._on_frame_timeout)
        token_view_panel.result_shown.connect(self._on_token_view_result_shown)
        self.spec: AnimationSpec | None = None
        self.frames: list[np.ndarray] = []
        self._steps: list[int] = []
        self._waiting = False  # for the token view to show the current frame's tokens
        self._restore_step: int | None = None
        self._token_bytes: list[bytes] | None = None  # for the captions

    @property
    def is_running(self) -> bool:
        return self.spec is not None

    def start(self, spec: AnimationSpec) -> bool:
        """Begin exporting; False (with a message) when the spec cannot work."""
        if self.is_running:
            self.cancel()
        try:
            if self.step_model.timeline is None:
                raise TokvizError("there is no timeline yet: train a tokenizer or open a model first")
            spec.check(self.step_model.n_steps)
        except TokvizError as exc:
            self.services.dialogs.error("Cannot export the animation", str(exc)[:1].upper() + str(exc)[1:])
            return False
        self.spec, self.frames, self._steps = spec, [], spec.steps()
        self._token_bytes = None
        self._restore_step = self.step_model.step
        self.timeline_panel.playback.pause()
        self.select_panel("timeline" if spec.target == "corpus" else spec.target)
        self._begin_frame()
        return True

    def cancel(self) -> bool:
        if not self.is_running:
            return False
        self.timer.stop()
        self.frame_timeout.stop()
        self._waiting = False
        if self.encoder.is_running:
            return self.encoder.cancel()
        self._end()
        self.cancelled.emit()
        return True

    # -- rendering (GUI thread, one frame per tick) -----------------------------------------

    def _widget(self) -> QWidget:
        target = self.spec.target
        if target == "corpus":
            return self.timeline_panel.corpus_view.parentWidget()  # label + corpus view
        if target == "token_view":
            return self.token_view_panel.view
        return self.timeline_panel

    def _vocab(self) -> list[bytes] | None:
        tl = self.step_model.timeline
        if self._token_bytes is None and tl is not None and hasattr(tl, "token_bytes"):
            self._token_bytes = list(tl.token_bytes())
        return self._token_bytes

    def _begin_frame(self) -> None:
        k = self._steps[len(self.frames)]
        self.step_model.set_step(k)
        if self.spec.target == "token_view":
            self.token_view_panel.refresh(delay_ms=0)
            if self.token_view_panel.engine.is_pending:  # encoding in the background: wait for it
                self._waiting = True
                self.frame_timeout.start()
                return
        else:
            self.timeline_panel.refresh()
        self.timer.start(0)

    @Slot()
    def _on_token_view_result_shown(self) -> None:
        if self._waiting and not self.token_view_panel.engine.is_pending:
            self._waiting = False
            self.frame_timeout.stop()
            self.timer.start(0)

    @Slot()
    def _on_frame_timeout(self) -> None:
        if self._waiting:
            self._waiting = False
            self._fail("the token view took too long to show a frame")

    @Slot()
    def _capture(self) -> None:
        if self.spec is None:
            return
        widget = self._widget()
        pal = widget.palette()
        size, origin = (widget.width(), widget.height()), (0, 0)
        if self.spec.target == "token_view":  # the tokens, not the frame and empty space around them
            fw = widget.frameWidth()
            used = used_size(widget, *size)
            size, origin = (max(1, used[0] - fw), max(1, used[1] - fw)), (fw, fw)
        m = self.step_model
        caption = step_caption(m.timeline, m.step, self._vocab()) if self.spec.caption else ""
        spec = self.spec
        grabbed = render_crisp(widget, size, spec.width, spec.height - caption_strip(caption, spec.width, spec.height),
                               origin)
        image = fit_image(grabbed, self.spec.width, self.spec.height, pal.color(QPalette.ColorRole.Base),
                          caption=caption, color=pal.color(QPalette.ColorRole.Text))
        self.frames.append(image_to_array(image))
        n = len(self._steps)
        self.progress_changed.emit("Rendering frames", len(self.frames) / n)
        if len(self.frames) < n:
            self._begin_frame()
            return
        self._restore()
        self.encoder.start(encode_frames, self.frames, self.spec)

    # -- outcomes ---------------------------------------------------------------------------

    def _restore(self) -> None:
        if self._restore_step is not None:
            self.step_model.set_step(self._restore_step)
            self._restore_step = None

    def _end(self) -> None:
        self._restore()
        self.spec, self.frames, self._steps = None, [], []

    def _fail(self, message: str) -> None:
        self._end()
        self.failed.emit(message)
        self.services.dialogs.error("Cannot export the animation", message[:1].upper() + message[1:])

    @Slot(str, float)
    def _on_encoder_progress_changed(self, what: str, fraction: float) -> None:
        self.progress_changed.emit(what, fraction)

    @Slot(object)
    def _on_encoder_finished(self, path: str) -> None:
        self._end()
        self.services.status(f"Exported animation {path}", 5000)
        self.finished.emit(path)

    @Slot(str)
    def _on_encoder_failed(self, message: str) -> None:
        self._fail(message)

    @Slot()
    def _on_encoder_cancelled(self) -> None:
        self._end()
        self.cancelled.emit()

    def shutdown(self) -> None:
        self.timer.stop()
        self.frame_timeout.stop()
        self.encoder.shutdown()
        self.spec = None
